from django.urls import path

from desk import webhooks
from desk.views import chat, conversation, credit_notes, inbox, search

app_name = "desk"
urlpatterns = [
    path("webhooks/whatsapp/", webhooks.whatsapp_webhook, name="whatsapp_webhook"),
    path("chat/", chat.chat, name="chat"),
    path("chat/reset/", chat.chat_reset, name="chat_reset"),
    path("desk/", inbox.queue, name="queue"),
    path("desk/search/", search.search, name="search"),
    path("desk/contacts/<int:contact_id>/", search.contact, name="contact"),
    path("desk/conversations/<int:conversation_id>/", conversation.conversation_detail, name="conversation"),
    path("desk/conversations/<int:conversation_id>/thread/", conversation.conversation_thread_part,
         name="conversation_thread"),
    path("desk/conversations/<int:conversation_id>/take-over/", conversation.take_over, name="take_over"),
    path("desk/conversations/<int:conversation_id>/ask/", conversation.take_request, name="take_request"),
    path("desk/conversations/<int:conversation_id>/reopen/", conversation.reopen, name="reopen"),
    path("desk/conversations/<int:conversation_id>/identify/", conversation.identify, name="identify"),
    path("desk/conversations/<int:conversation_id>/customer/link/", conversation.customer_link,
         name="customer_link"),
    path("desk/conversations/<int:conversation_id>/customer/unlink/", conversation.customer_unlink,
         name="customer_unlink"),
    path("desk/conversations/<int:conversation_id>/reply/", conversation.reply, name="reply"),
    path("desk/conversations/<int:conversation_id>/notes/", conversation.note, name="note"),
    path("desk/conversations/<int:conversation_id>/assign/", conversation.assign, name="assign"),
    path("desk/conversations/<int:conversation_id>/hand-back/", conversation.hand_back, name="hand_back"),
    path("desk/conversations/<int:conversation_id>/resolve/", conversation.resolve, name="resolve"),
    path("desk/conversations/<int:conversation_id>/messages/<int:message_id>/verified-wrong/",
         conversation.mark_wrong, name="mark_wrong"),
    path("desk/conversations/<int:conversation_id>/messages/<int:message_id>/complaint/",
         conversation.complaint_mark, name="complaint_mark"),
    path("desk/conversations/<int:conversation_id>/messages/<int:message_id>/complaint/undo/",
         conversation.complaint_unmark, name="complaint_unmark"),
    path("desk/conversations/<int:conversation_id>/credit-notes/", credit_notes.credit_note_propose,
         name="credit_note_propose"),
    path("desk/credit-notes/", credit_notes.credit_notes, name="credit_notes"),
    path("desk/credit-notes/<int:request_id>/approve/", credit_notes.credit_note_approve,
         name="credit_note_approve"),
    path("desk/credit-notes/<int:request_id>/reject/", credit_notes.credit_note_reject,
         name="credit_note_reject"),
    path("desk/credit-notes/<int:request_id>/retry/", credit_notes.credit_note_retry, name="credit_note_retry"),
]
