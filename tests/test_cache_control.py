"""Signed-in pages are not kept by browsers or proxies; the login page keeps its own header."""

import pytest
from django.urls import reverse

from tests.support.factories import conversation_start, customer_says

pytestmark = pytest.mark.django_db


def directives(response) -> set[str]:
    return {part.strip() for part in response.get("Cache-Control", "").split(",") if part.strip()}


def test_a_conversation_page_with_account_data_is_never_stored(client, make_staff):
    conversation = conversation_start()
    customer_says(conversation, "¿cuánto debo?")
    client.force_login(make_staff("ana", "agent"))
    for url in (reverse("desk:conversation", args=[conversation.pk]), reverse("desk:queue"), reverse("home")):
        response = client.get(url)
        assert response.status_code == 200
        assert {"no-store", "private"} <= directives(response), url


def test_a_csv_download_for_a_signed_in_analyst_is_never_stored(client, make_staff):
    client.force_login(make_staff("luz", "analyst"))
    response = client.get(reverse("traces:export", args=["csv"]))
    assert response.status_code == 200 and "no-store" in directives(response)


def test_the_login_page_keeps_its_own_header(client, make_staff):
    assert directives(client.get(reverse("login"))) == {"max-age=0", "no-cache", "no-store", "must-revalidate",
                                                        "private"}
    client.force_login(make_staff("ana", "agent"))
    response = client.get(reverse("login"))
    assert "must-revalidate" in directives(response)  # Django's never_cache, not replaced


def test_an_anonymous_page_gets_no_header_from_us(client):
    assert "Cache-Control" not in client.get("/webhooks/whatsapp/", {"hub.mode": "x"})
