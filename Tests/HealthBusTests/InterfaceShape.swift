import Foundation
import FoundationXML
import HealthBus

/// The repository's root (for the shipped XML, the docs and the examples).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
let shippedXML = "Systemd/org.wearhouse.Health1.xml"

/// What an introspection document says about `org.wearhouse.Health1`: methods and signals with their arguments'
/// names, types and directions, and properties. Comments, whitespace and other interfaces do not count.
struct InterfaceShape: Equatable, CustomStringConvertible {
    struct Member: Equatable {
        var kind: String
        var name: String
        var arguments: [String]
    }

    var members: [Member]

    var methods: [Member] { members.filter { $0.kind == "method" } }

    init(xml: String) throws {
        let document = try XMLDocument(xmlString: xml, options: [])
        let nodes = try document.nodes(forXPath: "//interface[@name='\(HealthBusAPI.interfaceName)']/*")
        members = nodes.compactMap { node -> Member? in
            guard let element = node as? XMLElement, let kind = element.name else { return nil }
            let name = element.attribute(forName: "name")?.stringValue ?? ""
            let arguments = (element.elements(forName: "arg")).map { argument in
                [
                    argument.attribute(forName: "name")?.stringValue ?? "",
                    argument.attribute(forName: "type")?.stringValue ?? "",
                    argument.attribute(forName: "direction")?.stringValue ?? (kind == "method" ? "in" : ""),
                ].joined(separator: " ")
            }
            let property =
                kind == "property"
                ? [
                    (element.attribute(forName: "type")?.stringValue ?? "")
                        + " " + (element.attribute(forName: "access")?.stringValue ?? "")
                ] : []
            return Member(kind: kind, name: name, arguments: arguments + property)
        }.sorted { ($0.kind, $0.name) < ($1.kind, $1.name) }
    }

    init(contentsOf url: URL) throws {
        try self.init(xml: String(contentsOf: url, encoding: .utf8))
    }

    var description: String {
        members.map { "\($0.kind) \($0.name)(\($0.arguments.joined(separator: ", ")))" }.joined(separator: "\n")
    }
}
