import logging

from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest, PermissionDenied
from django.http import Http404, HttpResponseServerError
from django.shortcuts import render
from django.urls import Resolver404
from django.utils.http import url_has_allowed_host_and_scheme

logger = logging.getLogger(__name__)


@login_required
def home(request):
    """Show the signed-in staff member the rooms their roles open."""
    return render(request, "home.html")


# The error pages: Django's handlers, but with the request, so the navigation and the user show (its own
# 500 handler renders without one) and the reason we wrote for the person is on the page.


def bad_request(request, exception):
    """400: a parameter this page does not take; the message of a BadRequest is written for the person."""
    message = str(exception) if isinstance(exception, BadRequest) else ""
    return _error_page(request, "400.html", 400, message)


def permission_denied(request, exception):
    """403: the role may not open this page; our PermissionDenied messages say which roles may."""
    message = str(exception) if isinstance(exception, PermissionDenied) else ""
    return _error_page(request, "403.html", 403, message)


def page_not_found(request, exception):
    """404: nothing at this address; a get_object_or_404 message names what is missing."""
    shown = isinstance(exception, Http404) and not isinstance(exception, Resolver404) and exception.args
    return _error_page(request, "404.html", 404, str(exception.args[0]) if shown else "")


MINIMAL_500 = ("<!doctype html><title>Something broke · TraceDesk</title><h1>Something broke on our side</h1>"
               "<p>Try again in a moment. <a href=\"/\">Start page</a></p>")


def server_error(request):
    """500: the styled page with the navigation; a bare one when even that fails (the database may be down)."""
    try:
        return _error_page(request, "500.html", 500, "")
    except Exception:  # noqa: BLE001 - the error page itself must not fail
        logger.exception("The 500 page could not be rendered; answering with the bare one.")
        return HttpResponseServerError(MINIMAL_500)


def _error_page(request, template: str, status: int, message: str):
    return render(request, template, {"message": message, "back": _back(request)}, status=status)


def _back(request) -> str:
    """Return the page the person came from when it is on this site (and not this page, reloaded), else ''."""
    referer = request.META.get("HTTP_REFERER", "")
    try:
        host = request.get_host()
    except Exception:  # noqa: BLE001 - a disallowed Host header is itself a 400
        return ""
    if not url_has_allowed_host_and_scheme(referer, allowed_hosts={host}, require_https=request.is_secure()):
        return ""
    if request.method == "GET" and referer == request.build_absolute_uri():
        return ""
    return referer
