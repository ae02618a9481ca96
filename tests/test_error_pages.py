"""The 400, 403, 404 and 500 pages, with DEBUG off: styled like every page, with the navigation of the
person's role, the reason when we wrote one, and a way back."""

import re

import pytest
from django.test import Client

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.error_urls")]

# role -> a navigation label only that role's links show, and a page the role may not open
ROLES = {
    "anonymous": ("Log in", "/forbidden/"),
    "agent": ("Desk", "/traces/verifier/"),
    "supervisor": ("Credit notes", "/kb/"),
    "analyst": ("Traces", "/desk/"),
    "kb_editor": ("Knowledge base", "/traces/"),
}


@pytest.fixture(autouse=True)
def production(settings):
    settings.DEBUG = False  # DEBUG shows Django's technical pages instead


@pytest.fixture(params=list(ROLES))
def visitor(request, make_staff):
    """A browser as one role, that does not raise the server's exceptions (it sees the 500 page)."""
    client = Client(raise_request_exception=False)
    if request.param != "anonymous":
        client.force_login(make_staff(f"err-{request.param}", request.param))
    return request.param, client


def page_text(response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def assert_styled_with_navigation(response, role):
    html = response.content.decode()
    assert 'href="/static/css/app.css"' in html and '<header class="topbar">' in html
    nav_label = ROLES[role][0]
    assert f">{nav_label}</a>" in html, f"the {role}'s navigation is missing"
    assert '<a href="/">Start page</a>' in html


def test_a_bad_parameter_is_a_400_page_that_says_what_was_wrong(visitor):
    role, client = visitor
    response = client.post("/chat/", {"customer_id": "C-1001\x00"}, HTTP_REFERER="http://testserver/chat/")
    assert response.status_code == 400
    assert_styled_with_navigation(response, role)
    assert "That request could not be read" in page_text(response)
    assert "The customer contains a NUL character; remove it." in page_text(response)
    assert '<a href="http://testserver/chat/" rel="prev">' in response.content.decode()


@pytest.mark.parametrize("status, path, heading", [
    (403, None, "This page is not for your role"),  # None: a page of another role
    (404, "/no/such/page/", "Nothing here"),
    (500, "/broken/", "Something broke on our side"),
])
def test_each_error_page_keeps_the_navigation_and_shows_no_internals(visitor, status, path, heading):
    role, client = visitor
    response = client.get(path or ROLES[role][1])
    assert response.status_code == status
    assert_styled_with_navigation(response, role)
    text = page_text(response)
    assert heading in text
    assert "tried" not in text and "on purpose" not in text and "Traceback" not in text  # patterns, the bug


def test_the_reason_we_wrote_shows_on_403_and_404(client, make_staff):
    client.force_login(make_staff("err-analyst", "analyst"))
    assert "Only a test may open this page." in page_text(client.get("/forbidden/"))
    missing = client.get("/traces/replies/999999999/")
    assert missing.status_code == 404 and "No bot turn sent this message." in page_text(missing)


def test_a_referer_from_another_site_is_no_way_back(client):
    response = client.get("/no/such/page/", HTTP_REFERER="https://evil.example/")
    assert "evil.example" not in response.content.decode() and 'rel="prev"' not in response.content.decode()


def test_when_even_the_500_page_fails_a_bare_one_answers(monkeypatch):
    from config import views

    def database_down(*args, **kwargs):
        raise RuntimeError("the database is down")

    monkeypatch.setattr(views, "render", database_down)
    response = Client(raise_request_exception=False).get("/broken/")
    assert response.status_code == 500
    assert "Something broke on our side" in response.content.decode()
