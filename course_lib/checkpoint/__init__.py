"""Checkpointing: the safe writer/reader (``safe``) and the write-cost benchmark (notebook 05)."""
from .safe import (
    CheckpointStore,
    CorruptCheckpointError,
    load_checkpoint,
    save_checkpoint,
    verify_checkpoint,
    write_atomic,
)

__all__ = [
    "CheckpointStore",
    "CorruptCheckpointError",
    "load_checkpoint",
    "save_checkpoint",
    "verify_checkpoint",
    "write_atomic",
]
