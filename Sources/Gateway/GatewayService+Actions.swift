internal import Foundation
internal import GATT
internal import Health
internal import Support

/// What the sessions' state machines ask for, carried out: connects, subscriptions (with the sensor's
/// metadata), disconnects, cache removal, closing heartbeat series; and the context samples are tagged with.
/// R-numbers are the requirements of `docs/bluez.md`.
///
/// An action that waits on bluetoothd or the writer is a ``Job``: ``perform(_:for:)`` queues it, a child task of
/// ``run()`` does it (``runJobs(_:)``), and its result comes back to the actor as an event.
extension GatewayService {
    /// Work for a child task of ``run()``.
    enum Job: Sendable {
        case connect(address: String, PeripheralID, timeout: Duration)
        case subscribe(address: String, PeripheralID, RegisteredSensor, NotifyMode)
        case disconnect(PeripheralID)
        case remove(PeripheralID)
        case submit(SampleBatch)
        case requestGlucoseRecords(GlucoseTransferRequest)
    }

    /// Queues `job` for ``runJobs(_:)``; outside ``run()`` (or once its actions ended) it is dropped.
    func enqueue(_ job: Job) {
        guard let jobs else { return }
        jobsInFlight += 1
        if case .connect(let address, _, _) = job { connecting.insert(address) }
        jobs.yield(job)
    }

    /// Runs each queued job as a child task until the queue is finished (at stop), then cancels the ones still
    /// running and waits for them: a cancelled Connect gives up before its turn, a cancelled subscription stops
    /// starting notifications, a submit is written all the same.
    nonisolated func runJobs(_ queue: AsyncStream<Job>) async {
        await withDiscardingTaskGroup { group in
            for await job in queue {
                group.addTask(operation: { await self.execute(job) })
            }
            group.cancelAll()
        }
    }

    nonisolated func execute(_ job: Job) async {
        switch job {
        case .connect(let address, let id, let timeout):
            var failure: CentralError?
            do throws(CentralError) {
                try await central.connect(id, timeout: timeout)
            } catch {
                failure = error
            }
            await connected(failure, address: address)
        case .subscribe(let address, let id, let registered, let mode):
            let result = await Self.subscribe(id, registered: registered, mode: mode, central: central)
            await subscribed(result, address: address)
        case .disconnect(let id):
            try? await central.disconnect(id)
        case .remove(let id):
            try? await central.remove(id)
        case .submit(let batch):
            await writer.submit(batch)
        case .requestGlucoseRecords(let request):
            await requestGlucoseRecords(request)
        }
        await jobFinished()
    }

    func jobFinished() {
        jobsInFlight -= 1
        checkSettled()
    }

    /// At stop: a Connect still pending in bluetoothd is cancelled with Disconnect (R7), so that the child waiting
    /// for its reply ends and the sensor is not connected after the service stopped.
    func cancelPendingConnects() async {
        for address in connecting.sorted() {
            guard let id = sensors[address]?.peripheral(defaultAdapter: defaultAdapter) else { continue }
            try? await central.disconnect(id)
        }
    }

    func deliver(_ event: SensorSessionState.Event, to address: String) {
        guard var runtime = sensors[address] else { return }
        let before = runtime.state.phase
        let actions = runtime.state.handle(event, now: now)
        sensors[address] = runtime
        if runtime.state.phase != before {
            log.debug(
                "sensor \(address: address): \(before.name) -> \(runtime.state.phase.name)", fields: [.sensor(address)])
        }
        perform(actions, for: address)
    }

    func perform(_ actions: [SensorSessionState.Action], for address: String) {
        for action in actions {
            guard let runtime = sensors[address] else { return }
            let id = runtime.peripheral(defaultAdapter: defaultAdapter)
            switch action {
            case .connect:
                guard let id else {
                    deliver(.connectFailed(.unavailable), to: address)
                    continue
                }
                enqueue(.connect(address: address, id, timeout: settings.connectTimeout))
            case .subscribe:
                guard let id else { continue }
                let registered = runtime.registered
                // AcquireNotify when the sensor was enrolled for it or the service is configured for it (R11).
                let mode: NotifyMode = registered.notifyMode == .acquired ? .acquired : settings.notifyMode
                enqueue(.subscribe(address: address, id, registered, mode))
            case .disconnect:
                guard let id else { continue }
                enqueue(.disconnect(id))
            case .removeDevice:
                guard let id else { continue }
                log.notice("sensor \(address: address): layout changed; removing its cache", fields: [.sensor(address)])
                enqueue(.remove(id))
            case .linkLost:
                observer?.linkLost(address: address)
                sensors[address]?.subscribed = []
                guard var builder = sensors[address]?.builder else { continue }
                let output = builder.linkLost()
                sensors[address]?.builder = builder
                if !output.isEmpty {
                    sensors[address]?.samples += Int64(output.count)
                    enqueue(.submit(output))
                }
            case .release:
                break  // stop() releases inline, so that it finishes before the process ends
            }
        }
    }

    /// A Connect's reply (`failure` when it failed). After the stop began, a success only marks the sensor to be
    /// disconnected by ``release(_:)``.
    func connected(_ failure: CentralError?, address: String) {
        connecting.remove(address)
        if stopping {
            if failure == nil { connectedWhileStopping.insert(address) }
            return
        }
        guard let failure else {
            deliver(.connectSucceeded, to: address)
            return
        }
        log.info("sensor \(address: address): \(failure)", fields: [.sensor(address)])
        deliver(.connectFailed(failure.kind), to: address)
    }

    /// Stops one session (R13): StopNotify on what it subscribed, and Disconnect when connected (or when a Connect
    /// was still pending or succeeded during the stop).
    func release(_ address: String) async {
        guard var runtime = sensors[address] else { return }
        let actions = runtime.state.handle(.stop, now: now)
        sensors[address] = runtime
        let connected = actions.contains(.release) || connectedWhileStopping.remove(address) != nil
        guard let id = runtime.peripheral(defaultAdapter: defaultAdapter) else { return }
        for characteristic in runtime.subscribed {
            try? await central.stopNotifications(characteristic, of: id)
        }
        sensors[address]?.subscribed = []
        if connected { try? await central.disconnect(id) }
    }

    /// Closes what the builder still holds (the open heartbeat series) and queues it.
    func finish(_ address: String) async {
        guard var builder = sensors[address]?.builder else { return }
        let output = builder.finish()
        sensors[address]?.builder = builder
        sensors[address]?.samples += Int64(output.count)
        await writer.submit(output)
    }

    // MARK: Subscribing

    struct Subscription: Sendable {
        var subscribed: [CharacteristicInfo] = []
        var metadata = SensorMetadata()
        var failure: CentralError?
        var servicesChanged = false
    }

    /// Looks the characteristics up by UUID (R12), reads the sensor's metadata, and starts notifications on
    /// every measurement characteristic (R11).
    static func subscribe(
        _ id: PeripheralID, registered: RegisteredSensor, mode: NotifyMode, central: any Central
    ) async -> Subscription {
        var result = Subscription()
        let characteristics: [CharacteristicInfo]
        do throws(CentralError) {
            characteristics = try await central.characteristics(of: id)
        } catch {
            result.failure = error
            return result
        }
        result.metadata = await SensorMetadata.read(from: id, characteristics: characteristics, central: central)
        let found = characteristics.filter {
            Self.measurements.contains($0.uuid) && !$0.properties.isDisjoint(with: [.notify, .indicate])
        }
        guard !found.isEmpty else {
            result.servicesChanged = true
            result.failure = CentralError(
                .other, operation: "Characteristics", detail: "no measurement characteristic after resolving services")
            return result
        }
        for characteristic in found {
            // Stopping: what was started so far is returned, for StopNotify.
            guard !Task.isCancelled else {
                result.failure = CentralError(.unavailable, operation: "StartNotify", detail: "the service is stopping")
                return result
            }
            do throws(CentralError) {
                try await central.startNotifications(characteristic, of: id, mode: mode)
                result.subscribed.append(characteristic)
            } catch {
                result.failure = error
                return result
            }
        }
        return result
    }

    func subscribed(_ result: Subscription, address: String) {
        guard var runtime = sensors[address] else { return }
        if stopping {
            // Released by the stop: StopNotify on what was started.
            sensors[address]?.subscribed = result.subscribed
            return
        }
        if let failure = result.failure {
            log.info("sensor \(address: address): \(failure)", fields: [.sensor(address)])
            deliver(.subscribeFailed(failure.kind, servicesChanged: result.servicesChanged), to: address)
            return
        }
        let metadata = result.metadata
        if let refusal = metadata.refusal {
            log.warning(
                "sensor \(address: address) refuses reads (\(refusal)); pair it again with 'wearhouse pair'",
                fields: [.sensor(address)])
        }
        runtime.subscribed = result.subscribed
        runtime.battery = metadata.batteryPercent ?? runtime.battery
        var context = runtime.builder.context
        context.device = metadata.device(
            name: runtime.registered.label ?? runtime.registered.name, address: address,
            fallback: runtime.registered.device)
        if Self.bodyLocation(runtime.registered.location) == nil, let read = metadata.bodySensorLocation {
            context.bodySensorLocation = read
        }
        if Self.rscLocation(runtime.registered.location) == nil, let read = metadata.sensorLocation {
            context.sensorLocation = read
        }
        context.reportsWalkingOrRunning = metadata.reportsWalkingOrRunning
        context.temperatureType = metadata.temperatureType ?? context.temperatureType
        runtime.builder.context = context
        sensors[address] = runtime
        observer?.sensorReady(address: address, context: context, characteristics: result.subscribed.map(\.uuid))
        log.info(
            "sensor \(address: address) streaming (\(result.subscribed.count) characteristic(s))",
            fields: [.sensor(address)])
        deliver(.subscribed, to: address)
        let id = runtime.peripheral(defaultAdapter: defaultAdapter)
        if let glucose = glucoseTransfer(address: address, id: id, result) { enqueue(.requestGlucoseRecords(glucose)) }
    }

    // MARK: Context

    func context(for sensor: RegisteredSensor, updating previous: SensorContext?) -> SensorContext {
        var context =
            previous
            ?? SensorContext(
                source: settings.source,
                device: Device(
                    name: sensor.label ?? sensor.name, manufacturer: sensor.device?.manufacturer,
                    model: sensor.device?.model, hardwareVersion: sensor.device?.hardwareVersion,
                    firmwareVersion: sensor.device?.firmwareVersion, softwareVersion: sensor.device?.softwareVersion,
                    serialNumber: sensor.device?.serialNumber, localIdentifier: sensor.address),
                timeZone: settings.timeZone)
        let subjects = SensorSubjects(sensor.subject)
        context.subject = subjects.subject
        context.subjectsByUserIndex = subjects.byUserIndex
        if let location = Self.bodyLocation(sensor.location) { context.bodySensorLocation = location }
        if let location = Self.rscLocation(sensor.location) { context.sensorLocation = location }
        return context
    }

    /// A configured location as Body Sensor Location (chest, wrist, finger, hand, ear lobe, foot, other).
    static func bodyLocation(_ name: String?) -> UInt8? {
        guard let name else { return nil }
        return BodySensorLocation(name: name.replacingOccurrences(of: "-", with: "_"))?.rawValue
    }

    /// A configured location as RSC Sensor Location (in shoe, top of shoe, hip, ...).
    static func rscLocation(_ name: String?) -> UInt8? {
        guard let name else { return nil }
        return SensorLocation(name: name.replacingOccurrences(of: "-", with: "_"))?.rawValue
    }

    static func seed(_ address: String) -> UInt64 {
        address.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }
}
