# wearhouse: build, test, benchmark, fuzz and install. `make test` and `make demo` work on a fresh Debian 12
# machine with Swift 6.3: they install what they need from Debian's packages first (`make deps`).

SWIFT        ?= swift
PREFIX       ?= /usr/local
DESTDIR      ?=
BINDIR       := $(DESTDIR)$(PREFIX)/bin
FUZZ_SECONDS ?= 600
# The short fuzz pass that `make test` (and so CI) runs.
FUZZ_SMOKE_SECONDS ?= 10
# Calls of the D-Bus API fuzzer under `make fuzz` (`make test` runs 300; WEARHOUSE_API_FUZZ_SEED replays a run).
API_FUZZ_CALLS ?= 20000
SCENARIO     ?=
BENCH_FLAGS  ?=
# The Python tools the tests and benchmarks run (selenium, fhir.resources, jsonschema, bleak, healthkit-to-sqlite),
# in a venv that sees Debian's Python packages. Set before any rule names it: make expands prerequisites as it reads.
VENV         := .venv

# Debian packages the build and the tests need. Each is installed only when missing.
DEB_PACKAGES := pkg-config libsqlite3-dev libsystemd-dev libpq-dev libudev-dev libbluetooth-dev python3 dbus-daemon systemd tzdata bluez \
    python3-dbus python3-gi libglib2.0-bin util-linux python3-dbusmock postgresql libmicrohttpd-dev libgnutls28-dev openssl curl \
    chromium chromium-driver python3-venv dpkg-dev init-system-helpers groff-base man-db bash-completion zsh fish \
    lintian sqlite3 libxml2-dev libzip-dev

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: audit-closures all deps build test test-web test-fhir test-omh test-bleak test-bluez venv lint format fuzz fuzz-traces fuzz-smoke fuzz-build bench demo \
    install uninstall clean deb test-deb

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

# Lint, the fuzz pass and the package test (Tests/Package/test-deb.sh, on the tests' debug binary) come first, so
# that the test runner's summary is the last line. A smoke run of the
# benchmarks (the smallest sizes from the debug build: every scenario and its peers still run; `make bench`
# measures) goes side by side with the first test process, whose suites mostly wait on the PostgreSQL server.
# The tests run in three processes: the suites that wait on other processes (the PostgreSQL server, the
# wearhouse binary) block threads of the cooperative pool while they wait, which on a 2-core machine would
# starve the D-Bus suites' time limits if they shared one process with them.
# The tests' build carries no debug information, less to compile and link (clean builds on 2 cores: 219-262 s
# without, 251-265 s with). A failing test still names its file and line (Swift Testing records them); only a
# crash's backtrace lacks line numbers.
BLOCKING_SUITES := StoreConformanceTests|PostgresStoreTests|CLITests
TEST_BUILD := -debug-info-format none
SWIFT_TEST = $(SWIFT) test --skip-build $(TEST_BUILD) --parallel
# Each test process and the benchmarks' smoke run has a wall-clock limit (Tests/Package/bounded.sh: a test that
# waits forever fails `make test` naming itself, its output line by line in .build/test-logs/). The longest, the
# CLI tests, take about 2.5 minutes quiet and 6 under load.
TEST_LIMIT ?= 1200
BOUNDED = Tests/Package/bounded.sh $(TEST_LIMIT)
test: deps lint $(VENV)/.healthkit
	$(MAKE) --no-print-directory fuzz-smoke
	$(SWIFT) build --build-tests $(TEST_BUILD)
	$(MAKE) --no-print-directory test-deb
	@$(BOUNDED) .build/bench-smoke.log .build/debug/Benchmarks --smoke > .build/bench-smoke.out 2>&1 & bench=$$!; \
	$(BOUNDED) .build/test-logs/stores.log $(SWIFT_TEST) --filter 'StoreConformanceTests|PostgresStoreTests'; \
	tests=$$?; wait $$bench; bench=$$?; \
	if [ $$bench = 0 ]; then echo "benchmarks: every scenario ran at smoke size (.build/bench-smoke.log)"; \
	else cat .build/bench-smoke.out; fi; \
	test $$tests = 0 && test $$bench = 0
	@$(BOUNDED) .build/test-logs/cli.log $(SWIFT_TEST) --filter CLITests
	@$(BOUNDED) .build/test-logs/others.log $(SWIFT_TEST) --skip '$(BLOCKING_SUITES)'
	$(MAKE) --no-print-directory test-web
	$(MAKE) --no-print-directory test-fhir
	$(MAKE) --no-print-directory test-omh
	$(MAKE) --no-print-directory test-bluez
	$(MAKE) --no-print-directory test-bleak BLEAK_LIVE=.build/bluez-vm/out/traffic-bluez.txt

# The Health app in a real browser (Tests/Web/browser_tests.py): Debian's chromium and chromium-driver, driven by
# Selenium from .venv, against the real `wearhouse web` on temporary stores (empty, filled, and `wearhouse demo`s)
# and over HTTPS with a certificate openssl makes; screenshots in .build/screenshots/.
# About 70 s, 2.5 minutes on a loaded 2-core machine (20 pages on each of three stores, `wearhouse demo` for 4 s).
# The venv sees Debian's Python packages (python3-dbus, for the D-Bus client the test runs).
$(VENV)/.selenium:
	/usr/bin/python3 -m venv --system-site-packages $(VENV)
	$(VENV)/bin/pip install -q selenium
	@touch $@

venv: deps $(VENV)/.selenium

# `export --format fhir` parsed by the `fhir.resources` package's R4B models (R4's Observation) in .venv, with the
# vital-signs profiles' codes, categories and UCUM units checked (Tests/FHIR/validate_export.py). About 2 s.
$(VENV)/.fhir: $(VENV)/.selenium
	$(VENV)/bin/pip install -q 'fhir.resources==8.3.0'
	@touch $@

# `export --format ndjson` against the rules of the Open mHealth schemas it names (Tests/OpenMHealth/validate_export.py,
# with the `jsonschema` package in .venv), and read back into an empty store: the same export. About 2 s.
$(VENV)/.omh: $(VENV)/.selenium
	$(VENV)/bin/pip install -q 'jsonschema==4.26.0' 'rfc3339-validator==0.1.4'
	@touch $@

# healthkit-to-sqlite (PyPI), the peer of the apple-health benchmark (Sources/Benchmarks/AppleHealthScenario.swift):
# pinned, with the sqlite-utils it writes through. `make bench` and `make test` (its smoke run) install it.
$(VENV)/.healthkit:
	@test -x $(VENV)/bin/pip || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	$(VENV)/bin/pip install -q 'healthkit-to-sqlite==1.0.1' 'sqlite-utils==4.2.1'
	@touch $@

test-omh: deps $(VENV)/.omh
	$(SWIFT) build --product wearhouse $(TEST_BUILD)
	$(VENV)/bin/python Tests/OpenMHealth/validate_export.py .build/debug/wearhouse

test-fhir: deps $(VENV)/.fhir
	$(SWIFT) build --product wearhouse $(TEST_BUILD)
	$(VENV)/bin/python Tests/FHIR/validate_export.py .build/debug/wearhouse

# bleak (the most used Python BLE library, in .venv) against `wearhouse fake-bluez` on a private system bus, 20
# times: find the strap by address, connect, read, notify, disconnect (Tests/BlueZClients/bleak_fakebluez.py).
# Every run must pass. First, Tests/BlueZClients/bluez_traffic.py's scenario against the same fake must see the
# calls, replies, errors and signals the real bluetoothd 5.66 gave it in the VM (traffic-bluez-5.66.txt) and, with
# BLEAK_LIVE=FILE (as `make test` does after test-bluez), what it saw in this machine's VM run. About 50 s (the
# strap notifies once a second).
$(VENV)/.bleak: $(VENV)/.selenium
	$(VENV)/bin/pip install -q 'bleak==3.1.0'
	@touch $@

test-bleak: deps $(VENV)/.bleak
	$(SWIFT) build --product wearhouse $(TEST_BUILD)
	$(VENV)/bin/python Tests/BlueZClients/bleak_fakebluez.py .build/debug/wearhouse 20 $(if $(BLEAK_LIVE),--live $(BLEAK_LIVE))

test-web: venv
	$(SWIFT) build --product wearhouse $(TEST_BUILD)
	$(VENV)/bin/python Tests/Web/browser_tests.py

# The real BlueZ: a qemu VM (TCG, no KVM needed) with Debian's kernel (bookworm-backports' 6.12), bluetoothd 5.66
# and ten btvirt controllers runs Tests/BlueZVM/scenarios.sh against the wearhouse binary built here: three
# straps, a footpod and a bathroom scale, one gateway, link faults, bluetoothd restarted, the controllers removed, a
# layout change, SIGTERM, the trace replayed, the fidelity client; stored = sent per sensor (about 5 minutes on a
# quiet machine). Results and
# captures go to .build/bluez-vm/out (docs/bluez-vm.md). setup-host.sh installs what it needs and fetches the
# kernel once. It fails, never skips, when the VM cannot run; `make test` runs it whole. A boot whose guest kernel
# oopsed or whose bluetoothd crashed (docs/bluez-vm.md, pitfalls) is run once more, and says so; any other
# failure, or a second crash, fails. BLUEZ_SCENARIOS=stack,scan,pair,stream picks scenarios.
BLUEZ_SCENARIOS ?=
BLUEZ_RUN = Tests/BlueZVM/run-vm.sh $(if $(BLUEZ_SCENARIOS),-S $(BLUEZ_SCENARIOS)) -T 900
test-bluez: deps
	$(SWIFT) build --product wearhouse $(TEST_BUILD)
	Tests/BlueZVM/setup-host.sh
	@$(BLUEZ_RUN); status=$$?; \
	if [ $$status != 0 ] && grep -q -e 'kernel BUG' -e 'Oops' -e 'oopsed' -e 'Segmentation fault' -e 'double free' \
	    -e 'Aborted' -e 'bluetoothd died' .build/bluez-vm/out/console.log .build/bluez-vm/out/scenarios.log \
	    .build/bluez-vm/out/bluetoothd.log 2>/dev/null; then \
	    echo "test-bluez: the guest crashed (docs/bluez-vm.md), not a scenario: booting once more"; \
	    rm -rf .build/bluez-vm/out-first; cp -r .build/bluez-vm/out .build/bluez-vm/out-first; \
	    $(BLUEZ_RUN); status=$$?; \
	fi; exit $$status

# Formatting: .swift-format (4 spaces, 120 columns); `make format` rewrites, `make lint` checks.
SWIFT_FILES = $(shell git ls-files 'Sources/*.swift' 'Tests/*.swift' 'Fuzz/*.swift' 2>/dev/null || find Sources Tests Fuzz -name '*.swift')

lint:
	$(SWIFT) format lint --strict $(SWIFT_FILES)

format:
	$(SWIFT) format -i $(SWIFT_FILES)

# Swift 6.3.1 can give a closure inside `#expect(...)` and a later closure of the same type one symbol, so that
# both run the first body (Tests/Package/closure_audit.py). This emits each test target's SILGen and looks for
# closures referenced twice. About 6 minutes on 2 cores; not part of make test. Needs a debug build first.
TEST_TARGETS := CLITests DBusTests FakeDevicesTests GATTTests GatewayTests HealthBusTests HealthImportsTests \
	HealthTests HealthWebTests PostgresStoreTests SQLiteStoreTests StoreConformanceTests StoreEngineTests \
	SupportTests TracesTests
audit-closures:
	$(SWIFT) build --build-tests $(TEST_BUILD)
	@mkdir -p .build/closure-audit
	@for target in $(TEST_TARGETS); do \
		swiftc -emit-silgen -wmo -parse-as-library -enable-testing -package-name main -swift-version 6 \
			-module-name $$target -I .build/debug/Modules -I .build/debug -I /usr/include/libxml2 \
			$(foreach map,$(wildcard Sources/C*/module.modulemap),-Xcc -fmodule-map-file=$(CURDIR)/$(map)) \
			Tests/$$target/*.swift -o .build/closure-audit/$$target.sil || exit 1; \
	done
	python3 Tests/Package/closure_audit.py .build/closure-audit/*.sil

# libFuzzer: one binary (Fuzz/FuzzerEntry.swift) with two targets, chosen by WEARHOUSE_FUZZ_TARGET: every GATT
# decoder (`make fuzz`), and the trace line parser with the btsnoop importer (`make fuzz-traces`, seeded from
# Fuzz/traces-seeds). The GATT and Traces sources and the fuzz targets are compiled as one module (so the targets see
# its internals), over the Support module (compiled first, instrumented the same way).
FUZZER := .fuzz/fuzzer
GATT_SOURCES := $(wildcard Sources/GATT/*.swift Sources/GATT/*/*.swift)
TRACES_SOURCES := $(wildcard Sources/Traces/*.swift)
SUPPORT_SOURCES := $(wildcard Sources/Support/*.swift)
FUZZ_SOURCES := $(wildcard Fuzz/*.swift)
FUZZ_SUPPORT := .fuzz/modules/Support.o
FUZZ_GATT = WEARHOUSE_FUZZ_TARGET=gatt $(FUZZER) -max_len=256 -print_final_stats=1 .fuzz/corpus
FUZZ_TRACES = WEARHOUSE_FUZZ_TARGET=traces $(FUZZER) -max_len=4096 -print_final_stats=1 .fuzz/traces-corpus \
    Fuzz/traces-seeds

$(FUZZ_SUPPORT): $(SUPPORT_SOURCES)
	@mkdir -p .fuzz/modules
	$(SWIFT)c -sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -wmo -module-name Support \
	    -emit-module -emit-module-path .fuzz/modules/Support.swiftmodule -c $(SUPPORT_SOURCES) -o $@

$(FUZZER): $(GATT_SOURCES) $(TRACES_SOURCES) $(FUZZ_SOURCES) $(FUZZ_SUPPORT)
	@mkdir -p .fuzz/corpus .fuzz/traces-corpus
	$(SWIFT)c -sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -j 2 -module-name GATT -I .fuzz/modules \
	    $(GATT_SOURCES) $(TRACES_SOURCES) $(FUZZ_SOURCES) $(FUZZ_SUPPORT) -o $@ 2>&1 \
	    | { grep -v -e "Cannot export local symbol" -e "ignoring import" -e "^ *|" -e "^ *[0-9]* |" || true; }
	@test -x $@

fuzz-build: deps $(FUZZER)

fuzz: fuzz-build
	$(FUZZ_GATT) -max_total_time=$(FUZZ_SECONDS)
	WEARHOUSE_API_FUZZ_CALLS=$(API_FUZZ_CALLS) $(SWIFT) test --filter APIFuzzTests

fuzz-traces: fuzz-build
	$(FUZZ_TRACES) -max_total_time=$(FUZZ_SECONDS)

# Both targets for a short while (CI), side by side (each fuzzer is one thread). The output goes to logs whose ends
# are shown, so that a crash fails the target (a pipe into tail would hide the fuzzer's status).
fuzz-smoke: fuzz-build
	@$(FUZZ_GATT) -max_total_time=$(FUZZ_SMOKE_SECONDS) > .fuzz/smoke.log 2>&1 & gatt=$$!; \
	$(FUZZ_TRACES) -max_total_time=$(FUZZ_SMOKE_SECONDS) > .fuzz/traces-smoke.log 2>&1; traces=$$?; \
	wait $$gatt; gatt=$$?; tail -4 .fuzz/smoke.log; tail -4 .fuzz/traces-smoke.log; \
	test $$gatt = 0 && test $$traces = 0

# Release builds link the Swift runtime and Foundation statically and are not position-independent: 8 MB less
# resident memory for the service than with the shared toolchain libraries (BENCHMARKS.md, scenario service).
# The benchmark harness is built with the same flags, so that both share one build. The static Foundation
# archive makes the linker warn about mktemp in the toolchain's own code; that line is filtered, nothing else.
RELEASE = mkdir -p .build && $(SWIFT) build -c release --static-swift-stdlib -Xlinker -no-pie --product $(1) \
    > .build/release-build.log 2>&1; status=$$?; grep -v "the use of .mktemp. is dangerous" .build/release-build.log; \
    exit $$status

bench: deps $(VENV)/.healthkit
	@$(call RELEASE,Benchmarks)
	@$(call RELEASE,wearhouse)
	.build/release/Benchmarks $(BENCH_FLAGS) $(SCENARIO)

# The demo keeps its store in .build/demo. It is built as the tests are (TEST_BUILD), so that `make demo` and
# `make test` share one build (a build with debug information made the other rebuild everything: 2 minutes against
# 22 s after a test build). On a terminal it then serves the Health app on the demo store until Ctrl-C; run from a
# script, it prints the command that would.
demo: deps
	$(SWIFT) build --product wearhouse $(TEST_BUILD)
	rm -rf .build/demo
	.build/debug/wearhouse demo --dir .build/demo
	@echo; echo "The binary for the lines above: $(CURDIR)/.build/debug/wearhouse (\`make install\` puts wearhouse on the PATH)"
	@# On a terminal the Health app then serves the demo store until Ctrl-C; run from a script, the command is printed.
	@if [ -t 0 ] && [ -t 1 ]; then \
	    echo; echo "The Health app on the demo store: open the address below in a browser (Ctrl-C stops it)."; \
	    .build/debug/wearhouse web --store .build/demo/health.db; \
	else \
	    echo "The Health app on the demo store: .build/debug/wearhouse web --store .build/demo/health.db"; \
	fi

# Where the system files go. With PREFIX=/usr (a package), the distribution's directories; otherwise (the default
# /usr/local) the unit goes where systemd looks for the administrator's units, and the rest under /etc, because
# sysusers, tmpfiles, udev and dbus-daemon do not read /usr/local.
ifeq ($(PREFIX),/usr)
UNITDIR       ?= /usr/lib/systemd/system
SYSUSERSDIR   ?= /usr/lib/sysusers.d
TMPFILESDIR   ?= /usr/lib/tmpfiles.d
UDEVRULESDIR  ?= /usr/lib/udev/rules.d
DBUSPOLICYDIR ?= /usr/share/dbus-1/system.d
DBUSIFACEDIR  ?= /usr/share/dbus-1/interfaces
else
UNITDIR       ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR   ?= /etc/sysusers.d
TMPFILESDIR   ?= /etc/tmpfiles.d
UDEVRULESDIR  ?= /etc/udev/rules.d
DBUSPOLICYDIR ?= /etc/dbus-1/system.d
DBUSIFACEDIR  ?= $(PREFIX)/share/dbus-1/interfaces
endif
DOCDIR        ?= $(PREFIX)/share/doc/wearhouse
MANDIR        ?= $(PREFIX)/share/man
BASHCOMPDIR   ?= $(PREFIX)/share/bash-completion/completions
FISHCOMPDIR   ?= $(PREFIX)/share/fish/vendor_completions.d
# Debian's zsh reads vendor-completions under /usr and site-functions under /usr/local.
ifeq ($(PREFIX),/usr)
ZSHCOMPDIR    ?= /usr/share/zsh/vendor-completions
else
ZSHCOMPDIR    ?= $(PREFIX)/share/zsh/site-functions
endif
DOCS := README.md docs/app-api.md docs/bluez.md docs/gatt-policy.md docs/store-semantics.md docs/trace-format.md \
    docs/sqlite-export.md docs/sql.md docs/healthkit-types.md docs/bluez-vm.md docs/internals.md \
    contrib/grafana/wearhouse.json
INSTALLED = $(BINDIR)/wearhouse $(DESTDIR)$(UNITDIR)/wearhouse.service $(DESTDIR)$(SYSUSERSDIR)/wearhouse.conf \
    $(DESTDIR)$(UNITDIR)/wearhouse-web.service $(DESTDIR)$(UNITDIR)/wearhouse-web.socket \
    $(DESTDIR)$(TMPFILESDIR)/wearhouse.conf $(DESTDIR)$(UDEVRULESDIR)/70-wearhouse.rules \
    $(DESTDIR)$(DBUSPOLICYDIR)/org.wearhouse.Health1.conf $(DESTDIR)$(DBUSIFACEDIR)/org.wearhouse.Health1.xml \
    $(DESTDIR)$(DOCDIR)/wearhouse.conf.example $(DESTDIR)$(DOCDIR)/todays_heart_rate.py $(DESTDIR)$(DOCDIR)/LICENSE \
    $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(wildcard $(DOCS)))) \
    $(DESTDIR)$(BASHCOMPDIR)/wearhouse $(DESTDIR)$(ZSHCOMPDIR)/_wearhouse $(DESTDIR)$(FISHCOMPDIR)/wearhouse.fish \
    $(wildcard $(DESTDIR)$(MANDIR)/man1/wearhouse*.1.gz) $(DESTDIR)$(MANDIR)/man5/wearhouse.conf.5.gz

# The binary `make install` installs: empty builds the release binary; the package test passes the debug binary
# that the tests' build made (INSTALL_BINARY=.build/debug/wearhouse), which saves a release build in `make test`.
INSTALL_BINARY ?=
SOURCE_BINARY = $(or $(INSTALL_BINARY),.build/release/wearhouse)
# The man pages and completion scripts, written by the binary from its commands' declarations (`wearhouse __man`,
# `wearhouse __completion`), so that they cover every command it has.
GENERATED := .build/generated

# The binary (stripped: the symbol table is of no use without the debug information, which is not installed), the
# unit (ExecStart rewritten for PREFIX), sysusers, tmpfiles, udev rules, the D-Bus policy, man pages, completions,
# docs and the example configuration (never over an existing /etc/wearhouse/wearhouse.conf; mode 0640, group
# wearhouse: it may hold a PostgreSQL password).
install: deps
ifeq ($(INSTALL_BINARY),)
	@$(call RELEASE,wearhouse)
endif
	rm -rf $(GENERATED) && mkdir -p $(GENERATED)/man
	$(SOURCE_BINARY) __man $(GENERATED)/man Systemd/wearhouse.conf.example
	gzip -9n $(GENERATED)/man/*
	for shell in bash zsh fish; do $(SOURCE_BINARY) __completion $$shell > $(GENERATED)/wearhouse.$$shell || exit 1; done
	install -d $(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) \
	    $(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(DBUSPOLICYDIR) $(DESTDIR)$(DBUSIFACEDIR) $(DESTDIR)$(DOCDIR) \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) \
	    $(DESTDIR)$(FISHCOMPDIR)
	install -m 0755 -s $(SOURCE_BINARY) $(BINDIR)/wearhouse
	sed 's|/usr/local/bin/wearhouse|$(PREFIX)/bin/wearhouse|g' Systemd/wearhouse.service > $(DESTDIR)$(UNITDIR)/wearhouse.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/wearhouse.service
	sed 's|/usr/local/bin/wearhouse|$(PREFIX)/bin/wearhouse|g' Systemd/wearhouse-web.service \
	    > $(DESTDIR)$(UNITDIR)/wearhouse-web.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/wearhouse-web.service
	install -m 0644 Systemd/wearhouse-web.socket $(DESTDIR)$(UNITDIR)/wearhouse-web.socket
	install -m 0644 Systemd/wearhouse.sysusers $(DESTDIR)$(SYSUSERSDIR)/wearhouse.conf
	install -m 0644 Systemd/wearhouse.tmpfiles $(DESTDIR)$(TMPFILESDIR)/wearhouse.conf
	install -m 0644 Udev/70-wearhouse.rules $(DESTDIR)$(UDEVRULESDIR)/70-wearhouse.rules
	install -m 0644 Systemd/org.wearhouse.Health1.conf $(DESTDIR)$(DBUSPOLICYDIR)/org.wearhouse.Health1.conf
	install -m 0644 Systemd/wearhouse.conf.example $(DESTDIR)$(DOCDIR)/wearhouse.conf.example
	install -m 0644 Systemd/org.wearhouse.Health1.xml $(DESTDIR)$(DBUSIFACEDIR)/org.wearhouse.Health1.xml
	install -m 0644 $(wildcard $(DOCS)) LICENSE $(DESTDIR)$(DOCDIR)/
	install -m 0755 examples/todays_heart_rate.py $(DESTDIR)$(DOCDIR)/todays_heart_rate.py
	install -m 0644 $(GENERATED)/man/*.1.gz $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(GENERATED)/man/*.5.gz $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 $(GENERATED)/wearhouse.bash $(DESTDIR)$(BASHCOMPDIR)/wearhouse
	install -m 0644 $(GENERATED)/wearhouse.zsh $(DESTDIR)$(ZSHCOMPDIR)/_wearhouse
	install -m 0644 $(GENERATED)/wearhouse.fish $(DESTDIR)$(FISHCOMPDIR)/wearhouse.fish
	install -d $(DESTDIR)/etc/wearhouse
	[ -e $(DESTDIR)/etc/wearhouse/wearhouse.conf ] || \
	    install -m 0640 Systemd/wearhouse.conf.example $(DESTDIR)/etc/wearhouse/wearhouse.conf
	chmod o= $(DESTDIR)/etc/wearhouse/wearhouse.conf
	[ -n "$(DESTDIR)" ] || chgrp wearhouse /etc/wearhouse/wearhouse.conf 2>/dev/null || \
	    echo "note: systemd-tmpfiles --create gives wearhouse.conf to group wearhouse once systemd-sysusers made it"
	@echo "Installed:" && for f in $(INSTALLED) $(DESTDIR)/etc/wearhouse/wearhouse.conf; do echo "  $$f"; done
	@[ -n "$(DESTDIR)" ] || echo "Next: systemd-sysusers; systemd-tmpfiles --create; udevadm control --reload;" \
	    "systemctl reload dbus; systemctl daemon-reload; systemctl enable --now wearhouse"
	@[ -n "$(DESTDIR)" ] || { case ":$$PATH:" in *":$(PREFIX)/bin:"*) \
	    echo "wearhouse is on your PATH: $(PREFIX)/bin/wearhouse";; \
	    *) echo "wearhouse is $(PREFIX)/bin/wearhouse; $(PREFIX)/bin is not on your PATH";; esac; }

# Leaves /etc/wearhouse/wearhouse.conf and the store in /var/lib/wearhouse alone.
uninstall:
	rm -f $(INSTALLED)

# The Debian package, for this machine's architecture: a staged `make install PREFIX=/usr` packed by dpkg-dev's
# own tools (dpkg-shlibdeps for the library dependencies, dpkg-gencontrol for the control file from debian/control
# and debian/changelog, dpkg-deb), with the maintainer scripts of debian/. No dpkg-buildpackage: the Swift
# toolchain is not a Debian package, so build dependencies could not be declared, and `make install` stays the one
# place that says where each file goes. `make deb` packs the release binary; `make test-deb` the debug one.
DEB_VERSION := $(shell dpkg-parsechangelog -S Version 2>/dev/null)
DEB_ARCH    := $(shell dpkg --print-architecture 2>/dev/null)
DEB_OUT     ?= .build/deb
DEB_STAGE    = $(DEB_OUT)/stage
DEB_FILE     = $(DEB_OUT)/wearhouse_$(DEB_VERSION)_$(DEB_ARCH).deb
# xz for the package; the test's package is gzip -1 (its debug binary is large, and it is unpacked at once).
DEB_COMPRESS ?= -Zxz
# The debug binary links the toolchain's Swift libraries, which no Debian package provides.
DEB_SHLIBDEPS_FLAGS ?=
deb: deps
	rm -rf $(DEB_STAGE) && mkdir -p $(DEB_STAGE)/DEBIAN
	$(MAKE) --no-print-directory install DESTDIR=$(CURDIR)/$(DEB_STAGE) PREFIX=/usr
	rm $(DEB_STAGE)/usr/share/doc/wearhouse/LICENSE
	install -m 0644 debian/copyright $(DEB_STAGE)/usr/share/doc/wearhouse/copyright
	gzip -9nc debian/changelog > $(DEB_STAGE)/usr/share/doc/wearhouse/changelog.Debian.gz
	install -D -m 0644 debian/lintian-overrides $(DEB_STAGE)/usr/share/lintian/overrides/wearhouse
	units="$$(cd $(DEB_STAGE)/usr/lib/systemd/system && ls)"; for script in postinst prerm postrm; do \
	    sed "s|#UNITS#|$$(echo $$units)|" debian/$$script > $(DEB_STAGE)/DEBIAN/$$script && \
	    chmod 0755 $(DEB_STAGE)/DEBIAN/$$script || exit 1; done
	cd $(DEB_STAGE) && find etc -type f | sed 's|^|/|' > DEBIAN/conffiles
	dpkg-shlibdeps $(DEB_SHLIBDEPS_FLAGS) -T$(DEB_OUT)/substvars -e$(DEB_STAGE)/usr/bin/wearhouse
	dpkg-gencontrol -pwearhouse -P$(DEB_STAGE) -T$(DEB_OUT)/substvars -f$(DEB_OUT)/files
	dpkg-deb --root-owner-group $(DEB_COMPRESS) --build $(DEB_STAGE) $(DEB_FILE)
	@echo "Package: $(DEB_FILE) ($$(du -k $(DEB_FILE) | cut -f1) KB; binary $$(du -k $(DEB_STAGE)/usr/bin/wearhouse | cut -f1) KB)"
	@echo "Check it with: lintian $(DEB_FILE)"

# Installs the package on this machine (root, or sudo), checks what it installed, purges it and checks nothing is
# left (Tests/Package/test-deb.sh). Packs the debug binary of the tests' build.
test-deb:
	$(SWIFT) build --product wearhouse $(TEST_BUILD)
	$(MAKE) --no-print-directory deb INSTALL_BINARY=.build/debug/wearhouse DEB_OUT=.build/deb-test \
	    DEB_COMPRESS="-Zgzip -z1" DEB_SHLIBDEPS_FLAGS="--ignore-missing-info --warnings=0"
	$(SUDO) Tests/Package/test-deb.sh .build/deb-test/wearhouse_$(DEB_VERSION)_$(DEB_ARCH).deb
	@echo "lintian (each tag it may give is explained in debian/lintian-overrides; the test package's debug binary"
	@echo "links the toolchain's Swift libraries by RUNPATH, which the release package's static binary does not):"
	lintian --fail-on error,warning --suppress-tags custom-library-search-path \
	    .build/deb-test/wearhouse_$(DEB_VERSION)_$(DEB_ARCH).deb

clean:
	rm -rf .build .fuzz .bench
