"""The development values: debug on, a dev-only key, cookies over plain http, no HTTPS redirect, no HSTS.

An unset environment is production's (config/settings.py). The demo, the tests and the benchmarks serve
plain http on loopback, so they take these values unless the environment sets its own. The Makefile's dev
targets export the same values; the pytest plugin `tests/dev_env_plugin.py` applies them to pytest run
directly.
"""

import os

DEVELOPMENT = {
    "DJANGO_DEBUG": "1",
    "DJANGO_SECRET_KEY": "dev-only-insecure-key-change-me",
    "DJANGO_SESSION_COOKIE_SECURE": "0",
    "DJANGO_CSRF_COOKIE_SECURE": "0",
    "DJANGO_SECURE_SSL_REDIRECT": "0",
    "DJANGO_SECURE_HSTS_SECONDS": "0",
}


def use_development_defaults() -> None:
    """Set each development value the environment does not set already (before the settings load)."""
    for name, value in DEVELOPMENT.items():
        os.environ.setdefault(name, value)
