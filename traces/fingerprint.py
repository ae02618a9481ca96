"""The configuration a turn ran under, as one short fingerprint and the parts it is made of. Pure: no Django.

Two turns with the same fingerprint ran the same prompt, index, model, router and tuning; two fingerprints
differ in the parts `differences()` names, so a refusal rate can be read per configuration and a change
in it traced to what changed. The parts are stored once per fingerprint (traces.Configuration).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

FINGERPRINT_LENGTH = 16  # hex digits of SHA-256: 64 bits, no collision among any realistic number of configurations


@dataclass(frozen=True)
class Part:
    """One part of a configuration: its field, what people call it, and the setting it comes from ('' if none)."""

    name: str
    label: str
    setting: str = ""


# In the order the trace page lists them. The tuning parts are also hashed together (`tuning_hash`).
PARTS = (
    Part("prompt_version", "Writer prompt version"),
    Part("model", "Writer model", "OPENAI_MODEL"),
    Part("router_version", "Router version (rules, examples, threshold)", "BOT_ROUTER_MODEL"),
    Part("index_version", "Knowledge-base index version"),
    Part("kb_prune_margin", "Retrieval prune margin", "KB_PRUNE_MARGIN"),
    Part("kb_context_min_score", "Minimum score to count as context", "KB_CONTEXT_MIN_SCORE"),
    Part("bot_max_rewrites", "Rewrites allowed after the verifier refuses", "BOT_MAX_REWRITES"),
    Part("phrases_hash", "Forbidden and humanizer phrase lists (content hash)", "GROUNDING_BANNED_PHRASES_FILE"),
)
TUNING = ("kb_prune_margin", "kb_context_min_score", "bot_max_rewrites", "phrases_hash")
LABELS = {part.name: part for part in PARTS}


def _digest(value) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:FINGERPRINT_LENGTH]


def phrases_hash(*texts: str) -> str:
    """Return the hash of the phrase lists' contents (the files' text, the lists joined one per line)."""
    return _digest(list(texts))


@dataclass(frozen=True)
class ConfigurationParts:
    prompt_version: str
    model: str
    router_version: str
    index_version: int | None
    kb_prune_margin: float
    kb_context_min_score: float
    bot_max_rewrites: int
    phrases_hash: str

    @property
    def tuning_hash(self) -> str:
        """Return the hash of the tuning settings alone (prune margin, context threshold, rewrites, phrases)."""
        return _digest({name: getattr(self, name) for name in TUNING})

    @property
    def fingerprint(self) -> str:
        """Return the fingerprint: same parts, same fingerprint, on any machine and in any process."""
        return _digest(asdict(self))

    def fields(self) -> dict:
        """Return the parts, the tuning hash and the fingerprint as the Configuration row stores them."""
        return {**asdict(self), "tuning_hash": self.tuning_hash, "fingerprint": self.fingerprint}


@dataclass(frozen=True)
class Difference:
    part: Part
    before: object
    after: object


def differences(before: ConfigurationParts, after: ConfigurationParts) -> list[Difference]:
    """Return the parts that differ between two configurations, in the order of PARTS."""
    return [Difference(part, getattr(before, part.name), getattr(after, part.name)) for part in PARTS
            if getattr(before, part.name) != getattr(after, part.name)]
