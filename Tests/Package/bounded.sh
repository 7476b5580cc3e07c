#!/bin/bash
# Runs one step of `make test` (a `swift test` process, the benchmarks' smoke run) with a wall-clock limit, its
# output line by line (so that a log cut short ends where the step was, not where a buffer was last written) into
# the terminal and LOG. Past LIMIT seconds it stops the step, every process it started included, and names the tests
# that had started and not ended: a test that waits forever fails the run in minutes instead of holding CI until
# its own limit. It prints how long the step took either way.
# Usage: Tests/Package/bounded.sh LIMIT LOG COMMAND [ARGUMENT...]
set -u
limit=$1
log=$2
shift 2
mkdir -p "$(dirname "$log")"
start=$(date +%s)
# timeout makes its own process group and signals the whole group: `swift test`'s test process too. A test process
# that handles SIGTERM itself (the service's tests do) is killed 30 s later.
stdbuf -oL -eL timeout -k 30 "$limit" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
elapsed=$(($(date +%s) - start))
if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    echo "bounded: '$*' was stopped after $limit s; tests started and not ended:"
    # Swift Testing prints "◇ Test name() started." and then "✔ Test name() passed ..." or "✘ Test name() failed ...";
    # a parameterized test ends "with N test cases passed ...", and its cases' own lines ("Test case passing ...")
    # are not tests, nor is the whole run ("Test run started.").
    awk '/ Test case passing / || / Test run / { next }
         / Test .* started\.$/ { name = $0; sub(/^.* Test /, "", name); sub(/ started\.$/, "", name); open[name] = 1 }
         / Test .* (passed|failed)/ { name = $0; sub(/^.* Test /, "", name); sub(/ (passed|failed).*$/, "", name)
                                      sub(/ with [0-9]+ test cases?$/, "", name); delete open[name] }
         END { for (name in open) print "    " name }' "$log"
    status=1
fi
echo "bounded: $elapsed s, exit $status: $*"
exit "$status"
