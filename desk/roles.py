"""Staff roles: the four groups, what each may do, and the navigation each sees."""

from django.urls import NoReverseMatch, reverse

# group name -> permission codenames (all on desk.StaffAccess)
ROLE_PERMISSIONS = {
    "agent": ["use_desk"],
    "supervisor": ["use_desk", "approve_credit_notes", "review_traces"],
    "analyst": ["review_traces"],
    "kb_editor": ["edit_kb"],
}

# Django model permissions the supervisor group gets for the admin (desk models; canned replies editable).
SUPERVISOR_ADMIN_PERMISSIONS = [
    "view_contact", "change_contact", "view_conversation", "change_conversation", "view_message",
    "view_escalation", "view_event", "view_cannedreply", "add_cannedreply", "change_cannedreply",
    "delete_cannedreply",
]
# django-axes' access attempts: a supervisor unlocks a throttled login by deleting its attempt in the admin.
SUPERVISOR_UNLOCK_PERMISSIONS = ["view_accessattempt", "delete_accessattempt"]

# (label, url name, permission) — a link shows when the user holds the permission
NAVIGATION = [
    ("Desk", "desk:queue", "desk.use_desk"),
    ("Credit notes", "desk:credit_notes", "desk.approve_credit_notes"),
    ("Traces", "traces:list", "desk.review_traces"),
    ("Evals", "traces:golden_sets", "desk.review_traces"),
    ("Verifier", "traces:verifier_playground", "desk.review_traces"),
    ("Knowledge base", "kb:documents", "desk.edit_kb"),
    ("Web chat", "desk:chat", None),
]


def navigation(request):
    """Template context: the navigation links this user may follow."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_links": []}
    links = []
    for label, url_name, perm in NAVIGATION:
        if perm and not user.has_perm(perm):
            continue
        try:
            links.append({"label": label, "url": reverse(url_name)})
        except NoReverseMatch:  # a room not built yet
            continue
    return {"nav_links": links}


def ensure_roles() -> None:
    """Create the four groups with their permissions if they are missing (the data migration does it too;
    tests that flush the database and fresh demo databases call this)."""
    from django.contrib.auth.models import Group, Permission
    from django.contrib.contenttypes.models import ContentType

    from desk.models import StaffAccess

    content_type = ContentType.objects.get_for_model(StaffAccess, for_concrete_model=False)
    perms = {}
    for codename, label in StaffAccess._meta.permissions:
        perms[codename], _ = Permission.objects.get_or_create(
            content_type=content_type, codename=codename, defaults={"name": label}
        )
    for name, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*[perms[c] for c in codenames])
    # After a flush the model permissions are back (post_migrate) but not the group's links to them.
    supervisor = Group.objects.get(name="supervisor")
    supervisor.permissions.add(*Permission.objects.filter(content_type__app_label="desk",
                                                          codename__in=SUPERVISOR_ADMIN_PERMISSIONS))
    supervisor.permissions.add(*Permission.objects.filter(content_type__app_label="axes",
                                                          codename__in=SUPERVISOR_UNLOCK_PERMISSIONS))
