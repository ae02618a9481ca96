from django.urls import path

from traces.views import browser, queues, review, scores, taxonomy, turn

app_name = "traces"
urlpatterns = [
    path("", browser.trace_list, name="list"),
    path("export.<str:fmt>", browser.trace_export, name="export"),
    path("filters/", browser.saved_filter_save, name="saved_filter_save"),
    path("filters/<int:saved_filter_id>/delete/", browser.saved_filter_delete, name="saved_filter_delete"),
    path("<int:trace_id>/", turn.trace_detail, name="detail"),
    path("replies/<int:message_id>/", turn.trace_of_reply, name="reply"),
    path("sessions/", review.session_list, name="sessions"),
    path("sessions/<int:session_id>/", review.session_detail, name="session"),
    path("sessions/<int:session_id>/verified-wrong/", review.session_add_verified_wrong,
         name="session_add_verified_wrong"),
    path("sessions/<int:session_id>/complaints/", review.session_add_complaints,
         name="session_add_complaints"),
    path("sessions/<int:session_id>/review/<int:position>/", review.session_review, name="review"),
    path("sessions/<int:session_id>/taxonomy/", taxonomy.session_taxonomy, name="taxonomy"),
    path("taxonomy/", taxonomy.team_taxonomy, name="team_taxonomy"),
    path("queues/", queues.queue_list, name="queues"),
    path("queues/<int:queue_id>/", queues.queue_detail, name="queue"),
    path("queues/<int:queue_id>/next/", queues.queue_next, name="queue_next"),
    path("queues/<int:queue_id>/review/<int:position>/", queues.queue_review, name="queue_review"),
    path("queues/<int:queue_id>/items/<int:queue_item_id>/settle/", queues.queue_settle, name="queue_settle"),
    path("scores/", scores.score_list, name="scores"),
    # The conversation page's "bot's last turn" panel (loaded by htmx).
    path("conversations/<int:conversation_id>/last-turn/", turn.last_turn_panel, name="last_turn"),
]
