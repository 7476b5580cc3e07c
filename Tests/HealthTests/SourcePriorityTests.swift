import Health
import Testing

@Suite struct SourcePriorityTests {
    @Test func entriesAreReadAsTheCommandLineAndTheConfigurationWriteThem() throws {
        let entries = try SourcePriority.parseEntries(" com.example.watch , wearhouse[F0:13:C3:7A:2B:01],phone[] ")
            .get()
        #expect(
            entries == [
                Provenance(source: "com.example.watch", device: Provenance.anyDevice),
                Provenance(source: "wearhouse", device: "F0:13:C3:7A:2B:01"), Provenance(source: "phone", device: nil),
            ])
        #expect(
            entries.map(SourcePriority.spelling) == ["com.example.watch", "wearhouse[F0:13:C3:7A:2B:01]", "phone[]"])
        #expect(SourcePriority(order: entries, unranked: .exclude).description.hasSuffix("phone[] (unranked: exclude)"))
    }

    @Test(arguments: [
        ("", "entry 1 is empty"), ("a,", "entry 2 is empty"), ("a[b", "a device goes in brackets at the end"),
        ("a]b", "the source may not hold control characters, commas or brackets"),
        ("[x]", "entry 1 is empty"), ("a[x]y", "a device goes in brackets at the end"),
        ("a\tb\u{7}", "the source may not hold control characters"), ("a,b,a", "entry 3 'a' is listed twice"),
        ("*", "the source may not be '*'"), ("a[*]", "the device may not be '*'"),
        (String(repeating: "s", count: 257), "longer than 256 characters"),
        (Array(repeating: "a", count: 257).joined(separator: ","), "at most 256 entries, not 257"),
    ])
    func aListThatCannotBeReadSaysWhatAndWhere(_ text: String, _ message: String) {
        switch SourcePriority.parseEntries(text) {
        case .success(let entries): Issue.record("\(text.prefix(40)) gave \(entries.count) entries")
        case .failure(let error): #expect(error.description.contains(message), "\(error.description)")
        }
    }
}
