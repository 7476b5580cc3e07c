#!/usr/bin/python3
"""Compares what a simulated heart-rate sensor sent (the peripheral host's --sent ledgers, JSON lines) with what
the gateway stored (`wearhouse samples --type heartRate --format json`, JSON lines): the same heart rates in the
same order, none lost, none doubled. Prints one line; exit 0 when they agree.

usage: compare.py NAME SKIP_SENT SKIP_STORED SAMPLES.jsonl LEDGER.jsonl [LEDGER.jsonl ...]
(the first SKIP_SENT heart rates of the ledgers and the SKIP_STORED oldest stored ones belong to earlier
scenarios and are left out)
"""
import collections
import json
import sys


def sent_heart_rates(paths):
    rates = []
    for path in paths:
        with open(path) as ledger:
            for line in ledger:
                entry = json.loads(line)
                if entry["characteristic"] != "2a37":
                    continue
                value = bytes.fromhex(entry["value"])
                # Heart Rate Measurement: flags bit 0 says whether the rate is one byte or two (little-endian).
                rates.append(value[1] | (value[2] << 8) if value[0] & 1 else value[1])
    return rates


def stored_heart_rates(path):
    with open(path) as samples:
        rows = [json.loads(line) for line in samples if line.strip()]
    rows.sort(key=lambda row: row["start"])
    return [round(row["value"]) for row in rows]


def main():
    name, skip_sent, skip_stored, samples, ledgers = (
        sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:])
    sent = sent_heart_rates(ledgers)[skip_sent:]
    stored = stored_heart_rates(samples)[skip_stored:]
    missing = collections.Counter(sent) - collections.Counter(stored)
    extra = collections.Counter(stored) - collections.Counter(sent)
    lost, doubled = sum(missing.values()), sum(extra.values())
    verdict = "agree" if sent == stored and sent else "DIFFER"
    print(f"{name}: sent {len(sent)}, stored {len(stored)}, lost {lost}, doubled {doubled}: {verdict}")
    if verdict != "agree":
        print(f"{name}: sent   {sent}")
        print(f"{name}: stored {stored}")
    return 0 if verdict == "agree" else 1


if __name__ == "__main__":
    sys.exit(main())
