public import Health

/// The sink of `wearhouse record`: samples are built (so malformed values are still counted) but not stored.
public struct DiscardingSink: SampleSink {
    public init() {}

    public func write(_ batch: SampleBatch) async throws -> [WriteOutcome] {
        Array(repeating: .duplicate, count: batch.count)
    }
}

/// The registry `wearhouse record` serves from: the enrolled sensors (only those named, when any are), read from
/// the store; statuses are not written back, so a recording does not show in `wearhouse sensors`.
public struct RecordingRegistry: SensorRegistry {
    let base: any SensorRegistry
    let only: Set<String>

    /// `only`: addresses (any case); empty for every enrolled sensor.
    public init(_ base: any SensorRegistry, only: Set<String>) {
        self.base = base
        self.only = Set(only.map { $0.uppercased() })
    }

    public func register(_ sensor: RegisteredSensor) async throws { try await base.register(sensor) }

    public func registeredSensors() async throws -> [RegisteredSensor] {
        let all = try await base.registeredSensors()
        return only.isEmpty ? all : all.filter { only.contains($0.address.uppercased()) }
    }

    public func forgetSensor(_ address: String) async throws -> Bool { try await base.forgetSensor(address) }

    public func updateStatus(_ statuses: [SensorStatus]) async throws {}

    public func sensorStatuses() async throws -> [SensorStatus] { try await base.sensorStatuses() }

    public func registryVersion() async throws -> Int64 { try await base.registryVersion() }
}
