"""Parse knowledge-base files into sections and chunk them by section.

Pure: no Django. A chunk is what the retriever scores: the document title, the section's
heading path and the section text. A section longer than the embedder's window is split on
paragraph boundaries (then sentences, for a paragraph that alone is too long), and every
piece keeps the title + heading prefix so it still says what it is about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from kb.applicability import ATTRIBUTES, Audience, AudienceError, audience, parse_attributes

LANGUAGES = ("es", "en")
HEADING_SEPARATOR = " › "
MARKDOWN_SUFFIXES = {".md", ".markdown"}
HTML_SUFFIXES = {".html", ".htm"}
SUPPORTED_SUFFIXES = MARKDOWN_SUFFIXES | HTML_SUFFIXES


class MalformedDocument(ValueError):
    """A knowledge-base file that cannot be imported; the message names the file."""


@dataclass(frozen=True)
class ParsedSection:
    heading_path: str
    text: str
    # whom the section applies to: the document's audience, narrowed by attributes on its headings
    audience: Audience = Audience()


@dataclass(frozen=True)
class ParsedDocument:
    slug: str
    title: str
    language: str
    sections: list[ParsedSection] = field(default_factory=list)
    # Documents that answer the same question for another case (monthly / annual / trial plan), by slug,
    # and the short label that tells this one apart: the bot asks which one applies.
    alternatives: tuple[str, ...] = ()
    alternative_label: str = ""
    # whom the document applies to (front matter segment, plans, term); empty: everyone
    audience: Audience = Audience()


def parse_file(path: Path, text: str | None = None) -> ParsedDocument:
    """Parse a Markdown or HTML file; raise MalformedDocument naming the file when it cannot be read."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise MalformedDocument(f"{path}: unsupported file type {suffix!r} (use .md or .html)")
    try:
        raw = path.read_text(encoding="utf-8") if text is None else text
    except UnicodeDecodeError as exc:
        raise MalformedDocument(f"{path}: not UTF-8 text ({exc.reason})") from exc
    if suffix in MARKDOWN_SUFFIXES:
        return parse_markdown(raw, source=str(path), default_slug=path.stem)
    return parse_html(raw, source=str(path), default_slug=path.stem)


_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.S)
_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*$")
# `## Heading {segment=business plans=E500,E1000}`: braces holding key=value pairs at the end of a heading
_HEADING_ATTRIBUTES = re.compile(r"\s*\{([^{}]*=[^{}]*)\}\s*$")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def _refuse_nul(raw: str, source: str) -> None:
    """Raise MalformedDocument when the text holds a NUL character: PostgreSQL cannot store one."""
    if "\x00" in raw:
        line = raw.count("\n", 0, raw.index("\x00")) + 1
        raise MalformedDocument(f"{source}: contains a NUL character (line {line}); is it a text file?")


def parse_markdown(raw: str, *, source: str, default_slug: str) -> ParsedDocument:
    """Parse front matter (slug, title, language, alternatives, alternative_label, segment, plans, term),
    a `#` title and sections (a heading may narrow whom its section applies to: `## … {segment=business}`)."""
    _refuse_nul(raw, source)
    meta: dict = {}
    body = raw
    body_line = 0  # lines before the body (the front matter's)
    match = _FRONT_MATTER.match(raw)
    if match:
        try:
            meta = yaml.safe_load(match.group(1)) or {}
        except yaml.YAMLError as exc:
            raise MalformedDocument(f"{source}: front matter is not valid YAML ({exc})") from exc
        if not isinstance(meta, dict):
            raise MalformedDocument(f"{source}: front matter must be key: value pairs")
        body = raw[match.end():]
        body_line = raw.count("\n", 0, match.end())
    elif raw.lstrip().startswith("---"):
        raise MalformedDocument(f"{source}: front matter opened with --- but never closed")
    whole = _front_audience(meta, source=source, line_of=lambda key: _front_matter_line(match, key))

    title = None
    headings: list[str] = []  # [h2, h3]
    h2_audience = whole  # what the current ## heading says, inherited by its ### sections
    current = whole
    sections: list[ParsedSection] = []
    lines: list[str] = []
    in_fence = False

    def flush():
        _section_close(sections, headings, "\n".join(lines), meta.get("title") or title, current)
        lines.clear()

    for number, line in enumerate(body.splitlines(), start=body_line + 1):
        if line.strip().startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading is None:
            lines.append(line)
            continue
        level, name = len(heading.group(1)), heading.group(2).strip()
        flush()
        name, own = _heading_audience(name, source=source, line=number, level=level)
        if level == 1:
            if title is None:
                title = name
            continue
        if level == 2:
            h2_audience = current = _narrowed(whole, own, source=source, line=number)
        else:
            current = _narrowed(h2_audience if headings else whole, own, source=source, line=number)
        headings = [name] if level == 2 else (headings[:1] or [title or ""]) + [name]

    flush()
    return _validated(meta, title, sections, source=source, default_slug=default_slug, audience=whole)


def _front_matter_line(match, key: str) -> int | None:
    """Return the file line of `key:` in the front matter (line 1 is the opening ---), or None."""
    if match is None:
        return None
    for number, line in enumerate(match.group(1).splitlines(), start=2):
        if re.match(rf"{re.escape(key)}\s*:", line):
            return number
    return None


def _at(source: str, line: int | None) -> str:
    return f"{source}: line {line}" if line else source


def _front_audience(meta: dict, *, source: str, line_of) -> Audience:
    """Return the document's audience from front matter or meta tags; refuse a bad value naming file and line."""
    try:
        return audience(**{key: meta.get(key) for key in ATTRIBUTES})
    except AudienceError as exc:
        raise MalformedDocument(f"{_at(source, line_of(exc.field))}: {exc}") from exc


def _heading_audience(name: str, *, source: str, line: int | None, level: int) -> tuple[str, Audience]:
    """Split `Heading {segment=business}` into the heading and the audience its attributes say."""
    found = _HEADING_ATTRIBUTES.search(name)
    if found is None:
        return name, Audience()
    if level == 1:
        raise MalformedDocument(f"{_at(source, line)}: say whom the whole document applies to in the front matter "
                                f"(segment, plans, term), not on its title")
    try:
        return name[:found.start()].strip(), parse_attributes(found.group(1))
    except AudienceError as exc:
        raise MalformedDocument(f"{_at(source, line)}: {exc}") from exc


def _narrowed(outer: Audience, own: Audience, *, source: str, line: int | None) -> Audience:
    try:
        return outer.narrowed(own)
    except AudienceError as exc:
        raise MalformedDocument(f"{_at(source, line)}: {exc}") from exc


def parse_html(raw: str, *, source: str, default_slug: str) -> ParsedDocument:
    """Parse an HTML page: <h1> title, <h2>/<h3> sections, language from <html lang>."""
    _refuse_nul(raw, source)
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(raw, "html.parser")
    meta = {}
    lines: dict[str, int | None] = {}
    html = soup.find("html")
    if html is not None and html.get("lang"):
        meta["language"] = html["lang"].split("-")[0].lower()
    for tag in soup.find_all("meta"):
        if tag.get("name") in {"slug", "title", "language", "alternatives", "alternative_label", *ATTRIBUTES} \
                and tag.get("content"):
            meta[tag["name"]] = tag["content"].strip()
            lines[tag["name"]] = tag.sourceline
    whole = _front_audience(meta, source=source, line_of=lines.get)
    h2_audience = current = whole
    h1 = soup.find("h1")
    title = h1.get_text(" ", strip=True) if h1 else None
    if not title and soup.title:
        title = soup.title.get_text(" ", strip=True)

    sections: list[ParsedSection] = []
    headings: list[str] = []
    paragraphs: list[str] = []

    def flush():
        _section_close(sections, headings, "\n\n".join(paragraphs), meta.get("title") or title, current)
        paragraphs.clear()

    root = soup.body or soup
    for element in root.find_all(["h1", "h2", "h3", "p", "li", "td", "pre"]):
        if element.name in {"h1", "h2", "h3"}:
            flush()
            name = element.get_text(" ", strip=True)
            own = _data_audience(element, source=source)  # <h2 data-segment="business">
            if element.name == "h2":
                headings = [name]
                h2_audience = current = _narrowed(whole, own, source=source, line=element.sourceline)
            elif element.name == "h3":
                current = _narrowed(h2_audience if headings else whole, own, source=source, line=element.sourceline)
                headings = (headings[:1] or [title or ""]) + [name]
            continue
        if element.find_parent(["li", "td"]) is not None and element.name != "li":
            continue
        text = element.get_text(" ", strip=True)
        if text:
            paragraphs.append(("- " if element.name == "li" else "") + text)
    flush()
    return _validated(meta, title, sections, source=source, default_slug=default_slug, audience=whole)


def _data_audience(element, *, source: str) -> Audience:
    """Return the audience an HTML heading's data-segment / data-plans / data-term attributes say."""
    values = {key: element.get(f"data-{key}") for key in ATTRIBUTES if element.get(f"data-{key}") is not None}
    try:
        return audience(**values)
    except AudienceError as exc:
        raise MalformedDocument(f"{_at(source, element.sourceline)}: {exc}") from exc


def _section_close(sections: list[ParsedSection], headings: list[str], raw: str, title: str | None,
                   section_audience: Audience = Audience()) -> None:
    """Append the text gathered under the current headings as a section (text before any ## uses the title)."""
    text = _clean(raw)
    if text:
        path = HEADING_SEPARATOR.join(headings) if headings else (title or "")
        sections.append(ParsedSection(heading_path=path, text=text, audience=section_audience))


def _clean(text: str) -> str:
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _validated(meta, title, sections, *, source, default_slug, audience: Audience = Audience()) -> ParsedDocument:
    title = str(meta.get("title") or title or "").strip()
    if not title:
        raise MalformedDocument(f"{source}: no title (front matter `title` or a `#` heading)")
    language = str(meta.get("language") or "").strip().lower()
    if language not in LANGUAGES:
        raise MalformedDocument(
            f"{source}: language must be one of {', '.join(LANGUAGES)} (got {language or 'nothing'!r})"
        )
    slug = str(meta.get("slug") or default_slug).strip().lower()
    if not _SLUG.match(slug):
        raise MalformedDocument(f"{source}: slug {slug!r} may only hold a-z, 0-9, '-' and '_'")
    if not sections:
        raise MalformedDocument(f"{source}: no section text under the title")
    alternatives = meta.get("alternatives") or []
    if isinstance(alternatives, str):  # `alternatives: a, b` (or an HTML meta tag) as well as a YAML list
        alternatives = [part for part in alternatives.split(",") if part.strip()]
    if not isinstance(alternatives, list):
        raise MalformedDocument(f"{source}: alternatives must be a list of document slugs")
    alternatives = tuple(dict.fromkeys(str(a).strip().lower() for a in alternatives))
    for alternative in alternatives:
        if not _SLUG.match(alternative) or alternative == slug:
            raise MalformedDocument(f"{source}: alternative {alternative!r} is not another document's slug")
    label = " ".join(str(meta.get("alternative_label") or "").split())
    if alternatives and not label:
        raise MalformedDocument(f"{source}: a document with alternatives needs an alternative_label "
                                "(e.g. \"plan anual\") for the bot to offer")
    return ParsedDocument(slug=slug, title=title, language=language, sections=sections,
                          alternatives=alternatives, alternative_label=label, audience=audience)


def chunk_prefix(title: str, heading_path: str) -> str:
    """Return the prefix every chunk of a section starts with."""
    if heading_path and heading_path != title:
        return f"{title}\n{heading_path}\n\n"
    return f"{title}\n\n"


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def chunk_section(
    title: str,
    heading_path: str,
    text: str,
    *,
    count_tokens: Callable[[str], int],
    max_tokens: int,
) -> list[str]:
    """Return the chunk texts of one section: one when it fits, else paragraph-aligned pieces."""
    prefix = chunk_prefix(title, heading_path)
    whole = prefix + text
    if count_tokens(whole) <= max_tokens:
        return [whole]
    budget = max_tokens - count_tokens(prefix)
    units: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if count_tokens(paragraph) <= budget:
            units.append(paragraph)
        else:
            units.extend(s for s in _SENTENCE_END.split(paragraph) if s.strip())
    pieces: list[str] = []
    current: list[str] = []
    for unit in units:
        candidate = "\n\n".join(current + [unit])
        if current and count_tokens(candidate) > budget:
            pieces.append("\n\n".join(current))
            current = [unit]
        else:
            current.append(unit)
    if current:
        pieces.append("\n\n".join(current))
    return [prefix + piece for piece in pieces]


def section_hash(title: str, heading_path: str, text: str, audience: Audience = Audience()) -> str:
    """Return the identity of a section's content: equal hashes give equal chunk texts (title is in every prefix)
    for the same customers (a section whose audience changes is a changed section; one for everyone hashes as
    it always did)."""
    import hashlib

    whom = f"\x1f{audience.attributes()}" if audience else ""
    return hashlib.sha256(f"{title}\x1f{heading_path}\x1f{text}{whom}".encode("utf-8")).hexdigest()


def render_markdown(document: ParsedDocument) -> str:
    """Return a Markdown source that parses back to the same document (for HTML imports and legacy rows)."""
    lines = ["---", f"slug: {document.slug}", f"title: {_yaml_scalar(document.title)}",
             f"language: {document.language}"]
    if document.alternatives:
        lines += [f"alternatives: [{', '.join(document.alternatives)}]",
                  f"alternative_label: {_yaml_scalar(document.alternative_label)}"]
    whole = document.audience
    lines += [f"segment: {whole.segment}"] if whole.segment else []
    lines += [f"plans: [{', '.join(whole.plans)}]"] if whole.plans else []
    lines += [f"term: {whole.term}"] if whole.term else []
    lines += ["---", f"# {document.title}", ""]
    current_h2 = None
    for section in document.sections:
        parts = section.heading_path.split(HEADING_SEPARATOR) if section.heading_path != document.title else []
        # A section narrower than its document says so on its own heading (the ## of a ### says nothing).
        own = section.audience.attributes() if section.audience != whole else ""
        own = f" {{{own}}}" if own else ""
        if len(parts) >= 2:
            if parts[0] != current_h2:
                lines += [f"## {parts[0]}", ""]
                current_h2 = parts[0]
            lines += [f"### {HEADING_SEPARATOR.join(parts[1:])}{own}", ""]
        elif parts:
            lines += [f"## {parts[0]}{own}", ""]
            current_h2 = parts[0]
        lines += [section.text, ""]
    return "\n".join(lines).rstrip() + "\n"


def _yaml_scalar(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False) if re.search(r"[:#\"'\[\]{}]|^\s|\s$", text) else text
