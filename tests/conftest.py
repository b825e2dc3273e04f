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
