"""TieredCheckpointer.snapshot's timings record under both orders of its two threads (issue 37).

``snapshot()`` copies the state (blocking), starts a background thread that replicates and persists the copy,
and records how long the training loop waited. The background thread records its own phases (serialize, own and
buddy copies, persist). Which thread writes first is up to the scheduler: a thread that finishes before the
training loop resumes (a small state on a loaded machine) once lost its phases, because the record was replaced
after the thread had started (seen 1 run in 2 under load, 20 of 20 with a delay after ``Thread.start``).

Each test forces one order without a sleep: the background thread's ``start`` is replaced by one that runs the
thread to its end before returning (the thread wins), or by one that does not start it until the test says so
(the training loop wins).
"""
from __future__ import annotations

import threading
import types

import pytest
import torch

from course_lib.checkpoint import strategies
from course_lib.checkpoint.holder import HolderServer
from course_lib.checkpoint.tiers import TieredCheckpointer

BACKGROUND = {"serialize_s", "nbytes", "own_s", "buddy_s", "persist_s", "background_s"}


class _ThreadWinsFirst(threading.Thread):
    """A thread whose ``start`` returns only once the thread has finished: the background work is all done before
    the training loop takes its next instruction."""

    def start(self):
        super().start()
        self.join(timeout=60)
        assert not self.is_alive(), "the background copy did not finish within 60 s"


class _LoopWinsFirst(threading.Thread):
    """A thread that ``start`` only registers; the test starts it once ``snapshot`` has returned."""

    made: list = []

    def start(self):
        _LoopWinsFirst.made.append(self)

    def really_start(self):
        threading.Thread.start(self)


@pytest.fixture
def checkpointer(tmp_path):
    """A state and its checkpointer on two holders of this process; the connections are closed before the holders."""
    own, buddy = holders = [HolderServer(keep=2).start_thread() for _ in range(2)]
    state = {"w": torch.arange(8.0), "step": 0}
    ckpt = TieredCheckpointer(state, local_holder=own.address, peers=[buddy.address], persist_dir=tmp_path,
                              job="race", every=1, persist_every=1)
    yield state, ckpt
    try:
        ckpt.close()
    finally:
        for h in holders:
            h.stop()


def _only_these_threads(monkeypatch, cls):
    # only the checkpointer's own module sees the replaced class: the holders' server threads are untouched
    monkeypatch.setattr(strategies, "threading", types.SimpleNamespace(Thread=cls))


def test_a_background_copy_that_finishes_before_the_loop_resumes_keeps_its_phases(checkpointer, monkeypatch):
    state, ckpt = checkpointer
    _only_these_threads(monkeypatch, _ThreadWinsFirst)
    state["step"] = 4
    ckpt.snapshot(state, 4)
    # the thread has finished already: nothing is left for wait() to add
    assert ckpt.done()
    t = ckpt.last_timings
    assert t["step"] == 4 and t["blocking_s"] >= 0
    assert BACKGROUND <= set(t), sorted(t)
    assert t["nbytes"] > 0 and t["background_s"] >= t["persist_s"]
    ckpt.wait()
    assert ckpt.last_timings is t and BACKGROUND <= set(t)


def test_a_background_copy_that_starts_after_the_loop_resumes_adds_its_phases_to_the_same_record(
        checkpointer, monkeypatch):
    state, ckpt = checkpointer
    _LoopWinsFirst.made.clear()
    _only_these_threads(monkeypatch, _LoopWinsFirst)
    state["step"] = 6
    ckpt.snapshot(state, 6)
    t = ckpt.last_timings
    assert set(t) == {"step", "blocking_s"} and t["step"] == 6  # the loop has recorded its wait, the copy has not run
    (thread,) = _LoopWinsFirst.made
    thread.really_start()
    ckpt.wait()
    assert ckpt.last_timings is t and BACKGROUND <= set(t) and t["step"] == 6


def test_each_snapshot_has_a_record_of_its_own(checkpointer, monkeypatch):
    state, ckpt = checkpointer
    _only_these_threads(monkeypatch, _ThreadWinsFirst)
    state["step"] = 1
    ckpt.snapshot(state, 1)
    first = ckpt.last_timings
    state["w"].add_(1.0)
    state["step"] = 2
    ckpt.snapshot(state, 2)
    second = ckpt.last_timings
    assert first is not second and (first["step"], second["step"]) == (1, 2)
    assert BACKGROUND <= set(first) and BACKGROUND <= set(second)
    got = ckpt.restore()
    assert got.step == 2 and torch.equal(got.state["w"], torch.arange(8.0) + 1)
