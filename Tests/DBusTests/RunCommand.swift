import Foundation
import TestSupport

/// Runs a command to completion and returns its exit status and output (for `busctl` checks).
func run(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil
) throws -> (status: Int32, output: String, error: String) {
    let result = try runTool(executable, arguments, environment: environment)
    return (result.status, result.stdout, result.stderr)
}
