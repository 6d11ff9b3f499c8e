# One entry point for people and CI. Every target that may start a ROS node runs
# with DDS discovery limited to this machine and a domain id of its own.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export ROS_DOMAIN_ID ?= 57
export PYTHONUNBUFFERED := 1

.PHONY: env demo test test-stress lint docs bench clean

env: $(STAMP)

# (Re)create the environment whenever the dependency list changes, then compile the
# kernels of the nodes and tools into numba's cache (~2.5 min of CPU, once): their first
# start is as fast as the next ones (rnea-precompile), also on a URDF of your own of the
# same kind (the kernels are generic over the model; docs/performance.md, "Start-up").
$(STAMP): setup.py setup.cfg Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all]'
	$(BIN)/python -m rnea_ros.nodes.precompile --tools
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m rnea_ros.demo

# The docs site is built strictly in lint, so a broken link, anchor, included file or
# API reference (mkdocstrings) fails the test command; `make docs` builds it into site/.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/docs-check

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

test: lint
	$(BIN)/python -m pytest

# The node and launch tests beside two busy-loop processes (a loaded machine: the tests
# must hold on any schedule); the busy loops end with the run, also on failure or Ctrl-C.
STRESS_TESTS ?= test/nodes test/launch
test-stress: $(STAMP)
	@$(BIN)/python -c 'while 1: pass' & hog1=$$!; \
	$(BIN)/python -c 'while 1: pass' & hog2=$$!; \
	trap 'kill $$hog1 $$hog2 2>/dev/null' EXIT; trap 'exit 130' INT; trap 'exit 143' TERM; \
	echo "two busy loops (pids $$hog1 $$hog2) beside: pytest $(STRESS_TESTS)"; \
	$(BIN)/python -m pytest $(STRESS_TESTS)

# Every benchmark (bench/run_all.py, its list BENCHES), each to its end whatever the
# others did, then which passed and which failed; the exit status is 1 if any failed.
bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) build install log site *.egg-info
