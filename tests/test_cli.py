"""The budget CLI (python -m course_lib budget / course-budget): table, JSON, one-line errors, exit 2."""
from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.__main__ import main
from course_lib import Scenario
from course_lib.answer import answer


def test_no_flags_answers_the_course_question(capsys):
    assert main(["budget"]) == 0
    out = capsys.readouterr().out
    a = answer()
    assert f"{100 * a.baseline_restart_fraction:.2f}" in out  # 2.08
    for row in a.rows():
        assert row.label in out and row.formatted() in out
    assert a.text in out
    assert out.index(a.spoken) == 0 < out.index("GPUs in the job") < out.index("The written answer: " + a.written)


def test_flags_and_json(capsys):
    argv = ["budget", "--gpus", "4096", "--failures-per-day", "2", "--detect", "5", "--reschedule", "4",
            "--reload", "3", "--interval", "10", "--write-cost", "0.5", "--json"]
    assert main(argv) == 0
    got = json.loads(capsys.readouterr().out)
    a = answer(Scenario.from_params(n_gpus=4096, failures_per_day=2, detect_min=5, reschedule_min=4, reload_min=3, checkpoint_interval_min=10, write_cost_min=0.5))
    assert got["baseline_minutes_per_day"]["value"] == pytest.approx(2 * (5 + 4 + 3 + 5 + a.scenario.modes.share("sdc") * 60))
    assert got["interval_before_min"]["value"] == pytest.approx(a.interval_before_min)
    assert got["floor_minutes_per_day"]["value"] == pytest.approx(a.after.floor_minutes_per_day)
    assert got["after_levers_minutes_per_day"]["value"] == pytest.approx(a.after_levers_minutes_per_day)
    # the console script form takes the same flags without the command word
    assert main(["--gpus", "16384", "--rate", "8.1e-4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["failures_per_day"]["value"] == pytest.approx(16384 * 8.1e-4)


@pytest.mark.parametrize("argv, flag", [
    (["--gpus", "-3"], "--gpus"), (["--gpus", "0"], "--gpus"), (["--gpus", "2.5"], "--gpus"),
    (["--rate", "abc"], "--rate"), (["--failures-per-day", "0"], "--failures-per-day"),
    (["--detect", "-1"], "--detect"), (["--interval", "0"], "--interval"), (["--write-cost", "nan"], "--write-cost"),
    (["--state-gb", "-2"], "--state-gb"), (["--rate", "1e-4", "--failures-per-day", "2"], "--failures-per-day"),
])
def test_bad_values_give_one_line_naming_the_flag(argv, flag, capsys):
    assert main(["budget", *argv]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "error" in lines[0]
    assert captured.out == ""


def test_unknown_command(capsys):
    assert main(["floor"]) == 2
    assert "budget" in capsys.readouterr().err


def test_the_installed_entry_points_run_as_processes(tmp_path):
    """The one subprocess test: ``python -m course_lib`` and the installed ``course-budget`` script run in processes of
    their own (the rest of this file calls main/cli in-process). `python -W default -m course_lib budget --gpus 8192`
    answers with no warning shown; `course-budget --gpus 8192 | true` (true never reads: the pipe is closed before the
    table is written) ends with no BrokenPipeError traceback, at exit either (0, or 141 when the pipe closed first)."""
    script = Path(sys.executable).with_name("course-budget")
    assert script.is_file(), f"the console script is not installed beside {sys.executable}"
    proc = subprocess.run(
        f"'{sys.executable}' -W default -m course_lib budget --gpus 8192 > '{tmp_path}/out' 2> '{tmp_path}/err'; echo $? > '{tmp_path}/rc'; "
        f"'{script}' --gpus 8192 | true; exit ${{PIPESTATUS[0]}}",
        shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120)
    out, err = (tmp_path / "out").read_text(), (tmp_path / "err").read_text()
    assert (tmp_path / "rc").read_text().strip() == "0", err
    assert err == "", err  # no warning of any kind (import time included), no traceback
    assert "floor term: lambda (D + R)" in out and answer(Scenario.from_params(n_gpus=8192)).text in out
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 141), (proc.returncode, proc.stderr)


def test_python_m_course_lib_runs_the_cli_under_its_own_name(monkeypatch, capsys):
    """What `python -m course_lib ...` executes (course_lib/__main__.py as __main__, its sys.exit(cli()) guard), in-process:
    the answer with exit 0, and a bad value in one line naming the flag with exit 2, under the name a person typed."""
    import runpy

    monkeypatch.delitem(sys.modules, "course_lib.__main__")  # runpy runs the file afresh, as `-m` does
    for argv, code in ((["budget", "--gpus", "8192"], 0), (["budget", "--reload", "-1"], 2)):
        monkeypatch.setattr(sys, "argv", ["course_lib", *argv])
        with pytest.raises(SystemExit) as exit_:
            runpy.run_module("course_lib", run_name="__main__")
        assert exit_.value.code == code
        captured = capsys.readouterr()
        if code == 0:
            assert captured.err == "" and answer(Scenario.from_params(n_gpus=8192)).text in captured.out
            assert "floor term: lambda (D + R)" in captured.out
        else:
            assert captured.out == "" and captured.err.count("\n") == 1, captured.err
            assert captured.err.startswith("python -m course_lib budget: error: argument --reload") and "--reload" in captured.err


def _cli_into_a_pipe(monkeypatch, read_first: bool):
    """cli() with stdout a real pipe: its reader keeps reading it (read_first) or closed it before a byte was written."""
    import threading

    from course_lib.__main__ import cli

    r, w = os.pipe()
    chunks: list[bytes] = []
    reader = None
    if read_first:  # read while cli writes: no output size can fill the pipe and block it
        def read():
            with os.fdopen(r, "rb") as f:
                chunks.append(f.read())

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
    else:
        os.close(r)  # the reader left first (`| true`)
    stream = os.fdopen(w, "w")  # block-buffered like a process's stdout into a pipe
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "argv", ["course-budget"])
    try:
        code = cli()  # an exception here is the traceback a shell would have shown
        print("written after cli returned", file=stream)  # anything still bound for stdout at exit (atexit, a late print)
        stream.close()  # what the interpreter's exit does: that flush must raise nothing either (cli sent stdout to /dev/null)
    finally:
        monkeypatch.undo()
        if not stream.closed:
            os.close(w)  # let the reader see the end even when cli raised
    if reader is not None:
        reader.join(timeout=60)  # the writer is closed: EOF is immediate; the deadline only guards a broken close
        assert not reader.is_alive(), "the pipe's writer was never closed"
    return code, b"".join(chunks).decode(), err.getvalue()


def test_piped_into_head_ends_quietly(monkeypatch):
    """`course-budget | head -2` and `course-budget | true`, in-process with a real pipe: no BrokenPipeError traceback,
    exit 0 when the reader stays (the 2-minute answer and the table's first lines are what head shows), 141 (128 + SIGPIPE) when it left
    first, and nothing on stderr."""
    code, text, err = _cli_into_a_pipe(monkeypatch, read_first=True)
    assert code == 0 and err == "" and text.endswith("\nwritten after cli returned\n")  # an open pipe keeps everything
    head = text.splitlines()[:4]  # the 2-minute answer first (one line), then the table
    assert head[0].startswith("2 failures a day at 15 minutes each") and head[1] == ""
    assert head[2].startswith("GPUs in the job") and head[2].endswith("4,096  GPUs")
    assert head[3].startswith("failure rate per GPU") and head[3].endswith("per GPU-day")
    code, text, err = _cli_into_a_pipe(monkeypatch, read_first=False)
    assert code == 141 and err == "" and text == ""


def test_help_names_the_program_a_person_typed(monkeypatch, capsys):
    """`python -m course_lib --help`, in-process (runpy runs __main__.py as `-m` does): the usage names `python -m course_lib`."""
    import runpy

    monkeypatch.delitem(sys.modules, "course_lib.__main__")
    monkeypatch.setattr(sys, "argv", ["course_lib", "--help"])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_module("course_lib", run_name="__main__")
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m course_lib ")
    joined = " ".join(out.split())
    assert "--reload-min RELOAD_MIN, --reload RELOAD_MIN" in joined and "--n-gpus N_GPUS, --gpus N_GPUS" in joined
    assert "--peer-copy, --no-peer-copy" in joined and "Times are in minutes" in joined
    assert main(["--help"]) == 0 and capsys.readouterr().out.startswith("usage: course-budget ")  # the console script's name


def test_mode_flags_reach_the_per_mode_model(capsys):
    argv = ["budget", "--hang-share", "0.8", "--hang-timeout", "10", "--sdc-latency", "120", "--no-peer-copy",
            "--spare-gpus", "16", "--spares-pooled", "--tokens-per-step", "8e6", "--tflops-per-gpu", "400", "--json"]
    assert main(argv) == 0
    got = json.loads(capsys.readouterr().out)
    s = Scenario.from_params(hang_share=0.8, hang_timeout_min=10, sdc_latency_min=120, peer_copy=False, spare_gpus=16,
                             spares_pooled=True, tokens_per_step=8e6, tflops_per_gpu=400)
    a = answer(s)
    assert got["floor_minutes_per_day"]["value"] == pytest.approx(a.after.floor_minutes_per_day)
    assert got["floor_minutes_per_day"]["value"] > answer().after.floor_minutes_per_day  # longer hangs, no peer copy
    assert got["spare_cost_minutes_per_day"]["value"] == 0.0  # pooled


def test_every_input_has_its_flag():
    from course_lib.__main__ import build_parser, flag
    from course_lib.scenario import PARAMETERS

    import argparse

    from course_lib.incidents.cli import add_log_arguments

    log = argparse.ArgumentParser()
    add_log_arguments(log)  # --log FILE and its options (notebook 13): a fault log, not a Scenario input
    parser = build_parser()
    dests = {a.dest for a in parser._actions} - {"help", "json"} - {a.dest for a in log._actions}
    assert dests == set(PARAMETERS)  # one vocabulary: the Scenario's names are the flags
    for name in PARAMETERS:
        assert flag(name) in parser._option_string_actions


@pytest.mark.parametrize("argv", [["--rate", "10"], ["--gpus", "1000000"], ["--gpus", "1"], ["--gpus", "10000000", "--rate", "1e-5"]])
def test_an_extreme_input_gets_a_plain_sentence_and_no_python_warning(argv, capsys):
    """In-process (was one subprocess per input with -W default): exit 0, nothing at all on stderr (a warning raised
    inside main is turned into a 'note:' line there, one outside it is recorded here: both fail), no percentage above
    100 and no minutes above the day's 1,440."""
    import warnings

    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        code = main(["budget", *argv])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err == "" and not escaped, (captured.err, [str(w.message) for w in escaped])
    percents = re.findall(r"([0-9]+(?:\.[0-9]+)?) ?%", captured.out)
    minutes = re.findall(r"([0-9][0-9,.]*) +min/day", captured.out)
    assert percents and minutes, "the table states its shares and minutes a day"
    for pct in percents:
        assert float(pct) <= 100 + 1e-9, argv
    for m in minutes:
        assert float(m.replace(",", "")) <= 1440 + 1e-9, argv


@pytest.mark.parametrize("argv, flag", [
    (["--hang-share", "1.5"], "--hang-share"), (["--hang-share", "-0.1"], "--hang-share"),
    (["--safety-factor", "0.5"], "--safety-factor"), (["--hang-timeout", "0.1"], "--hang-timeout"),
    (["--spare-gpus", "-1"], "--spare-gpus"), (["--tokens-per-step", "0"], "--tokens-per-step"), (["--groups", "64"], "--groups"),
    (["--shares", "0.5,0.5,0.5,0"], "--shares"), (["--observed-days", "0"], "--observed-days"),
    (["--sdc-latency", "-5"], "--sdc-latency"), (["--tflops-per-gpu", "abc"], "--tflops-per-gpu"),
])
def test_bad_mode_values_name_the_flag(argv, flag, capsys):
    assert main(["budget", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and flag in err[0]


@pytest.mark.parametrize("argv", [["--gpus", "1000000"], ["--failures-per-day", "2000"]])
def test_no_percentage_above_100_at_any_scale(argv, capsys):
    assert main(["budget", *argv, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert all(v["value"] <= 100 for k, v in got.items() if k not in ("text", "spoken") and v["unit"].startswith("%"))
    assert "never trains" in got["text"] and "never trains" in got["spoken"]
