"""The course's decision per fault class (course_lib.incidents.policy), row by row and on small logs by hand.

Each expected decision is read off data/incident_classes.csv as written (not from the loaded policy);
bad tables are written to a scratch data folder with their own MANIFEST, so the checksum check passes
and the row check is what refuses them.
"""
from __future__ import annotations

import csv
import dataclasses

import numpy as np
import pytest

from course_lib import data
from course_lib.incidents import policy
from course_lib.incidents.schema import IncidentLog

HEADER = "level,class,desc,interruption,mode,basis,label"


def table_dir(tmp_path, rows):
    """A data folder holding only incident_classes.csv (HEADER + rows) and its MANIFEST row."""
    d = tmp_path / "data"
    d.mkdir()
    (d / "incident_classes.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    with open(data.DATA_DIR / data.MANIFEST_NAME, newline="") as fh:
        reader = csv.DictReader(fh)
        fields, row = reader.fieldnames, [r for r in reader if r["file"] == "incident_classes.csv"]
    with open(d / data.MANIFEST_NAME, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(row)
    data.update_manifest(d)
    return d


GOOD = ["L,A,,yes,crash,why a,assumption", "L,A,D,yes,sdc,why d,assumption", "L,B,,no,none,why b,assumption",
        "M,A,,yes,unknown,why m,assumption"]


def test_decide_takes_the_description_row_then_the_class_row_then_unlisted(tmp_path):
    pol = policy.load_policy(table_dir(tmp_path, GOOD))
    assert pol.rules == {("L", "A", ""): (True, "crash", "why a"), ("L", "A", "D"): (True, "sdc", "why d"),
                         ("L", "B", ""): (False, "none", "why b"), ("M", "A", ""): (True, "unknown", "why m")}
    assert pol.source == "data/incident_classes.csv"
    assert pol.decide("L", "A", "D") == (True, "sdc", True)
    assert pol.decide("L", "A", "other") == (True, "crash", True)  # the class row covers its other descriptions
    assert pol.decide("L", "B", "D") == (False, "none", True)
    assert pol.decide("L", "C", "") == (True, "unknown", False)  # unlisted: an interruption of unknown mode
    assert pol.decide("M", "B", "") == (True, "unknown", False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        pol.rules = {}


def test_the_course_table_as_written():
    pol = policy.load_policy()
    lines = (data.DATA_DIR / "incident_classes.csv").read_text().splitlines()
    assert len(pol.rules) == len(lines) - 1 == 34
    assert pol.decide("Hardware Failure", "GPU", "Silent Data Corruption")[:2] == (True, "sdc")
    assert pol.decide("Hardware Failure", "GPU", "Xid 79")[:2] == (True, "crash")
    assert pol.decide("Other Failure", "Change", "")[:2] == (False, "none")
    assert pol.decide("Slurm", "NODE_FAIL", "")[:2] == (True, "host_loss")
    assert pol.rules[("Other Failure", "Test", "")][:2] == (False, "none")
    assert {m for _, m, _ in pol.rules.values()} == set(policy.MODES) | {"unknown", "none"}


@pytest.mark.parametrize("row, message", [
    ("L,C,,maybe,crash,x,assumption", "line 3: interruption must be yes or no .got 'maybe'"),
    ("L,C,,Yes,crash,x,assumption", "line 3: interruption must be yes or no"),
    ("L,C,,yes,crashes,x,assumption", "line 3: mode must be one of .* for an interruption and 'none' otherwise .got 'crashes'"),
    ("L,C,,yes,none,x,assumption", "line 3: mode must be one of"),       # an interruption needs a mode
    ("L,C,,no,crash,x,assumption", "line 3: mode must be one of"),       # what is not one has none
    ("L,C,,no,unknown,x,assumption", "line 3: mode must be one of"),
    ("L,A,,no,none,x,assumption", r"line 3: \('L', 'A', ''\) is listed twice"),
])
def test_a_bad_row_is_refused_with_its_line(tmp_path, row, message):
    with pytest.raises(ValueError, match=message):
        policy.load_policy(table_dir(tmp_path, ["L,A,,yes,crash,x,assumption", row]))


def test_every_mode_and_no_interruption_are_accepted(tmp_path):
    rows = [f"L,{m},,yes,{m},x,assumption" for m in policy.MODES + ("unknown",)] + ["L,N,,no,none,x,assumption",
                                                                                  "L,hang,D,no,none,x,assumption"]
    pol = policy.load_policy(table_dir(tmp_path, rows))
    assert len(pol.rules) == 7 and pol.rules[("L", "hang", "D")] == (False, "none", "x")
    assert pol.rules[("L", "sdc", "")] == (True, "sdc", "x")


def _log(causes, window=(0.0, 10.0)):
    n = len(causes)
    return IncidentLog.build(list(np.arange(n) + 1.0), list(np.arange(n) + 1.5), [f"n{i}" for i in range(n)], causes,
                             window=window)


def test_classify_a_log_by_hand():
    causes = [("Hardware Failure", "GPU", "Xid 79"), ("Hardware Failure", "GPU", "Silent Data Corruption"),
              ("Other Failure", "Change", "swap"), ("Mystery", "Box", "a"), ("Mystery", "Box", "b"),
              ("Hardware Failure", "Fan", ""), ("Also", "New", "x")]
    c = policy.classify(_log(causes))
    assert c.interruption.tolist() == [True, True, False, True, True, True, True]
    assert c.mode.tolist() == ["crash", "sdc", "none", "unknown", "unknown", "host_loss", "unknown"]
    assert c.unlisted == 3 and c.unlisted_causes == (("Also", "New"), ("Mystery", "Box"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.unlisted = 0
    own = policy.Policy({("Mystery", "Box", ""): (False, "none", "mine")})
    o = policy.classify(_log(causes), own)  # a policy given replaces the course's
    assert o.interruption.tolist() == [True, True, True, False, False, True, True]
    assert o.unlisted == 5 and o.unlisted_causes == (("Also", "New"), ("Hardware Failure", "Fan"), ("Hardware Failure", "GPU"),
                                                     ("Other Failure", "Change"))


def test_classify_an_empty_log():
    empty = IncidentLog.build([], [], [], window=(0.0, 10.0))
    c = policy.classify(empty)
    assert c.interruption.size == 0 and c.mode.size == 0 and (c.unlisted, c.unlisted_causes) == (0, ())
    assert c.interruption.dtype == bool
    some = _log([("Other Failure", "Change", "")])
    none_left = policy.classify(some.where(np.array([False])))  # a cause in the vocabulary, no incident
    assert none_left.interruption.size == 0 and none_left.unlisted == 0


def test_mode_shares_spread_the_unknown_over_the_known_by_hand():
    got = policy.mode_shares(np.array(["crash", "crash", "hang", "unknown", "crash", "sdc", "unknown", "unknown"]))
    assert got == pytest.approx({"crash": 3 / 5, "hang": 1 / 5, "host_loss": 0.0, "sdc": 1 / 5}, rel=1e-12)
    assert list(got) == list(policy.MODES)
    assert policy.mode_shares(["host_loss"]) == {"crash": 0.0, "hang": 0.0, "host_loss": 1.0, "sdc": 0.0}
    with pytest.raises(ValueError, match="modes must hold at least one interruption"):
        policy.mode_shares([])
    with pytest.raises(ValueError, match="modes must be those of interruptions .got a 'none'"):
        policy.mode_shares(["crash", "none"])
    with pytest.raises(ValueError, match="modes must include at least one known mode"):
        policy.mode_shares(["unknown", "unknown"])
