#!/bin/sh
# `make demo`, for now. The gateway (wearhouse run: paired sensors in, samples out) has not landed yet, so the
# demo shows the parts that have, end to end through the real binary:
#   1. the GATT decoders on notifications that real sensors sent;
#   2. the store: import a walk measured by two devices, read it back, statistics merged across devices;
#   3. the simulated sensors served by a fake bluetoothd on a private D-Bus bus.
# The full demo (the gateway against simulated sensors) replaces this script when the gateway lands.
set -eu
wearhouse=$1
work=$(mktemp -d /tmp/wearhouse-demo.XXXXXX)
store="$work/health.db"

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
run() { echo "\$ wearhouse $*"; "$wearhouse" "$@"; }

echo "wearhouse demo: the gateway service is not built yet (see README.md, 'Status'); this shows what is."

say "1. Decoding what real sensors sent"
run decode heart-rate-measurement 163c1104          # Polar H7: contact detected, 60 bpm, one RR interval
run decode heart-rate-measurement --json 103bec03   # Polar H10 via BlueZ: contact bits 00 while worn
run decode rsc-measurement 02000550ffff0001         # a footpod: 5 m/s, 80/min, total distance
if "$wearhouse" decode heart-rate-measurement 1601 2>/dev/null; then
    echo "demo: expected a decode error" >&2
    exit 1
fi
echo "(1601: RR flag set but no RR bytes: rejected with exit 65, as expected)"

say "2. The store: a 10-minute walk measured by a footpod and a watch"
: > "$work/walk.ndjson"
minute=0
while [ $minute -lt 10 ]; do
    start=$(printf '2025-03-30T10:%02d:00+02:00' $minute)
    end=$(printf '2025-03-30T10:%02d:00+02:00' $((minute + 1)))
    printf '{"type":"heartRate","start":"%s","value":%d,"source":"org.wearhouse.gateway","device":"C0:FF:EE:00:00:01","device_name":"Chest strap","subject":"alice"}\n' \
        "$start" $((95 + minute * 3)) >> "$work/walk.ndjson"
    printf '{"type":"stepCount","start":"%s","end":"%s","value":100,"source":"org.wearhouse.gateway","device":"footpod","subject":"alice"}\n' \
        "$start" "$end" >> "$work/walk.ndjson"
    printf '{"type":"stepCount","start":"%s","end":"%s","value":104,"source":"org.wearhouse.gateway","device":"watch","subject":"alice"}\n' \
        "$start" "$end" >> "$work/walk.ndjson"
    minute=$((minute + 1))
done
run import-samples --store "$store" "$work/walk.ndjson"
run import-samples --store "$store" "$work/walk.ndjson"    # again: nothing new, all duplicates
run samples --store "$store" --type heartRate --limit 3 --time-zone Europe/Berlin
run stats --store "$store" --type heartRate --interval 1d --from 2025-03-30 --to 2025-03-31 \
    --time-zone Europe/Berlin --statistic count,avg,min,max
echo "# steps: both devices counted the same walk; merged, they are not added up"
run stats --store "$store" --type stepCount --interval 1d --from 2025-03-30 --to 2025-03-31 --time-zone Europe/Berlin
run stats --store "$store" --type stepCount --interval 1d --from 2025-03-30 --to 2025-03-31 --time-zone Europe/Berlin --by-source
run store check --store "$store"

say "3. Simulated sensors behind a fake bluetoothd, on a private D-Bus bus"
cat > "$work/bus.conf" <<CONF
<busconfig>
  <type>system</type>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_type="*"/>
  </policy>
</busconfig>
CONF
dbus-daemon --config-file="$work/bus.conf" --fork --print-pid > "$work/bus.pid"
"$wearhouse" fake-bluez --address "unix:path=$work/bus" --duration 10 2> "$work/fake.log" &
fake=$!
sleep 2
echo "\$ busctl --address=unix:path=$work/bus tree org.bluez"
busctl --address="unix:path=$work/bus" tree org.bluez
kill $fake 2>/dev/null || true
kill "$(cat "$work/bus.pid")" 2>/dev/null || true

say "The store from step 2 stays at $store; try: $wearhouse samples --store $store --type stepCount"
