"""The checkpoint bug zoo: bugs that real checkpoint code shipped, reproduced on small tensors.

Each bug is one *invariant* (a function that says whether a save/restore implementation keeps
it) checked twice: on a buggy variant written the way the shipped code was, where it must
fail, and on the course's store, where it must hold.

1. **Mutated during staging** (PyTorch issue 144657 [@pytorch-issue-144657]): an asynchronous
   save returned before it had staged its copy, and the optimizer step that followed changed the
   tensors it was still reading. The course's saves copy before they return.
2. **Pointer before data** (fsync order): a "latest" pointer made durable before the checkpoint it
   names, so a power loss in between leaves a pointer to a file whose data never reached the disk.
   The course's store fsyncs and renames the checkpoint, fsyncs the folder, then moves the pointer.
3. **RNG and data-loader state not restored**: the weights come back, but the dropout stream and
   the data order start over, so the resumed run draws different batches and ends elsewhere.
4. **Corrupted local tier loaded** (Megatron-LM issue 5281 [@megatron-issue-5281]): after a node
   loss, a local checkpoint retrieved from a replica was loaded with no integrity check and no
   fallback to the persistent tier; training hit a NaN loss a few steps later, restarted from the
   same copy, and looped (44 identical cycles before it was cancelled). The course verifies every
   tier's checksum and skips a damaged copy, and the restart-loop guard bounds any loop that
   remains. A checksum sealed by the writer catches bytes damaged after the snapshot (in storage,
   in transit, in a holder's memory); a state that was already wrong when it was sealed passes it,
   and only the guard stops that loop.
"""
from __future__ import annotations

import builtins
import io
import os
import threading
from pathlib import Path

import pytest
import torch

from course_lib.checkpoint.dcp_safe import DcpCheckpointStore
from course_lib.checkpoint.holder import HolderClient, HolderServer
from course_lib.checkpoint.safe import CheckpointStore, CorruptCheckpointError, verify_checkpoint
from course_lib.checkpoint.state import poison_state, states_equal
from course_lib.checkpoint.strategies import SnapshotCheckpointer
from course_lib.checkpoint.tiers import TieredCheckpointer
from course_lib.faultlab.guard import NoProgressError, RestartGuard


@pytest.fixture
def two_holders():
    hs = [HolderServer().start_thread() for _ in range(2)]
    yield hs
    for h in hs:
        h.stop()


def _state():
    g = torch.Generator().manual_seed(1)
    return {"w": torch.randn(256, generator=g), "m": torch.randn(256, generator=g), "step": 3}


def _clone(state):
    return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in state.items()}


# ----- 1. tensors mutated after async_save returned, before staging finished -----
class BuggyAsyncSave:
    """Returns at once and stages (reads the live tensors) later, on a background thread: the shape
    of the bug. The ``gate`` makes the race deterministic: staging starts when the test opens it."""

    def __init__(self, directory):
        self.store = CheckpointStore(directory)

    def save(self, state, step):
        gate = threading.Event()

        def stage_then_write():
            gate.wait()
            self.store.save(step, state)  # reads the live tensors now

        t = threading.Thread(target=stage_then_write)
        t.start()
        return gate, t.join

    def load(self):
        return self.store.load_latest_good()[1]


class CourseSnapshot:
    """The course's snapshot: copy into its own buffers, then persist in the background."""

    def __init__(self, directory):
        self.ckpt = None
        self.store = CheckpointStore(directory)

    def save(self, state, step):
        self.ckpt = self.ckpt or SnapshotCheckpointer(state, self.store)
        self.ckpt.snapshot(state, step)
        return None, self.ckpt.wait

    def load(self):
        return self.store.load_latest_good()[1]


class CourseDcpAsync:
    """The course's verified DCP store, ``async_save`` (staging on the calling thread)."""

    def __init__(self, directory):
        self.store = DcpCheckpointStore(directory)
        self.template = None

    def save(self, state, step):
        self.template = poison_state(_clone(state))  # a load that writes nothing cannot pass
        pending = self.store.async_save(step, state)
        return None, pending.wait

    def load(self):
        self.store.load_latest_good(self.template)
        self.store.close()
        return self.template


def saves_the_state_of_the_call(impl_cls, directory) -> bool:
    impl = impl_cls(directory)
    state = _state()
    before = _clone(state)
    gate, wait = impl.save(state, 3)
    state["w"].add_(1.0)  # the optimizer step right after the call returned
    state["m"].mul_(0.5)
    if gate is not None:
        gate.set()
    wait()
    return states_equal(impl.load(), before)


def test_bug_mutation_during_staging(tmp_path):
    assert not saves_the_state_of_the_call(BuggyAsyncSave, tmp_path / "buggy")
    assert saves_the_state_of_the_call(CourseSnapshot, tmp_path / "snapshot")
    assert saves_the_state_of_the_call(CourseDcpAsync, tmp_path / "dcp")


# ----- 2. the "latest" pointer moved before the checkpoint it names was durable -----
class Crash(BaseException):
    """The power goes out (a BaseException, so no writer's clean-up ``except Exception`` runs)."""


class Disk:
    """A model of a disk with a page cache, in ``root``: data written to a file is lost at a power
    loss unless the file was fsynced after it was written (renames are kept: the case that left
    zero-length files behind). :meth:`run` crashes at the n-th operation (open for writing,
    fsync, rename) and then loses every unsynced file's data."""

    def __init__(self, root: Path, monkeypatch):
        root.mkdir(parents=True, exist_ok=True)
        self.root = os.path.realpath(root)
        self.dirty: set[str] = set()
        self.ops = 0
        self.crash_at = None
        real_open, real_fsync, real_replace = builtins.open, os.fsync, os.replace

        def tick():
            self.ops += 1
            if self.crash_at is not None and self.ops >= self.crash_at:
                raise Crash()

        def mine(path) -> bool:
            return os.path.realpath(path).startswith(self.root)

        def open_(file, mode="r", *a, **kw):
            if isinstance(file, (str, os.PathLike)) and mine(os.fspath(file)) and any(c in mode for c in "wax+"):
                tick()
                self.dirty.add(os.path.realpath(file))
            return real_open(file, mode, *a, **kw)

        def fsync(fd):
            tick()
            real_fsync(fd)
            self.dirty.discard(os.readlink(f"/proc/self/fd/{fd}"))

        def replace(src, dst, *a, **kw):
            tick()
            real_replace(src, dst, *a, **kw)
            src, dst = os.path.realpath(src), os.path.realpath(dst)
            if src in self.dirty:
                self.dirty.discard(src)
                self.dirty.add(dst)
            else:
                self.dirty.discard(dst)

        monkeypatch.setattr(builtins, "open", open_)
        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "replace", replace)

    def run(self, fn, crash_at=None) -> bool:
        """Run ``fn``; True if it completed, False if the power went out (unsynced data then lost)."""
        self.ops, self.crash_at = 0, crash_at
        try:
            fn()
            return True
        except Crash:
            self.power_loss()
            return False
        finally:
            self.crash_at = None

    def power_loss(self):
        """Every file whose data was not fsynced since it was written loses it (zero length)."""
        for path in self.dirty:
            if os.path.exists(path):
                os.truncate(path, 0)
        self.dirty.clear()

    def settle(self):
        """Time passes: the kernel writes the page cache back (nothing is dirty any more)."""
        self.dirty.clear()


class BuggyPointerFirst:
    """Writes the checkpoint (no fsync), then the pointer, and fsyncs the pointer only; loads what
    the pointer names."""

    def __init__(self, directory: Path):
        self.dir = directory
        directory.mkdir(parents=True, exist_ok=True)

    def save(self, step, obj):
        name = f"ckpt-{step:010d}.pt"
        torch.save(obj, str(self.dir / name))
        with open(self.dir / "LATEST", "w") as fh:
            fh.write(name)
            fh.flush()
            os.fsync(fh.fileno())

    def load(self):
        name = (self.dir / "LATEST").read_text()
        return torch.load(self.dir / name, weights_only=True)


class CourseStore:
    def __init__(self, directory: Path):
        self.store = CheckpointStore(directory, keep=3)

    def save(self, step, obj):
        self.store.save(step, obj)

    def load(self):
        pointed = self.store.latest_pointer()
        if pointed is not None:  # the pointer never names a checkpoint that is not durable
            verify_checkpoint(self.store.path_for(pointed))
        got = self.store.load_latest_good()
        return None if got is None else got[1]


def survives_power_loss_at_every_point(impl_cls, root: Path, monkeypatch) -> bool:
    disk = Disk(root, monkeypatch)
    probe = impl_cls(root / "probe")
    disk.run(lambda: probe.save(1, {"step": 1}))
    disk.run(lambda: probe.save(2, {"step": 2}))
    n_ops = disk.ops  # operations of one save after the first
    for crash_at in range(1, n_ops + 2):  # every operation, and just after the save returned
        impl = impl_cls(root / f"crash-{crash_at}")
        disk.run(lambda: impl.save(1, {"step": 1, "w": torch.ones(8)}))
        disk.settle()
        returned = disk.run(lambda: impl.save(2, {"step": 2, "w": torch.full((8,), 2.0)}), crash_at=crash_at)
        if returned:
            disk.power_loss()  # the power goes out right after the save returned
        try:
            got = impl.load()
        except (EOFError, RuntimeError, CorruptCheckpointError, OSError):
            return False
        if got is None or got["step"] not in (1, 2) or not torch.equal(got["w"], torch.full((8,), float(got["step"]))):
            return False
    return True


def test_bug_pointer_moved_before_the_checkpoint_was_durable(tmp_path, monkeypatch):
    assert not survives_power_loss_at_every_point(BuggyPointerFirst, tmp_path / "buggy", monkeypatch)
    assert survives_power_loss_at_every_point(CourseStore, tmp_path / "course", monkeypatch)


# ----- 3. RNG and data-loader state not restored -----
STEPS, CRASH_AFTER, BATCH = 10, 6, 4


def _setup():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Dropout(0.3), torch.nn.Linear(8, 1))
    gen = torch.Generator().manual_seed(42)
    x = torch.randn(16, 5, generator=torch.Generator().manual_seed(7))
    data = torch.utils.data.TensorDataset(x, x.sum(1, keepdim=True))
    loader = torch.utils.data.DataLoader(data, batch_size=BATCH, shuffle=True, generator=gen)
    return model, gen, loader


def _train(model, gen, loader, start, stop, epoch_gen_state, on_step=None):
    """Steps ``start+1 .. stop``; an epoch is len(loader) steps; the loader's shuffle comes from ``gen``."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    per_epoch = len(loader)
    step = start
    while step < stop:
        gen.set_state(epoch_gen_state)  # the generator as it was when this epoch began
        skip = step % per_epoch
        for i, (x, y) in enumerate(loader):
            if i < skip:
                continue  # batches this epoch already trained on
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            step += 1
            if on_step is not None:
                on_step(step, epoch_gen_state)
            if step == stop:
                return
        epoch_gen_state = gen.get_state()


def _params(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def uninterrupted():
    model, gen, loader = _setup()
    _train(model, gen, loader, 0, STEPS, gen.get_state())
    return _params(model)


def buggy_resume(tmp_path):
    """Saves and restores the weights only; the resumed process starts its RNG and loader anew."""
    model, gen, loader = _setup()
    saved = {}
    _train(model, gen, loader, 0, CRASH_AFTER, gen.get_state(),
           on_step=lambda s, _: saved.update(w=_params(model)) if s == CRASH_AFTER else None)
    model, gen, loader = _setup()  # the restarted process
    model.load_state_dict(saved["w"])
    _train(model, gen, loader, CRASH_AFTER, STEPS, gen.get_state())
    return _params(model)


def course_resume(tmp_path, holders):
    """Snapshots weights, the RNG state and the loader position (the generator's state at the
    epoch's start, and the step) through the course's two-tier checkpoint."""
    model, gen, loader = _setup()
    box = {}

    def snap(step, epoch_gen_state):
        state = {"model": _params(model), "rng": torch.get_rng_state(), "loader_gen": epoch_gen_state.clone(), "step": step}
        box["ckpt"] = box.get("ckpt") or TieredCheckpointer(state, local_holder=holders[0].address, peers=[holders[1].address],
                                                            persist_dir=tmp_path, job="zoo")
        box["ckpt"].snapshot(state, step)

    _train(model, gen, loader, 0, CRASH_AFTER, gen.get_state(), on_step=snap)
    box["ckpt"].close()
    model, gen, loader = _setup()  # the restarted process
    template = {"model": _params(model), "rng": torch.get_rng_state(), "loader_gen": gen.get_state(), "step": 0}
    ckpt = TieredCheckpointer(template, local_holder=holders[0].address, peers=[holders[1].address], persist_dir=tmp_path, job="zoo")
    got = ckpt.restore(template)
    model.load_state_dict(template["model"])
    torch.set_rng_state(template["rng"])
    _train(model, gen, loader, got.step, STEPS, template["loader_gen"])
    return _params(model)


def test_bug_rng_and_data_loader_state_not_restored(tmp_path, two_holders):
    ref = uninterrupted()
    assert not states_equal(buggy_resume(tmp_path), ref)
    assert states_equal(course_resume(tmp_path, two_holders), ref)


# ----- 4. a corrupted local tier loaded, training resumed on garbage, restarted forever -----
def _corrupt_tensor_bytes(data: bytes, tensor: torch.Tensor) -> bytes:
    """Overwrite the first 16 bytes of ``tensor``'s data inside a torch.save payload with 0xFF (NaN):
    storage damage that torch.load does not notice."""
    pattern = tensor.numpy().tobytes()
    i = data.find(pattern)
    assert i >= 0
    return data[:i] + b"\xff" * 16 + data[i + 16:]


def train_from(state, steps=3):
    """A few steps; a NaN loss is a crash (as a diverged job's loss check would make it)."""
    w = state["w"].clone()
    for _ in range(steps):
        w = w * 0.9 + 0.1
        if not torch.isfinite(w).all():
            raise FloatingPointError("loss is NaN")
    return w


def restart_loop(load_local, max_attempts: int = 10, guard: RestartGuard | None = None):
    """Restart until training finishes; returns (attempts, finished, trained_on_garbage)."""
    garbage = False
    for attempt in range(1, max_attempts + 1):
        state = load_local()
        garbage |= not torch.isfinite(state["w"]).all().item()
        try:
            train_from(state)
            return attempt, True, garbage
        except FloatingPointError:
            if guard is not None:
                guard.after_failure(progress=state["step"], node="n0", rank=0)
    return max_attempts, False, garbage


def test_bug_corrupted_local_tier_loaded_then_restarted_forever(tmp_path, two_holders):
    state = {"w": torch.full((64,), 1.5), "step": 4}
    # buggy: the local copy is a plain torch.save file, loaded unverified on every restart
    buf = io.BytesIO()
    torch.save(state, buf)
    local = tmp_path / "local.pt"
    local.write_bytes(_corrupt_tensor_bytes(buf.getvalue(), state["w"]))
    attempts, finished, garbage = restart_loop(lambda: torch.load(local, weights_only=True))
    assert (finished, garbage, attempts) == (False, True, 10)  # garbage, restarted to the cap ("forever")
    # the guard alone already bounds that loop: stopped after 3 restarts without progress
    with pytest.raises(NoProgressError, match="3 restarts in a row made no progress"):
        restart_loop(lambda: torch.load(local, weights_only=True), guard=RestartGuard())

    # the course's store: the same damage in the own-memory tier is detected and skipped
    own, buddy = two_holders
    ckpt = TieredCheckpointer(state, local_holder=own.address, peers=[buddy.address], persist_dir=tmp_path / "p", job="zoo")
    ckpt.snapshot(state, 4, persist=False)
    ckpt.wait()
    c = HolderClient(own.address)
    c.put("zoo", 0, 4, _corrupt_tensor_bytes(c.get("zoo", 0, 4), state["w"]), role="own")

    def load_verified():
        got = ckpt.restore()
        assert got.tier == "buddy" and "sha256 mismatch" in got.skipped[0]
        return got.state

    attempts, finished, garbage = restart_loop(load_verified, guard=RestartGuard())
    assert (finished, garbage, attempts) == (True, False, 1)
