"""BreakerState now belongs to the billing app (its table stays); the bot keeps no rows of its own."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("bot", "0001_initial"),
        ("billing", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="BreakerState")],
            database_operations=[],
        ),
    ]
