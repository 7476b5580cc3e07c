#!/usr/bin/python3
"""Today's heart rate from the wearhouse health store, through its D-Bus API (docs/app-api.md).

Uses only the system's D-Bus bindings (Debian: python3-dbus; python3-gi for --follow):

    ./todays_heart_rate.py                  # statistics of today and the latest samples
    ./todays_heart_rate.py --request        # ask the store's owner for permission to read heart rate
    ./todays_heart_rate.py --follow 60      # then print new samples as they arrive, for 60 seconds
    ./todays_heart_rate.py --bus session    # a person's own store (wearhouse run --api session)

The service knows this script as uid<your uid>:<path of this script>; that is what the owner grants to:
    wearhouse grant uid1000:/home/ann/todays_heart_rate.py --read heartRate
Without read permission the store shows an app only the samples it wrote itself, so "no heart rate today" can
also mean "not allowed": --request says what to ask for.
"""

import argparse
import datetime
import os
import sys

import dbus

BUS_NAME = "org.wearhouse.Health1"
OBJECT_PATH = "/org/wearhouse/Health1"
INTERFACE = "org.wearhouse.Health1"


def connect(bus):
    if bus == "system":
        return dbus.SystemBus()
    if bus == "session":
        return dbus.SessionBus()
    return dbus.bus.BusConnection(bus)


def local_time(milliseconds):
    return datetime.datetime.fromtimestamp(milliseconds / 1000).astimezone().strftime("%H:%M:%S")


def main():
    parser = argparse.ArgumentParser(description="Today's heart rate from the wearhouse store.")
    parser.add_argument("--bus", default=os.environ.get("WEARHOUSE_BUS", "system"),
                        help="system (default), session, or a D-Bus address")
    parser.add_argument("--since", type=int, help="start of the range in ms since the epoch (default: midnight)")
    parser.add_argument("--latest", type=int, default=5, help="how many of the latest samples to list")
    parser.add_argument("--request", action="store_true", help="ask for permission to read heart rate")
    parser.add_argument("--follow", type=float, metavar="SECONDS", help="then print new samples for this long")
    arguments = parser.parse_args()

    if arguments.follow is not None:
        from dbus.mainloop.glib import DBusGMainLoop
        DBusGMainLoop(set_as_default=True)
    store = dbus.Interface(connect(arguments.bus).get_object(BUS_NAME, OBJECT_PATH), INTERFACE)

    app, uid = store.Identity()
    print(f"app: {app}")
    if arguments.request:
        _, pending = store.RequestAuthorization(["heartRate"], dbus.Array([], signature="s"))
        if pending:
            print(f"asked the store's owner; they decide with: wearhouse grant '{app}' --read heartRate")
        else:
            print("the owner has decided on this app's request already")

    now = int(datetime.datetime.now().timestamp() * 1000)
    midnight = datetime.datetime.now().astimezone().replace(hour=0, minute=0, second=0, microsecond=0)
    since = arguments.since if arguments.since is not None else int(midnight.timestamp() * 1000)
    statistics = store.Statistics("heartRate", dbus.Int64(since), dbus.Int64(max(now, since + 1)), {})
    count = int(statistics.get("count", 0))
    if count == 0:
        print("no heart rate today (or this app may not read it: try --request)")
    else:
        print(f"heart rate today: {count} samples, average {float(statistics['average']):.1f}, "
              f"min {float(statistics['minimum']):.0f}, max {float(statistics['maximum']):.0f} count/min")
        samples, _ = store.QuerySamples("heartRate", {
            "from": dbus.Int64(since), "ascending": False, "limit": dbus.Int64(arguments.latest)})
        for sample_type, start, end, value, unit, properties in samples:
            print(f"  {local_time(start)}  {float(value):.0f} {unit}  ({properties.get('source', '?')})")
    sys.stdout.flush()

    if arguments.follow is not None:
        follow(store, arguments.follow)


def follow(store, seconds):
    from gi.repository import GLib

    loop = GLib.MainLoop()
    state = {"anchor": 0}

    def added(sample_type, anchor):
        changes, _, state["anchor"], _ = store.Changes(sample_type, dbus.Int64(state["anchor"]), dbus.UInt32(0))
        print(f"added: {sample_type} {len(changes)} sample(s)")
        for _, start, _, value, unit, _ in changes:
            print(f"  {local_time(start)}  {float(value):.0f} {unit}")
        sys.stdout.flush()

    store.connect_to_signal("SamplesAdded", added)
    state["anchor"] = int(store.Observe(["heartRate"]))
    print(f"observing heartRate for {seconds:g} s")
    sys.stdout.flush()
    GLib.timeout_add(int(seconds * 1000), loop.quit)
    loop.run()


if __name__ == "__main__":
    try:
        main()
    except dbus.exceptions.DBusException as error:
        print(f"Error: {error.get_dbus_name()}: {error.get_dbus_message()}", file=sys.stderr)
        sys.exit(69 if error.get_dbus_name().startswith("org.freedesktop.DBus.Error.") else 1)
