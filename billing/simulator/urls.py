from django.urls import re_path

from billing.simulator import views

app_name = "billing_sim"
urlpatterns = [re_path(r"^(?P<subpath>.*)$", views.simulator, name="simulator")]
