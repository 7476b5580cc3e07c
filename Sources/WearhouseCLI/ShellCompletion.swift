import Health
import StoreEngine

/// Shell completion from the commands' declarations (``CommandInfo``): the bash, zsh and fish scripts
/// (``script(for:)``) are small and the same for every command; on each Tab they run `wearhouse __complete WORDS...`
/// with the words after `wearhouse` up to the one being completed, and this type answers from the declarations, so
/// new commands and options complete without a new script.
///
/// The answer is one candidate a line, `word<TAB>description` when there is a description, or the single line
/// ``filesDirective`` when the shell should complete file names itself.
enum ShellCompletion {
    /// The answer that tells the script to complete paths.
    static let filesDirective = ":files"

    /// What completes the last of `words` (the words after `wearhouse`; the last one may be empty). `sensors` gives
    /// the sensor addresses of the store the line names (`--store`), for arguments of kind ``OptionKind/sensor``.
    static func candidates(
        for words: [String], commands: [CommandInfo], sensors: (_ store: String?) async -> [String]
    ) async -> [String] {
        let current = words.last ?? ""
        var before = words.dropLast()[...]
        guard let first = before.popFirst() else {
            let top = commands.map { "\($0.name)\t\($0.abstract)" } + ["help\tShow a command's help."]
            return matching(top + ["--version\tShow the version.", "--help\tShow help information."], current)
        }
        if first == "help" {
            var level = commands
            for word in before {
                guard let next = level.first(where: { $0.path.last == word }) else { return [] }
                level = next.subcommands
            }
            return matching(level.map { "\($0.path.last ?? "")\t\($0.abstract)" }, current)
        }
        guard var info = commands.first(where: { $0.name == first }) else { return [] }
        // Subcommands come right after their group's name.
        while let word = before.first, let sub = info.subcommands.first(where: { $0.path.last == word }) {
            info = sub
            before.removeFirst()
        }
        // Walk the rest: which option values and positionals are already given.
        var positionalCount = 0
        var given: Set<String> = []
        var store: String?
        var pending: OptionInfo?
        var afterDashes = false
        for word in before {
            if let option = pending {
                if option.name == "store" { store = word }
                pending = nil
            } else if !afterDashes, word == "--" {
                afterDashes = true
            } else if !afterDashes, word.hasPrefix("--") {
                let body = word.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                given.insert(name)
                guard let option = info.options.first(where: { $0.name == name }) else { continue }
                if let equals = body.firstIndex(of: "=") {
                    if name == "store" { store = String(body[body.index(after: equals)...]) }
                } else if option.kind != .flag {
                    pending = option
                }
            } else {
                positionalCount += 1
            }
        }
        if let option = pending {
            return await values(of: option.kind, current, prefix: "", store: store, sensors: sensors)
        }
        if !afterDashes, current.hasPrefix("-") {
            if let equals = current.firstIndex(of: "="), current.hasPrefix("--") {
                let name = String(current[current.index(current.startIndex, offsetBy: 2)..<equals])
                guard let option = info.options.first(where: { $0.name == name }) else { return [] }
                let value = String(current[current.index(after: equals)...])
                return await values(of: option.kind, value, prefix: "--\(name)=", store: store, sensors: sensors)
            }
            let open = info.options.filter { $0.isRepeatable || !given.contains($0.name) }
            return matching(open.map { "--\($0.name)\t\(CommandInfo.text(of: $0))" } + ["--help\tShow help."], current)
        }
        if positionalCount == 0, !info.subcommands.isEmpty {
            return matching(info.subcommands.map { "\($0.path.last ?? "")\t\($0.abstract)" }, current)
        }
        let positional =
            positionalCount < info.positionals.count
            ? info.positionals[positionalCount] : info.positionals.last.flatMap { $0.isRepeatable ? $0 : nil }
        guard let positional else { return [] }
        return await values(of: positional.kind, current, prefix: "", store: store, sensors: sensors)
    }

    /// The values of an argument of `kind` that start with `typed`, each after `prefix` (`--type=`).
    private static func values(
        of kind: OptionKind, _ typed: String, prefix: String, store: String?,
        sensors: (_ store: String?) async -> [String]
    ) async -> [String] {
        switch kind {
        case .path:
            return [filesDirective]
        case .choice(let words):
            return matching(words.map { prefix + $0 }, prefix + typed)
        case .list(let allowed?):
            // Completes the item after the last comma.
            let head = typed.lastIndex(of: ",").map { String(typed[...$0]) } ?? ""
            return matching(allowed.map { prefix + head + $0 }, prefix + typed)
        case .sensor:
            return matching(await sensors(store).map { prefix + $0 }, prefix + typed)
        case .flag, .text, .integer, .seconds, .list(nil):
            return []
        }
    }

    /// The candidates (`word` or `word<TAB>description`) whose word starts with `typed`.
    private static func matching(_ candidates: [String], _ typed: String) -> [String] {
        candidates.filter { ($0.split(separator: "\t", maxSplits: 1).first ?? "").hasPrefix(typed) }
    }

    /// The sensor addresses in the store `store` names (`nil`: the default store); none when it cannot be read.
    static func sensorAddresses(store: String?) async -> [String] {
        guard let engine = try? StoreLocation.open(store: store, mustExist: true) else { return [] }
        return (try? await engine.registeredSensors().map(\.address)) ?? []
    }

    /// The shells ``script(for:)`` writes for.
    enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    /// The completion script for `shell`: where it goes, and what it says.
    static func script(for shell: Shell) -> String {
        switch shell {
        case .bash: bashScript
        case .zsh: zshScript
        case .fish: fishScript
        }
    }

    // bash splits words at COMP_WORDBREAKS (':' and '=' among them): the words sent are the line split at blanks,
    // and each answer loses what the line has before bash's own current word.
    private static let bashScript = #"""
        # bash completion for wearhouse (generated by `wearhouse __completion bash`; the answers come from
        # `wearhouse __complete`, so they follow the commands of the installed binary).
        _wearhouse() {
            local line=${COMP_LINE:0:COMP_POINT} cur=${COMP_WORDS[COMP_CWORD]}
            local -a words
            read -r -a words <<< "$line"
            [[ $line == *[[:space:]] ]] && words+=("")
            local full=${words[${#words[@]}-1]}
            local out
            out=$("${words[0]}" __complete "${words[@]:1}" 2>/dev/null) || return 0
            if [[ $out == ":files" ]]; then
                compopt -o default 2>/dev/null
                COMPREPLY=()
                return 0
            fi
            local prefix=${full%"$cur"}
            [[ $cur == [=:] ]] && prefix=${full%?}
            COMPREPLY=()
            local candidate
            while IFS= read -r candidate; do
                candidate=${candidate%%$'\t'*}
                [[ -n $candidate ]] && COMPREPLY+=("${candidate#"$prefix"}")
            done <<< "$out"
            return 0
        }
        complete -o nosort -F _wearhouse wearhouse 2>/dev/null || complete -F _wearhouse wearhouse

        """#

    private static let zshScript = #"""
        #compdef wearhouse
        # zsh completion for wearhouse (generated by `wearhouse __completion zsh`; the answers come from
        # `wearhouse __complete`, so they follow the commands of the installed binary).
        local -a lines described
        local line word
        lines=("${(@f)$("${words[1]}" __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
        if [[ ${lines[1]} == ":files" ]]; then
            _files
            return
        fi
        for line in $lines; do
            [[ -z $line ]] && continue
            word=${line%%$'\t'*}
            if [[ $line == *$'\t'* ]]; then
                described+=("${word//:/\\:}:${line#*$'\t'}")
            else
                described+=("${word//:/\\:}")
            fi
        done
        _describe -t values 'wearhouse' described

        """#

    private static let fishScript = #"""
        # fish completion for wearhouse (generated by `wearhouse __completion fish`; the answers come from
        # `wearhouse __complete`, so they follow the commands of the installed binary).
        function __wearhouse_complete
            set -l words (commandline -opc) (commandline -ct)
            set -l out (command $words[1] __complete $words[2..-1] 2>/dev/null)
            if test "$out[1]" = ":files"
                __fish_complete_path (commandline -ct)
                return
            end
            printf '%s\n' $out
        end
        complete -c wearhouse -f -a '(__wearhouse_complete)'

        """#
}
