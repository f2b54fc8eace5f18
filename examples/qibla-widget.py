#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A minimal Qibla widget in Python: Gio's DBusProxy on qiblad, printing each change.

Gio keeps the proxy's property cache in step with qiblad's PropertiesChanged signals (and
reloads it with GetAll when qiblad comes back after a restart); the widget only claims the
compass, so that the heading is live, and reads the cache when it is told something changed.

Needs PyGObject (Debian: apt-get install python3-gi). Run:
    examples/qibla-widget.py              # until Ctrl-C
    examples/qibla-widget.py --seconds 10 # for ten seconds
    examples/qibla-widget.py --system     # qiblad on the system bus
"""
import argparse
import math
import signal
import sys

from gi.repository import Gio, GLib

NAME = "io.github.qiblad.Qibla1"
PATH = "/io/github/qiblad/Qibla1"
INTERFACE = "io.github.qiblad.Qibla1"


def value(proxy, name):
    """A cached property as a Python value; None when unknown (NaN means unknown on qiblad's bus)."""
    variant = proxy.get_cached_property(name)
    if variant is None:
        return None
    v = variant.unpack()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def describe(proxy):
    """One line: 'Qibla 118.99° · heading 143.0° · turn left 24.0° · accuracy medium'."""
    if proxy.get_name_owner() is None:
        return "waiting for qiblad"
    parts = []
    qibla = value(proxy, "QiblaBearing")
    parts.append(f"Qibla {qibla:.2f}°" if qibla is not None else "Qibla unknown")
    heading = value(proxy, "Heading")
    parts.append(f"heading {heading:.1f}°" if heading is not None else "heading unknown")
    turn = value(proxy, "QiblaRelativeBearing")
    if turn is not None:
        parts.append(f"turn {'right' if turn > 0 else 'left'} {abs(turn):.1f}°")
    parts.append(f"accuracy {value(proxy, 'CompassAccuracy') or 'unknown'}")
    return " · ".join(parts)


def claim(proxy):
    """Claims the compass; qiblad drops the claim itself when this process leaves the bus."""
    def done(p, result):
        try:
            p.call_finish(result)
        except GLib.Error as error:
            print(f"ClaimCompass failed: {error.message}", file=sys.stderr, flush=True)
    proxy.call("ClaimCompass", None, Gio.DBusCallFlags.NONE, -1, None, done)


def main():
    parser = argparse.ArgumentParser(description="Print qiblad's heading and turn as they change.")
    parser.add_argument("--system", action="store_true", help="qiblad on the system bus")
    parser.add_argument("--seconds", type=float, help="stop after this many seconds")
    args = parser.parse_args()

    bus = Gio.BusType.SYSTEM if args.system else Gio.BusType.SESSION
    proxy = Gio.DBusProxy.new_for_bus_sync(bus, Gio.DBusProxyFlags.NONE, None, NAME, PATH, INTERFACE, None)
    loop = GLib.MainLoop()

    def on_properties_changed(p, changed, invalidated):
        names = sorted(changed.keys()) + list(invalidated)
        print(f"{describe(p)}  [{', '.join(names)}]", flush=True)

    def on_owner(p, _):
        # qiblad left (a restart) or came back: a new instance needs a new claim.
        print(describe(p), flush=True)
        if p.get_name_owner() is not None:
            claim(p)

    proxy.connect("g-properties-changed", on_properties_changed)
    proxy.connect("notify::g-name-owner", on_owner)
    print(describe(proxy), flush=True)
    if proxy.get_name_owner() is not None:
        claim(proxy)

    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGINT, loop.quit)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    if args.seconds:
        GLib.timeout_add(int(args.seconds * 1000), loop.quit)
    loop.run()
    if proxy.get_name_owner() is not None:
        try:
            proxy.call_sync("ReleaseCompass", None, Gio.DBusCallFlags.NONE, 2000, None)
        except GLib.Error:
            pass


if __name__ == "__main__":
    main()
