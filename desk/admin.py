"""Desk admin, read-mostly: take over, hand back and resolve go through the same services as the desk."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied

from desk import services
from desk.models import (
    Attachment,
    CannedReply,
    ComplaintSignal,
    Contact,
    Conversation,
    CreditNoteRequest,
    Escalation,
    Event,
    Message,
    MessageTemplate,
    Notification,
    Satisfaction,
)
from desk.template_forms import MessageTemplateForm


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written by the desk, the bot and the channels: never added or edited here."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Contact)
class ContactAdmin(admin.ModelAdmin):
    list_display = ["__str__", "channel", "wa_id", "customer_id", "language", "updated_at"]
    list_filter = ["channel", "language"]
    search_fields = ["name", "wa_id", "customer_id", "user_id"]
    # Identity comes from the channel; only the billing link and the language are an agent's to fix.
    readonly_fields = ["channel", "wa_id", "user_id", "created_at", "updated_at"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def _desk_action(modeladmin, request, queryset, service, done: str) -> None:
    """Run one desk service on each selected conversation and tell the user what changed and what did not."""
    changed = 0
    for conversation_id in queryset.values_list("pk", flat=True):
        try:
            service(conversation_id=conversation_id, agent=request.user)
            changed += 1
        except (services.DeskActionError, PermissionDenied) as exc:
            modeladmin.message_user(request, f"Conversation {conversation_id}: {exc}", messages.ERROR)
    if changed:
        modeladmin.message_user(request, f"{changed} conversation(s) {done}.", messages.SUCCESS)


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = ["pk", "contact", "channel", "handler", "status", "assignee", "last_inbound_at",
                    "updated_at"]
    list_filter = ["handler", "status", "channel"]
    search_fields = ["contact__name", "contact__wa_id", "contact__customer_id"]
    list_select_related = ["contact", "assignee"]
    actions = ["take_over", "hand_back", "resolve"]

    @admin.action(description="Take over (silence the bot, assign to me)")
    def take_over(self, request, queryset):
        _desk_action(self, request, queryset, services.conversation_take_over, "taken over")

    @admin.action(description="Hand back to the bot")
    def hand_back(self, request, queryset):
        _desk_action(self, request, queryset, services.conversation_hand_back, "handed back")

    @admin.action(description="Resolve")
    def resolve(self, request, queryset):
        _desk_action(self, request, queryset, services.conversation_resolve, "resolved")


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    list_display = ["pk", "conversation", "direction", "author", "kind", "status", "created_at"]
    list_filter = ["direction", "author", "status", "kind"]
    search_fields = ["provider_message_id", "text"]
    list_select_related = ["conversation__contact"]
    show_full_result_count = False  # a million messages: no COUNT(*) on every page


@admin.register(Escalation)
class EscalationAdmin(ReadOnlyAdmin):
    list_display = ["pk", "reason", "status", "conversation", "created_at", "resolved_at"]
    list_filter = ["status", "reason"]
    list_select_related = ["conversation__contact"]


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ["pk", "kind", "conversation", "actor", "created_at"]
    list_filter = ["kind"]
    list_select_related = ["conversation__contact", "actor"]


@admin.register(CannedReply)
class CannedReplyAdmin(admin.ModelAdmin):
    list_display = ["title", "language", "order"]
    list_filter = ["language"]
    list_editable = ["order"]
    search_fields = ["title", "text"]


@admin.register(CreditNoteRequest)
class CreditNoteRequestAdmin(ReadOnlyAdmin):
    """Read-only: approving, rejecting and re-sending happen at /desk/credit-notes/ through the services."""

    list_display = ["pk", "status", "customer_id", "invoice_id", "amount", "currency", "proposed_by",
                    "drafted_by_bot", "decided_by", "billing_credit_note_id", "proposed_at"]
    list_filter = ["status", "currency", "drafted_by_bot"]
    search_fields = ["customer_id", "invoice_id", "billing_credit_note_id", "idempotency_key"]
    list_select_related = ["proposed_by", "decided_by"]


@admin.register(ComplaintSignal)
class ComplaintSignalAdmin(ReadOnlyAdmin):
    """Read-only: agents mark and undo on the conversation page; reactions and follow-ups come from the customer."""

    list_display = ["pk", "certainty", "source", "message", "marked_by", "detail", "at"]
    list_filter = ["certainty", "source"]
    list_select_related = ["message", "marked_by"]


@admin.register(Satisfaction)
class SatisfactionAdmin(ReadOnlyAdmin):
    """Read-only: asked by the resolve action, answered by the customer's tap on WhatsApp."""

    list_display = ["pk", "conversation", "agent", "reason", "answer", "asked_at", "answered_at"]
    list_filter = ["answer"]
    list_select_related = ["conversation", "agent"]


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    """Read-only: written by the desk's services, dismissed from the header."""

    list_display = ["pk", "text", "recipient", "created_at", "dismissed_at", "dismissed_by"]
    list_select_related = ["recipient", "dismissed_by"]
@admin.register(MessageTemplate)
class MessageTemplateAdmin(admin.ModelAdmin):
    """WhatsApp templates as Meta approved them; the desk offers the approved ones after the 24-hour window."""

    form = MessageTemplateForm
    list_display = ("name", "language", "category", "status", "updated_at")
    list_filter = ("status", "category", "language")
    search_fields = ("name", "body")


@admin.register(Attachment)
class AttachmentAdmin(ReadOnlyAdmin):
    list_display = ("message", "state", "content_type", "size", "created_at")
    list_filter = ("state", "content_type")
