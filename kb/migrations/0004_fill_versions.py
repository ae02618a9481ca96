"""Give documents imported before versions existed their Markdown source, a first version and section hashes."""

import hashlib

from django.db import migrations


def fill(apps, schema_editor):
    from kb.chunking import ParsedDocument, ParsedSection, render_markdown, section_hash

    Document = apps.get_model("kb", "Document")
    DocumentVersion = apps.get_model("kb", "DocumentVersion")
    Section = apps.get_model("kb", "Section")
    EmbeddingSpace = apps.get_model("kb", "EmbeddingSpace")
    space = EmbeddingSpace.objects.first()
    for document in Document.objects.all():
        sections = list(Section.objects.filter(document=document).order_by("order"))
        for section in sections:
            section.content_hash = section_hash(document.title, section.heading_path, section.text)
        Section.objects.bulk_update(sections, ["content_hash"])
        if document.source:
            continue
        source = render_markdown(ParsedDocument(document.slug, document.title, document.language,
                                                [ParsedSection(s.heading_path, s.text) for s in sections]))
        document.source = source
        document.content_hash = hashlib.sha256(source.encode("utf-8")).hexdigest()
        document.save(update_fields=["source", "content_hash"])
        DocumentVersion.objects.get_or_create(
            document=document, number=document.version,
            defaults={"kind": "import", "title": document.title, "language": document.language, "source": source,
                      "content_hash": document.content_hash,
                      "index_version": space.index_version if space else None,
                      "note": "recorded when versions were introduced"})


class Migration(migrations.Migration):
    dependencies = [("kb", "0003_db_defaults")]
    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
