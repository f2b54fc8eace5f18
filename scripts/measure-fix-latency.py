#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fix-to-signal latency of qiblad: the time from gpsd sending a TPV report (as seen by a second,
raw gpsd client) to qiblad's PropertiesChanged carrying the new Latitude (as seen by busctl
monitor). Everything runs on this machine: a private dbus-daemon, gpsd fed by gpsfake from
Tests/QiblaGPSDTests/Logs/cities.log (six cities, three fixes each), the built qiblad and qiblactl.

    swift build -c release && scripts/measure-fix-latency.py [.build/release]

Standard library only. Prints one line per city change and the median/max. Both clocks are this
script's, read from two Python threads: the resolution is a fraction of a millisecond, and a
small negative figure is scheduling noise.
"""
import json, os, signal, socket, subprocess, sys, tempfile, threading, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
bindir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, ".build/release")
log = os.path.join(root, "Tests/QiblaGPSDTests/Logs/cities.log")
tmp = tempfile.mkdtemp(prefix="qiblad-latency-")
procs = []

def spawn(args, **kw):
    p = subprocess.Popen(args, **kw)
    procs.append(p)
    return p

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close(); return port

try:
    bus = spawn(["dbus-daemon", "--session", "--nofork", "--print-address=1", "--address=unix:path=%s/bus" % tmp],
                stdout=subprocess.PIPE, text=True)
    address = bus.stdout.readline().strip()
    env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address)
    port = free_port()
    spawn(["gpsfake", "-q", "-c", "0.5", "-P", str(port), log], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)

    # Raw gpsd client: when does gpsd send each latitude?
    sent = {}
    def raw_client():
        for _ in range(50):
            try:
                s = socket.create_connection(("127.0.0.1", port)); break
            except OSError:
                time.sleep(0.1)
        s.sendall(b'?WATCH={"enable":true,"json":true}\n')
        buf = b""
        while True:
            data = s.recv(65536)
            if not data: return
            now = time.time()
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try: report = json.loads(line)
                except ValueError: continue
                if report.get("class") == "TPV" and "lat" in report:
                    sent.setdefault(round(report["lat"], 6), now)
    threading.Thread(target=raw_client, daemon=True).start()

    qiblad = spawn([os.path.join(bindir, "qiblad"), "--session", "--gpsd", "127.0.0.1:%d" % port, "--sysfs-root", "/nonexistent",
                    "--state-dir", tmp + "/state", "--config", tmp + "/none.conf"], env=env, stderr=subprocess.DEVNULL)
    time.sleep(1)
    monitor = spawn(["busctl", "--address=" + address, "--json=short", "monitor", "--match",
                     "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(0.5)
    claim = spawn([os.path.join(bindir, "qiblactl"), "monitor"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    published = {}
    deadline = time.time() + 25
    while time.time() < deadline and len(published) < 12:
        line = monitor.stdout.readline()
        if not line: break
        now = time.time()
        try: message = json.loads(line)
        except ValueError: continue
        changed = message.get("payload", {}).get("data", [None, {}])[1]
        if isinstance(changed, dict) and "Latitude" in changed:
            lat = round(changed["Latitude"]["data"], 6)
            published.setdefault(lat, now)
    latencies = []
    for index, (lat, t) in enumerate(sorted(published.items(), key=lambda kv: kv[1])):
        if lat in sent:
            ms = (t - sent[lat]) * 1000
            if index == 0:
                print("latitude %11.6f: first fix after the claim (includes connecting to gpsd) %.2f ms" % (lat, ms))
                continue
            latencies.append(ms)
            print("latitude %11.6f: gpsd sent → PropertiesChanged seen %.2f ms" % (lat, ms))
    if latencies:
        latencies.sort()
        print("fix-to-signal latency: n=%d median %.2f ms max %.2f ms" % (len(latencies), latencies[len(latencies) // 2], latencies[-1]))
    else:
        print("no latencies measured"); sys.exit(1)
finally:
    for p in reversed(procs):
        p.terminate()
    for p in procs:
        try: p.wait(3)
        except subprocess.TimeoutExpired: p.kill()
