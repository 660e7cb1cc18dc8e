PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test install clean

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

clean:
	rm -rf $(VENV) .loopline .pytest_cache
