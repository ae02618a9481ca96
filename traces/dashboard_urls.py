from django.urls import path

from traces.views import dashboard

app_name = "dashboard"
urlpatterns = [
    path("", dashboard.dashboard_page, name="page"),
    path("dashboard.csv", dashboard.dashboard_csv, name="csv"),
    path("review/", dashboard.dashboard_review, name="review"),
]
