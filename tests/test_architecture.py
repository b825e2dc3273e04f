"""The two walls of design.md: the maths knows no screen, and only checkpoint/faultlab load torch."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

MATHS = ["course_lib", "course_lib.scenario", "course_lib.ledger", "course_lib.data", "course_lib.failures",
         "course_lib.restart", "course_lib.interval", "course_lib.simulate", "course_lib.floor", "course_lib.answer",
         "course_lib.check", "course_lib.__main__"]


def _loaded_after_import(module: str) -> set[str]:
    code = f"import importlib, json, sys; importlib.import_module({module!r}); print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return {m.split(".")[0] for m in json.loads(out)}


@pytest.mark.parametrize("module", MATHS)
def test_maths_modules_load_no_screen_and_no_torch(module):
    loaded = _loaded_after_import(module)
    assert not loaded & {"matplotlib", "ipywidgets", "torch"}, f"{module} pulls in {sorted(loaded & {'matplotlib', 'ipywidgets', 'torch'})}"


def test_checkpoint_safe_writer_is_the_torch_side():
    assert "torch" in _loaded_after_import("course_lib.checkpoint")
