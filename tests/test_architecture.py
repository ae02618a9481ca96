"""The rooms point one way: each imports only the rooms below it, at module level or inside a function.

Read from the source with `ast` (no import runs), so a violation is named with its file and line.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# room -> the rooms it may import (core, the ground app, is below every room). docs/architecture.md explains why.
MAY_IMPORT = {
    "core": set(),
    "billing": {"core"},
    "kb": {"core"},
    "desk": {"core", "billing"},
    "traces": {"core", "desk", "kb", "billing"},
    "bot": {"core", "desk", "kb", "billing", "traces"},
    "evals": {"core", "desk", "kb", "billing", "traces", "bot"},
}
# The composition root and the demo may import anything; nothing may import them.
TOP = {"config", "demo"}
ROOMS = set(MAY_IMPORT) | TOP


def _room_files():
    for room in MAY_IMPORT:
        for path in sorted((ROOT / room).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if "tests" in relative.parts or "migrations" in relative.parts:
                continue
            yield room, relative, path


def _imported_rooms(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def import_violations() -> list[str]:
    found = []
    for room, relative, path in _room_files():
        for line, module in _imported_rooms(ast.parse(path.read_text(), filename=str(path))):
            target = module.split(".")[0]
            if target in ROOMS and target != room and target not in MAY_IMPORT[room]:
                found.append(f"{relative}:{line} imports {module} ({room} may import "
                             f"{', '.join(sorted(MAY_IMPORT[room])) or 'no other room'})")
    return found


def file_cycles() -> list[list[str]]:
    """Cycles between modules of the same room (a cycle means a piece is in the wrong module)."""
    graph: dict[str, set[str]] = {}
    for _room, relative, path in _room_files():
        name = ".".join(relative.with_suffix("").parts).removesuffix(".__init__")
        targets = set()
        for _line, module in _imported_rooms(ast.parse(path.read_text())):
            parts = module.split(".")
            for end in range(len(parts), 0, -1):
                candidate = ".".join(parts[:end])
                if (ROOT / Path(*parts[:end])).with_suffix(".py").exists():
                    targets.add(candidate)
                    break
        graph[name] = targets - {name}
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return cycles


def test_each_room_imports_only_rooms_below_it():
    violations = import_violations()
    assert not violations, "imports that point up:\n" + "\n".join(violations)


def test_no_module_cycles():
    cycles = file_cycles()
    assert not cycles, "module cycles:\n" + "\n".join(" → ".join(c) for c in cycles)


def test_the_rule_names_an_offending_import(tmp_path, monkeypatch):
    """The check itself can fail: an upward import in a room file is reported with file and line."""
    room = tmp_path / "kb"
    room.mkdir()
    (room / "bad.py").write_text("import os\n\n\ndef f():\n    from traces.models import Trace\n")
    for other in set(MAY_IMPORT) - {"kb"}:
        (tmp_path / other).mkdir()
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert import_violations() == ["kb/bad.py:5 imports traces.models (kb may import core)"]


def test_only_billing_and_the_top_import_the_simulator():
    """The simulator is a fake of the billing API; a room reaches billing through its client, and the demo
    hands the desk its demo customers (demo/chat_customers.py)."""
    found = [f"{relative}:{line} imports {module}"
             for room, relative, path in _room_files() if room != "billing"
             for line, module in _imported_rooms(ast.parse(path.read_text()))
             if module == "billing.simulator" or module.startswith("billing.simulator.")]
    assert not found, "\n".join(found)


def test_no_room_s_tests_import_another_room_s_tests():
    """Fakes and factories shared across rooms live in tests/support/, not in a room's tests."""
    found = []
    for room in MAY_IMPORT:
        for path in sorted((ROOT / room).rglob("tests/**/*.py")):
            for line, module in _imported_rooms(ast.parse(path.read_text())):
                parts = module.split(".")
                if len(parts) > 1 and parts[0] in ROOMS and parts[0] != room and parts[1] == "tests":
                    found.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not found, "\n".join(found)
