/// The decoding policy for every edge case the specifications leave open, in one place, with the reason for
/// each choice. Decoders cite these by name; tests pin each one with a vector.
///
/// The principle: **never invent data, never lose a good reading over a cosmetic defect.** A value whose
/// announced fields are not all there is rejected (a half-read heart rate is a wrong heart rate); bytes that
/// are there but unexplained are ignored (firmware adds fields in later revisions); metadata with reserved
/// values is kept and labelled, not thrown away.
public enum DecodingPolicy {
    /// **Reserved flag bits are ignored; the rest is decoded.** Bits 5-7 of Heart Rate Measurement, 3-7 of RSC
    /// Measurement, 2-7 of CSC Measurement and 5-7 of PAMS are reserved for future use. A later revision may
    /// give them a meaning, but it cannot move the fields we know without breaking every client, so the known
    /// fields stay valid. The bits are kept (`reservedFlags`) and printed so that they show up in diagnostics.
    public static let reservedFlagBits = "ignored, kept as reservedFlags"

    /// **Bytes after the last announced field are ignored** in variable-length characteristics (Heart Rate
    /// Measurement without RR intervals, RSC, CSC, PAMS, the SC Control Point requests). The same
    /// forward-compatibility reason as reserved bits: a newer sensor may append a field.
    /// Fixed-size characteristics (battery, locations, features, System ID, PnP ID, the InfiniTime step count,
    /// the Heart Rate Control Point) must have exactly their size, else ``DecodeError/invalidLength(expected:actual:)``,
    /// because a wrong size there means we are not reading the characteristic we think we are. That includes
    /// zero bytes: an empty fixed-size value is the wrong length.
    public static let trailingBytes = "ignored in variable-length values; fixed-size values must match exactly"

    /// **An empty variable-length value is ``DecodeError/empty``**; a value that ends inside a mandatory or
    /// flagged field is ``DecodeError/truncated(field:offset:needed:available:)``. Missing Energy Expended when
    /// the flag announces it is truncated, never "absent": silently dropping it would corrupt the energy totals.
    public static let missingFields = "empty or truncated, never read as absent"

    /// **RR flag set with no RR bytes is truncated** (the flag says "one or more values are present");
    /// **an odd trailing byte after whole RR intervals is ``DecodeError/malformed(field:offset:reason:)``.**
    /// The RR list has no count, so its length is all we have: an odd length means the sender or the link cut
    /// a value in half, and we cannot tell which of the intervals around it are sound. Dropping the byte
    /// silently (as some parsers do) hides a broken sensor; the whole value is rejected and counted instead.
    /// There is no cap on the number of RR intervals: with a larger MTU a strap may send more than 9.
    public static let rrIntervals = "flag without values: truncated; odd byte: malformed; no count limit"

    /// **Sensor contact 0b01 means "not supported"**, like 0b00: bit 1 means nothing unless bit 2 is set.
    /// "Not supported" is not "not worn" (a Polar H10 sends contact bits 00 while worn).
    public static let sensorContact = "(flags >> 1) & 3: 0 and 1 not supported, 2 not detected, 3 detected"

    /// **Energy Expended 0xFFFF is a valid, saturated value** ("reset required"), not an invalid marker.
    public static let energySaturated = "0xFFFF decodes as 65535 kJ, flagged saturated"

    /// **0 bpm decodes as 0.** It does occur on real devices (usually with contact lost). Whether to store it
    /// is a sample-building decision, not a parsing one: the gateway does not store 0 bpm as heart rate.
    public static let zeroHeartRate = "decoded as 0; the sample builder does not store it"

    /// **Reserved enumeration values are kept and named `reserved`** (Body Sensor Location 7-255, Sensor Location
    /// 17-255, PnP vendor ID source 0 and 3-255, control point op codes and response values). They are
    /// metadata; failing the device over one would lose its measurements.
    public static let reservedEnumerationValues = "kept, named \"reserved\""

    /// **Battery Level above 100 is ``DecodeError/outOfRange(field:offset:value:)``**: 101-255 are reserved and a
    /// value there is a broken sensor or a vendor encoding we do not know, not a charge level to display.
    public static let batteryAboveHundred = "out of range"

    /// **Device Information strings never fail**: cut at the first NUL (real firmware pads with NULs or leaves
    /// garbage after one), then UTF-8 with U+FFFD replacing each maximal invalid subsequence. "" is valid.
    public static let strings = "cut at first NUL, invalid UTF-8 replaced, never an error"

    /// **System ID is decoded strictly per layout**: a byte-swapped `fffe` filler (Mi Band 4) is not repaired.
    public static let systemID = "strict layout, no repair"

    /// **IEEE 11073 SFLOAT/FLOAT special values are values, not errors**: NaN, NRes, +INFINITY, -INFINITY and
    /// the reserved pattern decode as such (``SFloat/special``), keep their bits and re-encode to the same bytes.
    /// A special value is the exact pattern with exponent 0 (11073-20601 defines them as whole values); the same
    /// mantissa under another exponent is an ordinary number. Whether a special value is stored is the sample
    /// builder's decision: it is not (there is no number to store), and it is counted.
    public static let medicalFloatSpecialValues = "kept as special values, exact patterns with exponent 0"

    /// **A Date Time or embedded time stamp never fails a value over its contents**: the seven bytes are kept
    /// as sent. Year, month or day 0 means "unknown"; out-of-range fields (month 13, 25 o'clock, 30 February)
    /// are kept too. ``DateTime/isComplete`` says whether it names a real second, and the gateway uses the
    /// receive time when it does not: a weight is worth storing even when the scale's clock was never set.
    public static let dateTimeValues = "kept as sent; 0 = unknown; incomplete stamps fall back to receive time"

    /// **Flags that announce a group announce all of it**: Weight Measurement's bit 3 covers BMI *and* height,
    /// the SpO2PR-Fast and -Slow bits a pair of SFLOATs each. A value carrying only part of the group is
    /// truncated (one parser reads BMI and height under two separate bits; that is not the layout).
    public static let flaggedGroups = "the whole group or truncated"

    /// **"Measurement unsuccessful" (weight or body fat 0xFFFF) decodes**, flagged `measurement_unsuccessful`
    /// with no number; the sample builder stores nothing for it and counts it.
    public static let measurementUnsuccessful = "0xFFFF decodes, flagged, not stored"

    /// **A Record Access Control Point operand the layout does not define is kept as its bytes**: another op
    /// code, an operator outside 0-6 or a filter type other than 1 (sequence number) and 2 (user-facing time)
    /// decodes with ``RACPOperand/other(_:)`` and re-encodes unchanged, so that a meter's reserved answer shows in
    /// `wearhouse decode` and the log instead of failing. A defined operand that ends early is truncated.
    public static let racpOperands = "undefined operands kept as bytes; defined ones whole or truncated"

    /// **A glucose record's time offset is added to its base time as wall-clock minutes**, carrying into hours,
    /// days and years (the user-facing time); a base time that is not ``DateTime/isComplete`` has no user-facing
    /// time, and the gateway falls back to the receive time as for any incomplete stamp.
    public static let glucoseTimeOffset = "base time + offset in wall-clock minutes; incomplete base: none"
    /// **FTMS "More Data" (flags bit 0) is inverted**: clear, the first field (instantaneous speed, a rower's stroke
    /// rate and count) is present; set, it is absent. `01 00` is a valid, empty record; `00 00` is truncated.
    public static let fitnessMachineMoreData = "bit 0 clear: first field present; set: absent"

    /// **FTMS energy 0xFFFF (0xFF for kcal per minute) is "not available"**: it decodes, prints as null and
    /// counts no energy (the sample builder skips it; the next real total is a delta from the last one).
    public static let fitnessMachineEnergyNotAvailable = "decodes, printed as null, counts nothing"

    /// **Power is signed** (Cycling Power and FTMS sint16): a negative power decodes (a trainer's motor driving the
    /// pedals); the sample builder does not store it (HealthKit's `cyclingPower` is 0 or more) and counts it.
    public static let signedPower = "decoded; negative not stored, counted unusable"

    /// **A Fitness Machine Status op code fixes its parameter's size**: fewer bytes are truncated, more are
    /// ignored; a reserved op code keeps what follows it (so that it re-encodes as received).
    public static let fitnessMachineStatusParameter = "fixed per op code; reserved op codes keep the rest"

    /// **Current Time keeps every field as sent**: its Date Time follows ``dateTimeValues``, a day of week 8-255
    /// is reserved and kept (named `reserved`, ``reservedEnumerationValues``), and the reserved Adjust Reason bits
    /// 4-7 are kept and listed as `reserved_bit_N` (``reservedFlagBits``). It is fixed-size: exactly 10 bytes.
    public static let currentTimeValues = "kept as sent; reserved day of week and adjust reason bits kept"

    /// **A User Control Point keeps what its layout does not define as bytes**: the rest after a reserved op
    /// code, and the bytes after a response's request op code and response value unless it is a successful
    /// register new user (then exactly one byte, the new user index, or truncated). The specification text at
    /// hand does not lay out the parameters of the list all users and delete user(s) responses, so they are
    /// kept as sent rather than guessed. A consent code above 9999 decodes and is flagged
    /// `consent_code_valid: false`: rejecting the request is the device's business, not the decoder's.
    public static let userControlPointParameters =
        "undefined parameters kept as bytes; defined ones whole or truncated; consent code over 9999 flagged"
}
