"""Each room declares its own permissions on one of its models; desk.StaffAccess (no table) goes."""

from django.db import migrations


MOVES = [("use_desk", "", "desk", "conversation"), ("approve_credit_notes", "", "desk", "creditnoterequest")]

def permission_move(apps, schema_editor):
    """Move the permission rows (and so every group's link to them) from the old desk.StaffAccess holder."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    for codename, label, app_label, model in MOVES:
        target, _ = ContentType.objects.get_or_create(app_label=app_label, model=model)
        Permission.objects.filter(content_type__app_label="desk", content_type__model="staffaccess",
                                  codename=codename).update(content_type=target)


class Migration(migrations.Migration):

    dependencies = [
        ('desk', '0009_credit_notes'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('auth', '0012_alter_user_first_name_max_length'),
    ]

    operations = [
        migrations.RunPython(permission_move, migrations.RunPython.noop),
        migrations.DeleteModel(
            name='StaffAccess',
        ),
        migrations.AlterModelOptions(
            name='conversation',
            options={'permissions': [('use_desk', 'Work the escalation queue and conversations')]},
        ),
        migrations.AlterModelOptions(
            name='creditnoterequest',
            options={'ordering': ['proposed_at', 'pk'], 'permissions': [('approve_credit_notes', 'Approve credit notes')]},
        ),
    ]
