import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// Unix file descriptors (`h`) passed with calls and replies.
@Suite struct FileDescriptorPassingTests {
    static let fill = fixedMember("Fill")
    static let fillAsync = fixedMember("FillAsync")
    static let open = fixedMember("Open")

    static func fixedMember(_ text: String) -> MemberName {
        do { return try MemberName(text) } catch { preconditionFailure("\(error)") }
    }

    /// A one-way channel as two owned descriptors (a socket pair: unlike `pipe`, it can be
    /// created closed-on-exec at once, so a bus daemon another test starts meanwhile cannot
    /// inherit the write end and keep end of file from coming).
    static func makePipe() throws -> (read: FileDescriptor, write: FileDescriptor) {
        var ends: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &ends) == 0 else {
            throw DBusError(.io, message: "socketpair failed: errno \(errno)")
        }
        return (FileDescriptor(owning: ends[0]), FileDescriptor(owning: ends[1]))
    }

    static func write(_ text: String, to descriptor: Int32) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } == bytes.count
    }

    /// Reads until end of file, waiting at most `deadline` for each chunk: end of file only
    /// comes once every copy of the write end is closed, on both sides of the bus.
    static func readToEnd(_ descriptor: FileDescriptor, deadline: Duration = eventDeadline) throws -> String {
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let milliseconds = Int32(deadline.components.seconds * 1000)
        while true {
            var entry = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, milliseconds) == 1 else {
                throw DeadlineExceeded(what: "end of file (is a copy of the write end still open?)")
            }
            let count = buffer.withUnsafeMutableBytes { read(descriptor.rawValue, $0.baseAddress, $0.count) }
            if count < 0 { throw DBusError(.io, message: "read failed: errno \(errno)") }
            if count == 0 { return String(decoding: collected, as: UTF8.self) }
            collected += buffer[0..<count]
        }
    }

    private static func fillHandler(_ call: DBusMessage) throws -> [DBusValue] {
        guard case .unixFD(let descriptor) = call.body.first else { throw DBusError(.typeMismatch, message: "no fd") }
        guard write("written by the service", to: descriptor.rawValue) else {
            throw DBusError(.io, message: "write failed")
        }
        return []
    }

    private func exportFiller(on service: Connection) throws {
        try service.export(
            [
                ExportedInterface(
                    TestNames.interface,
                    methods: [
                        .immediate(Self.fill, in: try signature("h")) { call in try Self.fillHandler(call) },
                        ExportedMethod(Self.fillAsync, in: try signature("h")) { call in try Self.fillHandler(call) },
                        .immediate(Self.open, out: try signature("h")) { _ in
                            let (readEnd, writeEnd) = try Self.makePipe()
                            guard Self.write("opened by the service", to: writeEnd.rawValue) else {
                                throw DBusError(.io, message: "write failed")
                            }
                            writeEnd.close()
                            return [.unixFD(readEnd)]
                        },
                    ])
            ], at: TestNames.object)
    }

    @Test(arguments: [FileDescriptorPassingTests.fill, FileDescriptorPassingTests.fillAsync])
    func aHandlerWritesIntoAPassedDescriptor(method: MemberName) async throws {
        try await withServiceAndClient { _, service, client in
            try exportFiller(on: service)
            let (readEnd, writeEnd) = try Self.makePipe()
            _ = try await client.call(
                destination: service.uniqueName, path: TestNames.object, interface: TestNames.interface, member: method,
                arguments: [.unixFD(writeEnd)])
            // Sending duplicated the descriptor: ours is still open until we close it.
            #expect(writeEnd.rawValue >= 0)
            writeEnd.close()
            #expect(try Self.readToEnd(readEnd) == "written by the service")
        }
    }

    @Test func aMethodReturnsADescriptor() async throws {
        try await withServiceAndClient { _, service, client in
            try exportFiller(on: service)
            let reply = try await client.call(
                destination: service.uniqueName, path: TestNames.object, interface: TestNames.interface,
                member: Self.open)
            #expect(reply.signature == "h")
            let received = try reply.argument(0, as: FileDescriptor.self)
            #expect(try Self.readToEnd(received) == "opened by the service")
        }
    }

    /// `h` at top level, inside a variant and in an array, through an echo: the descriptors
    /// that come back are the same pipes.
    @Test func descriptorsSurviveAnEcho() async throws {
        try await withServiceAndClient { _, service, client in
            let pipes = try (0..<4).map { _ in try Self.makePipe() }
            let sent: [DBusValue] = [
                .unixFD(pipes[0].write), .variant(.unixFD(pipes[1].write)),
                .array(.unixFD, [.unixFD(pipes[2].write), .unixFD(pipes[3].write)]),
            ]
            try Echo.export(on: service, signature: try Signature(types: sent.map(\.type)))
            for method in [Echo.immediate, Echo.async] {
                let reply = try await Echo.call(method, on: service, from: client, sent)
                #expect(reply.signature == "hvah")
                var echoed: [FileDescriptor] = []
                for value in reply.body {
                    switch value.unwrappingVariant {
                    case .unixFD(let descriptor): echoed.append(descriptor)
                    case .array(_, let elements):
                        for case .unixFD(let descriptor) in elements { echoed.append(descriptor) }
                    default: Issue.record("unexpected \(value)")
                    }
                }
                #expect(echoed.count == 4)
                for (index, descriptor) in echoed.enumerated() {
                    #expect(descriptor.rawValue != pipes[index].write.rawValue, "a new descriptor")
                    #expect(Self.write("\(method.rawValue)\(index);", to: descriptor.rawValue))
                }
            }
            for (index, pipe) in pipes.enumerated() {
                pipe.write.close()
                // The echoed copies die with the reply messages; the service's with its calls.
                #expect(try Self.readToEnd(pipe.read) == "EchoImmediate\(index);EchoAsync\(index);")
            }
        }
    }
}
