"""Verified, atomically committed DCP checkpoints with a latest-good fallback (notebook 05).

``torch.distributed.checkpoint`` (DCP) writes one folder per checkpoint: a ``.metadata`` file
and one ``__<rank>_<i>.distcp`` file per rank. It fsyncs the files, but it neither checksums
them nor commits the folder atomically. This module adds both, the same guarantees that
:mod:`course_lib.checkpoint.safe` gives a single file:

* DCP writes into a hidden ``.dcp-<step>.tmp`` folder;
* after DCP has finished, every rank hashes the files it wrote (sha256), rank 0 gathers the
  digests, writes ``MANIFEST.sha256`` (itself checksummed by :func:`write_atomic`), fsyncs,
  renames the folder to ``dcp-<step>`` and fsyncs the parent: a folder under a final name is
  always complete;
* loading verifies the manifest (each rank the shard files it wrote, and the sizes of all)
  and, when the newest checkpoint fails, falls back to the previous one; under torchrun the
  ranks agree (all-reduce) on the step they load, so no rank loads a different step.

Works in one process (no process group) and under ``torchrun`` (pass the process group DCP
should use; on NCCL jobs a separate gloo group for checkpoint collectives is the usual choice).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import threading
import time
import warnings
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp

from .._validate import check_int_non_negative, check_int_positive
from .safe import CorruptCheckpointError, _read_verified, fsync_dir, write_atomic

__all__ = [
    "MANIFEST_NAME",
    "sha256_file",
    "write_dcp_manifest",
    "verify_dcp_checkpoint",
    "DcpCheckpointStore",
    "PendingDcpSave",
]

MANIFEST_NAME = "MANIFEST.sha256"

# DCP warns on every single-process call that it "assumes the intent is to save in a single
# process": that is exactly our intent (no_dist=True), so the warning is silenced here only.
warnings.filterwarnings("ignore", message="torch.distributed is disabled, unavailable or uninitialized", category=UserWarning)
_CHUNK = 8 * 2**20


def sha256_file(path) -> tuple[str, int]:
    """(hex sha256, size in bytes) of a file, read in 8 MiB chunks."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(_CHUNK)
            if not chunk:
                break
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def _rank_world(pg):
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(pg), dist.get_world_size(pg)
    return 0, 1


def _own_files(directory: Path, rank: int, world: int) -> list[Path]:
    """The files of a DCP folder this rank wrote (all of them in one process)."""
    if world == 1:
        return sorted(p for p in directory.iterdir() if p.is_file() and p.name != MANIFEST_NAME)
    files = sorted(directory.glob(f"__{rank}_*.distcp"))
    if rank == 0 and (directory / ".metadata").exists():
        files.append(directory / ".metadata")
    return files


def write_dcp_manifest(directory, digests: dict | None = None) -> Path:
    """Write ``MANIFEST.sha256`` (``sha256 size name`` per line) for a finished DCP folder.

    ``digests`` maps file name -> (sha256, size); when None every file in the folder is hashed.
    """
    directory = Path(directory)
    if digests is None:
        digests = {p.name: sha256_file(p) for p in _own_files(directory, 0, 1)}
    if ".metadata" not in digests:
        raise CorruptCheckpointError(f"{directory}: no .metadata file: DCP did not finish this checkpoint")
    text = "".join(f"{sha} {size} {name}\n" for name, (sha, size) in sorted(digests.items()))
    return write_atomic(directory / MANIFEST_NAME, lambda fh: fh.write(text.encode()))


def _read_manifest(directory: Path) -> dict:
    try:
        text = bytes(_read_verified(directory / MANIFEST_NAME)).decode()
    except FileNotFoundError:
        raise CorruptCheckpointError(f"{directory}: no {MANIFEST_NAME} (the save never finished)") from None
    entries = {}
    for line in text.splitlines():
        sha, size, name = line.split(" ", 2)
        entries[name] = (sha, int(size))
    return entries


def verify_dcp_checkpoint(directory, rank: int | None = None, world_size: int = 1) -> None:
    """Raise :class:`CorruptCheckpointError` unless the DCP folder matches its manifest.

    Every file the manifest lists must exist with its recorded size. Checksums are computed for
    all files (``rank`` None) or, under torchrun, for the files that ``rank`` wrote plus
    ``.metadata``; together the ranks check every file once.
    """
    directory = Path(directory)
    entries = _read_manifest(directory)
    for name, (_sha, size) in entries.items():
        p = directory / name
        if not p.is_file():
            raise CorruptCheckpointError(f"{p}: listed in the manifest but missing")
        if p.stat().st_size != size:
            raise CorruptCheckpointError(f"{p}: {p.stat().st_size} bytes, manifest says {size} (truncated?)")
    if rank is None or world_size == 1:
        to_hash = list(entries)
    else:
        to_hash = [n for n in entries if n.startswith(f"__{rank}_") or n == ".metadata"]
    for name in to_hash:
        sha, _size = sha256_file(directory / name)
        if sha != entries[name][0]:
            raise CorruptCheckpointError(f"{directory / name}: sha256 mismatch: the file was altered or corrupted")


class PendingDcpSave:
    """A DCP save in flight. :meth:`wait` returns the committed folder once it is durable.

    In one process a background thread waits for DCP and commits (hash, manifest, rename), so
    the training loop never blocks on it. Under torchrun the commit needs a collective, so it
    runs in :meth:`wait` on the calling thread.
    """

    def __init__(self, store: "DcpCheckpointStore", step: int, tmp: Path, future):
        self._store, self.step, self._tmp, self._future = store, step, tmp, future
        self._result = None
        self._error = None
        self._thread = None
        if store.world_size == 1:
            self._thread = threading.Thread(target=self._finish_in_background, name=f"dcp-commit-{step}", daemon=True)
            self._thread.start()

    def _finish_in_background(self):
        try:
            self._future.result()
            self._result = self._store._commit(self.step, self._tmp)
        except BaseException as exc:  # re-raised in wait()
            self._error = exc

    def done(self) -> bool:
        if self._thread is not None:
            return not self._thread.is_alive()
        return self._future.done()

    def wait(self) -> Path:
        if self._thread is not None:
            self._thread.join()
            if self._error is not None:
                raise self._error
            return self._result
        if self._result is None:
            self._future.result()
            self._result = self._store._commit(self.step, self._tmp)
        return self._result


class DcpCheckpointStore:
    """Step-numbered DCP checkpoints in a folder, verified on load, with a ``LATEST`` pointer.

    >>> store = DcpCheckpointStore(folder, keep=2)            # doctest: +SKIP
    >>> store.save(step=10, state=state)                      # blocking: dcp.save + commit
    >>> pending = store.async_save(step=20, state=state)      # returns after staging
    >>> pending.wait()                                        # durable
    >>> step, state = store.load_latest_good(template)        # verified, falls back
    """

    POINTER = "LATEST"
    _NAME = re.compile(r"^dcp-(\d{10})$")

    def __init__(self, directory, keep: int = 3, process_group=None):
        self.directory = Path(directory)
        self.keep = check_int_positive("keep", keep)
        self.process_group = process_group
        self.rank, self.world_size = _rank_world(process_group)
        if self.rank == 0:
            self.directory.mkdir(parents=True, exist_ok=True)
        self._barrier()
        #: seconds spent inside the last dcp.save / dcp.async_save call (without the commit)
        self.last_dcp_call_s = float("nan")
        self._stager = None
        self._pending = None

    # -- names -------------------------------------------------------------------------
    def path_for(self, step: int) -> Path:
        return self.directory / f"dcp-{check_int_non_negative('step', step):010d}"

    def _tmp_for(self, step: int) -> Path:
        return self.directory / f".{self.path_for(step).name}.tmp"

    def steps(self) -> list[int]:
        """Steps of the committed checkpoint folders, oldest first (verified or not)."""
        found = []
        for p in self.directory.iterdir():
            m = self._NAME.match(p.name)
            if m and p.is_dir():
                found.append(int(m.group(1)))
        return sorted(found)

    def latest_pointer(self) -> int | None:
        try:
            name = bytes(_read_verified(self.directory / self.POINTER)).decode()
        except (FileNotFoundError, CorruptCheckpointError, UnicodeDecodeError):
            return None
        m = self._NAME.match(name)
        return int(m.group(1)) if m else None

    # -- collectives ---------------------------------------------------------------------
    def _barrier(self):
        if self.world_size > 1:
            dist.barrier(group=self.process_group)

    def _dcp_kwargs(self):
        return {"process_group": self.process_group, "no_dist": self.world_size == 1}

    # -- saving --------------------------------------------------------------------------
    def _prepare_tmp(self, step: int) -> Path:
        tmp = self._tmp_for(step)
        if self.rank == 0:
            shutil.rmtree(tmp, ignore_errors=True)  # leftovers of a crashed writer
            tmp.mkdir(parents=True)
        self._barrier()
        return tmp

    def save(self, step: int, state: dict) -> Path:
        """``dcp.save`` into a temporary folder, then commit it. Returns the final folder.

        An async save still in flight is waited for first (one commit at a time).
        """
        if self._pending is not None:
            self._pending.wait()
            self._pending = None
        tmp = self._prepare_tmp(step)
        t0 = time.perf_counter()
        dcp.save(state, storage_writer=dcp.FileSystemWriter(tmp, sync_files=True), **self._dcp_kwargs())
        self.last_dcp_call_s = time.perf_counter() - t0
        return self._commit(step, tmp)

    def async_save(self, step: int, state: dict) -> PendingDcpSave:
        """``dcp.async_save`` (THREAD mode): returns once the state is staged; wait() for durable.

        A previous async save still in flight is waited for first (its staging buffers are reused).
        Blocking part: DCP's planning and the copy of the state into staging buffers allocated
        at the first call; the writing, fsync and commit run in the background.
        """
        if self._pending is not None:
            self._pending.wait()
            self._pending = None
        tmp = self._prepare_tmp(step)
        t0 = time.perf_counter()
        if self._stager is None:
            # DCP's DefaultStager, kept for the life of the store: its StateDictStager caches the
            # staging buffers per source tensor, so every save after the first copies into
            # memory allocated once (pinned on a GPU) instead of allocating the state anew.
            # Staging stays on the calling thread (the state may change as soon as we return).
            from torch.distributed.checkpoint.staging import DefaultStager, StagingOptions

            cuda = torch.cuda.is_available()
            self._stager = DefaultStager(StagingOptions(use_pinned_memory=cuda, use_shared_memory=False,
                                                        use_async_staging=False, use_non_blocking_copy=cuda))
        resp = dcp.async_save(state, storage_writer=dcp.FileSystemWriter(tmp, sync_files=True), async_stager=self._stager,
                              **self._dcp_kwargs())
        self.last_dcp_call_s = time.perf_counter() - t0
        future = getattr(resp, "upload_completion", resp)
        self._pending = PendingDcpSave(self, step, tmp, future)
        return self._pending

    def close(self) -> None:
        """Wait for a save in flight and free the async staging buffers."""
        if self._pending is not None:
            self._pending.wait()
            self._pending = None
        if self._stager is not None:
            self._stager.close()
            self._stager = None

    def _commit(self, step: int, tmp: Path) -> Path:
        own = {}
        for p in _own_files(tmp, self.rank, self.world_size):
            with open(p, "rb") as fh:  # DCP fsyncs its data files; make sure of .metadata too
                os.fsync(fh.fileno())
            own[p.name] = sha256_file(p)
        if self.world_size > 1:
            gathered = [None] * self.world_size if self.rank == 0 else None
            dist.gather_object(own, gathered, dst=dist.get_global_rank(self.process_group, 0) if self.process_group else 0, group=self.process_group)
            if self.rank == 0:
                own = {k: v for d in gathered for k, v in d.items()}
        final = self.path_for(step)
        if self.rank == 0:
            write_dcp_manifest(tmp, own)
            fsync_dir(tmp)
            if final.exists():  # re-saving a step: move the old one aside first
                trash = self.directory / f".{final.name}.old"
                shutil.rmtree(trash, ignore_errors=True)
                os.replace(final, trash)
                shutil.rmtree(trash, ignore_errors=True)
            os.replace(tmp, final)
            fsync_dir(self.directory)
            write_atomic(self.directory / self.POINTER, lambda fh: fh.write(final.name.encode()))
            for old in self.steps()[: -self.keep]:
                shutil.rmtree(self.path_for(old), ignore_errors=True)
        self._barrier()
        return final

    # -- loading -------------------------------------------------------------------------
    def _all_ok(self, ok: bool) -> bool:
        if self.world_size == 1:
            return ok
        flag = torch.tensor([1 if ok else 0], dtype=torch.int32)
        dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=self.process_group)
        return bool(flag.item())

    def load(self, step: int, template: dict) -> dict:
        """Verify and load ``step`` into ``template`` (in place; returned)."""
        path = self.path_for(step)
        verify_dcp_checkpoint(path, self.rank, self.world_size)
        dcp.load(template, checkpoint_id=path, **self._dcp_kwargs())
        return template

    def load_latest_good(self, template: dict):
        """Load the newest checkpoint that verifies into ``template``: ``(step, template)`` or None.

        Candidates: the ``LATEST`` pointer's step first, then every other committed step,
        newest first. A candidate that fails verification on any rank is skipped (with a
        warning naming it) by all ranks.
        """
        candidates = sorted(self.steps(), reverse=True)
        pointed = self.latest_pointer()
        if pointed in candidates:
            candidates.remove(pointed)
            candidates.insert(0, pointed)
        if self.world_size > 1:  # every rank must walk the same list
            obj = [candidates]
            dist.broadcast_object_list(obj, src=dist.get_global_rank(self.process_group, 0) if self.process_group else 0, group=self.process_group)
            candidates = obj[0]
        for step in candidates:
            path = self.path_for(step)
            try:
                verify_dcp_checkpoint(path, self.rank, self.world_size)
                ok, why = True, ""
            except (CorruptCheckpointError, OSError, ValueError) as exc:
                ok, why = False, str(exc)
            if self._all_ok(ok):
                dcp.load(template, checkpoint_id=path, **self._dcp_kwargs())
                return step, template
            warnings.warn(f"skipping DCP checkpoint that failed verification: {why or path}", RuntimeWarning, stacklevel=2)
        return None
