/// What a command accepts: its positional arguments and options, and the help text made from them.
public struct CommandSpec: Sendable {
    /// A positional argument.
    public struct Argument: Sendable {
        /// Shown in usage, e.g. `device`.
        public var name: String
        /// One line of help.
        public var help: String
        /// Whether it may be left out.
        public var optional: Bool

        /// Creates an argument.
        public init(_ name: String, _ help: String, optional: Bool = false) {
            self.name = name
            self.help = help
            self.optional = optional
        }
    }

    /// An option: `--name VALUE`, or a flag when `value` is nil.
    public struct Option: Sendable {
        /// The long name with its dashes, e.g. `--bus`.
        public var name: String
        /// The placeholder of its value, e.g. `ADDRESS`; nil for a flag.
        public var value: String?
        /// One line of help.
        public var help: String
        /// Whether it may be given more than once.
        public var repeatable: Bool

        /// Creates an option.
        public init(_ name: String, value: String? = nil, _ help: String, repeatable: Bool = false) {
            self.name = name
            self.value = value
            self.help = help
            self.repeatable = repeatable
        }
    }

    /// The command's name after `ble`, e.g. `read`.
    public var name: String
    /// One line saying what it does.
    public var summary: String
    /// Its positional arguments, in order.
    public var arguments: [Argument]
    /// Its options (`--help` is implied).
    public var options: [Option]
    /// More help (formats, examples), printed after the options.
    public var details: String

    /// Creates a command description.
    public init(name: String, summary: String, arguments: [Argument] = [], options: [Option], details: String = "") {
        self.name = name
        self.summary = summary
        self.arguments = arguments
        self.options = options
        self.details = details
    }

    /// `usage: ble read [options] <device> <characteristic>`; `tool` replaces `ble read`.
    public func usageLine(tool: String? = nil) -> String {
        let positional = arguments.map { $0.optional ? "[<\($0.name)>]" : "<\($0.name)>" }
        return (["usage:", tool ?? "ble \(name)", "[options]"] + positional).joined(separator: " ")
    }

    /// The full `--help` text; `tool` replaces `ble read` in the usage line.
    public func help(tool: String? = nil) -> String {
        var lines = [usageLine(tool: tool), "", summary]
        if !arguments.isEmpty {
            lines += ["", "arguments:"]
            let width = arguments.map { $0.name.count + 2 }.max() ?? 0
            lines += arguments.map { "  " + pad("<\($0.name)>", width) + "  " + $0.help }
        }
        let all = options + [Option("--help", "show this help")]
        let labels = all.map { option in option.value.map { "\(option.name) \($0)" } ?? option.name }
        let width = labels.map(\.count).max() ?? 0
        lines += ["", "options:"]
        lines += zip(labels, all).map { label, option in "  " + pad(label, width) + "  " + option.help }
        if !details.isEmpty { lines += ["", details] }
        return lines.joined(separator: "\n")
    }

    /// The option called `name`, if the command has it.
    func option(named name: String) -> Option? { options.first { $0.name == name } }
}

/// `text` followed by spaces up to `width` characters.
func pad(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
}
