"""The header's notifications: dismiss one."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from desk import notifications
from desk.access import require_desk_worker


@login_required
@require_POST
def notification_dismiss(request, notification_id):
    """Dismiss a notification (a second click changes nothing) and go back to the page it was dismissed from."""
    require_desk_worker(request.user, "Only agents and supervisors get desk notifications.")
    notifications.notification_dismiss(user=request.user, notification_id=notification_id)
    back = request.META.get("HTTP_REFERER", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        back = "desk:queue"
    return redirect(back)
