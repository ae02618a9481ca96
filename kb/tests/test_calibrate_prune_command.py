"""kb_calibrate_prune measures the configured embedder on labelled questions; search prunes with what it records."""

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command

from kb.embeddings import embedder_fingerprint, get_embedder
from kb.prune_calibration import read_calibrations
from kb.search import search

pytestmark = pytest.mark.django_db

# Questions of the sample golden set whose fused top 5 holds filler far below the best chunk's cosine.
QUESTIONS = ("necesito ip fija para unas camaras del negocio", "a que hora atienden por whatsapp los domingos")


def calibrate(settings, *args) -> str:
    out = io.StringIO()
    call_command("kb_calibrate_prune", "--golden", str(settings.BASE_DIR / "evals/fixtures/golden.jsonl"), *args,
                 stdout=out)
    return out.getvalue()


def test_the_command_records_a_margin_in_the_embedders_scale_that_loses_no_dev_question(sample_kb, settings,
                                                                                           tmp_path):
    settings.KB_PRUNE_CALIBRATIONS = str(tmp_path / "calibrations.json")
    out = calibrate(settings)
    fingerprint = embedder_fingerprint(get_embedder())
    recorded = read_calibrations(settings.KB_PRUNE_CALIBRATIONS)[fingerprint]
    assert recorded.sets["golden"].dev_queries == 40 and recorded.margin < 0.12
    assert recorded.margin == pytest.approx(recorded.multiplier * recorded.spread, abs=1e-4)
    assert max(recorded.sets["golden"].required) <= recorded.margin
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("  seed") or "  calibrated" in line}
    figures = {name: re.findall(r"dropped +(\d+)/(\d+) r@5 ([\d.]+) MRR ([\d.]+)", line) for name, line in rows.items()}
    (seed_dev, seed_test), (cut_dev, cut_test) = figures["seed"], figures["calibrated"]
    assert seed_dev[0] == "0" and int(cut_dev[0]) > 0  # the seed's 0.12 drops nothing; the fitted margin does
    assert (cut_dev[2:], cut_test[2:]) == (seed_dev[2:], seed_test[2:])  # recall@5 and MRR hold on both splits


def test_search_prunes_with_the_calibration_and_says_which_rule_it_used(sample_kb, settings, tmp_path):
    settings.KB_PRUNE_CALIBRATIONS = str(tmp_path / "none.json")
    seed = [search(q, k=5) for q in QUESTIONS]
    assert all(not r.pruned for r in seed)
    assert "the seed's rule): no calibration for embedder" in seed[0].context.prune_rule

    settings.KB_PRUNE_CALIBRATIONS = str(tmp_path / "calibrations.json")
    calibrate(settings)
    fitted = [search(q, k=5) for q in QUESTIONS]
    assert "calibrated for fingerprint" in fitted[0].context.prune_rule
    dropped = [hit for result in fitted for hit in result.pruned]
    assert dropped and {hit.prune_reason for hit in dropped} == {"below margin"}
    for before, after in zip(seed, fitted):
        assert [h.doc for h in after.results] == [h.doc for h in before.results if h.chunk_id not in
                                                  {d.chunk_id for d in after.pruned}]
        assert len(after.results) >= 2 and after.context.has_context == before.context.has_context


def test_labelled_files_it_cannot_use_are_refused_naming_the_line(sample_kb, settings, tmp_path):
    settings.KB_PRUNE_CALIBRATIONS = str(tmp_path / "calibrations.json")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a", "query": "q", "hits": ["x"], "split": "dev"}\n{not json\n', encoding="utf-8")
    with pytest.raises(CommandError, match=r"broken.jsonl:2: not JSON"):
        call_command("kb_calibrate_prune", "--golden", str(broken), stdout=io.StringIO())
    only_test = tmp_path / "test-only.jsonl"
    only_test.write_text(json.dumps({"id": "a", "query": "late fee", "hits": ["late-fees-en"], "split": "test"}),
                         encoding="utf-8")
    with pytest.raises(CommandError, match="no labelled question of the dev split"):
        call_command("kb_calibrate_prune", "--golden", str(only_test), stdout=io.StringIO())
    assert read_calibrations(settings.KB_PRUNE_CALIBRATIONS) == {}  # nothing recorded
