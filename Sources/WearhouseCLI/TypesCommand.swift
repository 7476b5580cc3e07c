import GATT
import Health

/// `wearhouse types`: the type catalog with canonical units.
struct TypesCommand: Command {
    let name = "types"
    let abstract = "List the health data types with their units."

    struct Options: CommandOptions {
        var json = false
    }

    let syntax = CommandSyntax<Options>(options: [.flag("json", \.json, help: "Print one JSON object per type.")])

    func run(_ options: Options, console: Console) async -> ExitCode {
        if options.json {
            for type in HealthTypeCatalog.all {
                console.out(FieldValue.object(fields(type)).json + "\n")
            }
            return .success
        }
        let width = (HealthTypeCatalog.all.map { $0.identifier.count }.max() ?? 0) + 2
        console.out(
            "TYPE".padding(to: width) + "UNIT".padding(to: 11) + "AGGREGATION".padding(to: 13) + "VALID RANGE\n")
        for type in HealthTypeCatalog.all {
            let range = type.validRange.map { "\(Self.number($0.lowerBound))...\(Self.number($0.upperBound))" } ?? "any"
            console.out(
                type.identifier.padding(to: width) + type.canonicalUnit.padding(to: 11)
                    + type.aggregation.rawValue.padding(to: 13) + range + "\n")
        }
        return .success
    }

    private func fields(_ type: HealthType) -> [Field] {
        [
            Field("identifier", .string(type.identifier)),
            Field("unit", .string(type.canonicalUnit)),
            Field("aggregation", .string(type.aggregation.rawValue)),
            Field("min", type.validRange.map { .double($0.lowerBound) } ?? .null),
            Field(
                "max",
                type.validRange.flatMap {
                    $0.upperBound.isFinite && $0.upperBound < 1e300 ? .double($0.upperBound) : nil
                } ?? .null),
            Field("loinc", type.loinc.map { .string($0) } ?? .null),
        ]
    }

    static func number(_ value: Double) -> String {
        if value >= 1e300 { return "" }
        return value == value.rounded() ? String(Int64(value)) : String(value)
    }
}
