"""The walls of design.md and the map of course_lib/README.md: imports go one way, the model knows no screen and no torch.

Every module of the package is placed in a wing (a new module must be placed, or this test fails);
its imports of other course_lib modules, read from its source, may go only to the wings it sits on.
"""
from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import course_lib

PKG = Path(course_lib.__file__).parent

#: The wings of course_lib/README.md, by top-level module or subpackage.
WINGS = {
    "input": {"scenario", "data", "units", "prose", "_validate"},
    "model": {"failures", "interval", "step", "sizing", "restart", "levers", "floor", "modes", "replicas", "uncertainty",
              "projection", "simulate", "spares", "requeue"},
    "faces": {"answer", "drill", "citations", "ledger", "__main__", "plots", "widgets", "notebook", "incidents"},
    "grader": {"check"},
    "checkpoint": {"checkpoint"},
    "labs": {"labkit", "faultlab", "ftlab", "nodelab", "sdclab", "slurmlab", "checkpoint.dist_worker"},
}
#: Which wings a wing may import from (itself included).
ALLOWED = {
    "input": {"input", "model"},  # the Scenario resolves derived inputs with model functions (course_lib/README.md); no cycle
    "model": {"input", "model"},
    "faces": {"input", "model", "faces", "checkpoint", "labs"},
    "grader": {"input", "model", "faces", "grader", "checkpoint", "labs"},
    "checkpoint": {"input", "checkpoint"},
    "labs": {"input", "model", "checkpoint", "labs", "faces"},
}
#: The labs' drawing helpers they call for their own figures (plots.faultlab): the one allowed face.
LAB_FACES = {"plots"}


def _modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages([str(PKG)], prefix="course_lib."):
        names.append(info.name)
    return sorted(names)


def _wing(module: str) -> str:
    parts = module.split(".")[1:]
    for n in range(len(parts), 0, -1):  # the longest placed prefix: checkpoint.tierlab is a lab inside the checkpoint package
        key = ".".join(parts[:n])
        for wing, members in WINGS.items():
            if key in members:
                return wing
    if not parts:
        return "faces"  # the package itself re-exports the Scenario lazily
    raise AssertionError(f"{module} is in no wing of course_lib/README.md: place it in tests/test_architecture.py WINGS")


def _imports(module: str) -> set[str]:
    """The course_lib top-level modules that ``module`` imports (relative or absolute), from its source."""
    path = PKG.joinpath(*module.split(".")[1:])
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    tree = ast.parse(path.read_text())
    depth_pkg = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = depth_pkg[: len(depth_pkg) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
                names = [target] if node.module else [f"{target}.{a.name}" for a in node.names]
            elif node.module and node.module.startswith("course_lib"):
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for n in names:
                parts = n.split(".")
                if len(parts) > 1 and parts[0] == "course_lib" and (PKG / parts[1]).exists() or \
                        len(parts) > 1 and (PKG / f"{parts[1]}.py").exists():
                    out.add(parts[1])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("course_lib."):
                    out.add(a.name.split(".")[1])
    return out


MODULES = _modules()


def test_every_module_is_on_the_map():
    readme = (PKG / "README.md").read_text()
    for module in MODULES:
        _wing(module)
        top = module.split(".")[1]
        assert f"`{top}`" in readme, f"course_lib/README.md has no line for {top}"


@pytest.mark.parametrize("module", MODULES)
def test_imports_go_one_way(module):
    wing = _wing(module)
    for target in _imports(module):
        t_wing = _wing(f"course_lib.{target}")
        if wing == "labs" and t_wing == "faces":
            assert target in LAB_FACES, f"{module} (labs) imports the face {target}"
            continue
        assert t_wing in ALLOWED[wing], f"{module} ({wing}) imports {target} ({t_wing}): imports go input <- model <- faces"


def test_no_module_imports_back_into_a_module_that_imports_it():
    """One way also inside the wings: no import cycle among course_lib's modules, lazy imports included (the Scenario's
    lemon default once imported levers, which imports the Scenario: the factor now lives in failures)."""
    graph = {}
    for module in MODULES:
        parts = module.split(".")
        if len(parts) > 1:
            graph.setdefault(parts[1], set()).update(t for t in _imports(module) if t != parts[1])
    cycles, path = [], []

    def visit(node, seen):
        if node in path:
            cycles.append(path[path.index(node):] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, seen)
        path.pop()

    done: set = set()
    for node in sorted(graph):
        visit(node, done)
    assert not cycles, f"import cycles: {cycles}"


def _loaded_after_import(*modules: str) -> set[str]:
    code = ("import importlib, json, sys\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
            + "print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return {m.split(".")[0] for m in json.loads(out)}


WALLED = [m for m in MODULES if _wing(m) in ("input", "model")] + ["course_lib", "course_lib.answer", "course_lib.drill",
                                                                    "course_lib.__main__", "course_lib.check"]


def test_maths_modules_load_no_screen_and_no_torch():
    """All of them imported in one fresh interpreter pull in neither (so none of them does alone)."""
    loaded = _loaded_after_import(*WALLED)
    assert not loaded & {"matplotlib", "ipywidgets", "torch"}, f"{WALLED} pull in {sorted(loaded & {'matplotlib', 'ipywidgets', 'torch'})}"


def test_checkpoint_safe_writer_is_the_torch_side():
    assert "torch" in _loaded_after_import("course_lib.checkpoint")
