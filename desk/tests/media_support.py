"""Files of the desk's media tests: real image bytes, a storage of their own, the fake Graph API wired in."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tests.support.fake_graph import FakeGraph

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
OGG = b"OggS\x00\x02" + b"\x00" * 40
ZIP = b"PK\x03\x04" + b"\x00" * 60


def image_bytes(fmt: str = "JPEG", size=(1200, 800), color=(200, 40, 40)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format=fmt)
    return out.getvalue()


@pytest.fixture
def media_storage(settings, tmp_path):
    """Keep the test's files in a directory of their own."""
    settings.STORAGES = {**settings.STORAGES, "desk_media": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path)}}}
    return tmp_path


@pytest.fixture
def graph(settings, media_storage):
    with FakeGraph() as fake:
        settings.WHATSAPP_API_BASE_URL = fake.base_url
        settings.WHATSAPP_ACCESS_TOKEN = fake.access_token
        settings.WHATSAPP_PHONE_NUMBER_ID = fake.phone_number_id
        settings.DESK_MEDIA_TIMEOUT_S = 2.0
        yield fake
