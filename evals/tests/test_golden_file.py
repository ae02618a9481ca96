"""Golden files: splits, languages and out-of-scope cases; the labelled off-topic file. No database."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from evals.golden import GoldenFileError, hashed_split, read_golden, read_golden_rows, read_offtopic

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def test_every_sample_case_names_its_split_and_the_first_ones_the_split_their_id_hashes_to():
    rows = read_golden_rows(FIXTURES / "golden.jsonl")
    assert all(row["split"] in ("dev", "test") for row in rows)
    # g001–g059 were split by the hash of their id before anything was measured on them; later cases were
    # written with their split and keep it.
    first = [row for row in rows if int(row["id"][1:]) <= 59]
    assert len(first) == 59 and all(row["split"] == hashed_split(row["id"]) for row in first)
    dev = sum(row["split"] == "dev" for row in rows)
    assert 0.4 <= dev / len(rows) <= 0.6


def test_a_case_without_a_split_gets_its_hashed_one_and_keeps_it(tmp_path):
    path = write_jsonl(tmp_path / "g.jsonl", [{"id": f"c{i}", "query": "q", "hits": ["a"]} for i in range(200)])
    splits = [case.split for case in read_golden(path)]
    assert set(splits) == {"dev", "test"}
    assert splits == [case.split for case in read_golden(path)]
    assert 80 <= splits.count("dev") <= 120


def test_out_of_scope_cases_have_no_hits_and_keep_split_and_language(tmp_path):
    path = write_jsonl(tmp_path / "g.jsonl", [
        {"id": "in", "query": "reconexión", "hits": ["a", "b"], "split": "test", "language": "es"},
        {"id": "out", "query": "who won last night", "hits": [], "split": "dev", "language": "en",
         "out_of_scope": True},
    ])
    inside, outside = read_golden(path)
    assert (inside.split, inside.language, inside.out_of_scope, inside.hits) == ("test", "es", False, ["a", "b"])
    assert (outside.split, outside.language, outside.out_of_scope, outside.hits) == ("dev", "en", True, [])


@pytest.mark.parametrize("row, message", [
    ({"id": "x", "query": "q", "hits": []}, "missing hits"),
    ({"id": "x", "query": "q", "hits": ["a"], "out_of_scope": True}, "lists no hits"),
    ({"id": "x", "query": "q", "hits": [], "out_of_scope": "yes"}, "true or false"),
    ({"id": "x", "query": "q", "hits": ["a"], "split": "train"}, "split must be one of dev, test"),
    ({"id": "x", "query": "q", "hits": ["a"], "language": "fr"}, "language must be one of es, en"),
])
def test_a_malformed_case_names_the_line(tmp_path, row, message):
    with pytest.raises(GoldenFileError, match=message):
        read_golden(write_jsonl(tmp_path / "g.jsonl", [{"id": "ok", "query": "q", "hits": ["a"]}, row]))


def test_the_second_set_and_the_off_topic_file_read_as_labelled():
    second = read_golden(FIXTURES / "golden_second.jsonl")
    assert sum(not c.out_of_scope for c in second) == 104 and sum(c.out_of_scope for c in second) == 14
    assert {c.split for c in second} == {"dev", "test"}
    offtopic = read_offtopic(FIXTURES / "labels" / "offtopic.jsonl")
    assert len(offtopic) == 62 + 80 and all(c.out_of_scope and not c.hits for c in offtopic)  # two batches
    assert {c.split for c in offtopic} == {"dev", "test"} and {c.language for c in offtopic} == {"es", "en"}


def test_an_off_topic_line_without_text_names_the_line(tmp_path):
    with pytest.raises(GoldenFileError, match=":2: an off-topic line needs id and text"):
        read_offtopic(write_jsonl(tmp_path / "o.jsonl", [{"id": "o1", "text": "hola"}, {"id": "o2"}]))


def test_the_sets_written_blind_pass_their_validator_and_read_as_golden_files():
    labels = FIXTURES / "labels"
    # validate.py checks every fact against the help centre and the simulator's records, splits, duplicates
    result = subprocess.run([sys.executable, "validate.py"], cwd=labels, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout[-3000:]
    answers = read_golden_rows(FIXTURES / "answers.jsonl")
    turns = read_golden_rows(labels / "followup_turns.jsonl")
    more_turns = read_golden_rows(labels / "followup_turns_more.jsonl")
    assert (len(answers), sum(row["out_of_scope"] for row in answers), len(turns)) == (134, 20, 46)
    assert len(more_turns) == 52 and sum(bool(row["customer_id"]) for row in more_turns) == 31
    third_turns = read_golden_rows(labels / "followup_turns_third.jsonl")
    assert len(third_turns) == 40 and all(row["customer_id"] for row in third_turns)
    assert all(len(row["context"]) == 2 and row["query"] for row in more_turns)
    assert all(row["split"] == hashed_split_mod100(row["id"]) for row in answers)
    more_answers = read_golden_rows(FIXTURES / "answers_more.jsonl")
    assert (len(more_answers), sum(row["out_of_scope"] for row in more_answers)) == (80, 10)
    assert all(row["split"] == hashed_split_mod100(row["id"]) for row in more_answers)
    assert all(len(row["context"]) == 2 and row["query"] for row in turns)
    clarify = [row for row in answers if row["clarification_expected"]]
    assert len(clarify) == 10 and not any(row["facts"] or row["customer_id"] for row in clarify)


def hashed_split_mod100(case_id):
    """The split of the newer golden cases: the id's sha256 as a number, mod 100, below 50 is dev."""
    return "dev" if int.from_bytes(hashlib.sha256(case_id.encode()).digest(), "big") % 100 < 50 else "test"
