"""Let supervisors use the Django admin over the desk models (read-mostly; canned replies editable)."""

from django.db import migrations

MODELS = {
    "contact": ["view", "change"],
    "conversation": ["view", "change"],
    "message": ["view"],
    "escalation": ["view"],
    "event": ["view"],
    "cannedreply": ["view", "add", "change", "delete"],
}


def grant(apps, schema_editor):
    grant_to_supervisors(apps, app_label="desk", models=MODELS)


def grant_to_supervisors(apps, *, app_label: str, models: dict[str, list[str]]) -> None:
    """Give the supervisor group these actions on these models (later migrations call it too)."""
    # Permission rows are normally created after all migrations; make the ones needed now.
    ContentType = apps.get_model("contenttypes", "ContentType")
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    supervisor, _ = Group.objects.get_or_create(name="supervisor")
    for model, actions in models.items():
        content_type, _ = ContentType.objects.get_or_create(app_label=app_label, model=model)
        for action in actions:
            permission, _ = Permission.objects.get_or_create(
                content_type=content_type, codename=f"{action}_{model}",
                defaults={"name": f"Can {action} {model}"},
            )
            supervisor.permissions.add(permission)


class Migration(migrations.Migration):
    dependencies = [("desk", "0006_message_verified_wrong_index"), ("auth", "0012_alter_user_first_name_max_length")]
    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
