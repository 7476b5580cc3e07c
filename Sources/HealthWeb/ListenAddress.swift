import Glibc

/// Where the web app listens: a TCP address (`127.0.0.1:8710`, `[::1]:8710`), a Unix socket (`unix:/run/x.sock`),
/// or the socket systemd passed (`LISTEN_FDS`).
public enum ListenAddress: Sendable, Equatable, CustomStringConvertible {
    case tcp(host: String, port: UInt16)
    case unix(path: String)
    /// A listening socket inherited from systemd (socket activation).
    case inherited(descriptor: Int32)

    public static let defaultPort: UInt16 = 8710
    public static let loopback = ListenAddress.tcp(host: "127.0.0.1", port: defaultPort)

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    /// `ADDR:PORT`, `[V6ADDR]:PORT` or `unix:PATH`. Only numeric addresses (no name lookups); port 0 picks a free
    /// port.
    public init(parsing text: String) throws(Invalid) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard !path.isEmpty, path.utf8.count < 108 else {
                throw Invalid(description: "'\(text)': a Unix socket path of 1-107 bytes after 'unix:'")
            }
            self = .unix(path: path)
            return
        }
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw Invalid(description: "'\(text)' is not [IPV6]:PORT")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw Invalid(description: "'\(text)' is not ADDR:PORT (e.g. 127.0.0.1:8710) or unix:PATH")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = UInt16(portText) else {
            throw Invalid(description: "'\(text)': the port must be a number from 0 to 65535")
        }
        guard Self.family(of: String(host)) != nil else {
            throw Invalid(description: "'\(text)': '\(host)' is not a numeric IPv4 or IPv6 address")
        }
        self = .tcp(host: String(host), port: port)
    }

    /// Whether only this machine can reach it: a loopback address, a Unix socket, or systemd's socket (whose unit
    /// says where it listens).
    public var isLocal: Bool {
        switch self {
        case .unix, .inherited: return true
        case .tcp(let host, _):
            if host == "::1" { return true }
            var address = in_addr()
            guard inet_pton(AF_INET, host, &address) == 1 else { return false }
            return UInt32(bigEndian: address.s_addr) >> 24 == 127
        }
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        case .inherited(let descriptor): "systemd socket (fd \(descriptor))"
        }
    }

    /// The socket systemd passed to this process, if any: `LISTEN_PID` is this process and `LISTEN_FDS` is at
    /// least 1 (the first, fd 3, is taken; the unit is meant to pass one).
    public static func fromSystemd(environment: [String: String]) -> ListenAddress? {
        guard let pid = environment["LISTEN_PID"].flatMap({ Int32($0) }), pid == getpid(),
            let count = environment["LISTEN_FDS"].flatMap({ Int($0) }), (1...64).contains(count)
        else { return nil }
        return .inherited(descriptor: 3)
    }

    static func family(of host: String) -> Int32? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return AF_INET }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return AF_INET6 }
        return nil
    }
}
