# make test is the project's one test command; CI (.ci/run) calls exactly it.
GO ?= go
# cmd/sweep runs simulated benchmark points on a compressed clock: it gets
# the machine to itself after the other packages, so their load does not
# make the simulator fall behind its clock.
E2E_PKG := ./cmd/sweep
UNIT_PKGS = $(shell $(GO) list ./... | grep -v '/cmd/sweep$$')

.PHONY: test build vet bench deps

deps:
	@$(GO) mod download

build:
	$(GO) build -o bin/sweep ./cmd/sweep

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

test: deps vet
	$(GO) test -race -count=1 -timeout 10m $(UNIT_PKGS)
	$(GO) test -race -count=1 -timeout 10m $(E2E_PKG)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
