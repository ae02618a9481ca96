"""The second knowledge base (Ondanet, written by someone who never saw the retriever) against its golden set."""

import io
import json

import pytest
from django.conf import settings
from django.core.management import call_command

from kb.embeddings import get_embedder
from kb.models import Document, EmbeddingSpace
from kb.services import documents_import

pytestmark = pytest.mark.django_db

SECOND_KB = settings.BASE_DIR / "evals" / "tests" / "second_kb"
GOLDEN = settings.BASE_DIR / "evals" / "fixtures" / "golden_second.jsonl"
OFFTOPIC = settings.BASE_DIR / "evals" / "fixtures" / "labels" / "offtopic.jsonl"


@pytest.fixture
def second_kb(db):
    """Given the second knowledge base and nothing else (rolled back after the test)."""
    Document.objects.all().delete()
    EmbeddingSpace.objects.all().delete()
    return documents_import(paths=[SECOND_KB], embedder=get_embedder())


def eval_json(*args) -> dict:
    out = io.StringIO()
    call_command("eval_retrieval", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_hybrid_ranks_no_worse_than_its_own_vector_branch_on_the_dev_split(second_kb):
    report = eval_json("--golden", str(GOLDEN), "--offtopic", str(OFFTOPIC))
    dev = report["splits"]["dev"]["branches"]
    assert dev["hybrid"]["cases"] == dev["vector"]["cases"] == 51
    assert dev["hybrid"]["mrr"] >= dev["vector"]["mrr"]
    assert dev["hybrid"]["recall@5"] >= dev["vector"]["recall@5"]


def test_out_of_scope_questions_are_scored_on_the_no_context_decision_per_split(second_kb):
    report = eval_json("--golden", str(GOLDEN), "--offtopic", str(OFFTOPIC))
    for split in ("dev", "test"):
        no_context = report["splits"][split]["no_context"]
        assert no_context["in_scope"] in (51, 53)
        assert no_context["out_of_scope"] == 7 + 71  # the golden file's 7 and the off-topic file's 31 + 40
        assert no_context["false_answer_rate"] == round(len(no_context["false_context"]) / 78, 4)
    assert all(not row["id"].startswith("o") for row in report["per_case"])  # off-topic lines have no hits to rank
