# Two commands do all set-up on a fresh machine:
#   make synth   venv + install + `batch-quota check` + synthesize the default topology
#   make test    venv + install + the whole test suite
VENV   := .venv
PYTHON := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
RUFF   := $(VENV)/bin/ruff check .
MYPY   := $(VENV)/bin/mypy
# jsii's "Node 20 is end-of-life" banner, for the Node majors the project supports (importing quota_constructs
# sets the same unless it is set); JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION does not silence it.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20,22,24

.PHONY: test test-sdk test-checkov synth check lint bench clean system-deps graph report compile rehearse

# The install compiles the simulator's hot path (setup.py, mypyc); `compile` rebuilds it after an edit.
$(STAMP): pyproject.toml setup.py
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e '.[cdk,dev]'
	touch $(STAMP)

# The simulator's hot path, compiled again when the build does not match its sources (an edit, a checkout, a
# missing compiled file; `policy_engine/simulation/compiled.py` decides, in a few milliseconds), never when
# BATCH_QUOTA_PURE_PYTHON asks for the source. A build from before the hot path moved to `simulation/core/` is removed.
compile: $(STAMP)
	@rm -f policy_engine/simulation/*.so policy_engine/simulation/_compiled_sources.py
	@$(PYTHON) -W ignore -c 'import os, sys; from policy_engine.simulation import compiled; \
	  sys.exit(not (compiled.runs_compiled or compiled.asks_for_source(os.environ)))' \
	  || $(PYTHON) setup.py --quiet build_ext --inplace

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	touch $@

# `make test` lints first: ruff, then mypy (zero errors is the bar), then the suite.
test: compile node_modules/.installed
	$(RUFF)
	$(MYPY)
	$(PYTHON) -m pytest -q -n 2

# The SageMaker Python SDK (sagemaker-train: ~4 min and ~0.9 GB to install, with its own version pins) in its
# own environment, driving `batch-quota serve` through TrainingQueue / TrainingQueuedJob. Not part of `make test`.
SDK_VENV := .venv-sdk
$(SDK_VENV)/.installed:
	python3 -m venv $(SDK_VENV)
	$(SDK_VENV)/bin/python -m pip install --quiet 'sagemaker-train>=1.27'
	touch $@

test-sdk: $(STAMP) $(SDK_VENV)/.installed
	BATCH_QUOTA_SDK_PYTHON=$(CURDIR)/$(SDK_VENV)/bin/python $(PYTHON) -m pytest -q -m sdk tests/policy_engine/adapters/endpoint

# checkov (its pins conflict with the project's: it gets its own environment, as the SDK does) over the templates
# the constructs synthesize, the monitoring stack included. Not part of `make test`.
CHECKOV_VENV := .venv-checkov
$(CHECKOV_VENV)/.installed:
	python3 -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install --quiet 'checkov>=3.2'
	touch $@

test-checkov: $(STAMP) node_modules/.installed $(CHECKOV_VENV)/.installed
	BATCH_QUOTA_CHECKOV=$(CURDIR)/$(CHECKOV_VENV)/bin/checkov $(PYTHON) -m pytest -q -m checkov tests/quota_constructs

# The deploy rehearsal (docs/rehearsal.md): `cdk deploy`, `cdk diff` and `cdk destroy` of the default app against
# `batch-quota serve`, no AWS account: only environment variables point the pinned CDK CLI at the endpoint.
REHEARSE_PORT ?= 4598
rehearse: compile node_modules/.installed
	@$(VENV)/bin/batch-quota serve --port $(REHEARSE_PORT) --speed 0 & pid=$$!; trap "kill $$pid" EXIT; \
	for i in $$(seq 100); do curl -sf http://127.0.0.1:$(REHEARSE_PORT)/_batch-quota/clock >/dev/null && break; \
	  sleep 0.1; done; \
	export AWS_ENDPOINT_URL=http://127.0.0.1:$(REHEARSE_PORT) AWS_ACCESS_KEY_ID=rehearsal \
	  AWS_SECRET_ACCESS_KEY=rehearsal AWS_REGION=us-east-1 PATH="$(CURDIR)/$(VENV)/bin:$$PATH"; \
	npx --no-install cdk deploy --require-approval never && npx --no-install cdk diff && \
	npx --no-install cdk destroy --force

# ruff, then mypy over policy_engine and quota_constructs (settings in pyproject.toml [tool.mypy]).
lint: $(STAMP)
	$(RUFF)
	$(MYPY)

check: compile
	$(VENV)/bin/batch-quota check

synth: compile node_modules/.installed
	$(VENV)/bin/batch-quota check
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" npx --no-install cdk synth --quiet

bench: compile node_modules/.installed
	$(PYTHON) benchmarks/check_bench.py
	$(PYTHON) benchmarks/simulate_bench.py
	$(PYTHON) benchmarks/floor_bench.py
	$(PYTHON) benchmarks/report_bench.py
	$(PYTHON) benchmarks/wait_causes_bench.py
	$(PYTHON) benchmarks/table_render_bench.py --sizes 1000000
	$(PYTHON) benchmarks/diff_bench.py
	$(PYTHON) benchmarks/import_bench.py --history 50000
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PYTHON) benchmarks/synth_bench.py

# The README's pictures: the default topology's borrow graph, and AWS's walkthrough as an HTML report.
graph: compile
	@command -v dot >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz; }
	$(VENV)/bin/batch-quota graph -o borrow-graph.svg

report: compile
	$(VENV)/bin/batch-quota simulate scenarios/walkthrough.yaml --report report

# Graphviz draws `batch-quota graph` as .svg/.png; Chromium opens the HTML report in a test (Debian packages, as root).
# Graphviz (the borrow graph), headless Chromium (the HTML report's test), tmux (the `top` test's real terminal).
system-deps:
	@command -v dot >/dev/null && command -v chromium >/dev/null && command -v chromedriver >/dev/null \
	  && command -v tmux >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz chromium chromium-driver tmux; }

clean:
	rm -rf $(VENV) $(SDK_VENV) node_modules cdk.out .pytest_cache .hypothesis .mypy_cache .ruff_cache build
	rm -f policy_engine/simulation/core/*.so policy_engine/simulation/core/_compiled_sources.py
