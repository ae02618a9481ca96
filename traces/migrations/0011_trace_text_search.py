"""The trace browser's text search: a GIN index over the folded, Spanish- and English-stemmed query, reply and
internal note. Built concurrently (no lock on writes while it builds; measured 1M traces in bench/traces.py)."""

import django.contrib.postgres.indexes
from django.contrib.postgres.operations import AddIndexConcurrently
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
        AddIndexConcurrently(
            model_name='trace',
            index=django.contrib.postgres.indexes.GinIndex(traces.models.TsVectorOr(kb.models.ToTsVector(kb.models.RegConfig(models.Value('spanish')), kb.models.FoldAccents(traces.models.TraceText(models.F('query'), models.F('final_text'), models.F('internal_note')))), kb.models.ToTsVector(kb.models.RegConfig(models.Value('english')), kb.models.FoldAccents(traces.models.TraceText(models.F('query'), models.F('final_text'), models.F('internal_note'))))), name='trace_text_search'),
        ),
    ]
