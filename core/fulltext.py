"""PostgreSQL full-text pieces every room searches with: accent folding, the two stemming configurations, and
a stored vector / typed query pair that match each other.

Accents are folded before stemming so "reconexion" finds "reconexión" (subscribers type without them); ñ is
kept ("año" is not "ano"). translate() is immutable, so generated (stored) columns accept the fold. A text is
stemmed by both the Spanish and the English configuration, so "facturas" finds "factura" and "charges" finds
"charge" whatever language the text or the search is in.
"""

from __future__ import annotations

from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import BooleanField, DateTimeField, F, Func, QuerySet, Value

ACCENTED = "áéíóúüÁÉÍÓÚÜàèìòùÀÈÌÒÙ"
UNACCENTED = "aeiouuAEIOUUaeiouAEIOU"
SEARCH_CONFIGS = ("spanish", "english")


class ToTsVector(Func):
    function = "to_tsvector"
    output_field = SearchVectorField()


class RegConfig(Func):
    """A constant text-search configuration (folds to a constant, so generated columns accept it)."""

    template = "%(expressions)s::regconfig"
    output_field = models.TextField()


class FoldAccents(Func):
    function = "translate"
    output_field = models.TextField()

    def __init__(self, expression, **extra):
        super().__init__(expression, Value(ACCENTED), Value(UNACCENTED), **extra)


class TsVectorOr(Func):
    """Two text-search vectors (or queries) as one: `a || b`."""

    template = "(%(expressions)s)"
    arg_joiner = " || "
    output_field = SearchVectorField()


class Matches(Func):
    """`vector @@ query`."""

    template = "%(expressions)s"
    arg_joiner = " @@ "
    output_field = BooleanField()


def bilingual_vector(text) -> TsVectorOr:
    """Return the stored vector of a text expression: folded, stemmed in Spanish and in English."""
    folded = FoldAccents(text)
    return TsVectorOr(*(ToTsVector(RegConfig(Value(config)), folded) for config in SEARCH_CONFIGS))


def bilingual_query(text: str) -> TsVectorOr:
    """Return the query for what someone typed (web-search syntax: "a phrase", -word, or), folded and stemmed
    like `bilingual_vector`, in both configurations, either of which may match."""
    folded = FoldAccents(Value(text))
    return TsVectorOr(*(Func(RegConfig(Value(config)), folded, function="websearch_to_tsquery")
                        for config in SEARCH_CONFIGS))


class SortedAfterFetch(Func):
    """A timestamp as an expression no index holds. Ordering a text search's matches by it makes PostgreSQL
    fetch the matches through the GIN index and then sort them, instead of walking the timestamp's index and
    testing every row: the planner cannot know a word is rare (an unknown word is estimated at 1 % of the
    rows), and that walk reads the whole table to find nothing. Use it when a bounded count said the matches
    are few."""

    template = "(%(expressions)s + interval '0 seconds')"
    output_field = DateTimeField()


def newest_first(rows: QuerySet, *, few: bool) -> QuerySet:
    """Order a text search's matches newest first on (created_at, id), by the plan a bounded count chose:
    few matches are fetched through the GIN index and sorted; many are found by walking created_at's index,
    where a page fills within its first rows."""
    when = SortedAfterFetch(F("created_at")) if few else F("created_at")
    return rows.order_by(when.desc(), "-pk")
