
import pytest

from kb.chunking import (
    MalformedDocument,
    chunk_section,
    parse_file,
    parse_html,
    parse_markdown,
    render_markdown,
)

DOC = """---
slug: recargos
title: Recargos por mora
language: es
---
# Recargos por mora

Introducción breve.

## Cuándo se aplica
Después de 5 días de gracia.

### Empresas
USD 3,00 fijos.

## Cómo se calcula
El 5% del saldo.
"""


def test_markdown_sections_carry_their_heading_path():
    doc = parse_markdown(DOC, source="recargos.md", default_slug="x")
    assert (doc.slug, doc.title, doc.language) == ("recargos", "Recargos por mora", "es")
    assert [s.heading_path for s in doc.sections] == [
        "Recargos por mora",
        "Cuándo se aplica",
        "Cuándo se aplica › Empresas",
        "Cómo se calcula",
    ]
    assert doc.sections[2].text == "USD 3,00 fijos."


def test_slug_defaults_to_the_file_stem(tmp_path):
    path = tmp_path / "mi-doc.md"
    path.write_text("---\nlanguage: en\n---\n# Title\n\n## A\ntext\n", encoding="utf-8")
    assert parse_file(path).slug == "mi-doc"


@pytest.mark.parametrize(
    "raw, message",
    [
        ("---\nlanguage: es\n# no end", "never closed"),
        ("---\n: [\n---\n# T\n## A\nx", "not valid YAML"),
        ("---\nlanguage: fr\n---\n# T\n## A\nx", "language must be"),
        ("---\nlanguage: es\n---\n## A\nx", "no title"),
        ("---\nlanguage: es\n---\n# T\n", "no section text"),
        ("---\nlanguage: es\nslug: Bad Slug\n---\n# T\n## A\nx", "slug"),
        ("---\n- a\n- b\n---\n# T\n## A\nx", "key: value"),
        ("---\nlanguage: es\nalternatives: [otro]\n---\n# T\n## A\nx", "needs an alternative_label"),
        ("---\nlanguage: es\nalternatives: {a: b}\nalternative_label: x\n---\n# T\n## A\nx",
         "list of document slugs"),
        ("---\nlanguage: es\nalternatives: [Otro Doc]\nalternative_label: x\n---\n# T\n## A\nx",
         "is not another document's slug"),
        ("---\nslug: broken\nlanguage: es\nalternatives: [broken]\nalternative_label: x\n---\n# T\n## A\nx",
         "is not another document's slug"),
    ],
)
def test_malformed_markdown_is_refused_naming_the_file(raw, message):
    with pytest.raises(MalformedDocument) as error:
        parse_markdown(raw, source="kb/broken.md", default_slug="broken")
    assert "kb/broken.md" in str(error.value) and message in str(error.value)


def test_unsupported_and_undecodable_files_are_refused(tmp_path):
    txt = tmp_path / "a.txt"
    txt.write_text("x")
    with pytest.raises(MalformedDocument, match="unsupported"):
        parse_file(txt)
    bad = tmp_path / "b.md"
    bad.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(MalformedDocument, match="UTF-8"):
        parse_file(bad)


def test_html_uses_h1_title_h2_h3_sections_and_lang():
    html = """<html lang="en"><head><meta name="slug" content="fees"></head><body>
    <h1>Fees</h1><h2>Reconnection</h2><p>USD 10.00 per reconnection.</p>
    <h3>Business</h3><ul><li>USD 12.00</li></ul><h2>Visits</h2><p>USD 15.00.</p></body></html>"""
    doc = parse_html(html, source="fees.html", default_slug="x")
    assert (doc.slug, doc.title, doc.language) == ("fees", "Fees", "en")
    assert [s.heading_path for s in doc.sections] == ["Reconnection", "Reconnection › Business", "Visits"]
    assert doc.sections[1].text == "- USD 12.00"


def words(text):
    return len(text.split())


def test_a_short_section_is_one_chunk_with_title_and_heading():
    [chunk] = chunk_section("Refunds", "Annual plan", "Full refund within 14 days.", count_tokens=words,
                            max_tokens=50)
    assert chunk == "Refunds\nAnnual plan\n\nFull refund within 14 days."


def test_a_long_section_splits_on_paragraphs_and_every_piece_keeps_the_prefix():
    paragraphs = [f"Paragraph {i} " + "word " * 20 for i in range(6)]
    pieces = chunk_section("Refunds", "Annual plan", "\n\n".join(paragraphs), count_tokens=words, max_tokens=60)
    assert len(pieces) == 3
    for piece in pieces:
        assert piece.startswith("Refunds\nAnnual plan\n\n")
        assert words(piece) <= 60
    body = "\n\n".join(p.split("\n\n", 1)[1] for p in pieces)
    assert body.replace("\n\n", " ").split() == "\n\n".join(paragraphs).replace("\n\n", " ").split()


def test_a_paragraph_longer_than_the_window_splits_on_sentences():
    paragraph = " ".join(f"Sentence {i} has five words." for i in range(20))
    pieces = chunk_section("T", "H", paragraph, count_tokens=words, max_tokens=30)
    assert len(pieces) > 1
    assert all(words(p) <= 30 for p in pieces)
    assert all(p.rstrip().endswith(".") for p in pieces)


SIBLING = """---
slug: reembolso-anual
title: Reembolso del plan anual
language: es
alternatives: [reembolso-prueba, cancelacion]
alternative_label: "plan   anual"
---
# Reembolso del plan anual

## Plazo
Catorce días.
"""


def test_front_matter_marks_a_document_as_an_alternative_of_its_siblings():
    doc = parse_markdown(SIBLING, source="x.md", default_slug="x")
    assert (doc.alternatives, doc.alternative_label) == (("reembolso-prueba", "cancelacion"), "plan anual")
    again = parse_markdown(render_markdown(doc), source="x.md", default_slug="x")
    assert (again.alternatives, again.alternative_label) == (doc.alternatives, doc.alternative_label)
    commas = parse_markdown(SIBLING.replace("[reembolso-prueba, cancelacion]", "reembolso-prueba, cancelacion"),
                            source="x.md", default_slug="x")
    assert commas.alternatives == ("reembolso-prueba", "cancelacion")
    assert parse_markdown(DOC, source="r.md", default_slug="x").alternatives == ()


def test_html_meta_tags_carry_alternatives_too():
    html = ('<html lang="en"><head><meta name="alternatives" content="trial-refund-en">'
            '<meta name="alternative_label" content="annual plan"></head><body><h1>Annual refunds</h1>'
            '<h2>Within 14 days</h2><p>All of it.</p></body></html>')
    doc = parse_html(html, source="a.html", default_slug="annual")
    assert (doc.alternatives, doc.alternative_label) == (("trial-refund-en",), "annual plan")


MIXED = """---
slug: suspension
title: Suspensión por falta de pago
language: es
segment: {segment}
---
# Suspensión por falta de pago

Lo que vale para todos.

## Calendario de hogares {{segment=home}}
Al día 15.

### Plan Fibra 100 {{plans=F100}}
Igual.

## Calendario de empresas {{segment=business}}
Al día 30.
"""


def test_front_matter_and_headings_say_whom_a_document_and_its_sections_apply_to():
    from kb.applicability import Audience

    doc = parse_markdown(MIXED.format(segment="''"), source="s.md", default_slug="s")  # empty: everyone
    assert doc.audience == Audience()
    assert [(s.heading_path, s.audience) for s in doc.sections] == [
        ("Suspensión por falta de pago", Audience()),
        ("Calendario de hogares", Audience(segment="home")),  # the heading's attributes are not its name
        ("Calendario de hogares › Plan Fibra 100", Audience(segment="home", plans=("F100",))),  # inherits its ##
        ("Calendario de empresas", Audience(segment="business")),
    ]
    again = parse_markdown(render_markdown(doc), source="s.md", default_slug="s")
    assert again.sections == doc.sections and again.audience == doc.audience
    annual = parse_markdown(SIBLING.replace("---\n#", "segment: home\nplans: [fibra]\nterm: annual\n---\n#"),
                            source="x.md", default_slug="x")
    assert annual.audience == Audience(segment="home", plans=("fibra",), term="annual")
    assert annual.sections[0].audience == annual.audience
    assert parse_markdown(render_markdown(annual), source="x.md", default_slug="x") == annual


@pytest.mark.parametrize("raw, message", [
    (MIXED.format(segment="hogar"), "kb/s.md: line 5: segment must be one of home, business (got 'hogar')"),
    (MIXED.format(segment="home"), "kb/s.md: line 17: segment business contradicts the document's (home)"),
    (MIXED.format(segment="''").replace("{plans=F100}", "{plans=E500}"), "kb/s.md: line 14: plan E500 is not a home plan"),
    (MIXED.format(segment="''").replace("{plans=F100}", "{plan=F100}"),
     "kb/s.md: line 14: unknown heading attribute 'plan=F100' (use segment, plans, term)"),
    (MIXED.format(segment="''").replace("segment: ''", "plans: [F200]"), "kb/s.md: line 5: plan 'F200' is neither"),
    (MIXED.format(segment="''").replace("segment: ''", "term: yearly"), "kb/s.md: line 5: term must be one of"),
    (MIXED.format(segment="''").replace("# Suspensión por falta de pago\n", "# Suspensión {segment=home}\n"),
     "kb/s.md: line 7: say whom the whole document applies to in the front matter"),
])
def test_a_bad_audience_is_refused_naming_the_file_and_line(raw, message):
    with pytest.raises(MalformedDocument) as error:
        parse_markdown(raw, source="kb/s.md", default_slug="s")
    assert message in str(error.value)


def test_html_says_whom_it_applies_to_in_meta_tags_and_heading_data_attributes():
    from kb.applicability import Audience

    html = ('<html lang="es"><head><meta name="segment" content="home">\n<meta name="plans" content="fibra, HB30">'
            '</head><body><h1>Reconexión</h1><h2>Costo</h2><p>Bs. 350,00.</p>'
            '<h2 data-plans="F100">Fibra 100</h2><p>Igual.</p></body></html>')
    doc = parse_html(html, source="r.html", default_slug="r")
    assert doc.audience == Audience(segment="home", plans=("fibra", "HB30"))
    assert [s.audience for s in doc.sections] == [doc.audience, Audience(segment="home", plans=("F100",))]
    assert parse_markdown(render_markdown(doc), source="r.md", default_slug="r").sections == doc.sections
    with pytest.raises(MalformedDocument, match=r"r.html: line 2: plan 'X1' is neither"):
        parse_html(html.replace("fibra, HB30", "X1"), source="r.html", default_slug="r")
    with pytest.raises(MalformedDocument, match=r"r.html: line 2: plan E500 is outside"):
        parse_html(html.replace('data-plans="F100"', 'data-plans="E500"'), source="r.html", default_slug="r")
