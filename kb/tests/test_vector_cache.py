"""The on-disk vector cache: a text embedded once is never sent to the model again, by any process."""

from kb.embeddings import CachedEmbedder, VectorCache


class CountingModel:
    name = "counting/model"
    dimensions = 3
    max_tokens = 100

    def __init__(self):
        self.passages, self.queries = [], []

    def embed_query(self, text):
        self.queries.append(text)
        return [0.5, 0.25, float(len(text))]

    def embed_passages(self, texts):
        self.passages.extend(texts)
        return [[0.125, 0.5, float(len(t))] for t in texts]

    def count_tokens(self, text):
        return len(text.split())


def test_a_second_process_reads_the_vectors_back_without_calling_the_model(tmp_path):
    path = tmp_path / "vectors.sqlite3"
    first_model = CountingModel()
    first = CachedEmbedder(first_model, VectorCache(path))
    vectors = first.embed_passages(["uno", "dos", "uno"])
    assert first_model.passages == ["uno", "dos"]  # a repeated text is embedded once

    second_model = CountingModel()
    second = CachedEmbedder(second_model, VectorCache(path))  # a new connection, as another process would open
    assert second.embed_passages(["dos", "uno", "tres"]) == [vectors[1], vectors[0], [0.125, 0.5, 4.0]]
    assert second_model.passages == ["tres"]
    assert (second.name, second.dimensions, second.count_tokens("a b")) == ("counting/model", 3, 2)


def test_queries_and_passages_are_cached_apart(tmp_path):
    model = CountingModel()
    embedder = CachedEmbedder(model, VectorCache(tmp_path / "v.sqlite3"))
    embedder.embed_passages(["reconexión"])
    assert embedder.embed_query("reconexión") == [0.5, 0.25, 10.0]  # e5 embeds a query with another prefix
    embedder.embed_query("reconexión")
    assert model.queries == ["reconexión"]
