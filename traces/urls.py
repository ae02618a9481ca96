from django.urls import path

from traces import eval_views, trace_views, views

app_name = "traces"
urlpatterns = [
    path("", trace_views.trace_list, name="list"),
    path("export.<str:fmt>", trace_views.trace_export, name="export"),
    path("<int:trace_id>/", trace_views.trace_detail, name="detail"),
    path("<int:trace_id>/golden/", trace_views.golden_case_create, name="golden_case_create"),
    path("golden/cases/<int:case_id>/", trace_views.golden_case_edit, name="golden_case"),
    path("verifier/", views.verifier_playground, name="verifier_playground"),
    path("sessions/", trace_views.session_list, name="sessions"),
    path("sessions/<int:session_id>/", trace_views.session_detail, name="session"),
    path("sessions/<int:session_id>/verified-wrong/", trace_views.session_add_verified_wrong,
         name="session_add_verified_wrong"),
    path("sessions/<int:session_id>/review/<int:position>/", trace_views.session_review, name="review"),
    path("sessions/<int:session_id>/taxonomy/", trace_views.session_taxonomy, name="taxonomy"),
    # Evals (issue 8): golden sets, runs, comparison, human labels, calibration.
    path("golden/", eval_views.golden_sets, name="golden_sets"),
    path("golden/<int:golden_set_id>/", eval_views.golden_set_detail, name="golden_set"),
    path("golden/<int:golden_set_id>/run/", eval_views.golden_set_run, name="golden_set_run"),
    path("golden/<int:golden_set_id>/variants/", eval_views.golden_set_variants, name="golden_set_variants"),
    path("golden/<int:golden_set_id>/cases/<int:case_id>/review/", eval_views.golden_case_review,
         name="golden_case_review"),
    path("runs/", eval_views.runs, name="runs"),
    path("runs/compare/", eval_views.run_compare, name="run_compare"),
    path("runs/<int:run_id>/", eval_views.run_detail, name="run"),
    path("runs/items/<int:item_id>/label/", eval_views.run_item_label, name="run_item_label"),
    path("<int:trace_id>/label/", eval_views.trace_label, name="trace_label"),
    path("calibration/", eval_views.calibration, name="calibration"),
]
