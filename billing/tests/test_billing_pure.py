"""The evidence pipeline is pure: importing it loads no Django, however deep the import goes."""

import subprocess
import sys
from pathlib import Path

PURE = (
    "billing.records",
    "billing.answers.money",
    "billing.answers.findings.base",
    "billing.answers.findings.account",
    "billing.answers.findings.totals",
    "billing.answers.findings.invoice_checks",
    "billing.answers.findings.promotions",
    "billing.answers.findings.proration",
    "billing.answers.findings.payments",
    "billing.answers.key_figures",
    "billing.answers.phrases",
    "billing.answers.wording",
    "billing.answers.evidence",
    "billing.answers.computations",
)


def test_the_evidence_pipeline_imports_nothing_from_django():
    probe = (
        f"import importlib, sys\n"
        f"for name in {PURE!r}: importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.strip() == "[]"
