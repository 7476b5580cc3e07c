public import DBus
public import Health
public import Support
import Synchronization

/// Serves `org.wearhouse.Health1` at `/org/wearhouse/Health1`: the store's API for local apps
/// (docs/app-api.md).
///
/// Every call is answered later (``DBusReply/deferred``): the bus thread only takes the call, a task identifies
/// the caller and runs the store call on the store's own executor, and the reply goes back through the bus
/// thread. A slow call therefore never holds up the bus, and the API's limits (page sizes, batch sizes, bucket
/// counts, calls in flight per connection) keep any one call short, so one caller cannot stall the others.
///
/// Callers are identified from the bus's credentials (``AppIdentity``) and act as ``Caller/app(_:)``; the store
/// enforces their grants and logs every call. Observers get `SamplesAdded` as unicast signals, and only for
/// types they may read.
public final class HealthBusServer: Sendable {
    /// What the server can be tuned with.
    public struct Settings: Sendable {
        /// How often the store is asked whether samples were added, for observers.
        public var observerPollInterval: Duration
        /// Calls one connection may have in flight (``HealthBusAPI/maximumCallsInFlight``).
        public var maximumCallsInFlight: Int
        /// Names a caller from its unique name and credentials (UID, PID); the default reads `/proc`
        /// (``AppIdentity/resolve(uid:pid:procRoot:)``). Tests use it to tell connections of one process apart.
        public var identify: @Sendable (_ sender: String, _ uid: UInt32, _ pid: UInt32?) -> AppIdentity

        public init(
            observerPollInterval: Duration = .milliseconds(250),
            maximumCallsInFlight: Int = HealthBusAPI.maximumCallsInFlight,
            identify: @escaping @Sendable (String, UInt32, UInt32?) -> AppIdentity = {
                AppIdentity.resolve(uid: $1, pid: $2)
            }
        ) {
            self.observerPollInterval = observerPollInterval
            self.maximumCallsInFlight = maximumCallsInFlight
            self.identify = identify
        }
    }

    let bus: DBusConnection
    let store: any HealthStore
    let settings: Settings
    let log: ServiceLog
    let state = Mutex(State())

    struct State {
        /// Callers by unique name; forgotten when they leave the bus.
        var identities: [String: AppIdentity] = [:]
        /// Observed types by unique name.
        var observers: [String: Set<String>] = [:]
        var inFlight: [String: Int] = [:]
        /// Calls being answered, so that ``stop()`` can wait for them.
        var calls: [UInt64: Task<Void, Never>] = [:]
        /// Calls whose task ended before it was recorded in `calls`.
        var finishedEarly: Set<UInt64> = []
        var nextCall: UInt64 = 0
        var background: [Task<Void, Never>] = []
        var stopped = false
        /// How far the observers' poller has looked (a store anchor).
        var pollAnchor: Int64 = 0
        /// Calls answered, for tests and diagnostics.
        var answered = 0
    }

    private init(bus: DBusConnection, store: any HealthStore, settings: Settings, log: ServiceLog) {
        self.bus = bus
        self.store = store
        self.settings = settings
        self.log = log
    }

    /// Serves the API on `bus` and, with `requestName`, takes the name `org.wearhouse.Health1`.
    ///
    /// - Parameters:
    ///   - store: the store apps reach; give the server a connection of its own (a second store opened on the
    ///     same SQLite file or PostgreSQL database), so that apps' reads never queue behind the gateway's writes.
    ///   - log: where warnings go (a caller that could not be identified, a signal that could not be sent), each
    ///     message starting with `api: `; by default nowhere.
    /// - Throws: ``DBusError`` when the object cannot be served or the name is owned by someone else
    ///   (kind `remote`, name `org.freedesktop.DBus.Error.AddressInUse`), or the store's error.
    public static func start(
        on bus: DBusConnection, store: any HealthStore, settings: Settings = Settings(), requestName: Bool = true,
        log: ServiceLog = .disabled
    ) async throws -> HealthBusServer {
        let server = HealthBusServer(bus: bus, store: store, settings: settings, log: log)
        do {
            try await server.serve(requestName: requestName)
        } catch {
            await server.stop()
            throw error
        }
        return server
    }

    private func serve(requestName: Bool) async throws {
        let departures = try await bus.subscribe(
            to: DBusMatchRule(
                sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
        let (_, anchor) = try await store.typesWithNewSamples(since: nil)
        state.withLock { $0.pollAnchor = anchor }
        let handler: DBusMethodHandler = { [weak self] _, call in
            guard let self else {
                return .error(name: HealthBusError.Name.failed, message: "the service is stopping; try again")
            }
            return self.accept(call)
        }
        try await bus.export(
            HealthBusAPI.objectPath, interfaces: [DBusExportedInterface(HealthBusAPI.interface, methodHandler: handler)]
        )
        // allowed: kept in `background`, cancelled by stop(); watches departures as long as the server serves
        let watcher = Task { [weak self] in
            for await signal in departures {
                guard let self else { return }
                self.noteNameOwnerChanged(signal)
            }
        }
        // allowed: kept in `background`, cancelled by stop(); polls the store as long as the server serves
        let poller = Task { [weak self] in
            guard let self else { return }
            await self.pollForAdditions(from: anchor)
        }
        state.withLock { $0.background += [watcher, poller] }
        guard requestName else { return }
        let result = try await bus.requestName(HealthBusAPI.busName)
        guard result == .primaryOwner || result == .alreadyOwner else {
            throw DBusError.named(
                "org.freedesktop.DBus.Error.AddressInUse",
                "\(HealthBusAPI.busName) is owned by another process (another 'wearhouse run'?)",
                operation: "RequestName")
        }
    }

    /// Stops answering: calls in flight are cancelled (their callers get `Failed`), observers are forgotten, the
    /// object is no longer served. The caller closes the connection.
    public func stop() async {
        let tasks = state.withLock { state in
            state.stopped = true
            defer {
                state.calls.removeAll()
                state.background.removeAll()
                state.observers.removeAll()
            }
            return Array(state.calls.values) + state.background
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        try? await bus.unexport(HealthBusAPI.objectPath)
    }

    /// How many calls were answered so far.
    public var answeredCalls: Int { state.withLock { $0.answered } }

    /// The connections observing at least one type.
    public var observerCount: Int { state.withLock { $0.observers.count } }

    // MARK: Calls

    /// Takes a call on the bus thread: refuses it at once when its connection has too many in flight, otherwise
    /// starts a task for it and answers later.
    private func accept(_ call: DBusMethodCall) -> DBusReply {
        guard let sender = call.sender else {
            return .error(name: HealthBusError.Name.invalidArgument, message: "calls must come through the bus")
        }
        let maximum = settings.maximumCallsInFlight
        let id: UInt64? = state.withLock { state in
            guard !state.stopped, state.inFlight[sender, default: 0] < maximum else { return nil }
            state.inFlight[sender, default: 0] += 1
            state.nextCall += 1
            return state.nextCall
        }
        guard let id else {
            return .error(
                name: HealthBusError.Name.limitExceeded,
                message: "this connection already has \(maximum) calls waiting for the store; wait for their replies")
        }
        // allowed: a deferred D-Bus call answered off the bus thread; kept in `calls`, cancelled by stop()
        let task = Task { [self] in
            let reply = await answer(call, from: sender)
            state.withLock { state in
                if state.calls.removeValue(forKey: id) == nil { state.finishedEarly.insert(id) }
                state.answered += 1
                if let count = state.inFlight[sender], count > 1 {
                    state.inFlight[sender] = count - 1
                } else {
                    state.inFlight[sender] = nil
                }
            }
            do {
                try await bus.reply(to: call, with: reply)
            } catch {
                log.warning("api: cannot answer \(call.member) of \(sender): \(HealthBusError.loggable(error))")
            }
        }
        state.withLock { state in
            if state.finishedEarly.remove(id) == nil { state.calls[id] = task }
        }
        return .deferred
    }

    private func answer(_ call: DBusMethodCall, from sender: String) async -> DBusReply {
        do {
            let identity = try await identify(sender)
            return .values(try await perform(call, as: identity, sender: sender))
        } catch let error as HealthBusError {
            return .error(name: error.name, message: error.message)
        } catch let error as NotAuthorizedError {
            return .error(
                name: HealthBusError.Name.notAuthorized,
                message: "this app (\(error.caller)) may not write \(error.type); call RequestAuthorization, then "
                    + "ask the store's owner to run: wearhouse grant '\(error.caller)' --write \(error.type)")
        } catch let error as InvalidSampleError {
            return .error(
                name: HealthBusError.Name.invalidSample,
                message: "\(error); nothing of the batch was written")
        } catch is CancellationError {
            return .error(name: HealthBusError.Name.failed, message: "the service is stopping; try again")
        } catch {
            // The store's errors may carry statement text and be of any length: the caller learns only that it
            // failed, the log gets a bounded line without statements.
            log.warning("api: \(call.member) of \(sender) failed: \(HealthBusError.loggable(error))")
            return .error(
                name: HealthBusError.Name.failed,
                message: "the store could not answer \(call.member); the service's log has the details")
        }
    }

    // MARK: Callers

    /// The caller's identity, from the bus daemon's `GetConnectionCredentials`; cached until it leaves the bus.
    func identify(_ sender: String) async throws -> AppIdentity {
        if let known = state.withLock({ $0.identities[sender] }) { return known }
        let reply = try await bus.call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionCredentials", arguments: [.string(sender)], timeout: .seconds(5))
        guard let credentials = reply.first?.stringKeyedValue, let uid = credentials["UnixUserID"]?.uint32Value else {
            throw HealthBusError(
                name: HealthBusError.Name.notAuthorized,
                message: "the bus did not report this connection's user, so the service cannot tell who is calling")
        }
        let identity = settings.identify(sender, uid, credentials["ProcessID"]?.uint32Value)
        state.withLock { state in
            // Unique names are never reused on a bus; the cache empties as callers leave (and in full when a
            // departure was missed).
            if state.identities.count >= 4_096 { state.identities.removeAll() }
            state.identities[sender] = identity
        }
        return identity
    }

    private func noteNameOwnerChanged(_ signal: DBusSignal) {
        guard signal.arguments.count == 3, let name = signal.arguments[0].stringValue, name.hasPrefix(":"),
            signal.arguments[2].stringValue == ""
        else { return }
        state.withLock { state in
            state.identities[name] = nil
            state.observers[name] = nil
        }
    }

    // MARK: Observers

    /// Asks the store every ``Settings/observerPollInterval`` which types got samples (from the gateway, from
    /// apps, from any other writer of the file) and tells each observer allowed to read them.
    private func pollForAdditions(from start: Int64) async {
        var anchor = start
        while !Task.isCancelled {
            try? await Task.sleep(for: settings.observerPollInterval)
            guard !Task.isCancelled else { return }
            do {
                // Without observers only the anchor moves on (one counter read).
                let observing = state.withLock { !$0.observers.isEmpty }
                let (types, next) = try await store.typesWithNewSamples(since: observing ? anchor : nil)
                anchor = next
                // Observers registered from here on get `next` from Observe; those registered before are told.
                let targets = state.withLock { state in
                    state.pollAnchor = next
                    return types.isEmpty ? [] : Self.targets(of: types, in: state)
                }
                guard !targets.isEmpty else { continue }
                try await notify(targets, anchor: next)
            } catch {
                log.warning("api: cannot check for new samples for observers: \(HealthBusError.loggable(error))")
            }
        }
    }

    /// The observers of `types`: unique name, app id, the types they observe among them.
    private static func targets(of types: Set<String>, in state: State) -> [(String, String, Set<String>)] {
        state.observers.compactMap { sender, observed -> (String, String, Set<String>)? in
            let wanted = observed.intersection(types)
            guard !wanted.isEmpty, let identity = state.identities[sender] else { return nil }
            return (sender, identity.appID, wanted)
        }
    }

    private func notify(_ targets: [(String, String, Set<String>)], anchor: Int64) async throws {
        let grants = try await store.apps()
        let readable = Dictionary(
            grants.map { ($0.app, Set($0.grants.filter(\.read).map(\.type))) }, uniquingKeysWith: { $0.union($1) })
        // Each signal carries its type's own anchor (the observer may read the type, so it may see all of it), not
        // the store's, which moves with the writes of every type.
        var anchors: [String: Int64] = [:]
        for (sender, app, wanted) in targets {
            for type in wanted.sorted() where readable[app]?.contains(type) == true {
                if anchors[type] == nil, let known = HealthTypeCatalog.type(type) {
                    anchors[type] = try await store.latestAnchor(of: [known], as: .owner)
                }
                let typeAnchor = anchors[type] ?? anchor
                do {
                    try await bus.emitSignal(
                        path: HealthBusAPI.objectPath, interface: HealthBusAPI.interfaceName,
                        member: HealthBusAPI.samplesAddedSignal, arguments: [.string(type), .int64(typeAnchor)],
                        destination: sender)
                } catch {
                    log.warning(
                        "api: cannot tell \(sender) about new \(type) samples: \(HealthBusError.loggable(error))")
                }
            }
        }
    }

    /// Registers an observer; returns the anchor from which its `SamplesAdded` signals cover the additions.
    func observe(_ types: [String], sender: String) {
        state.withLock { state in
            state.observers[sender, default: []].formUnion(types)
        }
    }

    func stopObserving(_ types: [String], sender: String) {
        state.withLock { state in
            state.observers[sender]?.subtract(types)
            if state.observers[sender]?.isEmpty == true { state.observers[sender] = nil }
        }
    }
}
