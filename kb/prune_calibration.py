"""Fit the corrective prune's margin to the scale of the embedder's scores. Pure: no Django.

The prune keeps a chunk whose cosine is within a margin of the turn's best (kb/pruning.py). How far apart
a relevant and a filler chunk score depends on the embedder: e5's cosines are compressed (the top ten of
a question lie within a few hundredths of each other), so the seed's absolute 0.12 keeps everything.
The margin is therefore measured in the scale the embedder produces:

- its **spread** — the median, over labelled questions, of the vector branch's top-1 cosine minus its
  top-10th — is the unit (a robust figure of how far apart this embedder puts a question's neighbours);
- the **multiplier** is the smallest multiple of `STEP` of that unit at which the prune still keeps, for every
  labelled question, a chunk of a relevant document the fusion put in the top k (min keep, backfill and the
  AND / identifier immunity included, exactly as `prune` decides);
- margin = multiplier × spread.

Both are measured on the dev split only and recorded with the embedder's fingerprint
(kb.embeddings.embedder_fingerprint): another build or another model has another scale, and falls back to
the seed's rule until it is calibrated (`manage.py kb_calibrate_prune`). The file keeps each labelled set's
dev measurements apart, so sets of knowledge bases that live in different databases pool into one figure.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from kb.pruning import Candidate, prune

SPREAD_DEPTH = 10  # the spread is top-1 minus top-10th cosine of the vector branch
STEP = 0.25  # multipliers are chosen in quarters of the spread
DIGITS = 4


@dataclass(frozen=True)
class LabelledSearch:
    """One labelled question's search: the vector branch's cosines and the fused top k with each chunk's
    document; a chunk is relevant when its document is one of the question's hits."""

    case_id: str
    split: str
    vector_cosines: list[float]  # the vector branch, best first
    fused: list[Candidate]  # the fused top k, best first
    docs: list[str]  # the document of each fused candidate
    hits: frozenset[str] = frozenset()  # none: out of scope or an account question (counts in the drops only)

    @property
    def relevant(self) -> list[bool]:
        return [doc in self.hits for doc in self.docs]


@dataclass
class SetMeasurement:
    """The dev measurements of one labelled set: each question's spread and the margin it needs."""

    dev_queries: int
    spreads: list[float] = field(default_factory=list)
    required: list[float] = field(default_factory=list)  # questions with a relevant chunk in the fused top k

    def to_json(self) -> dict:
        return {"dev_queries": self.dev_queries, "spreads": self.spreads, "required": self.required}


@dataclass(frozen=True)
class Calibration:
    """The margin recorded for one embedder fingerprint."""

    fingerprint: str
    embedder: str
    spread: float
    multiplier: float
    margin: float
    measured_on: str  # ISO date
    sets: dict[str, SetMeasurement]

    def to_json(self) -> dict:
        return {"embedder": self.embedder, "spread": self.spread, "multiplier": self.multiplier,
                "margin": self.margin, "measured_on": self.measured_on,
                "sets": {name: measured.to_json() for name, measured in sorted(self.sets.items())}}


@dataclass(frozen=True)
class PruneRule:
    """The margin a search prunes with, and why (shown with the search's context decision)."""

    margin: float
    calibrated: bool
    description: str


def score_spread(cosines: list[float], depth: int = SPREAD_DEPTH) -> float | None:
    """Return the top-1 minus the top-`depth`th cosine (None when the branch returned fewer)."""
    if len(cosines) < depth:
        return None
    ordered = sorted(cosines, reverse=True)
    return ordered[0] - ordered[depth - 1]


def required_margin(candidates: list[Candidate], relevant: list[bool], *, min_keep: int) -> float | None:
    """Return the smallest margin at which the prune keeps a relevant candidate (None when none is relevant).

    The prune's outcome changes only where the margin reaches a candidate's distance from the best, so those
    distances (and 0) are the only margins to try.
    """
    if not any(relevant):
        return None
    scores = [c.vector_score for c in candidates if c.vector_score is not None]
    best = max(scores) if scores else 0.0
    for margin in sorted({0.0, *(max(best - s, 0.0) for s in scores)}):
        decisions = prune(candidates, margin=min(margin, 0.999), min_keep=min_keep)
        if any(d.kept and r for d, r in zip(decisions, relevant)):
            return margin
    return None  # not reached: the largest distance keeps every candidate


def measure(searches: list[LabelledSearch], *, min_keep: int) -> SetMeasurement:
    """Return the dev measurements of one set (questions of other splits are left out)."""
    dev = [s for s in searches if s.split == "dev"]
    measured = SetMeasurement(dev_queries=len(dev))
    for search in dev:
        spread = score_spread(search.vector_cosines)
        if spread is not None:
            measured.spreads.append(round(spread, DIGITS))
        need = required_margin(search.fused, search.relevant, min_keep=min_keep)
        if need is not None:
            measured.required.append(round(need, DIGITS))
    return measured


def calibrate(sets: dict[str, SetMeasurement], *, fingerprint: str, embedder: str, measured_on: str,
              step: float = STEP) -> Calibration:
    """Pool the sets' dev measurements: the spread is their median, the multiplier the smallest multiple of
    `step` whose margin keeps a relevant chunk for every question (at least one step)."""
    spreads = [s for measured in sets.values() for s in measured.spreads]
    required = [r for measured in sets.values() for r in measured.required]
    if not spreads:
        raise ValueError("no dev question returned enough vector candidates to measure the spread")
    spread = statistics.median(spreads)
    if spread <= 0:
        raise ValueError("the embedder gave every candidate the same cosine: its spread is 0")
    # round() first: 0.0265 / 0.0306 must not become 0.8660000001 steps and round up one step too far
    steps = max(1, math.ceil(round(max(required, default=0.0) / spread / step, 6)))
    multiplier = steps * step
    return Calibration(fingerprint=fingerprint, embedder=embedder, spread=round(spread, DIGITS),
                       multiplier=multiplier, margin=round(multiplier * spread, DIGITS), measured_on=measured_on,
                       sets=dict(sets))


@dataclass(frozen=True)
class CutFigures:
    """What a margin does to one split: chunks dropped of those retrieved, recall@k and MRR of the kept."""

    questions: int
    retrieved: int
    dropped: int
    recall: float
    mrr: float


def cut_figures(searches: list[LabelledSearch], *, margin: float, min_keep: int) -> CutFigures:
    """Return what the prune with `margin` keeps of these searches (a document counts once, at its first chunk)."""
    retrieved = dropped = 0
    ranks: list[int | None] = []
    for search in searches:
        decisions = prune(search.fused, margin=min(margin, 0.999), min_keep=min_keep)
        retrieved += len(decisions)
        dropped += sum(not d.kept for d in decisions)
        if search.hits:
            kept = list(dict.fromkeys(doc for d, doc in zip(decisions, search.docs) if d.kept))
            ranks.append(next((n for n, doc in enumerate(kept, start=1) if doc in search.hits), None))
    scored = len(ranks) or 1
    return CutFigures(questions=len(ranks), retrieved=retrieved, dropped=dropped,
                      recall=sum(r is not None for r in ranks) / scored,
                      mrr=sum(1 / r for r in ranks if r) / scored)


# --- the file of calibrations -----------------------------------------------------------------------------------


def read_calibrations(path: Path | str) -> dict[str, Calibration]:
    """Return the calibrations recorded in the file, by fingerprint ({} when there is no file)."""
    path = Path(path)
    if not path.exists():
        return {}
    payload = json.loads(path.read_text(encoding="utf-8"))
    found = {}
    for fingerprint, row in payload.items():
        sets = {name: SetMeasurement(dev_queries=int(s["dev_queries"]), spreads=[float(x) for x in s["spreads"]],
                                     required=[float(x) for x in s["required"]])
                for name, s in row.get("sets", {}).items()}
        found[fingerprint] = Calibration(fingerprint=fingerprint, embedder=str(row["embedder"]),
                                         spread=float(row["spread"]), multiplier=float(row["multiplier"]),
                                         margin=float(row["margin"]), measured_on=str(row["measured_on"]),
                                         sets=sets)
    return found


def write_calibration(path: Path | str, calibration: Calibration) -> None:
    """Record one embedder's calibration in the file (others kept), replacing the file atomically."""
    path = Path(path)
    rows = {fingerprint: c.to_json() for fingerprint, c in read_calibrations(path).items()}
    rows[calibration.fingerprint] = calibration.to_json()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".json.tmp")
    try:
        text = json.dumps(dict(sorted(rows.items())), indent=1, ensure_ascii=False)
        # one line per list of measurements, not one line per number
        text = re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def rule_for(calibrations: dict[str, Calibration], *, fingerprint: str | None, embedder: str,
             fallback_margin: float) -> PruneRule:
    """Return the calibrated margin of this embedder fingerprint, or the seed's absolute margin, saying which."""
    found = calibrations.get(fingerprint or "")
    if found is not None:
        return PruneRule(found.margin, True,
                         f"prune margin {found.margin:.4f} = {found.multiplier:.2f} × this embedder's spread "
                         f"{found.spread:.4f} (calibrated for fingerprint {found.fingerprint} on "
                         f"{found.measured_on})")
    which = f"{embedder} {fingerprint}" if fingerprint else embedder
    return PruneRule(fallback_margin, False,
                     f"prune margin {fallback_margin:g} (KB_PRUNE_MARGIN, the seed's rule): no calibration for "
                     f"embedder {which}")
