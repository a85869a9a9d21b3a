import BLE
import Glibc

/// `ble pair`, `ble unpair` and `ble trust`: a device's bond and trust, as bluetoothctl's
/// pair, remove and trust.
enum PairingCommands {
    static let pairSpec = CommandSpec(
        name: "pair", summary: "pair and bond with a device",
        arguments: [DeviceArgument.argument],
        options: CommonOptions.all + [
            .init("--passkey", value: "DIGITS", "the passkey the device shows (passkey entry)"),
            .init("--yes", "the number the device shows matches (numeric comparison)"),
        ],
        details: """
            Connects when needed, pairs as a keyboard and display would, and leaves the link as
            it found it. What the pairing asks (the passkey the device shows, whether the numbers
            match) comes from --passkey and --yes, or is asked on a terminal; a passkey to type
            on the device is printed. A device already paired is left as it is.

            examples:
              ble pair C4:7C:8D:6A:11:22
              ble pair "Polar H10" --passkey 123456 --timeout 60
            """)

    static let unpairSpec = CommandSpec(
        name: "unpair", summary: "make bluetoothd forget a device: its bond, its cached services",
        arguments: [DeviceArgument.argument], options: CommonOptions.all,
        details: """
            Takes down the link if it is up; a scan finds the device again, unpaired. A device
            bluetoothd does not know is left as it is (exit 0).

            examples:
              ble unpair C4:7C:8D:6A:11:22
            """)

    static let trustSpec = CommandSpec(
        name: "trust", summary: "trust a device (its requests need no authorization), or stop",
        arguments: [DeviceArgument.argument, .init("on|off", "trust it or stop (default: on)", optional: true)],
        options: CommonOptions.all,
        details: """
            Needs no link: bluetoothd must know the device (ble devices lists those it knows).

            examples:
              ble trust C4:7C:8D:6A:11:22
              ble trust C4:7C:8D:6A:11:22 off
            """)

    static func pair(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let passkey = try arguments.integer("--passkey", in: 0...999_999).map(UInt32.init)
        var options = CentralOptions()
        options.pairingHandler = CommandLinePairing(
            passkey: passkey, confirms: arguments.flag("--yes"), interactive: isatty(0) != 0)
        options.pairTimeout = common.timeout
        try await CentralSession.run(common, centralOptions: options) { session in
            let id = try await session.resolve(arguments.positional(0) ?? "")
            let known = await session.central.knownPeripherals().first { $0.id == id }
            if known?.isPaired == true { return Terminal.line("\(id.address): already paired") }
            let wasConnected = known?.isConnected == true
            let peripheral = try await session.connect(id)
            do {
                try await peripheral.pair(timeout: common.timeout)
            } catch {
                if !wasConnected { try? await peripheral.disconnect() }
                throw error
            }
            if !wasConnected { try await peripheral.disconnect() }
            Terminal.line("\(id.address): paired")
        }
        return ExitCode.success
    }

    static func unpair(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        try await CentralSession.run(common, poweredOffIsFine: true) { session in
            let id = try await session.resolve(arguments.positional(0) ?? "")
            guard await session.central.knownPeripherals().contains(where: { $0.id == id }) else {
                return Terminal.line("\(id.address): not known to bluetoothd")
            }
            try await session.central.forget(id)
            Terminal.line("\(id.address): unpaired (bluetoothd forgot it)")
        }
        return ExitCode.success
    }

    static func trust(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let trusted: Bool
        switch arguments.positional(1) {
        case nil, "on": trusted = true
        case "off": trusted = false
        case let other?: throw UsageError("trust takes on or off, not \"\(other)\"")
        }
        try await CentralSession.run(common, poweredOffIsFine: true) { session in
            let id = try await session.resolve(arguments.positional(0) ?? "")
            try await session.central.setTrusted(trusted, for: id)
            Terminal.line("\(id.address): \(trusted ? "trusted" : "not trusted")")
        }
        return ExitCode.success
    }
}
