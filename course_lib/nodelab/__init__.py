"""Nodes lab: the fault lab's training job on several "nodes" (network namespaces on one machine),
one torchrun agent per node, a whole node lost on purpose, a hot spare (notebook 11).

Modules: :mod:`.net` (namespaces, veth pairs, a bridge; teardown), :mod:`.spec`
(:class:`NodeLabConfig`, :class:`NodeFailure`), :mod:`.store` (the rendezvous server),
:mod:`.lab` (:func:`run_nodelab`, :func:`run_tier_nodelab`, :func:`uninterrupted_reference`), :mod:`.tierlab` and :mod:`.tiers_job`
(the two-tier checkpoint's lab and job: :class:`TierLabConfig`, :func:`run_tier_lab` on loopback
"nodes"), :mod:`.phases` (a node loss's rescheduling, phase by phase), :mod:`.results` (the committed
benchmarks). The job is notebook 07's
(:mod:`course_lib.faultlab`); starting, watching and tearing down is the lab kit's
(:mod:`course_lib.labkit`). Needs root: :func:`net_admin_missing` says why not.
"""
from .lab import NodeLabUnavailable, run_nodelab, run_tier_nodelab, uninterrupted_reference
from .net import LabNetwork, leftovers, net_admin_missing
from .results import NodeLabBenchmark, StorageLinkBenchmark, load_nodelab_benchmark, load_storage_link
from .spec import NODE_FAILURE_KINDS, NodeFailure, NodeLabConfig
from .tierlab import Damage, NodeLoss, TierLabConfig, TierResult, reference_digests, run_tier_lab

__all__ = [
    "NODE_FAILURE_KINDS",
    "LabNetwork",
    "NodeFailure",
    "NodeLabConfig",
    "NodeLabBenchmark",
    "NodeLabUnavailable",
    "load_nodelab_benchmark",
    "load_storage_link",
    "StorageLinkBenchmark",
    "leftovers",
    "net_admin_missing",
    "run_nodelab",
    "run_tier_nodelab",
    "Damage",
    "NodeLoss",
    "TierLabConfig",
    "TierResult",
    "reference_digests",
    "run_tier_lab",
    "uninterrupted_reference",
]
