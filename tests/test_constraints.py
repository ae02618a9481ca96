"""Every requirement is pinned in constraints.txt, at a version its range allows.

A requirement added without `make lock` would install at whatever version is newest that day, on CI and on a new
server alike; a pin outside its range would make pip refuse to install at all.
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


def _requirements(path: Path) -> list[Requirement]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-r "):
            found.extend(_requirements(path.parent / line[3:].strip()))
            continue
        found.append(Requirement(line))
    return found


def _pins() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = re.fullmatch(r"([A-Za-z0-9._-]+)==(\S+)", line).groups()
            pins[canonicalize_name(name)] = Version(version)
    return pins


def test_every_requirement_is_pinned_within_its_range():
    pins = _pins()
    requirements = _requirements(ROOT / "requirements-dev.txt")
    assert {"django", "openai", "celery", "pytest"} <= {canonicalize_name(r.name) for r in requirements}
    unpinned = [str(r) for r in requirements if canonicalize_name(r.name) not in pins]
    assert not unpinned, f"not in constraints.txt (run make lock): {unpinned}"
    outside = [f"{r} pinned at {pins[canonicalize_name(r.name)]}" for r in requirements
               if not r.specifier.contains(pins[canonicalize_name(r.name)], prereleases=True)]
    assert not outside, f"pins outside their requirement's range (run make lock): {outside}"
