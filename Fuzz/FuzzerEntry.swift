// libFuzzer's entry point for the one fuzzer binary: `WEARHOUSE_FUZZ_TARGET` picks the target (`gatt`, the default:
// Fuzz/GATTFuzzer.swift; `traces`: Fuzz/TracesFuzzer.swift). One binary, because both targets need the GATT sources
// compiled with the sanitizers, and compiling them once halves the fuzzers' build.

#if canImport(Glibc)
    internal import Glibc
#endif

private enum FuzzTarget {
    case gatt, traces

    static let selected: FuzzTarget = {
        guard let name = getenv("WEARHOUSE_FUZZ_TARGET").map({ String(cString: $0) }), !name.isEmpty else {
            return .gatt
        }
        switch name {
        case "gatt": return .gatt
        case "traces": return .traces
        default:
            let message = Array("WEARHOUSE_FUZZ_TARGET: '\(name)' is not a fuzz target (gatt, traces)\n".utf8)
            _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            exit(64)
        }
    }()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    switch FuzzTarget.selected {
    case .gatt: fuzzGATT(input)
    case .traces: fuzzTraces(input)
    }
    return 0
}
