"""Test-suite settings shared by every test file."""
from hypothesis import settings

# Property tests draw the same examples on every run (CI and a learner's machine alike), so a
# red build is reproducible; set HYPOTHESIS_PROFILE=explore to search afresh.
settings.register_profile("course", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, max_examples=500)

import os  # noqa: E402

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "course"))
