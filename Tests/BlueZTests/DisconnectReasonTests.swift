import BlueZ
import DBus
import Testing

@Suite struct DisconnectReasonTests {
    @Test(arguments: [
        (DisconnectReason.unknown, "org.bluez.Reason.Unknown", "Unspecified"),
        (.timeout, "org.bluez.Reason.Timeout", "Connection timeout"),
        (.local, "org.bluez.Reason.Local", "Connection terminated by local host"),
        (.remote, "org.bluez.Reason.Remote", "Connection terminated by remote user"),
        (.authentication, "org.bluez.Reason.Authentication", "Connection terminated due to authentication failure"),
        (.suspend, "org.bluez.Reason.Suspend", "Connection terminated by local host for suspend"),
    ])
    func namesAndMessages(_ reason: DisconnectReason, _ name: String, _ message: String) {
        #expect(reason.name == name)
        #expect(reason.message == message)
        #expect(DisconnectReason(name: name) == reason)
    }

    @Test func unknownNameIsNil() {
        #expect(DisconnectReason(name: "org.bluez.Reason.Cosmic") == nil)
        #expect(DisconnectReason.allCases.count == 6)
    }

    @Test func decodesTheSignalOf12() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let message = DBusMessage(
            kind: .signal, path: device, interface: BlueZInterface.device1, member: BlueZSignal.disconnected,
            body: [.string("org.bluez.Reason.Remote"), .string("Connection terminated by remote user")])
        let signal = try #require(try DeviceDisconnectedSignal(signal: message))
        #expect(signal.device == device)
        #expect(signal.reason == .remote)
        #expect(signal.reasonMessage == "Connection terminated by remote user")
        #expect(DeviceDisconnectedSignal(device: device, reason: .remote) == signal)
        #expect(try DeviceDisconnectedSignal(signal: signal.signalMessage) == signal)
    }

    @Test func keepsUnknownReasonNames() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let signal = DeviceDisconnectedSignal(device: device, reasonName: "org.bluez.Reason.New", reasonMessage: "x")
        let decoded = try #require(try DeviceDisconnectedSignal(signal: signal.signalMessage))
        #expect(decoded.reasonName == "org.bluez.Reason.New")
        #expect(decoded.reason == nil)
    }

    @Test func otherMessagesAreNotDisconnections() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let other = DBusMessage(
            kind: .signal, path: device, interface: .properties, member: BlueZSignal.propertiesChanged, body: [])
        #expect(try DeviceDisconnectedSignal(signal: other) == nil)
    }

    @Test func malformedBodyThrows() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let message = DBusMessage(
            kind: .signal, path: device, interface: BlueZInterface.device1, member: BlueZSignal.disconnected,
            body: [.string("org.bluez.Reason.Remote")])
        let error = #expect(throws: DBusError.self) { try DeviceDisconnectedSignal(signal: message) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message.contains("expected body ss, got s") == true)
    }
}
