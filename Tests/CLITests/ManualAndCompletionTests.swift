import Foundation
import Gateway
import Health
import SQLiteStore
import TestSupport
import Testing

/// The man pages and shell completions that the real binary writes from its commands' declarations
/// (`wearhouse __man`, `wearhouse __completion`, `wearhouse __complete`). Tests/Package/test-deb.sh loads the
/// installed scripts in bash, zsh and fish themselves.
@Suite(.timeLimit(.minutes(1))) struct ManualAndCompletionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func complete(_ words: String...) throws -> [String] {
        let result = try WearhouseRunner.run(["__complete"] + words)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
    }

    @Test func typeIdentifiersCompleteAfterType() throws {
        #expect(try complete("samples", "--type", "heart").starts(with: ["heartRate", "heartbeatSeries"]))
        #expect(try complete("stats", "--type=stepCo") == ["--type=stepCount"])
        #expect(try complete("samples", "--types", "").isEmpty)  // no such option: nothing to offer
    }

    @Test func commandsSubcommandsAndOptionsComplete() throws {
        #expect(try complete("sam") == ["samples"])
        #expect(try complete("store", "").contains("check"))
        #expect(try complete("help", "sto") == ["store"])
        let options = try complete("samples", "--f")
        #expect(options.contains("--from") && options.contains("--format"))
        // A flag given once is not offered again; a path asks the shell for file names.
        #expect(!(try complete("sensors", "--json", "--")).contains("--json"))
        #expect(try complete("samples", "--store", "") == [":files"])
    }

    @Test func sensorAddressesCompleteFromTheStore() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("complete-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = folder.appendingPathComponent("health.db").path
        try await SQLiteHealthStore(path: store).register(
            RegisteredSensor(address: "C0:FF:EE:00:00:01", subject: "alice", enrolledAt: Instant.now))
        #expect(try complete("forget", "--store", store, "C0") == ["C0:FF:EE:00:00:01"])
        #expect(try complete("forget", "--store", store, "AA").isEmpty)
        #expect(try complete("forget", "--store=\(store)", "").contains("C0:FF:EE:00:00:01"))
    }

    @Test func manPagesCoverEveryCommandAndRenderWithoutWarnings() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("man-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let example = Self.root.appendingPathComponent("Systemd/wearhouse.conf.example").path
        let result = try WearhouseRunner.run(["__man", folder.path, example])
        #expect(result.status == 0, "\(result.stderr)")
        let pages = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        let help = try WearhouseRunner.run(["--help"]).stdout
        let commands = help.split(separator: "\n").drop { $0 != "COMMANDS:" }.dropFirst()
            .compactMap { $0.split(separator: " ").first }.filter { $0 != "See" }
        #expect(commands.count > 10)
        for command in commands { #expect(pages.contains("wearhouse-\(command).1")) }
        #expect(pages.contains("wearhouse.1") && pages.contains("wearhouse.conf.5"))
        #expect(pages.contains("wearhouse-store-prune.1"))
        for page in pages {
            let render = try WearhouseRunner.runTool(
                "/bin/sh", ["-c", "groff -man -Tutf8 -ww -z \"$0\" 2>&1", folder.appendingPathComponent(page).path])
            #expect(render.status == 0 && render.stdout.isEmpty, "\(page): \(render.stdout)")
        }
    }

    @Test func configurationPageNamesEveryKey() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("man-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let example = Self.root.appendingPathComponent("Systemd/wearhouse.conf.example").path
        #expect(try WearhouseRunner.run(["__man", folder.path, example]).status == 0)
        let page = try String(contentsOf: folder.appendingPathComponent("wearhouse.conf.5"), encoding: .utf8)
        // Every key the parser accepts.
        let keys = GatewayConfiguration.keyNames.map { $0.split(separator: ".").last.map(String.init) ?? $0 }
        #expect(keys.count > 15)
        for key in keys { #expect(page.contains("\\fB\(key.replacingOccurrences(of: "-", with: "\\-"))\\fR = ")) }
        // An example that leaves a key out is refused, naming it.
        let partial = folder.appendingPathComponent("partial.conf")
        try "[store]\n#url = /x\n".write(to: partial, atomically: true, encoding: .utf8)
        let refused = try WearhouseRunner.run(["__man", folder.path, partial.path])
        #expect(refused.status == 65 && refused.stderr.contains("bluetooth.adapter"))
    }
}
