"""edit_kb moves from desk.StaffAccess to Document (groups keep it)."""

from django.db import migrations


MOVES = [("edit_kb", "Edit the knowledge base", "kb", "document")]

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
        ('kb', '0005_document_source_default'),
        ('desk', '0009_credit_notes'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('auth', '0012_alter_user_first_name_max_length'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='document',
            options={'ordering': ['slug'], 'permissions': [('edit_kb', 'Edit the knowledge base')]},
        ),
        migrations.RunPython(permission_move, migrations.RunPython.noop),
    ]
