# %% [markdown]
# # The floor dashboard (classroom app)
#
# *A 4,096-GPU training run loses about 2 % of every day to restarts. Fix it, and say where the floor is.*
#
# This is the dashboard of notebook 08 on its own, for a classroom screen (`make app` serves it as a
# Voila app with the code hidden). Move a slider: the sentence states the floor lambda (D + R) that no
# checkpointing removes and the loss left after every lever, and the waterfall redraws from the
# baseline down to that floor. The derivations behind every bar are in notebooks 03-08.

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import matplotlib.pyplot as plt
from IPython.display import display

from course_lib.plots.floor import answer_waterfall
from course_lib.widgets.floor import dashboard, dashboard_answer, floor_text

# %% [markdown]
# The course's answer at its defaults (static, before any slider moves):

# %%
print(floor_text())
answer_waterfall(dashboard_answer())
plt.show()

# %% [markdown]
# Now with sliders: fleet size, per-GPU failure rate, and what the levers bring detection, restart,
# reload and the checkpoint's blocking write to.

# %% tags=["nbval-ignore-output"]
display(dashboard())
