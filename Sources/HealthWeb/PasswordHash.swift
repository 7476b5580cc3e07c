internal import CGnuTLS

/// The LAN password as `wearhouse web --password-file` holds it: PBKDF2-HMAC-SHA256 (GnuTLS) of the password with a
/// random 16-byte salt, written `pbkdf2-sha256$ITERATIONS$SALT_HEX$HASH_HEX` (`wearhouse web --hash-password` makes
/// the line). The password itself is never stored; a guess is checked by deriving again and comparing in constant
/// time.
public struct PasswordHash: Sendable, Equatable, CustomStringConvertible {
    public static let scheme = "pbkdf2-sha256"
    public static let defaultIterations = 200_000
    /// What a file may ask for: below 10,000 is too cheap to guess against, above 10 M too slow to log in.
    public static let iterationRange = 10_000...10_000_000
    /// The longest password taken (a login form's field).
    public static let maximumPasswordBytes = 1_024

    public let iterations: Int
    public let salt: [UInt8]
    public let hash: [UInt8]

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    /// Derives a new hash of `password` with a fresh salt.
    public init(password: String, iterations: Int = defaultIterations) throws(Invalid) {
        guard Self.iterationRange.contains(iterations) else {
            throw Invalid(description: "iterations must be \(Self.iterationRange)")
        }
        guard !password.isEmpty, password.utf8.count <= Self.maximumPasswordBytes else {
            throw Invalid(description: "a password is 1 to \(Self.maximumPasswordBytes) bytes")
        }
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        self.iterations = iterations
        self.salt = salt
        hash = try Self.derive(Array(password.utf8), salt: salt, iterations: iterations)
    }

    /// Reads the line a password file holds (surrounding white space ignored).
    public init(parsing text: String) throws(Invalid) {
        let line = String(text.filter { !$0.isWhitespace })
        let parts = line.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == Self.scheme else {
            throw Invalid(
                description: "not a '\(Self.scheme)$ITERATIONS$SALT$HASH' line (make one with "
                    + "'wearhouse web --hash-password'; the file must not hold the password itself)")
        }
        guard let iterations = Int(parts[1]), Self.iterationRange.contains(iterations) else {
            throw Invalid(description: "the iteration count must be a number in \(Self.iterationRange)")
        }
        guard let salt = Self.bytes(hex: parts[2]), (8...64).contains(salt.count), let hash = Self.bytes(hex: parts[3]),
            hash.count == 32
        else { throw Invalid(description: "the salt (8-64 bytes) and the hash (32 bytes) must be hex") }
        self.iterations = iterations
        self.salt = salt
        self.hash = hash
    }

    public var description: String {
        "\(Self.scheme)$\(iterations)$\(Self.hex(salt))$\(Self.hex(hash))"
    }

    /// Whether `password` is the one hashed; the comparison takes the same time wherever the hashes differ.
    public func matches(_ password: String) -> Bool {
        let bytes = Array(password.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maximumPasswordBytes,
            let derived = try? Self.derive(bytes, salt: salt, iterations: iterations), derived.count == hash.count
        else { return false }
        var difference: UInt8 = 0
        for index in hash.indices { difference |= derived[index] ^ hash[index] }
        return difference == 0
    }

    static func derive(_ password: [UInt8], salt: [UInt8], iterations: Int) throws(Invalid) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var password = password
        var salt = salt
        let status = password.withUnsafeMutableBytes { key in
            salt.withUnsafeMutableBytes { saltBytes in
                var keyDatum = gnutls_datum_t(
                    data: key.baseAddress?.assumingMemoryBound(to: UInt8.self), size: UInt32(key.count))
                var saltDatum = gnutls_datum_t(
                    data: saltBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: UInt32(saltBytes.count))
                return output.withUnsafeMutableBytes { out in
                    gnutls_pbkdf2(GNUTLS_MAC_SHA256, &keyDatum, &saltDatum, UInt32(iterations), out.baseAddress, 32)
                }
            }
        }
        guard status == 0 else { throw Invalid(description: "PBKDF2 failed (GnuTLS error \(status))") }
        return output
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return text
    }

    static func bytes(hex: Substring) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = FormEncoding.hexValue(digits[index]), let low = FormEncoding.hexValue(digits[index + 1])
            else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
