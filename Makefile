# The two commands the README gives: `make demo` and `make test`. Each sets itself up:
# a virtualenv in .venv, the package and its test extras, and the pinned Kafka / Spark connector
# jars from Maven Central, all cached under .cache (ignored by git) so a second run downloads nothing.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export SPARKMIRROR_CACHE ?= $(CURDIR)/.cache
export PIP_CACHE_DIR ?= $(SPARKMIRROR_CACHE)/pip

.PHONY: demo test unit java-test lint setup bench clean browser

$(BIN)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "sparkmirror needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@

setup: $(BIN)/.installed
	$(BIN)/sparkmirror setup

demo: setup
	$(BIN)/sparkmirror demo

test: setup lint browser java-test
	$(BIN)/python -m pytest

# The record path's JUnit tests (no broker, no Spark session), with Maven's repository where jars/maven.py keeps
# it. Quiet but for Surefire, whose lines end in the "Tests run: N, Failures: 0, Errors: 0, Skipped: 0" summary.
RECORD_PATH_POM := src/sparkmirror/pipeline/jvm/pom.xml
java-test:
	mvn -B -q -f $(RECORD_PATH_POM) -Dmaven.repo.local=$(or $(SPARKMIRROR_MAVEN_REPO),$(SPARKMIRROR_CACHE)/m2) \
		-Dorg.slf4j.simpleLogger.log.org.apache.maven.plugin.surefire=info test

# The web view's test renders it in headless Chromium: Debian's package, installed when missing (as root).
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update && apt-get install -y --no-install-recommends chromium; \
		else \
			echo "the web view's test needs /usr/bin/chromium: run 'make browser' as root" \
				"or 'sudo apt-get install chromium'" >&2; exit 1; \
		fi; \
	fi

lint: $(BIN)/.installed
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports

unit: $(BIN)/.installed
	$(BIN)/python -m pytest tests/unit

# Not part of the tests: sparkmirror against real MirrorMaker 2 (see benchmarks/README.md).
bench: setup
	$(BIN)/python -m benchmarks.run $(ARGS)

clean:
	rm -rf $(VENV) .cache .pytest_cache .hypothesis src/sparkmirror/pipeline/jvm/target
