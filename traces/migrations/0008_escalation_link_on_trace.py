"""The link between a turn and the escalation it opened moves to the trace (the room above points down)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    # Copy the old desk_escalation.trace_id before the desk drops that column.
    run_before = [("desk", "0011_escalation_link_on_trace")]

    dependencies = [
        ('desk', '0010_permissions_on_models'),
        ('traces', '0007_evals_move_out'),
    ]

    operations = [
        migrations.AddField(
            model_name='trace',
            name='escalation',
            field=models.OneToOneField(blank=True, help_text='The escalation this turn opened.', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='trace', to='desk.escalation'),
        ),
        migrations.RunSQL(
            """
            UPDATE traces_trace AS t SET escalation_id = e.id
            FROM (SELECT DISTINCT ON (trace_id) id, trace_id FROM desk_escalation
                  WHERE trace_id IS NOT NULL ORDER BY trace_id, id) AS e
            WHERE e.trace_id = t.id
            """,
            migrations.RunSQL.noop,
        ),
    ]
