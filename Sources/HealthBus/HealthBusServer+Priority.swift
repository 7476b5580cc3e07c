import DBus
import Foundation
import Health

/// `Priorities`, `SetPriority` and `ResetPriority`: the person's source priority (docs/app-api.md), for the owner's
/// tools only. The owner is root or the user the service runs as (the store's own user): an app of any other user
/// is refused, which tells it nothing about anyone's data.
extension HealthBusServer {
    func priorities(as identity: AppIdentity) async throws -> DBusValue {
        try Self.requireOwner(identity, "Priorities")
        let stored = try await store.priorities().sorted { Self.keyName($0.key) < Self.keyName($1.key) }
        return .array(
            .struct([.string, .array(.string), .string]),
            stored.map { key, priority in
                .struct([
                    .string(Self.keyName(key)), .strings(priority.order.map(SourcePriority.spelling)),
                    .string(priority.unranked.rawValue),
                ])
            })
    }

    func setPriority(_ arguments: [DBusValue], as identity: AppIdentity) async throws {
        try Self.requireOwner(identity, "SetPriority")
        let type = try Self.priorityTarget(arguments[0])
        let entries = arguments[1].stringArrayValue ?? []
        guard entries.count <= SourcePriority.maximumEntries else {
            throw HealthBusError.limitExceeded(
                "SetPriority: \(entries.count) entries; at most \(SourcePriority.maximumEntries)")
        }
        var order: [Provenance] = []
        for (index, entry) in entries.enumerated() {
            guard !entry.contains(",") else {
                throw HealthBusError.invalidArgument("SetPriority: entry \(index + 1) holds a comma; give one a string")
            }
            switch SourcePriority.parseEntries(entry) {
            case .success(let parsed): order += parsed
            case .failure(let error):
                throw HealthBusError.invalidArgument(
                    "SetPriority: entry \(index + 1): \(HealthBusError.clipped(error.description, 300))")
            }
        }
        let policyName = arguments[2].stringValue ?? ""
        guard let unranked = CumulativeMerge.UnrankedPolicy(rawValue: policyName) else {
            throw HealthBusError.invalidArgument(
                "SetPriority: unranked must be gapFill or exclude, not '\(HealthBusError.clipped(policyName))'")
        }
        let priority = SourcePriority(order: order, unranked: unranked)
        if let reason = priority.invalidityReason { throw HealthBusError.invalidArgument("SetPriority: \(reason)") }
        try await store.setPriority(of: type, priority)
    }

    func resetPriority(_ argument: DBusValue, as identity: AppIdentity) async throws {
        try Self.requireOwner(identity, "ResetPriority")
        try await store.setPriority(of: try Self.priorityTarget(argument), nil)
    }

    private static func keyName(_ key: String) -> String { key == defaultPriorityKey ? "default" : key }

    /// `default` (`nil`), or a cumulative type.
    private static func priorityTarget(_ value: DBusValue) throws(HealthBusError) -> HealthType? {
        if value.stringValue == "default" { return nil }
        let type = try type(value)
        guard type.aggregation == .cumulative else {
            throw .invalidArgument(
                "\(type.identifier) is \(type.aggregation.rawValue): every source of it counts; priorities rank the "
                    + "sources of cumulative types, or 'default'")
        }
        return type
    }

    private static func requireOwner(_ identity: AppIdentity, _ method: String) throws(HealthBusError) {
        guard identity.uid == 0 || identity.uid == geteuid() else {
            throw HealthBusError(
                name: HealthBusError.Name.notAuthorized,
                message: "\(method) is for the store's owner (root or the service's user); as another user, run "
                    + "'sudo wearhouse priority' instead")
        }
    }
}
