VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint agents clean

$(STAMP): pyproject.toml
	@echo "[mmb] installing dependencies into $(VENV) (first run only, a few minutes) ..."
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)
	@echo "[mmb] dependencies installed"

run: $(STAMP)
	$(VENV)/bin/mmb-tui

test: $(STAMP)
	$(VENV)/bin/ruff check engine adapters mmb_tui tests bench
	$(VENV)/bin/ruff format --check engine adapters mmb_tui tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/pytest -n 2 --dist loadgroup

agents: $(STAMP)  ## the real agents, pinned, outside the tree (`make agents AGENT=hermes` for one)
	$(PY) -m adapters.local.install $(AGENT)

clean:
	rm -rf $(VENV)
