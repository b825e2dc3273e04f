"""Four ways to write a checkpoint, and a bare copy as the reference (notebook 05 compares them).

Each strategy is measured the same way (:func:`measure`):

* **blocking time**: from the call until the training loop may continue (may update the state);
* **time to durable**: from the call until the checkpoint is complete, fsynced and committed;
* **reload time**: verify + load the committed checkpoint back into memory.

=============  ==========================================================  ==============
name           what it does                                                durable?
=============  ==========================================================  ==============
torch_save     torch.save to a temp file, sha256 footer, fsync, atomic     yes (blocking)
               rename, folder fsync (:mod:`.safe`)
dcp            torch.distributed.checkpoint.save + sha256 manifest +       yes (blocking)
               atomic folder rename (:mod:`.dcp_safe`)
dcp_async      dcp.async_save (THREAD mode, DefaultStager reused across     yes (background)
               saves): blocks while staging a copy, writes and commits
               in the background
snapshot       copy into preallocated buffers (pinned host memory and a    yes (background)
               side stream on a GPU), then a background thread persists
               the copy with the safe writer (CheckFreq's snapshot/persist)
bare_copy      the same bytes copied into one preallocated tensor: the     no (reference)
               physical floor of any snapshot
=============  ==========================================================  ==============
"""
from __future__ import annotations

import gc
import threading
import time
from pathlib import Path

import torch

from .._validate import check_choice, check_int_positive
from .safe import CheckpointStore
from .state import empty_like_state, iter_tensors, poison_state, state_nbytes, states_equal

__all__ = [
    "STRATEGIES",
    "DESCRIPTIONS",
    "SnapshotCheckpointer",
    "make_strategy",
    "measure",
    "local_state",
]

STRATEGIES = ("bare_copy", "torch_save", "dcp", "dcp_async", "snapshot")
DESCRIPTIONS = {
    "bare_copy": "bare copy into a preallocated tensor (reference, not durable)",
    "torch_save": "torch.save + fsync + atomic rename (sync)",
    "dcp": "torch.distributed.checkpoint.save (sync)",
    "dcp_async": "torch.distributed.checkpoint.async_save",
    "snapshot": "in-memory snapshot + background persist",
}


def _is_cuda(state) -> bool:
    return any(_local(t).is_cuda for _, t in iter_tensors(state))


def _local(t):
    return t.to_local() if hasattr(t, "to_local") else t


def local_state(state):
    """The same nested dict with every DTensor replaced by its local shard."""
    if isinstance(state, dict):
        return {k: local_state(v) for k, v in state.items()}
    return _local(state) if isinstance(state, torch.Tensor) else state


def _sync(cuda: bool):
    if cuda:
        torch.cuda.synchronize()


class _Done:
    """Handle of a save that is already durable when it returns."""

    def wait(self):
        return None


class SnapshotCheckpointer:
    """CheckFreq's two phases: a fast *snapshot* into preallocated memory, a background *persist*.

    ``snapshot(state, step)`` copies every tensor into buffers allocated once at construction
    (pinned host memory when the state is on a GPU, copied on a side stream so the copy does
    not queue behind compute), waits for the copy, then hands the buffers to a background
    thread that writes them with :meth:`CheckpointStore.save` (checksum, fsync, atomic
    rename). Only the copy blocks the training loop. A new snapshot first waits for the
    previous persist, so the buffers are never overwritten while being written.
    """

    def __init__(self, state: dict, store: CheckpointStore):
        self.store = store
        state = local_state(state)
        self.cuda = _is_cuda(state)
        self.buffers = empty_like_state(state, device="cpu", pin_memory=self.cuda)
        self._stream = torch.cuda.Stream() if self.cuda else None
        self._thread = None
        self._error = None
        self.last_step = None

    def _copy(self, state):
        src = dict(iter_tensors(local_state(state)))
        if self.cuda:
            self._stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self._stream):
                for key, buf in iter_tensors(self.buffers):
                    buf.copy_(src[key], non_blocking=True)
                done = torch.cuda.Event()
                done.record(self._stream)
            done.synchronize()
        else:
            for key, buf in iter_tensors(self.buffers):
                buf.copy_(src[key])
        # non-tensor leaves (step counters, ...)
        _copy_leaves(self.buffers, local_state(state))

    def _persist(self, step):
        try:
            self.store.save(step, self.buffers)
        except BaseException as exc:  # re-raised in wait()
            self._error = exc

    def snapshot(self, state: dict, step: int) -> "SnapshotCheckpointer":
        """Copy ``state`` (blocking) and start persisting it (background). Returns self."""
        self.wait()
        self._copy(state)
        self.last_step = step
        self._thread = threading.Thread(target=self._persist, args=(step,), name=f"persist-{step}", daemon=True)
        self._thread.start()
        return self

    def done(self) -> bool:
        return self._thread is None or not self._thread.is_alive()

    def wait(self) -> None:
        """Block until the last snapshot is durable (re-raises a failed persist)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            err, self._error = self._error, None
            raise err

    def restore_into(self, state: dict) -> dict:
        """Copy the in-memory snapshot back into ``state`` (the fast reload of GEMINI-style systems)."""
        src = dict(iter_tensors(self.buffers))
        for key, t in iter_tensors(local_state(state)):
            t.copy_(src[key], non_blocking=self.cuda)
        _sync(self.cuda)
        return state


def _copy_leaves(dst: dict, src: dict):
    for k, v in src.items():
        if isinstance(v, dict):
            _copy_leaves(dst[k], v)
        elif not isinstance(v, torch.Tensor):
            dst[k] = v


class _Strategy:
    name = ""
    durable = True

    def __init__(self, state, directory: Path, process_group=None):
        self.state = state
        self.directory = Path(directory)
        self.cuda = _is_cuda(local_state(state))
        self.process_group = process_group
        self.rank = 0
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            self.rank = torch.distributed.get_rank(process_group)
        #: extra per-save numbers (e.g. the time inside dcp.save itself)
        self.extra = {}

    def start(self, step: int):
        raise NotImplementedError

    def reload(self):
        return None

    def poison(self):
        """Poison every buffer a later reload (or copy) writes into and the check then reads.

        :func:`measure` calls it before each verified save, outside the timings, so a reload that
        writes nothing fails the comparison instead of finding the previous save's bytes there.
        Strategies whose reload returns freshly allocated tensors (torch.load) have none.
        """

    def close(self):
        pass


class _BareCopy(_Strategy):
    name = "bare_copy"
    durable = False

    def __init__(self, state, directory, process_group=None):
        super().__init__(state, directory, process_group)
        local = local_state(state)
        n = state_nbytes(local)
        self.buffer = torch.zeros(n, dtype=torch.uint8, pin_memory=self.cuda)
        self._views = []
        off = 0
        for _, t in iter_tensors(local):
            nb = t.numel() * t.element_size()
            self._views.append((self.buffer[off:off + nb], t))
            off += nb

    def poison(self):
        self.buffer.fill_(0xFF)

    def start(self, step):
        for dst, t in self._views:
            dst.copy_(t.reshape(-1).view(torch.uint8), non_blocking=self.cuda)
        _sync(self.cuda)
        return _Done()

    def close(self):
        self._views = []
        self.buffer = None


class _TorchSave(_Strategy):
    name = "torch_save"

    def __init__(self, state, directory, process_group=None):
        super().__init__(state, directory, process_group)
        self.store = CheckpointStore(self.directory / "torch_save" / f"rank{self.rank}", keep=1)

    def start(self, step):
        self.store.save(step, local_state(self.state))
        return _Done()

    def reload(self):
        loaded = self.store.load_latest_good(map_location="cuda" if self.cuda else "cpu")
        _sync(self.cuda)
        return None if loaded is None else loaded[1]


class _Dcp(_Strategy):
    name = "dcp"

    def __init__(self, state, directory, process_group=None):
        super().__init__(state, directory, process_group)
        from .dcp_safe import DcpCheckpointStore  # torch.distributed.checkpoint: loaded only when used

        self.store = DcpCheckpointStore(self.directory / self.name, keep=1, process_group=process_group)
        self.template = empty_like_state(state)

    def start(self, step):
        self.store.save(step, self.state)
        self.extra = {"dcp_call_s": self.store.last_dcp_call_s}
        return _Done()

    def reload(self):
        loaded = self.store.load_latest_good(self.template)
        _sync(self.cuda)
        return None if loaded is None else loaded[1]

    def poison(self):
        poison_state(self.template)

    def close(self):
        self.store.close()


class _DcpAsync(_Dcp):
    name = "dcp_async"

    def start(self, step):
        pending = self.store.async_save(step, self.state)
        self.extra = {"dcp_call_s": self.store.last_dcp_call_s}
        return pending


class _Snapshot(_Strategy):
    name = "snapshot"

    def __init__(self, state, directory, process_group=None):
        super().__init__(state, directory, process_group)
        store = CheckpointStore(self.directory / "snapshot" / f"rank{self.rank}", keep=1)
        self.checkpointer = SnapshotCheckpointer(state, store)

    def start(self, step):
        return self.checkpointer.snapshot(self.state, step)

    def reload(self):
        loaded = self.checkpointer.store.load_latest_good(map_location="cuda" if self.cuda else "cpu")
        _sync(self.cuda)
        return None if loaded is None else loaded[1]

    def close(self):
        self.checkpointer.wait()
        self.checkpointer = None


_CLASSES = {c.name: c for c in (_BareCopy, _TorchSave, _Dcp, _DcpAsync, _Snapshot)}


def make_strategy(name: str, state: dict, directory, process_group=None) -> _Strategy:
    """Build strategy ``name`` for ``state`` (allocating its buffers now, outside any timing)."""
    check_choice("strategy", name, STRATEGIES)
    return _CLASSES[name](state, Path(directory), process_group)


def _one_save(strategy, r: int, verify: bool, process_group, dist_on: bool, nbytes: int) -> dict:
    step = r + 1
    if verify:
        strategy.poison()
    _sync(strategy.cuda)
    if dist_on:
        torch.distributed.barrier(group=process_group)
    t0 = time.perf_counter()
    handle = strategy.start(step)
    t1 = time.perf_counter()
    handle.wait()
    _sync(strategy.cuda)
    t2 = time.perf_counter()
    row = {
        "strategy": strategy.name,
        "repeat": r,
        "nbytes": nbytes,
        "blocking_s": t1 - t0,
        "durable_s": t2 - t0 if strategy.durable else float("nan"),
        "reload_s": float("nan"),
        "dcp_call_s": strategy.extra.get("dcp_call_s", float("nan")),
    }
    if strategy.durable:
        t3 = time.perf_counter()
        loaded = strategy.reload()
        t4 = time.perf_counter()
        row["reload_s"] = t4 - t3
        if verify:
            row["bit_exact"] = loaded is not None and states_equal(local_state(loaded), local_state(strategy.state))
        del loaded
    elif verify:
        row["bit_exact"] = all(torch.equal(dst, t.reshape(-1).view(torch.uint8).cpu()) for dst, t in strategy._views)
    return row


def measure(names, state: dict, directory, repeats: int = 3, verify: bool = False, process_group=None, on_repeat=None) -> list[dict]:
    """Save ``state`` ``repeats`` times with each strategy in ``names``; one row of timings per save.

    ``names`` is one strategy name or a list. With several, the saves are *interleaved*
    (repeat 0 of every strategy, then repeat 1, ...), so that a shared machine's load drifts
    over all strategies alike and the ratios between them stay meaningful. Every strategy's
    buffers are allocated before the first save, outside any timing.

    Row keys: strategy, repeat, nbytes, blocking_s, durable_s, reload_s (NaN where the strategy
    is not durable), dcp_call_s (the dcp.save / async_save call alone; NaN for others) and,
    with ``verify``, ``bit_exact`` (the reloaded state equals ``state`` bit for bit; every buffer a
    reload or copy writes into is poisoned before each save, outside the timings, so the check
    cannot pass on bytes an earlier save left there).
    Under torchrun every rank calls this; the ranks start each save together (barrier).
    """
    names = [names] if isinstance(names, str) else list(names)
    repeats = check_int_positive("repeats", repeats)
    for name in names:
        check_choice("strategy", name, STRATEGIES)
    dist_on = torch.distributed.is_available() and torch.distributed.is_initialized()
    nbytes = state_nbytes(local_state(state))
    strategies = []
    rows = []
    try:
        template = None
        for name in names:
            st = make_strategy(name, state, directory, process_group)
            if isinstance(st, _Dcp):  # the two DCP strategies share one reload template (poisoned before each save)
                template = st.template = template if template is not None else st.template
            strategies.append(st)
        for r in range(repeats):
            for st in strategies:
                row = _one_save(st, r, verify, process_group, dist_on, nbytes)
                rows.append(row)
                if on_repeat is not None:
                    on_repeat(row)
    finally:
        for st in strategies:
            st.close()
        strategies.clear()
        gc.collect()
    order = {n: i for i, n in enumerate(names)}
    return sorted(rows, key=lambda row: (order[row["strategy"]], row["repeat"]))
