import DBus
import Testing

@testable import BlueZ

/// The fallbacks that keep the name constants free of `try!`.
@Suite struct NameLiteralTests {
    @Test func validLiteralsAreKept() {
        #expect(NameLiteral.interface("org.bluez.Device1").rawValue == "org.bluez.Device1")
        #expect(NameLiteral.member("Connect").rawValue == "Connect")
        #expect(NameLiteral.path("/org/bluez").rawValue == "/org/bluez")
        #expect(NameLiteral.busName("org.bluez").rawValue == "org.bluez")
    }

    @Test func invalidLiteralsFallBackWithoutCrashing() {
        #expect(NameLiteral.interface("not an interface").rawValue == "org.bluez.InvalidConstant")
        #expect(NameLiteral.member("Not.A.Member").rawValue == "InvalidConstant")
        #expect(NameLiteral.path("relative").rawValue == "/")
        #expect(NameLiteral.busName("").rawValue == "org.freedesktop.DBus")
    }
}
