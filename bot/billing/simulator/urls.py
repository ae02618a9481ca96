from django.urls import re_path

from bot.billing.simulator import views

app_name = "billing_sim"
# (?s): a path with an encoded newline (%0A) is the simulator's to refuse too, not Django's HTML 404.
urlpatterns = [re_path(r"(?s)^(?P<subpath>.*)$", views.simulator, name="simulator")]
