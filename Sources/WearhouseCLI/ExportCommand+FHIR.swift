import Foundation
import GATT
import Health

/// FHIR R4's vital-signs profiles (hl7.org/fhir/R4/observation-vitalsigns.html) for the single quantities that have
/// one: the profile's LOINC code (and, for oxygen saturation, the second code the profile requires), the UCUM unit
/// it wants, and how a stored value (in the type's canonical unit) becomes one in that unit.
struct VitalSignProfile {
    /// `meta.profile`.
    let url: String
    /// Codes, the profile's own first: (LOINC code, display).
    let codes: [(String, String)]
    /// The UCUM code, and the text `unit`.
    let ucum: String
    let unit: String
    /// From the canonical unit to `ucum`: a factor (percent from HealthKit's fraction, cm from m).
    let factor: Double

    static let byType: [String: VitalSignProfile] = [
        "bodyMass": VitalSignProfile(
            url: "http://hl7.org/fhir/StructureDefinition/bodyweight", codes: [("29463-7", "Body weight")],
            ucum: "kg", unit: "kg", factor: 1),
        "height": VitalSignProfile(
            url: "http://hl7.org/fhir/StructureDefinition/bodyheight", codes: [("8302-2", "Body height")],
            ucum: "cm", unit: "cm", factor: 100),
        "bodyTemperature": VitalSignProfile(
            url: "http://hl7.org/fhir/StructureDefinition/bodytemp", codes: [("8310-5", "Body temperature")],
            ucum: "Cel", unit: "Cel", factor: 1),
        "oxygenSaturation": VitalSignProfile(
            url: "http://hl7.org/fhir/StructureDefinition/oxygensat",
            codes: [
                ("2708-6", "Oxygen saturation in Arterial blood"),
                ("59408-5", "Oxygen saturation in Arterial blood by Pulse oximetry"),
            ], ucum: "%", unit: "%", factor: 100),
        "heartRate": VitalSignProfile(
            url: "http://hl7.org/fhir/StructureDefinition/heartrate", codes: [("8867-4", "Heart rate")],
            ucum: "/min", unit: "beats/minute", factor: 1),
        "respiratoryRate": VitalSignProfile(
            url: "http://hl7.org/fhir/StructureDefinition/resprate", codes: [("9279-1", "Respiratory rate")],
            ucum: "/min", unit: "breaths/minute", factor: 1),
    ]

    /// `value × factor`, rounded to 12 significant digits so that 0.97 becomes 97, not 97.00000000000001.
    func converted(_ value: Double) -> Double {
        guard factor != 1, value != 0, value.isFinite else { return value }
        let scaled = value * factor
        let digits = 12 - Int(log10(abs(scaled)).rounded(.up))
        let power = pow(10, Double(max(0, min(digits, 15))))
        return (scaled * power).rounded() / power
    }
}

extension ExportCommand {
    /// A FHIR R4 Observation of a sample: a vital sign by its profile (``VitalSignProfile``), a category sample
    /// as `valueCodeableConcept` (its value's name, in a code system of the type's values), any other quantity as
    /// `valueQuantity` in UCUM.
    static func fhirObservation(_ sample: QuantitySample) -> [Field] {
        if sample.type.kind == .category {
            let name = SamplesCommand.categoryName(sample)
            return fhirObservation(
                Record(sample), category: "activity", codes: [],
                value: Field(
                    "valueCodeableConcept",
                    .object([
                        Field(
                            "coding",
                            .list([
                                .object([
                                    Field("system", .string("urn:wearhouse:category:\(sample.type.identifier)")),
                                    Field("code", .string(name)), Field("display", .string(name)),
                                ])
                            ])),
                        Field("text", .string(name)),
                    ])))
        }
        if let profile = VitalSignProfile.byType[sample.type.identifier] {
            return fhirObservation(
                Record(sample), category: "vital-signs", codes: profile.codes, profile: profile.url,
                value: quantity(profile.converted(sample.value), unit: profile.unit, code: profile.ucum))
        }
        let percent = sample.type.ucum == "%"
        let ucum: (unit: String, code: String) =
            switch sample.type.canonicalUnit {
            case "count/min": ("/min", "/min")
            case "count":
                (
                    sample.type.identifier == "stepCount" ? "steps" : "count",
                    sample.type.identifier == "stepCount" ? "{steps}" : "1"
                )
            default: (sample.type.ucum ?? sample.type.canonicalUnit, sample.type.ucum ?? sample.type.canonicalUnit)
            }
        let value =
            percent
            ? VitalSignProfile(url: "", codes: [], ucum: "%", unit: "%", factor: 100).converted(sample.value)
            : sample.value
        return fhirObservation(
            Record(sample), category: sample.type.identifier == "heartRateVariabilitySDNN" ? "vital-signs" : "activity",
            value: quantity(value, unit: ucum.unit, code: ucum.code))
    }

    static func quantity(_ value: Double, unit: String, code: String) -> Field {
        Field(
            "valueQuantity",
            .object([
                Field("value", .double(value)), Field("unit", .string(unit)),
                Field("system", .string("http://unitsofmeasure.org")), Field("code", .string(code)),
            ]))
    }
}
