import JOSE

/// A value a state file stores as human-readable JSON and reads back exactly:
/// `T(stored: x.stored, path: p) == x`. Decoding checks every type, range and size, since a
/// person may have edited the file, and names the full JSON path of what it refuses.
protocol StoredCodable {
    /// The value as a state file stores it.
    var stored: JSONValue { get }

    /// The value `stored` reads back as; `path` is where it sits in the document (empty at the top).
    init(stored: JSONValue, path: String) throws(StoredStateError)
}
