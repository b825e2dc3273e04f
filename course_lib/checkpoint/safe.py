"""The course's safe checkpoint writer and reader (notebook 05 explains it; notebook 07 relies on it).

Guarantees, each tested:

* every checkpoint file carries a sha256 of its payload in a fixed-size footer; loading
  verifies it and raises :class:`CorruptCheckpointError` on a truncated or altered file;
* the writer never leaves a partial file at the final path: it writes a temporary file in the
  same folder, fsyncs it, renames it atomically over the final name and fsyncs the folder;
* :class:`CheckpointStore` keeps the last few checkpoints and a ``LATEST`` pointer;
  :meth:`CheckpointStore.load_latest_good` falls back to the previous checkpoint when the
  newest one fails verification.
"""
from __future__ import annotations

import hashlib
import io
import os
import re
import struct
import warnings
from pathlib import Path

import torch

from .._validate import check_int_non_negative, check_int_positive

__all__ = [
    "CorruptCheckpointError",
    "save_checkpoint",
    "load_checkpoint",
    "verify_checkpoint",
    "write_atomic",
    "fsync_dir",
    "seal",
    "unseal",
    "CheckpointStore",
]

MAGIC = b"CKPTSHA1"  # format tag of the course's footer (version 1)
_FOOTER = struct.Struct("<8s32sQ")  # magic, sha256 digest, payload length


class CorruptCheckpointError(RuntimeError):
    """A checkpoint file failed verification (truncated, altered, or not a course checkpoint)."""


def fsync_dir(directory: Path) -> None:
    """fsync a folder so that a rename inside it survives a crash."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _HashingWriter(io.RawIOBase):
    """A write-only file wrapper that hashes and counts every byte it passes on."""

    def __init__(self, fh):
        self._fh = fh
        self.hash = hashlib.sha256()
        self.length = 0

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        mv = memoryview(b)
        self.hash.update(mv)
        self.length += mv.nbytes
        self._fh.write(mv)
        return mv.nbytes

    def flush(self) -> None:
        self._fh.flush()


def write_atomic(path: str | os.PathLike, write_payload) -> Path:
    """Write a file via ``write_payload(fileobj)`` so that ``path`` is either old or complete.

    The payload goes to a temporary file in the same folder, followed by the sha256 footer;
    the file is fsynced, renamed over ``path`` and the folder is fsynced. On any exception
    the temporary file is removed and ``path`` is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            hw = _HashingWriter(fh)
            write_payload(hw)
            fh.write(_FOOTER.pack(MAGIC, hw.hash.digest(), hw.length))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def save_checkpoint(obj, path: str | os.PathLike) -> Path:
    """``torch.save`` ``obj`` to ``path`` safely (checksum footer, fsync, atomic rename)."""
    return write_atomic(path, lambda fh: torch.save(obj, fh))


def seal(payload: bytes) -> bytes:
    """``payload`` followed by the course's sha256 footer: the bytes a checkpoint file holds.

    The in-memory tiers of :mod:`.tiers` keep and send sealed bytes, so a copy held in another
    process (or another node) is verified exactly like a file.
    """
    payload = bytes(payload)
    return payload + _FOOTER.pack(MAGIC, hashlib.sha256(payload).digest(), len(payload))


def unseal(data, name: str = "checkpoint") -> memoryview:
    """The payload of sealed ``data`` (bytes-like) after checking its footer, as a view into ``data``
    (no copy); :class:`CorruptCheckpointError` if it is truncated, altered or not sealed by the
    course (``name`` goes into the message)."""
    view = memoryview(data).cast("B")
    if len(view) < _FOOTER.size:
        raise CorruptCheckpointError(f"{name}: truncated ({len(view)} bytes, shorter than the footer)")
    magic, digest, length = _FOOTER.unpack(view[-_FOOTER.size:])
    if magic != MAGIC:
        raise CorruptCheckpointError(f"{name}: no checksum footer (truncated, or not written by course_lib)")
    payload = view[: -_FOOTER.size]
    if len(payload) != length:
        raise CorruptCheckpointError(f"{name}: payload is {len(payload)} bytes, footer says {length} (truncated?)")
    if hashlib.sha256(payload).digest() != digest:
        raise CorruptCheckpointError(f"{name}: sha256 mismatch: the bytes were altered or corrupted")
    return payload


def _read_verified(path: Path) -> memoryview:
    return unseal(Path(path).read_bytes(), str(path))


def verify_checkpoint(path: str | os.PathLike) -> None:
    """Raise :class:`CorruptCheckpointError` unless ``path`` passes verification."""
    _read_verified(Path(path))


def load_checkpoint(path: str | os.PathLike, map_location="cpu"):
    """Verify the checksum of ``path`` and return the object saved in it."""
    payload = _read_verified(Path(path))
    return torch.load(io.BytesIO(payload), map_location=map_location, weights_only=False)


class CheckpointStore:
    """A folder of step-numbered checkpoints with a ``LATEST`` pointer and fallback on load.

    >>> store = CheckpointStore(folder, keep=3)      # doctest: +SKIP
    >>> store.save(step=100, state={"model": ...})   # doctest: +SKIP
    >>> step, state = store.load_latest_good()       # doctest: +SKIP
    """

    POINTER = "LATEST"
    _NAME = re.compile(r"^ckpt-(\d{10})\.pt$")

    def __init__(self, directory: str | os.PathLike, keep: int = 3):
        self.directory = Path(directory)
        self.keep = check_int_positive("keep", keep)
        self.directory.mkdir(parents=True, exist_ok=True)

    def path_for(self, step: int) -> Path:
        return self.directory / f"ckpt-{check_int_non_negative('step', step):010d}.pt"

    def steps(self) -> list[int]:
        """Steps of the checkpoint files present, oldest first (verified or not)."""
        found = []
        for p in self.directory.iterdir():
            m = self._NAME.match(p.name)
            if m:
                found.append(int(m.group(1)))
        return sorted(found)

    def save(self, step: int, obj) -> Path:
        """Save ``obj`` as the checkpoint of ``step``, move ``LATEST`` to it, prune old ones."""
        return self.commit(step, lambda fh: torch.save(obj, fh))

    def commit(self, step: int, write_payload) -> Path:
        """Like :meth:`save` for a custom payload writer (used by the snapshot strategy)."""
        path = write_atomic(self.path_for(step), write_payload)
        pointer = self.directory / self.POINTER
        write_atomic(pointer, lambda fh: fh.write(path.name.encode()))
        for old in self.steps()[: -self.keep]:
            self.path_for(old).unlink(missing_ok=True)
        return path

    def latest_pointer(self) -> int | None:
        """The step ``LATEST`` names, or None when it is missing or unreadable."""
        try:
            name = bytes(_read_verified(self.directory / self.POINTER)).decode()
        except (FileNotFoundError, CorruptCheckpointError, UnicodeDecodeError):
            return None
        m = self._NAME.match(name)
        return int(m.group(1)) if m else None

    def load_latest_good(self, map_location="cpu"):
        """Return ``(step, obj)`` of the newest checkpoint that verifies, or ``None``.

        Candidates: the pointer's target first, then every older file, newest first. A
        candidate that fails verification is skipped with a warning that names it.
        """
        candidates = sorted(self.steps(), reverse=True)
        pointed = self.latest_pointer()
        if pointed is not None and pointed in candidates:
            candidates.remove(pointed)
            candidates.insert(0, pointed)
        for step in candidates:
            path = self.path_for(step)
            try:
                return step, load_checkpoint(path, map_location=map_location)
            except CorruptCheckpointError as exc:
                warnings.warn(f"skipping checkpoint that failed verification: {exc}", RuntimeWarning, stacklevel=2)
        return None
