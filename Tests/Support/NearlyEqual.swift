/// `a` equals `b` to within 1e-9 relative or 1e-9 absolute (`docs/store-semantics.md`, item 12); two `nil`s are equal.
public func nearlyEqual(_ a: Double?, _ b: Double?) -> Bool {
    switch (a, b) {
    case (nil, nil): true
    case (let x?, let y?): abs(x - y) <= 1e-9 * max(1, abs(x), abs(y))
    default: false
    }
}
