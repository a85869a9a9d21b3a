import BlueZ
import Glibc
import Testing

@Suite("sockaddr_l2 and L2CAP errors")
struct L2CAPSocketAddressTests {
    @Test("the 14 bytes the kernel takes: family, PSM little-endian, address least significant first, type")
    func encoding() throws {
        let endpoint = L2CAPEndpoint(address: try BluetoothAddress("C4:7C:8D:6A:11:22"), addressType: .random)
        let address = L2CAPSocketAddress(psm: 0x0081, endpoint: endpoint)
        #expect(
            address.bytes == [31, 0, 0x81, 0x00, 0x22, 0x11, 0x6A, 0x8D, 0x7C, 0xC4, 0, 0, 2, 0])
        #expect(L2CAPSocketAddress(bytes: address.bytes) == address)
        let publicAddress = L2CAPSocketAddress(psm: 0x1001, endpoint: L2CAPEndpoint(address: endpoint.address))
        #expect(publicAddress.bytes[12] == 1)
        #expect(L2CAPSocketAddress(bytes: publicAddress.bytes)?.endpoint.addressType == .public)
    }

    @Test("another family or a short buffer is not an L2CAP address")
    func malformed() {
        #expect(L2CAPSocketAddress(bytes: [2, 0, 0, 0]) == nil)
        #expect(L2CAPSocketAddress(bytes: [UInt8](repeating: 0, count: 14)) == nil)
    }

    @Test("errno values are classified for the BLE layer")
    func errors() {
        #expect(L2CAPTransportError(errno: ECONNREFUSED, during: "x").kind == .refused)
        #expect(L2CAPTransportError(errno: EADDRINUSE, during: "x").kind == .addressInUse)
        #expect(L2CAPTransportError(errno: EAFNOSUPPORT, during: "x").kind == .unsupported)
        #expect(L2CAPTransportError(errno: ENOTCONN, during: "x").kind == .unreachable)
        #expect(L2CAPTransportError(errno: EACCES, during: "x").kind == .notPermitted)
        let error = L2CAPTransportError(errno: ETIMEDOUT, during: "opening PSM 128")
        #expect(error.kind == .timedOut && error.errno == ETIMEDOUT && error.message.hasPrefix("opening PSM 128: "))
    }

    @Test("without Bluetooth in the kernel, the kernel transport says so instead of failing obscurely")
    func kernelWithoutBluetooth() throws {
        let local = L2CAPEndpoint(address: try BluetoothAddress("00:AA:01:00:00:23"))
        do {
            let listener = try KernelL2CAPTransport().listen(L2CAPListenRequest(local: local))
            // A kernel with Bluetooth but no such adapter refuses the bind; with the adapter
            // (never here), a dynamic PSM comes back.
            #expect(L2CAPPSM.dynamicRange.contains(listener.psm))
        } catch {
            #expect([.unsupported, .invalidArguments].contains(error.kind), "\(error)")
        }
    }
}
