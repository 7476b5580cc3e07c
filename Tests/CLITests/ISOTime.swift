import Foundation

/// Seconds since 1970 as the UTC ISO 8601 text the CLI reads (`2023-11-14T22:13:20Z`). One format style for all
/// tests: creating an `ISO8601DateFormatter` per line cost the CLI suites half their time.
func isoUTC(_ seconds: Int) -> String {
    isoStyle.format(Date(timeIntervalSince1970: TimeInterval(seconds)))
}

private let isoStyle = Date.ISO8601FormatStyle()
