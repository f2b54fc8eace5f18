// SPDX-License-Identifier: Apache-2.0
import QiblaCore
import QiblaInterface

/// The one line qiblad gives its service manager (`STATUS=`, shown by `systemctl status`): what it
/// is doing, in words, built from what clients see. It changes with states (claimed or idle, a
/// compass or none, the accuracy class, the position source), never with each sample, so
/// sending it only when it changes costs nothing while nobody needs the compass.
public enum ServiceStatus {
    public static func text(_ p: PublishedProperties, claimed: Bool) -> String {
        let position = p.locationSource == .none ? "no position" : "position from \(p.locationSource.rawValue)"
        guard claimed else { return "idle; \(position)" }
        var compass = p.hasCompass ? "compass \(p.compassAccuracy.rawValue)" : "no compass"
        if p.hasCompass && p.calibrationNeeded { compass += ", calibration needed" }
        if p.magneticInterference { compass += ", magnetic interference" }
        return "\(compass); \(position)"
    }
}
