# make test is the project's one test command; CI (.ci/run) calls exactly it.
GO ?= go
# The race detector multiplies run time; packages listed here run without it
# (slow end-to-end paths), everything else runs with it.
RACE_PKGS := $(shell $(GO) list ./... )

.PHONY: test build vet fmt bench deps

deps:
	@$(GO) mod download

build:
	$(GO) build -o bin/sweep ./cmd/sweep

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

test: deps vet
	$(GO) test -race -count=1 -timeout 12m $(RACE_PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
