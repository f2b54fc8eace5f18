// SPDX-License-Identifier: Apache-2.0
// A batch of samples with inline storage: handed from the sampling thread to the event loop and
// on to the daemon without touching the heap (issue 12: no per-sample allocations).
import QiblaCore

/// Up to ``capacity`` calibrated samples in the order read (a batch may mix kinds). A value type
/// with fixed inline storage: appending never allocates; a full batch refuses more (the producer
/// hands it over first).
public struct SensorSampleBatch: Sendable, RandomAccessCollection {
    /// Eight periods of three sensors (magnetometer, accelerometer, gyroscope).
    public static let capacity = 24
    private static let placeholder = SensorSample(kind: .magnetometer, vector: Vector3(0, 0, 0), timestampNanoseconds: 0)

    #if compiler(>=6.2)
    private var storage = InlineArray<24, SensorSample>(repeating: placeholder)
    #else
    private var storage = InlineTuple24<SensorSample>(repeating: placeholder)  // Swift 6.0 (Debian 13)
    #endif
    public private(set) var count = 0

    public init() {}

    /// A batch of `samples` (at most ``capacity``; the rest are ignored). For tests and small callers.
    public init<S: Sequence>(_ samples: S) where S.Element == SensorSample {
        for sample in samples where !isFull { append(sample) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public var isFull: Bool { count == Self.capacity }

    public subscript(position: Int) -> SensorSample {
        precondition(position >= 0 && position < count, "SensorSampleBatch index out of range")
        return storage[position]
    }

    /// Appends `sample`; false (and nothing changes) when the batch is full.
    @discardableResult
    public mutating func append(_ sample: SensorSample) -> Bool {
        guard count < Self.capacity else { return false }
        storage[count] = sample
        count += 1
        return true
    }

    public mutating func removeAll() { count = 0 }

    /// Moves each gyroscope sample before the other samples of its instant (the same timestamp,
    /// as one scan of a chip that carries both gives them), keeping the order otherwise: a
    /// gyroscope's sample closes the period that ends at its time, so the attitude filter takes
    /// it before the accelerometer's and the magnetometer's updates of that instant
    /// (issue 36: taken after them, it lagged one sample). Insertion in place, no allocation.
    public mutating func orderGyroscopeFirstWithinInstants() {
        guard count > 1 else { return }
        for index in 1..<count where storage[index].kind == .gyroscope {
            let sample = storage[index]
            var position = index
            while position > 0, storage[position - 1].kind != .gyroscope,
                  storage[position - 1].timestampNanoseconds == sample.timestampNanoseconds {
                storage[position] = storage[position - 1]
                position -= 1
            }
            storage[position] = sample
        }
    }

    /// Keeps only the samples for which `keep` is true, in order.
    public mutating func removeAll(where remove: (SensorSample) -> Bool) {
        var kept = 0
        for index in 0..<count where !remove(storage[index]) {
            storage[kept] = storage[index]
            kept += 1
        }
        count = kept
    }
}
