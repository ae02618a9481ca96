"""The evals models as they were in the traces app: same tables (db_table), only Django's state moves."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def content_types_move(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="traces", model__in=MODELS).update(app_label="evals")


MODELS = ["goldenset", "goldencase", "goldensetversion", "evalrun", "evalrunitem", "humanlabel", "judgeverdict"]


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('traces', '0007_evals_move_out'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='GoldenSet',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100, unique=True)),
                        ('current_version', models.PositiveIntegerField(default=0)),
                    ],
                    options={
                        'db_table': 'traces_goldenset',
                        'ordering': ['name'],
                    },
                ),
                        migrations.CreateModel(
                    name='EvalRun',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('golden_version', models.PositiveIntegerField()),
                        ('retrieval_only', models.BooleanField(default=False)),
                        ('k', models.PositiveSmallIntegerField(default=5)),
                        ('status', models.CharField(choices=[('running', 'Running'), ('done', 'Done'), ('failed', 'Failed')], default='running', max_length=10)),
                        ('error', models.TextField(blank=True)),
                        ('prompt_version', models.CharField(blank=True, max_length=40)),
                        ('model', models.CharField(blank=True, help_text="The writer: model name or 'template'.", max_length=100)),
                        ('index_version', models.PositiveIntegerField(blank=True, null=True)),
                        ('embedding_model', models.CharField(blank=True, max_length=200)),
                        ('judge_version', models.CharField(blank=True, max_length=40)),
                        ('judge_model', models.CharField(blank=True, max_length=100)),
                        ('metrics', models.JSONField(blank=True, default=dict)),
                        ('note', models.CharField(blank=True, max_length=200)),
                        ('started_at', models.DateTimeField(auto_now_add=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('golden_set', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='runs', to='evals.goldenset')),
                    ],
                    options={
                        'db_table': 'traces_evalrun',
                        'ordering': ['-started_at', '-pk'],
                    },
                ),
                        migrations.CreateModel(
                    name='EvalRunItem',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('case_id', models.CharField(max_length=64)),
                        ('query', models.TextField()),
                        ('must_pass', models.BooleanField(default=False)),
                        ('first_hit_rank', models.PositiveSmallIntegerField(blank=True, null=True)),
                        ('hard_negative_above', models.BooleanField(default=False)),
                        ('ranked_docs', models.JSONField(blank=True, default=list)),
                        ('retrieval', models.JSONField(blank=True, default=list, help_text='chunk_id, doc, section, scores per hit.')),
                        ('outcome', models.CharField(blank=True, help_text='answered / escalated (empty: retrieval only).', max_length=10)),
                        ('escalation_reason', models.CharField(blank=True, max_length=40)),
                        ('answer', models.TextField(blank=True)),
                        ('evidence', models.JSONField(blank=True, default=list)),
                        ('verdicts', models.JSONField(blank=True, default=list, help_text='The verifier verdict of each attempt.')),
                        ('grounded', models.BooleanField(blank=True, null=True)),
                        ('missing_facts', models.JSONField(blank=True, default=list)),
                        ('judge_label', models.CharField(blank=True, choices=[('pass', 'Pass'), ('fail', 'Fail'), ('error', 'Judge error')], max_length=5)),
                        ('judge_reason', models.TextField(blank=True)),
                        ('latency_ms', models.FloatField(default=0)),
                        ('failures', models.JSONField(blank=True, default=list, help_text='Why the case failed in this run; empty means it passed.')),
                        ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='items', to='evals.evalrun')),
                    ],
                    options={
                        'db_table': 'traces_evalrunitem',
                        'ordering': ['run', 'case_id'],
                    },
                ),
                        migrations.CreateModel(
                    name='GoldenCase',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('case_id', models.CharField(max_length=64)),
                        ('query', models.TextField()),
                        ('context', models.JSONField(blank=True, default=list)),
                        ('customer_id', models.CharField(blank=True, max_length=64)),
                        ('facts', models.JSONField(blank=True, default=list, help_text='Strings a correct answer must contain.')),
                        ('hits', models.JSONField(blank=True, default=list, help_text='Doc slugs that count as a hit.')),
                        ('hard_negatives', models.JSONField(blank=True, default=list)),
                        ('must_pass', models.BooleanField(default=False)),
                        ('clarification_expected', models.BooleanField(default=False)),
                        ('synthetic', models.BooleanField(default=False)),
                        ('reviewed', models.BooleanField(default=True, help_text='False for synthetic cases until a human reviews them.')),
                        ('origin', models.CharField(choices=[('trace', 'Trace'), ('complaint', 'Complaint'), ('variant', 'Variant'), ('file', 'File')], default='file', max_length=10)),
                        ('created', models.DateTimeField(auto_now_add=True)),
                        ('updated', models.DateTimeField(auto_now=True)),
                        ('failure_class', models.ForeignKey(blank=True, help_text='For a generated variant: the taxonomy class it was made from.', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='golden_variants', to='traces.failureclass')),
                        ('trace', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='golden_cases', to='traces.trace')),
                        ('golden_set', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='cases', to='evals.goldenset')),
                    ],
                    options={
                        'db_table': 'traces_goldencase',
                        'ordering': ['golden_set', 'case_id'],
                    },
                ),
                        migrations.CreateModel(
                    name='GoldenSetVersion',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('number', models.PositiveIntegerField()),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('note', models.CharField(blank=True, max_length=200)),
                        ('snapshot', models.JSONField(blank=True, default=list, help_text='The cases as exported at this version.')),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('golden_set', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='versions', to='evals.goldenset')),
                    ],
                    options={
                        'db_table': 'traces_goldensetversion',
                        'ordering': ['golden_set', 'number'],
                    },
                ),
                        migrations.CreateModel(
                    name='HumanLabel',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('item_key', models.CharField(help_text="'trace:<id>' or 'item:<id>': what the split hashes.", max_length=40)),
                        ('label', models.CharField(choices=[('pass', 'Pass'), ('fail', 'Fail')], max_length=4)),
                        ('note', models.TextField(blank=True)),
                        ('split', models.CharField(choices=[('train', 'Train'), ('dev', 'Dev'), ('test', 'Test')], max_length=5)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('author', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('run_item', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='human_labels', to='evals.evalrunitem')),
                        ('trace', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='human_labels', to='traces.trace')),
                    ],
                    options={
                        'db_table': 'traces_humanlabel',
                        'ordering': ['-updated_at', '-pk'],
                    },
                ),
                        migrations.CreateModel(
                    name='JudgeVerdict',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('item_key', models.CharField(max_length=40)),
                        ('judge_version', models.CharField(max_length=40)),
                        ('model', models.CharField(blank=True, max_length=100)),
                        ('label', models.CharField(choices=[('pass', 'Pass'), ('fail', 'Fail'), ('error', 'Judge error')], max_length=5)),
                        ('reason', models.TextField(blank=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('run_item', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='judge_verdicts', to='evals.evalrunitem')),
                        ('trace', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='judge_verdicts', to='traces.trace')),
                    ],
                    options={
                        'db_table': 'traces_judgeverdict',
                        'ordering': ['-created_at', '-pk'],
                    },
                ),
                        migrations.AddConstraint(
                    model_name='evalrunitem',
                    constraint=models.UniqueConstraint(fields=('run', 'case_id'), name='eval_item_once_per_run'),
                ),
                        migrations.AddConstraint(
                    model_name='goldencase',
                    constraint=models.UniqueConstraint(fields=('golden_set', 'case_id'), name='golden_case_id_per_set'),
                ),
                        migrations.AddConstraint(
                    model_name='goldensetversion',
                    constraint=models.UniqueConstraint(fields=('golden_set', 'number'), name='golden_version_per_set'),
                ),
                        migrations.AddConstraint(
                    model_name='humanlabel',
                    constraint=models.UniqueConstraint(fields=('item_key',), name='one_human_label_per_item'),
                ),
                        migrations.AddConstraint(
                    model_name='humanlabel',
                    constraint=models.CheckConstraint(condition=models.Q(models.Q(('run_item__isnull', True), ('trace__isnull', False)), models.Q(('run_item__isnull', False), ('trace__isnull', True)), _connector='OR'), name='human_label_one_target'),
                ),
                        migrations.AddConstraint(
                    model_name='judgeverdict',
                    constraint=models.UniqueConstraint(fields=('item_key', 'judge_version'), name='one_judge_verdict_per_version'),
                ),
                        migrations.AddConstraint(
                    model_name='judgeverdict',
                    constraint=models.CheckConstraint(condition=models.Q(models.Q(('run_item__isnull', True), ('trace__isnull', False)), models.Q(('run_item__isnull', False), ('trace__isnull', True)), _connector='OR'), name='judge_verdict_one_target'),
                ),
                    ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_move, migrations.RunPython.noop),
    ]
