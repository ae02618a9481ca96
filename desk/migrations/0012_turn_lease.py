"""Turns hold their message under a renewed lease; claims made before keep the old five-minute rule."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('desk', '0011_escalation_link_on_trace'),
    ]

    operations = [
        migrations.AddField(
            model_name='message',
            name='turn_lease_until',
            field=models.DateTimeField(blank=True, help_text="The claiming turn's lease; renewed while it runs. Expired and no trace: the turn died, and the sweep queues the message again.", null=True),
        ),
        migrations.AlterField(
            model_name='message',
            name='turn_claimed_at',
            field=models.DateTimeField(blank=True, help_text='When a bot turn claimed it.', null=True),
        ),
        migrations.RunSQL(
            "UPDATE desk_message SET turn_lease_until = turn_claimed_at + interval '5 minutes' "
            "WHERE turn_claimed_at IS NOT NULL AND turn_lease_until IS NULL",
            migrations.RunSQL.noop,
        ),
    ]
