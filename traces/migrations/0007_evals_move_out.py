"""Golden sets, runs, labels and verdicts move to the evals app (their tables stay); review_traces
moves from desk.StaffAccess to Trace."""

from django.db import migrations


MOVES = [("review_traces", "Review traces, code failures and run evals", "traces", "trace")]

def permission_move(apps, schema_editor):
    """Move the permission rows (and so every group's link to them) from the old desk.StaffAccess holder."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    for codename, label, app_label, model in MOVES:
        target, _ = ContentType.objects.get_or_create(app_label=app_label, model=model)
        Permission.objects.filter(content_type__app_label="desk", content_type__model="staffaccess",
                                  codename=codename).update(content_type=target)


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
        migrations.RunPython(permission_move, migrations.RunPython.noop),
    ]
