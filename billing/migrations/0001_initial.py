"""BreakerState moves from the bot app to billing: same table, only Django's state changes."""

from django.db import migrations, models


def content_type_move(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="bot", model="breakerstate").update(app_label="billing")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("bot", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="BreakerState",
                    fields=[
                        ("name", models.CharField(max_length=100, primary_key=True, serialize=False)),
                        ("state", models.CharField(choices=[("closed", "Closed"), ("open", "Open"),
                                                            ("half_open", "Half Open")],
                                                   default="closed", max_length=10)),
                        ("failures", models.PositiveIntegerField(default=0)),
                        ("opened_at", models.FloatField(blank=True, null=True)),
                        ("probe_id", models.CharField(blank=True, default="", max_length=64)),
                        ("probe_started_at", models.FloatField(blank=True, null=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                    ],
                    options={"verbose_name": "circuit breaker state", "db_table": "bot_breakerstate"},
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_type_move, migrations.RunPython.noop),
    ]
