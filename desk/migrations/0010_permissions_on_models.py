"""Each room declares its own permissions on one of its models; desk.StaffAccess (no table) goes."""

from django.db import migrations

from core.migration_ops import permission_mover


class Migration(migrations.Migration):

    dependencies = [
        ('desk', '0009_credit_notes'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('auth', '0012_alter_user_first_name_max_length'),
    ]

    operations = [
        migrations.RunPython(permission_mover([("use_desk", "desk", "conversation"), ("approve_credit_notes", "desk", "creditnoterequest")]), migrations.RunPython.noop),
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
