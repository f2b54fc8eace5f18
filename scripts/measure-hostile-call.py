#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""qiblad's resident set around one hostile call (issues 33 and 37): a private dbus-daemon whose
message limit is 64 MiB, a simulated PinePhone (qibla-sim run), the release qiblad; three claims
(ClaimCompass, 4 s, ReleaseCompass), then one string of --bytes to QiblaFor (signature `dd`: refused),
then a `Get`. Prints VmRSS and the smaps breakdown (scripts/lib/smaps-breakdown.sh) before the call,
right after it and --settle seconds later. Python Gio (python3-gi) is the client.

    swift build -c release && scripts/measure-hostile-call.py [BINDIR] [--bytes N] [--settle S]
"""
import argparse, os, shutil, subprocess, sys, tempfile, time
from gi.repository import Gio, GLib

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("bindir", nargs="?", default=os.path.join(root, ".build/release"))
parser.add_argument("--bytes", type=int, default=60 << 20, help="length of the string sent to QiblaFor")
parser.add_argument("--settle", type=float, default=2.0, help="seconds after the call before the last reading")
args = parser.parse_args()

scratch = subprocess.run(["bash", "-c", ". scripts/lib/bench-common.sh && bench_scratch_root"], cwd=root,
                         capture_output=True, text=True, check=True).stdout.strip() or None
tmp = tempfile.mkdtemp(prefix="qiblad-hostile-", dir=scratch)
procs = []


def spawn(argv, **kw):
    p = subprocess.Popen(argv, **kw)
    procs.append(p)
    return p


try:
    conf = os.path.join(tmp, "bus.conf")
    with open(conf, "w") as f:
        f.write("""<busconfig><type>session</type><listen>unix:path=%s/bus</listen>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
<limit name="max_message_size">67108864</limit><limit name="max_incoming_bytes">134217728</limit>
<limit name="max_outgoing_bytes">134217728</limit></busconfig>""" % tmp)
    bus = spawn(["dbus-daemon", "--config-file", conf, "--nofork", "--print-address=1"], stdout=subprocess.PIPE, text=True)
    address = bus.stdout.readline().strip()
    spawn([os.path.join(args.bindir, "qibla-sim"), "run", "--root", tmp + "/sys", "--phone", "pinephone",
           "--lat", "51.5", "--lon=-0.12"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    q = spawn([os.path.join(args.bindir, "qiblad"), "--session", "--no-gpsd", "--sysfs-root", tmp + "/sys",
               "--state-dir", tmp + "/state", "--location=51.5,-0.12", "--config", tmp + "/none.conf"],
              env=dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address), stderr=open(tmp + "/qiblad.log", "w"))
    time.sleep(1.5)
    c = Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    name, path = "io.github.qiblad.Qibla1", "/io/github/qiblad/Qibla1"

    def call(interface, member, parameters=None):
        return c.call_sync(name, path, interface, member, parameters, None, Gio.DBusCallFlags.NONE, 60000, None)

    def reading():
        rss = next(int(l.split()[1]) for l in open("/proc/%d/status" % q.pid) if l.startswith("VmRSS"))
        breakdown = subprocess.run(["bash", "-c", ". scripts/lib/smaps-breakdown.sh && smaps_breakdown %d" % q.pid],
                                   cwd=root, capture_output=True, text=True).stdout
        return rss, {line.split()[0]: int(line.split()[1]) for line in breakdown.splitlines() if len(line.split()) >= 2}

    for _ in range(3):
        call(name, "ClaimCompass")
        time.sleep(4)
        call(name, "ReleaseCompass")
        time.sleep(1)
    time.sleep(2)
    before = reading()
    started = time.monotonic()
    try:
        call(name, "QiblaFor", GLib.Variant("(s)", ("x" * args.bytes,)))
        outcome = "answered"
    except GLib.Error as error:
        outcome = "refused: " + error.message[:80]
    elapsed = time.monotonic() - started
    call("org.freedesktop.DBus.Properties", "Get", GLib.Variant("(ss)", (name, "Heading")))
    right = reading()
    time.sleep(args.settle)
    later = reading()
    print("%d-byte string to QiblaFor after three claims: %s in %.2f s" % (args.bytes, outcome, elapsed))
    print("VmRSS before %d kB, right after (and a Get) %d kB, %g s later %d kB" % (before[0], right[0], args.settle, later[0]))
    print("%-40s %8s %8s %8s" % ("Rss kB by mapping", "before", "right", "later"))
    for key in before[1]:
        if before[1][key] or right[1].get(key) or later[1].get(key):
            print("%-40s %8d %8d %8d" % (key, before[1][key], right[1].get(key, 0), later[1].get(key, 0)))
finally:
    for p in reversed(procs):
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=3)
        except subprocess.TimeoutExpired:
            p.kill()
    shutil.rmtree(tmp, ignore_errors=True)
