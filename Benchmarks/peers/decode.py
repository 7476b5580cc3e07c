#!/usr/bin/python3
"""Peer for the `decode` benchmark: what a typical bleak + struct script does per notification.

Usage: decode.py PAYLOADS COUNT RUNS. PAYLOADS has lines "hr <hex>" / "rsc <hex>" (the same payloads the Swift
harness decodes). Prints {"hr": [rate, ...], "rsc": [rate, ...]} in decodes per second, one warm-up run excluded.
"""
import json
import struct
import sys
import time


def decode_hr(data):
    flags = data[0]
    if flags & 0x01:
        hr = struct.unpack_from("<H", data, 1)[0]
        offset = 3
    else:
        hr = data[1]
        offset = 2
    contact = (flags >> 1) & 3
    energy = None
    if flags & 0x08:
        energy = struct.unpack_from("<H", data, offset)[0]
        offset += 2
    rr = []
    if flags & 0x10:
        n = (len(data) - offset) // 2
        rr = list(struct.unpack_from("<%dH" % n, data, offset))
    return hr, contact, energy, rr


def decode_rsc(data):
    flags = data[0]
    speed, cadence = struct.unpack_from("<HB", data, 1)
    offset = 4
    stride = distance = None
    if flags & 0x01:
        stride = struct.unpack_from("<H", data, offset)[0]
        offset += 2
    if flags & 0x02:
        distance = struct.unpack_from("<I", data, offset)[0]
    return speed / 256, cadence, stride, distance, bool(flags & 0x04)


def rate(decoder, payloads, count):
    n = len(payloads)
    start = time.perf_counter()
    for i in range(count):
        decoder(payloads[i % n])
    return count / (time.perf_counter() - start)


def main():
    path, count, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    hr, rsc = [], []
    with open(path) as f:
        for line in f:
            kind, hexvalue = line.split()
            (hr if kind == "hr" else rsc).append(bytes.fromhex(hexvalue))
    results = {}
    for name, decoder, payloads in (("hr", decode_hr, hr), ("rsc", decode_rsc, rsc)):
        rate(decoder, payloads, count // 4)  # warm-up
        results[name] = [rate(decoder, payloads, count) for _ in range(runs)]
    print(json.dumps(results))


main()
