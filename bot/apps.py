from django.apps import AppConfig


class BotConfig(AppConfig):
    name = "bot"
    verbose_name = "Bot (answering turn)"

    def ready(self):
        # Register the bot's tasks by name: the desk queues "bot.handle_inbound" without importing the bot.
        from bot import tasks  # noqa: F401
