from django.urls import re_path

from billing.simulator import views

app_name = "billing_sim"
# [\s\S], not ".": a path with an encoded newline (%0A) is the simulator's to refuse too, not Django's HTML
# 404. (An inline (?s) flag would do the same but breaks Django's URL reversing for the whole site.)
urlpatterns = [re_path(r"^(?P<subpath>[\s\S]*)$", views.simulator, name="simulator")]
