import BlueZ
import DBus
import Testing

@Suite struct ATTErrorMappingTests {
    @Test(arguments: [
        (UInt8(0x02), "org.bluez.Error.NotPermitted", "Read not permitted"),
        (0x03, "org.bluez.Error.NotPermitted", "Write not permitted"),
        (0x05, "org.bluez.Error.NotPermitted", "Not paired"),
        (0x0C, "org.bluez.Error.NotPermitted", "Not paired"),
        (0x0F, "org.bluez.Error.NotPermitted", "Not paired"),
        (0x07, "org.bluez.Error.InvalidArguments", "Invalid offset"),
        (0x0D, "org.bluez.Error.InvalidArguments", "Invalid Length"),
        (0x08, "org.bluez.Error.NotAuthorized", "Operation Not Authorized"),
        (0x06, "org.bluez.Error.NotSupported", "Operation is not supported"),
        (0x0E, "org.bluez.Error.Failed", "Operation failed with ATT error: 0x0e"),
        (0x80, "org.bluez.Error.Failed", "Operation failed with ATT error: 0x80"),
        (0xFE, "org.bluez.Error.Failed", "Operation failed with ATT error: 0xfe"),
    ])
    func clientErrors(_ code: UInt8, _ name: String, _ message: String) {
        let error = ATTErrorMapping.clientError(forATTError: code)
        #expect(error.code == .remote)
        #expect(error.name == name)
        #expect(error.message == message)
    }

    @Test(arguments: [
        ("org.bluez.Error.Failed", "0x80", false, UInt8(0x80)),
        ("org.bluez.Error.Failed", "0x9f", true, 0x9F),
        ("org.bluez.Error.Failed", "0x9F trailing text", true, 0x9F),
        ("org.bluez.Error.Failed", "128", false, 0x80),
        ("org.bluez.Error.Failed", "0200", false, 0x80),
        ("org.bluez.Error.Failed", "0xa0", false, 0x0E),
        ("org.bluez.Error.Failed", "-0x80", false, 0x0E),
        ("org.bluez.Error.Failed", "0x7f", false, 0x0E),
        ("org.bluez.Error.Failed", "99999999999999999999999", false, 0x0E),
        ("org.bluez.Error.Failed", "oops", false, 0x80),
        ("org.bluez.Error.Failed", "", false, 0x80),
        ("org.bluez.Error.NotSupported", "", false, 0x06),
        ("org.bluez.Error.NotAuthorized", "", false, 0x08),
        ("org.bluez.Error.InvalidValueLength", "", true, 0x0D),
        ("org.bluez.Error.InvalidOffset", "", false, 0x07),
        ("org.bluez.Error.InProgress", "", false, 0xFE),
        ("org.bluez.Error.ImproperlyConfigured", "", true, 0xFD),
        ("org.bluez.Error.NotPermitted", "", false, 0x02),
        ("org.bluez.Error.NotPermitted", "", true, 0x03),
        ("org.freedesktop.DBus.Error.UnknownMethod", "whatever", false, 0x0E),
    ])
    func applicationErrors(_ name: String, _ message: String, _ isWrite: Bool, _ code: UInt8) {
        #expect(ATTErrorMapping.attError(forApplicationError: name, message: message, isWrite: isWrite) == code)
    }

    @Test("An application error for every ATT code makes bluetoothd send that code, or 0x0E where it cannot")
    func applicationErrorRoundTrip() {
        let carried: Set<UInt8> = Set([0x06, 0x07, 0x08, 0x0D, 0xFD, 0xFE]).union(0x80...0x9F)
        for code in UInt8.min...UInt8.max {
            let error = ATTErrorMapping.applicationError(forATTError: code)
            for isWrite in [false, true] {
                let sent = ATTErrorMapping.attError(
                    forApplicationError: error.name ?? "", message: error.message, isWrite: isWrite)
                switch code {
                case 0x02, 0x03: #expect(sent == (isWrite ? 0x03 : 0x02))
                case _ where carried.contains(code): #expect(sent == code, "code \(code)")
                default: #expect(sent == 0x0E, "code \(code)")
                }
            }
        }
    }
}
