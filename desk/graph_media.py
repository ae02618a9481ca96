"""Fetch a file a customer sent on WhatsApp: the Graph API's two-step media download. No Django.

`GET {base}/{media-id}` with the access token answers JSON with a short-lived `url` (about five minutes)
and the file's declared `mime_type` and `file_size`; `GET url` with the same token answers the bytes. The
bytes are read in chunks and the download stops as soon as it passes `max_bytes`, so an oversized file
never sits in memory whole. Every way it can fail raises `MediaUnavailable` with a sentence for the agent.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from desk.media_types import size_label


class MediaUnavailable(Exception):
    """The file could not be fetched; the message says why, in words an agent reads."""


@dataclass(frozen=True)
class MediaFile:
    content: bytes
    declared_type: str
    declared_size: int | None


def media_download(*, base_url: str, access_token: str, media_id: str, max_bytes: int, timeout_s: float,
                   client: httpx.Client | None = None) -> MediaFile:
    """Return the bytes of WhatsApp media `media_id`; raise MediaUnavailable with the reason."""
    own = client is None
    client = client or httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 5.0)))
    headers = {"Authorization": f"Bearer {access_token}"}
    try:
        meta = _media_url(client, f"{base_url.rstrip('/')}/{media_id}", headers=headers, timeout_s=timeout_s)
        declared_size = meta.get("file_size") if isinstance(meta.get("file_size"), int) else None
        if declared_size is not None and declared_size > max_bytes:
            raise MediaUnavailable(_too_large(declared_size, max_bytes))
        content = _bytes(client, str(meta["url"]), headers=headers, max_bytes=max_bytes, timeout_s=timeout_s)
        return MediaFile(content=content, declared_type=str(meta.get("mime_type") or ""),
                         declared_size=declared_size)
    finally:
        if own:
            client.close()


def _media_url(client: httpx.Client, url: str, *, headers: dict, timeout_s: float) -> dict:
    try:
        response = client.get(url, headers=headers)
    except httpx.TimeoutException:
        raise MediaUnavailable(f"WhatsApp did not answer within {timeout_s:g} s when asked where the file is; "
                               "try again.") from None
    except httpx.HTTPError as exc:
        raise MediaUnavailable(f"WhatsApp could not be reached to find the file ({type(exc).__name__}).") from None
    if response.status_code == 404 or _graph_code(response) == 100:
        raise MediaUnavailable("WhatsApp no longer has this file (media id not found, HTTP "
                               f"{response.status_code}): media expires about 30 days after it was sent; ask the "
                               "customer to send it again.")
    if response.status_code in (401, 403):
        raise MediaUnavailable(f"WhatsApp refused the access token (HTTP {response.status_code}): check "
                               "WHATSAPP_ACCESS_TOKEN.")
    if not response.is_success:
        raise MediaUnavailable(f"WhatsApp answered HTTP {response.status_code} when asked where the file is.")
    try:
        meta = response.json()
    except ValueError:
        meta = None
    if not isinstance(meta, dict) or not isinstance(meta.get("url"), str) or not meta["url"].startswith("http"):
        raise MediaUnavailable("WhatsApp's answer about the file had no download address.")
    return meta


def _bytes(client: httpx.Client, url: str, *, headers: dict, max_bytes: int, timeout_s: float) -> bytes:
    chunks, size = [], 0
    try:
        with client.stream("GET", url, headers=headers) as response:
            if response.status_code == 404:
                raise MediaUnavailable("The download address WhatsApp gave answered 404 (it lives about five "
                                       "minutes); try again.")
            if not response.is_success:
                raise MediaUnavailable(f"Downloading the file answered HTTP {response.status_code}.")
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > max_bytes:
                raise MediaUnavailable(_too_large(int(length), max_bytes))
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise MediaUnavailable(_too_large(size, max_bytes, at_least=True))
                chunks.append(chunk)
    except httpx.TimeoutException:
        raise MediaUnavailable(f"Downloading the file timed out after {timeout_s:g} s; try again.") from None
    except httpx.HTTPError as exc:
        raise MediaUnavailable(f"Downloading the file failed ({type(exc).__name__}); try again.") from None
    return b"".join(chunks)


def _too_large(size: int, max_bytes: int, *, at_least: bool = False) -> str:
    return (f"The file is {'over ' if at_least else ''}{size_label(size)}; the desk keeps files up to "
            f"{size_label(max_bytes)} (DESK_MEDIA_MAX_BYTES), so it was not downloaded.")


def _graph_code(response: httpx.Response) -> int | None:
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) and response.status_code >= 400 else None
