import BLE
import Foundation
import Testing

extension AgainstBluetoothd {
    /// Reads and writes, checked on the peripheral's side.
    @Suite("Read and write")
    struct ReadWriteTests {
        @Test("read returns the peripheral's value")
        func read() async throws {
            try await Stage.runConnected { stage, peripheral in
                let characteristic = try await stage.characteristic(TestPeripheralLayout.readWrite, of: peripheral)
                #expect(try await characteristic.read() == TestPeripheralLayout.initialValue)
            }
        }

        @Test("a write with response reaches the peripheral before it returns")
        func writeWithResponse() async throws {
            try await Stage.runConnected { stage, peripheral in
                let characteristic = try await stage.characteristic(TestPeripheralLayout.readWrite, of: peripheral)
                let value = Data("written with response".utf8)
                try await characteristic.write(value, type: .withResponse)
                #expect(try await stage.driver.value(of: TestPeripheralLayout.readWrite) == value)
                #expect(try await characteristic.read() == value)
            }
        }

        @Test("writes without response reach the peripheral in order")
        func writeWithoutResponse() async throws {
            try await Stage.runConnected { stage, peripheral in
                let uuid = TestPeripheralLayout.writeWithoutResponse
                let characteristic = try await stage.characteristic(uuid, of: peripheral)
                for index in 0..<20 {
                    try await characteristic.write(Data("command \(index)".utf8), type: .withoutResponse)
                }
                try await stage.waitForValue(Data("command 19".utf8), in: uuid)
            }
        }

        @Test("a write channel (AcquireWrite, fd passing) carries writes without response")
        func writeChannel() async throws {
            try await Stage.runConnected { stage, peripheral in
                let uuid = TestPeripheralLayout.writeWithoutResponse
                let channel = try await stage.characteristic(uuid, of: peripheral).openWriteChannel()
                defer { channel.close() }
                #expect(channel.maximumWriteLength > 0)
                for index in 0..<20 { try await channel.write(Data("datagram \(index)".utf8)) }
                try await stage.waitForValue(Data("datagram 19".utf8), in: uuid)
            }
        }
    }
}
