#!/usr/bin/python3
"""Stored equals sent, sensor by sensor: the heart rates the simulated sensors sent (the peripheral hosts' --sent
ledgers, JSON lines) against those the gateway stored (`wearhouse samples --type heartRate --format json`, JSON
lines, whose "device" is the sensor's address): the same heart rates in the same order, none lost, none doubled.

    compare.py base STATE SAMPLES ADDRESS=LEDGER[,LEDGER...] ...
        records how much each sensor had sent and stored so far: the next checkpoint compares what comes after.
    compare.py checkpoint NAME STATE SAMPLES [--wait] [--sigterm WALL GRACE] ADDRESS=LEDGER[,LEDGER...] ...
        compares each sensor's window since the last base or checkpoint and makes the counts of now the next base
        (whatever the verdict, so that one failure does not spill into the next checkpoint). Exit 0 when every
        sensor agrees, 1 when one differs; with --wait, 3 (and nothing recorded) while some sensor's stored heart
        rates are still a strict beginning of what it sent: the caller reads the store again. With --sigterm, the
        gateway was stopped at WALL (seconds since 1970) while the sensors sent: what it stored must be a
        beginning of what was sent, and only values sent later than GRACE seconds before WALL may be missing.
    compare.py same NAME SAMPLES_A SAMPLES_B
        the same heart rates (device, start, value) in both, e.g. the live store and a replay of its trace.

A sensor restarted mid-run has two ledgers for one address (comma-separated, in order).
"""
import collections
import json
import sys


def sent_heart_rates(paths):
    """[(heart rate, wall time)] from ledgers, in order."""
    rates = []
    for path in paths:
        with open(path) as ledger:
            for line in ledger:
                if not line.strip():
                    continue
                entry = json.loads(line)
                if entry["characteristic"] != "2a37":
                    continue
                value = bytes.fromhex(entry["value"])
                # Heart Rate Measurement: flags bit 0 says whether the rate is one byte or two (little-endian).
                rate = value[1] | (value[2] << 8) if value[0] & 1 else value[1]
                rates.append((rate, entry.get("wall", 0.0)))
    return rates


def stored_rows(path):
    with open(path) as samples:
        rows = [json.loads(line) for line in samples if line.strip()]
    rows.sort(key=lambda row: (row.get("device") or "", row["start"]))
    return rows


def stored_heart_rates(rows, address):
    return [round(row["value"]) for row in rows if (row.get("device") or "").upper() == address.upper()]


def parse_sensors(arguments):
    sensors = {}
    for argument in arguments:
        address, _, ledgers = argument.partition("=")
        if not address or not ledgers:
            raise SystemExit(f"compare.py: a sensor is ADDRESS=LEDGER[,LEDGER...], not {argument!r}")
        sensors[address.upper()] = ledgers.split(",")
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
    state = {address: {"sent": len(sent_heart_rates(ledgers)), "stored": len(stored_heart_rates(rows, address))}
             for address, ledgers in sensors.items()}
    save_state(state_path, state)
    return 0


def checkpoint(name, state_path, samples, sensors, wait, sigterm):
    rows = stored_rows(samples)
    state = load_state(state_path)
    known = {(row.get("device") or "").upper() for row in rows}
    strangers = sorted(known - set(sensors))
    windows = {}
    for address, ledgers in sensors.items():
        sent_all = sent_heart_rates(ledgers)
        stored_all = stored_heart_rates(rows, address)
        first = state.get(address, {"sent": 0, "stored": 0})
        windows[address] = (sent_all[first["sent"]:], stored_all[first["stored"]:], len(sent_all), len(stored_all))
    if wait and not strangers and any(
            len(stored) < len(sent) and [rate for rate, _ in sent[:len(stored)]] == stored
            for sent, stored, _, _ in windows.values()):
        return 3
    agree = not strangers
    for address, (sent, stored, sent_count, stored_count) in windows.items():
        rates = [rate for rate, _ in sent]
        note = ""
        if sigterm is not None:
            wall, grace = sigterm
            unstored = sent[len(stored):]
            ok = rates[:len(stored)] == stored and all(at >= wall - grace for _, at in unstored)
            if unstored:
                note = (f", {len(unstored)} sent from {unstored[0][1] - wall:+.2f} s after SIGTERM on not stored"
                        f" (allowed from {-grace:+.2f} s)")
            lost = sum((collections.Counter(rates[:len(stored)]) - collections.Counter(stored)).values())
        else:
            ok = rates == stored
            lost = sum((collections.Counter(rates) - collections.Counter(stored)).values())
        doubled = sum((collections.Counter(stored) - collections.Counter(rates)).values())
        ok = ok and bool(sent)
        agree = agree and ok
        verdict = "agree" if ok else ("DIFFER" if sent else "DIFFER (nothing sent)")
        print(f"{name} {address}: sent {len(sent)}, stored {len(stored)}, lost {lost}, doubled {doubled}{note}: "
              f"{verdict}")
        if not ok:
            print(f"{name} {address}: sent   {rates}")
            print(f"{name} {address}: stored {stored}")
        state[address] = {"sent": sent_count, "stored": stored_count}
    for stranger in strangers:
        print(f"{name}: heart rates stored for {stranger or 'no device'}, which is none of the sensors: DIFFER")
    save_state(state_path, state)
    return 0 if agree else 1


def same(name, first, second):
    def keyed(path):
        return collections.Counter(
            ((row.get("device") or "").upper(), row["start"], round(row["value"])) for row in stored_rows(path))
    a, b = keyed(first), keyed(second)
    only_a, only_b = a - b, b - a
    ok = not only_a and not only_b and sum(a.values()) > 0
    print(f"{name}: {sum(a.values())} and {sum(b.values())} heart rates, {sum(only_a.values())} only in the first, "
          f"{sum(only_b.values())} only in the second: {'same' if ok else 'DIFFER'}")
    for label, rows in (("first", only_a), ("second", only_b)):
        for row in sorted(rows)[:10]:
            print(f"{name}: only in the {label}: {row}")
    return 0 if ok else 1


def main(arguments):
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
