"""The desk's message search: a stored tsvector of each message's folded text (Spanish and English stems), its
GIN index, and an index on (created_at, id) for newest-first pages. Adding the column rewrites the table once;
the indexes are then built concurrently, so messages keep arriving while they build."""

import core.fulltext
import django.contrib.postgres.indexes
import django.contrib.postgres.search
from django.contrib.postgres.operations import AddIndexConcurrently
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ('desk', '0016_complaint_signal'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='message',
            name='search_vector',
            field=models.GeneratedField(db_persist=True, expression=core.fulltext.TsVectorOr(core.fulltext.ToTsVector(core.fulltext.RegConfig(models.Value('spanish')), core.fulltext.FoldAccents(models.F('text'))), core.fulltext.ToTsVector(core.fulltext.RegConfig(models.Value('english')), core.fulltext.FoldAccents(models.F('text')))), output_field=django.contrib.postgres.search.SearchVectorField()),
        ),
        AddIndexConcurrently(
            model_name='message',
            index=django.contrib.postgres.indexes.GinIndex(fields=['search_vector'], name='desk_msg_text_search'),
        ),
        AddIndexConcurrently(
            model_name='message',
            index=models.Index(fields=['created_at', 'id'], name='desk_msg_created'),
        ),
    ]
