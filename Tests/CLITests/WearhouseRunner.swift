import Foundation
import Support
import TestSupport

/// Runs the real `wearhouse` binary that SwiftPM built next to the test bundle.
struct WearhouseRunner {
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String

        init(_ run: ToolRun) {
            status = run.status
            stdout = run.stdout
            stderr = run.stderr
        }
    }

    static let executable: URL = {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("wearhouse")
        if FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
        // Package root from this file: Tests/CLITests/WearhouseRunner.swift
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/wearhouse")
    }()

    static func run(_ arguments: [String], stdin: String? = nil) throws -> Result {
        Result(try TestSupport.runTool(executable.path, arguments, stdin: stdin))
    }

    /// ``run(_:stdin:)`` without holding a thread of the concurrency pool while the binary runs (`offPool`): for
    /// tests whose own process serves what the binary talks to (FakeBlueZ in real time).
    static func runOffPool(_ arguments: [String], stdin: String? = nil) async throws -> Result {
        let path = executable.path
        return Result(try await offPool { try TestSupport.runTool(path, arguments, stdin: stdin) })
    }

    /// Waits, off the pool, for `process` to exit, and takes what it wrote to `errors` (given to ``start(_:output:errors:)``
    /// as its standard error).
    @discardableResult
    static func exit(of process: ChildProcess, errors: ErrorLog? = nil) async throws -> Result {
        let exit = await process.exit()
        return Result(ToolRun(status: exit.status, stdout: "", stderr: errors?.take() ?? ""))
    }

    /// Kills a background binary and reaps it (nothing once it has been waited for), and removes its error log:
    /// for a `defer` that cleans up whatever way the test ended.
    static func kill(_ process: ChildProcess, errors: ErrorLog? = nil) {
        process.signal(SIGKILL)
        process.wait()
        _ = errors?.take()
    }

    /// A file for a background binary's standard error, read once it has ended: unlike a pipe read only then, it
    /// never fills and stops the binary while it runs.
    struct ErrorLog {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-stderr-\(UUID())").path

        var stream: ChildProcess.Stream { .file(path, append: false) }

        /// What was written, and the file removed (empty once removed).
        func take() -> String {
            defer { unlink(path) }
            return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        }
    }

    /// Starts the binary with `arguments` in the background (a `ChildProcess`: it inherits no descriptor of the test
    /// process but its three), its standard output and error to `output` and `errors` (nowhere unless given); the
    /// caller waits for it or kills it.
    static func start(
        _ arguments: [String], output: ChildProcess.Stream = .null, errors: ChildProcess.Stream = .null
    ) throws -> ChildProcess {
        try ChildProcess.start(executable.path, arguments, output: output, errors: errors)
    }

    /// Runs another program (busctl) to completion.
    static func runTool(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        Result(try TestSupport.runTool(path, arguments, environment: environment))
    }

    /// Parses one line of JSON output into a dictionary.
    static func json(_ line: some StringProtocol) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        guard let dictionary = object as? [String: Any] else { throw CocoaError(.coderReadCorrupt) }
        return dictionary
    }
}
