"""One way to ask an OpenAI-compatible server for a JSON-schema structured answer (writer and judge)."""

from __future__ import annotations


class ModelCallError(Exception):
    """The server failed, timed out or refused the request."""


def openai_client(*, api_key: str, base_url: str | None, timeout: float):
    """Return an `openai` client that makes one attempt per call: callers decide about retrying."""
    from openai import OpenAI

    return OpenAI(api_key=api_key or "not-needed", base_url=base_url or None, timeout=timeout, max_retries=0)


def structured_completion(client, *, model: str, messages: list[dict], schema_name: str,
                          schema: dict) -> tuple[str, dict]:
    """Return the raw content of the first choice and the token usage; raise ModelCallError on failure."""
    from openai import OpenAIError

    try:
        completion = client.chat.completions.create(
            model=model,
            messages=messages,
            temperature=0,
            response_format={"type": "json_schema",
                             "json_schema": {"name": schema_name, "strict": True, "schema": schema}},
        )
    except OpenAIError as exc:
        raise ModelCallError(f"{type(exc).__name__}: {exc}") from exc
    choice = completion.choices[0] if completion.choices else None
    usage = completion.usage.model_dump() if completion.usage else {}
    return ((choice.message.content or "") if choice else ""), usage
