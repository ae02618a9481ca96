"""WhatsApp Cloud API webhook: the verification handshake (GET) and signed deliveries (POST).

A delivery is checked, stored and acknowledged within the request: 401/403 for a missing or wrong
signature, 413 for a body over 2 MB, 400 for a signed body that cannot be read at all (not JSON,
nested beyond any Meta body, not a WhatsApp webhook), 503 while the database is away (restarting,
unreachable: Meta redelivers anything but a 200 for days, and the redelivery is stored once), and
otherwise 200 — also when some of its messages or statuses are malformed or refused by the database:
those are logged and counted, the good ones stored, because a redelivery would not fix them. The bot's turn
is queued on commit and runs in a Celery worker, so no model or billing call ever happens here
when a broker is configured (CELERY_BROKER_URL). Without one, Celery runs tasks eagerly, in-process.
"""

import hmac
import logging

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from core.db_faults import DatabaseUnavailable
from desk.inbound import webhook_batch_store
from desk.whatsapp import MAX_BODY_BYTES, BodyRefused, read_webhook, verify_signature

logger = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Hub-Signature-256"
RETRY_AFTER_S = 5


@csrf_exempt
@require_http_methods(["GET", "POST"])
def whatsapp_webhook(request):
    """Answer Meta's subscription handshake, or store a signed webhook delivery and acknowledge it."""
    if request.method == "GET":
        return _handshake(request)
    return _delivery(request)


def _plain(text: str, status: int) -> HttpResponse:
    return HttpResponse(text, status=status, content_type="text/plain; charset=utf-8")


def _handshake(request) -> HttpResponse:
    expected = settings.WHATSAPP_VERIFY_TOKEN
    if not expected:
        logger.error("WhatsApp webhook handshake refused: WHATSAPP_VERIFY_TOKEN is not set.")
        return _plain("verify token not configured", 403)
    mode = request.GET.get("hub.mode", "")
    token = request.GET.get("hub.verify_token", "")
    if mode != "subscribe" or not hmac.compare_digest(token.encode(), expected.encode()):
        logger.warning("WhatsApp webhook handshake refused: wrong hub.mode or hub.verify_token.")
        return _plain("verification failed", 403)
    return _plain(request.GET.get("hub.challenge", ""), 200)


def _delivery(request) -> HttpResponse:
    app_secret = settings.WHATSAPP_APP_SECRET
    if not app_secret:
        # Never accept an unsigned body: anyone could inject messages that the bot answers.
        logger.error("WhatsApp webhook refused: WHATSAPP_APP_SECRET is not set, so the X-Hub-Signature-256 "
                     "of the delivery cannot be checked. Set it to the Meta app's secret.")
        return _plain("webhook app secret not configured", 403)
    header = request.headers.get(SIGNATURE_HEADER)
    if not header:
        logger.warning("WhatsApp webhook refused: no %s header.", SIGNATURE_HEADER)
        return _plain(f"missing {SIGNATURE_HEADER}", 401)
    if _declared_length(request) > MAX_BODY_BYTES:  # refused before a byte of it is read
        logger.warning("WhatsApp webhook refused: the body is larger than %s bytes.", MAX_BODY_BYTES)
        return _plain(f"body larger than {MAX_BODY_BYTES} bytes", 413)
    raw_body = request.body
    if not verify_signature(raw_body, header, app_secret):
        logger.warning("WhatsApp webhook refused: %s does not match the body.", SIGNATURE_HEADER)
        return _plain(f"invalid {SIGNATURE_HEADER}", 403)

    try:
        batch = read_webhook(raw_body)
    except BodyRefused as exc:
        # Signed by Meta yet unreadable as a whole: nothing in it can be stored, so say why.
        logger.warning("WhatsApp webhook refused: %s", exc)
        return _plain(str(exc), 400)
    for error in batch.errors:
        # Redelivery would not fix a malformed piece: log it, keep the rest, acknowledge.
        logger.warning("WhatsApp webhook: skipped %s", error)
    if batch.numbers_dropped:
        logger.warning("WhatsApp webhook: %d number literals (NaN, Infinity or too many digits) read as null",
                       batch.numbers_dropped)

    try:
        report = webhook_batch_store(batch=batch)
    except DatabaseUnavailable as exc:
        # Our fault and a passing one: Meta redelivers anything but a 200, so nothing of the body is lost.
        logger.warning("WhatsApp webhook: answered 503 so Meta delivers the body again (%s)", exc)
        response = _plain("the database is unavailable for a moment; deliver this again", 503)
        response["Retry-After"] = str(RETRY_AFTER_S)
        return response
    return JsonResponse({
        "stored": len(report.stored), "duplicates": len(report.duplicates), "queued": len(report.queued),
        "rejected": len(report.rejected) + len(batch.errors), "reopened": len(report.reopened),
        "statuses": {"applied": report.statuses_applied, "stale": report.statuses_stale,
                     "unknown": report.statuses_unknown},
    })


def _declared_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0
