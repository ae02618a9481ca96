"""Let supervisors unlock a throttled login in the admin: view and delete django-axes' access attempts."""

from django.db import migrations

ACTIONS = ["view", "delete"]  # frozen here: desk.roles.SUPERVISOR_UNLOCK_PERMISSIONS may change later


def grant(apps, schema_editor):
    # Permission rows are normally created after all migrations; make the ones needed now.
    ContentType = apps.get_model("contenttypes", "ContentType")
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    supervisor, _ = Group.objects.get_or_create(name="supervisor")
    content_type, _ = ContentType.objects.get_or_create(app_label="axes", model="accessattempt")
    for action in ACTIONS:
        permission, _ = Permission.objects.get_or_create(
            content_type=content_type, codename=f"{action}_accessattempt",
            defaults={"name": f"Can {action} access attempt"},
        )
        supervisor.permissions.add(permission)


class Migration(migrations.Migration):
    dependencies = [("desk", "0009_credit_notes"), ("axes", "0001_initial")]
    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
