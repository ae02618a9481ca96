"""The term statistics the full-text branch keeps: how many live chunks hold each lexeme, per text-search config."""

from django.db import connection

from kb.models import Chunk, TermStat


def refresh_term_stats() -> None:
    """Recount how many chunks hold each lexeme, per config (for the full-text branch)."""
    table = Chunk._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TermStat._meta.db_table}")
        for config, where, column in (  # live chunks only: retired ones are not searched
            ("spanish", "language = 'es' AND retired_in IS NULL", "search_vector"),
            ("english", "language = 'en' AND retired_in IS NULL", "search_vector"),
            ("simple", "retired_in IS NULL", "search_vector_simple"),
        ):
            cursor.execute(
                f"INSERT INTO {TermStat._meta.db_table} (config, lexeme, ndoc) "
                f"SELECT %s, word, ndoc FROM ts_stat(%s)",
                [config, f"SELECT {column} FROM {table} WHERE {where}"],
            )
