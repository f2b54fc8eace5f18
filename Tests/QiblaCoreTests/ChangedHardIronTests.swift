// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import QiblaCore

/// A magnet put into (or taken out of) the phone's case changes its hard iron by a few µT: too
/// little for the interference tolerances (15 %, 8°) to contradict the fit in use, while the
/// heading through the old fit is off by up to |Δb|/H — BROAD trial 36: a magnet 5 cm from the
/// sensor, 5.4 µT, its fit kept after the magnet was taken off. A refinement from the stored
/// samples disagrees with the fit in use; the recent field, seen through the attitude filter's
/// attitudes, stays put in the world better through it (`FieldAttitudeHistory`): the fit is
/// contradicted, discarded with the samples from before the change, and the calibration starts
/// again. The samples are made here from the simulated sensor's attitudes and hard iron, not from
/// the history's statistic.
@Suite struct ChangedHardIronTests {
    /// Feeds `seconds` of the figure-eight at 20 Hz from `start`, with the device-to-world
    /// attitudes the filter would give (`attitudes: false`: none, as without a gyroscope).
    private static func run(_ calibrator: inout MagnetometerCalibrator, sensor: SimulatedSensor, seconds: Double,
                            start: Double, rng: inout SeededGenerator, attitudes: Bool = true) {
        for i in 0..<Int(seconds * 20) {
            let t = start + Double(i) * 0.05
            let pose = SimulatedMotion.figureEight(time: t)
            let (m, a) = sensor.readings(pose, site: .london, rng: &rng)
            calibrator.add(rawMicrotesla: m, accelerationMetresPerSecondSquared: a, time: t,
                           attitude: attitudes ? Quaternion(rotationMatrix: pose) : nil)
        }
    }

    /// A Librem-like unit (87 µT of hard iron) calibrated by 40 s of figure-eights, then `change`
    /// µT added to its hard iron and `seconds` more of the same motion.
    private static func calibrated(change: Vector3, seconds: Double, comparesInTheWorld: Bool = true,
                                   attitudes: Bool = true,
                                   configure: (inout MagnetometerCalibrator.Configuration) -> Void = { _ in })
        -> (MagnetometerCalibrator, SimulatedSensor, generation: Int) {
        var rng = SeededGenerator(seed: 36)
        var sensor = SimulatedSensor.librem(&rng)
        var configuration = MagnetometerCalibrator.Configuration()
        configuration.comparesCorrectionsInTheWorld = comparesInTheWorld
        configure(&configuration)
        var calibrator = MagnetometerCalibrator(configuration: configuration)
        calibrator.setExpectedField(SimulatedSite.london.model)
        run(&calibrator, sensor: sensor, seconds: 40, start: 0, rng: &rng, attitudes: attitudes)
        let generation = calibrator.calibrationGeneration
        sensor.hardIronMicrotesla += change
        run(&calibrator, sensor: sensor, seconds: seconds, start: 40, rng: &rng, attitudes: attitudes)
        return (calibrator, sensor, generation)
    }

    @Test func aMagnetPutIntoTheCaseDiscardsTheFitAndTheNewOneIsLearned() throws {
        // 5.5 µT, most of it along the screen's normal, as trial 36's magnet.
        let (calibrator, sensor, generation) = Self.calibrated(change: Vector3(1.1, 0, -5.4), seconds: 60)
        let fit = try #require(calibrator.fit)
        let offBy = (fit.hardIronOffsetMicrotesla - sensor.hardIronMicrotesla).length
        print("a magnet in the case: fits discarded for a changed field \(calibrator.fitsDiscardedForAChangedFieldCount), "
              + "hard iron off by \(offBy) µT")
        #expect(calibrator.fitsDiscardedForAChangedFieldCount == 1 && calibrator.discardedFitCount == 1)
        #expect(calibrator.state == .calibrated && calibrator.calibrationGeneration > generation)
        #expect(offBy < 1, "the new hard iron is learned: off by \(offBy) µT")

        // The same without the comparison in the world, or without attitudes to compare with:
        // nothing contradicts the old fit, which stays, 5 µT off.
        for (compares, attitudes) in [(false, true), (true, false)] {
            let (kept, sensor, _) = Self.calibrated(change: Vector3(1.1, 0, -5.4), seconds: 60,
                                                    comparesInTheWorld: compares, attitudes: attitudes)
            let old = try #require(kept.fit)
            let off = (old.hardIronOffsetMicrotesla - sensor.hardIronMicrotesla).length
            #expect(kept.fitsDiscardedForAChangedFieldCount == 0 && kept.discardedFitCount == 0)
            #expect(off > 4, "compares \(compares), attitudes \(attitudes): off by \(off) µT")
        }
    }

    @Test func anUnchangedSensorKeepsItsFit() throws {
        let (calibrator, sensor, _) = Self.calibrated(change: .zero, seconds: 120)
        let fit = try #require(calibrator.fit)
        #expect(calibrator.fitsDiscardedForAChangedFieldCount == 0 && calibrator.discardedFitCount == 0)
        #expect((fit.hardIronOffsetMicrotesla - sensor.hardIronMicrotesla).length < 1)
    }

    /// A refinement that disagrees with the fit in use only because the fit was less well
    /// determined explains the stored samples as well as the fit did: one sphere, one residual. A
    /// changed field leaves samples on two spheres, and the refinement mixing them fits worse
    /// (BROAD trials 35 and 36, uninflated covariance: 0.63–0.73 µT against the fit's 0.61–0.78 where the magnet
    /// stayed put, 1.36–1.47 µT against 0.72–0.81 where it was taken off). With the other tests
    /// made loose enough to take near-ties (no least disagreement, any steadier world direction,
    /// the covariance inflated by 0.2 instead of 1.5), the unchanged unit still keeps its fit through the residual
    /// test, and loses it without; the magnet in the case is still seen.
    @Test func aRefinementOfTheSameFieldIsNotAChangedField() throws {
        func loose(_ ratio: Double) -> (inout MagnetometerCalibrator.Configuration) -> Void {
            { configuration in
                configuration.changedFieldMinimumDisagreementDegrees = 0
                configuration.changedFieldVarianceRatio = 1
                configuration.priors.covarianceInflation = 0.2
                configuration.changedFieldResidualRatio = ratio
            }
        }
        let (kept, sensor, _) = Self.calibrated(change: .zero, seconds: 120, configure: loose(1.25))
        let (churned, _, _) = Self.calibrated(change: .zero, seconds: 120, configure: loose(0))
        let (changed, _, _) = Self.calibrated(change: Vector3(1.1, 0, -5.4), seconds: 60, configure: loose(1.25))
        print("unchanged unit under loose changed-field tests: discarded \(kept.fitsDiscardedForAChangedFieldCount) "
              + "with the residual test, \(churned.fitsDiscardedForAChangedFieldCount) without; "
              + "a magnet in the case: \(changed.fitsDiscardedForAChangedFieldCount)")
        #expect(churned.fitsDiscardedForAChangedFieldCount > 0, "the loose tests alone take a near-tie for a change")
        #expect(kept.fitsDiscardedForAChangedFieldCount == 0)
        let fit = try #require(kept.fit)
        #expect((fit.hardIronOffsetMicrotesla - sensor.hardIronMicrotesla).length < 1)
        #expect(changed.fitsDiscardedForAChangedFieldCount >= 1)
    }
}
