"""The process-wide simulator configured from Django settings (read on first use, not at import).

The view at /sim/billing/ and the in-process client share this one instance, so the runtime
fault switch and the request count seen through HTTP are the ones the bot's calls hit.
Each web or worker process has its own instance (own count, own credit notes).
"""

from __future__ import annotations

import threading
from datetime import date

from billing.simulator.app import BillingSimulator

_lock = threading.Lock()
_shared: BillingSimulator | None = None


def shared_simulator() -> BillingSimulator:
    """Return this process's simulator: token BILLING_API_TOKEN, global fault BILLING_SIM_FAULT."""
    global _shared
    with _lock:
        if _shared is None:
            from django.conf import settings
            from django.core.exceptions import ImproperlyConfigured

            as_of = getattr(settings, "BILLING_SIM_AS_OF", "")  # optional pin for demos and golden sets
            try:
                _shared = BillingSimulator(
                    token=settings.BILLING_API_TOKEN,
                    fault=settings.BILLING_SIM_FAULT or None,
                    as_of=date.fromisoformat(as_of) if as_of else None,
                )
            except ValueError as exc:
                raise ImproperlyConfigured(f"billing simulator settings: {exc}") from exc
        return _shared


def reset_shared_simulator() -> None:
    """Forget the instance so the next use rebuilds it from settings (tests)."""
    global _shared
    with _lock:
        _shared = None
