"""Shared storage for circuit breakers: Redis when REDIS_URL is set, PostgreSQL otherwise.

Both implement `billing.api.breaker.BreakerStore.update(name, decide)` atomically across processes:

- `RedisStore`: one JSON value per breaker, updated with WATCH/MULTI/EXEC (optimistic; a
  concurrent writer makes EXEC fail and the decision is recomputed on the fresh state). Chosen
  over a Lua script so the transition rules exist once, in Python (billing/api/breaker.py).
- `DatabaseStore`: one `billing.BreakerState` row per breaker, read with SELECT … FOR UPDATE inside
  a transaction on a private autocommit connection — never the caller's connection, so a
  breaker update neither joins nor waits for the caller's transaction (a rolled-back turn
  must not roll back "the API is down"), and the row lock is held for microseconds.

Both read once without a lock first: a decision that changes nothing (closed and healthy,
or open and still cooling down — the hot paths) is as good as an atomic one and costs one
GET or one SELECT.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from billing.api.breaker import BreakerStoreError, CircuitState

logger = logging.getLogger(__name__)
T = TypeVar("T")
MAX_OPTIMISTIC_ATTEMPTS = 64


class RedisStore:
    def __init__(self, client, *, prefix: str = "tracedesk:breaker:"):
        self.client = client
        self.prefix = prefix

    @classmethod
    def from_url(cls, url: str, *, timeout_s: float = 0.5, prefix: str = "tracedesk:breaker:") -> RedisStore:
        import redis

        return cls(
            redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s),
            prefix=prefix,
        )

    def _key(self, name: str) -> str:
        return self.prefix + name

    def _guard(self, action):
        import redis

        try:
            return action()
        except redis.RedisError as exc:
            raise BreakerStoreError(f"redis: {exc}") from exc

    def load(self, name: str) -> CircuitState:
        return self._guard(lambda: CircuitState.from_json(self.client.get(self._key(name))))

    def forget(self, name: str) -> None:
        """Delete a breaker's state (it reads as closed afterwards)."""
        self._guard(lambda: self.client.delete(self._key(name)))

    def update(self, name: str, decide: Callable[[CircuitState], tuple[CircuitState, T]]) -> T:
        import redis

        key = self._key(name)
        try:
            state = CircuitState.from_json(self.client.get(key))
            new, result = decide(state)
            if new == state:
                return result
            with self.client.pipeline() as pipe:
                for _ in range(MAX_OPTIMISTIC_ATTEMPTS):
                    try:
                        pipe.watch(key)
                        state = CircuitState.from_json(pipe.get(key))
                        new, result = decide(state)
                        if new == state:
                            pipe.unwatch()
                            return result
                        pipe.multi()
                        pipe.set(key, new.to_json())
                        pipe.execute()
                        return result
                    except redis.WatchError:
                        continue
        except redis.RedisError as exc:
            raise BreakerStoreError(f"redis: {exc}") from exc
        raise BreakerStoreError(f"breaker {name!r}: too much contention")


class DatabaseStore:
    """Breaker rows in PostgreSQL, through a per-thread private connection to `alias`."""

    def __init__(self, alias: str = "default"):
        self.alias = alias
        self._local = threading.local()

    def _connection(self):
        wrapper = getattr(self._local, "wrapper", None)
        if wrapper is None:
            from django.db import connections

            wrapper = connections.create_connection(self.alias)
            self._local.wrapper = wrapper
        wrapper.ensure_connection()
        return wrapper.connection  # the raw psycopg connection, in autocommit mode

    def close(self) -> None:
        wrapper = getattr(self._local, "wrapper", None)
        if wrapper is not None:
            wrapper.close()
            self._local.wrapper = None

    @staticmethod
    def _table() -> str:
        from billing.models import BreakerState

        return BreakerState._meta.db_table

    @staticmethod
    def _row_to_state(row) -> CircuitState:
        if row is None:
            return CircuitState()
        state, failures, opened_at, probe_id, probe_started_at = row
        return CircuitState(
            state=state,
            failures=failures,
            opened_at=opened_at,
            probe_id=probe_id or None,
            probe_started_at=probe_started_at,
        )

    def load(self, name: str) -> CircuitState:
        return self._guard(lambda raw: self._select(raw, name, lock=False))

    def forget(self, name: str) -> None:
        """Delete a breaker's row (it reads as closed afterwards)."""
        self._guard(lambda raw: raw.execute(f"DELETE FROM {self._table()} WHERE name = %s", [name]))

    def _select(self, raw, name: str, *, lock: bool) -> CircuitState:
        sql = (
            f"SELECT state, failures, opened_at, probe_id, probe_started_at FROM {self._table()} "
            f"WHERE name = %s" + (" FOR UPDATE" if lock else "")
        )
        with raw.cursor() as cursor:
            cursor.execute(sql, [name])
            return self._row_to_state(cursor.fetchone())

    def update(self, name: str, decide: Callable[[CircuitState], tuple[CircuitState, T]]) -> T:
        def run(raw):
            state = self._select(raw, name, lock=False)
            new, result = decide(state)
            if new == state:
                return result
            table = self._table()
            with raw.transaction(), raw.cursor() as cursor:
                # make sure the row exists so FOR UPDATE has something to lock, even on first use
                cursor.execute(
                    f"INSERT INTO {table} (name, state, failures, probe_id, updated_at) "
                    f"VALUES (%s, 'closed', 0, '', now()) ON CONFLICT (name) DO NOTHING",
                    [name],
                )
                state = self._select(raw, name, lock=True)
                new, result = decide(state)
                if new != state:
                    cursor.execute(
                        f"UPDATE {table} SET state = %s, failures = %s, opened_at = %s, probe_id = %s, "
                        f"probe_started_at = %s, updated_at = now() WHERE name = %s",
                        [
                            new.state,
                            new.failures,
                            new.opened_at,
                            new.probe_id or "",
                            new.probe_started_at,
                            name,
                        ],
                    )
            return result

        return self._guard(run)

    def _guard(self, action):
        import psycopg

        try:
            return action(self._connection())
        except psycopg.Error as exc:
            self.close()  # a broken connection is replaced on the next call
            raise BreakerStoreError(f"database: {exc}") from exc


_stores: dict[str, object] = {}
_stores_lock = threading.Lock()


def default_store():
    """Return the process-wide store from settings: Redis when REDIS_URL is set, else the database."""
    from django.conf import settings

    key = settings.REDIS_URL or "database"
    with _stores_lock:
        store = _stores.get(key)
        if store is None:
            store = RedisStore.from_url(settings.REDIS_URL) if settings.REDIS_URL else DatabaseStore()
            _stores[key] = store
        return store


def close_stores() -> None:
    """Close this thread's database connection of the cached stores and forget them (tests, shutdown)."""
    with _stores_lock:
        for store in _stores.values():
            if isinstance(store, DatabaseStore):
                store.close()
        _stores.clear()
