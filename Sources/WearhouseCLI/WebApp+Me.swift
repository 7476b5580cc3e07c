import Health
import HealthWeb
import StoreEngine

/// The Me page: the characteristics of the person picked (date of birth, biological sex, blood type, Fitzpatrick
/// skin type; `wearhouse me` sets the same), shown and edited by the owner.
extension WebApp {
    func mePage(_ session: SessionGate.Session, problem: String? = nil, status: Int = 200) async throws
        -> HTTPResponse
    {
        let characteristics = try await store.characteristics(of: session.subject, as: .owner)
        let subjects = try await store.subjects()
        let picker =
            subjects.isEmpty
            ? ""
            : subjectPicker(
                subjects, selected: session.subject, session: session, back: "me", none: "the store's own person")
        let fields = HealthTypeCatalog.types(of: .characteristic).map { type -> String in
            let current = characteristics.values[type.identifier]
            if type.values.isEmpty {
                let text = current?.text(for: type) ?? ""
                let age = characteristics.age(at: .now, timeZone: timeZone).map {
                    " <small id=\"age\">age \($0)</small>"
                }
                return
                    "<label>\(html(Self.characteristicLabel(type))) <input type=\"date\" name=\"\(type.identifier)\" "
                    + "value=\"\(html(text))\" min=\"1900-01-01\"></label>\(age ?? "")"
            }
            let options = type.values.map { value in
                let selected = current == .enumerated(value.value) || (current == nil && value.value == 0)
                return "<option value=\"\(value.value == 0 ? "" : html(value.name))\"\(selected ? " selected" : "")>"
                    + "\(html(value.value == 0 ? "not set" : value.name))</option>"
            }.joined()
            return "<label>\(html(Self.characteristicLabel(type))) <select name=\"\(type.identifier)\">\(options)"
                + "</select></label>"
        }
        let whose = session.subject.map { html($0) } ?? "the store's own person"
        return page("Me", session: session, status: status) {
            "<h1>Me <small>(\(whose))</small></h1>" + picker
                + (problem.map { "<p class=\"error\" id=\"problem\">\(html($0))</p>" } ?? "")
                + form("/me", session, id: "me") {
                    fields.map { "<p>\($0)</p>" }.joined() + "<button>Save</button>"
                }
                + "<p class=\"note\">Apps read these with a read grant and never write them. The heart-rate zones "
                + "use the age from the date of birth.</p>"
        }
    }

    static func characteristicLabel(_ type: HealthType) -> String {
        switch type.identifier {
        case "dateOfBirth": "Date of birth"
        case "biologicalSex": "Biological sex"
        case "bloodType": "Blood type"
        case "fitzpatrickSkinType": "Skin type (Fitzpatrick)"
        default: type.identifier
        }
    }

    /// `POST /me`: every characteristic from the form (empty: unset), checked before any is written.
    func changeCharacteristics(_ request: HTTPRequest, _ session: SessionGate.Session) async throws -> HTTPResponse {
        var changes: [(HealthType, Characteristics.Value?)] = []
        for type in HealthTypeCatalog.types(of: .characteristic) {
            guard let text = request.form(type.identifier) else { continue }
            guard !text.isEmpty else {
                changes.append((type, nil))
                continue
            }
            do throws(CharacteristicError) {
                changes.append((type, try Characteristics.Value(parsing: text, for: type)))
            } catch {
                return try await mePage(session, problem: "Not saved: \(error).", status: 400)
            }
        }
        for (type, value) in changes {
            try await store.setCharacteristic(type, to: value, of: session.subject, as: .owner)
        }
        return .redirect("/me")
    }
}
