import Foundation

/// The benchmark peers that are programs: C sources in Benchmarks/peers compiled here, scripts run by python3.
enum Peers {
    /// Compiles `Benchmarks/peers/<name>.c` against SQLite into `directory`; `nil` without a C compiler.
    static func compile(_ name: String, in directory: URL) throws -> URL? {
        guard FileManager.default.fileExists(atPath: "/usr/bin/cc") else { return nil }
        let binary = directory.appendingPathComponent(name)
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
        compiler.arguments = ["-O2", "Benchmarks/peers/\(name).c", "-lsqlite3", "-o", binary.path]
        try compiler.run()
        compiler.waitUntilExit()
        return compiler.terminationStatus == 0 ? binary : nil
    }

    /// Runs a peer and returns what it printed.
    static func run(_ executable: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return output
    }
}

extension Peers {
    /// What one run of a program cost: its wall time (measured here, from start to exit), its peak resident
    /// memory and its CPU time (`/usr/bin/time -f "%M %U %S"`; 0 without it).
    struct Measured {
        var seconds: Double
        var peakMegabytes: Double
        /// User and system CPU time (`/usr/bin/time -f "%U %S"`; 0 without it): what the process cost whatever else
        /// the machine was running.
        var cpuSeconds: Double = 0
        var output: Data
    }

    /// The `wearhouse` binary beside this harness (`make bench` builds both in release, `make test` both in debug).
    static var wearhouse: String {
        get throws {
            let path = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("wearhouse").path
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw ReplayScenario.BenchError("no wearhouse binary at \(path) (make bench builds it)")
            }
            return path
        }
    }

    /// Runs `executable` under `/usr/bin/time`, its stdin read from the file `input` and its stdout written to the
    /// file `output` (else returned); throws when it fails.
    static func measure(_ executable: String, _ arguments: [String], input: String? = nil, output: String? = nil)
        throws -> Measured
    {
        let timed = FileManager.default.isExecutableFile(atPath: "/usr/bin/time")
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-time-\(getpid())").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: timed ? "/usr/bin/time" : executable)
        process.arguments = timed ? ["-f", "%M %U %S", "-o", report, executable] + arguments : arguments
        let pipe = Pipe()
        if let output {
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        } else {
            process.standardOutput = pipe
        }
        if let input { process.standardInput = FileHandle(forReadingAtPath: input) }
        let clock = ContinuousClock()
        let started = clock.now
        try process.run()
        let data = output == nil ? pipe.fileHandleForReading.readDataToEndOfFile() : Data()
        process.waitUntilExit()
        let elapsed = clock.now - started
        guard process.terminationStatus == 0 else {
            throw ReplayScenario.BenchError(
                "\(executable) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        let fields =
            (try? String(contentsOfFile: report, encoding: .utf8))?.split(separator: "\n").last?
            .split(separator: " ").compactMap { Double($0) } ?? []
        try? FileManager.default.removeItem(atPath: report)
        return Measured(
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18,
            peakMegabytes: (fields.first ?? 0) / 1024,
            cpuSeconds: fields.count == 3 ? fields[1] + fields[2] : 0, output: data)
    }
}
