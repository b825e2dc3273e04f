"""Checkpointing: the safe writer/reader (``safe``), verified DCP checkpoints (``dcp_safe``), the toy
training state (``state``), four write strategies (``strategies``) and the write-cost benchmark
(``bench``, ``python -m course_lib.checkpoint``), explained in notebook 05; the two-tier checkpoint
(``tiers``: this node's and a buddy node's memory, held by ``holder`` processes, and the persisted
store), used in notebook 11 (its labs are :mod:`course_lib.nodelab`'s).

Only ``safe`` is imported eagerly (the fault-injection job restarts often and should not pay for
torch.distributed.checkpoint); the other names load on first use.
"""
from importlib import import_module

from .safe import (
    CheckpointStore,
    CorruptCheckpointError,
    load_checkpoint,
    save_checkpoint,
    verify_checkpoint,
    write_atomic,
)

_LAZY = {
    "DcpCheckpointStore": ".dcp_safe",
    "PendingDcpSave": ".dcp_safe",
    "verify_dcp_checkpoint": ".dcp_safe",
    "BYTES_PER_PARAM": ".state",
    "toy_state": ".state",
    "states_equal": ".state",
    "STRATEGIES": ".strategies",
    "SnapshotCheckpointer": ".strategies",
    "measure": ".strategies",
    "TieredCheckpointer": ".tiers",
    "Restored": ".tiers",
}

__all__ = [
    "CheckpointStore",
    "CorruptCheckpointError",
    "load_checkpoint",
    "save_checkpoint",
    "verify_checkpoint",
    "write_atomic",
    *_LAZY,
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
