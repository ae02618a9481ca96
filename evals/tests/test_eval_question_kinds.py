"""eval_question_kinds: the labelled questions' kinds as the template writer reads them, per split."""

import json

import pytest
from django.core.management import CommandError, call_command


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def test_counts_the_kinds_read_as_labelled_per_split(tmp_path, capsys):
    labels = _write(tmp_path / "kinds.jsonl", [
        {"query": "¿qué formas de pago tienen?", "kind": "list", "split": "dev"},
        {"query": "¿de cuánto es el recargo?", "kind": "amount", "split": "dev"},
        {"query": "¿de cuánto es el recargo?", "kind": "duration", "split": "test"},  # labelled otherwise: misread
        {"query": "out of scope, no kind", "split": "test"},
    ])
    call_command("eval_question_kinds", labels)
    out = capsys.readouterr().out
    assert "kinds.jsonl dev: 2/2 kinds read as labelled" in out
    assert "kinds.jsonl test: 0/1 kinds read as labelled; duration read as amount 1" in out


def test_a_file_that_is_not_labelled_questions_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="cannot read it as JSONL"):
        call_command("eval_question_kinds", _write(tmp_path / "bad.jsonl", []).replace("bad", "missing"))
    (tmp_path / "garbage.jsonl").write_text("{not json\n", encoding="utf-8")
    with pytest.raises(CommandError, match="cannot read it as JSONL"):
        call_command("eval_question_kinds", str(tmp_path / "garbage.jsonl"))
    with pytest.raises(CommandError, match="no row with a query and a kind"):
        call_command("eval_question_kinds", _write(tmp_path / "none.jsonl", [{"query": "hola"}]))
