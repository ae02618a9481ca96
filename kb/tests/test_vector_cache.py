"""The on-disk vector cache: a text embedded once is never sent to the model again, by any process."""

from kb.embeddings import CachedEmbedder


class CountingModel:
    name = "counting/model"
    dimensions = 3
    max_tokens = 100

    def __init__(self):
        self.passages, self.queries, self.calls = [], [], 0

    def embed_query(self, text):
        self.queries.append(text)
        return [0.5, 0.25, float(len(text))]

    def embed_passages(self, texts):
        self.calls += 1
        self.passages.extend(texts)
        return [[0.125, 0.5, float(len(t))] for t in texts]

    def count_tokens(self, text):
        return len(text.split())


def test_a_second_process_reads_the_vectors_back_without_calling_the_model(tmp_path):
    first_model = CountingModel()
    first = CachedEmbedder(first_model, tmp_path)
    vectors = first.embed_passages(["uno", "dos", "uno"])
    assert first_model.passages == ["uno", "dos"] and first_model.calls == 1  # once, in one batch
    assert vectors[0] == vectors[2] == [0.125, 0.5, 3.0]

    second_model = CountingModel()
    second = CachedEmbedder(second_model, tmp_path)  # a new instance reads the files, as another process would
    assert second.embed_passages(["dos", "uno", "tres"]) == [vectors[1], vectors[0], [0.125, 0.5, 4.0]]
    assert second_model.passages == ["tres"]
    assert (second.name, second.dimensions, second.count_tokens("a b")) == ("counting/model", 3, 2)


def test_queries_and_passages_are_cached_apart(tmp_path):
    model = CountingModel()
    embedder = CachedEmbedder(model, tmp_path)
    embedder.embed_passages(["reconexión"])
    assert embedder.embed_query("reconexión") == [0.5, 0.25, 10.0]  # e5 embeds a query with another prefix
    embedder.embed_query("reconexión")
    assert model.queries == ["reconexión"]
    assert CachedEmbedder(CountingModel(), tmp_path).embed_query("reconexión") == [0.5, 0.25, 10.0]


def test_another_model_or_size_never_reads_these_vectors(tmp_path):
    CachedEmbedder(CountingModel(), tmp_path).embed_passages(["uno"])
    other = CountingModel()
    other.dimensions = 4
    CachedEmbedder(other, tmp_path).embed_passages(["uno"])
    assert other.passages == ["uno"]
