"""PostgreSQL backend that starts the embedded server on first connection.

Settings name this backend only when DATABASE_URL is unset, so production never runs it.
Starting lazily keeps settings import free of side effects: `manage.py check` or
`collectstatic` never boot a database they do not need.
"""

from django.db.backends.postgresql import base

from config import embedded_db


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        params = super().get_connection_params()
        params.update(embedded_db.connection_settings())
        return params
