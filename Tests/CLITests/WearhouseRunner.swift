import Foundation
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

    /// Waits, off the pool, for `process` to exit and reads `errors` (its standard error's pipe, if it has one)
    /// to the end.
    @discardableResult
    static func exit(of process: Process, errors: Pipe? = nil) async throws -> Result {
        let handle = errors?.fileHandleForReading
        return try await offPool {
            let log = handle?.readDataToEndOfFile() ?? Data()
            process.waitUntilExit()
            return Result(
                ToolRun(status: process.terminationStatus, stdout: "", stderr: String(decoding: log, as: UTF8.self)))
        }
    }

    /// Starts the binary with `arguments` in the background, its standard output and error to `output` and
    /// `errors` (a `Pipe` or a `FileHandle`; nowhere unless given); the caller waits for it or kills it.
    static func start(
        _ arguments: [String], output: Any = FileHandle.nullDevice, errors: Any = FileHandle.nullDevice
    ) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        return process
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
