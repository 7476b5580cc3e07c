internal import CLibXML2
import Foundation
public import Health

/// Workouts' routes as a GPX 1.1 document (`export --format gpx`), written by libxml2's text writer: a track a route,
/// named by its workout's activity and start, a segment of its locations with `<ele>` and `<time>` (UTC, to the
/// millisecond), and the `<speed>`, `<course>`, `<hAcc>` and `<vAcc>` of each location in its `<extensions>`, as
/// Apple's export writes them (the shape the Apple Health import reads in an export's `workout-routes/`). The
/// document is made piece by piece (``header``, ``tracks(of:)``, ``footer``) so that an export writes it as it reads
/// the workouts.
public enum GPXWriter {
    /// The document's start: the XML declaration and the `<gpx>` element's opening with its namespace.
    public static let header =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"wearhouse\" "
        + "xmlns=\"http://www.topografix.com/GPX/1/1\">\n"

    /// The document's end.
    public static let footer = "</gpx>\n"

    /// libxml2 failed to write a workout's tracks (out of memory).
    public struct WriteError: Error, CustomStringConvertible, Sendable {
        public var workout: String
        public var description: String { "cannot write the GPX of workout \(workout): libxml2 ran out of memory" }
    }

    /// A `<trk>` for each route of `workout` (none without routes).
    public static func tracks(of workout: Workout) throws(WriteError) -> String {
        guard !workout.routes.isEmpty else { return "" }
        guard let buffer = xmlBufferCreate() else { throw WriteError(workout: workout.id.uuidString) }
        defer { xmlBufferFree(buffer) }
        guard let writer = xmlNewTextWriterMemory(buffer, 0) else { throw WriteError(workout: workout.id.uuidString) }
        var failed = false
        func check(_ status: Int32) { if status < 0 { failed = true } }
        func element(_ name: String, _ text: String) {
            check(xmlTextWriterWriteElement(writer, name, text))
        }
        _ = xmlTextWriterSetIndent(writer, 1)
        _ = xmlTextWriterSetIndentString(writer, " ")
        let start = RFC3339Time.text(workout.start, offsetSeconds: workout.startOffsetSeconds)
        let name = "\(workout.activityType.name) \(start)"
        for route in workout.routes {
            check(xmlTextWriterStartElement(writer, "trk"))
            element("name", name)
            element("type", workout.activityType.name)
            check(xmlTextWriterStartElement(writer, "trkseg"))
            for location in route.locations {
                check(xmlTextWriterStartElement(writer, "trkpt"))
                check(xmlTextWriterWriteAttribute(writer, "lat", number(location.latitude)))
                check(xmlTextWriterWriteAttribute(writer, "lon", number(location.longitude)))
                if let altitude = location.altitude { element("ele", number(altitude)) }
                element("time", RFC3339Time.text(location.time, offsetSeconds: 0))
                let extras: [(String, Double?)] = [
                    ("speed", location.speed), ("course", location.course), ("hAcc", location.horizontalAccuracy),
                    ("vAcc", location.verticalAccuracy),
                ]
                if extras.contains(where: { $0.1 != nil }) {
                    check(xmlTextWriterStartElement(writer, "extensions"))
                    for (tag, value) in extras { if let value { element(tag, number(value)) } }
                    check(xmlTextWriterEndElement(writer))
                }
                check(xmlTextWriterEndElement(writer))
            }
            check(xmlTextWriterEndElement(writer))
            check(xmlTextWriterEndElement(writer))
        }
        check(xmlTextWriterFlush(writer))
        xmlFreeTextWriter(writer)
        guard !failed, let content = xmlBufferContent(buffer) else { throw WriteError(workout: workout.id.uuidString) }
        return String(cString: content)
    }

    /// A number in its shortest form that reads back the same.
    static func number(_ value: Double) -> String { "\(value)" }
}
