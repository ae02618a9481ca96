"""A GIN (jsonb_path_ops) index on Trace.retrieval for the KB's "which traces retrieved this chunk" lookups
(`retrieval @> '[{"chunk_id": N}]'`); citations are checked only within those rows, so evidence needs none.
Raw SQL so the model state stays as it is."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("traces", "0005_eval_runs_labels")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS trace_retrieval_gin ON traces_trace "
            "USING gin (retrieval jsonb_path_ops)",
            "DROP INDEX IF EXISTS trace_retrieval_gin",
        ),
    ]
