"""Staff roles: the four groups, what each may do, and the navigation each sees."""

from django.urls import NoReverseMatch, reverse

# group name -> permission codenames (all on desk.StaffAccess)
ROLE_PERMISSIONS = {
    "agent": ["use_desk"],
    "supervisor": ["use_desk", "approve_credit_notes", "review_traces"],
    "analyst": ["review_traces"],
    "kb_editor": ["edit_kb"],
}

# (label, url name, permission) — a link shows when the user holds the permission
NAVIGATION = [
    ("Desk", "desk:queue", "desk.use_desk"),
    ("Traces", "traces:list", "desk.review_traces"),
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
