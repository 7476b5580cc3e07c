#!/usr/bin/python3
"""One BlueZ client scenario, recorded: the methods it calls, the replies and errors it gets, and the signals
bluetoothd sends about the sensor, printed in a normalized form so that two stacks can be compared line by line.

    DBUS_SYSTEM_BUS_ADDRESS=... /usr/bin/python3 Tests/BlueZClients/bluez_traffic.py ADAPTER_PATH ADDRESS

Runs against FakeBlueZ (Tests/BlueZClients/bleak_fakebluez.py, `make test-bleak`) and against the real
bluetoothd 5.66 in the VM (Tests/BlueZVM/scenarios.sh, `fidelity`). The sensor must advertise the Heart Rate
service and be neither connected nor paired. Normalized: addresses (ADDR), object paths (DEV, and GATT objects
by UUID: DEV/180d/2a37), RSSI values (N) and notified values (VALUE); runs of one repeated signal are one line
with "(repeated)". Only the signals about the sensor's Device1 and Heart Rate objects and the adapter's
Discovering are kept. Needs python3-dbus and python3-gi (Debian's /usr/bin/python3).
"""

import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

BLUEZ = "org.bluez"
HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"
MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
LOCATION = "00002a38-0000-1000-8000-00805f9b34fb"
CONTROL_POINT = "00002a39-0000-1000-8000-00805f9b34fb"
CCCD = "00002902-0000-1000-8000-00805f9b34fb"
DEVICE_PROPERTIES = {"Connected", "ServicesResolved", "RSSI", "Paired", "Bonded"}

lines = []
signals = []
gatt_names = {}  # object path -> normalized name
state = {"device": None, "address": None}


def short(uuid):
    uuid = str(uuid)
    return uuid[4:8] if uuid.endswith("-0000-1000-8000-00805f9b34fb") and uuid.startswith("0000") else uuid


def path_name(path):
    path = str(path)
    if path in gatt_names:
        return gatt_names[path]
    if path == state["device"]:
        return "DEV"
    return path.replace(state["device"] or "\0", "DEV")


def value_text(key, value):
    if key == "RSSI":
        return "N"
    if isinstance(value, dbus.Array) and value.signature == "y":
        return "[" + " ".join("%02x" % int(b) for b in value) + "]"
    if isinstance(value, dbus.Boolean):
        return "true" if value else "false"
    if isinstance(value, dbus.String):
        return str(value).replace(state["address"] or "\0", "ADDR")
    return str(value)


def record(text):
    lines.append(text)


def on_signal(*args, **keywords):
    member, path = keywords["member"], str(keywords["path"])
    if member == "PropertiesChanged":
        interface, changed, invalidated = args
        if path == state["device"] and interface == "org.bluez.Device1":
            keys = sorted(k for k in changed if k in DEVICE_PROPERTIES)
            gone = sorted(k for k in invalidated if k in DEVICE_PROPERTIES)
            if not keys and not gone:
                return
            text = ", ".join("%s=%s" % (k, value_text(k, changed[k])) for k in keys)
        elif path in gatt_names and interface.startswith("org.bluez.Gatt"):
            keys = sorted(k for k in changed if k in ("Value", "Notifying", "WriteAcquired", "NotifyAcquired"))
            gone = sorted(invalidated)
            if not keys and not gone:
                return
            text = ", ".join("%s=%s" % (k, "VALUE" if k == "Value" and gatt_names[path].endswith("2a37")
                                        else value_text(k, changed[k])) for k in keys)
        elif interface == "org.bluez.Adapter1" and "Discovering" in changed:
            path, text, gone = "ADAPTER", "Discovering=%s" % value_text("", changed["Discovering"]), []
        else:
            return
        signals.append("signal %s changed %s%s" % (path_name(path), text or "-",
                                                   " invalidated " + ",".join(gone) if gone else ""))


def device_known(manager):
    """Whether the sensor's object exists (a device found before this run is reported by RSSI only)."""
    objects = manager.GetManagedObjects(dbus_interface="org.freedesktop.DBus.ObjectManager")
    return dbus.ObjectPath(state["device"]) in objects


def flush_signals(drop=()):
    """Moves the signals so far into the record, runs of one line collapsed; lines in `drop` are left out."""
    previous = None
    for text in signals:
        if text in drop:
            continue
        if text == previous:
            if not lines[-1].endswith("(repeated)"):
                lines[-1] += " (repeated)"
            continue
        lines.append(text)
        previous = text
    del signals[:]


def spin(seconds, until=None):
    """Runs the main loop for up to `seconds`, or until `until()` holds; returns whether it held."""
    context = GLib.MainContext.default()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if until is not None and until():
            return True
        context.iteration(False) or time.sleep(0.01)
    return until is not None and until()


def call(obj, interface, member, *args, label=None, show=None, drop=(), **keywords):
    """Calls, records "call X -> reply" or "-> error NAME: message"; returns the reply (None on error). The
    signals that came before the reply are recorded first, but for those in `drop`."""
    name = label or "%s.%s" % (interface.split(".")[-1], member)
    done = {}

    def replied(*result):
        done["reply"] = result[0] if len(result) == 1 else result

    def failed(error):
        done["error"] = error

    getattr(obj, member)(*args, dbus_interface=interface, reply_handler=replied, error_handler=failed,
                         timeout=60, **keywords)
    spin(60, lambda: done)
    flush_signals(drop=drop)
    if "error" in done:
        error = done["error"]
        record("call %s -> error %s: %s" % (name, error.get_dbus_name(), error.get_dbus_message()))
        return None
    reply = done.get("reply")
    record("call %s -> %s" % (name, show(reply) if show else "ok"))
    return reply


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    adapter_path, address = sys.argv[1], sys.argv[2].upper()
    state["address"] = address
    state["device"] = adapter_path + "/dev_" + address.replace(":", "_")
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    bus.add_signal_receiver(on_signal, bus_name=BLUEZ, member_keyword="member", path_keyword="path")
    adapter = bus.get_object(BLUEZ, adapter_path)
    manager = bus.get_object(BLUEZ, "/")
    a1 = "org.bluez.Adapter1"

    call(adapter, a1, "SetDiscoveryFilter", dbus.Dictionary({"Transport": "bogus"}, signature="sv"),
         label="Adapter1.SetDiscoveryFilter {Transport: bogus}")
    call(adapter, a1, "SetDiscoveryFilter", dbus.Dictionary({"UUIDs": dbus.Array(["zz"], "s")}, signature="sv"),
         label="Adapter1.SetDiscoveryFilter {UUIDs: [zz]}")
    call(adapter, a1, "SetDiscoveryFilter",
         dbus.Dictionary({"Transport": "le", "UUIDs": dbus.Array([HEART_RATE], "s")}, signature="sv"),
         label="Adapter1.SetDiscoveryFilter {Transport: le, UUIDs: [180d]}")
    call(adapter, a1, "StartDiscovery")
    seen = spin(20, lambda: any(s.startswith("signal DEV") for s in signals) or device_known(manager))
    # Two more advertisements' worth, while the filter is set.
    spin(1.5)
    flush_signals()
    record("sensor seen while discovering: %s" % ("yes" if seen else "no"))
    # An advertisement may still land between the flush above and the StopDiscovery reply (or after it), from
    # either stack, depending only on timing: its RSSI update is not part of what is compared (seen from FakeBlueZ
    # once in a loaded run, before the reply).
    call(adapter, a1, "StopDiscovery", drop=("signal DEV changed RSSI=N",))
    spin(5, lambda: any("Discovering=false" in s for s in signals))
    flush_signals(drop=("signal DEV changed RSSI=N",))

    device = bus.get_object(BLUEZ, state["device"])
    d1 = "org.bluez.Device1"
    call(device, d1, "Disconnect", label="Device1.Disconnect (not connected)")
    call(device, d1, "Connect")
    resolved = spin(40, lambda: any("ServicesResolved=true" in s for s in signals))
    flush_signals()
    record("services resolved: %s" % ("yes" if resolved else "no"))
    objects = manager.GetManagedObjects(dbus_interface="org.freedesktop.DBus.ObjectManager")
    services = {str(p): short(i["org.bluez.GattService1"]["UUID"]) for p, i in objects.items()
                if str(p).startswith(state["device"] + "/") and "org.bluez.GattService1" in i}
    paths = {}
    for path, interfaces in objects.items():
        path = str(path)
        for kind in ("org.bluez.GattCharacteristic1", "org.bluez.GattDescriptor1"):
            if kind in interfaces and path.startswith(state["device"] + "/"):
                parent = path.rsplit("/", 1)[0]
                service = services.get(parent) or services.get(parent.rsplit("/", 1)[0])
                name = "DEV/%s/%s" % (service, short(interfaces[kind]["UUID"]))
                if kind.endswith("Descriptor1"):
                    name = gatt_names.get(parent, parent) + "/" + short(interfaces[kind]["UUID"])
                if service == "180d":
                    gatt_names[path] = name
                    paths[name] = path
    # Descriptors may be listed before their characteristic: name them again.
    for path in list(gatt_names):
        parent = path.rsplit("/", 1)[0]
        if parent in gatt_names and not gatt_names[path].startswith(gatt_names[parent]):
            gatt_names[path] = gatt_names[parent] + "/" + short(CCCD)
            paths[gatt_names[path]] = path
    record("heart rate objects: " + ", ".join(sorted(paths)))
    c1, g1 = "org.bluez.GattCharacteristic1", "org.bluez.GattDescriptor1"
    hexes = lambda reply: "[" + " ".join("%02x" % int(b) for b in reply) + "]"
    measurement, location = paths.get("DEV/180d/2a37"), paths.get("DEV/180d/2a38")
    control_point, cccd = paths.get("DEV/180d/2a39"), paths.get("DEV/180d/2a37/2902")
    if location:
        loc = bus.get_object(BLUEZ, location)
        call(loc, c1, "ReadValue", dbus.Dictionary({}, signature="sv"), label="2a38.ReadValue {}", show=hexes)
        call(loc, c1, "ReadValue", dbus.Dictionary({"offset": dbus.UInt32(1)}, signature="sv"),
             label="2a38.ReadValue {offset: u 1}", show=hexes)
        call(loc, c1, "ReadValue", dbus.Dictionary({"offset": dbus.UInt16(1)}, signature="sv"),
             label="2a38.ReadValue {offset: q 1}", show=hexes)
        call(loc, c1, "ReadValue", dbus.Dictionary({"offset": dbus.UInt16(5)}, signature="sv"),
             label="2a38.ReadValue {offset: q 5}", show=hexes)
        call(loc, c1, "WriteValue", dbus.Array([1], "y"), dbus.Dictionary({"type": "command"}, signature="sv"),
             label="2a38.WriteValue {type: command}")
        call(loc, c1, "WriteValue", dbus.Array([1], "y"), dbus.Dictionary({}, signature="sv"),
             label="2a38.WriteValue {}")
        call(loc, c1, "WriteValue", dbus.Array([1], "y"), dbus.Dictionary({"type": "bogus"}, signature="sv"),
             label="2a38.WriteValue {type: bogus}")
    if control_point:
        call(bus.get_object(BLUEZ, control_point), c1, "AcquireWrite", dbus.Dictionary({}, signature="sv"),
             label="2a39.AcquireWrite {}")
    if measurement:
        hrm = bus.get_object(BLUEZ, measurement)
        if cccd:
            call(bus.get_object(BLUEZ, cccd), g1, "ReadValue", dbus.Dictionary({}, signature="sv"),
                 label="2a37/2902.ReadValue {} (before StartNotify)", show=hexes)
        call(hrm, c1, "StartNotify")
        notified = spin(10, lambda: sum("2a37 changed Value" in s for s in signals) >= 2)
        flush_signals()
        record("notifications: %s" % ("yes" if notified else "no"))
        if cccd:
            call(bus.get_object(BLUEZ, cccd), g1, "ReadValue", dbus.Dictionary({}, signature="sv"),
                 label="2a37/2902.ReadValue {} (notifying)", show=hexes)
            call(bus.get_object(BLUEZ, cccd), g1, "WriteValue", dbus.Array([1, 0], "y"),
                 dbus.Dictionary({}, signature="sv"), label="2a37/2902.WriteValue {}")
        call(hrm, c1, "StopNotify")
    call(device, d1, "Disconnect")
    spin(10, lambda: any("Connected=false" in s for s in signals))
    flush_signals()
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
