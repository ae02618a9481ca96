"""The trace browser's text search: a stored tsvector of the folded query, reply and internal note (Spanish and
English stems), and its GIN index. Adding the column rewrites the table once (1M traces: see docs/traces.md);
the index is then built concurrently, so writes go on while it builds."""

import django.contrib.postgres.indexes
from django.contrib.postgres.operations import AddIndexConcurrently
import django.contrib.postgres.search
import kb.models
import traces.models
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ('desk', '0014_answers_note_fallback_clarify'),
        ('traces', '0010_answers_note_fallback_clarify'),
    ]

    operations = [
        migrations.AddField(
            model_name='trace',
            name='search_vector',
            field=models.GeneratedField(db_persist=True, expression=traces.models.TsVectorOr(kb.models.ToTsVector(kb.models.RegConfig(models.Value('spanish')), kb.models.FoldAccents(traces.models.TraceText(models.F('query'), models.F('final_text'), models.F('internal_note')))), kb.models.ToTsVector(kb.models.RegConfig(models.Value('english')), kb.models.FoldAccents(traces.models.TraceText(models.F('query'), models.F('final_text'), models.F('internal_note'))))), output_field=django.contrib.postgres.search.SearchVectorField()),
        ),
        AddIndexConcurrently(
            model_name='trace',
            index=django.contrib.postgres.indexes.GinIndex(fields=['search_vector'], name='trace_text_search'),
        ),
    ]
