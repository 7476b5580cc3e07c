import Foundation
import FoundationXML
import TestSupport
import Testing

/// The files under `Systemd/` and `Udev/`, checked with systemd's own tools where they are installed (`make deps`
/// installs `systemd`; each check takes well under a second).
@Suite struct SystemdFilesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let analyze = "/usr/bin/systemd-analyze"
    static var hasAnalyze: Bool { FileManager.default.isExecutableFile(atPath: analyze) }

    /// The unit as `make install` renders it, with ExecStart pointing at a program that exists here (verify
    /// checks that it does), in a fresh directory.
    static func renderedUnit() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-unit-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let unit = try String(contentsOf: root.appendingPathComponent("Systemd/wearhouse.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/wearhouse run\n"))
        let rendered = directory.appendingPathComponent("wearhouse.service")
        try unit.replacingOccurrences(of: "/usr/local/bin/wearhouse", with: "/bin/true")
            .write(to: rendered, atomically: true, encoding: .utf8)
        return rendered
    }

    @Test(.enabled(if: hasAnalyze)) func unitVerifiesWithoutWarnings() throws {
        let unit = try Self.renderedUnit()
        defer { try? FileManager.default.removeItem(at: unit.deletingLastPathComponent()) }
        let result = try run(Self.analyze, ["verify", unit.path])
        #expect(result.status == 0)
        // verify exits 0 on unknown keys and only warns: any output is a finding.
        #expect(result.stderr == "")
    }

    /// README.md quotes this figure; `systemd-analyze security --offline=true Systemd/wearhouse.service`.
    @Test(.enabled(if: hasAnalyze)) func exposureIsAtMostTwo() throws {
        let unit = try Self.renderedUnit()
        defer { try? FileManager.default.removeItem(at: unit.deletingLastPathComponent()) }
        let result = try run(Self.analyze, ["security", "--offline=true", "--threshold=20", "--no-pager", unit.path])
        #expect(result.status == 0, "\(result.stdout)")
        let marker = "Overall exposure level for wearhouse.service: "
        let line = result.stdout.split(separator: "\n").first { $0.contains(marker) }
        let exposure = line.flatMap { Double($0.components(separatedBy: marker)[1].prefix { $0 != " " }) }
        #expect(exposure != nil && exposure! <= 2.0)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-sysusers")))
    func sysusersCreatesTheUserInGroupBluetooth() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-root-\(UUID())")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("etc"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = Self.root.appendingPathComponent("Systemd/wearhouse.sysusers").path
        let result = try run("/usr/bin/systemd-sysusers", ["--dry-run", "--root=\(directory.path)", file])
        #expect(result.status == 0)
        #expect(result.stderr.contains("Creating user 'wearhouse'"), "\(result.stderr)")
        #expect(result.stderr.contains("Creating group 'bluetooth'"))
        #expect(!result.stderr.contains(file + ":"), "a line of the file was refused")
    }

    /// Every rule line is `KEY op "value"` pairs, and every GOTO has its LABEL (udevadm verify is systemd 254+).
    @Test func udevRulesAreWellFormed() throws {
        let text = try String(
            contentsOf: Self.root.appendingPathComponent("Udev/70-wearhouse.rules"), encoding: .utf8)
        let pair = try Regex(#"^\s*([A-Z_]+(\{[A-Za-z0-9_]+\})?)\s*(==|!=|\+=|-=|:=|=)\s*"([^"]*)"\s*$"#)
        var gotos: Set<String> = []
        var labels: Set<String> = []
        var wantsService = false
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.allSatisfy(\.isWhitespace) {
            for assignment in line.split(separator: ",") {
                let match = try #require(try pair.wholeMatch(in: String(assignment)), "malformed: \(assignment)")
                let key = match.output[1].substring.map(String.init) ?? ""
                let value = match.output[4].substring.map(String.init) ?? ""
                if key == "GOTO" { gotos.insert(value) }
                if key == "LABEL" { labels.insert(value) }
                if key == "ENV{SYSTEMD_WANTS}", value == "wearhouse.service" { wantsService = true }
            }
        }
        #expect(gotos == labels)
        #expect(wantsService)
        #expect(text.contains(#"SUBSYSTEM!="bluetooth""#) && text.contains(#"TAG+="systemd""#))
    }

    @Test func busPolicyLetsOnlyTheServiceUserOwnTheName() throws {
        let text = try String(
            contentsOf: Self.root.appendingPathComponent("Systemd/org.wearhouse.Health1.conf"), encoding: .utf8)
        let document = try XMLDocument(data: Data(text.utf8), options: [])
        let owners = try document.nodes(forXPath: "//policy[allow/@own='org.wearhouse.Health1']/@user")
        #expect(owners.map { $0.stringValue } == ["wearhouse"])
        let callers = try document.nodes(
            forXPath: "//policy[@context='default']/allow[@send_destination='org.wearhouse.Health1']")
        #expect(callers.count == 1)
        #expect(try document.nodes(forXPath: "//policy[@context='default']/allow[@own]").isEmpty)
    }

    /// The installed configuration may hold a PostgreSQL password: `make install` gives it mode 0640 and group
    /// wearhouse, and tmpfiles keeps it so (an older install's 0644 file included).
    @Test func theInstalledConfigurationIsNotWorldReadable() throws {
        let makefile = try String(contentsOf: Self.root.appendingPathComponent("Makefile"), encoding: .utf8)
        #expect(
            makefile.contains("install -m 0640 Systemd/wearhouse.conf.example $(DESTDIR)/etc/wearhouse/wearhouse.conf"))
        #expect(!makefile.contains("install -m 0644 Systemd/wearhouse.conf.example $(DESTDIR)/etc/"))
        let tmpfiles = try String(
            contentsOf: Self.root.appendingPathComponent("Systemd/wearhouse.tmpfiles"), encoding: .utf8)
        #expect(tmpfiles.contains("z /etc/wearhouse/wearhouse.conf 0640 root wearhouse -\n"))
    }

    func run(_ program: String, _ arguments: [String]) throws -> ToolRun {
        try runTool(
            program, arguments, environment: ["PATH": "/usr/bin:/bin", "SYSTEMD_PAGER": "", "SYSTEMD_COLORS": "0"])
    }
}

/// The Health app's socket and service (`wearhouse web`), as `make install` renders them.
@Suite struct WebUnitFilesTests {
    @Test(.enabled(if: SystemdFilesTests.hasAnalyze)) func webUnitsVerifyAndAreHardened() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-web-unit-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let systemd = SystemdFilesTests.root.appendingPathComponent("Systemd")
        let service = try String(contentsOf: systemd.appendingPathComponent("wearhouse-web.service"), encoding: .utf8)
        #expect(service.contains("ExecStart=/usr/local/bin/wearhouse web "))
        let socket = try String(contentsOf: systemd.appendingPathComponent("wearhouse-web.socket"), encoding: .utf8)
        #expect(socket.contains("ListenStream=127.0.0.1:8710\n"), "the app is served on loopback only")
        try service.replacingOccurrences(of: "/usr/local/bin/wearhouse", with: "/bin/true")
            .write(to: directory.appendingPathComponent("wearhouse-web.service"), atomically: true, encoding: .utf8)
        try socket.write(
            to: directory.appendingPathComponent("wearhouse-web.socket"), atomically: true, encoding: .utf8)
        let units = ["wearhouse-web.socket", "wearhouse-web.service"].map { directory.appendingPathComponent($0).path }
        let verified = try runTool(SystemdFilesTests.analyze, ["verify"] + units)
        #expect(verified.status == 0 && verified.stderr == "", "\(verified.stderr)")
        let security = try runTool(
            SystemdFilesTests.analyze, ["security", "--offline=true", "--threshold=20", "--no-pager", units[1]])
        let marker = "Overall exposure level for wearhouse-web.service: "
        let line = security.stdout.split(separator: "\n").first { $0.contains(marker) }
        let exposure = line.flatMap { Double($0.components(separatedBy: marker)[1].prefix { $0 != " " }) }
        #expect(exposure != nil && exposure! <= 2.0, "\(security.stdout)")
    }
}
