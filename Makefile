# kvpool: make run / make test first; everything else is a lab experiment.
GO ?= go
BIN := bin

# kvserver settings for `make run`; empty ones fall back to KVPOOL_* env
# variables, then to kvserver's defaults (see README).
POOL ?=
ADDR ?=
DATA ?=
ARGS ?=

.PHONY: all run build test vet bench-http clean

all: build

build:
	$(GO) build -o $(BIN)/kvserver ./cmd/kvserver

run: build
	./$(BIN)/kvserver $(if $(POOL),-pool $(POOL)) $(if $(ADDR),-addr $(ADDR)) $(if $(DATA),-data $(DATA)) $(ARGS)

vet:
	$(GO) vet ./...

# The whole suite under the race detector; vet first.
test: vet
	$(GO) test -race -count=1 -timeout 600s ./...

clean:
	rm -rf $(BIN)
