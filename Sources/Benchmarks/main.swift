// The benchmark harness behind `make bench`. Built in release mode; not part of the product.
//
//   wearhouse-bench [--quick | --smoke] [--out DIR] [SCENARIO...]
//   wearhouse-bench apple-health-export MEGABYTES DIR
//
// The second form only writes the apple-health scenario's generated export of about MEGABYTES (DIR/export.xml
// and DIR/workout-routes/), for measuring and profiling an import by hand (BENCHMARKS.md, "apple-health").
//
// `--smoke` (the smallest sizes, one round) is what `make test` runs from the debug build, to show that every
// scenario and its peers still run; its figures measure nothing (BenchSize.swift).
//
// Every scenario runs its peers side by side in the same process or the same minute, after a warm-up, and
// reports the median of several runs and the ratio against each peer. Results go to stdout as a table and to
// DIR/<scenario>.json (default .bench/). BENCHMARKS.md explains the method and keeps the latest numbers.
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
let size: BenchSize =
    arguments.contains("--smoke") ? .smoke : arguments.contains("--quick") ? .quick : .full
arguments.removeAll { $0 == "--quick" || $0 == "--smoke" }
var outputDirectory = size == .smoke ? ".bench/smoke" : ".bench"
if let index = arguments.firstIndex(of: "--out"), index + 1 < arguments.count {
    outputDirectory = arguments[index + 1]
    arguments.removeSubrange(index...(index + 1))
}

if arguments.first == "apple-health-export" {
    guard arguments.count == 3, let megabytes = Int64(arguments[1]), megabytes > 0 else {
        FileHandle.standardError.write(Data("Usage: Benchmarks apple-health-export MEGABYTES DIR\n".utf8))
        exit(64)
    }
    do {
        print(try AppleHealthScenario.writeExport(megabytes: megabytes, to: arguments[2]))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
        exit(70)
    }
}

let scenarios: [String: @Sendable (BenchSize) async throws -> BenchReport] = [
    "apple-health": { try await AppleHealthScenario.run(size: $0) },
    "decode": { try DecodeScenario.run(size: $0) },
    "export": { try await ExportScenario.run(size: $0) },
    "import": { try await ImportScenario.run(size: $0) },
    "ingest": { try await IngestScenario.run(size: $0) },
    "merged": { try await MergedScenario.run(size: $0) },
    "postgres": { try await PostgresScenario.run(size: $0) },
    "postgres-import": { try await PostgresImportScenario.run(size: $0) },
    "query": { try await QueryScenario.run(size: $0) },
    "replay": { try await ReplayScenario.run(size: $0) },
    "replay-rejects": { try await ReplayRejectsScenario.run(size: $0) },
    "service": { try await ServiceScenario.run(size: $0) },
    "storage": { try await StorageScenario.run(size: $0) },
    "web": { try await WebScenario.run(size: $0) },
]

#if DEBUG
    if size != .smoke {
        FileHandle.standardError.write(Data("Note: a debug build; these figures measure nothing (make bench).\n".utf8))
    }
#endif

let chosen = arguments.isEmpty ? scenarios.keys.sorted() : arguments
for name in chosen {
    guard let scenario = scenarios[name] else {
        FileHandle.standardError.write(
            Data("Error: unknown scenario '\(name)'; known: \(scenarios.keys.sorted().joined(separator: ", "))\n".utf8))
        exit(64)
    }
    do {
        let report = try await scenario(size)
        print(report.table)
        try report.write(to: outputDirectory)
    } catch {
        FileHandle.standardError.write(Data("Error: scenario \(name) failed: \(error)\n".utf8))
        exit(70)
    }
}
