PYTHON ?= python3
# The LoCoMo development split (not shipped: `make locomo-dev LOCOMO10=PATH/locomo10.json` writes it here).
LOCOMO ?= data/locomo10-dev.json

.PHONY: test lint serve pyz locomo-dev eval eval-synthetic bench bench-locomo bench-isolation check-contract

# Tests come in three tiers, every module in one (a new module is fast unless listed below):
# - fast (`make test`): in-process, standard library only, under a minute;
# - end-to-end (`make test-e2e`): real servers, sockets and child processes (the CLI, tools), standard library only;
# - components (`make test-components`): real outside components (Chromium, the MCP SDK, systemd-analyze,
#   HAProxy, Litestream, LangChain and LlamaIndex, a sentence model), skipped with a reason where absent unless CI is set.
# .ci/run runs all three.
TESTS = $(patsubst %.py,%,$(subst /,.,$(sort $(wildcard tests/test_*.py))))
E2E_TESTS = tests.test_cli_process tests.test_client tests.test_client_bounds tests.test_client_sdk \
	tests.test_client_wire tests.test_evalkit_process tests.test_hash_seeds tests.test_http_hostile \
	tests.test_http_server tests.test_integrations_import tests.test_live_db tests.test_mcp_wire \
	tests.test_metrics_server tests.test_page_bytes_server tests.test_pyz tests.test_readme_examples \
	tests.test_tools_data tests.test_tuning tests.test_unclosed_exit tests.test_embedder_http
# The cluster tests (routing, replication, moving a user): real HAProxy and Litestream.
CLUSTER_TESTS = $(patsubst %.py,%,$(subst /,.,$(wildcard tests/test_cluster*.py tests/test_replication.py tests/test_move_user.py tests/test_rebalance.py)))
COMPONENT_TESTS = tests.test_inspector_browser tests.test_mcp_sdk tests.test_deploy tests.test_integrations tests.test_embedder_model \
	$(CLUSTER_TESTS)
FAST_TESTS = $(filter-out $(E2E_TESTS) $(COMPONENT_TESTS),$(TESTS))

.PHONY: test-e2e test-components test-all
# The fast tier runs its modules in one process per core (tests/parallel.py); `$(PYTHON) -m unittest MODULE`
# runs any of them alone.
test:
	$(PYTHON) -m tests.parallel $(FAST_TESTS)

test-e2e:
	$(PYTHON) -m unittest $(E2E_TESTS)

test-components:
	$(PYTHON) -m unittest -v $(COMPONENT_TESTS)

# Every tier, as CI runs them.
test-all: test test-e2e test-components

# Style and likely bugs (ruff) and types (mypy), zero findings; the versions .ci/lint-requirements.txt pins.
lint:
	$(PYTHON) -m ruff check flowmem tools tests
	$(PYTHON) -m mypy

serve:
	$(PYTHON) -m flowmem serve

# flowmem as one file, dist/flowmem.pyz, that any Python 3.9+ runs: `python3 dist/flowmem.pyz serve`.
pyz:
	$(PYTHON) -m tools.build_pyz --out dist/flowmem.pyz

# The development split of LoCoMo (from https://github.com/snap-research/locomo, data/locomo10.json) at $(LOCOMO).
locomo-dev:
	@test -n "$(LOCOMO10)" || { echo "error: give LOCOMO10=PATH/locomo10.json (from https://github.com/snap-research/locomo)" >&2; exit 1; }
	$(PYTHON) -m tools.locomo_dev $(LOCOMO10) --out $(LOCOMO)

# Retrieval quality on the LoCoMo development split (path: LOCOMO=...).
eval:
	$(PYTHON) -m tools.eval locomo $(LOCOMO)

# Retrieval quality on the committed synthetic suite.
eval-synthetic:
	$(PYTHON) -m tools.eval synthetic

# Speed: Add throughput (in-process and over HTTP), Search latency beside bare FTS5, memory, disk.
bench:
	$(PYTHON) -m tools.bench

# Speed on real conversation text: one user of LoCoMo text at 1k/10k/100k messages beside bare FTS5 (LOCOMO=...).
bench-locomo:
	$(PYTHON) -m tools.bench_locomo $(LOCOMO)

# Search latency of one user inside 1M messages of 1,000 others vs an empty database.
bench-isolation:
	$(PYTHON) -m tools.bench_isolation

# Run the independent contract checker against a server you started (ENDPOINT=...).
ENDPOINT ?= http://127.0.0.1:8000
check-contract:
	$(PYTHON) tools/contract_check.py --endpoint $(ENDPOINT)

# Soak: 64 keep-alive clients, mixed Add/Search, for SOAK_DURATION seconds (600): errors, p50/p99, server RSS.
SOAK_DURATION ?= 600
.PHONY: soak bench-slow-clients
soak:
	$(PYTHON) -m tools.soak --duration $(SOAK_DURATION)

# What slow and hostile clients (slowloris, stalled bodies, idle, non-readers) cost a real client.
bench-slow-clients:
	$(PYTHON) -m tools.bench_slow_clients

# A loopback cluster (issue 14): 3 nodes, Litestream beside each where installed, HAProxy in front, in ./cluster.
.PHONY: cluster cluster-down test-cluster bench-cluster
cluster:
	$(PYTHON) -m flowmem cluster up --nodes 3 --dir cluster

cluster-down:
	$(PYTHON) -m flowmem cluster down --dir cluster

# The cluster tests alone (a part of test-components); skipped without HAProxy and Litestream unless CI is set.
test-cluster:
	$(PYTHON) -m unittest -v $(CLUSTER_TESTS)

# Add throughput and Search p50/p99 through the front (1 and 3 nodes) beside a node directly (LOCOMO=...).
bench-cluster:
	$(PYTHON) -m tools.bench_cluster $(LOCOMO)
