// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import QiblaDBus
import QiblaInterface
import QiblaPlatform

/// `qiblactl monitor`: claims the compass and shows every change — a block redrawn in place on a
/// terminal, a line per change on a pipe, or JSON Lines — and outlives qiblad's restarts.
struct Monitor: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            abstract: tr("Claim the compass and show each change until interrupted (Ctrl-C releases the claim)."),
            discussion: paragraphs(
                tr("On a terminal a four-line block is redrawn in place: the Qibla and the position, the heading and its accuracy, a needle towards the Qibla with the turn, and what needs attention. Otherwise one line per change: the changed properties, then the whole status."),
                tr("--json prints JSON Lines, one object per update, flushed at once: qiblad (\"running\" or \"waiting\"), owner (qiblad's unique bus name, null while waiting), time_us (when it was printed, microseconds since the epoch), changed (the names of the properties that changed; every name when qiblad appears or comes back) and properties (every property by its D-Bus name, as status --json prints them; all null while waiting)."),
                tr("When qiblad leaves the bus (a restart, a crash) monitor says it is waiting and claims the compass again when qiblad comes back. --once or -n COUNT exit after that many updates (the first being the state at the start; waiting does not count)."))) }

    @OptionGroup var bus: BusOptions
    @Flag(name: .long, help: ArgumentHelp(tr("Print JSON Lines: one object per update."))) var json = false
    @Flag(name: .long, help: ArgumentHelp(tr("Exit after the first update (the state at the start)."))) var once = false
    @Option(name: [.customShort("n"), .customLong("count")], help: ArgumentHelp(tr("Exit after COUNT updates."))) var count: Int?

    func validate() throws {
        if once && count != nil { throw ValidationError("--once and --count exclude each other") }
        if let count, count < 1 { throw ValidationError("--count takes a number of updates, 1 or more") }
    }

    func run() throws {
        let limit = once ? 1 : count
        let view: any MonitorView
        if json {
            view = JSONLinesView()
        } else if Console.isTerminal(.standardOutput) {
            view = BlockView(bus: bus.name)
        } else {
            view = LineView()
        }
        var updates = 0
        try QibladWatch.run(bus: bus, claim: true) { watch, event, stop in
            view.show(event, watch)
            if case .waiting = event { return }
            updates += 1
            if let limit, updates >= limit { stop() }
        }
    }
}

protocol MonitorView {
    func show(_ event: QibladWatch.Event, _ watch: QibladWatch)
}

/// One line per change, as `qiblactl monitor` always printed on a pipe: `Heading=143.04 … | status`.
struct LineView: MonitorView {
    func show(_ event: QibladWatch.Event, _ watch: QibladWatch) {
        switch event {
        case .appeared:
            printLine(StatusLine(watch.properties).text)
        case .changed(let names):
            let changed = names.map { "\($0)=\(watch.properties[$0]?.displayText ?? "unknown")" }
            printLine("\(changed.joined(separator: " ")) | \(StatusLine(watch.properties).text)")
        case .waiting:
            printLine("waiting for qiblad on the bus")
        }
    }
}

/// JSON Lines: one object per update.
struct JSONLinesView: MonitorView {
    func show(_ event: QibladWatch.Event, _ watch: QibladWatch) {
        var o = JSONObject()
        let changed: [String]
        switch event {
        case .appeared: changed = QiblaProperty.allCases.map(\.rawValue)
        case .changed(let names): changed = names
        case .waiting: changed = []
        }
        o.set("qiblad", watch.owner == nil ? "waiting" : "running")
        o.set("owner", watch.owner)
        o.set("time_us", UInt64(max(0, WallClock.nowUnixSeconds() * 1e6)))
        o.set("changed", changed)
        o.set("properties", DaemonState(watch.properties).json)
        printLine(o.text)
    }
}

/// The block redrawn in place on a terminal: the cursor goes back to the block's first line
/// (CSI F) and each line is cleared (CSI 2K) and written again; the block never scrolls and each
/// line fits 80 columns.
final class BlockView: MonitorView {
    private let bus: String
    private var drawn = 0
    /// One column less than the terminal (80, or $COLUMNS when the shell exports a narrower one),
    /// so that no line wraps and moving up `drawn` lines reaches the block's first line.
    private let width: Int

    init(bus: String) {
        self.bus = bus
        let columns = Environment.value("COLUMNS").flatMap { Int($0) } ?? 80
        width = max(20, min(columns, 80) - 1)
    }

    func show(_ event: QibladWatch.Event, _ watch: QibladWatch) {
        let lines = watch.owner == nil ? DaemonState.waitingBlock(bus: bus) : DaemonState(watch.properties).block
        var text = drawn > 0 ? "\u{1B}[\(drawn)F" : ""
        for line in lines {
            text += "\u{1B}[2K" + (line.count > width ? line.prefix(width - 1) + "…" : line) + "\n"
        }
        Console.write(text, to: .standardOutput)
        drawn = lines.count
    }
}
