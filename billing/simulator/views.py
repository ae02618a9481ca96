"""Thin Django adapter: serve the WSGI simulator under /sim/billing/."""

from __future__ import annotations

import io
import json

from django.conf import settings
from django.http import HttpResponse
from django.views.decorators.csrf import csrf_exempt

from billing.simulator.app import SimulatedReset, SimulatedTimeout
from billing.simulator.mounted import shared_simulator

PREFIX = "/sim/billing"
HOP_BY_HOP = {"content-length", "connection", "transfer-encoding"}


def json_error(status: int, code: str, message: str) -> HttpResponse:
    """Answer an error in the contract's shape."""
    payload = {"error": {"code": code, "message": message}}
    return HttpResponse(json.dumps(payload), status=status, content_type="application/json")


@csrf_exempt
def simulator(request, subpath: str = ""):
    """Hand the request to the simulator app and return its answer unchanged."""
    if subpath == "_sim/fault" and not settings.BILLING_SIM_FAULTS_ENABLED:
        # The switch breaks billing for every turn of this process: off where users are.
        return json_error(403, "forbidden", "the simulator's fault switch is off (BILLING_SIM_FAULTS_ENABLED)")
    environ = dict(request.environ)
    body = request.body
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    environ["SCRIPT_NAME"] = request.META.get("SCRIPT_NAME", "") + PREFIX
    environ["PATH_INFO"] = "/" + subpath
    captured: dict = {}

    def start_response(status, headers, exc_info=None):
        captured["status"], captured["headers"] = status, headers
        return lambda data: None

    try:
        result = shared_simulator()(environ, start_response)
        content = b"".join(result)
    except (SimulatedReset, SimulatedTimeout) as exc:
        # Django cannot abort the client's TCP connection portably; the closest honest answer is a
        # body-less gateway error. Run the simulator standalone for a real reset.
        return json_error(502, "internal_error", f"{exc} (mounted in Django: answered 502)")
    response = HttpResponse(content, status=int(captured["status"].split()[0]))
    for name, value in captured["headers"]:
        if name.lower() not in HOP_BY_HOP:
            response[name] = value
    return response
