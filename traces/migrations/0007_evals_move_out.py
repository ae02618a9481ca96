"""Golden sets, runs, labels and verdicts move to the evals app (their tables stay); review_traces
moves from desk.StaffAccess to Trace."""

from django.db import migrations

from core.migration_ops import permission_mover


class Migration(migrations.Migration):

    dependencies = [
        ('traces', '0006_trace_retrieval_gin'),
        ('desk', '0009_credit_notes'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('auth', '0012_alter_user_first_name_max_length'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='evalrunitem',
                    name='run',
                ),
                        migrations.RemoveField(
                    model_name='judgeverdict',
                    name='run_item',
                ),
                        migrations.RemoveField(
                    model_name='humanlabel',
                    name='run_item',
                ),
                        migrations.RemoveField(
                    model_name='goldencase',
                    name='failure_class',
                ),
                        migrations.RemoveField(
                    model_name='goldencase',
                    name='golden_set',
                ),
                        migrations.RemoveField(
                    model_name='goldencase',
                    name='trace',
                ),
                        migrations.RemoveField(
                    model_name='goldensetversion',
                    name='golden_set',
                ),
                        migrations.RemoveField(
                    model_name='goldensetversion',
                    name='created_by',
                ),
                        migrations.RemoveField(
                    model_name='humanlabel',
                    name='author',
                ),
                        migrations.RemoveField(
                    model_name='humanlabel',
                    name='trace',
                ),
                        migrations.RemoveField(
                    model_name='judgeverdict',
                    name='trace',
                ),
                        migrations.DeleteModel(
                    name='EvalRun',
                ),
                        migrations.DeleteModel(
                    name='EvalRunItem',
                ),
                        migrations.DeleteModel(
                    name='GoldenCase',
                ),
                        migrations.DeleteModel(
                    name='GoldenSet',
                ),
                        migrations.DeleteModel(
                    name='GoldenSetVersion',
                ),
                        migrations.DeleteModel(
                    name='HumanLabel',
                ),
                        migrations.DeleteModel(
                    name='JudgeVerdict',
                ),
                    ],
            database_operations=[],
        ),
        migrations.AlterModelOptions(
            name='trace',
            options={'ordering': ['-created_at', '-pk'], 'permissions': [('review_traces', 'Review traces, code failures and run evals')]},
        ),
        migrations.RunPython(permission_mover([("review_traces", "traces", "trace")]), migrations.RunPython.noop),
    ]
