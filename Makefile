# make demo   records the clinic example once, then replays it with 8 workers on the embedded PostgreSQL
# make test   builds and runs the whole test suite (real PostgreSQL, real processes)
# make lint   checks the formatting (swift format, .swift-format); make format applies it
# make bench  release build and the benchmarks (ratios against peers measured in the same run)
# make install  the release binary and its libraries under PREFIX (default /usr/local), from make dist's archive
# make dist     dist/orchestrate-VERSION-linux-ARCH.tar.gz (+ .sha256): runs without a Swift toolchain
# make test-install  that archive in a fresh Debian root (debootstrap) and in an image built from Deploy/Containerfile
SWIFT ?= swift
# Extra flags for the test build; CI passes -Xswiftc -warnings-as-errors.
SWIFT_BUILD_FLAGS ?=
# Tests run at once at most: each test's time limit starts when it does, so an unbounded start on a loaded machine
# would spend them waiting for a thread. Seconds a test may run before the watchdog fails the run naming it.
TEST_WIDTH ?= 8
TEST_STUCK_AFTER ?= 600
DEBUG_BIN := $(CURDIR)/.build/debug/orchestrate
RELEASE_BIN := $(CURDIR)/.build/release/orchestrate
FORMATTED := Sources Tests Benchmarks/Sources Examples Package.swift

PREFIX ?= /usr/local

.PHONY: all deps build test lint format demo bench clean dist install test-install

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	$(SWIFT) build

test:
	@./scripts/install-deps.sh test
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	./scripts/test-watchdog.py --stuck-after $(TEST_STUCK_AFTER) -- \
		$(SWIFT) test --skip-build --experimental-maximum-parallelization-width $(TEST_WIDTH)

lint:
	$(SWIFT) format lint --recursive --strict $(FORMATTED)

format:
	$(SWIFT) format format --in-place --recursive $(FORMATTED)

demo: build
	@./Examples/clinic/demo.sh

bench:
	@./scripts/install-deps.sh bench
	$(SWIFT) build -c release
	./Benchmarks/run.sh $(RELEASE_BIN)

dist:
	@./scripts/install-deps.sh
	./scripts/dist.sh dist

# The archive's tree (bin/orchestrate, lib/orchestrate/), so that the binary finds its libraries where it looks.
install: dist
	mkdir -p "$(DESTDIR)$(PREFIX)"
	tar -xzf "$$(ls -t dist/orchestrate-*.tar.gz | head -1)" -C "$(DESTDIR)$(PREFIX)" --strip-components=1 \
		--no-same-owner orchestrate/bin orchestrate/lib
	@echo "installed $(DESTDIR)$(PREFIX)/bin/orchestrate"

test-install:
	@./scripts/install-deps.sh install
	./scripts/test-install.sh

clean:
	rm -rf .build .orchestrate Examples/*/.orchestrate Examples/clinic/Recordings
