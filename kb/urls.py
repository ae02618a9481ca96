from django.urls import path

from kb import views

app_name = "kb"
urlpatterns = [
    path("", views.document_list, name="documents"),
    path("documents/<slug:slug>/", views.document_detail, name="document"),
    path("chunks/<int:chunk_id>/", views.chunk_detail, name="chunk"),
    path("search/", views.search_playground, name="search"),
]
