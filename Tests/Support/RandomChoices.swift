import Support

extension SplitMix64 {
    /// A filter for a query, as the property tests draw one: none (`nil`) two times in three, otherwise a random
    /// part of `items`, never empty.
    package mutating func someOf<Element>(_ items: [Element]) -> [Element]? {
        guard next() % 3 == 0 else { return nil }
        let chosen = items.filter { _ in next() % 2 == 0 }
        return chosen.isEmpty ? [items[0]] : chosen
    }
}
