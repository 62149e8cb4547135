# Each target installs from the lockfile first when node_modules is missing or older than it.
.PHONY: run test generate migrate lint clean

INSTALLED := node_modules/.installed

$(INSTALLED): package-lock.json
	npm ci
	touch $@

run: $(INSTALLED)
	npm start

test: $(INSTALLED)
	npm test

generate: $(INSTALLED)
	npm run generate

migrate: $(INSTALLED)
	npm run migrate

lint: $(INSTALLED)
	npm run lint

clean:
	rm -rf dist coverage
