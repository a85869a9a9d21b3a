/// A command line that was wrong: said in one line, with the command's usage, and exit code 2.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. `missing <device>`.
    public var message: String

    /// Creates the error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// The result of parsing a command line against a ``CommandSpec``.
public struct ParsedArguments: Sendable, Equatable {
    /// The positional arguments, in order.
    public var positionals: [String] = []
    /// The values given to each option (an empty string for each use of a flag), by option name.
    public var options: [String: [String]] = [:]
    /// Whether `--help` (or `-h`) was given.
    public var wantsHelp = false

    /// Parses `arguments` (without the command name). `--name value` and `--name=value` both
    /// work; an option's value may start with a dash (`--rssi -70`); `--` ends the options.
    public init(_ arguments: [String], for spec: CommandSpec) throws(UsageError) {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "-h" || argument == "--help" {
                wantsHelp = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = spec.option(named: name) else {
                if Self.looksNegativeNumber(argument) {
                    positionals.append(argument)
                    continue
                }
                throw UsageError("unknown option \(name)")
            }
            if !option.repeatable && options[name] != nil { throw UsageError("\(name) given twice") }
            if option.value == nil {
                guard inlineValue == nil else { throw UsageError("\(name) takes no value") }
                options[name, default: []].append("")
                continue
            }
            if let inlineValue {
                options[name, default: []].append(inlineValue)
            } else if index < arguments.count {
                options[name, default: []].append(arguments[index])
                index += 1
            } else {
                throw UsageError("\(name) needs a value (\(option.value ?? "VALUE"))")
            }
        }
        if wantsHelp { return }
        let required = spec.arguments.filter { !$0.optional }.count
        if positionals.count < required {
            throw UsageError("missing <\(spec.arguments[positionals.count].name)>")
        }
        if positionals.count > spec.arguments.count {
            throw UsageError("unexpected argument \"\(positionals[spec.arguments.count])\"")
        }
    }

    /// `-5` or `-0x10` as a value to write, not an option.
    private static func looksNegativeNumber(_ text: String) -> Bool {
        let digits = text.dropFirst()
        return digits.first?.isNumber == true && digits.allSatisfy { $0.isHexDigit || $0 == "x" || $0 == "." }
    }

    /// Whether the flag `name` was given.
    public func flag(_ name: String) -> Bool { options[name] != nil }

    /// The value of option `name`, if given.
    public func value(_ name: String) -> String? { options[name]?.last }

    /// Every value of a repeatable option.
    public func values(_ name: String) -> [String] { options[name] ?? [] }

    /// The positional argument at `index`, if given.
    public func positional(_ index: Int) -> String? { index < positionals.count ? positionals[index] : nil }

    /// The value of `name` as an integer in `range`.
    public func integer(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                "\(name) wants a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
        }
        return number
    }

    /// The value of `name` as a positive number of seconds (fractions allowed, at most a day).
    public func seconds(_ name: String) throws(UsageError) -> Duration? {
        guard let text = value(name) else { return nil }
        guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
            throw UsageError("\(name) wants a number of seconds greater than 0, not \"\(text)\"")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
