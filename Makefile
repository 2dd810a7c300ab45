# make demo   records the clinic example once, then replays it with 8 workers on the embedded PostgreSQL
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

test:
	@./scripts/install-deps.sh test
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

demo: build
	@./Examples/clinic/demo.sh

bench:
	@./scripts/install-deps.sh bench
	$(SWIFT) build -c release
	./Benchmarks/run.sh $(RELEASE_BIN)

clean:
	rm -rf .build .orchestrate Examples/*/.orchestrate Examples/clinic/Recordings
