#!/bin/sh
# PID 1 inside the VM, run by the initramfs in a chroot of the host's root (read-only over 9p).
#
# It makes the writable places (tmpfs on /run, /var/lib/bluetooth, /var/tmp, /dev/shm; the output directory,
# read-write over 9p, on /run/out), starts the system bus, btmon, bluetoothd and btvirt's virtual LE
# controllers, runs the scenarios and powers off. The scenarios' exit status goes to /run/out/rc: run-vm.sh
# turns it into its own.
#
# Kernel command line (set by run-vm.sh): wearhouse.scenarios=FILE (the script to run), wearhouse.ctrls=N
# (virtual controllers, 10 by default), wearhouse.kernel=DIR (setup-host.sh's output: the module tree),
# wearhouse.only=a,b (which scenarios), wearhouse.bin=FILE (the wearhouse binary, else the debug build),
# wearhouse.deadline=S (the scenarios are stopped at S seconds of uptime, so that the logs are still copied out).
#
# Priorities: bluetoothd, dbus-daemon and btvirt run at nice -10 (the simulated sensors' hosts at -5, the rig's
# store readers and the bus monitor at +5 and +10). They stand for hardware and a system daemon; on the guest's one
# emulated CPU a starved bluetoothd answered too late, and 5.66 crashed when a sensor's read took over 5 s
# (docs/bluez-vm.md).
#
# The busy logs (bluetoothd -d, the HCI capture, the bus monitor) go to tmpfs and are copied to the output
# directory at the end: every line written over 9p costs the emulated CPU an exit to the host.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
OUT=/run/out
LOG=/run/log
uptime_s() { cut -d' ' -f1 /proc/uptime; }
say() { line="[guest $(uptime_s)] $*"; echo "$line"; echo "$line" >> $OUT/guest.log 2>/dev/null; }
RIG=$(cd "$(dirname "$0")" && pwd)
SCENARIOS=$RIG/scenarios.sh; CTRLS=10; KDIR=""; DEADLINE=3600
for a in $(cat /proc/cmdline); do case "$a" in
    wearhouse.scenarios=*) SCENARIOS=${a#wearhouse.scenarios=};;
    wearhouse.ctrls=*) CTRLS=${a#wearhouse.ctrls=};;
    wearhouse.kernel=*) KDIR=${a#wearhouse.kernel=};;
    # Which of scenarios.sh's scenarios to run, comma-separated (run-vm.sh -S); all when absent.
    wearhouse.only=*) export WEARHOUSE_VM_SCENARIOS="$(echo "${a#wearhouse.only=}" | tr , ' ')";;
    wearhouse.bin=*) export WEARHOUSE_BIN=${a#wearhouse.bin=};;
    wearhouse.deadline=*) DEADLINE=${a#wearhouse.deadline=};;
esac; done

mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p $OUT $LOG /run/dbus /run/tmp /run/lock
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out $OUT || echo "guest: cannot mount the output share"
mount -t tmpfs -o mode=700 tmpfs /var/lib/bluetooth
mount -t tmpfs tmpfs /var/tmp
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs tmpfs /dev/shm
ip link set lo up 2>/dev/null
export TMPDIR=/run/tmp HOME=/run/tmp WEARHOUSE_VM_OUT=$OUT WEARHOUSE_VM_RIG=$RIG WEARHOUSE_VM_LOG=$LOG
export WEARHOUSE_VM_CTRLS=$CTRLS
say "up: kernel $(uname -r), $(nproc) cpu"

finish() {  # $1: the result; never returns
    echo "$1" > $OUT/rc
    hciconfig -a > $OUT/hciconfig.txt 2>&1
    dmesg > $OUT/dmesg.txt 2>&1
    # The capture and the monitor stop first, so that what they buffered is in their files.
    for pid in $(cat /run/log-writers.pid 2>/dev/null); do kill "$pid" 2>/dev/null; done
    sleep 0.5
    cp $LOG/* $OUT/ 2>/dev/null
    say "powering off, result $1"
    sync; echo o > /proc/sysrq-trigger; sleep 30
}

# Modules beyond the initramfs' list are autoloaded from setup-host.sh's module tree.
[ -x "$KDIR/modprobe" ] && echo "$KDIR/modprobe" > /proc/sys/kernel/modprobe
[ -e /dev/vhci ] || { say "no /dev/vhci: hci_vhci did not load"; finish 90; }

nice -n -10 dbus-daemon --system --fork || { say "dbus-daemon did not start"; finish 90; }
# One binary capture of every controller (run-vm.sh decodes it per controller afterwards: btmon 5.66 crashes
# decoding the GATT traffic of two local controllers at once, both using connection handle 42).
btmon -w $LOG/hci.btsnoop > /dev/null 2>&1 &
echo $! >> /run/log-writers.pid
# bluetoothd's signals and the calls made to it, as its clients saw them (their order matters: docs/bluez.md, F3).
nice -n 5 dbus-monitor --system "type='signal',sender='org.bluez'" "type='method_call',path_namespace='/org/bluez'" \
    "type='error'" > $LOG/dbus-bluez.txt 2>&1 &
echo $! >> /run/log-writers.pid
sleep 0.3

# bluetoothd is started (and restarted by the scenarios) through this script.
cat > /run/tmp/bluetoothd-start <<START
#!/bin/sh
# Starts bluetoothd in the background and waits until it answers on the bus.
nice -n -10 /usr/libexec/bluetooth/bluetoothd -f $RIG/main.conf -n -d >> $LOG/bluetoothd.log 2>&1 &
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

# btvirt makes N controllers on one emulated air, in one process; it is started (and restarted by the adapter-gone
# scenario) through this script. The kernel resets each new controller and gives up after 2 s ("Opcode 0x0c03
# failed: -110"); under TCG btvirt sometimes answers too late even with the crypto preloaded, so it is restarted
# until bluetoothd serves every controller.
cat > /run/tmp/btvirt-start <<START
#!/bin/sh
adapters_up() {  # bluetoothd serves /org/bluez/hci0 .. hci(N-1)
    n=0
    while [ \$n -lt $CTRLS ]; do
        dbus-send --system --print-reply --dest=org.bluez /org/bluez/hci\$n org.freedesktop.DBus.Properties.Get \\
            string:org.bluez.Adapter1 string:Address > /dev/null 2>&1 || return 1
        n=\$((n + 1))
    done
}
tries=0
while :; do
    tries=\$((tries + 1))
    resets=\$(dmesg | grep -c 'Opcode 0x0c03 failed')
    nice -n -10 btvirt -L -l$CTRLS >> $LOG/btvirt.log 2>&1 &
    echo \$! > /run/btvirt.pid
    i=0; ok=0
    while [ \$i -lt 150 ]; do
        adapters_up && { ok=1; break; }
        [ "\$(dmesg | grep -c 'Opcode 0x0c03 failed')" -gt "\$resets" ] && break
        i=\$((i + 1)); sleep 0.1
    done
    [ \$ok = 1 ] && break
    echo "btvirt try \$tries: not every controller came up" >&2
    kill "\$(cat /run/btvirt.pid)"; sleep 0.5
    [ \$tries -ge 6 ] && { echo "btvirt never made $CTRLS controllers" >&2; exit 1; }
done
echo "btvirt_tries=\$tries" >> $OUT/timings.txt
START
chmod +x /run/tmp/btvirt-start
/run/tmp/btvirt-start || { say "btvirt never made $CTRLS controllers"; finish 91; }
say "ready: $CTRLS controllers"
echo "uptime_ready=$(uptime_s)" >> $OUT/timings.txt

up=$(uptime_s); TIMEOUT=$((DEADLINE - ${up%.*})); [ $TIMEOUT -gt 10 ] || TIMEOUT=10
say "running $SCENARIOS (at most $TIMEOUT s)"
timeout -s TERM "$TIMEOUT" sh "$SCENARIOS" > $OUT/scenarios.log 2>&1
rc=$?
[ $rc = 124 ] && { say "the scenarios did not end within $TIMEOUT s"; echo "bluez-vm: stopped after $TIMEOUT s" >> $OUT/scenarios.log; }
echo "uptime_done=$(uptime_s)" >> $OUT/timings.txt
say "scenarios: exit $rc"
[ -s /run/bluetoothd.pid ] && kill "$(cat /run/bluetoothd.pid)" 2>/dev/null
sleep 0.3
finish $rc
