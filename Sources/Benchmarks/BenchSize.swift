/// How big a benchmark run is. `full` is the measurement BENCHMARKS.md keeps; `quick` the small sizes for a ratio
/// on the way (release build, `make bench BENCH_FLAGS=--quick`); `smoke` the smallest sizes, one round, which
/// `make test` runs from the debug build only to show that every scenario and its peers still run: its figures
/// measure nothing.
enum BenchSize: String, Codable, Sendable {
    case full, quick, smoke

    func pick<Value>(full: Value, quick: Value, smoke: Value) -> Value {
        switch self {
        case .full: full
        case .quick: quick
        case .smoke: smoke
        }
    }
}
