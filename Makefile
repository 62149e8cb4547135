# Each target installs from the lockfile first when node_modules is missing or older than it.
.PHONY: run test contract bench mock mock-dynamic sandbox sandbox-proxy verify-pact check-pact generate migrate lint clean

INSTALLED := node_modules/.installed

$(INSTALLED): package-lock.json
	npm ci
	touch $@

run: $(INSTALLED)
	npm start

test: $(INSTALLED)
	npm test

# The HTTP tests through prism proxy --errors, in front of the real service.
contract: $(INSTALLED)
	npm run test:contract

# Throughput and latency against a bare node:http + mysql2 baseline on the local MariaDB, the
# same on SQLite, then the scale check (a million tasks), then two instances on a three-node
# Galera cluster against one on one server; prints figures and writes them, dated, to
# benchmarks/current.md (see BENCHMARKS.md).
bench: $(INSTALLED)
	npm run bench

# The mock's port: `make mock MOCK_PORT=4020` where 4010 is taken.
MOCK_PORT ?= 4010

# The API from the document's examples on http://127.0.0.1:$(MOCK_PORT)/v1, no database needed.
mock: $(INSTALLED)
	npm run mock -- --port $(MOCK_PORT)

# The same, with data generated from the schemas.
mock-dynamic: $(INSTALLED)
	npm run mock:dynamic -- --port $(MOCK_PORT)

# The real service on a throwaway SQLite file, with demo tenants, keys and data (see the README).
sandbox: $(INSTALLED)
	npm run sandbox

# The sandbox behind Prism's validating proxy on the mock's port.
sandbox-proxy: $(INSTALLED)
	npm run sandbox:proxy -- --proxy-port $(MOCK_PORT)

# Consumers' pacts verified against a sandbox of their own: make verify-pact PACTS="pacts/ other.json"
verify-pact: $(INSTALLED)
	npm run -s contract -- verify-pact $(PACTS)

# The same pacts' HTTP interactions compared with the document, no service running.
check-pact: $(INSTALLED)
	npm run -s contract -- check-pact $(PACTS)

generate: $(INSTALLED)
	npm run generate

migrate: $(INSTALLED)
	npm run migrate

lint: $(INSTALLED)
	npm run lint

clean:
	rm -rf dist coverage
