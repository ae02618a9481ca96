from django.urls import path

from traces import trace_views

app_name = "traces"
urlpatterns = [
    path("", trace_views.trace_list, name="list"),
    path("export.<str:fmt>", trace_views.trace_export, name="export"),
    path("filters/", trace_views.saved_filter_save, name="saved_filter_save"),
    path("filters/<int:saved_filter_id>/delete/", trace_views.saved_filter_delete, name="saved_filter_delete"),
    path("<int:trace_id>/", trace_views.trace_detail, name="detail"),
    path("replies/<int:message_id>/", trace_views.trace_of_reply, name="reply"),
    path("sessions/", trace_views.session_list, name="sessions"),
    path("sessions/<int:session_id>/", trace_views.session_detail, name="session"),
    path("sessions/<int:session_id>/verified-wrong/", trace_views.session_add_verified_wrong,
         name="session_add_verified_wrong"),
    path("sessions/<int:session_id>/complaints/", trace_views.session_add_complaints,
         name="session_add_complaints"),
    path("sessions/<int:session_id>/review/<int:position>/", trace_views.session_review, name="review"),
    path("sessions/<int:session_id>/taxonomy/", trace_views.session_taxonomy, name="taxonomy"),
    # The conversation page's "bot's last turn" panel (loaded by htmx).
    path("conversations/<int:conversation_id>/last-turn/", trace_views.last_turn_panel, name="last_turn"),
]
