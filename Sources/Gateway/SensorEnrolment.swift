public import GATT
public import Health
public import Support

/// `wearhouse pair`: finds a sensor, connects, pairs only when it needs it (or when asked), trusts it
/// (`docs/bluez.md`, R15), reads its metadata and records it in the registry with who wears it. The running
/// service picks it up from the registry; enrolment leaves the sensor disconnected unless it was connected before.
public struct SensorEnrolment: Sendable {
    public struct Request: Sendable {
        /// An address (`AA:BB:CC:DD:EE:FF`) or an advertised name.
        public var target: String
        public var subject: String?
        public var label: String?
        /// A location name (`chest`, `wrist`, `in-shoe`, ...) that overrides what the sensor reports.
        public var location: String?
        public var adapter: AdapterAddress?
        /// Pair even when the sensor serves its data without.
        public var forcePairing: Bool
        public var notifyMode: NotifyMode
        /// For finding, connecting and pairing, each.
        public var timeout: Duration

        public init(
            target: String, subject: String? = nil, label: String? = nil, location: String? = nil,
            adapter: AdapterAddress? = nil, forcePairing: Bool = false,
            notifyMode: NotifyMode = .properties,
            timeout: Duration = .seconds(30)
        ) {
            self.target = target
            self.subject = subject
            self.label = label
            self.location = location
            self.adapter = adapter
            self.forcePairing = forcePairing
            self.notifyMode = notifyMode
            self.timeout = timeout
        }
    }

    public struct Result: Sendable {
        public var sensor: RegisteredSensor
        public var metadata: SensorMetadata
        /// Whether this enrolment paired (bonded) the sensor.
        public var pairedNow: Bool
    }

    /// Why an enrolment failed, for a person.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var message: String
        public var underlying: CentralError?
        public var description: String { message }
    }

    let central: any Central
    let registry: any SensorRegistry
    let clock: any Support.Clock

    /// `clock` times the waits and stamps the enrolment.
    public init(central: any Central, registry: any SensorRegistry, clock: any Support.Clock = SystemClock()) {
        self.central = central
        self.registry = registry
        self.clock = clock
    }

    /// Runs the enrolment. The central's events are collected by a child task while it runs.
    ///
    /// - Throws: ``Failure`` naming the step that failed (not found, connect, pairing, no measurement).
    public func enrol(_ request: Request) async throws -> Result {
        if let location = request.location, Self.locationValue(location) == nil {
            throw Failure(
                message: "unknown location '\(location)' (chest, wrist, finger, hand, ear-lobe, foot, other, "
                    + "in-shoe, top-of-shoe, hip, ...)")
        }
        if let subject = request.subject, case .failure(let error) = SensorSubjects.parse(subject) {
            throw Failure(
                message: "bad --subject: \(error) (give a subject, or user-index=subject pairs: 1=alice,2=bob)")
        }
        let waiter = EventWaiter(central.events(), clock: clock)
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
            group.addTask(operation: { await waiter.collect() })
            defer { group.cancelAll() }
            return try await enrol(request, waiter: waiter)
        }
    }

    private func enrol(_ request: Request, waiter: EventWaiter) async throws -> Result {
        var (info, wasKnown) = try await find(request, waiter: waiter)
        let id = info.id
        let wasConnected = info.connected
        if !info.connected || !info.servicesResolved {
            do {
                try await connect(id, timeout: request.timeout, waiter: waiter)
            } catch let failure as Failure where wasKnown && failure.underlying?.kind == .deviceMissing {
                // bluetoothd drops a device it only discovered `TemporaryTimeout` (30 s) after it last saw it: a
                // sensor found by an earlier scan can go between the lookup and Connect (seen in the BlueZ VM,
                // docs/bluez-vm.md). It is looked for again by discovery, once.
                (info, _) = try await find(request, waiter: waiter, amongKnown: false)
                try await connect(id, timeout: request.timeout, waiter: waiter)
            }
        }
        var characteristics = try await step("list the characteristics of") { () throws(CentralError) in
            try await central.characteristics(of: id)
        }
        var metadata = await SensorMetadata.read(from: id, characteristics: characteristics, central: central)
        var pairedNow = false
        if request.forcePairing || (metadata.refusal != nil && !info.paired) {
            try await step("pair with") { () throws(CentralError) in
                try await central.pair(id, timeout: request.timeout)
            }
            pairedNow = true
            characteristics = (try? await central.characteristics(of: id)) ?? characteristics
            metadata = await SensorMetadata.read(from: id, characteristics: characteristics, central: central)
        }
        if let refusal = metadata.refusal {
            throw Failure(
                message: "\(id.address) refuses to be read even after pairing: \(refusal)", underlying: refusal)
        }
        let measurements = characteristics.filter { GatewayService.measurements.contains($0.uuid) }
        guard !measurements.isEmpty else {
            throw Failure(
                message:
                    "\(id.address) has no heart-rate, running speed, step counter, InfiniTime step, weight, body "
                    + "composition, blood pressure, temperature or pulse oximeter characteristic")
        }
        try await step("trust") { () throws(CentralError) in try await central.setTrusted(id, true) }
        // Enrolling again keeps what was said before (wearer, label, location) unless the request says otherwise.
        let before: RegisteredSensor?
        do {
            before = try await registry.registeredSensors().first { $0.address == id.address }
        } catch {
            throw Failure(message: "cannot read \(id.address) from the store: \(error)")
        }
        let sensor = RegisteredSensor(
            address: id.address, adapter: request.adapter.map { $0.uppercased() } ?? before?.adapter,
            name: info.name, label: request.label ?? before?.label, subject: request.subject ?? before?.subject,
            location: request.location ?? before?.location,
            device: metadata.device(name: request.label ?? info.name, address: id.address, fallback: nil),
            services: characteristics.map(\.service.description).uniqued(), paired: info.paired || pairedNow,
            notifyMode: request.notifyMode, enrolledAt: Instant.now(on: clock))
        do {
            try await registry.register(sensor)
        } catch {
            throw Failure(message: "cannot record \(id.address) in the store: \(error)")
        }
        if !wasConnected { try? await central.disconnect(id) }
        return Result(sensor: sensor, metadata: metadata, pairedNow: pairedNow)
    }

    /// Connects and waits for the services the way a session of the service does: a failed Connect is retried
    /// by its class (``ConnectRetry``) with the service's ``Support/Backoff`` until `timeout` has passed, and a
    /// link that drops before its services are resolved (an aborted connect that bluetoothd still showed as
    /// connected) is connected again instead of waited on.
    private func connect(_ id: PeripheralID, timeout: Duration, waiter: EventWaiter) async throws {
        let started = clock.now
        let deadline = started + timeout
        var backoff = Backoff()
        var attempt = 0
        while true {
            attempt += 1
            var failure: CentralError?
            do throws(CentralError) {
                try await central.connect(id, timeout: max(deadline - clock.now, .milliseconds(1)))
            } catch {
                failure = error
            }
            if failure == nil {
                var dropped = false
                let settled = await waiter.wait(for: deadline - clock.now) { event in
                    if event == .servicesResolved(id, resolved: true) { return true }
                    guard event == .connectionChanged(id, connected: false) else { return false }
                    dropped = true
                    return true
                }
                if settled, !dropped { return }
                guard dropped else {
                    throw Failure(
                        message: "\(id.address) connected but its services were not resolved within \(timeout)")
                }
                failure = CentralError(
                    .transient, operation: "Connect", detail: "the link dropped before the services were resolved")
            }
            guard let failure else { return }
            let tried = attempt == 1 ? "" : " (\(attempt) attempts in \(clock.now - started))"
            let fail = Failure(message: "could not connect to the sensor: \(failure)\(tried)", underlying: failure)
            switch ConnectRetry.after(failure.kind, slowRetry: SensorSessionState.Settings().slowRetry) {
            case .waitForStack:
                throw fail
            case .retry(let minimum, let disconnectFirst):
                let wait = max(backoff.delay(attempt: attempt - 1), minimum)
                guard clock.now + wait < deadline else { throw fail }
                if disconnectFirst { try? await central.disconnect(id) }
                try await clock.sleep(for: wait)
            }
        }
    }

    /// The peripheral the request names: known to bluetoothd already (unless `amongKnown` is false), or found by
    /// discovery within the timeout; and whether it was known.
    private func find(
        _ request: Request, waiter: EventWaiter, amongKnown: Bool = true
    ) async throws -> (PeripheralInfo, known: Bool) {
        let address = RegisteredSensor.normalizedAddress(request.target)
        // A name matches exactly (case included, no prefixes): a near miss is named in the error, and a name that
        // several devices have is refused, so that a guess never enrols the wrong sensor.
        func matches(_ info: PeripheralInfo) -> Bool {
            if let adapter = request.adapter, adapter.uppercased() != info.id.adapter { return false }
            if let address { return info.id.address == address }
            return info.name == request.target
        }
        let known =
            amongKnown
            ? try await step("list the devices of") { () throws(CentralError) in try await central.knownPeripherals() }
            : []
        let exact = known.filter(matches)
        if address == nil, exact.count > 1 {
            throw Failure(
                message: "\(exact.count) devices are named \(ErrorEcho.echo(request.target)) ("
                    + exact.map(\.id.address).sorted().joined(separator: ", ") + "): give the address")
        }
        if let info = exact.first { return (info, true) }
        let nearMisses =
            address != nil
            ? []
            : known.filter { info in
                guard let name = info.name, name != request.target else { return false }
                return name.lowercased() == request.target.lowercased()
            }
        try await step("start discovery on") { () throws(CentralError) in
            try await central.startDiscovery(services: GatewayService.discoveryServices, on: request.adapter)
        }
        var found: PeripheralInfo?
        _ = await waiter.wait(for: request.timeout) { event in
            guard case .discovered(let info) = event, matches(info) else { return false }
            found = info
            return true
        }
        try? await central.stopDiscovery(on: request.adapter)
        guard let found else {
            let hint =
                nearMisses.isEmpty
                ? "is it awake and near?"
                : "names match exactly; "
                    + nearMisses.map { "\(ErrorEcho.echo($0.name ?? "")) is \($0.id.address)" }.joined(separator: ", ")
            throw Failure(
                message: "no sensor \(ErrorEcho.echo(request.target)) found within \(request.timeout) (\(hint))")
        }
        return (found, false)
    }

    private func step<T>(
        _ what: String, _ body: () async throws(CentralError) -> T
    ) async throws -> T {
        do {
            return try await body()
        } catch {
            throw Failure(message: "could not \(what) the sensor: \(error)", underlying: error)
        }
    }

    /// Whether `name` is a location the gateway knows (what `wearhouse pair --location` and the web app take).
    public static func isKnownLocation(_ name: String) -> Bool {
        locationValue(name) != nil
    }

    /// A location name as its BLE value (Body Sensor Location, else RSC Sensor Location).
    static func locationValue(_ name: String) -> UInt8? {
        GatewayService.bodyLocation(name) ?? GatewayService.rscLocation(name)
    }
}

extension Array where Element: Hashable {
    /// The elements in order, each once.
    func uniqued() -> [Element] {
        var seen: Set<Element> = []
        return filter { seen.insert($0).inserted }
    }
}
