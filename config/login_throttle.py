"""The two pieces of login throttling (django-axes) that are ours: whose address it is, and the refusal page."""

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.shortcuts import render


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


def login_locked_out(request, original_response=None, credentials=None):
    """Answer a login the throttle refused: the login page saying why and for how long (HTTP 429)."""
    context = {
        "form": AuthenticationForm(request, initial={"username": request.POST.get("username", "")}),
        "next": request.POST.get("next", ""),
        "locked_out": True,
        "cooloff_minutes": int(settings.AXES_COOLOFF_TIME.total_seconds() // 60),
    }
    return render(request, "registration/login.html", context, status=429)
