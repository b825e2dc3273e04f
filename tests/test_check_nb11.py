"""Self-checks of notebook 11's exercises: right answers pass, the typical mistakes get their hints."""
import pytest

from course_lib import Scenario, modes
from course_lib.check import nb11
from course_lib.nodelab import load_nodelab_benchmark


def test_spare_saving_accepts_the_medians_difference_and_names_the_ratio():
    bench = load_nodelab_benchmark()
    right = bench.medians["replacement via scheduler"]["reschedule"] - bench.medians["hot spare"]["reschedule"]
    assert nb11.spare_saving(right).ok
    fb = nb11.spare_saving(bench.ratios["replacement via scheduler"])
    assert not fb.ok and "ratio" in fb.message


def test_buddy_copy_saving_is_the_host_loss_difference_and_nothing_else_moves():
    sc = Scenario()
    with_copy = modes.per_mode_floor(sc, modes.ModeInputs(peer_copy=True))
    without = modes.per_mode_floor(sc, modes.ModeInputs(peer_copy=False))
    assert {m for m in modes.MODES if abs(with_copy[m] - without[m]) > 1e-12} == {"host_loss"}
    assert nb11.buddy_copy_saving(without["host_loss"] - with_copy["host_loss"]).ok
    # by hand from the scenario's inputs: lambda x the host-loss share x (the 30 s heartbeat + the in-job restart + the
    # reload + the rewind); with a buddy copy the snapshot comes back from a peer and half a step is lost, without one
    # the persisted checkpoint is read back and half its 10-minute interval is lost
    lam = sc.failures_per_day * sc.modes.shares[modes.MODES.index("host_loss")]
    seen_and_restarted = sc.modes.host_heartbeat_min + sc.reschedule_after_min
    by_hand = (lam * (seen_and_restarted + sc.reload_after_min + sc.step_min / 2),
               lam * (seen_and_restarted + sc.reload_min + sc.checkpoint_interval_min / 2))
    assert nb11.host_loss_floors(sc) == pytest.approx(by_hand, rel=1e-12)  # about 0.63 and 2.03 min/day
    fb = nb11.buddy_copy_saving(without["host_loss"])
    assert not fb.ok and "subtract" in fb.message
