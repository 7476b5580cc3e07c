#!/usr/bin/python3
"""Answers the rig's questions about bluetoothd's objects (Tests/BlueZVM/scenarios.sh), one per call:

    bluez_query.py characteristic ADAPTER ADDRESS UUID PROPERTY
        the property (Notifying, NotifyAcquired, ...) of the device's characteristic UUID on ADAPTER (hci0), as
        "true"/"false" or its value; "missing" when the device has no such characteristic.
    bluez_query.py services ADAPTER ADDRESS
        the device's service UUIDs with their object paths, one "UUID PATH" per line.
    bluez_query.py device ADAPTER ADDRESS PROPERTY
        a Device1 property (Connected, Paired, ServicesResolved, ...), "missing" without the device.

Exit 0 when bluetoothd answered. Needs Debian's python3-dbus (/usr/bin/python3).
"""
import sys

import dbus


def objects():
    manager = dbus.Interface(dbus.SystemBus().get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager")
    return manager.GetManagedObjects()


def device_path(adapter, address):
    return f"/org/bluez/{adapter}/dev_{address.upper().replace(':', '_')}"


def text(value):
    if isinstance(value, dbus.Boolean):
        return "true" if value else "false"
    if isinstance(value, dbus.Array):
        return " ".join(str(element) for element in value)
    return str(value)


def full_uuid(uuid):
    uuid = uuid.lower()
    return f"0000{uuid}-0000-1000-8000-00805f9b34fb" if len(uuid) == 4 else uuid


def main(arguments):
    if len(arguments) == 5 and arguments[0] == "characteristic":
        _, adapter, address, uuid, name = arguments
        prefix = device_path(adapter, address) + "/"
        for path, interfaces in objects().items():
            properties = interfaces.get("org.bluez.GattCharacteristic1")
            if path.startswith(prefix) and properties and str(properties["UUID"]) == full_uuid(uuid):
                print(text(properties.get(name, "missing")))
                return 0
        print("missing")
        return 0
    if len(arguments) == 3 and arguments[0] == "services":
        _, adapter, address = arguments
        prefix = device_path(adapter, address) + "/"
        for path, interfaces in sorted(objects().items()):
            properties = interfaces.get("org.bluez.GattService1")
            if path.startswith(prefix) and properties:
                print(f"{properties['UUID']} {path}")
        return 0
    if len(arguments) == 4 and arguments[0] == "device":
        _, adapter, address, name = arguments
        properties = objects().get(device_path(adapter, address), {}).get("org.bluez.Device1")
        print(text(properties.get(name, "missing")) if properties else "missing")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
