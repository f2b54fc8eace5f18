/* SPDX-License-Identifier: Apache-2.0 */
// GeographicLib baseline for qibla-bench: Geodesic::WGS84().Inverse from the same deterministic
// points as Sources/qibla-bench/main.swift (BenchmarkPoints) to the Kaaba, timed the same way:
// one sample = (time of one pass over all points) / points; median and p90 over the timed batches.
//
// Build (scripts/benchmark.sh does this):
//   g++ -O2 -std=c++17 scripts/geographiclib_bench.cpp -lGeographicLib -o geographiclib_bench
// Output, one line: median_ns=<x> p90_ns=<y> checksum=<points checksum> sink=<anti-optimisation sum>
#include <GeographicLib/Constants.hpp>
#include <GeographicLib/Geodesic.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace {

struct Point {
    double latitude, longitude, height;
};

// Knuth's MMIX LCG, seed 20250101; u = (x >> 11) * 2^-53 — identical to BenchmarkPoints.generate.
std::vector<Point> generatePoints(int count) {
    std::uint64_t state = 20250101ULL;
    auto next = [&state]() {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(state >> 11) * 0x1p-53;
    };
    std::vector<Point> points;
    points.reserve(count);
    for (int i = 0; i < count; ++i) {
        double latitude = -89 + 178 * next();
        double longitude = -180 + 360 * next();
        double height = 500 * next();
        points.push_back({latitude, longitude, height});
    }
    return points;
}

std::uint64_t monotonicNanoseconds() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::uint64_t>(now.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(now.tv_nsec);
}

double percentile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return NAN;
    long rank = static_cast<long>(std::ceil(q * static_cast<double>(sorted.size()))) - 1;
    rank = std::clamp(rank, 0L, static_cast<long>(sorted.size()) - 1);
    return sorted[static_cast<size_t>(rank)];
}

}  // namespace

int main(int argc, char** argv) {
    int count = argc > 1 ? std::atoi(argv[1]) : 1000;
    int batches = argc > 2 ? std::atoi(argv[2]) : 300;
    int warmup = argc > 3 ? std::atoi(argv[3]) : 20;
    if (count <= 0 || batches <= 0 || warmup < 0) {
        std::fprintf(stderr, "usage: %s [points] [batches] [warmup]\n", argv[0]);
        return 2;
    }
    // Same Kaaba as Qibla.defaultKaaba.
    const double kaabaLatitude = 21.4225241, kaabaLongitude = 39.8261818;
    const auto points = generatePoints(count);
    double checksum = 0;
    for (const auto& p : points) checksum += p.latitude + p.longitude / 1000;

    const GeographicLib::Geodesic& geodesic = GeographicLib::Geodesic::WGS84();
    std::vector<double> samples;
    samples.reserve(static_cast<size_t>(batches));
    double sink = 0;
    for (int batch = 0; batch < warmup + batches; ++batch) {
        const auto start = monotonicNanoseconds();
        double local = 0;
        for (const auto& p : points) {
            double s12, azi1, azi2;
            geodesic.Inverse(p.latitude, p.longitude, kaabaLatitude, kaabaLongitude, s12, azi1, azi2);
            local += s12 + azi1;
        }
        const auto elapsed = monotonicNanoseconds() - start;
        sink += local;
        if (batch >= warmup) samples.push_back(static_cast<double>(elapsed) / count);
    }
    std::sort(samples.begin(), samples.end());
    std::printf("median_ns=%.3f p90_ns=%.3f checksum=%.9f sink=%.6e version=%s\n", percentile(samples, 0.5),
                percentile(samples, 0.9), checksum, sink, GEOGRAPHICLIB_VERSION_STRING);
    return 0;
}
