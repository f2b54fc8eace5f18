// SPDX-License-Identifier: Apache-2.0
import QiblaEventLoop
import QiblaPlatform
import Synchronization

/// When to give back the pages a state change needed (issue 12, memory; see `MappedFilePages` and
/// `Heap.trim()`): at the end of the loop iteration that finished start-up or handled the last
/// release (the replies are sent by then), and a few seconds after the first claim, once the
/// sensors have started and the first samples and signals have gone out. One timer per claim,
/// none while idle.
final class CodePageTrimmer {
    /// The claimed path has settled by then: threads started, first hand-offs, first signals.
    static let settleAfterClaim: Duration = .seconds(3)

    /// Issue 37: a call handled while unclaimed maps the call path's code again (the bus
    /// dispatch, the reply, libdbus, the dynamic linker's lazy binding: about 2 MB after the last
    /// release's trim, measured with a refused 60 MiB call and with a 4 KiB one alike). It is given
    /// back this long after the last such call: once per burst of calls, not once per call.
    static let settleAfterIdleCall: Duration = .seconds(1)

    private let loop: EventLoop
    private var token: EventLoop.Token?
    private var idleCallToken: EventLoop.Token?

    init(loop: EventLoop) { self.loop = loop }

    /// At the end of the loop's next iteration, after the messages already waiting (at start-up:
    /// the bus's `NameAcquired` and the first calls) have been dispatched. No extra wakeup.
    func trimAfterPendingWork() {
        cancel()
        let posted = releasePosted
        posted.value.store(true, ordering: .relaxed)
        loop.post {
            posted.value.store(false, ordering: .relaxed)
            Self.release()
        }
    }

    /// A trim is posted for the end of this loop iteration (a call that released the last claim
    /// needs no trim of its own). Loop thread only; atomic to cross the posted closure.
    private final class Flag: Sendable { let value = Atomic<Bool>(false) }
    private let releasePosted = Flag()

    /// After ``settleAfterClaim``.
    func trimAfterClaimSettles() {
        cancel()
        token = loop.schedule(after: Self.settleAfterClaim) { [unowned self] in
            token = nil
            Self.release()
        }
    }

    /// The phone began a rest: the heading path's pages go back at the end of this loop
    /// iteration, or with the claim's own trim (``settleAfterClaim``) when that is still to come
    /// (issue 37: a rest 1 s into a claim would otherwise trim before the claim's start had
    /// settled — the position sources' first answers map libdbus and the log's path again — and
    /// cancel the trim that would have taken those too).
    func trimAtRest() {
        guard token == nil else { return }
        trimAfterPendingWork()
    }

    /// ``settleAfterIdleCall`` after the last call of a burst handled while unclaimed (each call
    /// moves the one timer on); `done` runs after the trim (the wiring's debug line).
    func trimAfterIdleCalls(done: @escaping () -> Void) {
        guard !releasePosted.value.load(ordering: .relaxed) else { return }
        if let idleCallToken { loop.cancel(idleCallToken) }
        idleCallToken = loop.schedule(after: Self.settleAfterIdleCall) { [unowned self] in
            idleCallToken = nil
            Self.release()
            done()
        }
    }

    func cancel() {
        if let token { loop.cancel(token) }
        token = nil
        if let idleCallToken { loop.cancel(idleCallToken) }
        idleCallToken = nil
    }

    /// The heap first: `malloc_trim` runs code, and code that runs after the file pages were given
    /// back maps them again.
    private static func release() {
        Heap.trim()
        MappedFilePages.releaseClean(.all)
    }
}
