import BLE
import BLESimulator
import Foundation
import Testing

/// Reads and writes from remote centrals: static values, requests the app answers, write
/// types, ATT errors, descriptors, and requests nobody answers.
@Suite("PeripheralManager: requests from centrals")
struct PeripheralManagerRequestTests {
    static let central = Simulator.defaultRemoteCentral

    @Test("A static value is answered by the manager itself, from the offset on")
    func staticRead() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let requests = RequestCollector(manager)
            try await manager.add(TestServices.heartRate)
            #expect(try await fixture.simulator.remoteRead(characteristic: "2A38") == Data([1, 2, 3]))
            #expect(try await fixture.simulator.remoteRead(characteristic: "2A38", offset: 2) == Data([3]))
            let error = await #expect(throws: RemoteCentralError.self) {
                try await fixture.simulator.remoteRead(characteristic: "2A38", offset: 4)
            }
            #expect(error?.attError == 0x07)
            #expect(
                try await fixture.simulator.remoteRead(descriptor: "2901", of: "2A39") == Data("Control".utf8))
            _ = requests
        }
    }

    @Test("A read reaches the app with the central, offset and MTU; its answer reaches the central")
    func dynamicRead() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let requests = RequestCollector(manager)
            try await manager.add(TestServices.heartRate)
            let simulator = fixture.simulator
            let read = remote { () throws(RemoteCentralError) in
                try await simulator.remoteRead(characteristic: "2A39", offset: 1, mtu: 185)
            }
            let request = try #require(try await requests.next())
            #expect(request.kind == .read)
            #expect(request.central == (try CentralID(address: Self.central)))
            #expect(request.service == "180D")
            #expect(request.characteristic == "2A39")
            #expect(request.descriptor == nil)
            #expect(request.offset == 1)
            #expect(request.mtu == 185)
            #expect(request.expectsResponse)
            #expect(request.respond(with: Data([0xAA, 0xBB])))
            #expect(!request.respond(with: Data([0x00])))
            #expect(try await read.value.get() == Data([0xAA, 0xBB]))
            #expect(await manager.maximumUpdateValueLength(for: try CentralID(address: Self.central)) == 182)
        }
    }

    @Test("Write request, write command and prepared (reliable) write each arrive with their type")
    func writeTypes() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let requests = RequestCollector(manager)
            try await manager.add(TestServices.secured)
            let simulator = fixture.simulator
            let uuid = TestServices.secured.characteristics[0].uuid.uuidString
            // A Write Request waits for the app's answer.
            let write = remote { () throws(RemoteCentralError) in
                try await simulator.remoteWrite(Data([1, 2]), to: uuid, offset: 3)
            }
            let request = try #require(try await requests.next())
            #expect(request.kind == .write)
            #expect(request.writeType == .request)
            #expect(request.value == Data([1, 2]))
            #expect(request.offset == 3)
            request.respond()
            try await write.value.get()
            // Prepare-authorize: the app only authorizes.
            let prepared = remote { () throws(RemoteCentralError) in
                try await simulator.remoteWrite(Data([9]), to: uuid, prepareAuthorize: true)
            }
            let authorization = try #require(try await requests.next())
            #expect(authorization.writeType == .reliable)
            authorization.respond(with: .insufficientAuthorization)
            guard case .failure(let refused) = await prepared.value else {
                Issue.record("the refused prepared write succeeded")
                return
            }
            #expect(refused.attError == 0x08)
        }
    }

    @Test("A write command arrives without a reply expected; bluetoothd does not wait")
    func writeCommand() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let requests = RequestCollector(manager)
            try await manager.add(TestServices.heartRate)
            try await fixture.simulator.remoteWrite(Data([7]), to: "2A39", type: .command)
            let command = try #require(try await requests.next())
            #expect(command.writeType == .command)
            #expect(!command.expectsResponse)
            #expect(command.value == Data([7]))
            // A Write Request to a write-without-response characteristic is forwarded the same way.
            try await fixture.simulator.remoteWrite(Data([8]), to: "2A39", type: .request)
            let forwarded = try #require(try await requests.next())
            #expect(forwarded.writeType == .command)
            #expect(forwarded.value == Data([8]))
        }
    }

    @Test("ATT errors from the app reach the central as bluetoothd maps them")
    func attErrors() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let requests = RequestCollector(manager)
            try await manager.add(TestServices.secured)
            let simulator = fixture.simulator
            let uuid = TestServices.secured.characteristics[0].uuid.uuidString
            let cases: [(ATTError, Bool, UInt8)] = [
                (.readNotPermitted, false, 0x02), (.writeNotPermitted, true, 0x03), (.requestNotSupported, false, 0x06),
                (.invalidOffset, true, 0x07), (.insufficientAuthorization, false, 0x08),
                (.invalidAttributeValueLength, true, 0x0D), (.application(0x80), false, 0x80),
                (.application(0x9F), true, 0x9F), (.insufficientEncryption, false, 0x0E), (.unlikely, true, 0x0E),
            ]
            for (error, isWrite, expected) in cases {
                let outcome = remote { () throws(RemoteCentralError) in
                    if isWrite {
                        try await simulator.remoteWrite(Data([1]), to: uuid)
                    } else {
                        _ = try await simulator.remoteRead(characteristic: uuid)
                    }
                }
                let request = try #require(try await requests.next())
                request.respond(with: error)
                guard case .failure(let failure) = await outcome.value else {
                    Issue.record("\(error) did not fail the request")
                    continue
                }
                #expect(failure.attError == expected, "\(error)")
            }
        }
    }

    @Test("Descriptor reads and writes without a static value reach the app")
    func descriptorRequests() async throws {
        try await SimulatorFixture.withManager { fixture, manager in
            let requests = RequestCollector(manager)
            try await manager.add(TestServices.secured)
            let simulator = fixture.simulator
            let uuid = TestServices.secured.characteristics[0].uuid.uuidString
            let read = remote { () throws(RemoteCentralError) in
                try await simulator.remoteRead(descriptor: "2901", of: uuid)
            }
            let request = try #require(try await requests.next())
            #expect(request.descriptor == "2901")
            #expect(request.characteristic == TestServices.secured.characteristics[0].uuid)
            request.respond(with: Data("name".utf8))
            #expect(try await read.value.get() == Data("name".utf8))
            let write = remote { () throws(RemoteCentralError) in
                try await simulator.remoteWrite(Data([5]), toDescriptor: "2901", of: uuid)
            }
            let written = try #require(try await requests.next())
            #expect(written.kind == .write)
            #expect(written.descriptor == "2901")
            #expect(written.value == Data([5]))
            written.respond()
            try await write.value.get()
        }
    }

    @Test("A request nobody answers is answered with Unlikely Error before bluetoothd's deadline")
    func unansweredRequestTimesOut() async throws {
        var options = PeripheralManagerOptions()
        options.requestTimeout = .milliseconds(300)
        try await SimulatorFixture.withManager(options: options) { fixture, manager in
            let requests = RequestCollector(manager)
            try await manager.add(TestServices.heartRate)
            let simulator = fixture.simulator
            let read = remote { () throws(RemoteCentralError) in
                try await simulator.remoteRead(characteristic: "2A39")
            }
            let request = try #require(try await requests.next())
            guard case .failure(let failure) = await read.value else {
                Issue.record("the unanswered read succeeded")
                return
            }
            // Answered by the manager (an application error), not by bluetoothd's own timeout.
            #expect(failure.code == .applicationError)
            #expect(failure.attError == 0x0E)
            #expect(request.isAnswered)
            #expect(!request.respond(with: Data([1])))
        }
    }
}
