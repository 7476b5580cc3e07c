#!/usr/bin/python3
"""Stored equals sent, sensor by sensor: what the simulated sensors sent (the peripheral hosts' --sent ledgers, JSON
lines) against what the gateway stored (`wearhouse export --format csv`, whose "device" is the sensor's address):
the same readings in the same order, none lost, none doubled, each value as the gateway converts it.

A sensor is MEASUREMENT:ADDRESS=LEDGER[,LEDGER...], MEASUREMENT the characteristic whose values are compared:
    2a37  Heart Rate Measurement: each heart rate is a heartRate sample (bpm).
    2a53  RSC Measurement (a footpod): each notification is a runningSpeed (m/s, speed / 256), a stepCadence
          (steps/min) and a runningStrideLength (m, stride / 100) sample at one instant; and the distance stored
          (distanceWalkingRunning deltas) adds up to the Total Distance the stored notifications span (1/10 m).
    2a9d  Weight Measurement (a scale, by indication): each reading is a bodyMass sample (kg, 0.005 kg or 0.01 lb
          steps) placed at the reading's own time stamp (the scale's local wall time), with its user index in the
          metadata. A scale sends its last reading again after a reconnection: a reading is its bytes (time stamp,
          user, weight), and one sent twice must be stored once.
Without MEASUREMENT: 2a37.

    compare.py base STATE STORED SENSOR ...
        records how much each sensor had sent and stored so far: the next checkpoint compares what comes after.
    compare.py checkpoint NAME STATE STORED [--wait] [--sigterm WALL GRACE] SENSOR ...
        compares each sensor's window since the last base or checkpoint and makes the counts of now the next base
        (whatever the verdict, so that one failure does not spill into the next checkpoint). Exit 0 when every
        sensor agrees, 1 when one differs; with --wait, 3 (and nothing recorded) while some sensor's stored
        readings are still a strict beginning of what it sent: the caller reads the store again. With --sigterm,
        the gateway was stopped at WALL (seconds since 1970) while the sensors sent: what it stored must be a
        beginning of what was sent, and only readings sent later than GRACE seconds before WALL may be missing.
    compare.py same NAME STORED_A STORED_B
        the same samples (type, device, start, value) in both, e.g. the live store and a replay of its trace.

A sensor restarted mid-run has two ledgers for one address (comma-separated, in order).
"""
import collections
import csv
import datetime
import json
import sys

# What the gateway stores for each measurement compared (the types `wearhouse export --type` must read).
STORED_TYPES = {
    "2a37": ["heartRate"],
    "2a53": ["runningSpeed", "stepCadence", "runningStrideLength", "distanceWalkingRunning"],
    "2a9d": ["bodyMass"],
}
LABELS = {"2a37": "heart rates", "2a53": "footpod readings (speed, cadence, stride)", "2a9d": "weights"}


def ledger_values(paths, characteristic):
    """[(value bytes, wall time)] of one characteristic from ledgers, in order."""
    values = []
    for path in paths:
        with open(path) as ledger:
            for line in ledger:
                if not line.strip():
                    continue
                entry = json.loads(line)
                if entry["characteristic"] == characteristic:
                    values.append((bytes.fromhex(entry["value"]), entry.get("wall", 0.0)))
    return values


def heart_rate(value):
    # Heart Rate Measurement: flags bit 0 says whether the rate is one byte or two (little-endian).
    return value[1] | (value[2] << 8) if value[0] & 1 else value[1]


def rsc(value):
    """(speed m/s, cadence /min, stride m or None), and the Total Distance (1/10 m) or None."""
    flags = value[0]
    speed = int.from_bytes(value[1:3], "little") / 256
    cadence = value[3]
    at = 4
    stride = None
    if flags & 1:
        stride = int.from_bytes(value[at:at + 2], "little") / 100
        at += 2
    total = int.from_bytes(value[at:at + 4], "little") if flags & 2 else None
    # The gateway stores no stride of 0 (SampleBuilder.rsc).
    return (round(speed, 6), cadence, round(stride, 3) if stride else None), total


def weight(value):
    """(start as UTC ISO text, kg, user index or None): the reading as the gateway stores it."""
    flags = value[0]
    raw = int.from_bytes(value[1:3], "little")
    kilograms = raw * 0.45359237 / 100 if flags & 1 else raw * 0.005
    at = 3
    start = None
    if flags & 2:
        year = int.from_bytes(value[at:at + 2], "little")
        month, day, hours, minutes, seconds = value[at + 2:at + 7]
        # The scale's clock is local wall time: an instant in this guest's time zone, as the gateway reads it.
        local = datetime.datetime(year, month, day, hours, minutes, seconds).astimezone()
        start = local.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        at += 7
    user = value[at] if flags & 4 else None
    return (start, round(kilograms, 4), user)


def sent_readings(characteristic, paths):
    """[(reading, wall time)] in order, and the footpod's Total Distances (one per reading, else [])."""
    readings, totals = [], []
    seen = set()
    for value, wall in ledger_values(paths, characteristic):
        if characteristic == "2a37":
            readings.append((heart_rate(value), wall))
        elif characteristic == "2a53":
            reading, total = rsc(value)
            readings.append((reading, wall))
            totals.append(total)
        elif characteristic == "2a9d":
            # The same bytes again: the scale sent its last reading once more (after a reconnection).
            if value in seen:
                continue
            seen.add(value)
            readings.append((weight(value), wall))
    return readings, totals


def stored_rows(path):
    """The stored samples, by device then start: `wearhouse export --format csv` (a header line, then one row each)."""
    with open(path, newline="") as samples:
        rows = [row for row in csv.DictReader(samples)]
    rows.sort(key=lambda row: (row.get("device") or "", row["start"], row["type"]))
    return rows


def utc_text(start):
    """An export's start (ISO 8601 with Z or an offset) as UTC text to the second."""
    instant = datetime.datetime.fromisoformat(start.replace("Z", "+00:00"))
    return instant.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def stored_readings(characteristic, rows, address):
    """The readings stored for one sensor, in order of their start; for a footpod also its distance in metres."""
    mine = [row for row in rows if (row.get("device") or "").upper() == address.upper()]
    if characteristic == "2a37":
        return [round(float(row["value"])) for row in mine if row["type"] == "heartRate"], None
    if characteristic == "2a53":
        by_start = collections.OrderedDict()
        for row in mine:
            if row["type"] in ("runningSpeed", "stepCadence", "runningStrideLength"):
                by_start.setdefault(row["start"], {})[row["type"]] = float(row["value"])
        readings = []
        for parts in by_start.values():
            speed, cadence, stride = parts.get("runningSpeed"), parts.get("stepCadence"), parts.get("runningStrideLength")
            readings.append((None if speed is None else round(speed, 6), None if cadence is None else round(cadence),
                             None if stride is None else round(stride, 3)))
        distance = sum(float(row["value"]) for row in mine if row["type"] == "distanceWalkingRunning")
        return readings, distance
    if characteristic == "2a9d":
        readings = []
        for row in mine:
            if row["type"] != "bodyMass":
                continue
            metadata = json.loads(row["metadata"]) if row.get("metadata") else {}
            user = metadata.get("userIndex")
            readings.append((utc_text(row["start"]), round(float(row["value"]), 4),
                             None if user is None else int(user)))
        return readings, None
    raise SystemExit(f"compare.py: no comparison for characteristic {characteristic}")


def parse_sensors(arguments):
    """{address: (measurement, [ledger])}."""
    sensors = {}
    for argument in arguments:
        sensor, _, ledgers = argument.partition("=")
        characteristic, _, address = sensor.partition(":") if sensor.count(":") == 6 else ("", "", sensor)
        characteristic = characteristic or "2a37"
        if not address or not ledgers or characteristic not in STORED_TYPES:
            raise SystemExit(f"compare.py: a sensor is [2a37|2a53|2a9d:]ADDRESS=LEDGER[,LEDGER...], not {argument!r}")
        sensors[address.upper()] = (characteristic, ledgers.split(","))
    return sensors


def load_state(path):
    try:
        with open(path) as state:
            return json.load(state)
    except FileNotFoundError:
        return {}


def save_state(path, state):
    with open(path, "w") as out:
        json.dump(state, out)


def base(state_path, samples, sensors):
    rows = stored_rows(samples)
    state = {}
    for address, (characteristic, ledgers) in sensors.items():
        sent, _ = sent_readings(characteristic, ledgers)
        stored, distance = stored_readings(characteristic, rows, address)
        state[address] = {"sent": len(sent), "stored": len(stored), "distance": distance or 0.0, "total": None}
    save_state(state_path, state)
    return 0


def distance_check(totals, last_total, distance):
    """The footpod's distance in a window: the stored deltas against what the stored notifications' Total Distances
    span, from the last one compared before (`last_total`; none: the window's first is the gateway's first, a base
    only). Returns whether they agree, the note and the last Total Distance now."""
    spanned = [total for total in totals if total is not None]
    start = last_total if last_total is not None else (spanned[0] if spanned else None)
    end = spanned[-1] if spanned else last_total
    expected = (end - start) / 10 if start is not None and end is not None else 0.0
    ok = abs(expected - distance) < 0.05
    return ok, f", distance stored {distance:.1f} m of {expected:.1f} m", end


def checkpoint(name, state_path, samples, sensors, wait, sigterm):
    rows = stored_rows(samples)
    state = load_state(state_path)
    known = {(row.get("device") or "").upper() for row in rows}
    strangers = sorted(known - set(sensors))
    windows = {}
    for address, (characteristic, ledgers) in sensors.items():
        sent_all, totals = sent_readings(characteristic, ledgers)
        stored_all, distance = stored_readings(characteristic, rows, address)
        first = state.get(address, {"sent": 0, "stored": 0})
        windows[address] = (characteristic, sent_all[first["sent"]:], stored_all[first["stored"]:], len(sent_all),
                            len(stored_all), totals[first["sent"]:], distance)
    if wait and not strangers and any(
            len(stored) < len(sent) and [reading for reading, _ in sent[:len(stored)]] == stored
            for _, sent, stored, _, _, _, _ in windows.values()):
        return 3
    agree = not strangers
    for address, (characteristic, sent, stored, sent_count, stored_count, totals, distance) in windows.items():
        first = state.get(address, {})
        last_total = first.get("total")
        readings = [reading for reading, _ in sent]
        note = ""
        if sigterm is not None:
            wall, grace = sigterm
            unstored = sent[len(stored):]
            ok = readings[:len(stored)] == stored and all(at >= wall - grace for _, at in unstored)
            if unstored:
                note = (f", {len(unstored)} sent from {unstored[0][1] - wall:+.2f} s after SIGTERM on not stored"
                        f" (allowed from {-grace:+.2f} s)")
            lost = sum((collections.Counter(readings[:len(stored)]) - collections.Counter(stored)).values())
        else:
            ok = readings == stored
            lost = sum((collections.Counter(readings) - collections.Counter(stored)).values())
        doubled = sum((collections.Counter(stored) - collections.Counter(readings)).values())
        if distance is not None:
            window_distance = distance - first.get("distance", 0.0)
            distance_ok, distance_text, last_total = distance_check(totals[:len(stored)], last_total, window_distance)
            ok = ok and distance_ok
            note += distance_text
        ok = ok and bool(sent)
        agree = agree and ok
        verdict = "agree" if ok else ("DIFFER" if sent else "DIFFER (nothing sent)")
        print(f"{name} {address}: {LABELS[characteristic]} sent {len(sent)}, stored {len(stored)}, lost {lost}, "
              f"doubled {doubled}{note}: {verdict}")
        if not ok:
            print(f"{name} {address}: sent   {readings}")
            print(f"{name} {address}: stored {stored}")
        state[address] = {"sent": sent_count, "stored": stored_count, "distance": distance or 0.0, "total": last_total}
    for stranger in strangers:
        print(f"{name}: samples stored for {stranger or 'no device'}, which is none of the sensors: DIFFER")
    save_state(state_path, state)
    return 0 if agree else 1


def same(name, first, second):
    def keyed(path):
        return collections.Counter(
            (row["type"], (row.get("device") or "").upper(), row["start"], round(float(row["value"]), 6))
            for row in stored_rows(path))
    a, b = keyed(first), keyed(second)
    only_a, only_b = a - b, b - a
    ok = not only_a and not only_b and sum(a.values()) > 0
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(collections.Counter(key[0] for key in a.elements()).items()))
    print(f"{name}: {sum(a.values())} and {sum(b.values())} samples ({kinds}), {sum(only_a.values())} only in the "
          f"first, {sum(only_b.values())} only in the second: {'same' if ok else 'DIFFER'}")
    for label, rows in (("first", only_a), ("second", only_b)):
        for row in sorted(rows)[:10]:
            print(f"{name}: only in the {label}: {row}")
    return 0 if ok else 1


def main(arguments):
    if len(arguments) >= 1 and arguments[0] == "types":
        # The types to export for these measurements, comma-separated.
        wanted = arguments[1:] or list(STORED_TYPES)
        print(",".join(sorted({kind for characteristic in wanted for kind in STORED_TYPES.get(characteristic, [])})))
        return 0
    if len(arguments) >= 4 and arguments[0] == "base":
        return base(arguments[1], arguments[2], parse_sensors(arguments[3:]))
    if len(arguments) >= 5 and arguments[0] == "checkpoint":
        name, state_path, samples = arguments[1:4]
        rest = arguments[4:]
        wait = "--wait" in rest
        rest = [argument for argument in rest if argument != "--wait"]
        sigterm = None
        if rest and rest[0] == "--sigterm":
            sigterm = (float(rest[1]), float(rest[2]))
            rest = rest[3:]
        return checkpoint(name, state_path, samples, parse_sensors(rest), wait, sigterm)
    if len(arguments) == 4 and arguments[0] == "same":
        return same(*arguments[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
