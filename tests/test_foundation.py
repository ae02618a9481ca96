"""The foundation a newcomer relies on: real PostgreSQL with pgvector, roles, login, navigation."""

import pytest
from django.db import connection
from django.urls import reverse


@pytest.mark.django_db
def test_database_is_postgresql_with_pgvector():
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        (version,) = cursor.fetchone()
    major, minor, *_ = (int(p) for p in version.split("."))
    assert (major, minor) >= (0, 8)


@pytest.mark.django_db
def test_roles_exist_with_their_permissions(make_staff):
    agent = make_staff("ana", "agent")
    analyst = make_staff("luis", "analyst")
    editor = make_staff("eva", "kb_editor")
    supervisor = make_staff("sol", "supervisor")
    assert agent.has_perm("desk.use_desk") and not agent.has_perm("traces.review_traces")
    assert analyst.has_perm("traces.review_traces") and not analyst.has_perm("desk.use_desk")
    assert editor.has_perm("kb.edit_kb") and not editor.has_perm("desk.approve_credit_notes")
    assert supervisor.has_perm("desk.approve_credit_notes")


@pytest.mark.django_db
def test_login_then_home_shows_only_the_rooms_of_the_role(client, make_staff):
    make_staff("eva", "kb_editor")
    response = client.post(reverse("login"), {"username": "eva", "password": "pw-for-tests-1"})
    assert response.status_code == 302
    home = client.get(reverse("home"))
    body = home.content.decode()
    assert "Knowledge base" in body
    assert "Traces" not in body


@pytest.mark.django_db
def test_anonymous_visitor_is_sent_to_login(client):
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert reverse("login") in response["Location"]


def test_htmx_is_served_locally_not_from_a_cdn(client):
    from django.contrib.staticfiles import finders

    assert finders.find("js/htmx.min.js")
    base = open("templates/base.html").read()
    assert "unpkg" not in base and "cdn" not in base.lower()
    assert 'hx-headers=\'{"x-csrftoken"' in base


@pytest.mark.django_db
def test_a_supervisor_uses_the_admin_over_the_desk_and_an_agent_does_not(client, make_staff):
    supervisor = make_staff("sol", "supervisor")
    supervisor.is_staff = True
    supervisor.save()
    client.force_login(supervisor)
    assert client.get("/admin/desk/conversation/").status_code == 200
    assert client.get("/admin/desk/cannedreply/add/").status_code == 200
    assert client.get("/admin/desk/message/add/").status_code == 403  # read-only
    client.force_login(make_staff("ana", "agent"))
    assert client.get("/admin/desk/conversation/").status_code == 302  # not staff: to the admin login
