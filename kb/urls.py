from django.urls import path

from kb import edit_views, views

app_name = "kb"
urlpatterns = [
    path("", views.document_list, name="documents"),
    path("documents/<slug:slug>/", views.document_detail, name="document"),
    path("chunks/<int:chunk_id>/", views.chunk_detail, name="chunk"),
    path("search/", views.search_playground, name="search"),
    # Editing (kb/edit_views.py)
    path("upload/", edit_views.document_upload, name="document_upload"),
    path("documents/<slug:slug>/edit/", edit_views.document_edit, name="document_edit"),
    path("documents/<slug:slug>/preview/", edit_views.document_preview, name="document_preview"),
    path("documents/<slug:slug>/sections/<int:section_id>/edit/", edit_views.section_edit, name="section_edit"),
    path("documents/<slug:slug>/sections/<int:section_id>/preview/", edit_views.section_preview,
         name="section_preview"),
    path("documents/<slug:slug>/history/", edit_views.document_history, name="document_history"),
    path("documents/<slug:slug>/revert/<int:number>/", edit_views.document_revert_view, name="document_revert"),
    path("documents/<slug:slug>/delete/", edit_views.document_delete_view, name="document_delete"),
    path("documents/<slug:slug>/restore/", edit_views.document_restore_view, name="document_restore"),
    path("documents/<slug:slug>/reembed/", edit_views.reembed_progress, name="reembed_progress"),
    path("reembed/<int:job_id>/retry/", edit_views.reembed_retry, name="reembed_retry"),
]
