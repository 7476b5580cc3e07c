#!/bin/sh
# The scenarios, run inside the VM by guest-init.sh once bluetoothd and the controllers are up. Three simulated
# chest straps (a, b, c), a footpod and a bathroom scale, each served by its own peripheral host on its own
# controller (hci1, hci3, hci5, hci7, hci9), each reached by the gateway through a controller of its own (hci0, hci2,
# hci4, hci6, hci8): btvirt 5.66 passes ACL data on with the sending controller's connection handle, so only links
# whose handles agree at both ends work, and a controller can carry one link (docs/bluez-vm.md). One gateway
# (`wearhouse run --record`) streams them all from the stream scenario on, through the faults, until the sigterm
# scenario stops it. Each scenario prints "PASS name" or "FAIL name: why"; the last line counts them, and the exit
# status is 0 only when none failed.
# Files go to $WEARHOUSE_VM_OUT (the host's .build/bluez-vm/out); docs/bluez-vm.md describes them.
OUT=${WEARHOUSE_VM_OUT:?}
RIG=${WEARHOUSE_VM_RIG:?}
ROOT=$(cd "$RIG/../.." && pwd)
WEARHOUSE=${WEARHOUSE_BIN:-$ROOT/.build/debug/wearhouse}
LOG=${WEARHOUSE_VM_LOG:-$OUT}
ALL="stack scan pair stream acquire_notify link_faults bluetoothd_restart adapter_gone layout_change sigterm replay"
ALL="$ALL fidelity"
PASSED=0; FAILED=0
uptime_s() { cut -d' ' -f1 /proc/uptime; }
pass() { PASSED=$((PASSED + 1)); echo "PASS $1 ($(uptime_s) s)"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $1: $2 ($(uptime_s) s)"; }
say() { echo "  [$(uptime_s)] $*"; }
# The address of adapter hciN, from bluetoothd.
address() {
    dbus-send --system --print-reply --dest=org.bluez "/org/bluez/$1" org.freedesktop.DBus.Properties.Get \
        string:org.bluez.Adapter1 string:Address 2>/dev/null | sed -n 's/.*string "\(.*\)"/\1/p'
}
query() { python3 "$RIG/bluez_query.py" "$@" 2>> "$OUT/errors.log"; }

# Waits up to $2 seconds for the shell condition $1, trying every $3 seconds (twice a second by default); gives up at
# once when the guest kernel oopsed or bluetoothd died (say so rather than time out).
wait_for() {
    read -r up rest < /proc/uptime; deadline=$(( ${up%.*} + $2 )); next_check=$(( ${up%.*} + 5 ))
    until eval "$1"; do
        read -r up rest < /proc/uptime
        [ "${up%.*}" -ge $deadline ] && return 1
        if [ "${up%.*}" -ge $next_check ]; then
            next_check=$(( ${up%.*} + 5 ))
            broken=$(stack_broken) && { echo "$broken"; return 1; }
        fi
        sleep "${3:-0.5}"
    done
}
# Why the stack is broken, if it is: the kernel oopsed, or bluetoothd is gone.
stack_broken() {
    dmesg | grep -q -e 'kernel BUG' -e 'Oops' -e 'list_del corruption' && { echo "the guest kernel oopsed"; return 0; }
    kill -0 "$(cat /run/bluetoothd.pid)" 2>/dev/null || { echo "bluetoothd died"; return 0; }
    return 1
}
# Before each scenario: a bluetoothd that died in the one before is reported (its last lines) and started again,
# so that the next scenarios run on a working stack.
revive_stack() {
    kill -0 "$(cat /run/bluetoothd.pid)" 2>/dev/null && return 0
    echo "  bluetoothd died; its log ends:"; tail -5 "$LOG/bluetoothd.log" | sed 's/^/    /'
    /run/tmp/bluetoothd-start && echo "  bluetoothd started again"
}

STORE=/run/tmp/health.db
TRACE=$OUT/gateway.trace
STATE=/run/tmp/compare-state.json
SENSORS=""; MASKS=""; MEASURES=""

# --- The sensors -----------------------------------------------------------------------------------------------
# Sensor NAME on adapter hciN: its options, peripheral host, ledgers (one per host run) and pause/layout files, and
# the measurement compared (MEASURE_NAME: the characteristic of its --kind, see measurement_of).
# Starts NAME's peripheral host (its sent values into a new ledger) and waits until bluetoothd took it.
start_sensor() {  # $1: name, $2: its adapter, $3: the gateway's adapter for it, the rest: peripheral-host options
    launch_sensor "$@" && sensor_ready "$1"
}
launch_sensor() {  # the same arguments; does not wait
    name=$1; adapter=$2; central=$3; shift 3
    eval "run=\$((\${RUNS_$name:-0} + 1))"
    ledger=$OUT/sent-$name-$run.jsonl
    nice -n -5 "$WEARHOUSE" peripheral-host --adapter "$adapter" --sent "$ledger" --pause-file "/run/tmp/pause-$name" \
        --layout-file "/run/tmp/layout-$name" "$@" > "$OUT/peripheral-$name-$run.log" 2>&1 &
    eval "PID_$name=$!; RUNS_$name=$run; ADAPTER_$name=$adapter; CENTRAL_$name=\$(address $central)"
    eval "CENTRAL_ADAPTER_$name=$central; MEASURE_$name=$(measurement_of "$@")"
    eval "LEDGERS_$name=\${LEDGERS_$name:+\$LEDGERS_$name,}$ledger"
    case " $SENSORS " in *" $name "*) ;; *) SENSORS="$SENSORS $name";; esac
    eval "measure=\$MEASURE_$name"
    case "|$MEASURES|" in *"|$measure|"*) ;; *) MEASURES=${MEASURES:+$MEASURES|}$measure;; esac
}
# The characteristic compare.py compares for a sensor of these peripheral-host options (their --kind).
measurement_of() {
    while [ $# -gt 1 ] && [ "$1" != --kind ]; do shift; done
    case "$2" in
        footpod) echo 2a53;;
        bathroomScale) echo 2a9d;;
        *) echo 2a37;;
    esac
}
sensor_ready() {  # $1: name
    eval "pid=\$PID_$1; log=$OUT/peripheral-$1-\$RUNS_$1.log"
    wait_for "grep -q 'peripheral-host ready' '$log' || ! kill -0 $pid" 60 && kill -0 $pid \
        || { echo "the peripheral host of $1 never got ready: $(tail -2 "$log")"; return 1; }
    eval "ADDR_$1=\$(sed -n 's/^peripheral-host ready //p' '$log')"
    # The gateway's log masks an address (00:AA:**:**:**:01): the masks of the sensors, for count_streams.
    eval "address=\$ADDR_$1"
    mask=${address%%:??:??:??:??}:**:**:**:${address##*:}
    case " $MASKS " in *" $mask=$1 "*) ;; *) MASKS="$MASKS $mask=$1";; esac
}
sensor_address() { eval "echo \$ADDR_$1"; }
sensor_adapter() { eval "echo \$ADAPTER_$1"; }
# The gateway's adapter for the sensor: its address, its name (hciN).
central_of() { eval "echo \$CENTRAL_$1"; }
central_adapter_of() { eval "echo \$CENTRAL_ADAPTER_$1"; }
# A sensor stops sending while paused (its --pause-file): what it sent before is what must be stored. Not SIGSTOP:
# bluetoothd's reads to a stopped host time out, and 5.66 crashes on such a read.
pause_files() { for name in "$@"; do printf '/run/tmp/pause-%s ' "$name"; done; }
pause() { [ $# = 0 ] || touch $(pause_files "$@"); sleep 0.3; }
resume() { [ $# = 0 ] || rm -f $(pause_files "$@"); }

# What the waits below poll, counted for every sensor by one process: a process costs the guest's one emulated CPU
# about 0.1 s, and one per sensor twice a second starved the stack being waited for (docs/bluez-vm.md).
# SENT_NAME: the measurements (heart rates, footpod readings, weights) NAME sent to a subscribed, connected central,
# from its ledgers (sent-NAME-RUN.jsonl).
count_sent() {
    for name in $SENSORS; do eval "SENT_$name=0"; done
    eval "$(awk -v measures="$MEASURES" '
        $0 ~ "\"characteristic\":\"(" measures ")\"" {
            name = FILENAME; sub(/^.*\/sent-/, "", name); sub(/-[0-9]+\.jsonl$/, "", name); sent[name]++
        }
        END { for (name in sent) printf "SENT_%s=%d\n", name, sent[name] }' "$OUT"/sent-*.jsonl 2>/dev/null)"
}
# STREAMS_NAME: how often the gateway logged NAME streaming (its address masked as the log masks it: MASKS).
count_streams() {
    for name in $SENSORS; do eval "STREAMS_$name=0"; done
    eval "$(awk -v masks="$MASKS" '
        BEGIN { n = split(masks, pairs, " "); for (i = 1; i <= n; i++) { split(pairs[i], kv, "="); name[kv[1]] = kv[2] } }
        / streaming \(/ { for (i = 1; i < NF; i++) if ($i == "sensor" && ($(i + 1) in name)) { streams[name[$(i + 1)]]++; break } }
        END { for (n in streams) printf "STREAMS_%s=%d\n", n, streams[n] }' "$OUT/run-$GATEWAY_RUNS.log" 2>/dev/null)"
}

# After a fault, a paused sensor resumes only once the gateway subscribed to it again: a bonded sensor keeps its
# subscription (the CCCD) and notifies as soon as the link is back, but bluetoothd on the central's side passes a
# notification on only to a client that called StartNotify, and drops it before (docs/bluez-vm.md). `mark_streaming`
# before the fault, `resume_streaming` after it: each named sensor resumes when the gateway logged "streaming" for it
# again, all of them after $1 seconds at most (and says so). Once a second.
mark_streaming() { count_streams; for name in "$@"; do eval "STREAMED_$name=\$STREAMS_$name"; done; }
resume_streaming() {  # $1: seconds, the rest: sensors
    read -r up rest < /proc/uptime; deadline=$(( ${up%.*} + $1 )); shift
    waiting="$*"
    while [ -n "$waiting" ]; do
        count_streams
        still=""; ready=""
        for name in $waiting; do
            if eval "[ \$STREAMS_$name -gt \$STREAMED_$name ]"; then ready="$ready $name"; else still="$still $name"; fi
        done
        resume $ready
        waiting=$still
        [ -n "$waiting" ] || return 0
        read -r up rest < /proc/uptime
        [ "${up%.*}" -ge $deadline ] && { say "the gateway did not stream again:$waiting"; resume $waiting; return 1; }
        sleep 1
    done
}
kill_sensor() {  # $1: name, $2: signal
    eval "pid=\$PID_$1"
    kill "-$2" "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}
# Waits until each sensor named sent $1 more measurements than now (they stream again), at most $2 s, looking once a
# second; then `lagging` names those that did not.
grow() {  # $1: how many, $2: seconds, the rest: sensors
    count=$1; limit=$2; shift 2
    count_sent
    for name in "$@"; do eval "TARGET_$name=\$((SENT_$name + count))"; done
    GROWING="$*"
    wait_for grown "$limit" 1
}
grown() {
    count_sent
    for name in $GROWING; do eval "[ \$SENT_$name -ge \$TARGET_$name ]" || return 1; done
}
lagging() {
    count_sent
    for name in $GROWING; do eval "[ \$SENT_$name -ge \$TARGET_$name ]" || printf '%s ' "$name"; done
}
# The sensors for compare.py: MEASUREMENT:ADDRESS=LEDGER[,LEDGER] each.
sensor_arguments() {
    for name in $SENSORS; do eval "printf '%s:%s=%s ' \"\$MEASURE_$name\" \"\$ADDR_$name\" \"\$LEDGERS_$name\""; done
}
# Drops the link from the sensor's side, as a sensor walking out of range looks to the central.
drop_link() {  # $1: sensor
    dbus-send --system --print-reply --dest=org.bluez \
        "/org/bluez/$(sensor_adapter "$1")/dev_$(central_of "$1" | tr : _)" org.bluez.Device1.Disconnect \
        >> "$OUT/disconnect.log" 2>&1
}

# --- The gateway -----------------------------------------------------------------------------------------------
GATEWAY_PID=""
GATEWAY_RUNS=0
# The gateway uses each sensor's own adapter (enrolled with it); hci0 is its default one.
start_gateway() {
    GATEWAY_RUNS=$((GATEWAY_RUNS + 1))
    "$WEARHOUSE" run --config /dev/null --store "$STORE" --record "$TRACE" --set service.status-interval=1 \
        > "$OUT/run-$GATEWAY_RUNS.log" 2>&1 &
    GATEWAY_PID=$!
}
stop_gateway() {
    kill -TERM "$GATEWAY_PID" 2>/dev/null; wait "$GATEWAY_PID"; status=$?; GATEWAY_PID=""; return $status
}
gateway_alive() { [ -n "$GATEWAY_PID" ] && kill -0 "$GATEWAY_PID" 2>/dev/null; }
# What the store holds of the types compared (compare.py types): one `wearhouse export`, as a wearhouse process
# costs seconds of the guest's one emulated CPU (only to compare).
STORED_TYPES=$(python3 "$RIG/compare.py" types)
read_store() {  # $1: the file, $2: the store (the live one by default)
    nice -n 10 "$WEARHOUSE" export --store "${2:-$STORE}" --format csv --type "$STORED_TYPES" > "$1" 2>> "$OUT/errors.log"
}
# Stored equals sent for every sensor, over what each sent since the last checkpoint: the sensors pause so that
# nothing is in flight (a second for what is on its way), the store is read until it holds what was sent (at most
# 12 tries), they resume. `agrees NAME sensor` then tells one sensor's verdict.
checkpoint() {  # $1: the checkpoint's name
    pause $SENSORS
    sleep 1
    tries=0
    while :; do
        read_store "$OUT/stored-$1.csv"
        tries=$((tries + 1))
        if [ $tries -lt 12 ]; then wait_option=--wait; else wait_option=""; fi
        python3 "$RIG/compare.py" checkpoint "$1" "$STATE" "$OUT/stored-$1.csv" $wait_option $(sensor_arguments) \
            > "$OUT/compare-$1.txt" 2>&1
        verdict=$?
        [ $verdict = 3 ] || break
        sleep 1
    done
    resume $SENSORS
    sed 's/^/  /' "$OUT/compare-$1.txt"
    say "checkpoint $1: the store read $tries time(s)"
    [ $verdict = 0 ]
}
agrees() { grep -q "^$1 $(sensor_address "$2"): .*: agree$" "$OUT/compare-$1.txt"; }
# The scenarios from the stream on need the gateway streaming: they fail at once when the stream never began, and
# one that finds the gateway dead starts it again (and fails).
STREAMING=""
need_gateway() {  # $1: scenario
    [ -n "$STREAMING" ] || { fail "$1" "nothing streams (the stream scenario failed)"; return 1; }
    gateway_alive && return 0
    fail "$1" "the gateway is not running: $(tail -3 "$OUT/run-$GATEWAY_RUNS.log" 2>/dev/null | tr '\n' ' ')"
    start_gateway
    return 1
}

# --- The scenarios ---------------------------------------------------------------------------------------------
# stack: every controller is there and powered, and wearhouse's doctor finds bluetoothd through the real bus.
scenario_stack() {
    [ -x "$WEARHOUSE" ] || { fail stack "no wearhouse binary at $WEARHOUSE (swift build --product wearhouse)"; return; }
    [ -n "$CENTRAL" ] || { fail stack "adapter hci0 has no address"; return; }
    [ -n "$(address hci$((WEARHOUSE_VM_CTRLS - 1)))" ] || { fail stack "there are not $WEARHOUSE_VM_CTRLS adapters"; return; }
    "$WEARHOUSE" doctor --json > "$OUT/doctor.json" 2> "$OUT/doctor.err"
    grep -q "$CENTRAL" "$OUT/doctor.json" || { fail stack "wearhouse doctor does not list adapter $CENTRAL"; return; }
    pass stack
}

# scan: three chest straps advertise on hci1, hci3 and hci5, a footpod on hci7 and a bathroom scale on hci9 (when
# the VM has ten controllers: run-vm.sh -n 6 runs the straps alone); `wearhouse scan` over the real stack finds each
# by its address. a and b have no input or output (Just Works); c has a display and a button (DisplayYesNo: numeric
# comparison), and holds bluetoothd's default agent until it is bonded (PeripheralHost's agent, docs/bluez-vm.md).
# The scale weighs every 2 s (two users in turn, each reading stamped with its clock, set right at switch-on): each
# checkpoint then has several readings to compare.
SENSOR_OPTIONS="--kind chestStrap"
sensor_options() { [ "$1" = c ] && echo "$SENSOR_OPTIONS --agent-capability DisplayYesNo" || echo "$SENSOR_OPTIONS"; }
OTHERS=""; [ "$WEARHOUSE_VM_CTRLS" -ge 10 ] && OTHERS="footpod scale"
scenario_scan() {
    launch_sensor a hci1 hci0 $(sensor_options a) --seed 7
    launch_sensor b hci3 hci2 $(sensor_options b) --seed 8
    launch_sensor c hci5 hci4 $(sensor_options c) --seed 9
    if [ -n "$OTHERS" ]; then
        launch_sensor footpod hci7 hci6 --kind footpod --seed 11
        launch_sensor scale hci9 hci8 --kind bathroomScale --seed 12 --summary-interval 2
    else
        say "$WEARHOUSE_VM_CTRLS controllers: the straps alone (the footpod and the scale need ten)"
    fi
    for name in $SENSORS; do sensor_ready $name || { fail scan "sensor $name"; return; }; done
    "$WEARHOUSE" scan --adapter "$CENTRAL" --duration 6 --json > "$OUT/scan.jsonl" 2> "$OUT/scan.err"
    for name in $SENSORS; do
        grep -q "$(sensor_address $name)" "$OUT/scan.jsonl" \
            || { fail scan "wearhouse scan did not find $name ($(sensor_address $name))"; return; }
    done
    pass scan
}

# pair: a is paired (bonded) by Just Works through wearhouse's agent (LE Secure Connections); b is enrolled without
# pairing and with AcquireNotify; c is paired by numeric comparison (`--confirm-passkey`: wearhouse's agent is
# DisplayYesNo and prints the passkey, which the strap's agent confirmed too); then the footpod and the scale are
# enrolled without pairing (neither needs it), both at once. Each through its own adapter. (Enrolling the footpod
# and the scale beside the straps made a's pairing take 44 s instead of 6.)
enrol() {  # $1: sensor, the rest: wearhouse pair's options
    name=$1; shift
    # `wearhouse pair` registers its agent without taking the default one, which stays the sensor hosts': the one
    # bluetoothd that plays both ends asks the default agent for the sensor's end (docs/bluez-vm.md).
    "$WEARHOUSE" pair "$(sensor_address $name)" "$@" --adapter "$(central_of $name)" --store "$STORE" \
        --subject alice --json > "$OUT/pair-$name.json" 2> "$OUT/pair-$name.err"
}
scenario_pair() {
    for enrolment in "a --pair" "b --acquire-notify" "c --confirm-passkey"; do
        set -- $enrolment
        say "pair $*"
        enrol "$@" || { fail pair "wearhouse pair $1 exited $?: $(tail -2 "$OUT/pair-$1.err")"; return; }
    done
    pids=""
    for name in $OTHERS; do
        say "pair $name"
        enrol "$name" & pids="$pids $name=$!"
    done
    for entry in $pids; do
        name=${entry%=*}
        wait "${entry#*=}" || { fail pair "wearhouse pair $name exited $?: $(tail -2 "$OUT/pair-$name.err")"; return; }
    done
    say "enrolled"
    if grep -q 'Not a sensor being paired' "$LOG/bluetoothd.log"; then
        fail pair "wearhouse's agent was asked for a sensor's end: $(grep -m1 'Not a sensor being paired' "$LOG/bluetoothd.log")"
        return
    fi
    "$WEARHOUSE" sensors --store "$STORE" --json > "$OUT/sensors.jsonl" 2>&1
    for name in $SENSORS; do
        grep -q "$(sensor_address $name)" "$OUT/sensors.jsonl" || { fail pair "the store does not list $name"; return; }
    done
    for name in a c; do
        [ "$(query device "$(central_adapter_of $name)" "$(sensor_address $name)" Paired)" = true ] \
            || { fail pair "bluetoothd has $name not paired"; return; }
    done
    passkey=$(sed -n 's/^passkey \([0-9]*\): check.*/\1/p' "$OUT/pair-c.err")
    [ -n "$passkey" ] || { fail pair "wearhouse pair c printed no passkey: $(cat "$OUT/pair-c.err")"; return; }
    grep -q "confirmed passkey $passkey" "$OUT"/peripheral-*.log 2>/dev/null \
        || { fail pair "no sensor's agent confirmed passkey $passkey"; return; }
    say "c: passkey $passkey confirmed by both ends"
    pass pair
}

# stream: the gateway, as the service, streams every sensor (recording a trace); stored equals sent.
scenario_stream() {
    read_store "$OUT/stored-before.csv"
    python3 "$RIG/compare.py" base "$STATE" "$OUT/stored-before.csv" $(sensor_arguments)
    start_gateway
    grow 3 120 $SENSORS || { fail stream "not streaming after 120 s: $(lagging)"; return; }
    STREAMING=1
    checkpoint stream || { fail stream "stored differs from sent"; return; }
    pass stream
}

# acquire-notify: b's heart rates come through an AcquireNotify socket (bluetoothd's NotifyAcquired), the
# others' through PropertiesChanged (Notifying); stored equals sent was checked with the stream.
scenario_acquire_notify() {
    [ -n "$STREAMING" ] || { fail acquire-notify "nothing streams (the stream scenario failed)"; return; }
    acquired=$(query characteristic hci2 "$(sensor_address b)" 2a37 NotifyAcquired)
    notifying=$(query characteristic hci0 "$(sensor_address a)" 2a37 Notifying)
    say "b: NotifyAcquired $acquired; a: Notifying $notifying"
    [ "$acquired" = true ] || { fail acquire-notify "b's measurement is not acquired ($acquired)"; return; }
    [ "$notifying" = true ] || { fail acquire-notify "a's measurement is not notifying ($notifying)"; return; }
    pass acquire-notify
}

# link-faults: three links fail at once, each its own way, while the gateway streams; each sensor must stream again
# and stored equal sent, sensor by sensor:
# - link-loss (a): the strap drops the link (Device1.Disconnect on its adapter's object for the central), as a
#   sensor walking out of range looks to the central;
# - central-power-off (b): the gateway's adapter for b goes down (`btmgmt power off`, every link with it) for 3 s;
# - sensor-restart (c): the strap reboots: it drops the link, its peripheral host is killed (SIGKILL) and started
#   again (another seed: other values).
# The sensors pause around the faults: a value handed to bluetoothd just as a link goes never reaches the air.
# Not `btmgmt power off` on a sensor's controller: btvirt's controllers go on accepting connections while powered
# off and have no supervision timeout, so the central keeps a link neither end can use (docs/bluez-vm.md).
scenario_link_faults() {
    need_gateway link-faults || return
    pause a b c
    mark_streaming a b c
    drop_link a
    btmgmt --index "$(central_adapter_of b | tr -d hci)" power off >> "$OUT/btmgmt.log" 2>&1
    drop_link c; kill_sensor c KILL
    sleep 3
    btmgmt --index "$(central_adapter_of b | tr -d hci)" power on >> "$OUT/btmgmt.log" 2>&1
    start_sensor c hci5 hci4 $(sensor_options c) --seed 10 || say "c's peripheral host did not start again"
    resume_streaming 120 a b c
    grow 3 120 a b c || say "not streaming again after 120 s: $(lagging)"
    checkpoint link-faults
    for fault in "link-loss a" "central-power-off b" "sensor-restart c"; do
        set -- $fault
        if agrees link-faults "$2"; then pass "$1"; else fail "$1" "$2's stored heart rates differ from those sent"; fi
    done
    for name in $OTHERS; do
        agrees link-faults "$name" || fail link-faults "$name (no fault of its own): stored differs from sent"
    done
}

# bluetoothd-restart: bluetoothd is killed and started again mid-stream; the peripheral hosts register with the
# new one, the gateway adopts it and connects again.
scenario_bluetoothd_restart() {
    need_gateway bluetoothd-restart || return
    pause $SENSORS
    mark_streaming $SENSORS
    kill "$(cat /run/bluetoothd.pid)"; wait_for '! kill -0 $(cat /run/bluetoothd.pid) 2>/dev/null' 10
    /run/tmp/bluetoothd-start || { resume $SENSORS; fail bluetoothd-restart "bluetoothd did not come back"; return; }
    resume_streaming 120 $SENSORS
    grow 3 120 $SENSORS || say "not streaming again after 120 s: $(lagging)"
    checkpoint bluetoothd-restart || { fail bluetoothd-restart "stored differs from sent"; return; }
    pass bluetoothd-restart
}

# adapter-gone: every virtual controller disappears (btvirt, which makes them, is killed) and comes back (started
# again: the same addresses); the gateway waits for its adapters, the sensors register again, the links return.
scenario_adapter_gone() {
    need_gateway adapter-gone || return
    pause $SENSORS
    mark_streaming $SENSORS
    kill "$(cat /run/btvirt.pid)"
    wait_for '[ -z "$(address hci0)" ]' 10 || { resume $SENSORS; fail adapter-gone "hci0 is still there"; return; }
    sleep 2
    /run/tmp/btvirt-start || { resume $SENSORS; fail adapter-gone "btvirt did not make the controllers again"; return; }
    [ "$(address hci0)" = "$CENTRAL" ] || { resume $SENSORS; fail adapter-gone "hci0 came back as $(address hci0)"; return; }
    resume_streaming 120 $SENSORS
    grow 3 120 $SENSORS || say "not streaming again after 120 s: $(lagging)"
    checkpoint adapter-gone || { fail adapter-gone "stored differs from sent"; return; }
    pass adapter-gone
}

# layout-change: a's and b's firmware is updated: their GATT applications are registered again with a service more,
# before the others (every handle moves); bluetoothd tells the central (Service Changed) and the gateway subscribes
# again (b through AcquireNotify).
scenario_layout_change() {
    need_gateway layout-change || return
    pause a b; touch /run/tmp/layout-a /run/tmp/layout-b
    wait_for "grep -q 'layout of the updated firmware registered' '$OUT/peripheral-a-$RUNS_a.log' \
        && grep -q 'layout of the updated firmware registered' '$OUT/peripheral-b-$RUNS_b.log'" 30 \
        || { resume a b; fail layout-change "a and b did not register their new layouts"; return; }
    resume a b
    grow 3 120 a b || say "not streaming again after 120 s: $(lagging)"
    for name in a b; do
        query services "$(central_adapter_of $name)" "$(sensor_address $name)" > "$OUT/services-$name.txt"
        grep -q f3c1a5e0-2b6d-4e0a-9c1e-7d2f0a6b5c01 "$OUT/services-$name.txt" \
            || say "the gateway's adapter does not show $name's new service"
    done
    checkpoint layout-change || { fail layout-change "stored differs from sent"; return; }
    pass layout-change
}

# sigterm: the gateway gets SIGTERM while every sensor streams: it exits 0, and what it stored is what was sent up
# to the signal (values sent less than 2 s before it may be on their way and are not required).
scenario_sigterm() {
    [ -n "$STREAMING" ] || { fail sigterm "nothing streams (the stream scenario failed)"; return; }
    gateway_alive || { fail sigterm "the gateway is not running"; return; }
    grow 2 60 $SENSORS
    wall=$(date +%s.%N)
    stop_gateway || { fail sigterm "wearhouse run exited $status on SIGTERM"; return; }
    pause $SENSORS
    read_store "$OUT/stored-sigterm.csv"
    python3 "$RIG/compare.py" checkpoint sigterm "$STATE" "$OUT/stored-sigterm.csv" --sigterm "$wall" 2 \
        $(sensor_arguments) > "$OUT/compare-sigterm.txt" 2>&1
    verdict=$?
    sed 's/^/  /' "$OUT/compare-sigterm.txt"
    grep 'latency' "$OUT/run-$GATEWAY_RUNS.log" | sed 's/^/  gateway: /'
    # Replay and fidelity need neither the footpod nor the scale, whose hosts would re-advertise every second.
    for name in $OTHERS; do kill_sensor "$name" TERM; done
    [ $verdict = 0 ] || { fail sigterm "stored is not what was sent before SIGTERM"; return; }
    pass sigterm
}

# replay: the trace the gateway recorded through the real stack, replayed into an empty store, gives the samples the
# live gateway stored (heart rates, the footpod's speeds, cadences, strides and distances, the weights).
scenario_replay() {
    [ -s "$TRACE" ] || { fail replay "no trace at $TRACE"; return; }
    nice -n 10 "$WEARHOUSE" replay "$TRACE" --store /run/tmp/replay.db > "$OUT/replay.txt" 2>&1 \
        || { fail replay "wearhouse replay exited $?: $(tail -2 "$OUT/replay.txt")"; return; }
    read_store "$OUT/stored-live.csv"
    read_store "$OUT/stored-replay.csv" /run/tmp/replay.db
    python3 "$RIG/compare.py" same replay "$OUT/stored-live.csv" "$OUT/stored-replay.csv" | sed 's/^/  /'
    python3 "$RIG/compare.py" same replay "$OUT/stored-live.csv" "$OUT/stored-replay.csv" > /dev/null \
        || { fail replay "the replay stored other samples than the live gateway"; return; }
    pass replay
}

# bench (not in the default list; `run-vm.sh -S stack,scan,pair,stream,bench`): the gateway streaming every sensor for $BENCH_SECONDS
# (30 by default): its CPU time per notification and share of the CPU, bluetoothd's and dbus-daemon's over the same
# window (the peers: the stack the notifications cross), its peak and current resident memory; then SIGTERM, and
# the notification-to-durable latency it logs at exit.
cpu_ticks() {  # utime + stime of process $1, in clock ticks
    read -r stat < "/proc/$1/stat" 2>/dev/null || { echo 0; return; }
    set -- ${stat#*) }
    echo $(( ${12} + ${13} ))
}
scenario_bench() {
    need_gateway bench || return
    seconds=${BENCH_SECONDS:-30}
    daemon=$(pgrep -o dbus-daemon)
    count_sent; sent_before=0; for name in $SENSORS; do eval "sent_before=\$((sent_before + SENT_$name))"; done
    gateway_before=$(cpu_ticks "$GATEWAY_PID"); bluetoothd_before=$(cpu_ticks "$(cat /run/bluetoothd.pid)")
    daemon_before=$(cpu_ticks "$daemon")
    read -r up rest < /proc/uptime; start=$up
    sleep "$seconds"
    read -r up rest < /proc/uptime
    count_sent; sent_after=0; for name in $SENSORS; do eval "sent_after=\$((sent_after + SENT_$name))"; done
    gateway=$(( $(cpu_ticks "$GATEWAY_PID") - gateway_before ))
    bluetoothd=$(( $(cpu_ticks "$(cat /run/bluetoothd.pid)") - bluetoothd_before ))
    daemon=$(( $(cpu_ticks "$daemon") - daemon_before ))
    notifications=$((sent_after - sent_before))
    memory=$(grep -E '^(VmHWM|VmRSS)' "/proc/$GATEWAY_PID/status" | tr -s ' \t' ' ' | tr '\n' ' ')
    python3 - "$start" "$up" "$notifications" "$gateway" "$bluetoothd" "$daemon" "$(getconf CLK_TCK)" "$memory" <<'PY'
import sys
start, end, notifications, gateway, bluetoothd, daemon, tick = sys.argv[1:8]
window = float(end) - float(start)
tick = int(tick)
n = max(int(notifications), 1)
def share(ticks): return f"{int(ticks) / tick * 1000 / n:.1f} ms per notification, {int(ticks) / tick / window * 100:.1f} % CPU"
print(f"  bench: {notifications} notifications in {window:.1f} s ({int(notifications) / window:.2f}/s)")
print(f"  bench: gateway {share(gateway)}; bluetoothd {share(bluetoothd)}; dbus-daemon {share(daemon)}")
print(f"  bench: gateway memory {sys.argv[8]}")
PY
    stop_gateway || { fail bench "wearhouse run exited $status on SIGTERM"; return; }
    grep 'latency' "$OUT/run-$GATEWAY_RUNS.log" | sed 's/^/  bench: gateway: /'
    pass bench
}

# fidelity: what FakeBlueZ copies from bluetoothd, recorded on the real one with sensor b (never paired) once the
# gateway let it go: the client scenario make test-bleak runs against FakeBlueZ (Tests/BlueZClients/bluez_traffic.py:
# discovery, filter errors, Disconnect while not connected, Connect, reads with offsets, write types, AcquireWrite,
# the CCCD, notify, disconnect); its normalized traffic goes to traffic-bluez.txt and the log.
scenario_fidelity() {
    resume $SENSORS
    sensor=$(sensor_address b)
    wait_for '[ "$(query device hci2 '"$sensor"' Connected)" != true ]' 10 \
        || { fail fidelity "b is still connected"; return; }
    python3 "$ROOT/Tests/BlueZClients/bluez_traffic.py" /org/bluez/hci2 "$sensor" > "$OUT/traffic-bluez.txt" \
        2> "$OUT/traffic-bluez.err" || { fail fidelity "bluez_traffic.py: $(tail -3 "$OUT/traffic-bluez.err")"; return; }
    echo "  fidelity: the real stack's traffic (FakeBlueZ's: make test-bleak)"; sed 's/^/    /' "$OUT/traffic-bluez.txt"
    pass fidelity
}

echo "scenarios: $($WEARHOUSE --version 2>&1)"
CENTRAL=$(address hci0)
for scenario in ${WEARHOUSE_VM_SCENARIOS:-$ALL}; do
    revive_stack
    echo "$scenario ($(uptime_s) s)"
    "scenario_$scenario"
done
gateway_alive && stop_gateway
for name in $SENSORS; do kill_sensor "$name" TERM; done
echo "bluez-vm: $PASSED passed, $FAILED failed"
[ $FAILED = 0 ] && [ $PASSED -gt 0 ]
