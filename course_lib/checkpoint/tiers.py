"""A two-tier checkpoint: a snapshot in this node's memory and in a buddy node's memory, and every
k-th one persisted through the course's checksummed store (notebook 11 uses it).

Why two tiers: a snapshot in host memory is cheap enough to take every few steps, so a restore
from it rewinds little work, and reading it back needs no shared file system that every rank of
the job hits at once (on one machine the read itself is not always faster than a local disk's:
benchmarks/results/tiers_restore.md). But a failure that takes the whole host (power supply,
chassis, CPU, memory, host maintenance) takes that memory with it. A copy in another node's memory (its *buddy*) survives the loss of
one node; only when a node *and* its buddy are lost does the job fall back to the last persisted
checkpoint, which is older.

Where the copies live. torchrun restarts every worker after any failure, so a copy held inside
a worker process dies with it. Each node therefore runs one *holder*
(:mod:`course_lib.checkpoint.holder`, a small TCP server beside the node's torchrun agent): it
outlives the workers and dies with the node. Rank ``r`` sends its snapshot to its own node's
holder (tier ``own``) and to the holder of the next node in a ring of the job's nodes (tier
``buddy``); ranks learn each other's holder addresses with one ``all_gather_object`` over the
job's process group, so no tier assumes a shared file system. The persisted tier is a
:class:`~course_lib.checkpoint.safe.CheckpointStore` per shard in a folder all nodes see.

What is on the training step's critical path: the copy of the state into preallocated host
buffers (:class:`~course_lib.checkpoint.strategies.SnapshotCheckpointer`'s snapshot; on a GPU a
device-to-host copy on a side stream into pinned memory), and nothing else as long as the
previous snapshot's replication has finished. A
background thread then serialises the buffers, seals them (sha256 footer), sends them to both
holders and, every ``persist_every``-th snapshot, writes them to the store. The next snapshot
waits for that thread, so a snapshot interval shorter than the replication time makes the
training loop wait (``TieredCheckpointer.last_timings`` shows both).

Restore (:meth:`TieredCheckpointer.restore`, a collective: every rank calls it): each rank lists
the steps every reachable holder and the store hold for its shard; the ranks agree on the
newest step every rank can load; for that step each rank tries its own node's memory, then the
other nodes' (the buddy's copy), then the persisted file, verifying each candidate's checksum;
a copy that is missing, truncated or altered is skipped (and named in ``Restored.skipped``),
never loaded. If some rank cannot load the step, all ranks move to the next older one.

Guide for a multi-node lab (network namespaces, one torchrun agent per node)::

    # on every node, before its agent: the node's memory
    python course_lib/checkpoint/holder.py --host <node address> --port 0      # prints HOLDER addr
    # in every worker (after init_process_group; a gloo group if the default one is NCCL):
    ckpt = TieredCheckpointer(state, local_holder=os.environ["TIERS_HOLDER"],
                              persist_dir=shared_dir, job=run_id, every=2, persist_every=3)
    got = ckpt.restore(state)            # None on a fresh start; else got.step, got.tier
    for step in ...:
        ...train...
        ckpt.maybe_snapshot(state, step)  # snapshots every `every` steps, persists every k-th
    ckpt.close()

Killing a node's holder is losing that node's memory; a hot spare starts a fresh, empty holder
and restores its shard from the buddy's copy. ``course_lib/nodelab/tiers_job.py`` is a
complete worker and :func:`course_lib.nodelab.tierlab.run_tier_lab` the loopback lab (one
torchrun agent per "node" on 127.0.0.1) that the tests drive.
"""
from __future__ import annotations

import hashlib
import io
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .._validate import check_int_non_negative, check_int_positive, check_positive
from .holder import HolderClient
from .safe import CheckpointStore, CorruptCheckpointError, seal, unseal
from .state import iter_tensors
from .strategies import SnapshotCheckpointer, local_state

__all__ = ["TIERS", "Restored", "TieredCheckpointer", "buddy_ring", "state_digest", "load_sealed"]

#: restore order for one step: this node's memory, another node's memory, the persisted store
TIERS = ("own", "buddy", "persisted")


def buddy_ring(holders: list[str]) -> dict[str, str | None]:
    """Each node's buddy: the next distinct node (holder address) in order of first appearance.

    ``holders`` is the holder address of every rank, in rank order (several ranks of one node
    share one). With a single node there is no buddy (``None``).
    """
    nodes = list(dict.fromkeys(holders))
    if len(nodes) < 2:
        return {n: None for n in nodes}
    return {n: nodes[(i + 1) % len(nodes)] for i, n in enumerate(nodes)}


def state_digest(state) -> str:
    """sha256 over every tensor's name, dtype, shape and bytes and every other leaf, in key order."""
    h = hashlib.sha256()
    for key, t in iter_tensors(local_state(state)):
        t = t.detach().cpu().contiguous()
        h.update(f"{key}:{t.dtype}:{tuple(t.shape)}:".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())

    def leaves(obj, prefix=""):
        for k in sorted(obj, key=str):
            v = obj[k]
            if isinstance(v, dict):
                yield from leaves(v, f"{prefix}{k}/")
            elif not isinstance(v, torch.Tensor):
                yield f"{prefix}{k}", v

    for key, v in leaves(state):
        h.update(f"{key}={v!r};".encode())
    return h.hexdigest()


def load_sealed(data: bytes, name: str):
    """Verify sealed bytes (:func:`~course_lib.checkpoint.safe.unseal`) and ``torch.load`` them.

    ``weights_only=True``: a copy that arrived over the network is loaded without running pickled
    code. Raises :class:`CorruptCheckpointError` on a failed check.
    """
    payload = unseal(data, name)
    try:
        return torch.load(io.BytesIO(payload), map_location="cpu", weights_only=True)
    except Exception as exc:  # a checksum-valid payload that torch cannot read is not a checkpoint
        raise CorruptCheckpointError(f"{name}: verified bytes are not a loadable state ({type(exc).__name__}: {exc})") from exc


@dataclass(frozen=True)
class Restored:
    """The outcome of :meth:`TieredCheckpointer.restore` on one rank.

    step: the step resumed from (the same on every rank). tier: ``own``, ``buddy`` or
    ``persisted`` (where *this* rank's shard came from). source: the holder address or file.
    state: the loaded state (CPU tensors). skipped: one line per candidate that failed its
    check or could not be reached. seconds: the restore's wall time on this rank.
    """

    step: int
    tier: str
    source: str
    state: dict = field(repr=False)
    skipped: tuple = ()
    seconds: float = 0.0


def _dist():
    return torch.distributed.is_available() and torch.distributed.is_initialized()


class TieredCheckpointer(SnapshotCheckpointer):
    """Snapshot -> own memory + buddy's memory (+ persisted every k-th), restored newest-verified first.

    state: the rank's training state (nested dict of tensors and plain values; DTensors use their
        local shard); the snapshot buffers are allocated once from it.
    local_holder: ``host:port`` of this node's holder.
    persist_dir: folder of the persisted tier (``shard-<N>`` subfolders); all nodes may share it.
    job: a name for this run (holders may serve several). shard: whose state this is (default:
        the rank). every: steps between snapshots (:meth:`maybe_snapshot`). persist_every: every
        k-th snapshot is also persisted. keep: persisted checkpoints kept per shard.
    group: process group for the address exchange and the restore agreement (gloo; default the
        default group; without torch.distributed the checkpointer works for one process).
    timeout_s: bound on each holder request (a dead node's holder costs at most this).
    peers: more holder addresses to replicate to and restore from, besides those of the other
        ranks (exchanged over the process group): for one process, or a node outside the group.
    """

    def __init__(self, state: dict, *, local_holder: str, persist_dir, job: str = "job", shard: int | None = None,
                 every: int = 1, persist_every: int = 1, keep: int = 2, group=None, timeout_s: float = 5.0,
                 peers: tuple = ()):
        self.rank = torch.distributed.get_rank(group) if _dist() else 0
        self.world = torch.distributed.get_world_size(group) if _dist() else 1
        self.shard = check_int_non_negative("shard", self.rank if shard is None else shard)
        self.every = check_int_positive("every", every)
        self.persist_every = check_int_positive("persist_every", persist_every)
        self.timeout_s = check_positive("timeout_s", timeout_s)
        self.job = str(job)
        self.group = group
        store = CheckpointStore(Path(persist_dir) / f"shard-{self.shard}", keep=keep)
        super().__init__(state, store)
        self.local_holder = str(local_holder)
        holders = [None] * self.world
        if _dist():
            torch.distributed.all_gather_object(holders, self.local_holder, group=group)
        else:
            holders = [self.local_holder]
        #: every rank's holder address, in rank order, then the extra peers
        self.holders = holders + [str(p) for p in peers if str(p) not in holders]
        self.buddy = buddy_ring(self.holders)[self.local_holder]
        self._clients: dict[str, HolderClient] = {}
        #: seconds of the last snapshot: blocking_s (the training loop waited: the previous replication, then
        #: the copy), then the background phases serialize_s, own_s, buddy_s, persist_s, background_s
        self.last_timings: dict = {}
        #: copies that could not be sent (e.g. the buddy's node is gone): (step, address, error)
        self.replication_errors: list = []
        #: seconds of the last restore: list_s (asking every tier), fetch_s (bytes from a holder or
        #: the disk), verify_load_s (sha256 + torch.load), summed over the candidates tried
        self.last_restore: dict = {}

    # ----- writing -----
    def _client(self, address: str) -> HolderClient:
        if address not in self._clients:
            self._clients[address] = HolderClient(address, self.timeout_s)
        return self._clients[address]

    def snapshot(self, state: dict, step: int, persist: bool | None = None) -> "TieredCheckpointer":
        """Copy ``state`` now (blocking), then replicate it, and persist it when ``persist``
        (default: when ``step`` is a multiple of ``every * persist_every``), in the background."""
        step = check_int_non_negative("step", step)
        t0 = time.perf_counter()
        self.wait()  # the previous copy is replicated (its thread reads the flag set below)
        self._persist_now = (step % (self.every * self.persist_every) == 0) if persist is None else bool(persist)
        # the record exists before the background thread starts, and that thread fills in the record it was started
        # with: a thread that finishes before this call returns still has its phases recorded (replacing the record
        # after the start lost them)
        self.last_timings = record = {"step": step}
        super().snapshot(state, step)
        record["blocking_s"] = time.perf_counter() - t0
        return self

    def maybe_snapshot(self, state: dict, step: int):
        """:meth:`snapshot` when ``step`` is a multiple of ``every`` (returns whether it did)."""
        if step % self.every:
            return False
        self.snapshot(state, step)
        return True

    def _persist(self, step):  # runs in the background thread of SnapshotCheckpointer.snapshot
        record = self.last_timings  # this snapshot's record, made before the thread started (see snapshot)
        try:
            t = {}
            t0 = time.perf_counter()
            buf = io.BytesIO()
            torch.save(self.buffers, buf)
            payload = buf.getvalue()
            sealed = seal(payload)
            t["serialize_s"] = time.perf_counter() - t0
            t["nbytes"] = len(sealed)
            for role, address in (("own", self.local_holder), ("buddy", self.buddy)):
                if address is None:
                    continue
                t1 = time.perf_counter()
                try:
                    self._client(address).put(self.job, self.shard, step, sealed, role=role, writer=self.local_holder)
                except OSError as exc:
                    self.replication_errors.append((step, address, f"{type(exc).__name__}: {exc}"))
                t[f"{role}_s"] = time.perf_counter() - t1
            if self._persist_now:
                t1 = time.perf_counter()
                self.store.commit(step, lambda fh: fh.write(payload))
                t["persist_s"] = time.perf_counter() - t1
            t["background_s"] = time.perf_counter() - t0
            record.update(t)
        except BaseException as exc:  # re-raised in wait()
            self._error = exc

    # ----- restoring -----
    def _ordered_holders(self) -> list[str]:
        """This node's holder first, then the others in ring order starting at the buddy."""
        nodes = list(dict.fromkeys(self.holders))
        if self.local_holder not in nodes:
            nodes.insert(0, self.local_holder)
        i = nodes.index(self.local_holder)
        return nodes[i:] + nodes[:i]

    def _listing(self, skipped: list) -> dict[str, set]:
        out = {}
        for address in self._ordered_holders():
            try:
                out[address] = {int(m["step"]) for m in self._client(address).list(self.job, self.shard)}
            except OSError as exc:
                skipped.append(f"holder {address} unreachable ({type(exc).__name__})")
        return out

    def _load_step(self, step: int, listing: dict, skipped: list):
        for address, steps in listing.items():
            if step not in steps:
                continue
            tier = "own" if address == self.local_holder else "buddy"
            name = f"{tier} copy of shard {self.shard} step {step} at {address}"
            try:
                t0 = time.perf_counter()
                data = self._client(address).get(self.job, self.shard, step)
                self.last_restore["fetch_s"] += time.perf_counter() - t0
            except OSError as exc:
                skipped.append(f"{name}: unreachable ({type(exc).__name__})")
                continue
            if data is None:
                skipped.append(f"{name}: gone")
                continue
            try:
                return tier, address, self._verify_load(data, step, name)
            except CorruptCheckpointError as exc:
                skipped.append(str(exc))
        path = self.store.path_for(step)
        if path.exists():
            name = f"persisted copy of shard {self.shard} step {step} at {path}"
            try:
                t0 = time.perf_counter()
                data = path.read_bytes()
                self.last_restore["fetch_s"] += time.perf_counter() - t0
                return "persisted", str(path), self._verify_load(data, step, name)
            except (CorruptCheckpointError, OSError) as exc:
                skipped.append(str(exc))
        return None

    def _verify_load(self, data, step: int, name: str):
        t0 = time.perf_counter()
        try:
            return self._checked(load_sealed(data, name), step, name)
        finally:
            self.last_restore["verify_load_s"] += time.perf_counter() - t0

    @staticmethod
    def _checked(obj, step: int, name: str):
        if not isinstance(obj, dict) or obj.get("step", step) != step:
            raise CorruptCheckpointError(f"{name}: holds step {obj.get('step') if isinstance(obj, dict) else '?'}, not {step}")
        return obj

    def _all_agree(self, ok: bool) -> bool:
        if not _dist():
            return ok
        flag = torch.tensor([1 if ok else 0], dtype=torch.int32)
        torch.distributed.all_reduce(flag, op=torch.distributed.ReduceOp.MIN, group=self.group)
        return bool(flag.item())

    def candidate_steps(self, listing: dict) -> list[int]:
        """Steps that every rank has in some tier (unverified), newest first (a collective)."""
        mine = set(self.store.steps())
        for steps in listing.values():
            mine |= steps
        if _dist():
            every = [None] * self.world
            torch.distributed.all_gather_object(every, sorted(mine), group=self.group)
            common = set(every[0]).intersection(*map(set, every[1:]))
        else:
            common = mine
        return sorted(common, reverse=True)

    def restore(self, state: dict | None = None) -> Restored | None:
        """Load the newest step every rank can load, tier by tier, each copy verified (a collective).

        When ``state`` is given, its tensors are overwritten in place with the loaded ones and its
        other leaves set. Returns :class:`Restored`, or None when no tier holds a usable step.
        """
        self.wait()
        t0 = time.perf_counter()
        self.last_restore = {"list_s": 0.0, "fetch_s": 0.0, "verify_load_s": 0.0}
        skipped: list[str] = []
        listing = self._listing(skipped)
        self.last_restore["list_s"] = time.perf_counter() - t0
        for step in self.candidate_steps(listing):
            got = self._load_step(step, listing, skipped)
            if self._all_agree(got is not None):
                tier, source, obj = got
                if state is not None:
                    _assign(state, obj)
                return Restored(step, tier, source, obj, tuple(skipped), time.perf_counter() - t0)
            if got is not None:
                skipped.append(f"step {step}: loadable here, not on every rank")
        return None

    def close(self) -> None:
        """Wait for the background copy, then close the holder connections."""
        try:
            self.wait()
        finally:
            for c in self._clients.values():
                c.close()
            self._clients.clear()


def _assign(dst: dict, src: dict) -> None:
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _assign(dst[k], v)
        elif isinstance(v, torch.Tensor) and isinstance(dst.get(k), torch.Tensor):
            with torch.no_grad():
                dst[k].copy_(v)
        else:
            dst[k] = v

