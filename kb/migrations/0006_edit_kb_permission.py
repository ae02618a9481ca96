"""edit_kb moves from desk.StaffAccess to Document (groups keep it)."""

from django.db import migrations

from core.migration_ops import permission_mover


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
        migrations.RunPython(permission_mover([("edit_kb", "kb", "document")]), migrations.RunPython.noop),
    ]
