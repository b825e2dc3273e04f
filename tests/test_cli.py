"""The budget CLI (python -m course_lib budget / course-budget): table, JSON, one-line errors, exit 2."""
from __future__ import annotations

import json
import subprocess
import sys

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


def test_module_runs_as_a_subprocess():
    ok = subprocess.run([sys.executable, "-m", "course_lib", "budget", "--gpus", "8192"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "floor term: lambda (D + R)" in ok.stdout and answer(Scenario.from_params(n_gpus=8192)).text in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "course_lib", "budget", "--reload", "-1"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--reload" in bad.stderr


def test_piped_into_head_ends_quietly():
    """`python -m course_lib budget | head -2`: no BrokenPipeError traceback (exit 0, or 141 when the pipe closed first)."""
    import subprocess
    import sys

    for reader in ("head -2", "true"):  # `true` never reads: the pipe is closed before the table is written
        proc = subprocess.run(f"'{sys.executable}' -m course_lib budget | {reader}; exit ${{PIPESTATUS[0]}}",
                              shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120)
        assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
        assert proc.returncode in (0, 141), (reader, proc.returncode, proc.stderr)
        if reader.startswith("head"):
            assert len(proc.stdout.splitlines()) == 2


def test_help_names_the_program_a_person_typed():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "course_lib", "--help"], capture_output=True, text=True, timeout=120).stdout
    assert out.startswith("usage: python -m course_lib ")
    joined = " ".join(out.split())
    assert "--reload-min RELOAD_MIN, --reload RELOAD_MIN" in joined and "--n-gpus N_GPUS, --gpus N_GPUS" in joined
    assert "--peer-copy, --no-peer-copy" in joined and "Times are in minutes" in joined


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


def test_an_extreme_input_gets_a_plain_sentence_and_no_python_warning():
    for argv in (["--rate", "10"], ["--gpus", "1000000"], ["--gpus", "1"], ["--gpus", "10000000", "--rate", "1e-5"]):
        proc = subprocess.run([sys.executable, "-W", "default", "-m", "course_lib", "budget", *argv], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "Warning" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        for pct in __import__("re").findall(r"([0-9]+(?:\.[0-9]+)?) ?%", proc.stdout):
            assert float(pct) <= 100 + 1e-9, argv
        for minutes in __import__("re").findall(r"([0-9][0-9,.]*) +min/day", proc.stdout):
            assert float(minutes.replace(",", "")) <= 1440 + 1e-9, argv


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
    assert all(v["value"] <= 100 for k, v in got.items() if k != "text" and v["unit"].startswith("%"))
    assert "never trains" in got["text"]
