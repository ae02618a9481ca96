"""Staff roles: the four groups, what each may do, and the navigation each sees."""

from django.conf import settings
from django.urls import NoReverseMatch, reverse

# group name -> "app_label.codename" of each permission. Each room declares its own on one of its models
# (desk: Conversation and CreditNoteRequest, traces: Trace, kb: Document); this table only hands them out.
ROLE_PERMISSIONS = {
    "agent": ["desk.use_desk"],
    "supervisor": ["desk.use_desk", "desk.supervise_conversations", "desk.approve_credit_notes",
                   "traces.review_traces"],
    "analyst": ["traces.review_traces"],
    "kb_editor": ["kb.edit_kb"],
}

# Django model permissions the supervisor group gets for the admin (desk models; canned replies editable).
SUPERVISOR_ADMIN_PERMISSIONS = [
    f"desk.{codename}" for codename in (
        "view_contact", "change_contact", "view_conversation", "change_conversation", "view_message",
        "view_escalation", "view_event", "view_cannedreply", "add_cannedreply", "change_cannedreply",
        "view_messagetemplate", "add_messagetemplate", "change_messagetemplate", "view_attachment",
        "delete_cannedreply")
] + [
    # django-axes' access attempts: a supervisor unlocks a throttled login by deleting its attempt in the admin.
    "axes.view_accessattempt", "axes.delete_accessattempt",
]

# (label, url name, permission or tuple of permissions) — a link shows when the user holds one of them
NAVIGATION = [
    ("Dashboard", "dashboard:page", ("traces.review_traces", "desk.use_desk")),
    ("Desk", "desk:queue", "desk.use_desk"),
    ("Credit notes", "desk:credit_notes", "desk.use_desk"),
    ("Templates", "desk:templates", "desk.supervise_conversations"),
    ("Traces", "traces:list", "traces.review_traces"),
    ("Evals", "evals:golden_sets", "traces.review_traces"),
    ("Verifier", "evals:verifier_playground", "traces.review_traces"),
    ("Knowledge base", "kb:documents", "kb.edit_kb"),
    ("Web chat", "desk:chat", None),
]


def navigation(request):
    """Template context: the navigation links this user may follow."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_links": []}
    links = []
    for label, url_name, perm in NAVIGATION:
        if perm and not any(user.has_perm(p) for p in ((perm,) if isinstance(perm, str) else perm)):
            continue
        if url_name == "desk:chat" and not settings.WEBCHAT_ENABLED:
            continue
        try:
            links.append({"label": label, "url": reverse(url_name)})
        except NoReverseMatch:  # a room not built yet
            continue
    return {"nav_links": links}


def ensure_roles() -> None:
    """Create the four groups with their permissions if they are missing (the data migrations do it too;
    tests that flush the database and fresh demo databases call this).

    A handful of queries when everything is in place: Django's permission rows are only re-created (one
    pass over every app) when one the roles need is missing, as after a flush.
    """
    from django.apps import apps
    from django.contrib.auth.management import create_permissions
    from django.contrib.auth.models import Group, Permission

    roles = {**ROLE_PERMISSIONS, "supervisor": ROLE_PERMISSIONS["supervisor"] + SUPERVISOR_ADMIN_PERMISSIONS}
    needed = {perm for perms in roles.values() for perm in perms}
    found = _permission_ids(Permission, needed)
    if not needed <= found.keys():
        for app_config in apps.get_app_configs():  # after a flush, make sure every declared permission exists
            create_permissions(app_config, verbosity=0)
        found = _permission_ids(Permission, needed)
    for name, perms in roles.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*[found[perm] if perm in found else _permission(Permission, perm) for perm in perms])


def _permission_ids(permission_model, perms: set[str]) -> dict[str, int]:
    """Return {"app_label.codename": id} for the permissions among `perms` that exist."""
    rows = permission_model.objects.filter(codename__in={perm.split(".", 1)[1] for perm in perms}).values_list(
        "pk", "content_type__app_label", "codename")
    return {f"{app_label}.{codename}": pk for pk, app_label, codename in rows if f"{app_label}.{codename}" in perms}


def _permission(permission_model, perm: str):
    app_label, codename = perm.split(".", 1)
    return permission_model.objects.get(content_type__app_label=app_label, codename=codename)
