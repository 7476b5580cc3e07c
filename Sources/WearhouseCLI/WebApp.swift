import Foundation
import Gateway
import Health
import HealthImports
import HealthWeb
import StoreEngine

/// The Health app's pages: server-rendered HTML, no script, charts as inline SVG (``WebChart``). Every store call is
/// made as the owner, so every change is in the access log as the owner's. No health data goes into a URL: the
/// subject picked is kept in the session, samples to delete travel in POST bodies, paging is by page number.
struct WebApp: Sendable {
    let store: any HealthStoreEngine
    let timeZone: TimeZone
    let stepGoal: Int
    let gate: @Sendable () -> SessionGate?

    /// Samples listed per page on a type page, and the furthest page.
    static let pageSize = 50
    static let maximumPage = 200
    /// The most samples a range deletion takes at once.
    static let maximumRangeDeletion = 100_000

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        guard let gate = gate() else { return Self.text(503, "Starting; try again.\n") }
        var response: HTTPResponse
        switch gate.admit(request) {
        case .respond(let answer): response = answer
        case .asset where request.path.hasPrefix("/favicon"):
            response = HTTPResponse(status: 200, contentType: "image/svg+xml", text: WebStyle.icon)
        case .asset: response = HTTPResponse(status: 200, contentType: "text/css; charset=utf-8", text: WebStyle.css)
        case .allow(let session):
            do {
                response = try await route(request, session: session, gate: gate)
            } catch let error as PageError {
                response = page("Not possible", session: session, status: error.status) {
                    "<h1>Not possible</h1><p class=\"error\">\(html(error.message))</p>"
                        + "<p><a href=\"/\">Back to the summary</a></p>"
                }
            } catch {
                response = page("Store error", session: session, status: 500) {
                    "<h1>The store failed</h1><p class=\"error\">\(html("\(error)"))</p>"
                }
            }
        }
        response.headers += SessionGate.securityHeaders
        if request.method == "HEAD" { response.body = .bytes([]) }
        return response
    }

    struct PageError: Error {
        var status: Int
        var message: String
    }

    func route(_ request: HTTPRequest, session: SessionGate.Session, gate: SessionGate) async throws -> HTTPResponse {
        let parts = request.path.split(separator: "/").map(String.init)
        switch (request.method, parts.first ?? "") {
        case ("POST", "subject"):
            let subject = request.form("subject").flatMap { $0.isEmpty ? nil : $0 }
            gate.setSubject(subject, for: session)
            return .redirect(request.form("back") == "me" ? "/me" : "/")
        case (_, ""): return try await summary(session)
        case ("GET", "type") where parts.count == 2: return try await typePage(parts[1], request, session)
        case ("GET", "add"): return try addForm(request.query["type"], session, problem: nil)
        case ("POST", "add"): return try await add(request, session)
        case ("POST", "delete") where parts.count == 2 && parts[1] == "confirm":
            return try await confirmDeletion(request, session)
        case ("POST", "delete"): return try await delete(request, session)
        case ("GET", "apps"): return try await appsPage(session)
        case ("POST", "apps") where parts.count == 2: return try await changeGrants(parts[1], request)
        case ("GET", "sensors"): return try await sensorsPage(session)
        case ("POST", "sensors") where parts.count == 2: return try await changeSensor(parts[1], request, session)
        case ("POST", "priority") where parts.count == 2: return try await changePriority(parts[1], request)
        case ("GET", "me"): return try await mePage(session)
        case ("POST", "me"): return try await changeCharacteristics(request, session)
        case ("GET", "export") where parts.count == 1: return exportPage(session)
        case ("GET", "export") where parts.count == 2 && parts[1] == "download":
            return try download(request, session)
        default:
            return page("Not found", session: session, status: 404) {
                "<h1>Not found</h1><p><a href=\"/\">Back to the summary</a></p>"
            }
        }
    }

    // MARK: Summary

    func summary(_ session: SessionGate.Session) async throws -> HTTPResponse {
        let now = Instant.now
        let today = try dayStart(of: now)
        let weekStart = try dayStart(of: now, minusDays: 6)
        let subjects = try await store.subjects()
        let subject = session.subject
        let filter = subject.map { [$0] }
        var cards: [String] = []
        let heart = try await store.statistics(
            StatisticsQuery(type: .heartRate, buckets: [try bucket(today, now)], subjects: filter), as: .owner
        ).first?.discrete
        let latest = try await store.samples(
            SampleQuery(type: .heartRate, to: now, subjects: filter, ascending: false, limit: 1), as: .owner
        ).samples.first
        let heartDays = try await daily(.heartRate, from: weekStart, to: now, subjects: filter)
        cards.append(
            card(
                title: "Heart rate", link: "/type/heartRate",
                main: latest.map { "\(format($0.value)) <small>bpm now</small>" } ?? "no data",
                details: [
                    ("min today", heart?.minimum), ("max today", heart?.maximum), ("avg today", heart?.average),
                ].map { ($0.0, $0.1.map(format) ?? "-") },
                sparkline: WebChart.sparkline(heartDays.map { $0.discrete?.average })))
        for (type, label, unit) in [
            (HealthType.stepCount, "Steps", "steps"), (.distanceWalkingRunning, "Distance", "m"),
            (.activeEnergyBurned, "Active energy", "kcal"),
        ] {
            let days = try await daily(type, from: weekStart, to: now, subjects: filter)
            let todayTotal = days.last?.sum ?? 0
            let week = days.compactMap(\.sum).reduce(0, +)
            var details = [("last 7 days", format(week))]
            var main = "\(format(todayTotal)) <small>\(unit) today</small>"
            if type == .stepCount {
                details.append(("goal", "\(stepGoal)"))
                let share = min(100, Int(todayTotal / Double(stepGoal) * 100))
                main += "<div class=\"goal\"><span class=\"goal-\(share / 10 * 10)\"></span></div>"
            }
            cards.append(
                card(
                    title: label, link: "/type/\(type.identifier)", main: main, details: details,
                    sparkline: WebChart.sparkline(days.map(\.sum))))
        }
        cards += try await measurementCards(now: now, subjects: filter)
        let sensors = try await sensorRows(limit: 8)
        let picker = subjects.isEmpty ? "" : subjectPicker(subjects, selected: subject, session: session)
        return page("Summary", session: session) {
            "<h1>Summary\(subject.map { " for " + html($0) } ?? "")</h1>" + picker
                + "<p class=\"note\">Today since midnight (\(html(timeZone.identifier))) and the last 7 days.</p>"
                + "<div class=\"cards\">" + cards.joined() + "</div><h2>Sensors</h2>" + sensors
        }
    }

    func card(title: String, link: String, main: String, details: [(String, String)], sparkline: String) -> String {
        "<section class=\"card\"><h2><a href=\"\(link)\">\(html(title))</a></h2><p class=\"big\">\(main)</p>"
            + "<dl>" + details.map { "<dt>\(html($0.0))</dt><dd>\(html($0.1))</dd>" }.joined() + "</dl>"
            + sparkline + "</section>"
    }

    /// The people picker (the choice is kept in the session); `back` names the page it returns to (`me`), and
    /// `none` what no choice means there.
    func subjectPicker(
        _ subjects: [String], selected: String?, session: SessionGate.Session, back: String? = nil,
        none: String = "everyone"
    ) -> String {
        let options =
            ["<option value=\"\"\(selected == nil ? " selected" : "")>\(html(none))</option>"]
            + subjects.map {
                "<option value=\"\(html($0))\"\($0 == selected ? " selected" : "")>\(html($0))</option>"
            }
        return form("/subject", session, id: "subject-picker") {
            (back.map { "<input type=\"hidden\" name=\"back\" value=\"\($0)\">" } ?? "")
                + "<label>Person <select name=\"subject\">\(options.joined())</select></label> <button>Show</button>"
        }
    }

    // MARK: Type pages

    enum Range: String, CaseIterable {
        case day, week, month, year
    }

    func typePage(_ identifier: String, _ request: HTTPRequest, _ session: SessionGate.Session) async throws
        -> HTTPResponse
    {
        guard let type = HealthTypeCatalog.type(identifier) else {
            throw PageError(status: 404, message: "There is no type '\(identifier)'.")
        }
        // Routes have no page of their own: they are drawn with their workouts.
        if type.kind == .route { return .redirect("/type/workout") }
        let range = request.query["range"].flatMap(Range.init(rawValue:)) ?? .day
        let pageNumber = min(Self.maximumPage, max(1, request.query["page"].flatMap { Int($0) } ?? 1))
        var endDay: Instant
        if let date = request.query["date"] {
            guard let local = try? LocalDateTime(parsing: date), local.isMidnight else {
                throw PageError(status: 400, message: "date must be a day, YYYY-MM-DD")
            }
            endDay = StatisticsBuckets.instant(for: try local.adding(days: 1), in: timeZone)
        } else {
            endDay = try dayStart(of: .now, minusDays: -1)
        }
        var (from, interval): (Instant, String) =
            switch range {
            case .day: (try dayStart(of: endDay, minusDays: 1), "1h")
            case .week: (try dayStart(of: endDay, minusDays: 7), "1d")
            case .month: (try dayStart(of: endDay, minusDays: 30), "1d")
            case .year: (try mondayStart(of: try dayStart(of: endDay, minusDays: 364)), "1w")
            }
        if type.identifier == "sleepAnalysis", range == .day {
            // A day of sleep is the night that ends that morning: noon before to noon.
            from = from.adding(milliseconds: -43_200_000)
            endDay = endDay.adding(milliseconds: -43_200_000)
        }
        let filter = session.subject.map { [$0] }
        let localEnd = try StatisticsBuckets.localTime(at: endDay.adding(milliseconds: -1), in: timeZone)
        let dateText = String(localEnd.description.prefix(10))
        if type.kind == .workout || type.kind == .correlation {
            return try await objectPage(
                type, from: from, to: endDay, subjects: filter, page: pageNumber,
                link: "/type/\(type.identifier)?range=\(range)&amp;date=\(dateText)",
                navigation: rangeNavigation(type, range, dateText), session)
        }
        let buckets = try StatisticsBuckets(
            interval: try StatisticsInterval(parsing: interval),
            anchor: interval == "1w" ? .instant(from) : .defaultAnchor, timeZone: timeZone
        ).buckets(from: from, to: endDay)
        let query = StatisticsQuery(type: type, buckets: buckets, subjects: filter)
        // A discrete type's chart and its sources come from one read separated by source (every source counts in
        // a discrete type's statistics, so the chart is their combination): the range is read once, not twice.
        let perSource =
            type.aggregation == .discrete
            ? try await store.statistics(
                StatisticsQuery(type: type, buckets: buckets, subjects: filter, separateBySource: true), as: .owner)
            : nil
        let results: [StatisticsResult]
        if let perSource {
            results = Self.combiningSources(perSource, buckets: buckets)
        } else if type.aggregation == .series {
            results = try await StatsCommand.seriesCounts(query, in: store)
        } else {
            results = try await store.statistics(query, as: .owner)
        }
        // The characteristics are read once (each read is an access-log entry).
        let zones = type == .heartRate ? try await heartRateZones(session) : nil
        let chart = try await typeChart(
            type, results, from: from, to: endDay, range: range, session: session, zones: zones)
        let extras =
            type == .heartRate
            ? try await heartRateExtras(results, from: from, to: endDay, session: session, zones: zones) : ""
        let sources = try await contributingSources(
            type, from: from, to: endDay, subjects: filter,
            perSource: try perSource.map { Self.combiningBuckets($0, into: try bucket(from, endDay)) })
        let priority = try await priorityForm(type, session)

        let statistics =
            type.aggregation == .category
            ? StatsCommand.renderCategories(results, type, byProvenance: false)
            : StatsCommand.render(
                results,
                type.aggregation == .cumulative
                    ? ["sum"]
                    : type.aggregation == .series
                        ? ["count"]
                        : [
                            "count", "avg", "min", "max",
                        ], byProvenance: false, unit: type.canonicalUnit)
        let samples = try await samplesTable(
            type, from: from, to: endDay, subjects: filter, page: pageNumber,
            link: "/type/\(type.identifier)?range=\(range)&amp;date=\(dateText)", session)
        return page(type.identifier, session: session) {
            "<h1>\(html(type.identifier))\(type.canonicalUnit.isEmpty ? "" : " <small>(\(html(type.canonicalUnit)))</small>")</h1>"
                + rangeNavigation(type, range, dateText) + chart + extras
                + "<h2>Sources</h2>" + sources + priority
                + "<h2>Statistics</h2><pre class=\"stats\">\(html(statistics))</pre>"
                + (type.aggregation == .series ? "" : "<p><a href=\"/add?type=\(type.identifier)\">Add data</a></p>")
                + "<h2>Samples</h2>" + samples + deleteRangeForm(type, from: from, to: endDay, session)
        }
    }

    /// The range tabs (day, week, month, year) and the form that picks the day the range ends.
    func rangeNavigation(_ type: HealthType, _ range: Range, _ dateText: String) -> String {
        let tabs = Range.allCases.map { other in
            "<a class=\"tab\(other == range ? " current" : "")\" href=\"/type/\(type.identifier)?range=\(other)"
                + "&amp;date=\(dateText)\">\(other)</a>"
        }.joined()
        return "<nav class=\"tabs\">" + tabs + "</nav><form method=\"get\" action=\"/type/\(type.identifier)\">"
            + "<input type=\"hidden\" name=\"range\" value=\"\(range)\"><label>Ending <input type=\"date\" name=\"date\" "
            + "value=\"\(dateText)\"></label> <button>Go</button></form>"
    }

    /// The sources table: each source's statistics over the range (`perSource` when the caller has them already).
    func contributingSources(
        _ type: HealthType, from: Instant, to: Instant, subjects: [String]?, perSource: [StatisticsResult]? = nil
    ) async throws -> String {
        guard type.aggregation != .series else { return "<p>-</p>" }
        var results = perSource ?? []
        if perSource == nil {
            results = try await store.statistics(
                StatisticsQuery(
                    type: type, buckets: [try bucket(from, to)], subjects: subjects, separateBySource: true),
                as: .owner)
        }
        guard !results.isEmpty else { return "<p class=\"empty\">No samples in this range.</p>" }
        let merged =
            type.aggregation == .cumulative
            ? try await store.statistics(
                StatisticsQuery(type: type, buckets: [try bucket(from, to)], subjects: subjects),
                as: .owner
            ).first
            : nil
        let rows = results.map { result in
            let value =
                type.aggregation == .cumulative
                ? format(result.sum ?? 0)
                : type.aggregation == .category
                    ? "\(result.categories.map(\.count).reduce(0, +)) samples, "
                        + String(format: "%.1f h", result.categories.map(\.hours).reduce(0, +))
                    : "\(result.discrete?.count ?? 0) samples, avg \(result.discrete?.average.map(format) ?? "-")"
            return "<tr><td>\(html(result.provenance?.description ?? "-"))</td><td>\(html(value))</td></tr>"
        }
        let total = merged.map {
            "<p>Merged total (overlaps counted once, by priority): <strong id=\"merged-total\">\(format($0.sum ?? 0))"
                + "</strong></p>"
        }
        return "<table><tr><th>Source (device)</th><th>Unmerged</th></tr>" + rows.joined() + "</table>" + (total ?? "")
    }

    func samplesTable(
        _ type: HealthType, from: Instant, to: Instant, subjects: [String]?, page: Int, link: String,
        _ session: SessionGate.Session
    ) async throws -> String {
        var query = SampleQuery(
            type: type, from: from, to: to, subjects: subjects, ascending: false, limit: Self.pageSize)
        var rows: [String] = []
        var hasMore = false
        for number in 1...page {
            if type.aggregation == .series {
                let read = try await store.heartbeatSeries(query, as: .owner)
                if number == page {
                    rows = read.series.map { series in
                        sampleRow(
                            id: series.id, start: series.start, end: series.end, offset: series.startOffsetSeconds,
                            value: "\(series.beats.count) beats", source: series.provenance.description,
                            subject: series.subject, metadata: series.metadata)
                    }
                }
                hasMore = read.next != nil
                guard let next = read.next else { break }
                query.cursor = next
            } else {
                let read = try await store.samples(query, as: .owner)
                if number == page {
                    rows = read.samples.map { sample in
                        sampleRow(
                            id: sample.id, start: sample.start, end: sample.end, offset: sample.startOffsetSeconds,
                            value: format(sample.value), source: sample.provenance.description,
                            subject: sample.subject, metadata: sample.metadata)
                    }
                }
                hasMore = read.next != nil
                guard let next = read.next else { break }
                query.cursor = next
            }
        }
        guard !rows.isEmpty else { return "<p class=\"empty\">No samples in this range.</p>" }
        return tickableList(
            type, rows: rows, valueHeading: "Value", button: "Delete the samples ticked…", page: page,
            hasMore: hasMore, link: link, session)
    }

    /// Rows of ``sampleRow(id:start:end:offset:value:source:subject:metadata:)`` in a form that confirms deleting the
    /// ticked ones, and the pager (`link` and a page number) below.
    func tickableList(
        _ type: HealthType, rows: [String], valueHeading: String, button: String, page: Int, hasMore: Bool,
        link: String, _ session: SessionGate.Session
    ) -> String {
        var pager = ""
        if page > 1 { pager += "<a href=\"\(link)&amp;page=\(page - 1)\" class=\"prev\">newer</a> " }
        if hasMore, page < Self.maximumPage {
            pager += "<a href=\"\(link)&amp;page=\(page + 1)\" class=\"next\">older</a>"
        }
        return form("/delete/confirm", session, id: "samples") {
            "<input type=\"hidden\" name=\"type\" value=\"\(type.identifier)\"><table class=\"samples\"><tr><th></th>"
                + "<th>Start</th><th>End</th><th>\(valueHeading)</th><th>Source (device)</th><th>Subject</th>"
                + "<th>Metadata</th></tr>" + rows.joined() + "</table><button>\(button)</button>"
        } + "<p class=\"pager\">Page \(page) \(pager)</p>"
    }

    func sampleRow(
        id: UUID, start: Instant, end: Instant, offset: Int32, value: String, source: String, subject: String?,
        metadata: [String: MetadataValue]
    ) -> String {
        let meta = metadata.keys.sorted().map { key in "\(key)=\(metadata[key].map { describe($0) } ?? "")" }
        return "<tr><td><input type=\"checkbox\" name=\"id\" value=\"\(id.uuidString)\" aria-label=\"select\"></td>"
            + "<td>\(time(start, offset))</td><td>\(time(end, offset))</td><td class=\"num\">\(html(value))</td>"
            + "<td>\(html(source))</td><td>\(html(subject ?? "-"))</td><td>\(html(meta.joined(separator: ", ")))</td></tr>"
    }

    func describe(_ value: MetadataValue) -> String {
        switch value {
        case .string(let text): text
        case .bool(let flag): flag ? "true" : "false"
        default: "\(value)"
        }
    }

    func deleteRangeForm(_ type: HealthType, from: Instant, to: Instant, _ session: SessionGate.Session) -> String {
        let start = localInput(from)
        let end = localInput(to)
        return "<h2>Delete a range</h2>"
            + form("/delete/confirm", session, id: "delete-range") {
                "<input type=\"hidden\" name=\"type\" value=\"\(type.identifier)\"><label>From <input "
                    + "type=\"datetime-local\" step=\"1\" name=\"from\" value=\"\(start)\" required></label> <label>To "
                    + "<input type=\"datetime-local\" step=\"1\" name=\"to\" value=\"\(end)\" required></label> "
                    + "<button>Delete this range…</button>"
            }
    }

    // MARK: Adding

    /// The quantity and category types a person can enter by hand (heartbeat series come from sensors only; the
    /// other kinds are not one value).
    static var enterable: [HealthType] { HealthTypeCatalog.all.filter(\.isSampleType) }

    func addForm(_ identifier: String?, _ session: SessionGate.Session, problem: String?, status: Int = 200) throws
        -> HTTPResponse
    {
        let chosen = identifier.flatMap(HealthTypeCatalog.type) ?? .heartRate
        let options = Self.enterable.map {
            "<option value=\"\($0.identifier)\"\($0 == chosen ? " selected" : "")>\($0.identifier) (\($0.canonicalUnit))</option>"
        }.joined()
        let now = localInput(.now)
        return page("Add data", session: session, status: status) {
            "<h1>Add data</h1>" + (problem.map { "<p class=\"error\" id=\"problem\">\(html($0))</p>" } ?? "")
                + form("/add", session, id: "add") {
                    "<label>Type <select name=\"type\">\(options)</select></label><label>Value <input name=\"value\" "
                        + "inputmode=\"decimal\" required></label><label>Start <input type=\"datetime-local\" step=\"1\" "
                        + "name=\"start\" value=\"\(now)\" required></label><label>End (empty: the start) <input "
                        + "type=\"datetime-local\" step=\"1\" name=\"end\"></label><label>Person (optional) <input "
                        + "name=\"subject\" value=\"\(html(session.subject ?? ""))\" maxlength=\"256\"></label>"
                        + "<button>Save</button>"
                }
                + "<p class=\"note\">Times are in \(html(timeZone.identifier)). Entries are marked as entered by "
                + "hand (wasUserEntered) and come from the source wearhouse-web.</p>"
        }
    }

    func add(_ request: HTTPRequest, _ session: SessionGate.Session) async throws -> HTTPResponse {
        let identifier = request.form("type") ?? ""
        func refuse(_ problem: String) throws -> HTTPResponse {
            try addForm(identifier, session, problem: problem, status: 400)
        }
        guard let type = HealthTypeCatalog.type(identifier), type.aggregation != .series else {
            return try refuse("Pick a type.")
        }
        guard let valueText = request.form("value")?.trimmingCharacters(in: .whitespaces), valueText.count <= 40,
            let value = Double(valueText), value.isFinite
        else { return try refuse("The value must be a number.") }
        guard let start = try localInstant(request.form("start")) else { return try refuse("Give a start time.") }
        let end = try localInstant(request.form("end")) ?? start
        guard end.milliseconds - start.milliseconds <= ImportSamplesCommand.maximumSpanMilliseconds(type) else {
            return try refuse("The sample spans longer than a \(type.identifier) sample may.")
        }
        let subject = request.form("subject").flatMap { $0.isEmpty ? nil : $0 }
        if let subject, subject.utf8.count > ImportSamplesCommand.maximumNameBytes {
            return try refuse("The person's name is longer than \(ImportSamplesCommand.maximumNameBytes) bytes.")
        }
        let offset = Int32(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(start.milliseconds) / 1000)))
        let sample = QuantitySample(
            type: type, start: start, end: end, startOffsetSeconds: offset, value: value,
            source: Source(identifier: "wearhouse-web"), subject: subject,
            metadata: [MetadataKey.wasUserEntered: .bool(true)])
        if let reason = sample.invalidityReason(as: type) { return try refuse("Not saved: \(reason).") }
        let outcomes = try await store.save([sample], as: .owner)
        if case .conflict? = outcomes.first {
            return try refuse("Not saved: another value is stored for this type at this time from this source.")
        }
        let day = try StatisticsBuckets.localTime(at: start, in: timeZone).description.prefix(10)
        return .redirect("/type/\(type.identifier)?range=day&date=\(day)")
    }

    // MARK: Deleting

    /// What a deletion form names: ticked ids, or a type and a range.
    func deletionTarget(_ request: HTTPRequest) async throws -> (type: HealthType, ids: [UUID], what: String) {
        guard let type = HealthTypeCatalog.type(request.form("type") ?? "") else {
            throw PageError(status: 400, message: "The form names no type.")
        }
        let ticked = request.formValues.filter { $0.name == "id" }.map(\.value)
        if !ticked.isEmpty {
            guard ticked.count <= 10_000 else { throw PageError(status: 413, message: "At most 10,000 at once.") }
            let ids = try ticked.map { text throws(PageError) in
                guard let id = UUID(uuidString: text) else {
                    throw PageError(status: 400, message: "'\(text)' is not a sample id.")
                }
                return id
            }
            return (type, ids, "the \(ids.count) \(type.identifier) samples ticked")
        }
        guard let from = try localInstant(request.form("from")), let to = try localInstant(request.form("to")),
            from < to
        else { throw PageError(status: 400, message: "Tick samples, or give a range whose start is before its end.") }
        let query = SampleQuery(type: type, from: from, to: to, strictStart: true)
        guard let ids = try await DeleteCommand.ids(matching: query, in: store, maximum: Self.maximumRangeDeletion)
        else {
            throw PageError(
                status: 413, message: "More than \(Self.maximumRangeDeletion) samples: pick a shorter range.")
        }
        let what =
            "every \(type.identifier) sample that starts from \(localInput(from).replacingOccurrences(of: "T", with: " ")) "
            + "to \(localInput(to).replacingOccurrences(of: "T", with: " ")) (\(timeZone.identifier))"
        return (type, ids, what)
    }

    func confirmDeletion(_ request: HTTPRequest, _ session: SessionGate.Session) async throws -> HTTPResponse {
        let target = try await deletionTarget(request)
        let count = try await store.deletionCount(target.ids, as: .owner)
        let carried = request.formValues.filter { ["type", "id", "from", "to"].contains($0.name) }.map {
            "<input type=\"hidden\" name=\"\(html($0.name))\" value=\"\(html($0.value))\">"
        }.joined()
        return page("Confirm deletion", session: session) {
            "<h1>Delete \(count) sample\(count == 1 ? "" : "s")?</h1><p>This deletes <strong id=\"count\">\(count)</strong>"
                + " sample\(count == 1 ? "" : "s"): \(html(target.what)). It cannot be undone.</p>"
                + form("/delete", session, id: "confirm") {
                    carried + "<input type=\"hidden\" name=\"expected\" value=\"\(count)\"><button class=\"danger\">"
                        + "Delete \(count)</button> <a href=\"/type/\(target.type.identifier)\">Cancel</a>"
                }
        }
    }

    func delete(_ request: HTTPRequest, _ session: SessionGate.Session) async throws -> HTTPResponse {
        let target = try await deletionTarget(request)
        let count = try await store.deletionCount(target.ids, as: .owner)
        guard String(count) == request.form("expected") else {
            return try await confirmDeletion(request, session)  // what would go changed: ask again
        }
        _ = try await store.delete(target.ids, as: .owner)
        return .redirect("/type/\(target.type.identifier)")
    }

    // MARK: Sources and access

    func appsPage(_ session: SessionGate.Session) async throws -> HTTPResponse {
        let apps = try await store.apps()
        let types = HealthTypeCatalog.all.map(\.identifier)
        let sections = apps.map { app -> String in
            let grant = Dictionary(app.grants.map { ($0.type, $0) }, uniquingKeysWith: { $1 })
            let rows = types.map { type in
                let read = grant[type]?.read == true ? " checked" : ""
                let share = grant[type]?.share == true ? " checked" : ""
                return "<tr><td>\(type)</td><td><input type=\"checkbox\" name=\"read\" value=\"\(type)\"\(read) "
                    + "aria-label=\"read \(type)\"></td><td><input type=\"checkbox\" name=\"share\" value=\"\(type)\""
                    + "\(share) aria-label=\"write \(type)\"></td></tr>"
            }.joined()
            var pending = ""
            if !app.pendingRead.isEmpty || !app.pendingShare.isEmpty {
                pending =
                    "<div class=\"pending\"><p>Asks to read <strong>\(html(app.pendingRead.joined(separator: ", ")))"
                    + "</strong>\(app.pendingShare.isEmpty ? "" : " and write <strong>\(html(app.pendingShare.joined(separator: ", ")))</strong>")"
                    + ".</p>"
                    + form("/apps/decide", session, id: nil) {
                        "<input type=\"hidden\" name=\"app\" value=\"\(html(app.app))\"><button name=\"answer\" "
                            + "value=\"approve\">Approve</button> <button name=\"answer\" value=\"deny\">Deny</button>"
                    } + "</div>"
            }
            return "<section class=\"app\"><h2>\(html(app.app))</h2>" + pending
                + form("/apps/grants", session, id: nil) {
                    "<input type=\"hidden\" name=\"app\" value=\"\(html(app.app))\"><table><tr><th>Type</th><th>Read"
                        + "</th><th>Write</th></tr>\(rows)</table><button>Save grants</button>"
                } + "</section>"
        }
        let log = try await store.accessLog(limit: 100).map { entry in
            "<tr><td>\(time(entry.at, 0))</td><td>\(html(entry.caller.description))</td><td>\(entry.operation.rawValue)"
                + "</td><td>\(html(entry.type ?? "-"))</td><td class=\"num\">\(entry.sampleCount)</td><td>"
                + "\(entry.denied ? "denied" : "")</td></tr>"
        }.joined()
        return page("Sources & access", session: session) {
            "<h1>Sources &amp; access</h1>"
                + (apps.isEmpty ? "<p class=\"empty\">No app has asked for access yet.</p>" : sections.joined())
                + "<h2>Access log</h2><table class=\"log\"><tr><th>When (UTC)</th><th>Who</th><th>What</th><th>Type</th>"
                + "<th>Samples</th><th></th></tr>\(log)</table>"
        }
    }

    func changeGrants(_ action: String, _ request: HTTPRequest) async throws -> HTTPResponse {
        guard let app = request.form("app"), !app.isEmpty, app.utf8.count <= 512 else {
            throw PageError(status: 400, message: "The form names no app.")
        }
        let known = try await store.apps().first { $0.app == app }
        guard let known else { throw PageError(status: 404, message: "No app '\(app)'.") }
        let types = Set(HealthTypeCatalog.all.map(\.identifier))
        var read: Set<String>
        var share: Set<String>
        switch (action, request.form("answer")) {
        case ("grants", _):
            read = Set(request.formValues.filter { $0.name == "read" }.map(\.value))
            share = Set(request.formValues.filter { $0.name == "share" }.map(\.value))
        case ("decide", let answer?) where answer == "approve" || answer == "deny":
            read = Set(known.grants.filter(\.read).map(\.type))
            share = Set(known.grants.filter(\.share).map(\.type))
            if answer == "approve" {
                read.formUnion(known.pendingRead)
                share.formUnion(known.pendingShare)
            }
        default: throw PageError(status: 400, message: "Unknown action.")
        }
        guard read.isSubset(of: types), share.isSubset(of: types) else {
            throw PageError(status: 400, message: "Unknown type in the form.")
        }
        let all = read.union(share).union(known.grants.map(\.type)).union(known.pendingRead).union(known.pendingShare)
        let grants = all.sorted().map {
            TypeAuthorization(type: $0, read: read.contains($0), share: share.contains($0))
        }
        try await store.setAuthorization(app: app, grants)
        return .redirect("/apps")
    }

    // MARK: Sensors

    func sensorRows(limit: Int) async throws -> String {
        let sensors = try await store.registeredSensors()
        guard !sensors.isEmpty else { return "<p class=\"empty\">No sensors enrolled (wearhouse pair).</p>" }
        let statuses = Dictionary(try await store.sensorStatuses().map { ($0.address, $0) }, uniquingKeysWith: { $1 })
        let rows = sensors.prefix(limit).map { sensor in
            let status = statuses[sensor.address]
            return "<tr><td>\(html(sensor.label ?? sensor.name ?? sensor.address))</td><td>\(html(sensor.address))</td>"
                + "<td>\(html(status?.state ?? "never seen"))</td><td class=\"num\">"
                + "\(status?.batteryPercent.map { "\($0)%" } ?? "-")</td><td>\(status?.lastSampleAt.map { time($0, 0) } ?? "-")"
                + "</td><td>\(html(sensor.subject ?? "-"))</td><td>\(html(sensor.location ?? "-"))</td></tr>"
        }.joined()
        return
            "<table class=\"sensors\"><tr><th>Sensor</th><th>Address</th><th>State</th><th>Battery</th><th>Last sample"
            + " (UTC)</th><th>Wearer</th><th>Location</th></tr>\(rows)</table>"
    }

    func sensorsPage(_ session: SessionGate.Session) async throws -> HTTPResponse {
        let sensors = try await store.registeredSensors()
        let forms = sensors.map { sensor in
            let address = "<input type=\"hidden\" name=\"address\" value=\"\(html(sensor.address))\">"
            return "<section class=\"sensor\"><h3>\(html(sensor.label ?? sensor.address))</h3>"
                + form("/sensors/label", session, id: nil) {
                    address
                        + "<label>Label <input name=\"label\" value=\"\(html(sensor.label ?? ""))\" maxlength=\"256\">"
                        + "</label><label>Wearer <input name=\"subject\" value=\"\(html(sensor.subject ?? ""))\" "
                        + "maxlength=\"256\"></label><label>Location <input name=\"location\" list=\"locations\" value=\""
                        + "\(html(sensor.location ?? ""))\" maxlength=\"64\" placeholder=\"as the sensor says\"></label>"
                        + "<button>Save</button>"
                }
                + form("/sensors/forget", session, id: nil) {
                    address + "<button class=\"danger\">Forget this sensor…</button>"
                } + "</section>"
        }.joined()
        let locations = Self.sensorLocations.map { "<option value=\"\($0)\">" }.joined()
        let table = try await sensorRows(limit: 1_000)
        return page("Sensors", session: session) {
            "<h1>Sensors</h1>" + table + forms + "<datalist id=\"locations\">\(locations)</datalist>"
        }
    }

    /// Locations offered in the form (the gateway takes every name of Body and RSC Sensor Location).
    static let sensorLocations = [
        "chest", "wrist", "finger", "hand", "ear-lobe", "foot", "in-shoe", "top-of-shoe", "hip",
    ]

    func changeSensor(_ action: String, _ request: HTTPRequest, _ session: SessionGate.Session) async throws
        -> HTTPResponse
    {
        guard let address = request.form("address"),
            var sensor = try await store.registeredSensors().first(where: {
                $0.address == address
            })
        else { throw PageError(status: 404, message: "No such sensor.") }
        switch action {
        case "forget" where request.form("confirm") == "yes": _ = try await store.forgetSensor(address)
        case "forget":
            let status = try await store.sensorStatuses().first { $0.address == address }
            let wearer = sensor.subject.map { " (worn by " + html($0) + ")" } ?? ""
            let last = status?.lastSampleAt.map { "; the last arrived " + time($0, 0) + " UTC" } ?? ""
            let name = html(sensor.label ?? sensor.name ?? sensor.address)
            return page("Forget a sensor", session: session) {
                "<h1>Forget \(name)?</h1><p>The gateway stops connecting to \(html(sensor.address))\(wearer) and the "
                    + "pairing is no longer used. Its samples stay in the store\(last).</p>"
                    + form("/sensors/forget", session, id: "confirm") {
                        "<input type=\"hidden\" name=\"address\" value=\"\(html(address))\"><input type=\"hidden\" "
                            + "name=\"confirm\" value=\"yes\"><button class=\"danger\">Forget it</button> "
                            + "<a href=\"/sensors\">Cancel</a>"
                    }
            }
        case "label":
            let label = request.form("label") ?? ""
            let subject = request.form("subject") ?? ""
            let location = request.form("location") ?? ""
            guard label.utf8.count <= 256, subject.utf8.count <= 256 else {
                throw PageError(status: 400, message: "Labels and names are at most 256 bytes.")
            }
            guard location.isEmpty || location.utf8.count <= 64 && SensorEnrolment.isKnownLocation(location) else {
                throw PageError(status: 400, message: "A location is one of \(locationNames), or empty.")
            }
            sensor.label = label.isEmpty ? nil : label
            sensor.subject = subject.isEmpty ? nil : subject
            sensor.location = location.isEmpty ? nil : location
            try await store.register(sensor)
        default: throw PageError(status: 404, message: "Unknown action.")
        }
        return .redirect("/sensors")
    }

    // MARK: Export

    func exportPage(_ session: SessionGate.Session) -> HTTPResponse {
        page("Export", session: session) {
            "<h1>Export</h1><p>Everything in the store\(session.subject.map { " for " + html($0) } ?? ""), every type:</p>"
                + "<ul><li><a href=\"/export/download?format=csv\">CSV</a></li><li><a href=\"/export/download?"
                + "format=ndjson\">NDJSON</a> (what wearhouse import-samples reads back)</li><li><a href=\"/export/"
                + "download?format=fhir\">FHIR Observations</a> (NDJSON)</li><li><a href=\"/export/download?"
                + "format=gpx\">GPX</a> (the workouts' routes)</li></ul>"
        }
    }

    func download(_ request: HTTPRequest, _ session: SessionGate.Session) throws -> HTTPResponse {
        guard let format = request.query["format"].flatMap(ExportCommand.Format.init(rawValue:)), format != .sqlite
        else {
            throw PageError(status: 400, message: "format must be csv, ndjson, fhir or gpx")
        }
        let producer = ExportProducer(store: store, format: format, subjects: session.subject.map { [$0] })
        return HTTPResponse(
            status: 200,
            headers: [
                (
                    "Content-Type",
                    format == .csv
                        ? "text/csv; charset=utf-8" : format == .gpx ? "application/gpx+xml" : "application/x-ndjson"
                ),
                (
                    "Content-Disposition",
                    "attachment; filename=\"wearhouse.\(format == .csv || format == .gpx ? format.rawValue : "ndjson")\""
                ),
            ], body: .stream { try await producer.next() })
    }

    // MARK: Layout

    func page(_ title: String, session: SessionGate.Session, status: Int = 200, _ body: () -> String) -> HTTPResponse {
        let links = [
            ("/", "Summary"), ("/type/heartRate", "Heart rate"), ("/type/stepCount", "Steps"), ("/add", "Add data"),
            ("/apps", "Sources & access"), ("/sensors", "Sensors"), ("/me", "Me"), ("/export", "Export"),
        ].map { "<a href=\"\($0.0)\">\(html($0.1))</a>" }.joined()
        let types = HealthTypeCatalog.all.map { "<a href=\"/type/\($0.identifier)\">\($0.identifier)</a>" }.joined()
        let text =
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\""
            + "width=device-width, initial-scale=1\"><title>\(html(title)) · wearhouse</title><link rel=\"stylesheet\" "
            + "href=\"/style.css\"><link rel=\"icon\" href=\"/favicon.svg\"></head><body><header><nav>\(links)</nav><nav class=\"types\">"
            + "\(types)</nav></header><main>\(body())</main></body></html>\n"
        return HTTPResponse(status: status, contentType: "text/html; charset=utf-8", text: text)
    }

    /// A POST form with the session's CSRF token.
    func form(_ action: String, _ session: SessionGate.Session, id: String?, _ fields: () -> String) -> String {
        "<form method=\"post\" action=\"\(action)\"\(id.map { " id=\"\($0)\"" } ?? "")><input type=\"hidden\" name=\""
            + "\(SessionGate.csrfField)\" value=\"\(session.csrf)\">\(fields())</form>"
    }

    // MARK: Time and numbers

    /// A discrete type's buckets with every source's statistics combined (`results` separated by source).
    static func combiningSources(_ results: [StatisticsResult], buckets: [StatisticsBucket]) -> [StatisticsResult] {
        var parts: [Instant: [DiscreteStatistics.Bucket]] = [:]
        for result in results {
            if let discrete = result.discrete { parts[result.bucket.start, default: []].append(discrete) }
        }
        return buckets.map { bucket in
            StatisticsResult(
                bucket: bucket,
                discrete: .combining(parts[bucket.start] ?? [], start: bucket.start, end: bucket.end))
        }
    }

    /// Each source's statistics over all of `results`' buckets, as one `bucket`, in the order the store gave them.
    static func combiningBuckets(_ results: [StatisticsResult], into bucket: StatisticsBucket) -> [StatisticsResult] {
        var order: [Provenance] = []
        var parts: [Provenance: [DiscreteStatistics.Bucket]] = [:]
        for result in results {
            guard let provenance = result.provenance, let discrete = result.discrete, discrete.count > 0 else {
                continue
            }
            if parts[provenance] == nil { order.append(provenance) }
            parts[provenance, default: []].append(discrete)
        }
        return order.map { provenance in
            StatisticsResult(
                bucket: bucket, provenance: provenance,
                discrete: .combining(parts[provenance] ?? [], start: bucket.start, end: bucket.end))
        }
    }

    func bucket(_ from: Instant, _ to: Instant) throws -> StatisticsBucket {
        let fromLocal = try StatisticsBuckets.localTime(at: from, in: timeZone)
        let toLocal = try StatisticsBuckets.localTime(at: to, in: timeZone)
        return StatisticsBucket(
            start: from, end: to, startOffsetSeconds: offset(at: from), endOffsetSeconds: offset(at: to),
            localStart: fromLocal, localEnd: toLocal)
    }

    func offset(at instant: Instant) -> Int32 {
        Int32(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant.milliseconds) / 1000)))
    }

    /// Local midnight of the day of `instant`, `minusDays` days before.
    func dayStart(of instant: Instant, minusDays: Int = 0) throws -> Instant {
        let local = try StatisticsBuckets.localTime(at: instant, in: timeZone)
        let midnight = try LocalDateTime(year: local.year, month: local.month, day: local.day)
        return StatisticsBuckets.instant(for: try midnight.adding(days: -minusDays), in: timeZone)
    }

    /// Local midnight of the Monday on or before `instant`'s day.
    func mondayStart(of instant: Instant) throws -> Instant {
        let local = try StatisticsBuckets.localTime(at: instant, in: timeZone)
        return try dayStart(of: instant, minusDays: local.weekday - 1)
    }

    /// Daily statistics of `type` from `from` to `to`.
    func daily(_ type: HealthType, from: Instant, to: Instant, subjects: [String]?) async throws -> [StatisticsResult] {
        let buckets = try StatisticsBuckets(interval: try StatisticsInterval(parsing: "1d"), timeZone: timeZone)
            .buckets(from: from, to: to)
        return try await store.statistics(StatisticsQuery(type: type, buckets: buckets, subjects: subjects), as: .owner)
    }

    /// A `datetime-local` field's value (`2025-03-30T08:00[:ss]`) as an instant in the app's zone; `nil` when
    /// empty.
    func localInstant(_ text: String?) throws(PageError) -> Instant? {
        guard let text, !text.isEmpty else { return nil }
        guard text.count <= 40, let local = try? LocalDateTime(parsing: text.count == 16 ? text + ":00" : text) else {
            throw PageError(status: 400, message: "'\(text)' is not a date and time (YYYY-MM-DDTHH:MM:SS).")
        }
        return StatisticsBuckets.instant(for: local, in: timeZone)
    }

    func localInput(_ instant: Instant) -> String {
        guard let local = try? StatisticsBuckets.localTime(at: instant, in: timeZone) else { return "" }
        return String(local.description.prefix(19))
    }

    func time(_ instant: Instant, _ offset: Int32) -> String {
        html(StoreArguments.format(instant, offsetSeconds: offset))
    }

    func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e12 ? String(Int64(value)) : String(format: "%.1f", value)
    }

    static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", text: text)
    }
}

/// Text made safe for HTML content and attribute values.
func html(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.append(character)
        }
    }
    return out
}

/// The export, page by page (``ExportCommand/page(_:of:format:members:)``, what `wearhouse export` writes, in its
/// order: correlations, workouts, then samples and series): each call one page of one type, `nil` at the end.
actor ExportProducer {
    let store: any HealthStoreEngine
    let format: ExportCommand.Format
    let subjects: [String]?
    private var types: ArraySlice<HealthType>
    private var query: SampleQuery?
    private var started = false
    private var finished = false
    /// The members of the correlations written so far (not written again as samples).
    private var members: Set<UUID> = []

    init(store: any HealthStoreEngine, format: ExportCommand.Format, subjects: [String]?) {
        self.store = store
        self.format = format
        self.subjects = subjects
        types = format == .gpx ? [.workout] : ExportCommand.inExportOrder(ExportCommand.exportedTypes)[...]
    }

    func next() async throws -> [UInt8]? {
        if !started {
            started = true
            if format == .csv { return Array(ExportCommand.csvHeader.utf8) }
            if format == .gpx { return Array(GPXWriter.header.utf8) }
        }
        while true {
            if query == nil {
                guard let type = types.popFirst() else {
                    guard format == .gpx, !finished else { return nil }
                    finished = true
                    return Array(GPXWriter.footer.utf8)
                }
                query = SampleQuery(type: type, subjects: subjects, limit: ExportCommand.pageSize)
            }
            guard var current = query else { return nil }
            let text: String
            let next: SampleCursor?
            if format == .gpx {
                var routes = ExportCommand.RoutesWritten()
                (text, next) = try await ExportCommand.gpxPage(current, of: store, written: &routes)
            } else {
                var written = members
                (text, _, next) = try await ExportCommand.page(current, of: store, format: format, members: &written)
                members = written
            }
            if let next {
                current.cursor = next
                query = current
            } else {
                query = nil
            }
            if !text.isEmpty { return Array(text.utf8) }
        }
    }
}
