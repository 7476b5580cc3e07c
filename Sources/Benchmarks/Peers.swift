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
