"""Knowledge base: documents → sections → chunks with embeddings, full-text vectors and identifiers."""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Case, F, Func, Value, When
from pgvector.django import HnswIndex, VectorField

from core.fields import ClockDateTimeField
from kb import applicability
from core.fulltext import FoldAccents, RegConfig, ToTsVector  # noqa: F401 - migrations name them here

LANGUAGES = [("es", "Español"), ("en", "English")]
EMBEDDING_DIM = 384


class WithAudience(models.Model):
    """Whom a row applies to (kb/applicability.py): a customer segment, plans, a contract term; empty: everyone."""

    segment = models.CharField(max_length=10, blank=True, db_default="",
                               help_text="home or business; empty: every customer.")
    plans = models.JSONField(default=list, db_default=Value([], models.JSONField()), blank=True,
                             help_text="Plan codes (F100, E500…) or plan types (fibra, empresarial, hogar-basico).")
    term = models.CharField(max_length=10, blank=True, db_default="",
                            help_text="monthly, annual or trial; empty: any.")

    class Meta:
        abstract = True

    @property
    def audience(self) -> applicability.Audience:
        return applicability.Audience(segment=self.segment, plans=tuple(self.plans), term=self.term)

    def set_audience(self, audience: applicability.Audience) -> None:
        self.segment, self.plans, self.term = audience.segment, list(audience.plans), audience.term


class Document(WithAudience):
    slug = models.SlugField(max_length=120, unique=True)
    title = models.CharField(max_length=300)
    language = models.CharField(max_length=2, choices=LANGUAGES)
    source_path = models.CharField(max_length=500, blank=True)
    content_hash = models.CharField(max_length=64)
    version = models.PositiveIntegerField(default=1)
    source = models.TextField(blank=True, db_default="",
                              help_text="The Markdown of the current version (what editors edit).")
    alternatives = models.JSONField(default=list, db_default=Value([], models.JSONField()), blank=True,
                                    help_text="Slugs of documents answering the same question for another case.")
    alternative_label = models.CharField(max_length=80, blank=True, db_default="",
                                         help_text="What tells this document apart from its alternatives.")
    deleted_at = models.DateTimeField(null=True, blank=True, help_text="Soft delete: its chunks are retired.")
    created_at = ClockDateTimeField(auto_now_add=True)
    updated_at = ClockDateTimeField(auto_now=True)

    class Meta:
        permissions = [('edit_kb', 'Edit the knowledge base')]
        ordering = ["slug"]

    def __str__(self):
        return self.slug


class DocumentVersion(models.Model):
    """One saved state of a document; a revert or a re-import is a new version, never an edit of an old one."""

    class Kind(models.TextChoices):
        IMPORT = "import", "Imported"
        EDIT = "edit", "Edited"
        REVERT = "revert", "Reverted"
        DELETE = "delete", "Deleted"
        RESTORE = "restore", "Restored"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    title = models.CharField(max_length=300)
    language = models.CharField(max_length=2, choices=LANGUAGES)
    source = models.TextField(help_text="The document as Markdown at this version.")
    content_hash = models.CharField(max_length=64)
    changed_sections = models.JSONField(default=list, blank=True,
                                        help_text="Heading paths of the sections added, changed or removed.")
    index_version = models.PositiveIntegerField(null=True, blank=True,
                                                help_text="The index version this change produced.")
    reverted_from = models.PositiveIntegerField(null=True, blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    note = models.CharField(max_length=300, blank=True)
    created_at = ClockDateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["document", "-number"]
        constraints = [models.UniqueConstraint(fields=["document", "number"], name="kb_document_version_unique")]

    def __str__(self):
        return f"{self.document.slug} v{self.number}"


class LiveQuerySet(models.QuerySet):
    """Sections and chunks are never deleted by an edit: they are retired at an index version, so old
    traces keep pointing at the chunk they retrieved and the index can be searched as it was."""

    def live(self):
        return self.filter(retired_in__isnull=True)

    def at_version(self, version: int):
        return self.filter(models.Q(retired_in__isnull=True) | models.Q(retired_in__gt=version),
                           added_in__lte=version)


class Section(WithAudience):
    """A document's section; its audience is the document's narrowed by its headings' (what search filters on)."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="sections")
    order = models.PositiveIntegerField()
    heading_path = models.CharField(max_length=500, help_text="Headings from ## down, joined with ' › '.")
    text = models.TextField()
    content_hash = models.CharField(max_length=64, blank=True, db_default="",
                                    help_text="sha256 of title + heading path + text: equal means same chunks.")
    added_in = models.PositiveIntegerField(db_default=0, help_text="Index version this section became live.")
    retired_in = models.PositiveIntegerField(null=True, blank=True,
                                             help_text="Index version this section stopped being live.")

    objects = LiveQuerySet.as_manager()

    class Meta:
        ordering = ["document", "order"]
        constraints = [models.UniqueConstraint(fields=["document", "order"], condition=models.Q(retired_in=None),
                                               name="kb_section_order_unique")]

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
    added_in = models.PositiveIntegerField(db_default=0, help_text="Index version this chunk became live.")
    retired_in = models.PositiveIntegerField(null=True, blank=True,
                                             help_text="Index version this chunk stopped being live.")
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
    # BM25's document length, kept beside the text so scoring never de-TOASTs the tsvector a second time.
    words = models.GeneratedField(
        expression=Func(Func(Func(F("text"), function="btrim"), Value(r"\s+"), function="regexp_split_to_array"),
                        Value(1), function="array_length"),
        output_field=models.IntegerField(),
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
                condition=models.Q(retired_in=None),
            ),
            GinIndex(fields=["search_vector"], name="kb_chunk_tsv_gin"),
            GinIndex(fields=["search_vector_simple"], name="kb_chunk_tsv_simple_gin"),
            GinIndex(fields=["identifiers"], name="kb_chunk_identifiers_gin"),
        ]

    objects = LiveQuerySet.as_manager()

    def __str__(self):
        return f"chunk {self.pk} of {self.document.slug}"


class EmbeddingSpace(models.Model):
    """The embedding model the stored vectors came from; one row. Vectors of two models never mix."""

    model_name = models.CharField(max_length=200)
    dimensions = models.PositiveIntegerField()
    index_version = models.PositiveIntegerField(default=1, help_text="Bumped on every change to chunks.")
    updated_at = ClockDateTimeField(auto_now=True)

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


class TermTotal(models.Model):
    """How many live chunks each text-search config indexes and their mean length in words (BM25's N and
    avgdl); refreshed with TermStat."""

    config = models.CharField(max_length=20, unique=True)
    chunks = models.PositiveIntegerField()
    avg_words = models.FloatField()


class ReembedJob(models.Model):
    """Background embedding of the chunks a save created; the document page polls it for progress."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    document = models.ForeignKey(Document, null=True, on_delete=models.CASCADE, related_name="reembed_jobs")
    document_version = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = ClockDateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    @property
    def percent(self) -> int:
        return 100 if not self.total else int(100 * self.done / self.total)
