import Foundation
import TestSupport
import Testing

/// The `console` blocks of a page in docs/: each `$ ` line (an app, run as a non-root user) and `# ` line (the
/// owner, as root), followed by the output it prints, grouped by the page's `## ` sections.
struct ConsoleExamples {
    struct Step {
        var command: String
        var owner: Bool
        var expected: [String]
    }

    /// The steps of each section, in order (those before the first `## ` heading form a section of their own).
    let sections: [[Step]]

    init(page: String) throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent(page), encoding: .utf8)
        var sections: [[Step]] = [[]]
        var inConsole = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                inConsole = line == "```console"
                continue
            }
            if !inConsole, line.hasPrefix("## ") {
                sections.append([])
                continue
            }
            guard inConsole else { continue }
            if line.hasPrefix("$ ") || line.hasPrefix("# ") {
                sections[sections.count - 1].append(Step(String(line.dropFirst(2)), line.hasPrefix("# "), []))
            } else if !sections[sections.count - 1].isEmpty {
                let last = sections[sections.count - 1].count - 1
                sections[sections.count - 1][last].expected.append(line)
            }
        }
        self.sections = sections.filter { !$0.isEmpty }
    }

    /// Runs `steps` in order on `service` with `/bin/sh -c`, the app's as `user`: each must succeed unless its
    /// output is a failed call, and print what the page prints (exactly as UID 1000, whose ids the pages show;
    /// otherwise the first word of each line, and that a call failed).
    static func check(_ steps: [Step], on service: RunningService, as user: uid_t) throws {
        for step in steps {
            let result = try service.run(["/bin/sh", "-c", step.command], as: step.owner ? nil : user)
            let output = (result.stdout + result.stderr).split(separator: "\n").map(String.init)
            let fails = step.expected.first?.hasPrefix("Call failed") == true
            #expect((result.status == 0) != fails, "\(step.command): \(result.stderr)")
            if user == 1000 {
                #expect(output == step.expected, "\(step.command)")
            } else {
                let shape = { (lines: [String]) in
                    lines.map { $0.hasPrefix("Call failed") ? "Call failed" : String($0.prefix { $0 != " " }) }
                }
                #expect(shape(output) == shape(step.expected), "\(step.command)")
            }
        }
    }
}

extension ConsoleExamples.Step {
    init(_ command: String, _ owner: Bool, _ expected: [String]) {
        self.init(command: command, owner: owner, expected: expected)
    }
}

/// docs/app-flows.md: issue 16's three app flows from the shell, each section against a fresh service (the real
/// binary) on a private bus, so that the page cannot drift from what the service does.
@Suite(.serialized, .enabled(if: MultiUser.available, MultiUser.skipReason))
struct AppFlowDocsTests {
    @Test func theAppFlowsRunAsPrinted() async throws {
        let examples = try ConsoleExamples(page: "docs/app-flows.md")
        #expect(examples.sections.count == 3)
        for steps in examples.sections {
            let service = try await RunningService.start()
            defer { service.stop() }
            try ConsoleExamples.check(steps, on: service, as: MultiUser.users[0])
        }
    }
}
