internal import Foundation
public import GATT
internal import Health
public import Support
internal import Synchronization
public import Traces

/// Records what the service sees into a trace file: a ``GatewayObserver`` (`wearhouse run --record FILE`,
/// `wearhouse record`).
///
/// Every sensor that starts streaming gets a sensor line with its context (Device Information, locations,
/// subject, source, time zone), then every connection change and every notification as it arrived. The file is
/// flushed at least once a second (``run(started:)``, a ``LifecycleService``, flushes quiet periods) and fsynced
/// on ``close()``. A write error stops the recording (the service goes on) and is kept in ``failure``.
///
/// ```swift
/// let recorder = try TraceRecorder(path: "run.trace", recorder: "wearhouse 0.1.0", samples: settings.samples)
/// let service = GatewayService(..., observer: recorder)
/// let outcome = await ServiceLifecycle(log: log).run([recorder, service])
/// try recorder.close()
/// ```
public final class TraceRecorder: GatewayObserver, LifecycleService {
    private struct State: ~Copyable {
        var writer: TraceWriter?
        var failure: TraceError?
        var notifications = 0
    }

    private let state: Mutex<State>
    private let clock: any Support.Clock
    private let stopRequest = StopRequest()
    public let path: String

    /// Opens (or appends to) the trace at `path`.
    ///
    /// - Parameters:
    ///   - recorder: the program and version, for the header.
    ///   - samples: the sample builder's settings, kept in the header so that replay builds the same series.
    ///   - clock: stamps sensor and connection lines (the central's clock: notifications carry their own stamps) and
    ///     times the flushes.
    /// - Throws: ``TraceError`` when the file cannot be opened or is not a trace.
    public init(
        path: String, recorder: String, samples: SampleBuilder.Settings = SampleBuilder.Settings(),
        clock: any Support.Clock = SystemClock()
    ) throws(TraceError) {
        self.path = path
        self.clock = clock
        let now = Timestamp(reading: clock)
        let header = TraceHeader(
            createdWallMicroseconds: now.wallMicroseconds, recorder: recorder, origin: "live",
            seriesWindowMilliseconds: samples.seriesWindow.wholeMilliseconds,
            gapThresholdMilliseconds: samples.gapThreshold.wholeMilliseconds)
        let writer = try TraceWriter(path: path, header: header)
        state = Mutex(State(writer: writer))
    }

    /// Flushes once a second while nothing is appended, until ``requestStop()`` or cancellation (``close()``
    /// is the caller's, after the service stopped).
    public func run(started: @escaping @Sendable () -> Void = {}) async {
        started()
        let clock = self.clock
        await withDiscardingTaskGroup { group in
            group.addTask(operation: {
                while true {
                    do { try await clock.sleep(for: TraceWriter.flushInterval) } catch { return }
                    self.withWriter { writer throws(TraceError) in try writer.flushIfDue() }
                }
            })
            await stopRequest.wait()
            group.cancelAll()
        }
    }

    public func requestStop() {
        stopRequest.request()
    }

    /// Notifications recorded so far.
    public var notifications: Int { state.withLock { $0.notifications } }

    /// The error that stopped the recording, if any.
    public var failure: TraceError? { state.withLock { $0.failure } }

    /// Flushes, fsyncs and closes the file; later observations are ignored.
    ///
    /// - Throws: the write error that stopped the recording, or the one closing hit.
    public func close() throws(TraceError) {
        let result: Result<Void, TraceError> = state.withLock { state in
            if let failure = state.failure { return .failure(failure) }
            guard let writer = state.writer else { return .success(()) }
            state.writer = nil
            do throws(TraceError) {
                try writer.close()
                return .success(())
            } catch {
                state.failure = error
                return .failure(error)
            }
        }
        try result.get()
    }

    // MARK: GatewayObserver

    public func sensorReady(address: String, context: SensorContext, characteristics: [BluetoothUUID]) {
        let sensor = TraceSensor(
            context: context, address: address, characteristics: characteristics, at: Timestamp(reading: clock))
        withWriter { writer throws(TraceError) in try writer.append(.sensor(sensor)) }
    }

    public func connectionChanged(address: String, connected: Bool) {
        let record = TraceRecord.connection(
            TraceConnection(address: address, connected: connected, at: Timestamp(reading: clock)))
        withWriter { writer throws(TraceError) in try writer.append(record) }
    }

    /// Recorded as a disconnection, which is what makes a replay close heartbeat series at the same point.
    public func linkLost(address: String) {
        connectionChanged(address: address, connected: false)
    }

    public func notification(_ notification: GATTNotification) {
        let record = TraceRecord.value(
            TraceValue(
                kind: BluetoothUUID.indicatedCharacteristics.contains(notification.characteristic)
                    ? .indication : .notification,
                address: notification.peripheral.address,
                characteristic: notification.characteristic, bytes: notification.value, at: notification.receivedAt))
        state.withLock { $0.notifications += 1 }
        withWriter { writer throws(TraceError) in try writer.append(record) }
    }

    private func withWriter(_ body: (TraceWriter) throws(TraceError) -> Void) {
        state.withLock { state in
            guard let writer = state.writer else { return }
            do throws(TraceError) {
                try body(writer)
            } catch {
                state.failure = error
                state.writer = nil
                try? writer.close()
            }
        }
    }
}

extension TraceSensor {
    /// The sensor line for a sensor streaming with `context`.
    public init(context: SensorContext, address: String, characteristics: [BluetoothUUID], at: Timestamp?) {
        let device = context.device
        self.init(
            address: address, name: device.name, manufacturer: device.manufacturer, model: device.model,
            serialNumber: device.serialNumber, hardwareRevision: device.hardwareVersion,
            firmwareRevision: device.firmwareVersion, softwareRevision: device.softwareVersion,
            bodySensorLocation: context.bodySensorLocation, sensorLocation: context.sensorLocation,
            reportsWalkingOrRunning: context.reportsWalkingOrRunning,
            subject: SensorSubjects(subject: context.subject, byUserIndex: context.subjectsByUserIndex).text,
            sourceIdentifier: context.source.identifier, sourceVersion: context.source.version,
            timeZone: context.timeZone.identifier, temperatureType: context.temperatureType,
            clockOffsetMilliseconds: context.deviceClock?.offset.wholeMilliseconds,
            clockSetMilliseconds: context.deviceClock?.setAt?.milliseconds, characteristics: characteristics, at: at)
    }
}
