import DBus
import Health

/// `Sources`: HealthKit's source query, which sources and devices wrote a type, as far as the app may read it.
extension HealthBusServer {
    /// `a(sssuxx)`: source, device key (empty: none), device name, count, first start and last end (ms).
    func sources(_ argument: DBusValue, caller: Caller) async throws -> DBusValue {
        let type = try Self.type(argument)
        let summaries = try await store.sources(of: type, as: caller)
        return .array(
            .struct([.string, .string, .string, .uint32, .int64, .int64]),
            summaries.map { summary in
                .struct([
                    .string(summary.provenance.source), .string(summary.provenance.device ?? ""),
                    .string(summary.deviceName ?? ""), .uint32(UInt32(clamping: summary.count)),
                    .int64(summary.first.milliseconds), .int64(summary.last.milliseconds),
                ])
            })
    }
}
