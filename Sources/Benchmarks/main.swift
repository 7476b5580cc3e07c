// The benchmark harness behind `make bench`. Built in release mode; not part of the product.
//
//   wearhouse-bench [--quick] [--out DIR] [SCENARIO...]
//
// Every scenario runs its peers side by side in the same process or the same minute, after a warm-up, and
// reports the median of several runs and the ratio against each peer. Results go to stdout as a table and to
// DIR/<scenario>.json (default .bench/). BENCHMARKS.md explains the method and keeps the latest numbers.
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
let quick = arguments.contains("--quick")
arguments.removeAll { $0 == "--quick" }
var outputDirectory = ".bench"
if let index = arguments.firstIndex(of: "--out"), index + 1 < arguments.count {
    outputDirectory = arguments[index + 1]
    arguments.removeSubrange(index...(index + 1))
}

let scenarios: [String: @Sendable (Bool) async throws -> BenchReport] = [
    "decode": { try DecodeScenario.run(quick: $0) },
    "ingest": { try await IngestScenario.run(quick: $0) },
    "postgres": { try await PostgresScenario.run(quick: $0) },
    "query": { try await QueryScenario.run(quick: $0) },
    "replay": { try await ReplayScenario.run(quick: $0) },
    "service": { try await ServiceScenario.run(quick: $0) },
    "storage": { try await StorageScenario.run(quick: $0) },
]

let chosen = arguments.isEmpty ? scenarios.keys.sorted() : arguments
for name in chosen {
    guard let scenario = scenarios[name] else {
        FileHandle.standardError.write(
            Data("Error: unknown scenario '\(name)'; known: \(scenarios.keys.sorted().joined(separator: ", "))\n".utf8))
        exit(64)
    }
    do {
        let report = try await scenario(quick)
        print(report.table)
        try report.write(to: outputDirectory)
    } catch {
        FileHandle.standardError.write(Data("Error: scenario \(name) failed: \(error)\n".utf8))
        exit(70)
    }
}
