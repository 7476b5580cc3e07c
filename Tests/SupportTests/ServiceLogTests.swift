import Support
import Synchronization
import Testing

/// Collects what a logger writes.
final class CapturedLog: Sendable {
    let entries = Mutex<[LogEntry]>([])
    var destination: LogDestination { LogDestination { entry in self.entries.withLock { $0.append(entry) } } }
    var lines: [String] { entries.withLock { $0.map(\.terminalLine) } }
}

@Suite struct ServiceLogTests {
    @Test(arguments: [
        ("C0:FF:EE:00:00:01", "C0:FF:**:**:**:01"),
        ("c0:ff:ee:00:00:01", "c0:ff:**:**:**:01"),
        ("C0_FF_EE_00_00_01", "C0_FF_**_**_**_01"),
        ("C0-FF-EE-00-00-01", "C0-FF-**-**-**-01"),
        ("Chest strap A", "<address>"),
        ("C0:FF:EE:00:00", "<address>"),
        ("C0:FF:EE:00:00:0G", "<address>"),
        ("", "<address>"),
    ])
    func redactsAddresses(address: String, expected: String) {
        #expect(LogRedaction.address(address) == expected)
    }

    @Test func masksAddressesAndValuesUnlessDebug() {
        let captured = CapturedLog()
        let log = ServiceLog(level: .info, destination: captured.destination)
        let address = "C0:FF:EE:00:00:01"
        log.info("connected to \(address: address) after \(3) attempts, \(private: 72) bpm", fields: [.sensor(address)])
        log.level = .debug
        log.info("connected to \(address: address), \(private: 72) bpm", fields: [.sensor(address)])
        #expect(
            captured.lines == [
                "info: connected to C0:FF:**:**:**:01 after 3 attempts, <private> bpm SENSOR=C0:FF:**:**:**:01\n",
                "info: connected to C0:FF:EE:00:00:01, 72 bpm SENSOR=C0:FF:EE:00:00:01\n",
            ])
    }

    /// No input makes a log line of megabytes: a message is cut at 4,096 bytes, a field's value at 1,024, on a
    /// whole character, saying how long it was.
    @Test func longMessagesAndFieldsAreCutSayingSo() throws {
        let captured = CapturedLog()
        let log = ServiceLog(level: .info, destination: captured.destination)
        let huge = String(repeating: "é", count: 1_000_000)  // 2 bytes each: a cut may not split one
        log.error("bad value \(huge)", fields: [LogField("DETAIL", "\(huge)")])
        let entry = try #require(captured.entries.withLock { $0.first })
        #expect(entry.message.utf8.count <= ServiceLog.maximumMessageBytes + 40)
        #expect(entry.message.hasPrefix("bad value éé"))
        #expect(entry.message.hasSuffix("é... (cut, 2000010 bytes)"))
        let field = try #require(entry.fields.first)
        #expect(field.value.utf8.count <= ServiceLog.maximumFieldBytes + 40)
        #expect(field.value.hasSuffix("é... (cut, 2000000 bytes)"))
        log.error("short")
        #expect(captured.entries.withLock { $0.last?.message } == "short")
    }

    @Test func filtersByLevel() {
        let captured = CapturedLog()
        let log = ServiceLog(level: .warning, destination: captured.destination)
        let built = Mutex(0)
        func expensive() -> String {
            built.withLock { $0 += 1 }
            return "detail"
        }
        log.debug("d \(expensive())")
        log.info("i \(expensive())")
        log.notice("n")
        log.warning("w")
        log.error("e")
        log.critical("c")
        #expect(captured.lines == ["warning: w\n", "error: e\n", "critical: c\n"])
        #expect(built.withLock { $0 } == 0)
        #expect(log.isEnabled(.error))
        #expect(!log.isEnabled(.notice))
        #expect(LogLevel.debug < LogLevel.info && LogLevel.error < LogLevel.critical)
        #expect(LogLevel.allCases.map { LogLevel(name: $0.description) } == LogLevel.allCases)
        #expect(LogLevel(name: "warn") == nil)
    }

    @Test func journalFieldsCarryPriorityIdentifierAndExtras() {
        let captured = CapturedLog()
        let log = ServiceLog(level: .info, destination: captured.destination)
        log.warning(
            "line one\nline two",
            fields: [.sensor("C0:FF:EE:00:00:01"), LogField("reconnect.count", "4"), LogField("_private", "x")])
        let entry = captured.entries.withLock { $0[0] }
        #expect(
            entry.journalFields(identifier: "wearhouse") == [
                "MESSAGE=line one\nline two", "PRIORITY=4", "SYSLOG_IDENTIFIER=wearhouse",
                "SENSOR=C0:FF:**:**:**:01", "RECONNECT_COUNT=4", "PRIVATE=x",
            ])
        // On a terminal one entry stays one line.
        #expect(
            entry.terminalLine == "warning: line one line two SENSOR=C0:FF:**:**:**:01 RECONNECT_COUNT=4 PRIVATE=x\n")
    }
}
