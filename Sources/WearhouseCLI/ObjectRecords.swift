import Foundation
import GATT
import Health

/// Correlations and workouts at the command line's edges (`samples`, `export`, `import-samples`): one JSON object
/// each in the shape of `samples --format json` (a correlation's members, whole, under `objects`; a workout's own
/// fields, and the ids of its associated samples under `samples`), a table, CSV rows, an Open mHealth data point
/// and a FHIR R4 Observation.
enum ObjectRecords {
    // MARK: JSON

    /// The fields every object has: id, type, interval, provenance (the device whole) and metadata.
    static func common(
        id: UUID, type: HealthType, start: Instant, end: Instant, offset: Int32, source: Source, device: Device?,
        subject: String?, metadata: [String: MetadataValue]
    ) -> [Field] {
        [
            Field("uuid", .string(id.uuidString.lowercased())), Field("type", .string(type.identifier)),
            Field("start", .string(StoreArguments.format(start, offsetSeconds: offset))),
            Field("end", .string(StoreArguments.format(end, offsetSeconds: offset))),
            Field("source", .string(source.identifier)),
            Field("source_version", source.version.map { .string($0) } ?? .null),
            Field("device", device.map(Self.device) ?? .null), Field("subject", subject.map { .string($0) } ?? .null),
            Field("metadata", metadata.isEmpty ? .null : ExportCommand.metadata(metadata)),
        ]
    }

    /// A device with every field it has, as `import-samples` reads it.
    static func device(_ device: Device) -> FieldValue {
        var fields: [Field] = []
        for (name, text) in [
            ("key", device.key), ("name", device.name), ("manufacturer", device.manufacturer),
            ("model", device.model), ("hardware_version", device.hardwareVersion),
            ("firmware_version", device.firmwareVersion), ("software_version", device.softwareVersion),
            ("serial_number", device.serialNumber), ("local_identifier", device.localIdentifier),
        ] {
            if let text { fields.append(Field(name, .string(text))) }
        }
        return .object(fields)
    }

    /// A member sample, whole (its device with every field).
    static func member(_ sample: QuantitySample) -> FieldValue {
        var fields = common(
            id: sample.id, type: sample.type, start: sample.start, end: sample.end, offset: sample.startOffsetSeconds,
            source: sample.source, device: sample.device, subject: sample.subject, metadata: sample.metadata)
        fields.insert(Field("value", .double(sample.value)), at: 4)
        fields.insert(Field("unit", .string(sample.type.canonicalUnit)), at: 5)
        return .object(fields)
    }

    static func fields(_ correlation: Correlation) -> [Field] {
        common(
            id: correlation.id, type: correlation.type, start: correlation.start, end: correlation.end,
            offset: correlation.startOffsetSeconds, source: correlation.source, device: correlation.device,
            subject: correlation.subject, metadata: correlation.metadata)
            + [Field("objects", .list(correlation.objects.map(member)))]
    }

    static func fields(_ workout: Workout, samples: [UUID]) -> [Field] {
        var fields = common(
            id: workout.id, type: .workout, start: workout.start, end: workout.end, offset: workout.startOffsetSeconds,
            source: workout.source, device: workout.device, subject: workout.subject, metadata: workout.metadata)
        fields += [
            Field("activity_type", .string(workout.activityType.name)), Field("duration_s", .double(workout.duration)),
        ]
        for (name, total) in [
            ("total_energy_burned_kcal", workout.totalEnergyBurned), ("total_distance_m", workout.totalDistance),
            ("total_swimming_stroke_count", workout.totalSwimmingStrokeCount),
            ("total_flights_climbed", workout.totalFlightsClimbed),
        ] {
            fields.append(Field(name, total.map { .double($0) } ?? .null))
        }
        fields.append(
            Field(
                "events",
                .list(
                    workout.events.map { event in
                        .object([
                            Field("type", .string(event.kind.name)),
                            Field(
                                "start",
                                .string(StoreArguments.format(event.start, offsetSeconds: workout.startOffsetSeconds))),
                            Field(
                                "end",
                                .string(StoreArguments.format(event.end, offsetSeconds: workout.startOffsetSeconds))),
                            Field("metadata", event.metadata.isEmpty ? .null : ExportCommand.metadata(event.metadata)),
                        ])
                    })))
        if !workout.routes.isEmpty {
            fields.append(Field("routes", .list(workout.routes.map { route(of: workout, $0) })))
        }
        fields.append(Field("samples", .list(samples.map { .string($0.uuidString.lowercased()) })))
        return fields
    }

    /// The order of a route location's numbers in a workout's `routes` (`import-samples` reads the same).
    static let routeColumns = [
        "time", "latitude", "longitude", "altitude_m", "horizontal_accuracy_m", "vertical_accuracy_m",
        "speed_m_per_s", "course_deg",
    ]

    /// A route as `{"metadata", "columns", "locations": [[time, latitude, longitude, altitude, ...], ...]}`: a list
    /// per location, in ``routeColumns``' order (`null` for what the receiver did not know), its time at the
    /// workout's offset; a list rather than an object, so that a day's locations fit in one line.
    static func route(of workout: Workout, _ route: WorkoutRoute) -> FieldValue {
        .object([
            Field("metadata", route.metadata.isEmpty ? .null : ExportCommand.metadata(route.metadata)),
            Field("columns", .list(routeColumns.map { .string($0) })),
            Field(
                "locations",
                .list(
                    route.locations.map { location in
                        .list(
                            [
                                .string(
                                    StoreArguments.format(location.time, offsetSeconds: workout.startOffsetSeconds)),
                                .double(location.latitude), .double(location.longitude),
                            ] + location.optionalNumbers.map { .optional($0) })
                    })),
        ])
    }

    // MARK: Tables

    /// A number as people write it: whole numbers without a fraction (`121`, `612.5`).
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }

    /// `121/79 mmHg`, or the members of a meal by type.
    static func summary(_ correlation: Correlation) -> String {
        if correlation.type == .bloodPressure {
            let systolic = correlation.objects(for: .bloodPressureSystolic).first?.value ?? .nan
            let diastolic = correlation.objects(for: .bloodPressureDiastolic).first?.value ?? .nan
            return "\(number(systolic))/\(number(diastolic)) mmHg"
        }
        return correlation.objects.map { member in
            "\(member.type.identifier) \(number(member.value)) \(member.type.canonicalUnit)"
        }.joined(separator: ", ")
    }

    /// `running 55 min, 10012 m, 612.5 kcal`.
    static func summary(_ workout: Workout) -> String {
        var parts = [
            "\(workout.activityType.name) \(number(((workout.duration / 6).rounded() / 10))) min"
        ]
        if let distance = workout.totalDistance { parts.append("\(number(distance)) m") }
        if let energy = workout.totalEnergyBurned { parts.append("\(number(energy)) kcal") }
        if let strokes = workout.totalSwimmingStrokeCount {
            parts.append("\(number(strokes)) strokes")
        }
        if let flights = workout.totalFlightsClimbed {
            parts.append("\(number(flights)) flights")
        }
        let locations = workout.routeLocationCount
        if locations > 0 { parts.append("route of \(locations) locations") }
        return parts.joined(separator: ", ")
    }

    static func render(
        _ rows: [(
            start: Instant, end: Instant, offset: Int32, summary: String, device: Device?, subject: String?,
            source: Source
        )]
    ) -> String {
        guard !rows.isEmpty else { return "No samples.\n" }
        return table(
            header: ["START", "END", "VALUE", "DEVICE", "SUBJECT", "SOURCE"],
            rows: rows.map { row in
                [
                    StoreArguments.format(row.start, offsetSeconds: row.offset),
                    row.end == row.start ? "" : StoreArguments.format(row.end, offsetSeconds: row.offset), row.summary,
                    row.device?.name ?? row.device?.key ?? "-", row.subject ?? "-", row.source.identifier,
                ]
            })
    }

    // MARK: CSV

    /// A correlation in CSV: its members' rows, then its own row (value: the number of members, unit `count`,
    /// and in the metadata column `{"metadata": ..., "objects": [member ids]}`).
    static func csv(_ correlation: Correlation) -> String {
        var text = correlation.objects.map { ExportCommand.lines($0, format: .csv) }.joined()
        let extra = FieldValue.object([
            Field("metadata", ExportCommand.metadata(correlation.metadata)),
            Field("objects", .list(correlation.objects.map { .string($0.id.uuidString.lowercased()) })),
        ])
        text += row(
            id: correlation.id, type: correlation.type, start: correlation.start, end: correlation.end,
            offset: correlation.startOffsetSeconds, value: .integer(Int64(correlation.objects.count)), unit: "count",
            source: correlation.source, device: correlation.device, subject: correlation.subject, extra: extra)
        return text
    }

    /// A workout in CSV: one row, its duration in s as the value, and in the metadata column its JSON fields
    /// (activity type, totals, events, associated samples, metadata).
    static func csv(_ workout: Workout, samples: [UUID]) -> String {
        let own = fields(workout, samples: samples).filter {
            !["uuid", "type", "start", "end", "source", "source_version", "device", "subject"].contains($0.name)
        }
        return row(
            id: workout.id, type: .workout, start: workout.start, end: workout.end,
            offset: workout.startOffsetSeconds, value: .double(workout.duration), unit: "s", source: workout.source,
            device: workout.device, subject: workout.subject, extra: .object(own))
    }

    private static func row(
        id: UUID, type: HealthType, start: Instant, end: Instant, offset: Int32, value: FieldValue, unit: String,
        source: Source, device: Device?, subject: String?, extra: FieldValue
    ) -> String {
        let cells: [FieldValue] = [
            .string(id.uuidString.lowercased()), .string(type.identifier),
            .string(StoreArguments.format(start, offsetSeconds: offset)),
            .string(StoreArguments.format(end, offsetSeconds: offset)), value, .string(unit),
            .string(source.identifier), source.version.map { .string($0) } ?? .null,
            device.map { .string($0.key) } ?? .null, device?.name.map { .string($0) } ?? .null,
            subject.map { .string($0) } ?? .null, extra,
        ]
        return cells.map(SamplesCommand.csvCell).joined(separator: ",") + "\n"
    }

    // MARK: Open mHealth

    /// A correlation as an Open mHealth data point: blood pressure in `omh:blood-pressure:3.0`'s body
    /// (`systolic_blood_pressure`, `diastolic_blood_pressure` in mmHg), food in a wearhouse schema listing its
    /// members; the whole record (members with their ids) under `header.wearhouse.record` for `import-samples`.
    static func openMHealth(_ correlation: Correlation) -> [Field] {
        let record = ExportCommand.Record(correlation)
        let measures: [Field]
        let schema: (String, String, String)
        if correlation.type == .bloodPressure {
            schema = ("omh", "blood-pressure", "3.0")
            measures = [
                Field(
                    "systolic_blood_pressure",
                    .object([
                        Field("value", .double(correlation.objects(for: .bloodPressureSystolic).first?.value ?? 0)),
                        Field("unit", .string("mmHg")),
                    ])),
                Field(
                    "diastolic_blood_pressure",
                    .object([
                        Field("value", .double(correlation.objects(for: .bloodPressureDiastolic).first?.value ?? 0)),
                        Field("unit", .string("mmHg")),
                    ])),
            ]
        } else {
            schema = ("wearhouse", "food", "1.0")
            measures = [
                Field(
                    "objects",
                    .list(
                        correlation.objects.map { member in
                            .object([
                                Field("type", .string(member.type.identifier)),
                                Field("value", .double(member.value)),
                                Field("unit", .string(member.type.canonicalUnit)),
                            ])
                        }))
            ]
        }
        return ExportCommand.openMHealth(
            record, schema: schema, measures: measures, extra: Field("record", .object(fields(correlation))))
    }

    /// A workout as an Open mHealth `omh:physical-activity:1.2` data point (`activity_name`, `distance`,
    /// `kcal_burned`); the whole record under `header.wearhouse.record` for `import-samples`.
    static func openMHealth(_ workout: Workout, samples: [UUID]) -> [Field] {
        var measures = [Field("activity_name", .string(workout.activityType.name))]
        if let distance = workout.totalDistance {
            measures.append(
                Field("distance", .object([Field("value", .double(distance)), Field("unit", .string("m"))])))
        }
        if let energy = workout.totalEnergyBurned {
            measures.append(
                Field("kcal_burned", .object([Field("value", .double(energy)), Field("unit", .string("kcal"))])))
        }
        return ExportCommand.openMHealth(
            ExportCommand.Record(workout), schema: ("omh", "physical-activity", "1.2"), measures: measures,
            extra: Field("record", .object(fields(workout, samples: samples))))
    }

    // MARK: FHIR

    static func quantity(_ value: Double, unit: String, code: String) -> FieldValue {
        .object([
            Field("value", .double(value)), Field("unit", .string(unit)),
            Field("system", .string("http://unitsofmeasure.org")), Field("code", .string(code)),
        ])
    }

    static func coded(_ code: String, _ display: String) -> FieldValue {
        .object([
            Field(
                "coding",
                .list([
                    .object([
                        Field("system", .string("http://loinc.org")), Field("code", .string(code)),
                        Field("display", .string(display)),
                    ])
                ])), Field("text", .string(display)),
        ])
    }

    /// A correlation as ONE FHIR R4 Observation: blood pressure as the vital-signs blood pressure panel (LOINC
    /// 85354-9, profile `bp`) with components 8480-6 (systolic) and 8462-4 (diastolic) in mm[Hg]; food as an
    /// Observation coded by its text with a component per member (its LOINC where the catalog has one).
    static func fhir(_ correlation: Correlation) -> [Field] {
        let components: [FieldValue] = correlation.objects.map { member in
            let code: FieldValue =
                member.type.loinc.map { coded($0, member.type.identifier) }
                ?? .object([Field("text", .string(member.type.identifier))])
            let unit = member.type.ucum ?? member.type.canonicalUnit
            return .object([
                Field("code", code),
                Field("valueQuantity", quantity(member.value, unit: member.type.canonicalUnit, code: unit)),
            ])
        }
        var fields = ExportCommand.fhirObservation(
            ExportCommand.Record(correlation), category: correlation.type == .bloodPressure ? "vital-signs" : "survey",
            value: Field("component", .list(components)))
        if correlation.type == .bloodPressure {
            if let index = fields.firstIndex(where: { $0.name == "code" }) {
                fields[index] = Field("code", coded("85354-9", "Blood pressure panel with all children optional"))
            }
            fields.insert(
                Field(
                    "meta",
                    .object([Field("profile", .list([.string("http://hl7.org/fhir/StructureDefinition/bp")]))])),
                at: 2)
        }
        return fields
    }

    /// A workout as a FHIR R4 Observation (R4 has no resource for an exercise session): category `activity`,
    /// code text `workout`, the activity type as `valueCodeableConcept` (HealthKit's name and number), the
    /// interval as `effectivePeriod`, and components for the duration (LOINC 55411-3, min), the energy (LOINC
    /// 41981-2, kcal), the distance (m), strokes and flights (count); events as extensions, and each route as an
    /// extension holding it as a GeoJSON attachment (``geoJSON(_:)``).
    static func fhir(_ workout: Workout) -> [Field] {
        var components: [FieldValue] = [
            .object([
                Field("code", coded("55411-3", "Exercise duration")),
                Field("valueQuantity", quantity(workout.duration / 60, unit: "min", code: "min")),
            ])
        ]
        func add(_ name: String, _ value: Double?, unit: String, code: String, loinc: String? = nil) {
            guard let value else { return }
            components.append(
                .object([
                    Field("code", loinc.map { coded($0, name) } ?? .object([Field("text", .string(name))])),
                    Field("valueQuantity", quantity(value, unit: unit, code: code)),
                ]))
        }
        add("totalEnergyBurned", workout.totalEnergyBurned, unit: "kcal", code: "kcal", loinc: "41981-2")
        add("totalDistance", workout.totalDistance, unit: "m", code: "m")
        add("totalSwimmingStrokeCount", workout.totalSwimmingStrokeCount, unit: "count", code: "1")
        add("totalFlightsClimbed", workout.totalFlightsClimbed, unit: "count", code: "1")
        var fields = ExportCommand.fhirObservation(
            ExportCommand.Record(workout), category: "activity", value: Field("component", .list(components)))
        fields.insert(
            Field(
                "valueCodeableConcept",
                .object([
                    Field(
                        "coding",
                        .list([
                            .object([
                                Field("system", .string("urn:wearhouse:workout-activity-type")),
                                Field("code", .string(workout.activityType.name)),
                                Field(
                                    "display",
                                    .string("\(workout.activityType.name) (\(workout.activityType.rawValue))")),
                            ])
                        ])), Field("text", .string(workout.activityType.name)),
                ])), at: fields.count - 1)
        // Events and routes, one extension each.
        let offset = workout.startOffsetSeconds
        let events: [FieldValue] = workout.events.map { event in
            let period = FieldValue.object([
                Field("start", .string(StoreArguments.format(event.start, offsetSeconds: offset))),
                Field("end", .string(StoreArguments.format(event.end, offsetSeconds: offset))),
            ])
            return .object([
                Field("url", .string("urn:wearhouse:workout-event")),
                Field(
                    "extension",
                    .list([
                        .object([Field("url", .string("type")), Field("valueCode", .string(event.kind.name))]),
                        .object([Field("url", .string("period")), Field("valuePeriod", period)]),
                    ])),
            ])
        }
        let routes: [FieldValue] = workout.routes.map { route in
            .object([
                Field("url", .string("urn:wearhouse:workout-route")),
                Field(
                    "valueAttachment",
                    .object([
                        Field("contentType", .string("application/geo+json")),
                        Field("data", .string(Data(geoJSON(route).json.utf8).base64EncodedString())),
                    ])),
            ])
        }
        if !events.isEmpty || !routes.isEmpty { fields.append(Field("extension", .list(events + routes))) }
        return fields
    }

    /// A route as a GeoJSON (RFC 7946) Feature: a LineString of `[longitude, latitude]` or `[longitude, latitude,
    /// altitude]` positions (a Point for a route of one location), and under `properties` the route's metadata,
    /// each location's time (UTC) and what else the receiver knew (`null` where it did not), in the same order.
    static func geoJSON(_ route: WorkoutRoute) -> FieldValue {
        let positions: [FieldValue] = route.locations.map { location in
            var position: [FieldValue] = [.double(location.longitude), .double(location.latitude)]
            if let altitude = location.altitude { position.append(.double(altitude)) }
            return .list(position)
        }
        func column(_ value: (RouteLocation) -> Double?) -> FieldValue {
            .list(route.locations.map { .optional(value($0)) })
        }
        return .object([
            Field("type", .string("Feature")),
            Field(
                "geometry",
                .object(
                    positions.count == 1
                        ? [Field("type", .string("Point")), Field("coordinates", positions[0])]
                        : [Field("type", .string("LineString")), Field("coordinates", .list(positions))])),
            Field(
                "properties",
                .object([
                    Field("metadata", route.metadata.isEmpty ? .null : ExportCommand.metadata(route.metadata)),
                    Field(
                        "times",
                        .list(route.locations.map { .string(StoreArguments.format($0.time, offsetSeconds: 0)) })),
                    Field("horizontal_accuracy_m", column(\.horizontalAccuracy)),
                    Field("vertical_accuracy_m", column(\.verticalAccuracy)),
                    Field("speed_m_per_s", column(\.speed)), Field("course_deg", column(\.course)),
                ])),
        ])
    }
}
