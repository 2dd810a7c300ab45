# make demo   runs the example suite with 8 workers on the embedded PostgreSQL
# make test   builds and runs the whole test suite (real PostgreSQL, real processes)
# make bench  release build and the benchmarks (ratios against peers measured in the same run)
SWIFT ?= swift
DEBUG_BIN := $(CURDIR)/.build/debug/orchestrate
RELEASE_BIN := $(CURDIR)/.build/release/orchestrate

.PHONY: all deps build test demo bench clean

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	$(SWIFT) build

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

demo: build
	@echo "== orchestrate run --workers 8 (Examples/basic; the embedded PostgreSQL starts on demand)"
	@cd Examples/basic && $(DEBUG_BIN) run --workers 8 --junit .orchestrate/junit.xml; status=$$?; \
	  if [ $$status -gt 1 ]; then exit $$status; fi; \
	  echo "(exit status $$status: the example has one genuinely failing scenario, on purpose)"
	@echo; echo "== orchestrate runs"
	@cd Examples/basic && $(DEBUG_BIN) runs --limit 5
	@echo; echo "== orchestrate scenarios (expected durations now come from history)"
	@cd Examples/basic && $(DEBUG_BIN) scenarios

bench:
	@./scripts/install-deps.sh bench
	$(SWIFT) build -c release
	./Benchmarks/run.sh $(RELEASE_BIN)

clean:
	rm -rf .build .orchestrate Examples/*/.orchestrate
