import Foundation

/// How destructive commands (`delete`, `store prune`) make sure: `--yes` goes ahead, a terminal is asked y/N,
/// anything else is refused as a usage error, so a script never deletes without saying so.
enum Confirmation {
    /// Whether standard input is a terminal someone can answer on.
    static var canAsk: Bool { isatty(STDIN_FILENO) != 0 }

    /// The refusal when there is no `--yes` and no terminal to ask on: `action` is what would have happened
    /// ("delete samples").
    static func refusal(_ action: String) -> String {
        "refusing to \(action) without confirmation: standard input is not a terminal; pass --yes to go ahead "
            + "(or --dry-run to count them)"
    }

    /// Asks `question` on stderr, reads one line of standard input (at most 64 bytes are looked at); true only
    /// for `y` or `yes`.
    static func ask(_ question: String, console: Console) -> Bool {
        console.err("\(question) [y/N] ")
        guard let answer = readLine(strippingNewline: true) else { return false }
        return ["y", "yes"].contains(answer.prefix(64).trimmingCharacters(in: .whitespaces).lowercased())
    }
}
