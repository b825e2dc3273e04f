"""Nodes lab: the fault lab's training job on several "nodes" (network namespaces on one machine),
one torchrun agent per node, a whole node lost on purpose, a hot spare (notebook 11).

Modules: :mod:`.net` (namespaces, veth pairs, a bridge; teardown), :mod:`.spec`
(:class:`NodeLabConfig`, :class:`NodeFailure`), :mod:`.store` (the rendezvous server),
:mod:`.lab` (:func:`run_nodelab`), :mod:`.results` (the committed benchmark). The job itself and the event log are notebook 07's
(:mod:`course_lib.faultlab`). Needs root: :func:`net_admin_missing` says why not.
"""
from .lab import NodeLabUnavailable, TierNodeLabResult, run_nodelab, run_tier_nodelab
from .net import LabNetwork, leftovers, net_admin_missing
from .results import NodeLabBenchmark, load_nodelab_benchmark
from .spec import NODE_FAILURE_KINDS, NodeFailure, NodeLabConfig

__all__ = [
    "NODE_FAILURE_KINDS",
    "LabNetwork",
    "NodeFailure",
    "NodeLabConfig",
    "NodeLabBenchmark",
    "NodeLabUnavailable",
    "load_nodelab_benchmark",
    "leftovers",
    "net_admin_missing",
    "run_nodelab",
    "run_tier_nodelab",
    "TierNodeLabResult",
]
