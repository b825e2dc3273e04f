"""Which faults are job interruptions, and which failure mode each presents as (notebook 13).

A node fault log is not a list of job interruptions. Some faults are found on nodes that run no
job: a stress test after a repair, a test, a planned change. They count in the node's repair
history but not in the rate at which a *job* is interrupted. The course decides per class of
the log, and says why, in ``data/incident_classes.csv`` (every row labelled ``assumption``: the
classes are the log's, the decisions the course's): ``interruption`` yes/no, and ``mode`` among
the course's failure modes (crash, hang, host_loss, sdc; :mod:`course_lib.modes`), ``unknown``
where the log names no cause, ``none`` for what is not an interruption. A row with a ``desc``
overrides its class for that one description (the trace's single "Silent Data Corruption").

A class the table does not list counts as an interruption of unknown mode (the conservative
choice: a fault not known to spare the job is counted), and :func:`classify` says so in its
``unlisted`` count. The mode shares a floor needs are the known modes' shares, the unknown
spread over them in proportion (:func:`mode_shares`): a stated mapping, not a measurement.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .schema import IncidentLog

__all__ = ["MODES", "Policy", "load_policy", "Classified", "classify", "mode_shares"]

MODES = ("crash", "hang", "host_loss", "sdc")
_MODE_VALUES = MODES + ("unknown", "none")


@dataclass(frozen=True)
class Policy:
    """The course's decision per (level, class[, desc]): ``{key: (interruption, mode, basis)}``."""

    rules: dict
    source: str = "data/incident_classes.csv"

    def decide(self, level: str, cls: str, desc: str):
        """(interruption, mode, listed) for one cause; unlisted classes: (True, 'unknown', False)."""
        for key in ((level, cls, desc), (level, cls, "")):
            if key in self.rules:
                yes, mode, _ = self.rules[key]
                return yes, mode, True
        return True, "unknown", False


def load_policy(data_dir=None) -> Policy:
    """The course's table, ``data/incident_classes.csv`` (checksum verified), validated row by row."""
    from ..data import load_table

    t = load_table("incident_classes.csv", data_dir)
    rules = {}
    for i, r in enumerate(t.rows, start=2):
        yes = {"yes": True, "no": False}.get(r["interruption"])
        if yes is None:
            raise ValueError(f"incident_classes.csv, line {i}: interruption must be yes or no (got {r['interruption']!r})")
        if r["mode"] not in _MODE_VALUES or (r["mode"] == "none") == yes:
            raise ValueError(f"incident_classes.csv, line {i}: mode must be one of {MODES + ('unknown',)} for an interruption "
                             f"and 'none' otherwise (got {r['mode']!r})")
        key = (r["level"], r["class"], r["desc"] if isinstance(r["desc"], str) else "")
        if key in rules:
            raise ValueError(f"incident_classes.csv, line {i}: {key} is listed twice")
        rules[key] = (yes, r["mode"], r["basis"])
    return Policy(rules)


@dataclass(frozen=True)
class Classified:
    """Per incident: whether it interrupts a job, and its mode (strings); ``unlisted`` causes counted."""

    interruption: np.ndarray
    mode: np.ndarray
    unlisted: int
    unlisted_causes: tuple


def classify(log: IncidentLog, policy: Policy | None = None) -> Classified:
    """Apply ``policy`` (default: the course's table) to every incident of ``log``."""
    pol = load_policy() if policy is None else policy
    decided = [pol.decide(*c) for c in log.causes]
    yes = np.array([d[0] for d in decided] or [True], dtype=bool)
    mode = np.array([d[1] for d in decided] or ["unknown"], dtype="<U9")
    listed = np.array([d[2] for d in decided] or [True], dtype=bool)
    if not len(log):
        return Classified(np.zeros(0, bool), np.zeros(0, "<U9"), 0, ())
    unl = ~listed[log.cause]
    return Classified(yes[log.cause], mode[log.cause], int(unl.sum()),
                      tuple(sorted({log.causes[c][:2] for c in np.unique(log.cause[unl])})))


def mode_shares(modes: np.ndarray) -> dict[str, float]:
    """Shares of :data:`MODES` among interruptions, the unknown ones spread over the known in proportion.

    ``modes``: the mode of each interruption (``unknown`` allowed, ``none`` not). The result sums to
    1; it is the course's mapping applied to the log, not a measurement of how each fault presented.
    """
    m = np.asarray(modes)
    if m.size == 0:
        raise ValueError("modes must hold at least one interruption")
    if np.any(m == "none"):
        raise ValueError("modes must be those of interruptions (got a 'none')")
    known = np.array([(m == k).sum() for k in MODES], dtype=float)
    if known.sum() == 0:
        raise ValueError("modes must include at least one known mode to spread the unknown ones over")
    return dict(zip(MODES, (known / known.sum()).tolist()))
