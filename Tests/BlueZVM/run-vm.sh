#!/bin/bash
# Boots the BlueZ VM once (docs/bluez-vm.md): qemu under TCG with Debian's kernel (real Bluetooth, hci_vhci),
# this machine's root shared read-only over 9p and OUTDIR read-write, and runs SCENARIOS inside with
# bluetoothd 5.66 and btvirt's virtual controllers. Needs setup-host.sh to have run.
#
# usage: run-vm.sh [-s SCENARIOS] [-S name,name] [-o OUTDIR] [-T timeout_s] [-n controllers] [-m MiB] [-b wearhouse]
# (-S: only these scenarios of the script, e.g. stack,scan,pair,stream; -b: the wearhouse binary, by default the
# debug build)
# exit status: the scenarios' (0 = every one passed); 124 the VM timed out, 125 the VM gave no result,
# 2 setup missing. Every failure says why on stderr.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KDIR=${BVM_KERNEL_DIR:-$ROOT/.build/bluez-vm/kernel}
SCENARIOS=$HERE/scenarios.sh; OUT=$ROOT/.build/bluez-vm/out; TIMEOUT=900; CTRLS=10; MEM=1024; ONLY=""; BIN=""
while getopts "s:S:o:T:n:m:b:" option; do case $option in
    s) SCENARIOS=$OPTARG;; S) ONLY=$OPTARG;; o) OUT=$OPTARG;; T) TIMEOUT=$OPTARG;; n) CTRLS=$OPTARG;; m) MEM=$OPTARG;;
    b) BIN=$OPTARG;;
    *) echo "usage: run-vm.sh [-s SCENARIOS] [-S name,name] [-o OUTDIR] [-T timeout_s] [-n controllers] [-m MiB]" \
        "[-b wearhouse]" >&2; exit 2;;
esac; done
fail() { echo "run-vm: $1" >&2; exit "$2"; }
case "$SCENARIOS" in /*) ;; *) SCENARIOS=$PWD/$SCENARIOS;; esac
case "$OUT" in /*) ;; *) OUT=$PWD/$OUT;; esac
case "$BIN" in /*|"") ;; *) BIN=$PWD/$BIN;; esac
[ -z "$BIN" ] || [ -x "$BIN" ] || fail "no wearhouse binary at $BIN" 2
[ -f "$SCENARIOS" ] || fail "no scenario script $SCENARIOS" 2
KV=$(cat "$KDIR/kernel-version" 2>/dev/null)
[ -n "$KV" ] && [ -s "$KDIR/vmlinuz-$KV" ] && [ -s "$KDIR/initrd-$KV.img" ] \
    || fail "no kernel in $KDIR: run Tests/BlueZVM/setup-host.sh (make test-bluez does)" 2
command -v qemu-system-x86_64 > /dev/null || fail "qemu-system-x86_64 missing: run Tests/BlueZVM/setup-host.sh" 2
rm -rf "$OUT"; mkdir -p "$OUT"

# TCG, always: the development machines' /dev/kvm is a PVM hypervisor on which a stock kernel crawls and then
# dies (docs/bluez-vm.md). One vCPU: two were slower on a 2-core host.
APPEND="console=ttyS0 panic=-1 quiet loglevel=4 wearhouse.init=$HERE/guest-init.sh wearhouse.kernel=$KDIR"
# The guest stops its scenarios 30 s (of its uptime) before the VM is stopped, so that it still copies its logs out.
APPEND="$APPEND wearhouse.scenarios=$SCENARIOS wearhouse.ctrls=$CTRLS wearhouse.deadline=$((TIMEOUT - 30))"
APPEND="$APPEND${ONLY:+ wearhouse.only=$ONLY}${BIN:+ wearhouse.bin=$BIN}"
echo "run-vm: TCG, kernel $KV, $MEM MiB, $CTRLS controllers, out $OUT, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
START=$SECONDS
qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m "$MEM" -smp 1 -nodefaults -no-user-config \
    -display none -monitor none -no-reboot -serial "file:$OUT/console.log" -pidfile "$OUT/qemu.pid" \
    -kernel "$KDIR/vmlinuz-$KV" -initrd "$KDIR/initrd-$KV.img" -append "$APPEND" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$OUT",mount_tag=out,security_model=none \
    > "$OUT/qemu.stderr" 2>&1 &
QEMU=$!
# Our qemu only, by the PID we started, whatever ends this script.
trap 'kill $QEMU 2>/dev/null' EXIT
trap 'kill $QEMU 2>/dev/null; exit 130' INT TERM
status=""
while kill -0 $QEMU 2>/dev/null; do
    if [ $((SECONDS - START)) -ge "$TIMEOUT" ]; then
        kill $QEMU; sleep 1; kill -9 $QEMU 2>/dev/null; status=124; break
    fi
    sleep 0.5
done
wait $QEMU 2>/dev/null
trap - EXIT INT TERM
echo "host_wall_s=$((SECONDS - START))" >> "$OUT/timings.txt"
echo "run-vm: VM ran $((SECONDS - START)) s; $(tr '\n' ' ' < "$OUT/timings.txt")" >&2
if [ "$status" = 124 ]; then
    echo "run-vm: the VM did not power off within ${TIMEOUT} s; the end of its console:" >&2
    tail -20 "$OUT/console.log" >&2; tail -20 "$OUT/scenarios.log" >&2 2>/dev/null; exit 124
fi
# The HCI capture, decoded per controller (btmon decodes one controller's GATT traffic at a time). btmon 5.66 may
# crash at the end of a capture (on a management record); what it decoded up to there stays in the file.
if [ -s "$OUT/hci.btsnoop" ] && command -v btmon > /dev/null; then
    for n in $(seq 0 $((CTRLS - 1))); do
        sh -c 'btmon -r "$1" -i "$2" > "$3" 2>&1' decode "$OUT/hci.btsnoop" "$n" "$OUT/btmon-hci$n.txt" 2>/dev/null
    done
fi
# Each scenario's verdict, and the count last.
grep -E '^(PASS|FAIL|bluez-vm:)' "$OUT/scenarios.log" 2>/dev/null
[ -s "$OUT/rc" ] || { echo "run-vm: the VM gave no result; the end of its console:" >&2; tail -30 "$OUT/console.log" >&2; exit 125; }
exit "$(cat "$OUT/rc")"
