"""Axial-coding arithmetic: counts by failure class and by stage after merges (pure: no Django)."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

RETRIEVAL_STAGES = ("retrieval", "pruning")
# "Generation" in the headline is the writer: the model that turned the context into the answer.
GENERATION_STAGES = ("writing",)


@dataclass(frozen=True)
class CodedNote:
    verdict: str  # pass | fail | defer
    stage: str = ""
    class_id: int | None = None
    model_faithful: bool | None = None


@dataclass(frozen=True)
class Bar:
    label: str
    count: int
    y: int
    width: int
    lines: tuple[str, ...] = ()  # the label wrapped to fit beside the bar, never cut
    height: int = 22


@dataclass
class TaxonomySummary:
    failures: int
    by_class: list[tuple[int | None, int]] = field(default_factory=list)
    by_stage: list[tuple[str, int]] = field(default_factory=list)
    retrieval_failures: int = 0
    generation_failures: int = 0
    model_faithful: int = 0
    model_faithful_known: int = 0

    def share(self, count: int) -> float:
        return count / self.failures if self.failures else 0.0


def resolve_class(class_id: int | None, merged_into: Mapping[int, int | None]) -> int | None:
    """Follow merges to the surviving class (a cycle stops where it started)."""
    seen = set()
    while class_id is not None and merged_into.get(class_id) is not None and class_id not in seen:
        seen.add(class_id)
        class_id = merged_into[class_id]
    return class_id


def summarize(notes: Sequence[CodedNote], merged_into: Mapping[int, int | None]) -> TaxonomySummary:
    """Count failure notes by surviving class and by stage; count 'model faithful' separately."""
    failures = [n for n in notes if n.verdict == "fail"]
    by_class = Counter(resolve_class(n.class_id, merged_into) for n in failures)
    by_stage = Counter(n.stage or "other" for n in failures)
    return TaxonomySummary(
        failures=len(failures),
        by_class=sorted(by_class.items(), key=lambda kv: (-kv[1], kv[0] is None, kv[0] or 0)),
        by_stage=sorted(by_stage.items(), key=lambda kv: (-kv[1], kv[0])),
        retrieval_failures=sum(by_stage[s] for s in RETRIEVAL_STAGES),
        generation_failures=sum(by_stage[s] for s in GENERATION_STAGES),
        model_faithful=sum(1 for n in failures if n.model_faithful is True),
        model_faithful_known=sum(1 for n in failures if n.model_faithful is not None),
    )


LINE_HEIGHT = 14


def bars(counts: Sequence[tuple[str, int]], *, max_width: int = 300, row_height: int = 22,
         wrap: int = 20) -> list[Bar]:
    """Lay out horizontal bars for a server-rendered SVG chart, longest bar at max_width.

    A label longer than `wrap` characters is wrapped onto more lines (SVG text does not wrap itself) and its
    row grows to hold them, so a class name is read whole.
    """
    top = max((c for _, c in counts), default=0) or 1
    laid_out, y = [], 0
    for label, count in counts:
        lines = tuple(textwrap.wrap(str(label), wrap, break_long_words=True)) or ("",)
        height = row_height + LINE_HEIGHT * (len(lines) - 1)
        laid_out.append(Bar(label=label, count=count, y=y, lines=lines, height=height,
                            width=max(1, round(max_width * count / top)) if count else 0))
        y += height
    return laid_out


def chart_height(laid_out: Sequence[Bar]) -> int:
    """Return the height of a bar chart: its rows, or one empty row."""
    return sum(bar.height for bar in laid_out) or 22


def saturation(class_is_new: Sequence[bool], window: int = 20) -> tuple[int, int]:
    """Return (new classes among the last `window` coded notes, notes looked at)."""
    last = list(class_is_new)[-window:]
    return sum(last), len(last)
