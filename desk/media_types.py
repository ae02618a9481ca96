"""What a file is, read from its first bytes, and whether the desk keeps it. Pure: no Django.

The name and the declared MIME type of a file are the sender's word; the first bytes (the format's "magic
number") are the file's. Only the types below are kept: the images, voice notes, videos and PDFs WhatsApp
carries. Anything else — a ZIP, an Office file, an executable, HTML — is refused, whatever it calls itself.
"""

from __future__ import annotations

from dataclasses import dataclass

HEAD_BYTES = 32  # enough for every signature below


@dataclass(frozen=True)
class FileType:
    mime: str
    label: str
    extension: str
    is_image: bool = False


TYPES = {
    "image/jpeg": FileType("image/jpeg", "JPEG image", "jpg", True),
    "image/png": FileType("image/png", "PNG image", "png", True),
    "image/webp": FileType("image/webp", "WebP image", "webp", True),
    "application/pdf": FileType("application/pdf", "PDF document", "pdf"),
    "audio/ogg": FileType("audio/ogg", "OGG/Opus audio", "ogg"),
    "audio/mpeg": FileType("audio/mpeg", "MP3 audio", "mp3"),
    "audio/mp4": FileType("audio/mp4", "M4A audio", "m4a"),
    "audio/aac": FileType("audio/aac", "AAC audio", "aac"),
    "audio/amr": FileType("audio/amr", "AMR audio", "amr"),
    "video/mp4": FileType("video/mp4", "MP4 video", "mp4"),
    "video/3gpp": FileType("video/3gpp", "3GPP video", "3gp"),
}
# What an agent may attach to a reply.
OUTGOING = frozenset({"image/jpeg", "image/png", "application/pdf"})

# Recognised, named in the refusal, never kept.
_REFUSED_SIGNATURES = [
    (b"PK\x03\x04", "a ZIP archive (or an Office file)"),
    (b"MZ", "a Windows program"),
    (b"\x7fELF", "a Linux program"),
    (b"GIF8", "a GIF image"),
    (b"<", "HTML or XML text"),
    (b"\xd0\xcf\x11\xe0", "an old Office file"),
]


def sniff(head: bytes) -> FileType | None:
    """Return the allowed type the first bytes prove, or None."""
    if head.startswith(b"\xff\xd8\xff"):
        return TYPES["image/jpeg"]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return TYPES["image/png"]
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return TYPES["image/webp"]
    if head.startswith(b"%PDF-"):
        return TYPES["application/pdf"]
    if head.startswith(b"OggS"):
        return TYPES["audio/ogg"]
    if head.startswith(b"#!AMR"):
        return TYPES["audio/amr"]
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] in (0xFB, 0xF3, 0xF2)):
        return TYPES["audio/mpeg"]
    if len(head) > 1 and head[0] == 0xFF and head[1] in (0xF1, 0xF9):
        return TYPES["audio/aac"]
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in (b"M4A ", b"M4B "):
            return TYPES["audio/mp4"]
        if brand.startswith(b"3gp") or brand.startswith(b"3g2"):
            return TYPES["video/3gpp"]
        return TYPES["video/mp4"]
    return None


def refused_as(head: bytes) -> str:
    """Return what the first bytes look like, for the refusal ('an unknown type' when nothing matches)."""
    for signature, label in _REFUSED_SIGNATURES:
        if head.lstrip()[: len(signature)] == signature if signature == b"<" else head.startswith(signature):
            return label
    return "an unknown type"


def allowed_labels() -> str:
    """Return the allowed types in words, for a refusal."""
    return ", ".join(t.label for t in TYPES.values())


def size_label(size: int) -> str:
    """Return a byte count as people read it (`16 MB`, `512 KB`)."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB".replace(".0 MB", " MB")
    if size >= 1024:
        return f"{size // 1024} KB"
    return f"{size} bytes"
