from django.urls import path

from kb.views import documents, editing, search

app_name = "kb"
urlpatterns = [
    path("", documents.document_list, name="documents"),
    path("documents/<slug:slug>/", documents.document_detail, name="document"),
    path("chunks/<int:chunk_id>/", documents.chunk_detail, name="chunk"),
    path("search/", search.search_playground, name="search"),
    # Editing (kb/views/editing.py)
    path("upload/", editing.document_upload, name="document_upload"),
    path("documents/<slug:slug>/edit/", editing.document_edit, name="document_edit"),
    path("documents/<slug:slug>/preview/", editing.document_preview, name="document_preview"),
    path("documents/<slug:slug>/sections/<int:section_id>/edit/", editing.section_edit, name="section_edit"),
    path("documents/<slug:slug>/sections/<int:section_id>/preview/", editing.section_preview,
         name="section_preview"),
    path("documents/<slug:slug>/history/", editing.document_history, name="document_history"),
    path("documents/<slug:slug>/revert/<int:number>/", editing.document_revert_view, name="document_revert"),
    path("documents/<slug:slug>/delete/", editing.document_delete_view, name="document_delete"),
    path("documents/<slug:slug>/restore/", editing.document_restore_view, name="document_restore"),
    path("documents/<slug:slug>/reembed/", editing.reembed_progress, name="reembed_progress"),
    path("reembed/<int:job_id>/retry/", editing.reembed_retry, name="reembed_retry"),
]
