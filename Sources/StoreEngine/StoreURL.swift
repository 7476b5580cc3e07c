internal import Foundation

/// Where a store is, parsed once for the command line, the service, `doctor` and the tests: a path or
/// `sqlite:PATH` for a SQLite file, `postgresql://...` or `postgres://...` (any libpq URL) for a PostgreSQL
/// database. Anything else that looks like a URL (`mysql://x`, `http://...`) is refused rather than taken for a
/// relative path.
///
/// ```swift
/// let url = try StoreURL(parsing: "sqlite:/var/lib/wearhouse/health.db")
/// print(url)   // /var/lib/wearhouse/health.db
/// ```
public enum StoreURL: Hashable, Sendable, CustomStringConvertible {
    case sqlite(path: String)
    /// The libpq connection string as given (it may hold a password: show ``description``, never this).
    case postgresql(url: String)

    /// Why a store URL was refused.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Longer store URLs are refused (a path is at most `PATH_MAX`, 4,096 bytes, on Linux).
    public static let maximumLength = 4096

    /// Parses `text`.
    ///
    /// - Throws: ``ParseError`` for an empty path, an unknown scheme or an absurd length.
    public init(parsing text: String) throws(ParseError) {
        guard text.utf8.count <= Self.maximumLength else {
            throw ParseError(description: "the store URL is longer than \(Self.maximumLength) bytes")
        }
        if text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") {
            self = .postgresql(url: text)
            return
        }
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            // `sqlite:///abs/path` and `sqlite://relative` are common spellings of the same thing.
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else { throw ParseError(description: "empty store path in '\(text)'") }
            self = .sqlite(path: path)
            return
        }
        if let scheme = Self.scheme(of: text) {
            throw ParseError(
                description: "unknown store scheme '\(scheme)://' (a store is a path, sqlite:PATH or postgresql://...)")
        }
        guard !text.isEmpty else { throw ParseError(description: "empty store path") }
        self = .sqlite(path: text)
    }

    /// `scheme` when `text` starts with `scheme://` (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`).
    private static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return nil }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return String(scheme)
    }

    public var isPostgreSQL: Bool {
        if case .postgresql = self { return true }
        return false
    }

    /// For people and logs: the SQLite path, or the PostgreSQL URL without its password.
    public var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgresql(let url): Self.redacted(url)
        }
    }

    /// `url` with any password replaced by `***` (in a URL's user info or as a `password=` keyword).
    public static func redacted(_ url: String) -> String {
        if var components = URLComponents(string: url), components.password != nil {
            components.password = "***"
            return components.string ?? url
        }
        return url.split(separator: " ", omittingEmptySubsequences: false).map {
            $0.hasPrefix("password=") ? "password=***" : String($0)
        }.joined(separator: " ")
    }
}
