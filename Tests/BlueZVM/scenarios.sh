#!/bin/sh
# The scenarios, run inside the VM by guest-init.sh once bluetoothd and the controllers are up: hci0 is the
# gateway's adapter (the central), hci1 the simulated sensors' (the peripheral host). Each scenario prints
# "PASS name" or "FAIL name: why"; the last line counts them, and the exit status is 0 only when none failed.
# Files go to $WEARHOUSE_VM_OUT (the host's .build/bluez-vm/out).
OUT=${WEARHOUSE_VM_OUT:?}
RIG=${WEARHOUSE_VM_RIG:?}
ROOT=$(cd "$RIG/../.." && pwd)
WEARHOUSE=${WEARHOUSE_BIN:-$ROOT/.build/debug/wearhouse}
PASSED=0; FAILED=0
uptime_s() { cut -d' ' -f1 /proc/uptime; }
pass() { PASSED=$((PASSED + 1)); echo "PASS $1 ($(uptime_s) s)"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $1: $2 ($(uptime_s) s)"; }
# The address of adapter hciN, from bluetoothd.
address() {
    dbus-send --system --print-reply --dest=org.bluez "/org/bluez/$1" org.freedesktop.DBus.Properties.Get \
        string:org.bluez.Adapter1 string:Address | sed -n 's/.*string "\(.*\)"/\1/p'
}

# stack: both controllers are there and powered, and wearhouse's doctor finds bluetoothd through the real bus.
scenario_stack() {
    [ -x "$WEARHOUSE" ] || { fail stack "no wearhouse binary at $WEARHOUSE (swift build --product wearhouse)"; return; }
    CENTRAL=$(address hci0); PERIPHERAL=$(address hci1)
    [ -n "$CENTRAL" ] && [ -n "$PERIPHERAL" ] || { fail stack "adapters hci0/hci1 have no address"; return; }
    "$WEARHOUSE" doctor --json > "$OUT/doctor.json" 2> "$OUT/doctor.err"
    grep -q "$CENTRAL" "$OUT/doctor.json" || { fail stack "wearhouse doctor does not list adapter $CENTRAL"; return; }
    pass stack
}

echo "scenarios: wearhouse $($WEARHOUSE --version 2>&1)"
for scenario in ${WEARHOUSE_VM_SCENARIOS:-stack}; do "scenario_$scenario"; done
echo "bluez-vm: $PASSED passed, $FAILED failed"
[ $FAILED = 0 ] && [ $PASSED -gt 0 ]
