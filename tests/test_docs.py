"""The written answers (ANSWER_SHEET.md, README's answer block) are generated from course_lib."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import render_docs  # noqa: E402

from course_lib.answer import answer  # noqa: E402


def test_generated_docs_are_up_to_date():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "render_docs.py"), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_sheet_carries_the_computed_answer():
    ans = answer()
    text = render_docs.sheet()
    assert "## The 2-minute answer" in text and "## The 10-minute answer" in text
    assert f"{ans.after.floor_minutes_per_day:.2f} min/day" in text
    assert f"{ans.interval_after_min:.2f}" in text
    assert f"{100 * ans.baseline.fraction_of_day:.2f}%" in text


def test_readme_block_is_the_cli_table():
    block = render_docs.readme_block()
    assert answer().table() in block and answer().text in block
