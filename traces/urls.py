from django.urls import path

from traces import trace_views, views

app_name = "traces"
urlpatterns = [
    path("", trace_views.trace_list, name="list"),
    path("<int:trace_id>/", trace_views.trace_detail, name="detail"),
    path("verifier/", views.verifier_playground, name="verifier_playground"),
]
