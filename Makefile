PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test install clean lock scale-demo screenshots

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/loopline demo

# Two processes: most end-to-end time is spent waiting for workers, servers and subprocesses.
test: $(STAMP)
	$(BIN)/python -m pytest -n 3 --dist worksteal

# The worker image installs exactly this (Dockerfile: --require-hashes): regenerate it after changing
# pyproject.toml's dependencies; tests/unit/test_image.py fails while the two disagree.
lock: $(STAMP)
	$(BIN)/pip install --quiet pip-tools
	CUSTOM_COMPILE_COMMAND="make lock" $(BIN)/pip-compile --quiet --upgrade --generate-hashes --allow-unsafe \
		--extra scale --build-deps-for wheel --strip-extras --no-emit-find-links --no-emit-index-url \
		--output-file requirements.lock pyproject.toml

# The scale deployment on this machine, without Docker: PostgreSQL and a Kafka-protocol broker of the test
# suite's, two workers and `loopline serve`; Ctrl-C stops them all.
scale-demo: $(STAMP)
	$(BIN)/python -m loopline.cli.scale_demo

# README's screenshot of the dashboard (docs/dashboard.png), taken by the browser tests as they run
screenshots: $(STAMP)
	LOOPLINE_DOCS_SCREENSHOTS=1 $(BIN)/python -m pytest tests/browser -q -p no:cacheprovider

clean:
	rm -rf $(VENV) .loopline .pytest_cache
