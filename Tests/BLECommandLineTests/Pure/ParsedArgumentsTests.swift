import Testing

@testable import BLECommandLine

@Suite struct ParsedArgumentsTests {
    static let spec = CommandSpec(
        name: "try", summary: "a command for the tests",
        arguments: [.init("device", "the device"), .init("value", "a value", optional: true)],
        options: [
            .init("--bus", value: "ADDRESS", "the bus"),
            .init("--service", value: "UUID", "a service", repeatable: true),
            .init("--json", "JSON"),
            .init("--rssi", value: "DBM", "RSSI"),
            .init("--count", value: "N", "count"),
            .init("--timeout", value: "SECONDS", "timeout"),
        ])

    @Test func positionalsOptionsAndFlags() throws {
        let parsed = try ParsedArguments(
            ["AA:BB", "--bus", "unix:path=/x", "--json", "--service=180D", "--service", "180F", "0148"], for: Self.spec)
        #expect(parsed.positionals == ["AA:BB", "0148"])
        #expect(parsed.value("--bus") == "unix:path=/x")
        #expect(parsed.values("--service") == ["180D", "180F"])
        #expect(parsed.flag("--json"))
        #expect(!parsed.flag("--count"))
    }

    @Test func valuesMayStartWithADash() throws {
        let parsed = try ParsedArguments(["dev", "--rssi", "-70", "-5"], for: Self.spec)
        #expect(parsed.value("--rssi") == "-70")
        #expect(parsed.positionals == ["dev", "-5"])
        #expect(try parsed.integer("--rssi", in: -127...20) == -70)
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try ParsedArguments(["--", "--json", "x"], for: Self.spec)
        #expect(parsed.positionals == ["--json", "x"])
        #expect(!parsed.flag("--json"))
    }

    @Test func helpWinsOverMissingArguments() throws {
        #expect(try ParsedArguments(["--help"], for: Self.spec).wantsHelp)
        #expect(try ParsedArguments(["a", "b", "c", "-h"], for: Self.spec).wantsHelp)
    }

    @Test(arguments: [
        (["dev", "--nope"], "unknown option --nope"),
        (["dev", "--bus"], "--bus needs a value (ADDRESS)"),
        (["dev", "--json=1"], "--json takes no value"),
        (["dev", "--bus", "a", "--bus", "b"], "--bus given twice"),
        ([String](), "missing <device>"),
        (["dev", "v", "extra"], "unexpected argument \"extra\""),
    ])
    func mistakesAreNamed(arguments: [String], message: String) {
        #expect(throws: UsageError(message)) { try ParsedArguments(arguments, for: Self.spec) }
    }

    @Test func numbersAreChecked() throws {
        let parsed = try ParsedArguments(["dev", "--count", "0", "--timeout", "1.5"], for: Self.spec)
        #expect(throws: UsageError.self) { try parsed.integer("--count", in: 1...10) }
        #expect(try parsed.seconds("--timeout") == .milliseconds(1500))
        let bad = try ParsedArguments(["dev", "--timeout", "soon"], for: Self.spec)
        #expect(throws: UsageError.self) { try bad.seconds("--timeout") }
    }

    @Test func helpListsArgumentsAndOptions() {
        let help = Self.spec.help()
        #expect(help.hasPrefix("usage: ble try [options] <device> [<value>]"))
        #expect(Self.spec.help(tool: "ble-try").hasPrefix("usage: ble-try [options] <device> [<value>]"))
        #expect(help.contains("--bus ADDRESS"))
        #expect(help.contains("--help"))
        #expect(help.contains("<device>"))
    }

    @Test func commonOptionsValidateBusAndAdapter() throws {
        let spec = CommandSpec(name: "x", summary: "", options: CommonOptions.all)
        #expect(throws: UsageError.self) { try CommonOptions(ParsedArguments(["--bus", "nonsense"], for: spec)) }
        #expect(throws: UsageError.self) { try CommonOptions(ParsedArguments(["--adapter", "wlan0"], for: spec)) }
        let good = try CommonOptions(ParsedArguments(["--adapter", "hci1", "--timeout", "2"], for: spec))
        #expect(good.adapter == "hci1")
        #expect(good.timeout == .seconds(2))
        #expect(good.bus == .system)
    }
}
