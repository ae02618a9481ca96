from django.urls import path

from desk import views

app_name = "desk"
urlpatterns = []
