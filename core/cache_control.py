"""Pages for a signed-in person are never stored by a browser's cache or a shared proxy.

A conversation page holds a subscriber's account; a cached copy outlives the session on a shared computer
and may be served by a proxy to someone else. Every response to a signed-in request that did not set its own
Cache-Control gets `no-store` (with `private`, for caches that predate no-store). A response that set its
own keeps it: the login page's `never_cache`, WhiteNoise's far-future headers on static files (served before
this middleware runs).
"""

from django.conf import settings
from django.utils.cache import patch_cache_control


class PrivatePagesMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.has_header("Cache-Control") or settings.SESSION_COOKIE_NAME not in request.COOKIES:
            return response  # its own caching, or nobody signed in (the webhook reads no session)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            patch_cache_control(response, private=True, no_store=True)
        return response
