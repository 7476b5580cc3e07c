#!/bin/sh
# PID 1 inside the VM, run by the initramfs in a chroot of the host's root (read-only over 9p).
#
# It makes the writable places (tmpfs on /run, /var/lib/bluetooth, /var/tmp, /dev/shm; the output directory,
# read-write over 9p, on /run/out), starts the system bus, btmon, bluetoothd and btvirt's virtual LE
# controllers, runs the scenarios and powers off. The scenarios' exit status goes to /run/out/rc: run-vm.sh
# turns it into its own.
#
# Kernel command line (set by run-vm.sh): wearhouse.scenarios=FILE (the script to run), wearhouse.ctrls=N
# (virtual controllers, 2 by default), wearhouse.kernel=DIR (setup-host.sh's output: the module tree).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
OUT=/run/out
uptime_s() { cut -d' ' -f1 /proc/uptime; }
say() { line="[guest $(uptime_s)] $*"; echo "$line"; echo "$line" >> $OUT/guest.log 2>/dev/null; }
RIG=$(cd "$(dirname "$0")" && pwd)
SCENARIOS=$RIG/scenarios.sh; CTRLS=2; KDIR=""
for a in $(cat /proc/cmdline); do case "$a" in
    wearhouse.scenarios=*) SCENARIOS=${a#wearhouse.scenarios=};;
    wearhouse.ctrls=*) CTRLS=${a#wearhouse.ctrls=};;
    wearhouse.kernel=*) KDIR=${a#wearhouse.kernel=};;
    # Which of scenarios.sh's scenarios to run, comma-separated (run-vm.sh -S); all when absent.
    wearhouse.only=*) export WEARHOUSE_VM_SCENARIOS="$(echo "${a#wearhouse.only=}" | tr , ' ')";;
esac; done

mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p $OUT /run/dbus /run/tmp /run/lock
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out $OUT || echo "guest: cannot mount the output share"
mount -t tmpfs -o mode=700 tmpfs /var/lib/bluetooth
mount -t tmpfs tmpfs /var/tmp
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs tmpfs /dev/shm
ip link set lo up 2>/dev/null
export TMPDIR=/run/tmp HOME=/run/tmp WEARHOUSE_VM_OUT=$OUT WEARHOUSE_VM_RIG=$RIG
say "up: kernel $(uname -r), $(nproc) cpu"

finish() {  # $1: the result; never returns
    echo "$1" > $OUT/rc
    hciconfig -a > $OUT/hciconfig.txt 2>&1
    dmesg > $OUT/dmesg.txt 2>&1
    say "powering off, result $1"
    sync; echo o > /proc/sysrq-trigger; sleep 30
}

# Modules beyond the initramfs' list are autoloaded from setup-host.sh's module tree.
[ -x "$KDIR/modprobe" ] && echo "$KDIR/modprobe" > /proc/sys/kernel/modprobe
[ -e /dev/vhci ] || { say "no /dev/vhci: hci_vhci did not load"; finish 90; }

dbus-daemon --system --fork || { say "dbus-daemon did not start"; finish 90; }
# One binary capture of every controller, and one decoded text per controller (btmon 5.66 crashes decoding the
# GATT traffic of two local controllers at once: both use connection handle 42).
btmon -w $OUT/hci.btsnoop > /dev/null 2>&1 &
for n in $(seq 0 $((CTRLS - 1))); do stdbuf -oL btmon -i $n > $OUT/btmon-hci$n.txt 2>&1 & done
sleep 0.3

# bluetoothd is started (and restarted by the scenarios) through this function, exported to them as a script.
cat > /run/tmp/bluetoothd-start <<START
#!/bin/sh
# Starts bluetoothd in the background and waits until it answers on the bus.
/usr/libexec/bluetooth/bluetoothd -f $RIG/main.conf -n -d >> $OUT/bluetoothd.log 2>&1 &
echo \$! > /run/bluetoothd.pid
i=0
until dbus-send --system --print-reply --dest=org.bluez / org.freedesktop.DBus.ObjectManager.GetManagedObjects \
    > /dev/null 2>&1; do
    i=\$((i + 1)); [ \$i -gt 300 ] && { echo "bluetoothd does not answer on the bus" >&2; exit 1; }
    sleep 0.1
done
START
chmod +x /run/tmp/bluetoothd-start
/run/tmp/bluetoothd-start || finish 91
say "bluetoothd $(/usr/libexec/bluetooth/bluetoothd -v) answers"

adapters_up() {  # bluetoothd serves /org/bluez/hci0 .. hci(N-1)
    n=0
    while [ $n -lt $CTRLS ]; do
        dbus-send --system --print-reply --dest=org.bluez /org/bluez/hci$n org.freedesktop.DBus.Properties.Get \
            string:org.bluez.Adapter1 string:Address > /dev/null 2>&1 || return 1
        n=$((n + 1))
    done
}
# btvirt makes N controllers on one emulated air, in one process. The kernel resets each new controller and
# gives up after 2 s ("Opcode 0x0c03 failed: -110"); under TCG btvirt sometimes answers too late even with the
# crypto preloaded, so it is restarted until every controller is there.
tries=0
while :; do
    tries=$((tries + 1))
    btvirt -L -l$CTRLS >> $OUT/btvirt.log 2>&1 &
    echo $! > /run/btvirt.pid
    i=0; ok=0
    while [ $i -lt 100 ]; do
        adapters_up && { ok=1; break; }
        dmesg | grep -q 'Opcode 0x0c03 failed' && break
        i=$((i + 1)); sleep 0.1
    done
    [ $ok = 1 ] && break
    say "btvirt try $tries: not every controller came up"
    kill "$(cat /run/btvirt.pid)"; sleep 0.5; dmesg -C
    [ $tries -ge 6 ] && { say "btvirt never made $CTRLS controllers"; finish 91; }
done
say "ready: $CTRLS controllers (btvirt tries: $tries)"
echo "uptime_ready=$(uptime_s) btvirt_tries=$tries" > $OUT/timings.txt

say "running $SCENARIOS"
sh "$SCENARIOS" > $OUT/scenarios.log 2>&1
rc=$?
echo "uptime_done=$(uptime_s)" >> $OUT/timings.txt
say "scenarios: exit $rc"
[ -s /run/bluetoothd.pid ] && kill "$(cat /run/bluetoothd.pid)" 2>/dev/null
sleep 0.3
finish $rc
