import GATT
import Health

/// `wearhouse types`: the type catalog with kinds, canonical units and, for categories and characteristics, their
/// values.
struct TypesCommand: Command {
    let name = "types"
    let abstract = "List the health data types with their kinds, units and values."

    struct Options: CommandOptions {
        var json = false
    }

    let syntax = CommandSyntax<Options>(options: [.flag("json", \.json, help: "Print one JSON object per type.")])

    func run(_ options: Options, console: Console) async -> ExitCode {
        if options.json {
            for type in HealthTypeCatalog.all {
                console.out(FieldValue.object(Self.fields(type)).json + "\n")
            }
            return .success
        }
        let width = (HealthTypeCatalog.all.map { $0.identifier.count }.max() ?? 0) + 2
        console.out(
            "TYPE".padding(to: width) + "KIND".padding(to: 16) + "UNIT".padding(to: 13)
                + "AGGREGATION".padding(to: 13) + "VALID RANGE / VALUES\n")
        for type in HealthTypeCatalog.all {
            let range =
                type.values.isEmpty
                ? type.validRange.map { "\(Self.number($0.lowerBound))...\(Self.number($0.upperBound))" } ?? "any"
                : type.values.map { "\($0.name) \($0.value)" }.joined(separator: ", ")
            console.out(
                type.identifier.padding(to: width) + type.kind.rawValue.padding(to: 16)
                    + (type.canonicalUnit.isEmpty ? "-" : type.canonicalUnit).padding(to: 13)
                    + type.aggregation.rawValue.padding(to: 13) + range + "\n")
        }
        return .success
    }

    static func fields(_ type: HealthType) -> [Field] {
        let unit = try? HealthUnit(type.canonicalUnit)
        var fields = [
            Field("identifier", .string(type.identifier)),
            Field("kind", .string(type.kind.rawValue)),
            Field("unit", type.canonicalUnit.isEmpty ? .null : .string(type.canonicalUnit)),
            Field("dimension", unit.map { .string($0.dimension.description) } ?? .null),
            Field("aggregation", .string(type.aggregation.rawValue)),
            Field("min", type.values.isEmpty ? type.validRange.map { .double($0.lowerBound) } ?? .null : .null),
            Field(
                "max",
                type.values.isEmpty
                    ? type.validRange.flatMap {
                        $0.upperBound.isFinite && $0.upperBound < 1e300 ? .double($0.upperBound) : nil
                    } ?? .null : .null),
            Field("loinc", type.loinc.map { .string($0) } ?? .null),
            Field("ucum", type.ucum.map { .string($0) } ?? .null),
        ]
        if !type.values.isEmpty {
            fields.append(
                Field(
                    "values",
                    .list(
                        type.values.map {
                            .object([Field("name", .string($0.name)), Field("value", .int($0.value))])
                        })))
        }
        return fields
    }

    static func number(_ value: Double) -> String {
        if value >= 1e300 { return "" }
        return value == value.rounded() ? String(Int64(value)) : String(value)
    }
}
