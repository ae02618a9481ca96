"""Project-wide pytest fixtures."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def pytest_configure(config):
    """Keep the in-process model's vectors on disk by (model, sha256 of text) unless EMBEDDINGS_CACHE_DIR says
    otherwise: each knowledge base of the suite is embedded once, not once per process.

    Hash the test users' passwords with a fast hasher: the production hasher (PBKDF2, a million iterations)
    is meant to be slow, and the suite creates and logs in hundreds of users — about half a second each.
    Production keeps Django's default list (config/settings.py does not set PASSWORD_HASHERS).
    """
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    if not hasattr(config, "workerinput") and not os.environ.get("DATABASE_URL"):
        # The first process starts the embedded PostgreSQL (and makes its database) before pytest-xdist starts
        # its workers, so they do not race to start one server; the last process to exit stops it.
        from config.embedded_db import ensure_running

        ensure_running()
    if not settings.EMBEDDINGS_CACHE_DIR:
        settings.EMBEDDINGS_CACHE_DIR = str(Path(__file__).resolve().parent / "var" / "test-embeddings")


@pytest.fixture
def make_staff(django_user_model):
    """Return a factory for a staff user in the given role groups."""
    from django.contrib.auth.models import Group

    from core.roles import ensure_roles

    ensure_roles()  # a transactional test may have flushed the migration's groups

    def make(username="staff", *roles, password="pw-for-tests-1"):
        user = django_user_model.objects.create_user(username=username, password=password)
        for role in roles:
            user.groups.add(Group.objects.get(name=role))
        return user

    return make


def _sample_kb_present_or_imported():
    """Return the sample KB's import report, importing it unless it is already there (committed)."""
    from django.conf import settings

    from kb.embeddings import get_embedder
    from kb.models import Document
    from kb.services import documents_import

    if _sample_kb_report and Document.objects.filter(slug=_sample_kb_report[0]).exists():
        return _sample_kb_report[1]
    report = documents_import(paths=[settings.KB_SAMPLE_DIR], embedder=get_embedder())
    first = Document.objects.order_by("slug").values_list("slug", flat=True).first()
    _sample_kb_report[:] = [first, report]
    return report


@pytest.fixture(scope="session")
def _sample_kb_committed(django_db_setup, django_db_blocker):
    """Import the sample knowledge base once, outside any test's transaction, so it is committed and every
    test that needs it finds it (a session fixture is set up before the test's transaction begins)."""
    with django_db_blocker.unblock():
        return _sample_kb_present_or_imported()


@pytest.fixture
def sample_kb(_sample_kb_committed, django_db_blocker):
    """The sample knowledge base in the test database: committed once per session, and imported again only
    after a transactional test (which empties every table when it ends) removed it. pytest-django runs the
    transactional tests last, so that is rare; unchanged files are skipped."""
    with django_db_blocker.unblock():
        return _sample_kb_present_or_imported()


_sample_kb_report: list = []


@pytest.fixture
def healthy_billing():
    """Yield the in-process billing simulator with no fault and a closed circuit; leave it that way."""
    from billing.api.client import billing_breaker
    from billing.simulator.mounted import shared_simulator

    simulator = shared_simulator()
    simulator.set_fault(None)
    billing_breaker().reset()
    yield simulator
    simulator.set_fault(None)
    billing_breaker().reset()


@pytest.fixture(autouse=True)
def _celery_may_wait_on_results():
    """Start every test with Celery's "a task may not wait on another task" flag down.

    The flag is one per process, not per thread: an eager task raises it while it runs and restores what it saw
    when it started. Two eager tasks run at once by a live server's threads can leave it raised, and a later test's
    `.apply().get()` is then refused ("Never call result.get() within a task!").
    """
    from celery.result import _set_task_join_will_block

    _set_task_join_will_block(False)

