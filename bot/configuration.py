"""The configuration a turn runs under: writer, router, index and the tuning settings, as fingerprint parts.

Read when the turn is recorded, from the same objects and settings the turn used, so a trace's
configuration is the one that produced it (traces/fingerprint.py makes the fingerprint).
"""

from __future__ import annotations

from django.conf import settings

from bot import humanizer
from bot.grounding import DEFAULT_BANNED_PHRASES
from traces.fingerprint import ConfigurationParts, phrases_hash


def configuration_parts(*, writer, router_version: str, index_version: int | None) -> ConfigurationParts:
    """Return the parts of the configuration in force for a turn that used `writer` and this router and index.

    Settings are read at call time, so a changed setting is a new configuration at once.
    """
    return ConfigurationParts(
        prompt_version=writer.prompt_version,
        model=writer.name,
        router_version=router_version,
        index_version=index_version,
        kb_prune_margin=float(settings.KB_PRUNE_MARGIN),
        kb_context_min_score=float(settings.KB_CONTEXT_MIN_SCORE),
        bot_max_rewrites=int(settings.BOT_MAX_REWRITES),
        phrases_hash=phrases_hash(humanizer.phrase_lists(), "\n".join(DEFAULT_BANNED_PHRASES),
                                  "\n".join(settings.GROUNDING_BANNED_PHRASES)),
    )
