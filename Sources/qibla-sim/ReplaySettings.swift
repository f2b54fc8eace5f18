// SPDX-License-Identifier: Apache-2.0
// `qibla-sim replay --offline --setting NAME=VALUE`: one of the model's tuning settings changed for
// an experiment, so that a figure BENCHMARKS.md gives for another value ("tried and left out") can
// be measured again from the repository rather than from a patched build.
import QiblaCore
import QiblaDaemon

/// The settings a replay may change: the Swift property's name (its units in the name; its meaning
/// and default in its doc comment) under `filter.` (`AttitudeFilter.Configuration`), `calibrator.`
/// (`MagnetometerCalibrator.Configuration`) or `interference.` (`MagneticInterferenceDetector.Configuration`).
/// Every value is a finite number ≥ 0, or for a flag `true` / `false`.
enum ReplaySetting {
    typealias Configuration = DaemonModel.Configuration

    /// Built on each call: key paths are not `Sendable`, so no static table.
    static func numbers() -> [(name: String, path: WritableKeyPath<Configuration, Double>)] {
        [
            ("filter.gyroscopeNoiseRadiansPerSecondPerRootHertz", \.compass.attitudeFilter.gyroscopeNoiseRadiansPerSecondPerRootHertz),
            ("filter.gyroscopeBiasRandomWalkRadiansPerSecondPerRootSecond",
             \.compass.attitudeFilter.gyroscopeBiasRandomWalkRadiansPerSecondPerRootSecond),
            ("filter.gyroscopeScaleFactorError", \.compass.attitudeFilter.gyroscopeScaleFactorError),
            ("filter.initialGyroscopeBiasSigmaRadiansPerSecond", \.compass.attitudeFilter.initialGyroscopeBiasSigmaRadiansPerSecond),
            ("filter.stillBiasFloorRadiansPerSecond", \.compass.attitudeFilter.stillBiasFloorRadiansPerSecond),
            ("filter.accelerometerBiasMetresPerSecondSquared", \.compass.attitudeFilter.accelerometerBiasMetresPerSecondSquared),
            ("filter.accelerometerNoiseMetresPerSecondSquared", \.compass.attitudeFilter.accelerometerNoiseMetresPerSecondSquared),
            ("filter.accelerometerNoisePerRateMetresPerSecondSquared", \.compass.attitudeFilter.accelerometerNoisePerRateMetresPerSecondSquared),
            ("filter.accelerometerLowPassSeconds", \.compass.attitudeFilter.accelerometerLowPassSeconds),
            ("filter.correlatedTiltErrorRadians", \.compass.attitudeFilter.correlatedTiltErrorRadians),
            ("filter.magnetometerBiasMaximumRateRadiansPerSecond", \.compass.attitudeFilter.magnetometerBiasMaximumRateRadiansPerSecond),
            ("filter.magnetometerNoiseMicrotesla", \.compass.attitudeFilter.magnetometerNoiseMicrotesla),
            ("filter.magnetometerCorrelationSeconds", \.compass.attitudeFilter.magnetometerCorrelationSeconds),
            ("filter.magneticDisturbanceNoiseWeight", \.compass.attitudeFilter.magneticDisturbanceNoiseWeight),
            ("filter.magneticDisturbanceCorrelationSeconds", \.compass.attitudeFilter.magneticDisturbanceCorrelationSeconds),
            ("filter.magnetometerSkewSeconds", \.compass.attitudeFilter.magnetometerSkewSeconds),
            ("filter.initialMagnetometerLagSeconds", \.compass.attitudeFilter.initialMagnetometerLagSeconds),
            ("filter.magnetometerLagSigmaSeconds", \.compass.attitudeFilter.magnetometerLagSigmaSeconds),
            ("filter.magnetometerLagRandomWalkSecondsPerRootSecond", \.compass.attitudeFilter.magnetometerLagRandomWalkSecondsPerRootSecond),
            ("filter.disturbanceFieldFraction", \.compass.attitudeFilter.disturbanceFieldFraction),
            ("filter.disturbanceInclinationDegrees", \.compass.attitudeFilter.disturbanceInclinationDegrees),
            ("filter.fieldPullSeconds", \.compass.attitudeFilter.fieldPullSeconds),
            ("filter.heldReferenceKeptBelowFraction", \.compass.attitudeFilter.heldReferenceKeptBelowFraction),
            ("filter.keepsYawAcrossShortGapSeconds", \.compass.attitudeFilter.keepsYawAcrossShortGapSeconds),
            ("filter.innovationGateSigmas", \.compass.attitudeFilter.innovationGateSigmas),
            ("filter.innovationGateSeconds", \.compass.attitudeFilter.innovationGateSeconds),
            ("filter.restYawDriftDegrees", \.compass.attitudeFilter.restYawDriftDegrees),
            ("filter.lowPassedTiltRecoverySeconds", \.compass.attitudeFilter.lowPassedTiltRecoverySeconds),
            ("filter.minimumInnovationSigmaScale", \.compass.attitudeFilter.minimumInnovationSigmaScale),
            ("filter.innovationConsistencySeconds", \.compass.attitudeFilter.innovationConsistencySeconds),
            ("filter.referenceDipMaximumTiltSigmaDegrees", \.compass.attitudeFilter.referenceDipMaximumTiltSigmaDegrees),
            ("filter.restReadIntervalSeconds", \.compass.attitudeFilter.restReadIntervalSeconds),
            ("filter.wakeRollbackSeconds", \.compass.attitudeFilter.wakeRollbackSeconds),
            ("filter.wakeRollbackMaximumTurnDegrees", \.compass.attitudeFilter.wakeRollbackMaximumTurnDegrees),
            ("filter.recoveryDisagreementSeconds", \.compass.attitudeFilter.recoveryDisagreementSeconds),
            ("filter.recoveryNoiseFactor", \.compass.attitudeFilter.recoveryNoiseFactor),
            ("filter.recoverySeconds", \.compass.attitudeFilter.recoverySeconds),
            ("filter.agreementSeconds", \.compass.attitudeFilter.agreementSeconds),
            ("filter.referenceTimeConstantSeconds", \.compass.attitudeFilter.referenceTimeConstantSeconds),
            ("filter.relearnReferenceSeconds", \.compass.attitudeFilter.relearnReferenceSeconds),
            ("filter.referenceRelearnSeconds", \.compass.attitudeFilter.referenceRelearnSeconds),
            ("calibrator.freshFitSeconds", \.compass.calibrator.freshFitSeconds),
            ("calibrator.freshFitImprovement", \.compass.calibrator.freshFitImprovement),
            ("calibrator.identityResidualRatio", \.compass.calibrator.identityResidualRatio),
            ("calibrator.identityAlternativeRatio", \.compass.calibrator.identityAlternativeRatio),
            ("calibrator.fitIntervalSeconds", \.compass.calibrator.fitIntervalSeconds),
            ("calibrator.refinementImprovement", \.compass.calibrator.refinementImprovement),
            ("calibrator.refineIntervalSeconds", \.compass.calibrator.refineIntervalSeconds),
            ("calibrator.confirmationSeconds", \.compass.calibrator.confirmationSeconds),
            ("calibrator.contradictionSeconds", \.compass.calibrator.contradictionSeconds),
            ("calibrator.contradictionMagnitudeSpreadFraction", \.compass.calibrator.contradictionMagnitudeSpreadFraction),
            ("calibrator.changedFieldVarianceRatio", \.compass.calibrator.changedFieldVarianceRatio),
            ("calibrator.changedFieldMinimumDisagreementDegrees", \.compass.calibrator.changedFieldMinimumDisagreementDegrees),
            ("calibrator.attitudeFilterVerticalErrorDegrees", \.compass.calibrator.attitudeFilterVerticalErrorDegrees),
            ("calibrator.sampleSet.mergeAngleDegrees", \.compass.calibrator.sampleSet.mergeAngleDegrees),
            ("calibrator.priors.covarianceInflation", \.compass.calibrator.priors.covarianceInflation),
            ("calibrator.changedFieldResidualRatio", \.compass.calibrator.changedFieldResidualRatio),
            ("interference.fieldToleranceFraction", \.compass.calibrator.interference.fieldToleranceFraction),
            ("interference.inclinationToleranceDegrees", \.compass.calibrator.interference.inclinationToleranceDegrees),
        ]
    }

    static func flags() -> [(name: String, path: WritableKeyPath<Configuration, Bool>)] {
        [("filter.keepsYawAcrossUntiltedGap", \.compass.attitudeFilter.keepsYawAcrossUntiltedGap),
         ("filter.constantScaleFactorInSigma", \.compass.attitudeFilter.constantScaleFactorInSigma),
         ("filter.keepsVerticalAtStillWake", \.compass.attitudeFilter.keepsVerticalAtStillWake)]
    }

    static var names: [String] { numbers().map(\.name) + flags().map(\.name) }

    /// Applies one `NAME=VALUE` to `configuration`; the error says what was wrong with it.
    static func apply(_ text: String, to configuration: inout Configuration) throws(ReplaySettingError) {
        guard let equals = text.firstIndex(of: "=") else { throw .notAnAssignment(text) }
        let name = String(text[..<equals]), value = String(text[text.index(after: equals)...])
        if let setting = numbers().first(where: { $0.name == name }) {
            guard let number = Double(value), number.isFinite, number >= 0 else { throw .badNumber(name: name, value: value) }
            configuration[keyPath: setting.path] = number
        } else if let setting = flags().first(where: { $0.name == name }) {
            switch value {
            case "true": configuration[keyPath: setting.path] = true
            case "false": configuration[keyPath: setting.path] = false
            default: throw .badFlag(name: name, value: value)
            }
        } else {
            throw .unknown(name)
        }
    }
}

enum ReplaySettingError: Error, CustomStringConvertible {
    case notAnAssignment(String)
    case badNumber(name: String, value: String)
    case badFlag(name: String, value: String)
    case unknown(String)

    var description: String {
        switch self {
        case .notAnAssignment(let text): "--setting \"\(text)\": expected NAME=VALUE"
        case .badNumber(let name, let value): "--setting \(name): \"\(value)\" is not a finite number ≥ 0"
        case .badFlag(let name, let value): "--setting \(name): \"\(value)\" is neither true nor false"
        case .unknown(let name): "--setting: no setting \"\(name)\"; known: \(ReplaySetting.names.joined(separator: ", "))"
        }
    }
}
