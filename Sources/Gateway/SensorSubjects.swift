/// Whose readings a sensor's samples are: the registry's subject text, which for a multi-user scale or cuff may
/// map the device's user indexes to subjects.
///
/// ```
/// alice                 every reading is alice's
/// 1=alice,2=bob         user 1 is alice, user 2 bob; other users (and 255, unknown) have no subject
/// carol,1=alice,2=bob   the same, and readings of other users are carol's
/// ```
///
/// Entries are separated by commas; an index is 0-254 (255 is the specification's "unknown user"). Text that
/// does not parse as a mapping (a subject with `=` in it, from before mappings existed) is one plain subject,
/// so that nothing stored before changes meaning; `wearhouse pair` refuses such text for a new enrolment
/// (``parse(_:)``).
public struct SensorSubjects: Hashable, Sendable {
    /// The subject of readings without a mapped user index.
    public var subject: String?
    public var byUserIndex: [UInt8: String]

    /// The most user indexes one sensor maps (a family scale has a handful).
    public static let maximumUsers = 32

    public init(subject: String? = nil, byUserIndex: [UInt8: String] = [:]) {
        self.subject = subject
        self.byUserIndex = byUserIndex
    }

    /// The text that parses back to these subjects (`nil` when there are none): what `wearhouse pair` stores and
    /// what a trace's sensor line records.
    public var text: String? {
        let entries = byUserIndex.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let all = (subject.map { [$0] } ?? []) + entries
        return all.isEmpty ? nil : all.joined(separator: ",")
    }

    /// The subjects `text` names; text that is not a valid mapping is one plain subject.
    public init(_ text: String?) {
        guard let text else {
            self.init()
            return
        }
        switch Self.parse(text) {
        case .success(let parsed): self = parsed
        case .failure: self.init(subject: text)
        }
    }

    /// Why `text` is not a valid subject or mapping, for `wearhouse pair --subject`.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// `text` as a plain subject (no `=`) or a mapping; an error names the entry that is wrong.
    public static func parse(_ text: String) -> Result<SensorSubjects, ParseError> {
        guard text.contains("=") else { return .success(SensorSubjects(subject: text)) }
        var result = SensorSubjects()
        let entries = text.split(separator: ",", omittingEmptySubsequences: false)
        for (position, raw) in entries.enumerated() {
            let entry = raw.trimmingSpaces()
            let place = "entry \(position + 1) of the subject mapping"
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 1 {
                guard !entry.isEmpty else { return .failure(ParseError(description: "\(place) is empty")) }
                guard result.subject == nil else {
                    return .failure(ParseError(description: "\(place): only one subject may go without a user index"))
                }
                result.subject = entry
                continue
            }
            let index = parts[0].trimmingSpaces()
            let name = parts[1].trimmingSpaces()
            guard let user = UInt8(index), user < 255 else {
                return .failure(ParseError(description: "\(place): '\(index)' is not a user index (0-254)"))
            }
            guard !name.isEmpty, !name.contains("=") else {
                return .failure(ParseError(description: "\(place): user \(user) needs one subject name"))
            }
            guard result.byUserIndex[user] == nil else {
                return .failure(ParseError(description: "\(place): user \(user) is mapped twice"))
            }
            guard result.byUserIndex.count < maximumUsers else {
                return .failure(ParseError(description: "a sensor maps at most \(maximumUsers) user indexes"))
            }
            result.byUserIndex[user] = name
        }
        return .success(result)
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
