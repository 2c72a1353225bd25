# Tavern. `make run` to play, `make test` before every commit.
GO ?= go
STATICCHECK = $(GO) tool -modfile=tools/go.mod staticcheck

.PHONY: run build test lint vet generate e2e bench balance fmt clean cluster

# run prints the lobby URL and, once, the admin URL (Admin: http://HOST/admin?token=...).
run: build
	./bin/tavern

build:
	$(GO) build -o bin/tavern ./cmd/server

# cluster runs three nodes on one throwaway PostgreSQL (./data/pg, Debian's
# postgresql package) and prints their URLs; Ctrl-C stops everything.
cluster: build
	$(GO) run ./cmd/cluster

test: vet lint
	$(GO) test -race -timeout 20m ./...
	$(GO) test -run TestBalanceSmoke -v ./internal/balance
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

# Benchmarks, then the load generator (in-process server with the offline
# narrator, so the CPU it reports includes the bots'): 20 tables of 3
# players and 2 spectators, then 5 s of say fan-out to 20 tables × 20
# sockets. docs/performance.md has the runs against a separate server.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./cmd/loadgen -tables 20 -players 3 -spectators 2 -actions 15
	$(GO) run ./cmd/loadgen -mode fanout -fanout-tables 20 -duration 5s

# balance plays thousands of seeded offline fights per party (1 to 4
# level-1 characters, every class mix) against every built-in encounter
# on both rulesets and writes the win rates to docs/balance.md.
balance:
	$(GO) run ./cmd/balance -fights 100 -out docs/balance.md

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin build
