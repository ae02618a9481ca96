"""Knowledge base: documents → sections → chunks with embeddings, full-text vectors and identifiers."""

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Case, F, Func, Value, When
from pgvector.django import HnswIndex, VectorField

LANGUAGES = [("es", "Español"), ("en", "English")]
TEXT_SEARCH_CONFIG = {"es": "spanish", "en": "english"}
EMBEDDING_DIM = 384


class ToTsVector(Func):
    function = "to_tsvector"
    output_field = SearchVectorField()


class RegConfig(Func):
    """A constant text-search configuration (folds to a constant, so generated columns accept it)."""

    template = "%(expressions)s::regconfig"
    output_field = models.TextField()


# Accents are folded before stemming so "reconexion" finds "reconexión" (subscribers type without
# them). translate() is immutable, so generated columns accept it; ñ is kept ("año" is not "ano").
ACCENTED = "áéíóúüÁÉÍÓÚÜàèìòùÀÈÌÒÙ"
UNACCENTED = "aeiouuAEIOUUaeiouAEIOU"


class FoldAccents(Func):
    function = "translate"
    output_field = models.TextField()

    def __init__(self, expression, **extra):
        super().__init__(expression, Value(ACCENTED), Value(UNACCENTED), **extra)


class Document(models.Model):
    slug = models.SlugField(max_length=120, unique=True)
    title = models.CharField(max_length=300)
    language = models.CharField(max_length=2, choices=LANGUAGES)
    source_path = models.CharField(max_length=500, blank=True)
    content_hash = models.CharField(max_length=64)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.slug


class Section(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="sections")
    order = models.PositiveIntegerField()
    heading_path = models.CharField(max_length=500, help_text="Headings from ## down, joined with ' › '.")
    text = models.TextField()

    class Meta:
        ordering = ["document", "order"]
        constraints = [models.UniqueConstraint(fields=["document", "order"], name="kb_section_order_unique")]

    def __str__(self):
        return f"{self.document.slug} § {self.heading_path}"


class Chunk(models.Model):
    """The unit the retriever scores: document title + heading path + (a piece of) the section text."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    section = models.ForeignKey(Section, on_delete=models.CASCADE, related_name="chunks")
    piece = models.PositiveIntegerField(default=0, help_text="Index of this piece when a long section is split.")
    language = models.CharField(max_length=2, choices=LANGUAGES)
    text = models.TextField()
    content_hash = models.CharField(max_length=64, db_index=True)
    embedding = VectorField(dimensions=EMBEDDING_DIM, null=True)
    identifiers = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    search_vector = models.GeneratedField(
        expression=ToTsVector(
            Case(
                When(language="es", then=RegConfig(Value("spanish"))),
                default=RegConfig(Value("english")),
            ),
            FoldAccents(F("text")),
        ),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    search_vector_simple = models.GeneratedField(
        expression=ToTsVector(RegConfig(Value("simple")), FoldAccents(F("text"))),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        ordering = ["document", "section__order", "piece"]
        indexes = [
            HnswIndex(
                name="kb_chunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            GinIndex(fields=["search_vector"], name="kb_chunk_tsv_gin"),
            GinIndex(fields=["search_vector_simple"], name="kb_chunk_tsv_simple_gin"),
            GinIndex(fields=["identifiers"], name="kb_chunk_identifiers_gin"),
        ]

    def __str__(self):
        return f"chunk {self.pk} of {self.document.slug}"


class EmbeddingSpace(models.Model):
    """The embedding model the stored vectors came from; one row. Vectors of two models never mix."""

    model_name = models.CharField(max_length=200)
    dimensions = models.PositiveIntegerField()
    index_version = models.PositiveIntegerField(default=1, help_text="Bumped on every change to chunks.")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.model_name} ({self.dimensions}d) v{self.index_version}"


class TermStat(models.Model):
    """How many chunks hold each lexeme, per text-search config; refreshed after every import.

    The full-text branch drops lexemes that most chunks hold ("factura"), which keeps it
    discriminating and fast: a common term never makes it rank every chunk of the corpus.
    """

    config = models.CharField(max_length=20)
    lexeme = models.CharField(max_length=200)
    ndoc = models.PositiveIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["config", "lexeme"], name="kb_termstat_unique")]
