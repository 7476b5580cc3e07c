import Foundation
import GATT

/// `decode`: GATT decodes per second on one core, for a Heart Rate Measurement with 4 RR intervals, an RSC
/// Measurement with every field, and the health devices' Weight, Blood Pressure and PLX Spot-check
/// Measurements with every field (time stamp, user, SFLOATs). Peers on the same payloads: a hand-written unchecked decoder in this process
/// (no bounds checks, no errors: the ceiling), and Python's `struct` module as a typical bleak script would use it.
enum DecodeScenario {
    static func run(size: BenchSize) throws -> BenchReport {
        let count = size.pick(full: 2_000_000, quick: 100_000, smoke: 2_000)
        let runs = size.pick(full: 7, quick: 3, smoke: 1)
        let heartRate = heartRatePayloads()
        let rsc = rscPayloads()

        var rows: [BenchRow] = []
        rows.append(
            BenchRow(
                subject: "wearhouse HeartRateMeasurement (4 RR)", unit: "decodes/s",
                runs: measureRate(runs: runs, work: Double(count)) {
                    var sum = 0
                    for index in 0..<count {
                        do {
                            let value = try HeartRateMeasurement(decoding: heartRate[index & 1023])
                            sum &+= Int(value.heartRate) &+ Int(value.rrIntervals[3])
                        } catch {
                            sum &-= 1
                        }
                    }
                    blackHole(sum)
                }))
        rows.append(
            BenchRow(
                subject: "unchecked baseline HRM (4 RR)", unit: "decodes/s",
                runs: measureRate(runs: runs, work: Double(count)) {
                    var sum = 0
                    for index in 0..<count {
                        sum &+= uncheckedHeartRate(heartRate[index & 1023])
                    }
                    blackHole(sum)
                }))
        rows.append(
            BenchRow(
                subject: "wearhouse RSCMeasurement (all fields)", unit: "decodes/s",
                runs: measureRate(runs: runs, work: Double(count)) {
                    var sum = 0
                    for index in 0..<count {
                        do {
                            let value = try RSCMeasurement(decoding: rsc[index & 1023])
                            sum &+= Int(value.speed) &+ Int(value.totalDistance ?? 0)
                        } catch {
                            sum &-= 1
                        }
                    }
                    blackHole(sum)
                }))
        rows.append(
            healthRow("wearhouse WeightMeasurement (all fields)", weightPayloads(), count: count, runs: runs) {
                (bytes) throws(DecodeError) in
                let value = try WeightMeasurement(decoding: bytes)
                return Int(value.weight) &+ Int(value.height ?? 0)
            })
        rows.append(
            healthRow(
                "wearhouse BloodPressureMeasurement (all fields)", bloodPressurePayloads(), count: count, runs: runs
            ) { (bytes) throws(DecodeError) in
                let value = try BloodPressureMeasurement(decoding: bytes)
                return value.systolic.mantissa &+ (value.pulseRate?.mantissa ?? 0)
            })
        rows.append(
            healthRow("wearhouse PLXSpotCheckMeasurement (all fields)", plxPayloads(), count: count, runs: runs) {
                (bytes) throws(DecodeError) in
                let value = try PLXSpotCheckMeasurement(decoding: bytes)
                return value.spo2.mantissa &+ (value.pulseAmplitudeIndex?.mantissa ?? 0)
            })
        if let python = try pythonRates(
            heartRate: heartRate, rsc: rsc, count: size.pick(full: 300_000, quick: 20_000, smoke: 1_000), runs: runs)
        {
            rows.append(BenchRow(subject: "python3 struct HRM (4 RR)", unit: "decodes/s", runs: python.heartRate))
            rows.append(BenchRow(subject: "python3 struct RSC", unit: "decodes/s", runs: python.rsc))
        }
        return BenchReport(
            scenario: "decode", size: size, rows: rows,
            notes: [
                "target: >= 20 M Heart Rate Measurement decodes/s on one core",
                "\(count) decodes per run over 1,024 distinct payloads, \(runs) runs after one warm-up; median shown",
            ])
    }

    /// 1,024 Heart Rate Measurements: flags 0x16 (uint8, contact detected, RR present), 4 RR intervals.
    static func heartRatePayloads() -> [[UInt8]] {
        (0..<1024).map { (index: Int) -> [UInt8] in
            var intervals: [UInt16] = []
            for position in 0..<4 {
                intervals.append(UInt16(700 + (index * 7 + position * 13) % 400))
            }
            let measurement = HeartRateMeasurement(
                heartRate: UInt16(50 + index % 120), sensorContact: .detected, rrIntervals: RRIntervals(intervals))
            return measurement.encoded()
        }
    }

    /// One row of decodes of `payloads` (1,024 of them), `read` picking two fields so nothing is optimized away.
    static func healthRow(
        _ subject: String, _ payloads: [[UInt8]], count: Int, runs: Int,
        _ read: ([UInt8]) throws(DecodeError) -> Int
    ) -> BenchRow {
        BenchRow(
            subject: subject, unit: "decodes/s",
            runs: measureRate(runs: runs, work: Double(count)) {
                var sum = 0
                for index in 0..<count {
                    do {
                        sum &+= try read(payloads[index & 1023])
                    } catch {
                        sum &-= 1
                    }
                }
                blackHole(sum)
            })
    }

    static func stamp(_ index: Int) -> DateTime {
        DateTime(
            year: 2026, month: UInt8(1 + index % 12), day: UInt8(1 + index % 28), hours: UInt8(index % 24),
            minutes: UInt8(index % 60), seconds: UInt8((index * 7) % 60))
    }

    /// 1,024 Weight Measurements with time stamp, user ID, BMI and height (15 bytes).
    static func weightPayloads() -> [[UInt8]] {
        (0..<1024).map { (index: Int) -> [UInt8] in
            WeightMeasurement(
                weight: UInt16(12_000 + index * 7), timeStamp: stamp(index), userID: UInt8(1 + index % 4),
                bmi: UInt16(200 + index % 80), height: UInt16(1_500 + index % 400)
            ).encoded()
        }
    }

    /// 1,024 Blood Pressure Measurements with time stamp, pulse rate, user ID and status (19 bytes).
    static func bloodPressurePayloads() -> [[UInt8]] {
        (0..<1024).map { (index: Int) -> [UInt8] in
            BloodPressureMeasurement(
                systolic: SFloat(mantissa: 100 + index % 60) ?? .nan,
                diastolic: SFloat(mantissa: 60 + index % 30) ?? .nan,
                meanArterialPressure: SFloat(mantissa: 80 + index % 40) ?? .nan, timeStamp: stamp(index),
                pulseRate: SFloat(mantissa: 50 + index % 70), userID: UInt8(index % 4),
                status: BloodPressureStatus(rawValue: UInt16(index % 64))
            ).encoded()
        }
    }

    /// 1,024 PLX Spot-check Measurements with time stamp, both statuses and the pulse amplitude index (19 bytes).
    static func plxPayloads() -> [[UInt8]] {
        (0..<1024).map { (index: Int) -> [UInt8] in
            PLXSpotCheckMeasurement(
                spo2: SFloat(mantissa: 900 + index % 100, exponent: -1) ?? .nan,
                pulseRate: SFloat(mantissa: 50 + index % 70) ?? .nan, timeStamp: stamp(index),
                measurementStatus: PLXMeasurementStatus(rawValue: UInt16(index % 2048) << 5),
                deviceAndSensorStatus: PLXDeviceAndSensorStatus(rawValue: UInt32(index)),
                pulseAmplitudeIndex: SFloat(mantissa: 10 + index % 90, exponent: -1)
            ).encoded()
        }
    }

    /// 1,024 RSC Measurements with stride length, total distance and the running bit.
    static func rscPayloads() -> [[UInt8]] {
        (0..<1024).map { (index: Int) -> [UInt8] in
            let measurement = RSCMeasurement(
                speed: UInt16(512 + index), cadence: UInt8(150 + index % 40), strideLength: UInt16(100 + index % 50),
                totalDistance: UInt32(10_000 + index * 3), isRunning: index % 2 == 0)
            return measurement.encoded()
        }
    }

    /// The ceiling: the same fields (value, contact, energy, every RR interval) read without bounds checks,
    /// error handling or a result type, from the same payloads.
    @inline(never)
    static func uncheckedHeartRate(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { raw in
            let flags = raw[0]
            var offset = 1
            var result: Int
            if flags & 1 == 0 {
                result = Int(raw[1])
                offset = 2
            } else {
                result = Int(raw[1]) | Int(raw[2]) << 8
                offset = 3
            }
            result &+= Int((flags >> 1) & 3)
            if flags & 0x08 != 0 {
                result &+= Int(raw[offset]) | Int(raw[offset + 1]) << 8
                offset += 2
            }
            var intervals: InlineArray<12, UInt16> = InlineArray(repeating: 0)
            var count = 0
            while offset + 1 < raw.count, count < 12 {
                intervals[count] = UInt16(raw[offset]) | UInt16(raw[offset + 1]) << 8
                offset += 2
                count += 1
            }
            return result &+ (count > 3 ? Int(intervals[3]) : 0)
        }
    }

    /// Runs Benchmarks/peers/decode.py on the same payloads; nil when python3 is missing.
    static func pythonRates(heartRate: [[UInt8]], rsc: [[UInt8]], count: Int, runs: Int) throws -> (
        heartRate: [Double], rsc: [Double]
    )? {
        let script = "Benchmarks/peers/decode.py"
        guard FileManager.default.fileExists(atPath: script), FileManager.default.fileExists(atPath: "/usr/bin/python3")
        else {
            return nil
        }
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-decode-\(getpid()).txt")
        let lines = heartRate.map { "hr " + Hex.string($0) } + rsc.map { "rsc " + Hex.string($0) }
        try lines.joined(separator: "\n").write(to: input, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: input) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, input.path, String(count), String(runs)]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        struct Rates: Decodable { var hr: [Double]; var rsc: [Double] }
        let rates = try JSONDecoder().decode(Rates.self, from: output)
        return (rates.hr, rates.rsc)
    }
}
