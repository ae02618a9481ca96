"""The pieces of login throttling (django-axes) that are ours: whose address it is, the per-address limit
against password spraying, and the refusal page.

Axes locks one username on one address after LOGIN_FAILURE_LIMIT wrong passwords in a row. Someone trying a
few passwords on many usernames never reaches that, so the address itself is limited too: once
LOGIN_ADDRESS_FAILURE_LIMIT logins from one address failed within LOGIN_COOLOFF_MINUTES, whatever the
usernames, every login from it is refused with the same 429 page until its oldest failure in that window ages
out (a sliding window: at most that many tries per window, sustained). Each failure is one row of axes'
failure log (ip_address indexed); a refused try is not counted, so it does not extend the lock.
"""

from __future__ import annotations

from datetime import timedelta

from axes.handlers.database import AxesDatabaseHandler
from axes.models import AccessFailureLog
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.db.models import Q
from django.shortcuts import render

FAILURE_LOG_KEPT = timedelta(days=1)  # the window is minutes; a day of rows is enough for an operator to read


def client_address(request) -> str | None:
    """Return the address a login came from, as the outermost of LOGIN_PROXY_COUNT trusted proxies saw it.

    Each proxy appends the address it received from to X-Forwarded-For, so the entry LOGIN_PROXY_COUNT
    from the right is the client's; entries left of it are whatever the client sent, and never trusted.
    Without proxies (0) it is the socket's peer.
    """
    count = settings.LOGIN_PROXY_COUNT
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if count and len(forwarded) >= count:
        return forwarded[-count]
    return request.META.get("REMOTE_ADDR")


def address_failures(address: str | None, *, since) -> int:
    """Return how many logins from `address` failed since `since`, whatever the username."""
    if not address:
        return 0
    return AccessFailureLog.objects.filter(ip_address=address, attempt_time__gte=since).count()


class AddressLimitHandler(AxesDatabaseHandler):
    """Axes' database handler, with failures from one address across usernames limited as well."""

    def address_locked(self, request) -> bool:
        limit = settings.LOGIN_ADDRESS_FAILURE_LIMIT
        if not limit:
            return False
        since = request.axes_attempt_time - settings.AXES_COOLOFF_TIME
        return address_failures(request.axes_ip_address, since=since) >= limit

    def is_locked(self, request, credentials=None) -> bool:
        if super().is_locked(request, credentials):
            return True
        if self.address_locked(request):
            request.axes_address_locked = True
            return True
        return False

    def user_login_failed(self, sender, credentials: dict, request=None, **kwargs):
        super().user_login_failed(sender, credentials, request=request, **kwargs)
        if request is None:
            return
        AccessFailureLog.objects.filter(attempt_time__lt=request.axes_attempt_time - FAILURE_LOG_KEPT).delete()
        if not getattr(request, "axes_locked_out", False) and self.address_locked(request):
            # This failure reached the address's limit: answer it with the lock, as axes does for a username.
            request.axes_locked_out = True
            request.axes_address_locked = True
            request.axes_credentials = credentials

    def reset_attempts(self, *, ip_address=None, username=None, ip_or_username=False) -> int:
        """Unlock as axes does (`axes_reset_ip`, `axes_reset_username`, `axes_reset`), the address limit included."""
        count = super().reset_attempts(ip_address=ip_address, username=username, ip_or_username=ip_or_username)
        logs = AccessFailureLog.objects.all()
        if ip_or_username:
            logs = logs.filter(Q(ip_address=ip_address) | Q(username=username))
        else:
            if ip_address:
                logs = logs.filter(ip_address=ip_address)
            if username:
                logs = logs.filter(username=username)
        logs.delete()
        return count


def login_locked_out(request, original_response=None, credentials=None):
    """Answer a login the throttle refused: the login page saying why and for how long (HTTP 429)."""
    context = {
        "form": AuthenticationForm(request, initial={"username": request.POST.get("username", "")}),
        "next": request.POST.get("next", ""),
        "locked_out": True,
        "address_locked": getattr(request, "axes_address_locked", False),
        "cooloff_minutes": int(settings.AXES_COOLOFF_TIME.total_seconds() // 60),
    }
    return render(request, "registration/login.html", context, status=429)
