from django.apps import AppConfig


class DemoConfig(AppConfig):
    name = "demo"
    verbose_name = "Demo data (users, conversations, a coded review)"

    def ready(self):
        # The composition root wires the desk's web chat to the simulator's customers; desk/ never imports
        # the simulator. Imported here, not at the top: the desk's models load only once the apps are ready.
        from demo.chat_customers import simulator_customers
        from desk.chat import chat_customers_source_set

        chat_customers_source_set(simulator_customers)
