# The course's commands. Each target creates .venv when it is missing and installs the
# package with its dev extras into it (torch pinned to the 2.13.0 CPU build first, so
# nothing can pull an unpinned CUDA torch).
PY ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST := $(BIN)/python -m pytest
XDIST := -n 2 --dist loadfile
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg --nbval-cell-timeout=600 -p no:randomly

.PHONY: course site test lint suite waits slurm culling pages unit nbval papermill browser lab app bench clean slurm-debs

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

## make course: execute every notebook in order (papermill) into build/notebooks, build the course
## website from them into build/site (open build/site/index.html), print the answer table.
## PARAMS="n_gpus=16384 rate_per_gpu_day=8.1e-4" runs the whole course for another scenario (any name of
## course_lib.scenario.PARAMETERS, the names of every notebook's parameters cell); FLEET=16384 is n_gpus alone.
course: $(STAMP)
	$(BIN)/python scripts/run_course.py $(foreach p,$(PARAMS),--param $(p)) $(if $(FLEET),--param n_gpus=$(FLEET))

## make site: only the website, from the committed (already executed) notebooks (seconds).
site: $(STAMP)
	$(BIN)/python scripts/build_site.py

## make test: the Python install and, as root, Debian's Slurm packages (`slurm-debs`), side by side; the linter (pyflakes
## rules: unused imports, undefined names); then one xdist session (`suite`) of the unit and property tests, strict nbval
## over notebooks/ and solutions/ and the papermill runs (the longest files start first, tests/conftest.py), and beside it
## the two tests that mostly wait (`waits`): the Voila culling test (`culling`: a browser test that waits for the culler)
## and then the scheduler lab (`slurm`: a real Slurm cluster in network namespaces, whose runs wait out Slurm's
## timeouts), so their waits overlap the suite instead of holding a worker; then the other browser tests (`pages`,
## apart from the labs: their servers need the CPU the labs would take), on two workers by xdist group: JupyterLab, the
## Voila app, an exercise, and the website (built into a temp dir, served offline). Each part's output is printed when
## it ends. `make unit`, `make nbval`, `make papermill`, `make browser` and `make slurm` run one part each.
test:
	$(MAKE) --no-print-directory -j2 $(STAMP) slurm-debs
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory -j2 --output-sync=target suite waits
	$(MAKE) --no-print-directory pages

## make slurm-debs: Debian's Slurm, munge and MariaDB for the scheduler lab (course_lib.slurmlab, tests/test_slurmlab.py), installed when one is
## missing and make runs as root (during make test, beside the Python install); otherwise it prints the apt command
## and the scheduler tests skip (CI sets COURSE_REQUIRE_SLURM=1: there a skip is a failure).
slurm-debs:
	@bash scripts/install_slurm.sh

LINTED := course_lib scripts tests benchmarks website notebooks/src solutions/src
lint: $(STAMP)
	$(BIN)/ruff check --select F --no-cache $(LINTED)

BROWSER_PAGES := tests/test_browser.py tests/test_site.py
BROWSER_WAIT := tests/test_browser_culling.py

SLURM_TESTS := tests/test_slurmlab.py

suite: $(STAMP)
	$(PYTEST) $(NBVAL) $(XDIST) tests notebooks solutions $(foreach f,$(BROWSER_PAGES) $(BROWSER_WAIT) $(SLURM_TESTS) tests/fixtures,--ignore=$(f)) -q -rs

waits: $(STAMP)
	$(PYTEST) $(BROWSER_WAIT) -q -rs
	$(PYTEST) $(SLURM_TESTS) -q -rs -p no:randomly

slurm: $(STAMP)
	$(PYTEST) $(SLURM_TESTS) -q -rs -p no:randomly

culling: $(STAMP)
	$(PYTEST) $(BROWSER_WAIT) -q -rs

pages: $(STAMP)
	$(PYTEST) $(BROWSER_PAGES) -n 2 --dist loadgroup -q -rs

unit: $(STAMP)
	$(PYTEST) tests $(XDIST) --ignore=tests/papermill $(foreach f,$(BROWSER_PAGES) $(BROWSER_WAIT) $(SLURM_TESTS),--ignore=$(f)) -q

nbval: $(STAMP)
	$(PYTEST) $(NBVAL) $(XDIST) notebooks solutions -q

papermill: $(STAMP)
	$(PYTEST) tests/papermill $(XDIST) -q

browser: $(STAMP)
	$(PYTEST) $(BROWSER_PAGES) $(BROWSER_WAIT) -n 2 --dist loadgroup -q -rs

## make lab: JupyterLab on the course (works as root too). PORT=8890 picks the port; ARGS passes any
## other `jupyter lab` flag, e.g. make lab PORT=8890 ARGS=--no-browser (on a remote machine).
lab: $(STAMP)
	$(BIN)/jupyter lab --allow-root --notebook-dir=. $(if $(PORT),--ServerApp.port=$(PORT) --ServerApp.port_retries=0) $(ARGS) notebooks/00-the-question.ipynb

## make app: serve the floor dashboard (notebooks/floor-dashboard.ipynb, from notebook 08) as a Voila app on http://127.0.0.1:8866, code hidden
## (works as root). NB=notebooks/04-optimal-interval.ipynb or PORT=8867 to change; MODE=present for a projector
## (large type, the chart and its sentence on one screen); kernels of closed or reloaded pages are culled.
app: $(STAMP)
	$(BIN)/python scripts/app.py $(NB) $(if $(PORT),--port $(PORT)) $(if $(MODE),--mode $(MODE))

## make bench: the benchmarks (ratios measured in one run; tables in benchmarks/results/)
bench: $(STAMP)
	$(BIN)/python benchmarks/simulate_bench.py
	$(BIN)/python benchmarks/answer_bench.py
	$(BIN)/python benchmarks/checkpoint_bench.py --sizes 256MiB,1GiB --repeats 5 --ranks 1 2
	$(BIN)/python benchmarks/faultlab_bench.py
	$(BIN)/python benchmarks/nodelab_bench.py
	$(BIN)/python benchmarks/tiers_bench.py
	$(BIN)/python benchmarks/ftlab_bench.py
	$(BIN)/python benchmarks/ftlab_groups_bench.py
	$(BIN)/python benchmarks/storage_link_bench.py
	$(BIN)/python benchmarks/incidents_bench.py
	$(BIN)/python benchmarks/sdclab_bench.py
	$(BIN)/python benchmarks/lemonlab_bench.py
	$(BIN)/python benchmarks/slurmlab_bench.py --repeat 3
	$(BIN)/python benchmarks/suite_bench.py

clean:
	rm -rf build .pytest_cache
