"""Let supervisors unlock a throttled login in the admin: view and delete django-axes' access attempts."""

from importlib import import_module

from django.db import migrations

# A module name starting with a digit cannot be imported with an import statement.
supervisor_admin = import_module("desk.migrations.0007_supervisor_admin_permissions")


def grant(apps, schema_editor):
    supervisor_admin.grant_to_supervisors(apps, app_label="axes", models={"accessattempt": ["view", "delete"]})


class Migration(migrations.Migration):
    dependencies = [("desk", "0012_turn_lease"), ("axes", "0001_initial")]
    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
