from django.urls import path

from traces import views

app_name = "traces"
urlpatterns = []
