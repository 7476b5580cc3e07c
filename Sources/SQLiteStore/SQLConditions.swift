/// A WHERE clause built from conditions with `?` placeholders, numbered in order, and the values to bind.
/// The queries with optional filters (sources, devices, subjects, cursors) build their SQL with it.
struct SQLConditions {
    private(set) var clauses: [String] = []
    private(set) var bindings: [Binding] = []

    /// Adds a condition whose `?` placeholders take `values` in order.
    mutating func add(_ condition: String, _ values: [Binding]) {
        let pieces = condition.split(separator: "?", omittingEmptySubsequences: false)
        var text = pieces.first.map(String.init) ?? ""
        for (value, piece) in zip(values, pieces.dropFirst()) {
            bindings.append(value)
            text += "?\(bindings.count)" + piece
        }
        clauses.append(text)
    }

    /// Adds `column IN (...)` when `values` is given and not empty.
    mutating func add(_ column: String, in values: [String]?) {
        guard let values, !values.isEmpty else { return }
        add("\(column) IN (\(values.map { _ in "?" }.joined(separator: ",")))", values.map(Binding.text))
    }

    /// The conditions joined with AND.
    var sql: String { clauses.joined(separator: " AND ") }

    /// Compiles `sql` (which must use these conditions' placeholders) and binds the values.
    func prepare(_ sql: String, on connection: SQLiteConnection) throws -> SQLiteStatement {
        let statement = try connection.prepare(sql)  // dynamic text: not cached
        for (index, binding) in bindings.enumerated() { try binding.bind(to: statement, at: Int32(index + 1)) }
        return statement
    }
}
