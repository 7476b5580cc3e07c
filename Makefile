# wearhouse: build, test, benchmark, fuzz and install. `make test` and `make demo` work on a fresh Debian 12
# machine with Swift 6.3: they install what they need from Debian's packages first (`make deps`).

SWIFT        ?= swift
PREFIX       ?= /usr/local
DESTDIR      ?=
BINDIR       := $(DESTDIR)$(PREFIX)/bin
FUZZ_SECONDS ?= 600
# The short fuzz pass that `make test` (and so CI) runs.
FUZZ_SMOKE_SECONDS ?= 30
SCENARIO     ?=
BENCH_FLAGS  ?=

# Debian packages the build and the tests need. Each is installed only when missing.
DEB_PACKAGES := pkg-config libsqlite3-dev libsystemd-dev libpq-dev libudev-dev libbluetooth-dev python3 dbus-daemon systemd tzdata bluez

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build test lint format fuzz fuzz-smoke fuzz-build bench demo install uninstall clean

all: build

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	    echo "Installing Debian packages:$$missing"; \
	    $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi

build: deps
	$(SWIFT) build

# Lint, the fuzz pass and the quick benchmarks run first, so that the test runner's summary is the last line.
test: deps lint
	$(MAKE) --no-print-directory fuzz-smoke
	$(MAKE) --no-print-directory bench BENCH_FLAGS=--quick
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --parallel

# Formatting: .swift-format (4 spaces, 120 columns); `make format` rewrites, `make lint` checks.
SWIFT_FILES = $(shell git ls-files 'Sources/*.swift' 'Tests/*.swift' 'Fuzz/*.swift' 2>/dev/null || find Sources Tests Fuzz -name '*.swift')

lint:
	$(SWIFT) format lint --strict $(SWIFT_FILES)

format:
	$(SWIFT) format -i $(SWIFT_FILES)

# libFuzzer over every GATT decoder: the GATT sources and Fuzz/GATTFuzzer.swift compiled as one module.
FUZZER := .fuzz/gatt-fuzzer
GATT_SOURCES := $(wildcard Sources/GATT/*.swift Sources/GATT/*/*.swift)

$(FUZZER): $(GATT_SOURCES) Fuzz/GATTFuzzer.swift
	@mkdir -p .fuzz/corpus
	$(SWIFT)c -sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -module-name GATT \
	    $(GATT_SOURCES) Fuzz/GATTFuzzer.swift -o $@ 2>&1 | { grep -v "Cannot export local symbol" || true; }
	@test -x $@

fuzz-build: deps $(FUZZER)

fuzz: fuzz-build
	$(FUZZER) -max_total_time=$(FUZZ_SECONDS) -max_len=256 -print_final_stats=1 .fuzz/corpus

fuzz-smoke: fuzz-build
	$(FUZZER) -max_total_time=$(FUZZ_SMOKE_SECONDS) -max_len=256 -print_final_stats=1 .fuzz/corpus 2>&1 | tail -4

bench: deps
	$(SWIFT) build -c release --product Benchmarks
	.build/release/Benchmarks $(BENCH_FLAGS) $(SCENARIO)

demo: deps
	$(SWIFT) build --product wearhouse
	@sh Scripts/demo.sh .build/debug/wearhouse

install: build
	$(SWIFT) build -c release --product wearhouse
	install -d $(BINDIR)
	install -m 0755 .build/release/wearhouse $(BINDIR)/wearhouse

uninstall:
	rm -f $(BINDIR)/wearhouse

clean:
	rm -rf .build .fuzz .bench
