"""The KB editor's pages: edit a document or a section with a live chunk preview, history and revert,
upload, soft delete and restore, and the progress of the background re-embedding.

Every write goes through kb/editing.py (or kb.services.documents_import_files for uploads); these views
check the permission, validate the form, call one service and render.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from core import params
from kb.access import access_document, access_section, kb_editor_required
from kb.editing import (
    EditConflict,
    EditError,
    chunk_preview,
    document_delete,
    document_restore,
    document_revert,
    document_save,
    document_source,
    reembed_job_retry,
    section_save,
    section_source,
    text_diff,
)
from kb.embeddings import get_embedder
from kb.models import ReembedJob

MAX_UPLOAD_FILES = 50
MAX_UPLOAD_BYTES = 2_000_000


NOTE_MAX = 300


def _form_text(request, name: str) -> str:
    return (request.POST.get(name) or "").replace("\r\n", "\n")


def _form_note(request) -> params.Parsed[str]:
    return params.text(request.POST.get("note"), label="The note", max_length=NOTE_MAX)


def _saved_message(request, result) -> None:
    if result.version is None:
        messages.info(request, "Nothing changed: no new version.")
        return
    pending = result.job.total if result.job else 0
    messages.success(request, f"Saved version {result.version.number} · index version {result.index_version} · "
                              f"{pending} chunks re-embedding")


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """Return the lines of a unified diff with a class for each: add, del, hunk or ''."""
    lines = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = ""
        lines.append((kind, line))
    return lines


# --- whole document ------------------------------------------------------------------------------------------


@login_required
@kb_editor_required
def document_edit(request, slug):
    """Edit a document's Markdown; "Preview" shows the chunks without saving, "Save" makes a new version."""
    document = access_document(slug)
    if document.deleted_at is not None:
        messages.error(request, "This document is deleted; restore it before editing.")
        return redirect("kb:document", slug=slug)
    context = {"document": document, "source": document_source(document), "base_version": document.version,
               "note": ""}
    if request.method != "POST":
        return render(request, "kb/document_edit.html", context)
    source = _form_text(request, "source")
    base_version = params.integer(request.POST.get("base_version"), label="The base version",
                                  default=document.version).value
    note = _form_note(request)
    context.update(source=source, base_version=base_version, note=note.value)
    embedder = get_embedder()
    if request.POST.get("action") == "preview":
        context["preview"] = chunk_preview(document=document, source=source, slug=document.slug, embedder=embedder)
        return render(request, "kb/document_edit.html", context)
    try:
        if note.error:
            raise EditError(note.error)
        result = document_save(document=document, source=source, base_version=base_version, author=request.user,
                               note=context["note"], embedder=embedder)
    except EditConflict as conflict:
        context.update(conflict=conflict, conflict_diff=diff_lines(conflict.diff),
                       base_version=conflict.current_version)
        return render(request, "kb/document_edit.html", context, status=409)
    except EditError as exc:
        context.update(error=str(exc))
        return render(request, "kb/document_edit.html", context, status=400)
    _saved_message(request, result)
    return redirect("kb:document", slug=slug)


@login_required
@kb_editor_required
@require_POST
def document_preview(request, slug):
    """Render the chunk preview of the posted Markdown (the htmx live preview of the edit page)."""
    document = access_document(slug)
    preview = chunk_preview(document=document, source=_form_text(request, "source"), slug=document.slug,
                            embedder=get_embedder())
    return render(request, "kb/document_edit.html#preview", {"document": document, "preview": preview})


# --- one section ---------------------------------------------------------------------------------------------


def _section_preview(document, section, text):
    if section.retired_in is not None:
        return None
    source = section_source(document=document, section=section, text=text.strip() or section.text)
    return chunk_preview(document=document, source=source, slug=document.slug, embedder=get_embedder())


@login_required
@kb_editor_required
def section_edit(request, slug, section_id):
    """Edit one section's text; refused (409) when another save changed that section after it was opened."""
    document = access_document(slug, live=True)
    section = access_section(document, section_id)
    if request.method != "POST" and section.retired_in is not None:
        current = document.sections.live().filter(heading_path=section.heading_path).first()
        if current is None:
            messages.error(request, f"The section “{section.heading_path}” is no longer in the document.")
            return redirect("kb:document", slug=slug)
        return redirect("kb:section_edit", slug=slug, section_id=current.pk)
    context = {"document": document, "section": section, "text": section.text, "base_hash": section.content_hash,
               "base_text": section.text, "note": ""}
    if request.method != "POST":
        return render(request, "kb/section_edit.html", context)
    text = _form_text(request, "text")
    note = _form_note(request)
    context.update(text=text, base_hash=request.POST.get("base_hash") or "",
                   base_text=_form_text(request, "base_text"), note=note.value)
    if request.POST.get("action") == "preview":
        context["preview"] = _section_preview(document, section, text)
        return render(request, "kb/section_edit.html", context)
    try:
        if note.error:
            raise EditError(note.error)
        result = section_save(document=document, section=section, text=text, base_hash=context["base_hash"],
                              base_text=context["base_text"], author=request.user, note=context["note"],
                              embedder=get_embedder())
    except EditConflict as conflict:
        current = document.sections.live().filter(heading_path=section.heading_path).first()
        context.update(conflict=conflict, conflict_diff=diff_lines(conflict.diff), current_section=current,
                       base_hash=conflict.current_hash, base_text=conflict.theirs)
        return render(request, "kb/section_edit.html", context, status=409)
    except EditError as exc:
        context.update(error=str(exc))
        return render(request, "kb/section_edit.html", context, status=400)
    _saved_message(request, result)
    return redirect("kb:document", slug=slug)


@login_required
@kb_editor_required
@require_POST
def section_preview(request, slug, section_id):
    """Render the chunk preview of the document with this section's posted text (htmx live preview)."""
    document = access_document(slug, live=True)
    section = access_section(document, section_id)
    preview = _section_preview(document, section, _form_text(request, "text"))
    return render(request, "kb/document_edit.html#preview", {"document": document, "preview": preview})


# --- history, revert -----------------------------------------------------------------------------------------


@login_required
@kb_editor_required
def document_history(request, slug):
    """List the versions; show the diff of one version against the previous one, or of two chosen ones."""
    document = access_document(slug)
    versions = list(document.versions.select_related("author"))
    by_number = {v.number: v for v in versions}
    old_number = params.integer(request.GET.get("a"), label="The older version").value
    new_number = params.integer(request.GET.get("b"), label="The newer version").value
    shown = params.integer(request.GET.get("version"), label="The version").value
    if shown is not None and old_number is None and new_number is None:
        old_number, new_number = shown - 1, shown
    diff, old, new = None, by_number.get(old_number), by_number.get(new_number)
    if new is not None:
        diff = diff_lines(text_diff(old.source if old else "", new.source,
                                    f"version {old.number}" if old else "nothing", f"version {new.number}"))
    template = "kb/document_history.html"
    if request.htmx and new is not None:
        template += "#diff"
    return render(request, template, {"document": document, "versions": versions, "diff": diff, "old": old,
                                      "new": new})


@login_required
@kb_editor_required
@require_POST
def document_revert_view(request, slug, number):
    """Make a new version with version `number`'s content (a second click changes nothing)."""
    document = access_document(slug, live=True)
    try:
        result = document_revert(document=document, number=number, author=request.user, embedder=get_embedder())
    except EditConflict:  # a save landed between loading the document and locking it: say so, change nothing
        messages.error(request, "The document changed while reverting; look at the history and try again.")
        return redirect("kb:document_history", slug=slug)
    except EditError as exc:
        messages.error(request, str(exc))
        return redirect("kb:document_history", slug=slug)
    _saved_message(request, result)
    return redirect("kb:document", slug=slug)


# --- upload --------------------------------------------------------------------------------------------------


@login_required
@kb_editor_required
def document_upload(request):
    """Import uploaded .md/.html files as new documents or new versions; all or nothing."""
    from kb.services import KnowledgeBaseError, documents_import_files

    if request.method != "POST":
        return render(request, "kb/document_upload.html", {})
    uploads = request.FILES.getlist("files")
    error = ""
    if not uploads:
        error = "Choose at least one .md or .html file."
    elif len(uploads) > MAX_UPLOAD_FILES:
        error = f"At most {MAX_UPLOAD_FILES} files at once."
    elif any(f.size > MAX_UPLOAD_BYTES for f in uploads):
        error = f"Each file must be under {MAX_UPLOAD_BYTES // 1_000_000} MB."
    if error:
        return render(request, "kb/document_upload.html", {"error": error}, status=400)
    try:
        report = documents_import_files(files=[(f.name, f.read()) for f in uploads], embedder=get_embedder(),
                                        author=request.user)
    except KnowledgeBaseError as exc:
        return render(request, "kb/document_upload.html", {"error": str(exc)}, status=400)
    return render(request, "kb/document_upload.html", {"report": report})


# --- delete, restore -----------------------------------------------------------------------------------------


@login_required
@kb_editor_required
def document_delete_view(request, slug):
    """Confirm (listing the golden cases that expect this document), then soft-delete it."""
    document = access_document(slug)
    if request.method != "POST":
        if document.deleted_at is not None:
            return redirect("kb:document", slug=slug)
        return render(request, "kb/document_delete.html",
                      {"document": document})
    result = document_delete(document=document, author=request.user)
    if result.version is not None:
        messages.success(request, f"Deleted {slug} (version {result.version.number}, index version "
                                  f"{result.index_version}); its chunks are out of search.")
    return redirect("kb:document", slug=slug)


@login_required
@kb_editor_required
@require_POST
def document_restore_view(request, slug):
    """Bring a soft-deleted document back (a second click changes nothing)."""
    document = access_document(slug)
    result = document_restore(document=document, author=request.user, embedder=get_embedder())
    if result.version is not None:
        messages.success(request, f"Restored {slug} as version {result.version.number} · index version "
                                  f"{result.index_version}")
    return redirect("kb:document", slug=slug)


# --- background re-embedding ---------------------------------------------------------------------------------


@login_required
@kb_editor_required
def reembed_progress(request, slug):
    """Render the progress of the document's latest re-embedding job (polled by htmx while it runs)."""
    document = access_document(slug)
    return render(request, "kb/_reembed_progress.html",
                  {"document": document, "job": document.reembed_jobs.first()})


@login_required
@kb_editor_required
@require_POST
def reembed_retry(request, job_id):
    """Queue a failed re-embedding job again."""
    job = get_object_or_404(ReembedJob.objects.select_related("document"), pk=job_id)
    job = reembed_job_retry(job=job)
    if job.document is None:
        return redirect("kb:documents")
    if request.htmx:
        return render(request, "kb/_reembed_progress.html", {"document": job.document, "job": job})
    return redirect("kb:document", slug=job.document.slug)
