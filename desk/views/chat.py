"""The web chat page: pick a demo customer and talk to the bot through the real inbound path."""

from __future__ import annotations

from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from core import params
from desk import chat as webchat

CHAT_LANGUAGES = ("es", "en")
CHAT_MESSAGE_MAX = 4000  # what a visitor may type; longer is refused (the inbound path itself cuts at 4,096)


@webchat.webchat_access
def chat(request):
    """Web chat for demos and tests: pick a simulator customer and talk to the bot through the real pipeline."""
    conversation = webchat.current_conversation(request)
    error = ""
    if request.method == "POST":
        if "customer_id" in request.POST:
            customer_id = params.text(request.POST["customer_id"], label="The customer", max_length=64)
            language = params.choice(request.POST.get("language"), CHAT_LANGUAGES, label="The language",
                                     default="es")
            webchat.chat_start(request=request, customer_id=customer_id.or_bad_request(),
                               language=language.or_bad_request())
            return redirect("desk:chat")
        text = params.text(request.POST.get("text"), label="The message", max_length=CHAT_MESSAGE_MAX)
        error = text.error
        if conversation is not None and text.value and not error:
            webchat.chat_message_receive(conversation=conversation, text=text.value)
        if request.htmx:
            return render(request, "desk/chat.html#thread", {"conversation": conversation, "error": error,
                                                             "messages": webchat.thread(conversation)})
        if not error:
            return redirect("desk:chat")
    template = "desk/chat.html#thread" if request.htmx and conversation else "desk/chat.html"
    return render(request, template, {
        "conversation": conversation, "error": error,
        "messages": webchat.thread(conversation) if conversation else [],
        "customers": [] if conversation else webchat.demo_customers(),
    }, status=400 if error else 200)


@webchat.webchat_access
@require_POST
def chat_reset(request):
    """Forget the visitor's conversation and pick another customer."""
    request.session.pop(webchat.SESSION_KEY, None)
    return redirect("desk:chat")
