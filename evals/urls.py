"""Evals pages. Their addresses stay under /traces/ and /kb/, where analysts and KB editors look for them."""

from django.urls import path

from evals.views import (affected, calibration, golden_cases, golden_scores, golden_sets, human_labels, kb_panels,
                         runs, verifier)

app_name = "evals"
urlpatterns = [
    # Golden sets, runs, comparison, human labels, calibration (evals/views/)
    path("traces/golden/", golden_sets.golden_sets, name="golden_sets"),
    path("traces/golden/new/", golden_sets.golden_set_create, name="golden_set_create"),
    path("traces/golden/add/", golden_cases.golden_bulk_add, name="golden_bulk_add"),
    path("traces/golden/<int:golden_set_id>/", golden_sets.golden_set_detail, name="golden_set"),
    path("traces/golden/<int:golden_set_id>/rename/", golden_sets.golden_set_rename, name="golden_set_rename"),
    path("traces/golden/<int:golden_set_id>/archive/", golden_sets.golden_set_archive, name="golden_set_archive"),
    path("traces/golden/<int:golden_set_id>/gates/", golden_sets.golden_set_gates, name="golden_set_gates"),
    path("traces/golden/<int:golden_set_id>/run/", golden_sets.golden_set_run, name="golden_set_run"),
    path("traces/golden/<int:golden_set_id>/variants/", golden_sets.golden_set_variants, name="golden_set_variants"),
    path("traces/golden/<int:golden_set_id>/cases/<int:case_id>/review/", golden_sets.golden_case_review,
         name="golden_case_review"),
    path("traces/golden/cases/<int:case_id>/", golden_cases.golden_case_edit, name="golden_case"),
    path("traces/golden/cases/<int:case_id>/scores/", golden_scores.golden_case_scores_page, name="golden_case_scores"),
    path("traces/<int:trace_id>/golden/", golden_cases.golden_case_create, name="golden_case_create"),
    path("traces/<int:trace_id>/evals/", human_labels.trace_panels, name="trace_panels"),
    path("traces/<int:trace_id>/label/", human_labels.trace_label, name="trace_label"),
    path("traces/runs/", runs.runs, name="runs"),
    path("traces/runs/compare/", runs.run_compare, name="run_compare"),
    path("traces/runs/<int:run_id>/", runs.run_detail, name="run"),
    path("traces/runs/items/<int:item_id>/label/", human_labels.run_item_label, name="run_item_label"),
    path("traces/calibration/", calibration.calibration, name="calibration"),
    path("traces/calibration/settled/", calibration.calibration_import_settled, name="calibration_import_settled"),
    path("traces/verifier/", verifier.verifier_playground, name="verifier_playground"),
    # From a failure to the knowledge base (evals/views/kb_panels.py, evals/views/affected.py)
    path("kb/open/trace/<int:trace_id>/", kb_panels.open_trace, name="open_trace"),
    path("kb/open/note/<int:note_id>/", kb_panels.open_note, name="open_note"),
    path("kb/usage/", kb_panels.document_usage, name="document_usage"),
    path("kb/chunks/<int:chunk_id>/usage/", kb_panels.chunk_usage, name="chunk_usage"),
    path("kb/documents/<slug:slug>/golden-cases/", kb_panels.document_golden_cases, name="document_golden_cases"),
    path("kb/documents/<slug:slug>/affected/", affected.affected_cases_page, name="affected_cases"),
]
