"""Characterisation: every evidence text, value, kind and derivation of every simulator customer stays put.

The snapshot (`snapshots/evidence.json`) was recorded from the code before arithmetic and wording
were separated; the refactor reproduced it byte for byte. A change of wording is a new snapshot
(see `evidence_snapshot.py`), made on purpose and named in its commit — so far one: Spanish
"faltan 1 día" became "falta 1 día".
"""

import pytest

from billing.tests import evidence_snapshot


@pytest.fixture(scope="module")
def recorded():
    return evidence_snapshot.read()


@pytest.fixture(scope="module")
def current():
    return evidence_snapshot.collect()


def test_every_customer_and_capability_is_covered(recorded, current):
    assert sorted(current) == sorted(recorded)
    assert len(recorded) > 1000
    # both languages and every scenario's telling facts are in it
    kinds = {fact[0] for outcome in recorded.values() for fact in outcome.get("facts", [])}
    assert {
        "duplicate_charge",
        "late_fee",
        "proration",
        "promotion_ended",
        "tax_rate_effect",
        "outage_credit",
        "payment_failed",
        "days_until_due",
        "days_overdue",
        "credit_note",
    } <= kinds


@pytest.mark.parametrize("mode", ["own", "flipped"])
def test_evidence_is_byte_identical_to_the_snapshot(recorded, current, mode):
    keys = sorted(key for key in recorded if key.split()[1] == mode)
    for key in keys:
        assert current[key] == recorded[key], key
