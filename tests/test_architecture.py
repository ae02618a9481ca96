"""The rooms point one way: each imports only the rooms below it, at module level or inside a function; and each
room writes only its own rows.

Read from the source with `ast` (no import runs), so a violation is named with its file and line.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
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


def _room_files(rooms=MAY_IMPORT):
    for room in rooms:
        for path in sorted((ROOT / room).rglob("*.py")):
            relative = path.relative_to(ROOT)
            # Tests, migrations and fixtures (labelled data and the scripts that build and check it) are not the
            # room's code.
            if {"tests", "migrations", "fixtures"} & set(relative.parts):
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


# --- each room writes only its own rows ------------------------------------------------------------------------

# Manager and queryset methods that write rows; a call of one on a chain that starts at another room's model is a
# write into that room.
WRITE_METHODS = frozenset({"create", "get_or_create", "update_or_create", "bulk_create", "bulk_update", "update",
                           "delete"})
# Instance methods that write the instance's row.
INSTANCE_WRITES = frozenset({"save", "delete"})
# Queryset methods that hand back an instance or a queryset of the same model (what a variable may hold).
KEEPS_MODEL = frozenset({"get", "first", "last", "latest", "earliest", "filter", "exclude", "all", "select_related",
                         "prefetch_related", "select_for_update", "only", "defer", "order_by", "using", "none",
                         "annotate", "distinct", "get_or_create", "update_or_create", "create"})
SQL_WRITE = re.compile(r"\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+\"?(\w+)", re.IGNORECASE)
# The rooms (and the composition root) whose files are checked; each may write only its own models.
WRITERS = (*MAY_IMPORT, *sorted(TOP))


@dataclass(frozen=True)
class ModelOf:
    room: str
    name: str

    def __str__(self):
        return f"{self.room}.{self.name}"


def models_by_room() -> dict[str, dict[str, str]]:
    """Return room -> {model class name: its table}, read from each room's models.py (abstract bases included)."""
    found: dict[str, dict[str, str]] = {}
    for room in MAY_IMPORT:
        path = ROOT / room / "models.py"
        if not path.exists():
            continue
        classes: dict[str, str] = {}
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {ast.unparse(b) for b in node.bases}
            if "models.Model" not in bases and not bases & set(classes):
                continue
            table = f"{room}_{node.name.lower()}"
            for item in node.body:
                if isinstance(item, ast.ClassDef) and item.name == "Meta":
                    for assign in item.body:
                        if (isinstance(assign, ast.Assign) and ast.unparse(assign.targets[0]) == "db_table"
                                and isinstance(assign.value, ast.Constant)):
                            table = assign.value.value
            classes[node.name] = table
        found[room] = classes
    return found


class _WriteFinder(ast.NodeVisitor):
    """Find the writes of one file into models of other rooms: manager and queryset writes on a chain that starts
    at such a model, and save()/delete() on a name that holds one (built, fetched, or annotated as one)."""

    def __init__(self, room: str, models: dict[str, dict[str, str]]):
        self.room = room
        self.models = models
        self.modules: dict[str, str] = {}  # local name -> room, for `from desk import models as desk_models`
        self.names: dict[str, ModelOf] = {}  # local name -> another room's model it stands for
        self.held: list[dict[str, ModelOf]] = [{}]  # per function: variable -> the foreign model it holds
        self.found: list[tuple[int, str]] = []

    # what a name or an expression stands for
    def _model(self, node) -> ModelOf | None:
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.modules:
            room = self.modules[node.value.id]
            return ModelOf(room, node.attr) if node.attr in self.models.get(room, {}) else None
        return None

    def _held(self, name: str) -> ModelOf | None:
        return self.held[-1].get(name)

    def _chain_model(self, node) -> ModelOf | None:
        """Return the foreign model a chain like `X.objects.filter(...).select_for_update()` or `x.save` starts at."""
        while True:
            if isinstance(node, ast.Call):
                node = node.func
            elif isinstance(node, ast.Attribute):
                if node.attr in ("objects", "_default_manager", "_base_manager"):
                    return self._model(node.value)
                if not isinstance(node.value, (ast.Call, ast.Attribute)):
                    return self._held(node.value.id) if isinstance(node.value, ast.Name) else None
                node = node.value
            else:
                return None

    def _value_model(self, node) -> ModelOf | None:
        """Return the foreign model an assigned value holds rows of: `X(...)`, `X.objects….get(...)`,
        `get_object_or_404(X, ...)`, or another name that holds one."""
        if isinstance(node, ast.Await):
            node = node.value
        if isinstance(node, ast.Call):
            model = self._model(node.func)
            if model:
                return model
            if isinstance(node.func, ast.Name) and node.func.id in ("get_object_or_404", "get_list_or_404"):
                return self._model(node.args[0]) if node.args else None
            if isinstance(node.func, ast.Attribute) and node.func.attr in KEEPS_MODEL:
                return self._chain_model(node.func.value)
        if isinstance(node, ast.Name):
            return self._held(node.id)
        return None

    # imports
    def visit_ImportFrom(self, node):
        module = node.module or ""
        parts = module.split(".")
        if node.level == 0 and parts[0] in self.models and parts[0] != self.room:
            room = parts[0]
            if parts[1:] == ["models"]:
                for alias in node.names:
                    if alias.name in self.models[room]:
                        self.names[alias.asname or alias.name] = ModelOf(room, alias.name)
            elif len(parts) == 1:
                for alias in node.names:
                    if alias.name == "models":
                        self.modules[alias.asname or alias.name] = room

    def visit_Import(self, node):
        for alias in node.names:
            parts = alias.name.split(".")
            if alias.asname and parts[1:] == ["models"] and parts[0] in self.models and parts[0] != self.room:
                self.modules[alias.asname] = parts[0]

    # scopes and what names hold
    def visit_FunctionDef(self, node):
        held = dict(self.held[-1])
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            model = self._model(arg.annotation) if arg.annotation is not None else None
            if model:
                held[arg.arg] = model
        self.held.append(held)
        self.generic_visit(node)
        self.held.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _bind(self, target, value):
        if isinstance(target, ast.Name):
            model = self._value_model(value)
            if model:
                self.held[-1][target.id] = model
            else:
                self.held[-1].pop(target.id, None)
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Call):
            # `row, created = X.objects.get_or_create(...)`: the first name holds the row
            if target.elts and isinstance(target.elts[0], ast.Name):
                self._bind(target.elts[0], value)

    def visit_Assign(self, node):
        self.generic_visit(node)
        for target in node.targets:
            self._bind(target, node.value)

    def visit_AnnAssign(self, node):
        self.generic_visit(node)
        if isinstance(node.target, ast.Name):
            model = self._model(node.annotation)
            if model:
                self.held[-1][node.target.id] = model
            elif node.value is not None:
                self._bind(node.target, node.value)

    def visit_For(self, node):
        if isinstance(node.target, ast.Name):
            model = self._value_model(node.iter) if isinstance(node.iter, ast.Call) else None
            if model:
                self.held[-1][node.target.id] = model
        self.generic_visit(node)

    # the writes
    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if not isinstance(func, ast.Attribute):
            return
        receiver = func.value
        if func.attr in WRITE_METHODS:
            model = self._chain_model(receiver)
            if model and self._through_manager_or_queryset(receiver):
                self.found.append((node.lineno, f"{func.attr}() on {model}"))
                return
        if func.attr in INSTANCE_WRITES:
            model = self._value_model(receiver) if isinstance(receiver, ast.Call) else None
            if isinstance(receiver, ast.Name):
                model = self._held(receiver.id)
            if model:
                self.found.append((node.lineno, f"{func.attr}() of a {model} row"))

    def _through_manager_or_queryset(self, receiver) -> bool:
        """True when the receiver is a manager or queryset chain (or a name holding one), not a model instance."""
        node = receiver
        while isinstance(node, (ast.Call, ast.Attribute)):
            if isinstance(node, ast.Attribute) and node.attr in ("objects", "_default_manager", "_base_manager"):
                return True
            node = node.func if isinstance(node, ast.Call) else node.value
        return isinstance(node, ast.Name) and node.id in self.held[-1]

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            for match in SQL_WRITE.finditer(node.value):
                table = match.group(1).lower()
                for room, classes in self.models.items():
                    if room != self.room and table in classes.values():
                        name = next(n for n, t in classes.items() if t == table)
                        self.found.append((node.lineno, f"SQL write into {ModelOf(room, name)}"))


def write_violations() -> list[str]:
    """Return every write of a room (or of config/ and demo/) into another room's models: `file:line what`."""
    models = models_by_room()
    found = []
    for room, relative, path in _room_files(WRITERS):
        finder = _WriteFinder(room, models)
        finder.visit(ast.parse(path.read_text(), filename=str(path)))
        found += [f"{relative}:{line} {what}" for line, what in sorted(set(finder.found))]
    return found


# Writes into another room's models that are known and on their way out; nothing else may write another room's rows.
KNOWN_WRITES = [
    # The demo seeds the evals' golden set directly; the evals service it needs (a case from a trace with given
    # hits) belongs in evals/, and these lines go when the demo calls it.
    "demo/management/commands/demo_conversations.py:188 get_or_create() on evals.GoldenSet",
    "demo/management/commands/demo_conversations.py:193 bulk_create() on evals.GoldenCase",
    "demo/management/commands/demo_conversations.py:199 create() on evals.GoldenCase",
]


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


def test_each_room_writes_only_its_own_rows():
    """A room creates, saves, updates and deletes only its own models (through its services); config/ and demo/
    call the rooms' services. Reads through another room's models or selectors may stay."""
    found = write_violations()
    unexpected = [v for v in found if v not in KNOWN_WRITES]
    gone = [v for v in KNOWN_WRITES if v not in found]
    assert not unexpected, "writes into another room's models:\n" + "\n".join(unexpected)
    assert not gone, "KNOWN_WRITES lists writes that are gone (or moved): remove them:\n" + "\n".join(gone)


def test_the_write_rule_names_each_write_into_another_room(tmp_path, monkeypatch):
    """The check itself can fail: a write into another room's model is reported with its file and line, however it
    is spelled; the room's own writes and reads of other rooms are not."""
    for room in set(WRITERS):
        (tmp_path / room).mkdir()
    (tmp_path / "desk" / "models.py").write_text(
        "from django.db import models\n\n\n"
        "class Message(models.Model):\n    text = models.TextField()\n\n\n"
        "class Contact(models.Model):\n    name = models.TextField()\n\n    class Meta:\n"
        "        db_table = 'desk_person'\n")
    (tmp_path / "bot" / "models.py").write_text(
        "from django.db import models\n\n\nclass Note(models.Model):\n    text = models.TextField()\n")
    (tmp_path / "bot" / "bad.py").write_text(
        "from bot.models import Note\n"                                           # 1
        "from desk import models as desk_models\n"                                # 2
        "from desk.models import Contact, Message as DeskMessage\n"               # 3
        "\n"                                                                      # 4
        "\n"                                                                      # 5
        "def turn(contact: Contact, message_id):\n"                               # 6
        "    DeskMessage.objects.create(text='hi')\n"                             # 7
        "    DeskMessage.objects.filter(pk=message_id).update(text='x')\n"        # 8
        "    contact.name = 'Ana'\n"                                              # 9
        "    contact.save(update_fields=['name'])\n"                              # 10
        "    row = desk_models.Message.objects.select_for_update().get(pk=1)\n"   # 11
        "    row.delete()\n"                                                      # 12
        "    built = DeskMessage(text='y')\n"                                     # 13
        "    built.save()\n"                                                      # 14
        "    Note.objects.create(text='mine')\n"                                  # 15
        "    DeskMessage.objects.filter(pk=message_id).exists()\n"                # 16
        "    {'a': 1}.update(b=2)\n"                                              # 17
        "    run('UPDATE desk_person SET name = %s')\n")                          # 18
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert write_violations() == [
        "bot/bad.py:7 create() on desk.Message",
        "bot/bad.py:8 update() on desk.Message",
        "bot/bad.py:10 save() of a desk.Contact row",
        "bot/bad.py:12 delete() of a desk.Message row",
        "bot/bad.py:14 save() of a desk.Message row",
        "bot/bad.py:18 SQL write into desk.Contact",
    ]


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
