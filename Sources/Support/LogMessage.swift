/// A log message whose sensitive parts are marked where they are interpolated, so that the logger decides at
/// write time whether to show them.
///
/// Plain interpolations are public (states, counts, error kinds). Device addresses and measured values are
/// not: they print in full only when the logger's level is ``LogLevel/debug``.
///
/// ```swift
/// log.info("connected to \(address: sensor.address) on \(adapterName)")
/// // info:  connected to C0:FF:**:**:**:01 on hci0
/// // debug: connected to C0:FF:EE:00:00:01 on hci0
/// log.debug("heart rate \(private: bpm)")
/// ```
public struct LogMessage: ExpressibleByStringInterpolation, Sendable, Equatable {
    enum Segment: Sendable, Equatable {
        case text(String)
        case address(String)
        case secret(String)
    }

    var segments: [Segment]

    public init(stringLiteral value: String) {
        segments = [.text(value)]
    }

    public init(stringInterpolation: StringInterpolation) {
        segments = stringInterpolation.segments
    }

    /// The message with addresses and private values shown (`revealing`) or masked.
    public func rendered(revealing: Bool) -> String {
        var text = ""
        for segment in segments {
            switch segment {
            case .text(let value): text += value
            case .address(let value): text += revealing ? value : LogRedaction.address(value)
            case .secret(let value): text += revealing ? value : LogRedaction.placeholder
            }
        }
        return text
    }

    public struct StringInterpolation: StringInterpolationProtocol, Sendable {
        var segments: [Segment] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            segments.reserveCapacity(interpolationCount * 2 + 1)
        }

        public mutating func appendLiteral(_ literal: String) {
            segments.append(.text(literal))
        }

        /// A value that is safe to log at any level.
        public mutating func appendInterpolation(_ value: some Any) {
            segments.append(.text(String(describing: value)))
        }

        /// A Bluetooth address: masked as `AA:BB:**:**:**:FF` unless the logger is at debug.
        public mutating func appendInterpolation(address: String) {
            segments.append(.address(address))
        }

        /// A measured value or anything personal: `<private>` unless the logger is at debug.
        public mutating func appendInterpolation(private value: some Any) {
            segments.append(.secret(String(describing: value)))
        }
    }
}

/// How addresses and private values look in logs below debug.
public enum LogRedaction {
    /// What a private value prints as.
    public static let placeholder = "<private>"

    /// A Bluetooth address with its middle octets masked: `C0:FF:EE:00:00:01` → `C0:FF:**:**:**:01`.
    ///
    /// Enough to tell the sensors of one site apart in a log, not enough to find one again elsewhere. The
    /// separators `:`, `_` (BlueZ object paths) and `-` are kept; anything that is not six hex octets becomes
    /// `<address>`.
    public static func address(_ address: String) -> String {
        guard let separator = address.first(where: { $0 == ":" || $0 == "_" || $0 == "-" }) else {
            return "<address>"
        }
        let octets = address.split(separator: separator, omittingEmptySubsequences: false)
        guard octets.count == 6, octets.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else {
            return "<address>"
        }
        let masked = octets.enumerated().map { index, octet in
            index < 2 || index == 5 ? String(octet) : "**"
        }
        return masked.joined(separator: String(separator))
    }
}
