// SPDX-License-Identifier: Apache-2.0
/// The exit statuses of `qiblad`, `qiblactl` and `qibla-sim`: one table for all three, documented
/// in the README ("Exit statuses") and the man pages. The values follow sysexits(3) where it has one.
public enum ExitStatus: Int32, CaseIterable, Sendable {
    /// Done; for `qiblad`, stopped by SIGTERM/SIGINT after releasing the name and writing state.
    case success = 0
    /// A runtime failure: no daemon on the bus, the bus went away, the name is already owned,
    /// no compass, a D-Bus call refused for another reason (e.g. access denied by the bus policy).
    case failure = 1
    /// An invalid value: a coordinate that is not a number or out of range, a value refused by
    /// qiblad (`InvalidArgument`), an invalid configuration file.
    case invalidValue = 2
    /// `qiblactl calibrate`: not enough motion before `--timeout`.
    case notCalibrated = 3
    /// `qiblactl calibrate`: magnetic interference.
    case interference = 4
    /// A usage error (`EX_USAGE`): an unknown option, a missing or extra argument, options that
    /// exclude each other, a value of the wrong type for a non-coordinate option.
    case usage = 64
    /// `qiblactl calibrate`: interrupted (Ctrl-C) before a result; 128 + SIGINT, as a shell reports it.
    case interrupted = 130

    /// What the status means, for `--help` texts and the manuals (short enough that a row of the
    /// table fits 80 columns with the help's indentation).
    public var meaning: String {
        switch self {
        case .success: "success"
        case .failure: "runtime failure (no daemon, bus lost, name taken, call refused)"
        case .invalidValue: "invalid value (a bad coordinate, number or configuration)"
        case .notCalibrated: "qiblactl calibrate: not enough motion within --timeout"
        case .interference: "qiblactl calibrate: magnetic interference"
        case .usage: "usage error (unknown option, missing or extra argument)"
        case .interrupted: "qiblactl calibrate: interrupted before a result"
        }
    }

    /// The table as text, one status a line.
    public static var table: String {
        allCases.map { "\($0.rawValue)  \($0.meaning)" }.joined(separator: "\n")
    }
}
