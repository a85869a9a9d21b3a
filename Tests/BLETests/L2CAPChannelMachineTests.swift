import Testing

@testable import BLE

/// Transcripts of an L2CAP channel's rules (``L2CAPChannelMachine``), without a socket:
/// events in, actions out.
@Suite("L2CAP channel transcripts")
struct L2CAPChannelMachineTests {
    typealias Machine = L2CAPChannelMachine

    @Test("sends go out one at a time, in call order; a full socket waits for room, then the rest follow")
    func sendOrderAndBackPressure() {
        var machine = Machine(sendMTU: 100, bufferLimit: 4)
        #expect(machine.send(1, size: 10) == [.write(1)])
        #expect(machine.send(2, size: 10) == [], "the second waits behind the first")
        #expect(machine.wouldBlock() == [.armWritable])
        #expect(machine.send(3, size: 100) == [])
        #expect(machine.writable() == [.write(1)])
        #expect(machine.wrote(1) == [.sent(1), .write(2)])
        #expect(machine.wrote(2) == [.sent(2), .write(3)])
        #expect(machine.wrote(3) == [.sent(3), .disarmWritable], "none left: the watch for room ends")
        #expect(machine.send(4, size: 1) == [.write(4)], "an idle channel writes at once")
    }

    @Test("a send's timeout says what the channel waited on: a full socket, or a reader that fell behind")
    func waitingSummary() {
        var machine = Machine(sendMTU: 100, bufferLimit: 2)
        #expect(machine.waitingSummary == "0 sends waiting; 0 SDUs unread")
        #expect(machine.send(1, size: 1) == [.write(1)])
        #expect(machine.wouldBlock() == [.armWritable])
        #expect(machine.send(2, size: 1) == [])
        #expect(machine.received() == [])
        #expect(machine.received() == [.pauseReading])
        #expect(machine.waitingSummary == "2 sends waiting, socket full, room watched; 2 SDUs unread, reading paused")
    }

    @Test("the watch for room stays on while the sends that waited are written, and ends with the last")
    func watchForRoom() {
        var machine = Machine(sendMTU: 100, bufferLimit: 4)
        #expect(machine.send(1, size: 1) == [.write(1)])
        #expect(machine.wouldBlock() == [.armWritable])
        #expect(machine.send(2, size: 1) == [])
        #expect(machine.writable() == [.write(1)])
        #expect(machine.wrote(1) == [.sent(1), .write(2)])
        #expect(machine.wouldBlock() == [], "full again: the watch is still on")
        #expect(machine.writable() == [.write(2)])
        // Without the end of the watch, the shell's source fired while the socket had room,
        // each time for nothing, until the channel closed.
        #expect(machine.wrote(2) == [.sent(2), .disarmWritable])
        #expect(machine.writable() == [], "a late readiness event changes nothing")
        #expect(machine.send(3, size: 1) == [.write(3)])
        #expect(machine.wouldBlock() == [.armWritable], "the next full socket watches again")
    }

    @Test("an SDU over the send MTU fails alone; the channel goes on")
    func tooLarge() {
        var machine = Machine(sendMTU: 23, bufferLimit: 4)
        #expect(machine.send(1, size: 24) == [.failSend(1, .tooLarge(size: 24, mtu: 23))])
        #expect(machine.send(2, size: 23) == [.write(2)])
        #expect(!machine.isEnded)
    }

    @Test("a waiting send that is cancelled or passes its deadline never goes out; the next takes its place")
    func abandonWaiting() {
        var machine = Machine(sendMTU: 100, bufferLimit: 4)
        _ = machine.send(1, size: 1)
        #expect(machine.wouldBlock() == [.armWritable])
        _ = machine.send(2, size: 1)
        _ = machine.send(3, size: 1)
        #expect(machine.abandon(2, .cancelled) == [.failSend(2, .cancelled)], "a queued one leaves the queue")
        #expect(machine.abandon(1, .timedOut) == [.failSend(1, .timedOut)], "still waiting for room: no write")
        #expect(machine.writable() == [.write(3)])
        #expect(machine.wrote(3) == [.sent(3), .disarmWritable])
        #expect(machine.abandon(3, .cancelled) == [], "a written send cannot be taken back")
    }

    @Test("the last waiting send abandoned stops the wait for room")
    func abandonLast() {
        var machine = Machine(sendMTU: 100, bufferLimit: 4)
        _ = machine.send(1, size: 1)
        _ = machine.wouldBlock()
        #expect(machine.abandon(1, .cancelled) == [.failSend(1, .cancelled), .disarmWritable])
        #expect(machine.send(2, size: 1) == [.write(2)])
    }

    @Test("the reader gets SDUs in order; a slow reader pauses the socket at the limit and resumes it at half")
    func readerBackPressure() {
        var machine = Machine(sendMTU: 100, bufferLimit: 4)
        #expect(machine.read().0 == .wait)
        #expect(machine.received() == [.handOver], "a waiting reader takes the SDU at once")
        #expect(machine.received() == [])
        #expect(machine.received() == [])
        #expect(machine.received() == [])
        #expect(machine.received() == [.pauseReading], "four held: the socket is no longer read")
        #expect(machine.read() == (.takeBuffered, []))
        #expect(machine.read() == (.takeBuffered, [.resumeReading]), "two left: reading resumes")
        #expect(machine.read() == (.takeBuffered, []))
        #expect(machine.read() == (.takeBuffered, []))
        #expect(machine.read().0 == .wait)
    }

    @Test("the peer closing ends the reader only after what arrived before; sends fail with the end")
    func peerClosed() {
        var machine = Machine(sendMTU: 100, bufferLimit: 8)
        _ = machine.received()
        _ = machine.received()
        _ = machine.send(1, size: 1)
        _ = machine.wouldBlock()
        #expect(
            machine.ended(.peerClosed) == [.failSend(1, .ended(.peerClosed)), .disarmWritable, .closeSocket])
        #expect(machine.read() == (.takeBuffered, []))
        #expect(machine.read() == (.takeBuffered, []))
        #expect(machine.read() == (.end, []))
        #expect(machine.send(2, size: 1) == [.failSend(2, .ended(.peerClosed))])
        #expect(machine.ended(.linkLost) == [], "one end only")
    }

    @Test("a send meeting the peer's hang-up fails, later ones too; what the peer sent is still read, then the end")
    func peerStoppedReading() {
        var machine = Machine(sendMTU: 100, bufferLimit: 2)
        _ = machine.received()
        #expect(machine.received() == [.pauseReading], "a slow reader: the rest stays in the socket")
        #expect(machine.send(1, size: 1) == [.write(1)])
        #expect(machine.wouldBlock() == [.armWritable])
        #expect(machine.send(2, size: 1) == [])
        #expect(machine.writable() == [.write(1)])
        // The write met EPIPE: the sends fail, the socket stays open for what waits in it.
        #expect(
            machine.peerStoppedReading() == [
                .failSend(1, .ended(.peerClosed)), .failSend(2, .ended(.peerClosed)), .disarmWritable,
            ])
        #expect(!machine.isEnded)
        #expect(machine.send(3, size: 1) == [.failSend(3, .ended(.peerClosed))])
        #expect(machine.peerStoppedReading() == [], "once")
        #expect(machine.read() == (.takeBuffered, [.resumeReading]), "reading resumes for the rest")
        #expect(machine.received() == [.pauseReading])
        #expect(machine.ended(.peerClosed) == [.closeSocket], "the end of file ends the channel")
        #expect(machine.read() == (.takeBuffered, []))
        #expect(machine.read() == (.takeBuffered, []))
        #expect(machine.read() == (.end, []))
    }

    @Test("the link dropping keeps what arrived; a local close drops it and ends a waiting reader")
    func linkLostAndLocalClose() {
        var lost = Machine(sendMTU: 100, bufferLimit: 8)
        _ = lost.received()
        #expect(lost.ended(.linkLost) == [.closeSocket])
        #expect(lost.read() == (.takeBuffered, []))
        #expect(lost.read() == (.end, []))

        var closed = Machine(sendMTU: 100, bufferLimit: 8)
        _ = closed.received()
        #expect(closed.ended(.closedLocally) == [.discardBuffered, .closeSocket])
        #expect(closed.read() == (.end, []))

        var waiting = Machine(sendMTU: 100, bufferLimit: 8)
        #expect(waiting.read().0 == .wait)
        #expect(waiting.ended(.closedLocally) == [.finishReader, .closeSocket])
        #expect(waiting.received() == [], "nothing is taken after the end")
    }

    @Test("a cancelled reader ends its iteration; a second reader while one waits gets the end")
    func readers() {
        var machine = Machine(sendMTU: 100, bufferLimit: 8)
        #expect(machine.read().0 == .wait)
        #expect(machine.read() == (.end, []), "one reader at a time")
        #expect(machine.readerCancelled() == [.finishReader])
        #expect(machine.readerCancelled() == [])
        #expect(machine.received() == [], "buffered for the next reader")
        #expect(machine.read() == (.takeBuffered, []))
    }
}
