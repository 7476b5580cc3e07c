public import Foundation
internal import GATT
public import Health
public import Traces

/// Feeds trace records into the same ingest path as live data, one step at a time: one ``SampleBuilder`` per
/// sensor (its context rebuilt from the sensor line the way ``GatewayService`` builds it, its own ``Timeline``),
/// ``SampleBuilder/linkLost()`` on a disconnection, ``SampleBuilder/finish()`` at a new session and at the end.
/// ``TraceReplay`` drives it against a ``StoreWriter``; tests and the benchmark may drive it directly.
public struct TraceReplayEngine: Sendable {
    public struct Settings: Sendable {
        /// The source for sensors whose line names none (imported captures): wearhouse and this version.
        public var source: Source
        /// Replaces every sensor's subject (`--subject`).
        public var subject: String?
        /// The sample builder's settings; the header's series window and gap threshold override these.
        public var samples: SampleBuilder.Settings
        /// The time zone for sensors whose line names none.
        public var timeZone: TimeZone
        /// The adapter address notifications are given (it does not reach the samples).
        public var adapter: String

        public init(
            source: Source, subject: String? = nil, samples: SampleBuilder.Settings = SampleBuilder.Settings(),
            timeZone: TimeZone = .current, adapter: String = "00:00:00:00:00:00"
        ) {
            self.source = source
            self.subject = subject
            self.samples = samples
            self.timeZone = timeZone
            self.adapter = adapter
        }
    }

    /// What the replay did.
    public struct Counters: Hashable, Sendable {
        public var notifications = 0
        public var indications = 0
        public var reads = 0
        public var connectionEvents = 0
        public var sessions = 0
        public var sensors = 0
        /// Samples built, by type identifier (`heartbeatSeries` for series).
        public var samplesByType: [String: Int] = [:]
        /// Values that did not decode.
        public var malformed = 0
        /// Values on characteristics the builder does not turn into samples.
        public var ignored = 0
        public var outOfContact = 0
        /// Health-device measurements with nothing to store (``SampleBuilder/Counters/unusable``).
        public var unusable = 0
        /// RR intervals not put into a heartbeat series (``SampleBuilder/Counters/beatsLeftOut``).
        public var beatsLeftOut = 0
        public init() {}

        public var samples: Int { samplesByType.values.reduce(0, +) }
    }

    public let settings: Settings
    private var samples: SampleBuilder.Settings
    /// One builder per sensor of the running session, found by address through `slots` (and `recent` for values,
    /// the common case): builders are mutated in place in the array, never copied out.
    private var builders: [SampleBuilder] = []
    private var slots: [String: Int] = [:]
    /// The first sensors' slots again, by their addresses' bytes (``AddressKeys``): what a value looks up.
    private var recent = AddressKeys()
    /// Counters of builders already finished (earlier sessions).
    private var finished = Counters()
    private var counters = Counters()

    public init(settings: Settings) {
        self.settings = settings
        self.samples = settings.samples
    }

    /// Everything counted so far.
    public var totals: Counters {
        var totals = counters
        totals.malformed = finished.malformed
        totals.ignored = finished.ignored
        totals.outOfContact = finished.outOfContact
        totals.unusable = finished.unusable
        totals.beatsLeftOut = finished.beatsLeftOut
        for builder in builders {
            totals.malformed += builder.counters.malformed
            totals.ignored += builder.counters.ignored
            totals.outOfContact += builder.counters.outOfContact
            totals.unusable += builder.counters.unusable
            totals.beatsLeftOut += builder.counters.beatsLeftOut
        }
        return totals
    }

    /// Applies one record; returns the samples it completed (counted in ``Counters/samplesByType``).
    public mutating func handle(_ record: TraceRecord) -> SampleBuilder.Output {
        var output = SampleBuilder.Output()
        handle(record, into: &output)
        count(output)
        return output
    }

    /// Applies one record, adding the samples it completed to `output` (a batch being filled: each sensor's
    /// streams are extended there). They are counted once handed to ``count(_:)``.
    public mutating func handle(_ record: TraceRecord, into output: inout SampleBuilder.Output) {
        switch record {
        case .header(let header):
            adopt(header)
        case .session(let header):
            // The recorder restarted: so did the service, with new builders.
            counters.sessions += 1
            finish(into: &output)
            adopt(header)
        case .sensor(let sensor):
            let context = context(for: sensor)
            if let index = slots[sensor.address] {
                builders[index].context = context
            } else {
                counters.sensors += 1
                addBuilder(SampleBuilder(context: context, settings: samples), for: sensor.address)
            }
        case .connection(let connection):
            counters.connectionEvents += 1
            guard !connection.connected, let index = slots[connection.address] else { return }
            builders[index].linkLost(into: &output)
        case .value(let value):
            switch value.kind {
            case .read:
                counters.reads += 1
                return
            case .notification: counters.notifications += 1
            case .indication: counters.indications += 1
            }
            let index: Int
            if let found = recent.index(of: value.address) ?? slots[value.address] {
                index = found
            } else {
                counters.sensors += 1
                index = addBuilder(
                    SampleBuilder(context: context(for: TraceSensor(address: value.address)), settings: samples),
                    for: value.address)
            }
            builders[index].add(value.characteristic, value.bytes, receivedAt: value.at, into: &output)
        }
    }

    @discardableResult
    private mutating func addBuilder(_ builder: SampleBuilder, for address: String) -> Int {
        builders.append(builder)
        slots[address] = builders.count - 1
        recent.add(address, index: builders.count - 1)
        return builders.count - 1
    }

    /// Closes every sensor's open heartbeat series (the end of the trace, or of a session).
    public mutating func finish() -> SampleBuilder.Output {
        var output = SampleBuilder.Output()
        finish(into: &output)
        count(output)
        return output
    }

    /// Closes every sensor's open heartbeat series into `output` (see ``count(_:)``).
    public mutating func finish(into output: inout SampleBuilder.Output) {
        for index in slots.sorted(by: { $0.key < $1.key }).map(\.value) {
            builders[index].finish(into: &output)
            finished.malformed += builders[index].counters.malformed
            finished.ignored += builders[index].counters.ignored
            finished.outOfContact += builders[index].counters.outOfContact
            finished.unusable += builders[index].counters.unusable
            finished.beatsLeftOut += builders[index].counters.beatsLeftOut
        }
        builders = []
        slots = [:]
        recent = AddressKeys()
    }

    /// Adds the samples of `output` to ``Counters/samplesByType`` (once per batch filled by
    /// ``handle(_:into:)``).
    public mutating func count(_ output: SampleBuilder.Output) {
        for stream in output.quantities {
            counters.samplesByType[stream.type.identifier, default: 0] += stream.count
        }
        if !output.heartbeats.isEmpty {
            counters.samplesByType[HealthType.heartbeatSeries.identifier, default: 0] += output.heartbeats.count
        }
    }

    private mutating func adopt(_ header: TraceHeader) {
        samples = settings.samples
        if let window = header.seriesWindowMilliseconds, window > 0 { samples.seriesWindow = .milliseconds(window) }
        if let gap = header.gapThresholdMilliseconds, gap > 0 { samples.gapThreshold = .milliseconds(gap) }
    }

    /// The context a sensor line describes, built as the service builds it when the sensor starts streaming.
    public func context(for sensor: TraceSensor) -> SensorContext {
        var metadata = SensorMetadata()
        metadata.manufacturer = sensor.manufacturer
        metadata.model = sensor.model
        metadata.serialNumber = sensor.serialNumber
        metadata.hardwareRevision = sensor.hardwareRevision
        metadata.firmwareRevision = sensor.firmwareRevision
        metadata.softwareRevision = sensor.softwareRevision
        let source =
            sensor.sourceIdentifier.map { Source(identifier: $0, version: sensor.sourceVersion) } ?? settings.source
        // A recorded mapping of a multi-user device's users applies unless --subject replaces every subject.
        let subjects = settings.subject.map { SensorSubjects(subject: $0) } ?? SensorSubjects(sensor.subject)
        var context = SensorContext(
            source: source,
            device: metadata.device(name: sensor.label ?? sensor.name, address: sensor.address, fallback: nil),
            subject: subjects.subject, bodySensorLocation: sensor.bodySensorLocation,
            sensorLocation: sensor.sensorLocation, reportsWalkingOrRunning: sensor.reportsWalkingOrRunning,
            timeZone: sensor.timeZone.flatMap(TimeZone.init(identifier:)) ?? settings.timeZone)
        context.subjectsByUserIndex = subjects.byUserIndex
        context.temperatureType = sensor.temperatureType
        context.characteristics = Set(sensor.characteristics)
        // The line's values are range-checked by the trace reader (Sources/Traces/TraceLineCodec.swift).
        if let offset = sensor.clockOffsetMilliseconds {
            context.deviceClock = DeviceClockCorrection(
                offset: .milliseconds(offset), setAt: sensor.clockSetMilliseconds.map(Instant.init(milliseconds:)))
        }
        return context
    }
}

/// The slots of a session's first ``capacity`` sensors by their addresses' bytes: an address of fewer than 24 bytes
/// is three words (its bytes, then its length in the last byte), compared as integers. A dictionary lookup hashed
/// the address for every value, and a miss of the last sensor compared two strings: together a tenth of building a
/// replay's samples. Further sensors are found through the dictionary only.
struct AddressKeys {
    static let capacity = 32
    private typealias Key = (UInt64, UInt64, UInt64)
    private var keys: [Key] = []
    private var indices: [Int] = []

    private static func key(_ address: String) -> Key? {
        address.utf8.withContiguousStorageIfAvailable { bytes -> Key? in
            guard bytes.count < 24 else { return nil }
            var key: Key = (0, 0, 0)
            withUnsafeMutableBytes(of: &key) { words in
                words.copyMemory(from: UnsafeRawBufferPointer(bytes))
                words[23] = UInt8(bytes.count)
            }
            return key
        } ?? nil
    }

    /// The slot of `address`, when it is one of the first sensors'.
    func index(of address: String) -> Int? {
        guard !keys.isEmpty, let key = Self.key(address) else { return nil }
        for (position, known) in keys.enumerated() where known == key { return indices[position] }
        return nil
    }

    mutating func add(_ address: String, index: Int) {
        guard keys.count < Self.capacity, let key = Self.key(address) else { return }
        keys.append(key)
        indices.append(index)
    }
}
