"""environment.yml must mirror pyproject.toml's dependencies (names and minimum versions)."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def _pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"]) + list(project["optional-dependencies"]["dev"])
    return {Requirement(r).name.lower().replace("_", "-"): str(Requirement(r).specifier) for r in reqs}


def _environment() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text())


def _conda_requirements(env: dict) -> dict[str, str]:
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, str) and not dep.startswith(("python=", "pip")):
            m = re.match(r"^([A-Za-z0-9_.\-]+)\s*(.*)$", dep)
            out[m.group(1).lower()] = m.group(2).replace(" ", "")
    return out


def _pip_section(env: dict) -> list[str]:
    for dep in env["dependencies"]:
        if isinstance(dep, dict) and "pip" in dep:
            return dep["pip"]
    return []


def test_python_is_311():
    assert "python=3.11" in _environment()["dependencies"]


def test_conda_section_mirrors_pyproject():
    py = _pyproject_requirements()
    conda = _conda_requirements(_environment())
    pip = {Requirement(r).name.lower(): str(Requirement(r).specifier) for r in _pip_section(_environment()) if not r.startswith("-e")}
    listed = {**conda, **pip}
    assert set(listed) == set(py), f"missing in environment.yml: {set(py) - set(listed)}; extra: {set(listed) - set(py)}"
    for name, spec in py.items():
        assert {str(s) for s in Requirement(f"x{listed[name]}").specifier} == {str(s) for s in Requirement(f"x{spec}").specifier}, name


def test_pip_section_pins_torch_and_installs_package():
    pip = _pip_section(_environment())
    assert "torch==2.13.0" in pip
    assert "-e .[dev]" in pip


def test_every_dependency_has_a_comment():
    for line in (ROOT / "environment.yml").read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("- ") and not stripped.startswith(("- python=", "- pip", "- conda-forge")) and ":" not in stripped.split("#")[0]:
            assert "#" in stripped, f"dependency without a comment: {stripped}"


def test_makefile_pins_torch():
    make = (ROOT / "Makefile").read_text()
    assert "torch==2.13.0" in make
    # torch appears in pyproject only with the exact pin
    for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        if Requirement(r).name == "torch":
            assert str(Requirement(r).specifier) == "==2.13.0"


def test_every_test_runs_under_a_deadline(pytestconfig):
    # pytest-timeout is loaded from the dev extras and the ini sets one deadline for setup, call and teardown together:
    # a lab or a wait that hangs fails its own test (the signal method raises inside it, so its clean-up still runs)
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert 0 < float(pytestconfig.getini("timeout")) <= 900
    assert pytestconfig.getini("timeout_method") == "signal"
