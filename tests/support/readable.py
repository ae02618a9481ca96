"""What a page's reader sees, and a check that no raw dict, list or Python constant reached it."""

import re
from html import unescape

# What a dict or list printed by a template looks like, escaped or not: {'ok': True}, [7, 9], {&#x27;notes…
RAW_DATA = re.compile(r"\{'|\['|\{\"\w+\": |'\w+': |\[\d+(, \d+)*\]|\bTrue\b|\bFalse\b|\bNone\b")


def visible_text(html: str) -> str:
    """Return what a reader sees: the page without tags, attributes (tooltips hold codes), scripts and styles."""
    body = re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", body)).split())


def assert_readable(html: str) -> None:
    text = visible_text(html)
    raw = RAW_DATA.search(text)
    assert raw is None, f"raw data on the page: …{text[max(0, raw.start() - 80):raw.end() + 80]}…"
