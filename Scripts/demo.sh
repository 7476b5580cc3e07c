#!/bin/sh
# `make demo`, for now: the gateway (pairing simulated sensors through FakeBlueZ and storing their samples)
# has not landed yet, so the demo decodes notifications that real sensors sent, with the same decoders the
# gateway will use. The full demo replaces this script when the gateway lands.
set -eu
wearhouse=$1

echo "wearhouse demo: the gateway and its simulated sensors are not built yet (see README.md, 'Status')."
echo "Meanwhile, here is what real sensors sent, decoded by wearhouse's GATT decoders:"
echo

show() {
    echo "\$ wearhouse decode $1 $2    # $3"
    "$wearhouse" decode "$1" "$2"
    echo
}

show heart-rate-measurement 163c1104 "Polar H7: contact detected, 60 bpm, one RR interval"
show heart-rate-measurement 103bec03 "Polar H10 via BlueZ: contact bits 00 (not supported) while worn"
show heart-rate-measurement 0044 "Mi Smart Band 4: 68 bpm, no RR"
show rsc-measurement 02000550ffff0001 "a footpod: 5 m/s, 80/min, total distance"
show pnp-id 01570124000101 "Mi Smart Band 4 PnP ID"
show system-id e12c9ffffe0bf144 "Mi Smart Band 4 System ID (byte-swapped filler, decoded as sent)"

echo "\$ wearhouse decode heart-rate-measurement --json 1e3cffff0004    # saturated energy"
"$wearhouse" decode heart-rate-measurement --json 1e3cffff0004
echo
echo "\$ wearhouse decode heart-rate-measurement 1601    # RR flag but no RR bytes: rejected, exit 65"
if "$wearhouse" decode heart-rate-measurement 1601; then
    echo "demo: expected a decode error" >&2
    exit 1
fi
echo
echo "Try: $wearhouse help decode"
