import Health
import HealthWeb

/// The type page's source priority (cumulative types): the sources that wrote the type, ranked as the merge ranks
/// them, reordered by the person; the page's merged total above shows what the order does.
extension WebApp {
    /// The ranks form: each listed entry, then each source the list does not name, with its position (blank: not
    /// listed), and what the unlisted do.
    func priorityForm(_ type: HealthType, _ session: SessionGate.Session) async throws -> String {
        guard type.aggregation == .cumulative else { return "" }
        let stored = try await store.priorities()
        let own = stored[type.identifier]
        let priority = own ?? stored[defaultPriorityKey] ?? .none
        var entries = priority.order.enumerated().map { (SourcePriority.spelling($1), String($0 + 1)) }
        for summary in try await store.sources(of: type, as: .owner)
        where !priority.order.contains(where: { $0.matches(summary.provenance) }) {
            entries.append((SourcePriority.spelling(summary.provenance), ""))
        }
        guard !entries.isEmpty else { return "" }
        let rows = entries.map { spelling, position in
            "<tr><td>\(html(spelling))<input type=\"hidden\" name=\"entry\" value=\"\(html(spelling))\"></td><td>"
                + "<input type=\"number\" name=\"rank\" min=\"1\" max=\"\(SourcePriority.maximumEntries)\" value=\""
                + "\(position)\" aria-label=\"rank of \(html(spelling))\"></td></tr>"
        }.joined()
        let options = CumulativeMerge.UnrankedPolicy.allCases.map { policy in
            let label = policy == .gapFill ? "fill the gaps the ranked leave" : "count for nothing"
            return "<option value=\"\(policy.rawValue)\"\(policy == priority.unranked ? " selected" : "")>"
                + "\(label)</option>"
        }.joined()
        let origin =
            own != nil
            ? "This type's own order." : stored[defaultPriorityKey] != nil ? "The default order." : "No order is set."
        return "<h2>Source priority</h2><p>Where sources overlap, the one ranked 1 counts. \(origin)</p>"
            + form("/priority/\(type.identifier)", session, id: "priority") {
                "<table><tr><th>Source[device]</th><th>Rank</th></tr>\(rows)</table><label>Sources without a rank "
                    + "<select name=\"unranked\">\(options)</select></label> <button name=\"action\" value=\"set\">"
                    + "Save priority</button> <button name=\"action\" value=\"reset\">Reset</button>"
            }
    }

    /// `POST /priority/TYPE`: the entries with a rank, in rank order (ties in the form's order), or a reset.
    func changePriority(_ identifier: String, _ request: HTTPRequest) async throws -> HTTPResponse {
        guard let type = HealthTypeCatalog.type(identifier), type.aggregation == .cumulative else {
            throw PageError(status: 404, message: "There is no cumulative type '\(identifier)'.")
        }
        if request.form("action") == "reset" {
            try await store.setPriority(of: type, nil)
            return .redirect("/type/\(type.identifier)")
        }
        let entries = request.formValues.filter { $0.name == "entry" }.map(\.value)
        let ranks = request.formValues.filter { $0.name == "rank" }.map(\.value)
        guard entries.count == ranks.count, entries.count <= SourcePriority.maximumEntries else {
            throw PageError(status: 400, message: "The form's entries and ranks do not pair up.")
        }
        var ranked: [(rank: Int, index: Int, entry: Provenance)] = []
        for (index, (spelling, rank)) in zip(entries, ranks).enumerated() where !rank.isEmpty {
            guard let position = Int(rank), (1...SourcePriority.maximumEntries).contains(position) else {
                throw PageError(status: 400, message: "A rank is a whole number from 1, not '\(rank)'.")
            }
            guard !spelling.contains(","), case .success(let parsed) = SourcePriority.parseEntries(spelling),
                let entry = parsed.first
            else { throw PageError(status: 400, message: "'\(spelling)' is not a source.") }
            ranked.append((position, index, entry))
        }
        guard let unranked = CumulativeMerge.UnrankedPolicy(rawValue: request.form("unranked") ?? "") else {
            throw PageError(status: 400, message: "Sources without a rank either fill the gaps or count for nothing.")
        }
        let order = ranked.sorted { ($0.rank, $0.index) < ($1.rank, $1.index) }.map(\.entry)
        let priority = SourcePriority(order: order, unranked: unranked)
        if let reason = priority.invalidityReason { throw PageError(status: 400, message: reason) }
        try await store.setPriority(of: type, priority)
        return .redirect("/type/\(type.identifier)")
    }
}
