import Foundation
import GATT
import Health

/// `wearhouse me [set KEY VALUE | unset KEY]`: the person's characteristics (biological sex, blood type, date of
/// birth, skin type), which only the owner writes and apps read with a grant (`docs/store-semantics.md`, item 26).
struct MeCommand: Command {
    let name = "me"
    let abstract = "Show or set the person's characteristics: sex, blood type, date of birth, skin type."
    var discussion: String {
        """
        Without a subcommand prints the characteristics that are set, with the age. Keys: biologicalSex (female,
        male, other), bloodType (A+ A- B+ B- AB+ AB- O+ O-, or aPositive ... oNegative), dateOfBirth (YYYY-MM-DD),
        fitzpatrickSkinType (I-VI). Apps read them with a read grant ('wearhouse grant APP --read dateOfBirth')
        and never write them.

          wearhouse me set dateOfBirth 1990-02-02
          wearhouse me set bloodType AB+ --subject alice
          wearhouse me --time-zone Europe/Berlin
          wearhouse me unset bloodType
        """
    }

    struct Options: CommandOptions {
        var subject: String?
        var timeZone = StoreOptions.utc
        var json = false
        var store: String?
    }

    let syntax = CommandSyntax<Options>(options: [
        .text("subject", value: "name", \.subject, help: MeCommand.subjectHelp),
        StoreOptions.timeZone(\.timeZone, help: "Where the age is counted (default: UTC)."),
        .flag("json", \.json, help: "Print one JSON object."), StoreOptions.store(\.store),
    ])
    let subcommands: [any Command] = [MeSetCommand(), MeUnsetCommand()]

    func run(_ options: Options, console: Console) async -> ExitCode {
        await withStore(options.store, mustExist: true, console: console) { store in
            let characteristics = try await store.characteristics(of: options.subject, as: .owner)
            let age = characteristics.age(at: .now, timeZone: options.timeZone)
            let set = HealthTypeCatalog.types(of: .characteristic).compactMap { type in
                characteristics.values[type.identifier].map { (type.identifier, $0.text(for: type)) }
            }
            if options.json {
                var fields = set.map { Field($0.0, .string($0.1)) }
                fields.append(Field("age", age.map { .int($0) } ?? .null))
                console.out(FieldValue.object(fields).json + "\n")
                return
            }
            guard !set.isEmpty else {
                console.out("Nothing set. Set it with 'wearhouse me set dateOfBirth 1990-02-02'.\n")
                return
            }
            let width = (set.map(\.0.count).max() ?? 0) + 2
            var text = set.map { $0.0.padding(to: width) + $0.1 + "\n" }.joined()
            if let age { text += "age".padding(to: width) + "\(age)\n" }
            console.out(text)
        }
    }

    /// The characteristic type named `key`, or a usage error listing them.
    static func characteristic(_ key: String) throws(UsageError) -> HealthType {
        guard let type = HealthTypeCatalog.type(key), type.kind == .characteristic else {
            throw UsageError(
                "unknown characteristic \(echo(key)); the characteristics are "
                    + HealthTypeCatalog.types(of: .characteristic).map(\.identifier).joined(separator: ", "))
        }
        return type
    }

    /// What `me set` and `me unset` change: the characteristic `key` of `subject` (`nil`: the store's own person).
    static func target(_ key: String, of subject: String?) throws(UsageError) -> (type: HealthType, subject: String?) {
        (try characteristic(key), try self.subject(subject))
    }

    /// Help for the `key` argument of `me set` and `me unset`.
    static let keyHelp = "biologicalSex, bloodType, dateOfBirth or fitzpatrickSkinType."
    /// Help for their `--subject`.
    static let subjectHelp = "Whose (default: the store's own person)."

    /// `--subject`: a name, not empty.
    static func subject(_ subject: String?) throws(UsageError) -> String? {
        guard let subject else { return nil }
        guard !subject.isEmpty, subject.utf8.count <= 256 else {
            throw UsageError("--subject must be a name of 1 to 256 bytes")
        }
        return subject
    }
}

/// `wearhouse me set KEY VALUE [--subject S]`.
struct MeSetCommand: Command {
    let name = "set"
    let abstract = "Set a characteristic."

    struct Options: CommandOptions {
        var key = ""
        var value = ""
        var subject: String?
        var store: String?
    }

    let syntax = CommandSyntax<Options>(
        positionals: [
            .required("key", \.key, help: MeCommand.keyHelp),
            .required("value", \.value, help: "Its value (see 'wearhouse me --help')."),
        ],
        options: [
            .text("subject", value: "name", \.subject, help: MeCommand.subjectHelp),
            StoreOptions.store(\.store),
        ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        let target: (type: HealthType, subject: String?)
        let value: Characteristics.Value
        do throws(UsageError) {
            target = try MeCommand.target(options.key, of: options.subject)
        } catch {
            console.error(error.message)
            return .usage
        }
        let (type, subject) = target
        do throws(CharacteristicError) {
            value = try Characteristics.Value(parsing: options.value, for: type)
        } catch {
            console.error("\(error)")
            return .usage
        }
        return await withStore(options.store, mustExist: false, console: console) { store in
            try await store.setCharacteristic(type, to: value, of: subject, as: .owner)
            console.out("\(type.identifier) \(value.text(for: type))\n")
        }
    }
}

/// `wearhouse me unset KEY [--subject S]`.
struct MeUnsetCommand: Command {
    let name = "unset"
    let abstract = "Remove a characteristic."

    struct Options: CommandOptions {
        var key = ""
        var subject: String?
        var store: String?
    }

    let syntax = CommandSyntax<Options>(
        positionals: [
            .required("key", \.key, help: MeCommand.keyHelp)
        ],
        options: [
            .text("subject", value: "name", \.subject, help: MeCommand.subjectHelp),
            StoreOptions.store(\.store),
        ])

    func run(_ options: Options, console: Console) async -> ExitCode {
        let target: (type: HealthType, subject: String?)
        do throws(UsageError) {
            target = try MeCommand.target(options.key, of: options.subject)
        } catch {
            console.error(error.message)
            return .usage
        }
        let (type, subject) = target
        return await withStore(options.store, mustExist: true, console: console) { store in
            try await store.setCharacteristic(type, to: nil, of: subject, as: .owner)
            console.out("\(type.identifier) unset\n")
        }
    }
}
