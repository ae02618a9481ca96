"""The term statistics the full-text branch keeps: per text-search config, how many live chunks hold each
lexeme (TermStat) and how many chunks the config indexes with their mean length (TermTotal) — BM25's n, N
and avgdl."""

from django.db import connection

from kb.models import Chunk, TermStat, TermTotal

# (config, the chunks it indexes, their tsvector column); live chunks only: retired ones are not searched.
CONFIG_CHUNKS = (
    ("spanish", "language = 'es' AND retired_in IS NULL", "search_vector"),
    ("english", "language = 'en' AND retired_in IS NULL", "search_vector"),
    ("simple", "retired_in IS NULL", "search_vector_simple"),
)


def refresh_term_stats() -> None:
    """Recount how many chunks hold each lexeme, and each config's chunk count and mean length."""
    table = Chunk._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TermStat._meta.db_table}")
        cursor.execute(f"DELETE FROM {TermTotal._meta.db_table}")
        for config, where, column in CONFIG_CHUNKS:
            cursor.execute(
                f"INSERT INTO {TermStat._meta.db_table} (config, lexeme, ndoc) "
                f"SELECT %s, word, ndoc FROM ts_stat(%s)",
                [config, f"SELECT {column} FROM {table} WHERE {where}"],
            )
            cursor.execute(
                f"INSERT INTO {TermTotal._meta.db_table} (config, chunks, avg_words) "
                f"SELECT %s, count(*), coalesce(avg(words), 0) FROM {table} WHERE {where}",
                [config],
            )
