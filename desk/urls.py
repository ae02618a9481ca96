from django.urls import path

from desk import credit_views, views, webhooks

app_name = "desk"
urlpatterns = [
    path("webhooks/whatsapp/", webhooks.whatsapp_webhook, name="whatsapp_webhook"),
    path("chat/", views.chat, name="chat"),
    path("chat/reset/", views.chat_reset, name="chat_reset"),
    path("desk/", views.queue, name="queue"),
    path("desk/conversations/<int:conversation_id>/", views.conversation_detail, name="conversation"),
    path("desk/conversations/<int:conversation_id>/thread/", views.conversation_thread_part,
         name="conversation_thread"),
    path("desk/conversations/<int:conversation_id>/take-over/", views.take_over, name="take_over"),
    path("desk/conversations/<int:conversation_id>/reply/", views.reply, name="reply"),
    path("desk/conversations/<int:conversation_id>/notes/", views.note, name="note"),
    path("desk/conversations/<int:conversation_id>/assign/", views.assign, name="assign"),
    path("desk/conversations/<int:conversation_id>/hand-back/", views.hand_back, name="hand_back"),
    path("desk/conversations/<int:conversation_id>/resolve/", views.resolve, name="resolve"),
    path("desk/conversations/<int:conversation_id>/messages/<int:message_id>/verified-wrong/",
         views.mark_wrong, name="mark_wrong"),
    path("desk/conversations/<int:conversation_id>/messages/<int:message_id>/complaint/",
         views.complaint_mark, name="complaint_mark"),
    path("desk/conversations/<int:conversation_id>/messages/<int:message_id>/complaint/undo/",
         views.complaint_unmark, name="complaint_unmark"),
    path("desk/conversations/<int:conversation_id>/credit-notes/", credit_views.credit_note_propose,
         name="credit_note_propose"),
    path("desk/credit-notes/", credit_views.credit_notes, name="credit_notes"),
    path("desk/credit-notes/<int:request_id>/approve/", credit_views.credit_note_approve,
         name="credit_note_approve"),
    path("desk/credit-notes/<int:request_id>/reject/", credit_views.credit_note_reject,
         name="credit_note_reject"),
    path("desk/credit-notes/<int:request_id>/retry/", credit_views.credit_note_retry, name="credit_note_retry"),
]
