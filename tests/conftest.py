"""Test-suite settings shared by every test file."""
from hypothesis import settings

# Property tests draw the same examples on every run (CI and a learner's machine alike), so a
# red build is reproducible; set HYPOTHESIS_PROFILE=explore to search afresh.
settings.register_profile("course", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, max_examples=500)

import os  # noqa: E402

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "course"))


import pytest  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def nothing_is_left_behind():
    """When the test session ends (in each xdist worker), no lab run of this process has left anything:
    no process carrying a run's token, no port such a process listens on, no temporary path, no network
    namespace named after this process. A lab that leaks fails the run here, whichever test caused it."""
    yield
    from course_lib.labkit import leftovers
    from course_lib.nodelab.net import PREFIX
    from course_lib.nodelab.net import leftovers as net_leftovers

    import shutil

    left = leftovers()
    if shutil.which("ip"):
        mine = net_leftovers(f"{PREFIX}{os.getpid()}-")
        left.update({"netns": mine["netns"], "netns processes": mine["processes"]})
    assert not any(left.values()), f"lab runs left things behind: {left}"


#: Files whose tests take longest (lab runs, notebooks that run a lab), longest first, as measured with --durations on
#: the course's 2-core machine (2026-12-04: tests/test_nodelab.py about 85 s, the tier lab 40 s, the fault lab's
#: reliability and guard runs 25-30 s each, notebook 07 30 s, 11 25 s, 10 20 s, 05 17 s). xdist's --dist loadfile
#: hands files to the workers in collection order, so starting with these keeps one worker from finishing a long
#: lab alone at the end (longest processing time first). Order only: nothing is skipped or changed.
LONGEST_FIRST = (
    "tests/test_nodelab.py", "tests/test_checkpoint_tiers.py", "notebooks/07-fault-injection-lab.ipynb",
    "tests/test_faultlab_reliability.py", "tests/test_faultlab_guard.py", "notebooks/11-losing-a-node.ipynb",
    "tests/test_ftlab.py", "notebooks/10-dont-restart-the-world.ipynb", "notebooks/05-write-cost.ipynb",
    "tests/papermill/test_consistency.py", "tests/test_lemonlab.py", "tests/test_checkpoint_dist.py",
)


def pytest_collection_modifyitems(session, config, items):
    """Move the files of LONGEST_FIRST to the front, in that order, each file's tests kept in their own order."""
    import pathlib

    root = pathlib.Path(str(config.rootpath))
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}

    def key(item):
        try:
            rel = pathlib.Path(str(item.path)).resolve().relative_to(root).as_posix()
        except ValueError:
            rel = ""
        return rank.get(rel, len(rank))

    items[:] = sorted(items, key=key)  # a stable sort: every other file keeps its place and its tests their order
