"""The process-wide simulator configured from Django settings (read on first use, not at import).

The view at /sim/billing/ and the in-process client share this one instance, so the runtime
fault switch and the request count seen through HTTP are the ones the bot's calls hit.
Each web or worker process has its own instance (own count, own credit notes).
"""

from __future__ import annotations

import threading

from billing.simulator.app import BillingSimulator
from core import clock

_lock = threading.Lock()
_shared: BillingSimulator | None = None


def shared_simulator() -> BillingSimulator:
    """Return this process's simulator: token BILLING_API_TOKEN, global fault BILLING_SIM_FAULT, dated by the clock."""
    global _shared
    with _lock:
        if _shared is None:
            from django.conf import settings
            from django.core.exceptions import ImproperlyConfigured

            try:
                # The data's date is the app's clock (CLOCK_TODAY, or a test's pin), read on every request.
                _shared = BillingSimulator(
                    token=settings.BILLING_API_TOKEN,
                    fault=settings.BILLING_SIM_FAULT or None,
                    today=clock.today,
                    now=clock.now,
                )
            except ValueError as exc:
                raise ImproperlyConfigured(f"billing simulator settings: {exc}") from exc
        return _shared


def reset_shared_simulator() -> None:
    """Forget the instance so the next use rebuilds it from settings (tests)."""
    global _shared
    with _lock:
        _shared = None
