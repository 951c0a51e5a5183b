# Roundhouse developer commands. `make demo` and `make test` work on a fresh
# machine with Python 3.11 and (for the services) a Redis server.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PROTOS := $(wildcard proto/roundhouse/v1/*.proto)
GEN    := gen/python
GEN_STAMP := $(GEN)/.stamp

.PHONY: all venv proto demo test test-fast test-repeat bench lint fmt clean screenshots browser

all: venv

venv: $(STAMP) $(GEN_STAMP)

$(STAMP): pyproject.toml clients/python/pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed (set PYTHON=...)")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	mkdir -p $(GEN)/roundhouse/v1
	touch $(GEN)/roundhouse/__init__.py $(GEN)/roundhouse/v1/__init__.py
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet -e clients/python
	touch $@

# Generated protobuf/gRPC code lives in gen/python (not committed).
proto: $(GEN_STAMP)

$(GEN_STAMP): $(PROTOS) $(STAMP)
	rm -rf $(GEN)/roundhouse
	mkdir -p $(GEN)/roundhouse/v1
	touch $(GEN)/roundhouse/__init__.py $(GEN)/roundhouse/v1/__init__.py
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=$(GEN) --pyi_out=$(GEN) \
		--grpc_python_out=$(GEN) $(PROTOS)
	touch $@

demo: venv
	$(BIN)/roundhouse demo

test: venv browser
	$(BIN)/python -m pytest

# The real-browser tests (tests/integration/test_web_browser.py) drive Debian's chromium with
# Playwright (no browser download): installed here when it is missing (as root, or with sudo).
CHROMIUM ?= /usr/bin/chromium
browser:
	@test -x $(CHROMIUM) || command -v chromium >/dev/null 2>&1 || { \
		echo "installing chromium (the browser tests need it)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium; }

# The whole suite REPEAT times (default 3) while two busy loops compete for the 2 cores: a
# test that passes only on a quiet machine fails here. The loops end with the target.
REPEAT ?= 3
test-repeat: venv browser
	@set -e; hogs=""; trap 'kill $$hogs 2>/dev/null || true' EXIT INT TERM; \
	for _ in 1 2; do sh -c 'while :; do :; done' & hogs="$$hogs $$!"; done; \
	for run in $$(seq 1 $(REPEAT)); do \
		echo "test-repeat: run $$run of $(REPEAT), under two busy loops"; \
		$(BIN)/python -m pytest || exit 1; \
	done

test-fast: venv
	$(BIN)/python -m pytest -m "not integration"

screenshots: venv
	$(BIN)/roundhouse board railbarons --seed 3 --moves 220 --scale 1.6 --out docs/screenshots/railbarons.png
	$(BIN)/roundhouse board e1894 --seed 22 --moves 300 --scale 1.6 --out docs/screenshots/e1894.png
	$(BIN)/roundhouse board transsib --players 3 --seed 5 --moves 120 --scale 1.6 --out docs/screenshots/transsib.png

bench: venv
	$(BIN)/python -m benchmarks.run

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

fmt: venv
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) $(GEN) .pytest_cache .ruff_cache .hypothesis *.egg-info
