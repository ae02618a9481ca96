from django.urls import path

from traces import trace_views, views

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
]
