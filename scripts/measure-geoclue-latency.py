#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fix-to-signal latency of qiblad through GeoClue2, and its recovery times.

Everything runs on this machine, as root (GeoClue gets its own /etc/geoclue in a private mount
namespace, `unshare -m`): a private dbus-daemon as the system bus with GeoClue2's bus policy, the
real /usr/libexec/geoclue (Debian's geoclue-2.0, 2.6) reading NMEA from a Unix socket this script
serves, GeoClue's demo agent, a second dbus-daemon as qiblad's session bus, the built qiblad
(location-source = auto) and qiblactl monitor as the claiming client.

    swift build -c release && sudo scripts/measure-geoclue-latency.py [.build/release]

Latency: the time from writing a GGA sentence into GeoClue's socket to busctl monitor seeing
qiblad's PropertiesChanged with that latitude (NMEA → GeoClue → LocationUpdated → GetAll →
qiblad's model → PropertiesChanged → busctl). Recovery: GeoClue killed (SIGKILL) → qiblad's
LocationSource leaves "geoclue"; GeoClue started again → LocationSource is "geoclue" again.
Standard library only. Both clocks are this script's (time.time() in two threads).
"""
import json, os, queue, signal, socket, subprocess, sys, tempfile, threading, time

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXES = 25   # fixes timed
ROUNDS = 5   # kill/restart rounds timed


class Children:
    """The processes this script starts; SIGTERM (then SIGKILL) for all of them on the way out."""
    def __init__(self):
        self.started = []

    def __call__(self, args, **kw):
        child = subprocess.Popen(args, **kw)
        self.started.append(child)
        return child

    def __enter__(self):
        return self

    def __exit__(self, *_):
        for child in reversed(self.started):
            child.terminate()
        for child in self.started:
            try: child.wait(3)
            except subprocess.TimeoutExpired: child.kill()


bindir = os.path.abspath(sys.argv[1]) if sys.argv[1:] else os.path.join(REPOSITORY, ".build", "release")
tmp = tempfile.mkdtemp(prefix="qiblad-geoclue-latency-")


def gga(lat, lon, alt=11.0):
    t = time.gmtime()
    clock = time.strftime("%H%M%S", t) + ".00"
    def field(v, digits, pos, neg):
        a = abs(v); d = int(a)
        return ("%0" + str(digits) + "d%09.6f,%s") % (d, (a - d) * 60, pos if v >= 0 else neg)
    body = "GPGGA,%s,%s,%s,1,08,0.9,%.2f,M,45.40,M,," % (clock, field(lat, 2, "N", "S"), field(lon, 3, "E", "W"), alt)
    cs = 0
    for ch in body: cs ^= ord(ch)
    return ("$%s*%02X\r\n" % (body, cs)).encode()


class NMEAServer:
    """GeoClue's nmea-socket: GeoClue connects, we write sentences to every client."""
    def __init__(self, path):
        self.clients, self.lock = [], threading.Lock()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path); self.sock.listen(8)
        threading.Thread(target=self.accept, daemon=True).start()
    def accept(self):
        while True:
            c, _ = self.sock.accept()
            with self.lock: self.clients.append(c)
    def send(self, data):
        with self.lock:
            now = time.time()
            alive = []
            for c in self.clients:
                try: c.sendall(data); alive.append(c)
                except OSError: c.close()
            self.clients = alive
            return now


def start_bus(spawn, config):
    bus = spawn(["dbus-daemon", "--config-file=" + config, "--nofork", "--print-address=1"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return bus.stdout.readline().strip().split(",")[0]


def busctl(address, *args):
    return subprocess.run(["busctl", "--address=" + address] + list(args), capture_output=True, text=True, timeout=15).stdout


with Children() as spawn:
    etc = os.path.join(tmp, "etc"); os.mkdir(etc)
    nmea_path = os.path.join(tmp, "nmea.sock")
    with open(os.path.join(etc, "geoclue.conf"), "w") as f:
        f.write("[agent]\nwhitelist=geoclue-demo-agent\n[network-nmea]\nenable=true\nnmea-socket=%s\n"
                "[3g]\nenable=false\n[cdma]\nenable=false\n[modem-gps]\nenable=false\n"
                "[wifi]\nenable=false\nurl=http://127.0.0.1:9/geolocate\nsubmit-data=false\n[compass]\nenable=false\n"
                "[qiblad]\nallowed=true\nsystem=false\nusers=\n" % nmea_path)
    policies = "".join('<include ignore_missing="yes">%s</include>' % p for p in [
        "/etc/dbus-1/system.d/org.freedesktop.GeoClue2.conf", "/usr/share/dbus-1/system.d/org.freedesktop.GeoClue2.conf",
        "/etc/dbus-1/system.d/org.freedesktop.GeoClue2.Agent.conf", "/usr/share/dbus-1/system.d/org.freedesktop.GeoClue2.Agent.conf"])
    for name, kind in (("system", "qiblad-test-system"), ("session", "session")):
        with open(os.path.join(tmp, name + ".conf"), "w") as f:
            f.write('<busconfig><type>%s</type><listen>unix:path=%s/%s_bus</listen><auth>EXTERNAL</auth>'
                    '<policy context="default"><allow user="*"/><allow send_destination="*" eavesdrop="true"/>'
                    '<allow eavesdrop="true"/><allow own="*"/></policy>%s</busconfig>'
                    % (kind, tmp, name, policies if name == "system" else ""))
    system = start_bus(spawn, os.path.join(tmp, "system.conf"))
    session = start_bus(spawn, os.path.join(tmp, "session.conf"))
    nmea = NMEAServer(nmea_path)
    genv = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=system, G_MESSAGES_DEBUG="Geoclue")

    def start_geoclue():
        launched = time.time()
        p = spawn(["unshare", "-m", "sh", "-c", "mount --bind %s /etc/geoclue && exec /usr/libexec/geoclue -t 0" % etc],
                  env=genv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while "b true" not in busctl(system, "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "NameHasOwner", "s", "org.freedesktop.GeoClue2"):
            time.sleep(0.01)
        return p, launched, time.time()

    geoclue, _, _ = start_geoclue()
    spawn(["/usr/libexec/geoclue-2.0/demos/agent"], env=genv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)

    qenv = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=session, DBUS_SYSTEM_BUS_ADDRESS=system)
    open(os.path.join(tmp, "qiblad.conf"), "w").close()
    spawn([os.path.join(bindir, "qiblad"), "--session", "--no-gpsd", "--sysfs-root", "/nonexistent",
           "--state-dir", tmp + "/state", "--config", tmp + "/qiblad.conf"], env=qenv, stderr=subprocess.DEVNULL)
    time.sleep(1)
    busctl(session, "call", "io.github.qiblad.Qibla1", "/io/github/qiblad/Qibla1", "io.github.qiblad.Qibla1",
           "SetManualLocation", "dd", "30.0444", "31.2357")
    monitor = spawn(["busctl", "--address=" + session, "--json=short", "monitor", "--match",
                     "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    signals = queue.Queue()
    def read_monitor():
        for line in monitor.stdout:
            now = time.time()
            try: changed = json.loads(line).get("payload", {}).get("data", [None, {}])[1]
            except (ValueError, AttributeError, IndexError): continue
            if isinstance(changed, dict): signals.put((now, {k: v.get("data") for k, v in changed.items()}))
    threading.Thread(target=read_monitor, daemon=True).start()
    time.sleep(0.5)
    spawn([os.path.join(bindir, "qiblactl"), "monitor"], env=qenv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait_for(predicate, timeout, feed=None):
        end = time.time() + timeout
        next_feed = 0
        while time.time() < end:
            if feed and time.time() >= next_feed:
                nmea.send(gga(*feed)); next_feed = time.time() + 0.2
            try: t, changed = signals.get(timeout=0.05)
            except queue.Empty: continue
            if predicate(changed): return t
        return None

    base = (51.5, -0.1278)
    if wait_for(lambda c: c.get("LocationSource") == "geoclue", 30, feed=base) is None:
        print("qiblad never published a GeoClue fix"); sys.exit(1)
    time.sleep(0.5)
    latencies = []
    for i in range(1, FIXES + 1):
        lat = round(base[0] + i * 0.001, 6)   # 111 m steps: above the 5 m DistanceThreshold
        sent = nmea.send(gga(lat, base[1]))
        seen = wait_for(lambda c: "Latitude" in c and abs(c["Latitude"] - lat) < 1e-6, 5)
        if seen is not None: latencies.append((seen - sent) * 1000)
        time.sleep(0.3)
    latencies.sort()
    print("fix-to-PropertiesChanged through GeoClue2: n=%d median %.2f ms, min %.2f ms, max %.2f ms"
          % (len(latencies), latencies[len(latencies) // 2], latencies[0], latencies[-1]))

    fallbacks, recoveries, from_launch = [], [], []
    for _ in range(ROUNDS):
        killed = time.time()
        geoclue.send_signal(signal.SIGKILL); geoclue.wait()
        t = wait_for(lambda c: c.get("LocationSource") not in (None, "geoclue"), 10)
        if t is not None: fallbacks.append((t - killed) * 1000)
        time.sleep(0.5)
        geoclue, launched, on_bus = start_geoclue()
        t = wait_for(lambda c: c.get("LocationSource") == "geoclue", 60, feed=base)
        if t is not None:
            recoveries.append((t - on_bus) * 1000); from_launch.append((t - launched) * 1000)
        time.sleep(0.5)
    for name, values in (("GeoClue killed → fallback published", fallbacks),
                         ("GeoClue back on the bus → live fix published", recoveries),
                         ("GeoClue launched → live fix published", from_launch)):
        values.sort()
        if values:
            print("%s: n=%d median %.0f ms, max %.0f ms" % (name, len(values), values[len(values) // 2], values[-1]))
        else:
            print("%s: not measured" % name)
    print("machine: %s, %d cores; command: sudo scripts/measure-geoclue-latency.py %s" % (os.uname().machine, os.cpu_count(), bindir))
