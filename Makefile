# Each target installs from the lockfile first when node_modules is missing or older than it.
.PHONY: run test contract mock mock-dynamic generate migrate lint clean

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

# The API from the document's examples on http://127.0.0.1:4010/v1, no database needed.
mock: $(INSTALLED)
	npm run mock

# The same, with data generated from the schemas.
mock-dynamic: $(INSTALLED)
	npm run mock:dynamic

generate: $(INSTALLED)
	npm run generate

migrate: $(INSTALLED)
	npm run migrate

lint: $(INSTALLED)
	npm run lint

clean:
	rm -rf dist coverage
