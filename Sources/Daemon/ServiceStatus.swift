// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// The one line qiblad gives its service manager (`STATUS=`, shown by `systemctl status`): what it
/// is doing, in words, built from what clients see. It changes with states (claimed or idle, a
/// compass or none, the accuracy class, the position source), never with each sample, so
/// sending it only when it changes costs nothing while nobody needs the compass.
public enum ServiceStatus {
    /// Everything the line is made of: compare these (no allocation) and build the text only when
    /// they change, not on every publish.
    public struct Summary: Sendable, Equatable {
        var locationSource: LocationSource
        var claimed: Bool
        var hasCompass: Bool
        var compassAccuracy: CompassAccuracy
        var calibrationNeeded: Bool
        var magneticInterference: Bool

        public init(_ p: PublishedProperties, claimed: Bool) {
            locationSource = p.locationSource
            self.claimed = claimed
            hasCompass = p.hasCompass
            compassAccuracy = p.compassAccuracy
            calibrationNeeded = p.calibrationNeeded
            magneticInterference = p.magneticInterference
        }

        public var text: String {
            let position = locationSource == .none ? "no position" : "position from \(locationSource.rawValue)"
            guard claimed else { return "idle; \(position)" }
            var compass = hasCompass ? "compass \(compassAccuracy.rawValue)" : "no compass"
            if hasCompass && calibrationNeeded { compass += ", calibration needed" }
            if magneticInterference { compass += ", magnetic interference" }
            return "\(compass); \(position)"
        }
    }

    public static func text(_ p: PublishedProperties, claimed: Bool) -> String { Summary(p, claimed: claimed).text }
}
