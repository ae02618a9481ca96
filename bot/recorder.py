"""The turn's recorder: fills the trace draft while the turn runs and times each stage into it."""

from __future__ import annotations

from contextlib import contextmanager

from traces.draft import TraceDraft


class TurnRecorder:
    """Fills the turn's TraceDraft while the turn runs, and times each stage into it."""

    def __init__(self, clock, *, on_stage=None):
        self.clock = clock
        self.started = clock()
        self.draft = TraceDraft()
        self.on_stage = on_stage  # called as each stage starts (the live turn renews its lease there)

    @contextmanager
    def stage(self, name: str):
        if self.on_stage is not None:
            self.on_stage()
        began = self.clock()
        try:
            yield
        finally:
            self.draft.latency_ms[name] = round((self.clock() - began) * 1000, 3)

    def heartbeat(self) -> None:
        """Tell the live turn it is still running (a model call may take its whole timeout)."""
        if self.on_stage is not None:
            self.on_stage()

    def finish(self) -> TraceDraft:
        self.draft.total_ms = round((self.clock() - self.started) * 1000, 3)
        return self.draft
