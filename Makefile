# Tavern. `make run` to play, `make test` before every commit.
GO ?= go
STATICCHECK = $(GO) tool -modfile=tools/go.mod staticcheck

.PHONY: run build test lint vet generate e2e bench fmt clean

# run prints the lobby URL and, once, the admin URL (Admin: http://HOST/admin?token=...).
run: build
	./bin/tavern

build:
	$(GO) build -o bin/tavern ./cmd/server

test: vet lint
	$(GO) test -race ./...
	node --test web/static/

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

lint:
	$(STATICCHECK) ./...

generate:
	$(GO) tool templ generate

e2e:
	bash e2e/run.sh

# Benchmarks, then the load generator: 20 tables of 3 players and 2
# spectators on loopback, in-process server with the offline narrator.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./cmd/loadgen -tables 20 -players 3 -spectators 2 -actions 15

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin build
