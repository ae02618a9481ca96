"""Evals pages. Their addresses stay under /traces/ and /kb/, where analysts and KB editors look for them."""

from django.urls import path

from evals import affected_views, kb_views, verifier_views, views

app_name = "evals"
urlpatterns = [
    # Golden sets, runs, comparison, human labels, calibration (evals/views.py)
    path("traces/golden/", views.golden_sets, name="golden_sets"),
    path("traces/golden/new/", views.golden_set_create, name="golden_set_create"),
    path("traces/golden/add/", views.golden_bulk_add, name="golden_bulk_add"),
    path("traces/golden/<int:golden_set_id>/", views.golden_set_detail, name="golden_set"),
    path("traces/golden/<int:golden_set_id>/rename/", views.golden_set_rename, name="golden_set_rename"),
    path("traces/golden/<int:golden_set_id>/archive/", views.golden_set_archive, name="golden_set_archive"),
    path("traces/golden/<int:golden_set_id>/gates/", views.golden_set_gates, name="golden_set_gates"),
    path("traces/golden/<int:golden_set_id>/run/", views.golden_set_run, name="golden_set_run"),
    path("traces/golden/<int:golden_set_id>/variants/", views.golden_set_variants, name="golden_set_variants"),
    path("traces/golden/<int:golden_set_id>/cases/<int:case_id>/review/", views.golden_case_review,
         name="golden_case_review"),
    path("traces/golden/cases/<int:case_id>/", views.golden_case_edit, name="golden_case"),
    path("traces/<int:trace_id>/golden/", views.golden_case_create, name="golden_case_create"),
    path("traces/<int:trace_id>/evals/", views.trace_panels, name="trace_panels"),
    path("traces/<int:trace_id>/label/", views.trace_label, name="trace_label"),
    path("traces/runs/", views.runs, name="runs"),
    path("traces/runs/compare/", views.run_compare, name="run_compare"),
    path("traces/runs/<int:run_id>/", views.run_detail, name="run"),
    path("traces/runs/items/<int:item_id>/label/", views.run_item_label, name="run_item_label"),
    path("traces/calibration/", views.calibration, name="calibration"),
    path("traces/verifier/", verifier_views.verifier_playground, name="verifier_playground"),
    # From a failure to the knowledge base (evals/kb_views.py, evals/affected_views.py)
    path("kb/open/trace/<int:trace_id>/", kb_views.open_trace, name="open_trace"),
    path("kb/open/note/<int:note_id>/", kb_views.open_note, name="open_note"),
    path("kb/usage/", kb_views.document_usage, name="document_usage"),
    path("kb/chunks/<int:chunk_id>/usage/", kb_views.chunk_usage, name="chunk_usage"),
    path("kb/documents/<slug:slug>/golden-cases/", kb_views.document_golden_cases, name="document_golden_cases"),
    path("kb/documents/<slug:slug>/affected/", affected_views.affected_cases_page, name="affected_cases"),
]
