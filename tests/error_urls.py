"""The site's URLs plus two pages that fail on purpose, for the error-page tests (`pytest.mark.urls`)."""

from django.core.exceptions import PermissionDenied
from django.urls import path

from config.urls import handler400, handler403, handler404, handler500
from config.urls import urlpatterns as site_urlpatterns

__all__ = ["handler400", "handler403", "handler404", "handler500", "urlpatterns"]


def broken(request):
    raise RuntimeError("a bug, on purpose")


def forbidden(request):
    raise PermissionDenied("Only a test may open this page.")


urlpatterns = [path("broken/", broken), path("forbidden/", forbidden), *site_urlpatterns]
