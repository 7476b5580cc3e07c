import Foundation
import GATT
import Support
import TestSupport
import Testing

/// Properties that hold for every characteristic in ``CharacteristicCatalog/all``: round trips through
/// `encoded()`, rejection (or a documented shorter form) for every strict prefix, and no trap on random bytes.
@Suite struct PropertyTests {
    @Test func everyCatalogTypeHasSamplesAndAGenerator() {
        #expect(CharacteristicCatalog.all.count == 49)
        for type in CharacteristicCatalog.all {
            #expect(type is any TestableCharacteristic.Type, "\(type.name) has no test samples")
        }
        #expect(Set(catalogNames).count == catalogNames.count, "names are unique")
        #expect(Set(CharacteristicCatalog.all.map { $0.uuid }).count == catalogNames.count, "UUIDs are unique")
    }

    // MARK: 2. Round trips

    @Test(arguments: catalogNames)
    func canonicalBytesSurviveDecodeThenEncode(name: String) throws {
        let type = try #require(testableType(named: name))
        checkCanonicalSamples(type)
    }

    @Test(arguments: catalogNames)
    func generatedValuesSurviveEncodeThenDecode(name: String) throws {
        let type = try #require(testableType(named: name))
        checkGeneratedValues(type, count: 2_000)
    }

    // MARK: 3. Strict prefixes

    @Test(arguments: catalogNames)
    func everyStrictPrefixIsRejectedOrADocumentedShorterForm(name: String) throws {
        let type = try #require(testableType(named: name))
        checkPrefixes(type)
    }

    // MARK: 4. Random bytes

    @Test(arguments: catalogNames)
    func randomBytesNeverTrapAndRenderAsJSON(name: String) throws {
        let type = try #require(testableType(named: name))
        checkRandomBytes(type, iterations: 10_000)
    }
}

private func checkCanonicalSamples<T: TestableCharacteristic>(_ type: T.Type) {
    #expect(!T.canonicalSamples.isEmpty)
    for sample in T.canonicalSamples {
        let bytes = h(sample)
        do throws(DecodeError) {
            let value = try T(decoding: bytes)
            #expect(value.encoded() == bytes, "\(T.name): \(sample) re-encodes as \(spaced(value.encoded()))")
            #expect(try T(decoding: value.encoded()) == value, "\(T.name): \(sample)")
            if let length = T.fixedLength { #expect(bytes.count == length) }
        } catch {
            Issue.record("\(T.name): canonical sample \(sample) does not decode: \(error)")
        }
    }
}

private func checkGeneratedValues<T: TestableCharacteristic>(_ type: T.Type, count: Int) {
    var rng = SplitMix64(name: T.name, salt: 2)
    var failures: [String] = []
    for _ in 0..<count {
        let value = T.random(using: &rng)
        let bytes = value.encoded()
        if let length = T.fixedLength, bytes.count != length {
            failures.append("\(value) encodes to \(bytes.count) bytes")
        }
        do throws(DecodeError) {
            let decoded = try T(decoding: bytes)
            if decoded != value { failures.append("\(value) -> \(spaced(bytes)) -> \(decoded)") }
            if decoded.encoded() != bytes { failures.append("\(spaced(bytes)) does not re-encode identically") }
        } catch {
            failures.append("\(value) -> \(spaced(bytes)) throws \(error)")
        }
    }
    #expect(failures.isEmpty, "\(T.name): \(failures.count) failures, first: \(failures.prefix(3))")
}

private func checkPrefixes<T: TestableCharacteristic>(_ type: T.Type) {
    var failures: [String] = []
    var samples = T.canonicalSamples.map(h)
    var rng = SplitMix64(name: T.name, salt: 3)
    samples += (0..<200).map { _ in T.random(using: &rng).encoded() }
    for bytes in samples {
        let full: T
        do throws(DecodeError) {
            full = try T(decoding: bytes)
        } catch {
            failures.append("sample \(spaced(bytes)) does not decode: \(error)")
            continue
        }
        for length in 0..<bytes.count {
            let prefix = Array(bytes.prefix(length))
            let what = "prefix \(spaced(prefix)) of \(spaced(bytes))"
            do throws(DecodeError) {
                let shorter = try T(decoding: prefix)
                if !T.isDocumentedShorterForm(shorter, of: full) {
                    failures.append("\(what) decodes to \(shorter), not a documented shorter form")
                }
            } catch {
                if let problem = prefixErrorProblem(error, length: length, fixedLength: T.fixedLength) {
                    failures.append("\(what): \(problem)")
                }
            }
        }
    }
    #expect(failures.isEmpty, "\(T.name): \(failures.count) failures, first: \(failures.prefix(3))")
}

/// Why `error` is the wrong error for a strict prefix of `length` bytes, or `nil` when it is right.
private func prefixErrorProblem(_ error: DecodeError, length: Int, fixedLength: Int?) -> String? {
    if let fixedLength {
        return error == .invalidLength(expected: fixedLength, actual: length)
            ? nil : "\(error), expected invalid_length"
    }
    if length == 0 { return error == .empty ? nil : "\(error), expected empty" }
    switch error {
    case .truncated(_, let offset, let needed, let available):
        guard offset + available == length, needed > available, available >= 0 else {
            return "\(error) does not describe a value of \(length) bytes"
        }
        return nil
    case .malformed(_, let offset, _):
        return offset < length ? nil : "\(error) points past the end"
    case .empty, .invalidLength, .outOfRange:
        return "\(error), expected truncated or malformed"
    }
}

private func checkRandomBytes<T: TestableCharacteristic>(_ type: T.Type, iterations: Int) {
    var rng = SplitMix64(name: T.name, salt: 4)
    var failures: [String] = []
    var decodedCount = 0
    for _ in 0..<iterations {
        let bytes = rng.bytes(count: Int.random(in: 0...40, using: &rng))
        // Through the catalog by UUID, as the gateway and `wearhouse decode` do.
        guard let result = CharacteristicCatalog.decode(bytes, as: T.uuid) else {
            failures.append("the catalog does not know \(T.uuid)")
            break
        }
        switch result {
        case .success(let value):
            decodedCount += 1
            let json = FieldValue.object(value.fields).json
            if !isJSONObject(json) { failures.append("\(spaced(bytes)) renders invalid JSON \(json)") }
            guard let typed = value as? T else {
                failures.append("\(spaced(bytes)) decoded as \(Swift.type(of: value))")
                continue
            }
            if (try? T(decoding: typed.encoded())) != typed {
                failures.append("\(spaced(bytes)) -> \(typed) does not survive encode/decode")
            }
            if let length = T.fixedLength, bytes.count != length {
                failures.append("\(spaced(bytes)) decoded although the size is \(length)")
            }
        case .failure(let error):
            if let problem = randomErrorProblem(error, bytes: bytes, fixedLength: T.fixedLength) {
                failures.append("\(spaced(bytes)): \(problem)")
            }
            _ = error.description
        }
    }
    #expect(failures.isEmpty, "\(T.name): \(failures.count) failures, first: \(failures.prefix(3))")
    #expect(decodedCount > 0 || T.fixedLength != nil, "\(T.name): no random input decoded at all")
}

private func randomErrorProblem(_ error: DecodeError, bytes: [UInt8], fixedLength: Int?) -> String? {
    guard error.offset >= 0, error.offset <= bytes.count else { return "\(error): offset out of bounds" }
    if let fixedLength {
        if bytes.count != fixedLength {
            return error == .invalidLength(expected: fixedLength, actual: bytes.count) ? nil : "\(error)"
        }
        if case .outOfRange(_, let offset, _) = error, offset < bytes.count { return nil }
        return "\(error) for a value of the right size"
    }
    if bytes.isEmpty { return error == .empty ? nil : "\(error), expected empty" }
    return prefixErrorProblem(error, length: bytes.count, fixedLength: nil)
}

/// Whether `text` parses as a JSON object (Foundation's parser, independent of ``FieldValue``).
func isJSONObject(_ text: String) -> Bool {
    guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else { return false }
    return object is [String: Any]
}
