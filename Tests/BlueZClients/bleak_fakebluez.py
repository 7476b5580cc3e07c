"""bleak, the most used Python BLE library, against FakeBlueZ: a real third-party BlueZ client on our fake.

Starts a private dbus-daemon of the system type, `wearhouse fake-bluez` on it with one chest strap that only
discovery finds, and runs bleak (DBUS_SYSTEM_BUS_ADDRESS pointed at the private bus) RUNS times: find the strap
by address, connect, read the Body Sensor Location, start notifications on the Heart Rate Measurement and get
some, stop them, disconnect. Every run must succeed: the count is the assertion, not a timing. Before that,
Tests/BlueZClients/bluez_traffic.py records one client scenario against FakeBlueZ, and what it saw must be what
it saw against the real bluetoothd 5.66 (traffic-bluez-5.66.txt, recorded in the VM) and, with --live FILE, what
it saw against the real bluetoothd in this machine's VM run (the fidelity scenario's traffic-bluez.txt).

    .venv/bin/python Tests/BlueZClients/bleak_fakebluez.py .build/debug/wearhouse [RUNS] [--live FILE]

Run by `make test-bleak`; prints "bleak: N of N runs" and exits 1 unless every run passed.
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile

ADDRESS = "C0:FF:EE:00:00:0B"
BODY_SENSOR_LOCATION = "00002a38-0000-1000-8000-00805f9b34fb"
HEART_RATE_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
# Generous per-step limits: a loaded 2-core machine is slow, and a limit only turns a hang into a failure.
STEP_TIMEOUT = 20.0
NOTIFICATIONS = 2

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""


def start_bus(directory):
    """A private system-type dbus-daemon; returns (process, address)."""
    socket = os.path.join(directory, "bus")
    config = os.path.join(directory, "bus.conf")
    with open(config, "w") as file:
        file.write(BUS_CONFIG.format(socket=socket))
    daemon = subprocess.Popen(["dbus-daemon", "--config-file=" + config, "--nofork", "--print-address"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    address = daemon.stdout.readline().strip()
    if not address:
        raise RuntimeError("dbus-daemon printed no address")
    return daemon, address


def start_fake(wearhouse, address, directory):
    """`wearhouse fake-bluez` with one strap found only by discovery; waits until it serves org.bluez."""
    scenario = os.path.join(directory, "scenario.json")
    with open(scenario, "w") as file:
        json.dump({"peripherals": [{"kind": "chestStrap", "address": ADDRESS, "name": "Bleak strap", "seed": 11,
                                    "nearby": True}]}, file)
    fake = subprocess.Popen([wearhouse, "fake-bluez", "--address", address, "--scenario", scenario],
                            stderr=subprocess.PIPE, text=True)
    line = fake.stderr.readline()
    if "serving org.bluez" not in line:
        raise RuntimeError("fake-bluez did not start: " + line + fake.stderr.read())
    return fake


HERE = os.path.dirname(os.path.abspath(__file__))
# What Tests/BlueZClients/bluez_traffic.py recorded against the real bluetoothd 5.66 in the VM (the fidelity
# scenario of Tests/BlueZVM/scenarios.sh writes .build/bluez-vm/out/traffic-bluez.txt).
REAL_TRAFFIC = os.path.join(HERE, "traffic-bluez-5.66.txt")


def record_lines(path):
    """The traffic lines of a record, and the lines its header marks as sent by bluetoothd in some runs only
    ("# optional: LINE")."""
    with open(path) as file:
        text = file.read().splitlines()
    optional = [line[len("# optional: "):] for line in text if line.startswith("# optional: ")]
    return [line for line in text if line and not line.startswith("#")], optional


def normalized(lines, optional):
    """Lines without the optional ones, and a signal that came several times in a row ("(repeated)") taken as
    one: how many RSSI updates discovery sends before the script stops it depends on timing."""
    result = []
    for line in lines:
        if line in optional:
            continue
        line = line[:-len(" (repeated)")] if line.endswith(" (repeated)") else line
        if result and result[-1] == line and line.startswith("signal "):
            continue
        result.append(line)
    return result


def compare_traffic(records):
    """Runs bluez_traffic.py against FakeBlueZ (before bleak: the sensor is new) and compares what it saw with
    each record of the real stack (name, path): the calls with their replies and errors, and the signals between
    them, line by line. Returns whether it is the same as every record; prints the differences."""
    result = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "bluez_traffic.py"), "/org/bluez/hci0", ADDRESS],
                            capture_output=True, text=True, timeout=180)
    if result.returncode != 0:
        print("traffic: bluez_traffic.py failed: " + result.stderr[-2000:], file=sys.stderr)
        return False
    import difflib
    same = True
    # The optional lines of the stored record apply to every comparison: they are what the real stack was seen
    # to vary in.
    _, optional = record_lines(REAL_TRAFFIC)
    for name, path in records:
        real, _ = record_lines(path)
        fake = normalized(result.stdout.splitlines(), optional)
        diff = list(difflib.unified_diff(normalized(real, optional), fake, name, "FakeBlueZ", n=1, lineterm=""))
        calls = [line for line in fake if line.startswith("call ")]
        print("traffic: %d lines, %d calls; %s" % (len(fake), len(calls),
                                                   "the same as " + name if not diff else "differs from " + name))
        for line in diff:
            print("  " + line)
        same = same and not diff
    return same


async def one_run(number):
    """One bleak session; returns None when every step worked, else what failed."""
    from bleak import BleakClient, BleakScanner

    device = await BleakScanner.find_device_by_address(ADDRESS, timeout=STEP_TIMEOUT)
    if device is None:
        return "find_device_by_address found nothing"
    received = []
    enough = asyncio.Event()

    def notified(_characteristic, data):
        received.append(bytes(data))
        if len(received) >= NOTIFICATIONS:
            enough.set()

    async with BleakClient(device, timeout=STEP_TIMEOUT) as client:
        location = await client.read_gatt_char(BODY_SENSOR_LOCATION)
        if len(location) != 1:
            return "Body Sensor Location is %r" % bytes(location)
        await client.start_notify(HEART_RATE_MEASUREMENT, notified)
        try:
            await asyncio.wait_for(enough.wait(), STEP_TIMEOUT)
        except asyncio.TimeoutError:
            return "%d notifications in %.0f s" % (len(received), STEP_TIMEOUT)
        await client.stop_notify(HEART_RATE_MEASUREMENT)
        # Heart Rate Measurement: flags, then the rate (uint8, or uint16 when flag bit 0 is set).
        if any(len(value) < (3 if value[0] & 1 else 2) for value in received):
            return "malformed notifications %r" % received
    if client.is_connected:
        return "still connected after the disconnection"
    return None


async def run_all(runs):
    passed = 0
    for number in range(1, runs + 1):
        try:
            failure = await asyncio.wait_for(one_run(number), STEP_TIMEOUT * 4)
        except Exception as error:  # any failure of bleak is a failed run, reported with its type
            failure = "%s: %s" % (type(error).__name__, error)
        if failure is None:
            passed += 1
        else:
            print("bleak run %d: %s" % (number, failure), file=sys.stderr)
    return passed


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    arguments = sys.argv[1:]
    records = [("bluetoothd 5.66 (the stored record)", REAL_TRAFFIC)]
    if "--live" in arguments:
        at = arguments.index("--live")
        if at + 1 >= len(arguments) or not os.path.isfile(arguments[at + 1]):
            print("--live needs the VM run's traffic-bluez.txt (run make test-bluez first)", file=sys.stderr)
            return 2
        records.append(("bluetoothd in this machine's VM run", arguments[at + 1]))
        del arguments[at:at + 2]
    wearhouse = os.path.abspath(arguments[0])
    runs = int(arguments[1]) if len(arguments) > 1 else 20
    if not 1 <= runs <= 1000:
        print("RUNS must be 1-1000", file=sys.stderr)
        return 2
    directory = tempfile.mkdtemp(prefix="bleak-fakebluez-")
    processes = []
    try:
        daemon, address = start_bus(directory)
        processes.append(daemon)
        processes.append(start_fake(wearhouse, address, directory))
        os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = address
        traffic_ok = compare_traffic(records)
        passed = asyncio.run(run_all(runs))
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(directory, ignore_errors=True)
    print("bleak: %d of %d runs (find by address, connect, read, notify, disconnect)" % (passed, runs))
    return 0 if passed == runs and traffic_ok else 1


if __name__ == "__main__":
    sys.exit(main())
