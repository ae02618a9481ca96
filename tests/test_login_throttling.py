"""Login throttling: a username is locked on one address after too many wrong passwords, and unlocked."""

import datetime as dt

import pytest
import time_machine
from axes.models import AccessAttempt
from django.core.management import call_command
from django.utils import timezone

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-1"
LOCKED = "Too many failed logins"


def log_in(client, username, password, address="10.0.0.1"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def lock_out(client, username, address="10.0.0.1"):
    for _ in range(5):  # LOGIN_FAILURE_LIMIT's default
        response = log_in(client, username, "wrong-password", address)
    return response


def test_five_wrong_passwords_lock_that_username_on_that_address_only(client, make_staff):
    make_staff("eva", "agent")
    make_staff("bob", "agent")
    assert log_in(client, "eva", "wrong-password").status_code == 200  # the form again, not locked yet
    assert LOCKED not in log_in(client, "eva", "wrong-password").content.decode()

    last = lock_out(client, "eva")
    assert last.status_code == 429 and LOCKED in last.content.decode()
    refused = log_in(client, "eva", PASSWORD)
    assert refused.status_code == 429 and LOCKED in refused.content.decode()
    assert "15 minutes" in refused.content.decode()
    assert client.get("/").status_code == 302  # not signed in

    assert log_in(client, "bob", PASSWORD).status_code == 302  # another user on the same address
    client.logout()
    assert log_in(client, "eva", PASSWORD, address="10.0.0.2").status_code == 302  # eva elsewhere


def test_the_reset_command_unlocks_the_username(client, make_staff):
    make_staff("eva", "agent")
    lock_out(client, "eva")
    call_command("axes_reset_username", "eva")
    assert log_in(client, "eva", PASSWORD).status_code == 302
    assert client.get("/").status_code == 200


def test_a_supervisor_unlocks_a_user_in_the_admin(client, make_staff):
    make_staff("eva", "agent")
    supervisor = make_staff("sara", "supervisor")
    supervisor.is_staff = True
    supervisor.save(update_fields=["is_staff"])
    lock_out(client, "eva")
    attempt = AccessAttempt.objects.get(username="eva")

    client.force_login(supervisor)
    assert "eva" in client.get("/admin/axes/accessattempt/").content.decode()
    response = client.post(f"/admin/axes/accessattempt/{attempt.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    client.logout()
    assert log_in(client, "eva", PASSWORD).status_code == 302


def test_the_lock_ends_after_the_cool_off(client, make_staff):
    make_staff("eva", "agent")
    lock_out(client, "eva")
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=14), tick=False):
        assert log_in(client, "eva", PASSWORD).status_code == 429
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=16), tick=False):
        assert log_in(client, "eva", PASSWORD).status_code == 302


def test_behind_a_proxy_the_forwarded_client_address_is_throttled(client, make_staff, settings):
    settings.LOGIN_PROXY_COUNT = 1
    make_staff("eva", "agent")
    proxy = "10.9.9.9"
    for attempt in range(5):  # the client claims a different address each time; the proxy appends the real one
        client.post("/login/", {"username": "eva", "password": "wrong-password"}, REMOTE_ADDR=proxy,
                    HTTP_X_FORWARDED_FOR=f"1.1.1.{attempt}, 203.0.113.7")
    locked = client.post("/login/", {"username": "eva", "password": PASSWORD}, REMOTE_ADDR=proxy,
                         HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert locked.status_code == 429
    other = client.post("/login/", {"username": "eva", "password": PASSWORD}, REMOTE_ADDR=proxy,
                        HTTP_X_FORWARDED_FOR="198.51.100.4")
    assert other.status_code == 302  # eva from another client behind the same proxy


# Password spraying: one address, many usernames -----------------------------------------------------

SPRAYED = "Logins from this network address are refused"


def spray(client, count, address="10.0.0.9"):
    """Try one wrong password on `count` different usernames from one address; return the last answer."""
    for number in range(count):
        response = log_in(client, f"user{number}", "Password1!", address)
    return response


def test_failures_from_one_address_across_usernames_lock_the_address(client, make_staff, settings):
    assert settings.LOGIN_ADDRESS_FAILURE_LIMIT == 20
    make_staff("eva", "agent")
    assert spray(client, 19).status_code == 200  # no username reached its own limit, nor the address its
    last = spray(client, 1, address="10.0.0.9")
    assert last.status_code == 429 and LOCKED in last.content.decode() and SPRAYED in last.content.decode()
    refused = log_in(client, "eva", PASSWORD, address="10.0.0.9")  # even the right password, from there
    assert refused.status_code == 429 and SPRAYED in refused.content.decode()
    assert log_in(client, "eva", PASSWORD, address="10.0.0.10").status_code == 302  # another address


def test_an_address_lock_slides_with_its_window_and_refused_tries_do_not_extend_it(client, make_staff):
    make_staff("eva", "agent")
    spray(client, 20)
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=10), tick=False):
        assert log_in(client, "eva", PASSWORD, address="10.0.0.9").status_code == 429
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=16), tick=False):
        assert log_in(client, "eva", PASSWORD, address="10.0.0.9").status_code == 302


def test_the_reset_command_unlocks_an_address(client, make_staff):
    make_staff("eva", "agent")
    spray(client, 20)
    call_command("axes_reset_ip", "10.0.0.9")
    assert log_in(client, "eva", PASSWORD, address="10.0.0.9").status_code == 302


def test_the_address_limit_is_a_setting(client, make_staff, settings):
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 3
    make_staff("eva", "agent")
    assert spray(client, 3).status_code == 429
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 0  # no per-address limit: only the username-and-address lock
    assert log_in(client, "eva", PASSWORD, address="10.0.0.9").status_code == 302
