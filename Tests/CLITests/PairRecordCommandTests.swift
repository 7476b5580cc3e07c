import FakeDevices
import Foundation
import Testing

/// `pair` again, `pair` by name and `record --sensor` through the real binary, against FakeBlueZ
/// (``GatewayCommandTests/withFake(_:)``), in this process: so the binary is awaited off the concurrency pool.
@Suite(.timeLimit(.minutes(2))) struct PairRecordCommandTests {
    @Test func pairingAgainKeepsTheWearerAndNamesMatchExactly() async throws {
        try await GatewayCommandTests.withFake { bus, _, store in
            let first = try await WearhouseRunner.runOffPool([
                "pair", "C0:FF:EE:00:00:01", "--bus", bus, "--store", store, "--subject", "alice", "--label", "Red",
            ])
            #expect(first.status == 0, "\(first.stderr)")
            let again = try await WearhouseRunner.runOffPool([
                "pair", "Strap", "--bus", bus, "--store", store, "--json",
            ])
            #expect(again.status == 0, "\(again.stderr)")
            let row = try WearhouseRunner.json(again.stdout)
            #expect(row["subject"] as? String == "alice")
            #expect(row["label"] as? String == "Red")
            let moved = try await WearhouseRunner.runOffPool([
                "pair", "C0:FF:EE:00:00:01", "--bus", bus, "--store", store, "--subject", "bob", "--json",
            ])
            #expect(try WearhouseRunner.json(moved.stdout)["subject"] as? String == "bob")
            // "strap" is not "Strap": refused, with the near miss named.
            let nearly = try await WearhouseRunner.runOffPool([
                "pair", "strap", "--bus", bus, "--store", store, "--timeout", "1",
            ])
            #expect(nearly.status == 69)
            #expect(
                nearly.stderr.contains(
                    "no sensor 'strap' found within 1.0 seconds (names match exactly; 'Strap' is C0:FF:EE:00:00:01)"))
            #expect(
                try await WearhouseRunner.runOffPool(["pair", "Stra", "--bus", bus, "--store", store, "--timeout", "1"])
                    .status == 69
            )
        }
    }

    @Test func pairRetriesATransientConnectAbortAsTheServiceDoes() async throws {
        try await GatewayCommandTests.withFake { bus, fake, store in
            await fake.setConnectFault(.abortByLocalTimes(2), for: "C0:FF:EE:00:00:01")
            let pair = ["pair", "C0:FF:EE:00:00:01", "--bus", bus, "--store", store]
            let recovered = try await WearhouseRunner.runOffPool(pair + ["--timeout", "20"])
            #expect(recovered.status == 0, "\(recovered.stderr)")
            // A link that drops before its services are resolved is connected again, not waited on.
            await fake.setConnectFault(.dropsBeforeResolving(1), for: "C0:FF:EE:00:00:01")
            let dropped = try await WearhouseRunner.runOffPool(pair + ["--timeout", "20"])
            #expect(dropped.status == 0, "\(dropped.stderr)")
            // A fault that does not clear ends the enrolment within --timeout, saying how often it tried.
            await fake.setConnectFault(.abortByLocal, for: "C0:FF:EE:00:00:01")
            let failed = try await WearhouseRunner.runOffPool(pair + ["--timeout", "1"])
            #expect(failed.status == 69, "\(failed.stderr)")
            #expect(failed.stderr.contains("le-connection-abort-by-local ("), "\(failed.stderr)")
            #expect(failed.stderr.contains(" attempts in "), "\(failed.stderr)")
        }
    }

    @Test func forgetAlsoReleasesTheSensorInBluetoothd() async throws {
        try await GatewayCommandTests.withFake { bus, fake, store in
            func run(_ arguments: [String]) async throws -> WearhouseRunner.Result {
                try await WearhouseRunner.runOffPool(arguments + ["--bus", bus, "--store", store])
            }
            #expect(try await run(["pair", "Locked strap", "--timeout", "5"]).status == 0)
            #expect(await fake.isPaired("C0:FF:EE:00:00:02"))
            let paired = try await run(["forget", "C0:FF:EE:00:00:02"])
            #expect(paired.status == 0, "\(paired.stderr)")
            #expect(paired.stderr.contains("Removed C0:FF:EE:00:00:02 from bluetoothd (its pairing and trust)"))
            #expect(await !fake.isKnown("C0:FF:EE:00:00:02"))

            #expect(try await run(["pair", "C0:FF:EE:00:00:01"]).status == 0)
            let plain = try await run(["forget", "C0:FF:EE:00:00:01"])
            #expect(plain.stderr.contains("C0:FF:EE:00:00:01 is no longer trusted by bluetoothd"), "\(plain.stderr)")
            #expect(await fake.isKnown("C0:FF:EE:00:00:01"))
            #expect(try await run(["pair", "C0:FF:EE:00:00:01"]).status == 0)
            let kept = try await run(["forget", "C0:FF:EE:00:00:01", "--keep-pairing"])
            #expect(kept.status == 0 && !kept.stderr.contains("bluetoothd"), "\(kept.stderr)")
            // --unpair works on a sensor that is no longer enrolled.
            let unpaired = try await run(["forget", "C0:FF:EE:00:00:01", "--unpair"])
            #expect(unpaired.status == 0, "\(unpaired.stderr)")
            #expect(await !fake.isKnown("C0:FF:EE:00:00:01"))
            #expect(try await run(["forget", "C0:FF:EE:00:00:01", "--unpair", "--keep-pairing"]).status == 64)
        }
    }

    @Test func recordRefusesSensorsItCouldNeverRecord() async throws {
        try await GatewayCommandTests.withFake { bus, _, store in
            let out = store + ".trace"
            let garbage = try await WearhouseRunner.runOffPool([
                "record", "--out", out, "--sensor", "garbage", "--store", store,
            ])
            #expect(garbage.status == 64, "\(garbage.stderr)")
            #expect(garbage.stderr.contains("--sensor: 'garbage' is not a Bluetooth address"))
            #expect(
                try await WearhouseRunner.runOffPool(["pair", "C0:FF:EE:00:00:01", "--bus", bus, "--store", store])
                    .status == 0)
            let unknown = try await WearhouseRunner.runOffPool([
                "record", "--out", out, "--sensor", "c0:ff:ee:00:00:01,C0:FF:EE:00:00:09", "--store", store,
                "--bus", bus, "--duration", "1",
            ])
            #expect(unknown.status == 66, "\(unknown.stderr)")
            #expect(unknown.stderr.contains("--sensor: C0:FF:EE:00:00:09 is not enrolled"))
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }
}
