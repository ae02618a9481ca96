"""Pytest plugin (`-p tests.dev_env_plugin` in pyproject.toml): the development values for the test run.

pytest-django loads the settings before any conftest.py is imported, so a conftest is too late; a `-p`
plugin is imported earlier. Subprocesses the tests start (a Celery worker, manage.py) inherit the values.
"""

from config.dev_env import use_development_defaults

use_development_defaults()
