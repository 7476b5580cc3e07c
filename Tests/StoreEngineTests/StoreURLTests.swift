import StoreEngine
import Testing

@Suite struct StoreURLTests {
    @Test(arguments: [
        ("/var/lib/wearhouse/health.db", StoreURL.sqlite(path: "/var/lib/wearhouse/health.db")),
        ("health.db", .sqlite(path: "health.db")),
        ("sqlite:/tmp/a.db", .sqlite(path: "/tmp/a.db")),
        ("sqlite:///tmp/a.db", .sqlite(path: "/tmp/a.db")),
        ("sqlite:rel/a.db", .sqlite(path: "rel/a.db")),
        ("postgresql://u@h/db", .postgresql(url: "postgresql://u@h/db")),
        ("postgres://h/db", .postgresql(url: "postgres://h/db")),
        ("C:notascheme", .sqlite(path: "C:notascheme")),
    ])
    func parses(_ text: String, _ expected: StoreURL) throws {
        #expect(try StoreURL(parsing: text) == expected)
    }

    @Test(arguments: ["", "sqlite:", "mysql://x", "http://host/db", "file://x", "sqlite://"])
    func refuses(_ text: String) {
        #expect(throws: StoreURL.ParseError.self) { try StoreURL(parsing: text) }
    }

    @Test func anUnknownSchemeIsNamed() {
        #expect(throws: StoreURL.ParseError.self) { try StoreURL(parsing: "mysql://x") }
        do {
            _ = try StoreURL(parsing: "mysql://x")
        } catch {
            #expect(error.description.contains("'mysql://'"))
        }
    }

    @Test func anAbsurdlyLongURLIsRefusedWithoutEchoingIt() {
        let text = String(repeating: "a", count: 1 << 20)
        do {
            _ = try StoreURL(parsing: text)
            Issue.record("accepted a 1 MB path")
        } catch {
            #expect(error.description.count < 200)
        }
    }

    @Test func passwordsAreNeverShown() throws {
        #expect(
            try StoreURL(parsing: "postgresql://me:secret@db/health").description == "postgresql://me:***@db/health")
        #expect(
            try StoreURL(parsing: "postgresql://db/health?x=1").description == "postgresql://db/health?x=1")
        #expect(StoreURL.redacted("host=db password=secret dbname=h") == "host=db password=*** dbname=h")
    }
}
