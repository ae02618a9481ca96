from django.urls import path

from traces import dashboard_views

app_name = "dashboard"
urlpatterns = [
    path("", dashboard_views.dashboard_page, name="page"),
    path("dashboard.csv", dashboard_views.dashboard_csv, name="csv"),
    path("review/", dashboard_views.dashboard_review, name="review"),
]
