"""The prune margin of the configured embedder: its calibration (KB_PRUNE_CALIBRATIONS), else the seed's rule."""

from __future__ import annotations

import os

from django.conf import settings

from kb.embeddings import Embedder, embedder_fingerprint
from kb.prune_calibration import Calibration, PruneRule, read_calibrations, rule_for

_READ: dict[str, tuple[int, dict[str, Calibration]]] = {}  # path → (modification time, calibrations)


def calibrations() -> dict[str, Calibration]:
    """Return the recorded calibrations by fingerprint, read again only when the file changed."""
    path = settings.KB_PRUNE_CALIBRATIONS
    if not path:
        return {}
    try:
        stamp = os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return {}
    cached = _READ.get(path)
    if cached is None or cached[0] != stamp:
        cached = _READ[path] = (stamp, read_calibrations(path))
    return cached[1]


def prune_rule(embedder: Embedder) -> PruneRule:
    """Return the margin a search with `embedder` prunes with, and why.

    The fingerprint (three embeddings, once per embedder and process) is computed only when a calibration of a
    model of that name is recorded: an embedder nobody calibrated goes straight to the seed's rule.
    """
    known = calibrations()
    fingerprint = None
    if any(calibration.embedder == embedder.name for calibration in known.values()):
        fingerprint = embedder_fingerprint(getattr(embedder, "wrapped", embedder))
    return rule_for(known, fingerprint=fingerprint, embedder=embedder.name, fallback_margin=settings.KB_PRUNE_MARGIN)
