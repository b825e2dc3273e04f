# %% [markdown]
# ## The floor dashboard: a 4,096-GPU run's restart loss, lever by lever, down to the floor
#
# *A 4,096-GPU training run loses about 2 % of every day to restarts. Fix it, and say where the floor is.*
# Move a slider: the sentence and the chart follow; the last line defines every symbol.

# %%
from course_lib.notebook import setup

rng = setup()

# %%
# The dashboard of notebook 08 on its own, for a classroom screen: `make app` serves it as a Voila app with
# the code hidden (`make app MODE=present` in presentation mode). Every number comes from course_lib, the same
# function that answers `python -m course_lib budget`; the derivations behind every bar are in notebooks 03-08.
from IPython.display import display

from course_lib.widgets.floor import app_mode, dashboard

# %% tags=["nbval-ignore-output"]
display(dashboard(mode=app_mode()))
