from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from config import views

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("", include("evals.urls")),  # its pages live under /traces/ and /kb/
    path("kb/", include("kb.urls")),
    path("traces/", include("traces.urls")),
    path("dashboard/", include("traces.dashboard_urls")),
    path("", include("desk.urls")),
]
if settings.BILLING_SIM_MOUNTED:  # the demo's and the tests'; in production only when BILLING_SIM_MOUNTED asks
    urlpatterns.insert(-1, path("sim/billing/", include("billing.simulator.urls")))

handler400 = "config.views.bad_request"
handler403 = "config.views.permission_denied"
handler404 = "config.views.page_not_found"
handler500 = "config.views.server_error"
