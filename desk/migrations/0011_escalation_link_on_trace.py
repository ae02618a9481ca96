"""The escalation no longer points at its trace: the trace points at the escalation (traces 0008 copied the links)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('desk', '0010_permissions_on_models'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='escalation',
            name='trace',
        ),
    ]
