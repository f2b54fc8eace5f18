// SPDX-License-Identifier: Apache-2.0
import QiblaDaemon
import QiblaDBus
import QiblaInterface
import QiblaSensorProxy

/// The heading sources (the raw IIO sensors, iio-sensor-proxy's compass) wired to
/// ``HeadingSourceModel``: which run and which serves is the model's decision; this starts and
/// stops them and feeds their events in.
extension Daemon {
    /// Starts or stops the raw sensors and iio-sensor-proxy's compass as the model says (only
    /// while the live sources run at all).
    func reconcileHeadingSources() {
        // Read the model after each step: starting the sensors may report them at once (and so
        // decide about iio-sensor-proxy) before this returns.
        if liveSourcesRunning, model.headingSource.runsMagnetometer { startSensors() } else if sensors != nil { stopSensors() }
        if liveSourcesRunning, model.headingSource.runsSensorProxy { startSensorProxy() } else { stopSensorProxy() }
    }

    /// After an input that may change what runs or serves: reconcile, and one log line when the
    /// serving source changed.
    func headingSourceInputApplied(servingBefore before: HeadingSource) {
        reconcileHeadingSources()
        write(log.headingSourceChange(from: before, to: model.headingSource.serving, running: liveSourcesRunning))
    }

    func startSensorProxy() {
        guard sensorProxy == nil else { return }
        let source = SensorProxyCompass(configuration: SensorProxyCompass.Configuration(bus: .system), loop: loop,
                                        logger: logger) { [unowned self] event in
            handle(event)
        }
        sensorProxy = source
        source.start()
    }

    func stopSensorProxy() {
        guard let source = sensorProxy else { return }
        source.stop()
        sensorProxy = nil
        model.apply(.sensorProxyCompass(present: false))
    }

    func handle(_ event: SensorProxyCompassEvent) {
        let before = model.headingSource.serving
        switch event {
        case .compass(let present):
            model.apply(.sensorProxyCompass(present: present))
            if !present { write(log.fact(.sensorProxy, "iio-sensor-proxy has no compass (HasCompass false)")) }
        case .heading(let degrees):
            model.apply(.sensorProxyHeading(degrees))
        case .unavailable(let reason, _):
            write(log.fact(.sensorProxy, "iio-sensor-proxy's compass is not available (\(reason)); claiming it when it appears"))
        case .accessDenied(let message):
            write(log.fact(.sensorProxy, "iio-sensor-proxy refused its compass to this user (\(message)); the policy drop-in "
                           + "qiblad-iio-sensor-proxy.conf and the polkit rule qiblad-iio-sensor-proxy.rules allow "
                           + "the system service's user (see README, Heading sources)",
                           level: .warning))
        }
        headingSourceInputApplied(servingBefore: before)
        publish()
    }
}
