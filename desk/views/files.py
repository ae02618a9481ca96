"""The composer's template and file sending, and a conversation's files: served to staff, retried."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET, require_POST

from core import params
from desk import media, services
from desk.access import access_conversation
from desk.composer import template_composer, typed_values
from desk.media_types import size_label
from desk.models import Attachment
from desk.views.conversation import _after_action, _run



@login_required
@require_GET
def template_composer_part(request, conversation_id):
    """Return the template composer for the chosen template and typed values (the preview follows them)."""
    conversation = access_conversation(request.user, conversation_id, write=True)
    chosen = params.integer(request.GET.get("template"), label="The template").value
    # A new choice of template starts from its pre-filled values; typing keeps what was typed.
    values = typed_values(request.GET) if request.GET.get("typed") else None
    composer = template_composer(conversation=conversation, template_id=chosen, values=values)
    return render(request, "desk/conversation.html#template_composer",
                  {"conversation": conversation, "contact": conversation.contact, "composer": composer,
                   "form_key": request.GET.get("form_key", "").replace("\x00", "")[:64]})


@login_required
@require_POST
def template_send(request, conversation_id):
    """Send the chosen approved template with the values typed for its variables."""
    access_conversation(request.user, conversation_id, write=True)
    template_id = params.integer(request.POST.get("template"), label="The template")
    form_key = params.text(request.POST.get("form_key"), label="The form", max_length=64)
    if template_id.error or form_key.error:
        return _after_action(request, conversation_id, error=template_id.error or form_key.error, status=400)
    values = typed_values(request.POST)
    ordered = [values[n] for n in sorted(values)]
    return _run(request, conversation_id, lambda: services.agent_template_send(
        conversation_id=conversation_id, agent=request.user, template_id=template_id.value or 0, values=ordered,
        form_key=form_key.value or ""), done="Template queued for WhatsApp.")


@login_required
@require_POST
def attach(request, conversation_id):
    """Send the agent's image or PDF, with an optional caption."""
    access_conversation(request.user, conversation_id, write=True)
    upload = request.FILES.get("file")
    caption = params.text(request.POST.get("caption"), label="The caption", max_length=1024)
    form_key = params.text(request.POST.get("form_key"), label="The form", max_length=64)
    if upload is None:
        return _after_action(request, conversation_id, error="Choose an image or a PDF to attach.", status=400)
    if caption.error or form_key.error:
        return _after_action(request, conversation_id, error=caption.error or form_key.error, status=400)
    limit = settings.DESK_MEDIA_MAX_BYTES
    if upload.size is not None and upload.size > limit:  # refused before its bytes are read into memory
        return _after_action(request, conversation_id, status=400, error=(
            f"The file is {size_label(upload.size)}; attach files up to {size_label(limit)}."))
    try:
        checked = media.upload_check(content=upload.read(), filename=upload.name or "")
    except media.MediaActionError as exc:
        return _after_action(request, conversation_id, error=str(exc), status=400)
    return _run(request, conversation_id, lambda: services.agent_file_send(
        conversation_id=conversation_id, agent=request.user, upload=checked, caption=caption.value or "",
        form_key=form_key.value or ""), done=f"{checked.filename} queued for WhatsApp.")


def _attachment_for(request, attachment_id: int) -> Attachment:
    attachment = get_object_or_404(Attachment.objects.select_related("message"), pk=attachment_id)
    access_conversation(request.user, attachment.message.conversation_id)
    return attachment


@login_required
@require_GET
def attachment_file(request, attachment_id, variant="file"):
    """Serve a stored file (or its thumbnail) to staff who may read its conversation; never publicly."""
    attachment = _attachment_for(request, attachment_id)
    stored = attachment.thumbnail if variant == "thumbnail" else attachment.file
    if attachment.state != Attachment.State.STORED or not stored:
        raise Http404("This file is not stored.")
    try:
        handle = stored.open("rb")
    except (FileNotFoundError, OSError):
        raise Http404("This file is missing from the storage.") from None
    content_type = "image/jpeg" if variant == "thumbnail" else attachment.content_type
    download = variant == "file" and not (attachment.is_image or attachment.is_audio or attachment.is_video
                                          or content_type == "application/pdf")
    response = FileResponse(handle, content_type=content_type, as_attachment=download,
                            filename=attachment.filename or stored.name.rsplit("/", 1)[-1])
    response["Cache-Control"] = "private, max-age=3600"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'; img-src 'self'; media-src 'self'"
    return response


@login_required
@require_POST
def attachment_retry(request, attachment_id):
    """Download a file that failed (or is stuck) again; a double click downloads it once."""
    attachment = _attachment_for(request, attachment_id)
    conversation_id = attachment.message.conversation_id
    access_conversation(request.user, conversation_id, write=True)
    try:
        media.media_fetch_retry(attachment_id=attachment.pk, agent=request.user)
    except media.MediaUnchanged as exc:
        messages.info(request, str(exc))
        return _after_action(request, conversation_id)
    except media.MediaActionError as exc:
        return _after_action(request, conversation_id, error=str(exc))
    attachment.refresh_from_db()
    if attachment.state == Attachment.State.FAILED:
        return _after_action(request, conversation_id, error=f"The file could not be downloaded: {attachment.error}",
                             status=409)
    messages.success(request, "Downloaded." if attachment.state == Attachment.State.STORED
                     else "Downloading again; the thread shows the file once it is stored.")
    return _after_action(request, conversation_id)
