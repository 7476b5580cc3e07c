/// The objects a connection serves: path → interfaces with property values, plus which are object managers.
/// Pure data; ``DBusConnection`` owns one and answers the standard interfaces from it.
struct DBusObjectTree {
    struct Object {
        var interfaces: [DBusExportedInterface]
        var isObjectManager: Bool

        func interface(named name: String) -> DBusExportedInterface? {
            interfaces.first { $0.interface.name == name }
        }

        /// The descriptions of every interface the object answers, standard ones included.
        var allDescriptions: [DBusInterface] {
            var descriptions = [DBusInterface.introspectable, .peer, .properties]
            if isObjectManager { descriptions.append(.objectManager) }
            return descriptions + interfaces.map(\.interface)
        }
    }

    /// Interfaces every object lists in `GetManagedObjects` and `InterfacesAdded`/`Removed`, with no properties,
    /// as BlueZ's own objects do.
    static let listedStandardInterfaces = [DBusInterface.introspectable.name, DBusInterface.properties.name]

    private(set) var objects: [String: Object] = [:]

    subscript(path: String) -> Object? {
        get { objects[path] }
        set { objects[path] = newValue }
    }

    /// Whether any served object (or any of `extraPaths`) lies strictly below `path`.
    func hasDescendants(of path: String, extraPaths: [String] = []) -> Bool {
        (objects.keys + extraPaths).contains { Self.isDescendant($0, of: path) }
    }

    /// The nearest object manager strictly above `path`, which announces `path`'s interfaces.
    func manager(of path: String) -> String? {
        var candidate = path
        while let parent = Self.parent(of: candidate) {
            if objects[parent]?.isObjectManager == true { return parent }
            candidate = parent
        }
        return nil
    }

    /// `GetManagedObjects` for the manager at `path`: every object below it, `a{oa{sa{sv}}}`, sorted by path.
    func managedObjects(under path: String) -> DBusValue {
        let children = objects.keys.filter { Self.isDescendant($0, of: path) }.sorted()
        let entries = children.compactMap { child -> DBusDictEntry? in
            guard let object = objects[child] else { return nil }
            let interfaces = Self.interfacesAndProperties(object.interfaces, standard: true)
            return DBusDictEntry(key: .objectPath(child), value: interfaces)
        }
        return .dictionary(key: .objectPath, value: Self.interfacesType, entries)
    }

    /// `a{sa{sv}}` for `interfaces` (plus the empty standard ones when `standard`), as InterfacesAdded carries it.
    static func interfacesAndProperties(_ interfaces: [DBusExportedInterface], standard: Bool) -> DBusValue {
        var entries = interfaces.map { DBusDictEntry(key: .string($0.interface.name), value: $0.readableProperties) }
        if standard {
            for name in listedStandardInterfaces {
                entries.append(DBusDictEntry(key: .string(name), value: .vardict(ordered: [])))
            }
        }
        return .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), entries)
    }

    /// `a{sa{sv}}`.
    static let interfacesType = DBusType.dictionary(key: .string, value: .dictionary(key: .string, value: .variant))

    /// Introspection XML for `path`: the object's interfaces (only Introspectable and Peer for an intermediate
    /// node) and its direct children. `nil` when nothing is served at or below `path`.
    func introspectionXML(at path: String, extraPaths: [String]) -> String? {
        let object = objects[path]
        let children = childNames(of: path, among: Array(objects.keys) + extraPaths)
        guard object != nil || !children.isEmpty else { return nil }
        let interfaces = object?.allDescriptions ?? [.introspectable, .peer]
        return DBusInterface.introspectionDocument(interfaces: interfaces, children: children)
    }

    /// The first path element below `path` of every path in `paths` under it, sorted and unique.
    func childNames(of path: String, among paths: [String]) -> [String] {
        let prefix = path == "/" ? "/" : path + "/"
        var names = Set<String>()
        for candidate in paths where candidate.hasPrefix(prefix) && candidate != path {
            if let first = candidate.dropFirst(prefix.count).split(separator: "/").first { names.insert(String(first)) }
        }
        return names.sorted()
    }

    static func isDescendant(_ candidate: String, of path: String) -> Bool {
        guard candidate != path else { return false }
        return path == "/" ? candidate.hasPrefix("/") : candidate.hasPrefix(path + "/")
    }

    static func parent(of path: String) -> String? {
        guard path != "/", let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The D-Bus rules for object paths: `/`, or `/`-separated non-empty elements of `[A-Za-z0-9_]`.
    static func isValidPath(_ path: String) -> Bool {
        guard path.hasPrefix("/") else { return false }
        if path == "/" { return true }
        let elements = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        return elements.allSatisfy { element in
            !element.isEmpty
                && element.utf8.allSatisfy { byte in
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                        || byte == 0x5F
                }
        }
    }
}
