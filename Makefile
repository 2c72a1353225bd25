# Tavern. `make run` to play, `make test` before every commit.
GO ?= go
STATICCHECK = $(GO) tool -modfile=tools/go.mod staticcheck

.PHONY: run build test lint vet generate e2e bench fmt clean

run: build
	./bin/tavern

build:
	$(GO) build -o bin/tavern ./cmd/server

test: vet lint
	$(GO) test -race ./...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

lint:
	$(STATICCHECK) ./...

generate:
	$(GO) tool templ generate

e2e:
	bash e2e/run.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin build
