#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sample-to-signal latency of qiblad (issue 12): the time from a new magnetometer value appearing
in sysfs to a client seeing the PropertiesChanged whose Heading reflects it.

A private dbus-daemon; a simulated PinePhone tree (qibla-sim create, on a tmpfs) whose values this
script writes itself: two still scenes (computed once by `qibla-sim run
--heading-deg ... --noise-ut 0 --accel-noise 0`; 5 degrees apart by default), no noise, so a phone lying still sends no signal
and the first Heading signal after a step is the step's. Each step rewrites in_magn_{x,y,z}_raw in
place (pwrite, fixed width) and notes the time; `busctl monitor` (read by a thread of this script)
notes when the signal arrives. Both times are this script's monotonic clock.

What a step's latency is made of: the wait for the next read (uniform over one sampling period),
the wait for the next hand-off (0 or more periods: hand-offs come once per 1 / max-signal-rate),
then read-to-signal (the model, the publisher, libdbus, dbus-daemon, busctl). The script also
prints the minimum, which is about the read-to-signal path alone.

    swift build -c release && scripts/measure-sample-latency.py [BINDIR] [--steps N] [--rates 20,100] [--output FILE]

Writes its table between the sample-latency markers of BENCHMARKS.md (--output /dev/null: print
only). Standard library only. Needs dbus-daemon and busctl.

With --after-rest (issue 25), each step is a turn of --step-deg (90 by default there) after the
phone has lain still for --rest-wait seconds (past the 2 s that make a rest), at 20 Hz with each
`rest-sample-rate` of --rest-rates: the time to the first `Heading` signal and to the first one
within 2 degrees of the new heading; the table goes between the rest-latency markers.
"""
import argparse, json, os, queue, shutil, struct, subprocess, sys, tempfile, threading, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("bindir", nargs="?", default=os.path.join(root, ".build/release"))
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--rates", default="20,100", help="qiblad sample-rate settings, Hz, comma-separated")
parser.add_argument("--step-deg", type=float, default=5.0, help="size of each step, degrees")
parser.add_argument("--settle", type=float, default=1.2, help="seconds between steps")
parser.add_argument("--output", default=os.path.join(root, "BENCHMARKS.md"))
parser.add_argument("--after-rest", action="store_true", help="turns after a rest (issue 25)")
parser.add_argument("--rest-rates", default="2,4", help="rest-sample-rate settings for --after-rest, Hz; `events`: "
                    "a PinePhone Pro whose MPU-6500 has the kernel's wake-on-motion event (issue 37)")
parser.add_argument("--rest-wait", type=float, default=3.5, help="seconds still before each turn (--after-rest)")
parser.add_argument("--turn-degrees", default="90,20", help="turn sizes for --after-rest, degrees")
args = parser.parse_args()

# The benchmarks' scratch root (scripts/lib/bench-common.sh: a noatime tmpfs as root, as sysfs has no atime).
scratch_root = subprocess.run(["bash", "-c", ". scripts/lib/bench-common.sh && bench_scratch_root"], cwd=root,
                              capture_output=True, text=True, check=True).stdout.strip() or None
tmp = tempfile.mkdtemp(prefix="qiblad-sample-latency-", dir=scratch_root)
procs = []
LAT, LON = "51.5074", "-0.1278"
AXES = ["in_magn_x_raw", "in_magn_y_raw", "in_magn_z_raw"]


def spawn(argv, **kw):
    p = subprocess.Popen(argv, **kw)
    procs.append(p)
    return p


def magnetometer_dir(sys_root):
    devices = os.path.join(sys_root, "bus/iio/devices")
    for name in sorted(os.listdir(devices)):
        if os.path.exists(os.path.join(devices, name, "in_magn_x_raw")):
            return os.path.join(devices, name)
    raise SystemExit("measure-sample-latency: qibla-sim made no magnetometer")


def still_scene(heading, phone="pinephone"):
    """The raw magnetometer values of a still phone at `heading` degrees (true)."""
    scene = os.path.join(tmp, "scene-%g-%s" % (heading, phone))
    subprocess.run([os.path.join(args.bindir, "qibla-sim"), "run", "--root", scene, "--phone", phone,
                    "--lat", LAT, "--lon=" + LON, "--heading-deg", str(heading), "--noise-ut", "0",
                    "--accel-noise", "0", "--duration", "0.5"], check=True, stdout=subprocess.DEVNULL)
    device = magnetometer_dir(scene)
    return [int(open(os.path.join(device, axis)).read()) for axis in AXES]


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def stop_all():
    for p in reversed(procs):
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=3)
        except subprocess.TimeoutExpired:
            p.kill()
    procs.clear()


def measure(rate, scenes, rest_rate=None):
    """Steps at one sample-rate; returns the latencies, ms (with rest_rate: pairs of the first
    Heading signal's latency and the first within 2 degrees of the new heading)."""
    sys_root = os.path.join(tmp, "sys-%g-%s" % (rate, rest_rate))
    events = rest_rate == "events"
    subprocess.run([os.path.join(args.bindir, "qibla-sim"), "run", "--root", sys_root, "--phone",
                    "pinephone-pro" if events else "pinephone",
                    "--lat", LAT, "--lon=" + LON, "--heading-deg", "0", "--noise-ut", "0", "--accel-noise", "0",
                    "--duration", "0.5"], check=True, stdout=subprocess.DEVNULL)
    device = magnetometer_dir(sys_root)
    files = [os.open(os.path.join(device, axis), os.O_RDWR) for axis in AXES]

    def write_scene(values):
        for fd, value in zip(files, values):
            os.pwrite(fd, b"%11d\n" % value, 0)  # fixed width: a concurrent pread sees a whole number
        return time.monotonic()

    for fd in files:
        os.ftruncate(fd, 0)
    write_scene(scenes[0])
    dev_root = os.path.join(tmp, "dev-%g-%s" % (rate, rest_rate))
    event_fifo = enable = None
    if events:
        # The accelerometer's wake-on-motion event as the kernel shows it (inv_mpu6050, chips from
        # the MPU-6500 on: events/in_accel_x|y|z_roc_rising_{en,value}) and, where the kernel hands
        # out the event descriptor through ioctl(IIO_GET_EVENT_FD_IOCTL) on /dev/iio:deviceN, the
        # simulator's stand-in: a FIFO at <dev-root>/iio:deviceN-event-fd (QiblaSimulator's
        # SimulatedDevice documents it; qiblad opens it only when /dev/iio:deviceN is no character device).
        devices = os.path.join(sys_root, "bus/iio/devices")
        accel = next(os.path.join(devices, n) for n in sorted(os.listdir(devices))
                     if os.path.exists(os.path.join(devices, n, "in_accel_x_raw")))
        os.makedirs(os.path.join(accel, "events"), exist_ok=True)
        enable = os.path.join(accel, "events/in_accel_x|y|z_roc_rising_en")
        open(enable, "w").write("0\n")
        open(os.path.join(accel, "events/in_accel_x|y|z_roc_rising_value"), "w").write("0.000000\n")
        os.makedirs(dev_root, exist_ok=True)
        fifo_path = os.path.join(dev_root, os.path.basename(accel) + "-event-fd")
        if not os.path.exists(fifo_path):
            os.mkfifo(fifo_path)
        event_fifo = os.open(fifo_path, os.O_RDWR | os.O_NONBLOCK)

    def push_motion_event():
        """The hand that turns the phone moves it: one record when the event is enabled, as the kernel
        queues it (IIO_MOD_EVENT_CODE(IIO_ACCEL, 0, IIO_MOD_X_OR_Y_OR_Z, IIO_EV_TYPE_ROC, IIO_EV_DIR_RISING))."""
        if event_fifo is None or open(enable).read().strip() != "1":
            return False
        os.write(event_fifo, struct.pack("=Qq", 2 << 56 | 1 << 48 | 11 << 40 | 3 << 32, time.monotonic_ns()))
        return True

    bus = spawn(["dbus-daemon", "--session", "--nofork", "--print-address=1",
                 "--address=unix:path=%s/bus-%g" % (tmp, rate)], stdout=subprocess.PIPE, text=True)
    address = bus.stdout.readline().strip()
    env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address)
    config = os.path.join(tmp, "qiblad-%g.conf" % rate)
    with open(config, "w") as conf:
        conf.write("sample-rate = %g\n" % rate)
        # The steps (5 degrees, 1.7 uT, every 1.2 s, no noise) are below the rest detector's
        # motion threshold: with the rest on this phone would count as lying still. A phone in the
        # hand never rests; turns after a rest are --after-rest's.
        conf.write("rest-sample-rate = %s\n" % ("off" if rest_rate is None else "2" if events else rest_rate))
    spawn([os.path.join(args.bindir, "qiblad"), "--session", "--no-gpsd", "--sysfs-root", sys_root, "--dev-root", dev_root,
           "--state-dir", os.path.join(tmp, "state-%g" % rate), "--location=%s,%s" % (LAT, LON), "--config", config],
          env=env, stderr=open(os.path.join(tmp, "qiblad-%g.log" % rate), "w"))
    time.sleep(1)
    monitor = spawn(["busctl", "--address=" + address, "--json=short", "monitor", "--match",
                     "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    arrivals = queue.Queue()

    def read_monitor():
        for line in monitor.stdout:
            now = time.monotonic()
            try:
                changed = json.loads(line).get("payload", {}).get("data", [None, {}])[1]
            except ValueError:
                continue
            if isinstance(changed, dict) and "Heading" in changed:
                arrivals.put((now, changed["Heading"].get("data") if isinstance(changed["Heading"], dict) else None))
    threading.Thread(target=read_monitor, daemon=True).start()
    time.sleep(0.5)
    spawn([os.path.join(args.bindir, "qiblactl"), "monitor"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(3)  # the claim starts the sensors; the first headings go out

    latencies = []
    if rest_rate is not None:
        for step in range(args.steps):
            time.sleep(args.rest_wait + (step * 0.6180339887 % 1.0) * 0.5)  # at any phase of the rest period
            while not arrivals.empty():
                arrivals.get_nowait()
            target = args.step_deg * ((step + 1) % 2)
            written = write_scene(scenes[(step + 1) % 2])
            if events and not push_motion_event():
                print("step %d: the motion event was not enabled at rest" % step, file=sys.stderr)
            first = close = None
            deadline = written + 3
            while close is None and time.monotonic() < deadline:
                try:
                    arrived, heading = arrivals.get(timeout=max(0.01, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if first is None:
                    first = arrived
                if heading is not None and abs((heading - target + 180) % 360 - 180) <= 2:
                    close = arrived
            if first is None or close is None:
                print("step %d after rest (%s Hz): no Heading within 2 degrees of %g within 3 s" % (step, rest_rate, target),
                      file=sys.stderr)
                continue
            latencies.append(((first - written) * 1000, (close - written) * 1000))
        for fd in files:
            os.close(fd)
        if len(latencies) < args.steps * 0.9:
            raise SystemExit("measure-sample-latency: only %d of %d turns after a rest were followed" % (len(latencies), args.steps))
        return latencies
    for step in range(args.steps):
        while not arrivals.empty():
            arrivals.get_nowait()
        # A real change comes at any moment: spread the steps evenly (golden-ratio sequence) over
        # one hand-off interval (1 / max-signal-rate, 0.1 s by default), which spans the sampling period.
        time.sleep((step * 0.6180339887 % 1.0) * 0.1)
        written = write_scene(scenes[(step + 1) % 2])
        try:
            arrived, _ = arrivals.get(timeout=2)
        except queue.Empty:
            print("step %d at %g Hz: no Heading signal within 2 s" % (step, rate), file=sys.stderr)
            continue
        latencies.append((arrived - written) * 1000)
        time.sleep(args.settle)  # the smoothing converges; its signals are drained before the next step
    for fd in files:
        os.close(fd)
    if len(latencies) < args.steps * 0.9:
        raise SystemExit("measure-sample-latency: only %d of %d steps were signalled at %g Hz" % (len(latencies), args.steps, rate))
    return latencies


def write_marked_section(path, marker, text):
    """Replaces the lines from "<!-- MARKER:begin" to "<!-- MARKER:end -->" with text, or appends it."""
    if path == "/dev/null":
        return
    lines = open(path).read().split("\n") if os.path.exists(path) else ["# Benchmarks", ""]
    begin = next((i for i, l in enumerate(lines) if l.startswith("<!-- %s:begin" % marker)), None)
    end = next((i for i, l in enumerate(lines) if l.startswith("<!-- %s:end -->" % marker)), None)
    new = text.rstrip("\n").split("\n")
    if begin is not None and end is not None and begin < end:
        lines[begin:end + 1] = new
    else:
        lines += [""] + new + [""]
    with open(path, "w") as out:
        out.write("\n".join(lines))
    print("updated %s" % path, file=sys.stderr)


def after_rest():
    """The --after-rest table (issue 25)."""
    rows = []
    for turn, rest_rate in [(float(t), r) for t in args.turn_degrees.split(",") for r in args.rest_rates.split(",")]:
        args.step_deg = turn
        phone = "pinephone-pro" if rest_rate == "events" else "pinephone"
        scenes = [still_scene(0, phone), still_scene(turn, phone)]
        pairs = measure(20, scenes, rest_rate)
        stop_all()
        first, close = [p[0] for p in pairs], [p[1] for p in pairs]
        print("turn of %g degrees after a rest, rest-sample-rate %s: n=%d first Heading median %.0f ms max %.0f ms; within 2 degrees median %.0f ms max %.0f ms"
              % (turn, rest_rate, len(pairs), percentile(first, 50), max(first), percentile(close, 50), max(close)), file=sys.stderr)
        rows.append("| %g° | %s | %d | %.0f ms | %.0f ms | %.0f ms | %.0f ms | %.0f ms |"
                    % (turn, "2 Hz, resting on the motion event (PinePhone Pro)" if rest_rate == "events"
                       else rest_rate if rest_rate == "off" else rest_rate + " Hz", len(pairs), percentile(first, 50), percentile(first, 90),
                       max(first), percentile(close, 50), max(close)))
    machine = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    section = """<!-- rest-latency:begin (generated by scripts/measure-sample-latency.py --after-rest; edit outside the markers) -->
## A turn after a rest (issues 25 and 37)

- Date: %s; machine: %s (%d logical CPUs), %s %s.
- Command: `scripts/measure-sample-latency.py --after-rest --steps %d --rest-rates %s --turn-degrees %s` (release build, polling,
  `sample-rate = 20`, the default `max-signal-rate = 10`).
- Setup: as above, but before each step the phone lies still for %g s to %g s (a rest begins after 2 s), and each step
  turns it (a turn of 30° or more restarts the heading's 0.5 s smoothing window; a smaller one is averaged into it); the times are from the rewrite of `in_magn_{x,y,z}_raw` to the first `Heading` signal seen by
  `busctl monitor`, and to the first one within 2° of the new heading. By construction the turn waits for the next
  read at the rest rate: up to one rest period (500 ms at 2 Hz, 250 ms at 4 Hz), uniformly. A 5° turn (1.7 µT) is
  below the rest detector's 3 µT motion threshold: it reaches the heading when the detector's reference (time
  constant 1 s) is 1.2 µT from the sample last handed over, and the rate stays the rest rate.
- `events` (issue 37): a simulated PinePhone Pro, whose MPU-6500 has the kernel's wake-on-motion event
  (`events/in_accel_x|y|z_roc_rising_en`; the PinePhone's MPU-6050 has none and keeps the 2 Hz reads): at rest qiblad
  reads nothing and waits on the event descriptor (here the simulator's FIFO stand-in for the one
  `ioctl(IIO_GET_EVENT_FD_IOCTL)` returns). Each turn writes the magnetometer, then the one event record the hand's
  motion would raise; the times are from the magnetometer's rewrite. On a phone the chip raises the event as the
  hand starts to move, before the heading has changed: the figure is the daemon's part, from the event to the signal.

| turn | rest-sample-rate | turns | first Heading, median | p90 | max | within 2°, median | max |
|---|---|---:|---:|---:|---:|---:|---:|
%s
<!-- rest-latency:end -->
""" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), machine.replace(" 7R13 Processor", ""), os.cpu_count(),
       os.uname().sysname, os.uname().release, args.steps, args.rest_rates, args.turn_degrees, args.rest_wait,
       args.rest_wait + 0.5, "\n".join(rows))
    print(section)
    write_marked_section(args.output, "rest-latency", section)


try:
    if args.after_rest:
        after_rest()
        raise SystemExit(0)
    scenes = [still_scene(0), still_scene(args.step_deg)]
    rows = []
    for rate in [float(r) for r in args.rates.split(",")]:
        latencies = measure(rate, scenes)
        stop_all()
        median, p99 = percentile(latencies, 50), percentile(latencies, 99)
        print("sample-to-signal latency at %g Hz: n=%d median %.1f ms, p99 %.1f ms, min %.1f ms, max %.1f ms"
              % (rate, len(latencies), median, p99, min(latencies), max(latencies)), file=sys.stderr)
        rows.append("| %g Hz | %d | %.1f ms | %.1f ms | %.1f ms | %.1f ms |"
                    % (rate, len(latencies), median, p99, min(latencies), max(latencies)))
    machine = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    section = """<!-- sample-latency:begin (generated by scripts/measure-sample-latency.py; edit outside the markers) -->
## Sample-to-signal latency (a new magnetometer value to the client's PropertiesChanged)

- Date: %s; machine: %s (%d logical CPUs), %s %s.
- Command: `scripts/measure-sample-latency.py --steps %d --rates %s` (release build, polling, the default
  `max-signal-rate = 10`: hand-offs and heading signals at most every 100 ms; `rest-sample-rate = off`: 5° steps
  without noise would count as a phone lying still, which a phone in the hand is not; see the next section).
- Setup: a still simulated PinePhone on a tmpfs, no noise; each step rewrites `in_magn_{x,y,z}_raw` for a %g° turn, at a
  moment spread evenly over one hand-off interval; the latency is the time to the first `Heading` signal seen by
  `busctl monitor`. It is made of the wait for the next read (up to one sampling period), the wait for the next
  hand-off (up to 100 ms) and the read-to-signal path itself (about the minimum).

| sample-rate | steps | median | p99 | min | max |
|---|---:|---:|---:|---:|---:|
%s
<!-- sample-latency:end -->
""" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), machine.replace(" 7R13 Processor", ""), os.cpu_count(),
       os.uname().sysname, os.uname().release, args.steps, args.rates, args.step_deg, "\n".join(rows))
    print(section)
    write_marked_section(args.output, "sample-latency", section)
finally:
    stop_all()
    shutil.rmtree(tmp, ignore_errors=True)
