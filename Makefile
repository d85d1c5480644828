# kvpool: make run / make test first; everything else is a lab experiment.
GO ?= go
BIN := bin

# kvserver settings for `make run`; empty ones fall back to KVPOOL_* env
# variables, then to kvserver's defaults (see README).
POOL ?=
ADDR ?=
DATA ?=
ARGS ?=

.PHONY: all run build test vet fmt-check lint bench-http tools-wrk clean

all: build

build:
	$(GO) build -o $(BIN)/kvserver ./cmd/kvserver

run: build
	./$(BIN)/kvserver $(if $(POOL),-pool $(POOL)) $(if $(ADDR),-addr $(ADDR)) $(if $(DATA),-data $(DATA)) $(ARGS)

vet:
	$(GO) vet ./...

fmt-check:
	@files=$$(gofmt -l cmd internal); if [ -n "$$files" ]; then echo "not gofmt-ed:" $$files; exit 1; fi

# The whole suite under the race detector; vet and gofmt first.
test: vet fmt-check
	$(GO) test -race -count=1 -timeout 600s ./...

STATICCHECK_VERSION := 2026.2.2
# staticcheck, installed into bin/ at a pinned version.
lint:
	GOBIN=$(CURDIR)/$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	./$(BIN)/staticcheck ./...

# Server CPU per request under wrk -t1 -c64 (GET and PUT, random keys),
# per pool, 3 rounds; fills 2M x 500 B first (kept in results/bench-http/data).
# Settings: see the header of loadtest/bench-http.sh, e.g. make bench-http POOLS="direct fifo".
bench-http: tools-wrk
	$(if $(POOLS),POOLS="$(POOLS)") bash loadtest/bench-http.sh

tools-wrk:
	@command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }

clean:
	rm -rf $(BIN)
