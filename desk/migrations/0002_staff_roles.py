"""Create the four staff groups with their permissions."""

from django.db import migrations

ROLE_PERMISSIONS = {
    # A copy, not an import: migrations must not change when desk/roles.py does.
    "agent": ["use_desk"],
    "supervisor": ["use_desk", "approve_credit_notes", "review_traces"],
    "analyst": ["review_traces"],
    "kb_editor": ["edit_kb"],
}


def create_roles(apps, schema_editor):
    # Permission rows are normally created after all migrations; make them now.
    ContentType = apps.get_model("contenttypes", "ContentType")
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    StaffAccess = apps.get_model("desk", "StaffAccess")
    content_type, _ = ContentType.objects.get_or_create(app_label="desk", model="staffaccess")
    perms = {}
    for codename, label in StaffAccess._meta.permissions:
        perms[codename], _ = Permission.objects.get_or_create(
            content_type=content_type, codename=codename, defaults={"name": label}
        )
    for name, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.set([perms[c] for c in codenames])


def remove_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLE_PERMISSIONS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("desk", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    operations = [migrations.RunPython(create_roles, remove_roles)]
