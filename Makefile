PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test install clean screenshots

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

# README's screenshot of the dashboard (docs/dashboard.png), taken by the browser tests as they run
screenshots: $(STAMP)
	LOOPLINE_DOCS_SCREENSHOTS=1 $(BIN)/python -m pytest tests/browser -q -p no:cacheprovider

clean:
	rm -rf $(VENV) .loopline .pytest_cache
