"""Supervisors act on conversations other agents hold: a permission of their own, given to the supervisor group."""

from django.db import migrations

PERMISSIONS = [
    ("use_desk", "Work the escalation queue and conversations"),
    ("supervise_conversations", "Take over from anyone and act on conversations others hold"),
]


def grant(apps, schema_editor):
    # Permission rows are normally created after all migrations; make this one now so the group gets it.
    ContentType = apps.get_model("contenttypes", "ContentType")
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    content_type, _ = ContentType.objects.get_or_create(app_label="desk", model="conversation")
    permission, _ = Permission.objects.get_or_create(content_type=content_type, codename=PERMISSIONS[1][0],
                                                     defaults={"name": PERMISSIONS[1][1]})
    supervisor, _ = Group.objects.get_or_create(name="supervisor")
    supervisor.permissions.add(permission)


def revoke(apps, schema_editor):
    apps.get_model("auth", "Permission").objects.filter(
        content_type__app_label="desk", codename="supervise_conversations").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("desk", "0014_answers_note_fallback_clarify"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    operations = [
        migrations.AlterModelOptions(
            name="conversation",
            options={"permissions": PERMISSIONS},
        ),
        migrations.RunPython(grant, revoke),
    ]
