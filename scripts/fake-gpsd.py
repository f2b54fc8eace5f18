#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A hostile stand-in for gpsd, for qiblad's fault tests (Tests/IntegrationTests/FaultTests.swift).

It speaks gpsd's JSON protocol (gpsd_json(5)) on 127.0.0.1:PORT well enough for libgps: a VERSION
banner, then, once the client sends ?WATCH, the scenario's lines. It is not gpsd: the real gpsd
is tested with gpsfake elsewhere; this one sends what a broken or malicious gpsd could.

    fake-gpsd.py PORT SCENARIO

Scenarios:
  garbage  on the first connection: malformed JSON, a 1 MB line, TPV with lat 999, NaN, mode 3
           without coordinates, then it hangs up; on every later one (gpsd sane again) one
           valid fix (-33.9249, 18.4241), then silence
  flood    the valid fix, then about 10,000 TPV a second for 5 s (jittering within 1 m), then silence
  mute     accepts the connection and never speaks
  close    accepts the connection and closes it at once
Only the Python standard library is used.
"""
import json
import socket
import sys
import time

VERSION = {"class": "VERSION", "release": "3.22", "rev": "3.22", "proto_major": 3, "proto_minor": 14}
DEVICES = {"class": "DEVICES", "devices": [{"class": "DEVICE", "path": "/dev/fake", "driver": "NMEA0183", "activated": "2026-01-01T00:00:00.000Z"}]}
WATCH = {"class": "WATCH", "enable": True, "json": True, "nmea": False, "raw": 0, "scaled": False, "timing": False, "split24": False, "pps": False}


def tpv(lat=None, lon=None, mode=3, **extra):
    report = {"class": "TPV", "device": "/dev/fake", "mode": mode, "time": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())}
    if lat is not None:
        report["lat"] = lat
    if lon is not None:
        report["lon"] = lon
    report.update(extra)
    return compact(report)


def compact(obj):
    """JSON as gpsd writes it: no blanks."""
    return json.dumps(obj, separators=(",", ":"))


def send(conn, line):
    conn.sendall((line + "\r\n").encode())


def serve(conn, scenario, connection_number):
    if scenario == "close":
        return
    send(conn, compact(VERSION))
    conn.settimeout(5)
    try:
        conn.recv(4096)  # ?WATCH=...
    except OSError:
        return
    if scenario == "mute":
        time.sleep(3600)
        return
    send(conn, compact(DEVICES))
    send(conn, compact(WATCH))
    if scenario == "garbage" and connection_number > 1:
        send(conn, tpv(-33.9249, 18.4241, eph=8.0))
        time.sleep(3600)
    elif scenario == "garbage":
        for line in [
            '{"class":"TPV","lat":',                       # truncated
            "not json at all",
            '{"class":"TPV","device":"/dev/fake","mode":3,"lat":' + "9" * (1 << 20) + ',"lon":1}',  # a 1 MB line
            tpv(999, 10),                                   # latitude out of range
            tpv(10, 999),                                   # longitude out of range
            '{"class":"TPV","device":"/dev/fake","mode":3,"lat":NaN,"lon":NaN}',
            tpv(None, None, mode=3),                        # mode 3 without coordinates
            tpv(1e308, -1e308),
        ]:
            send(conn, line)
            time.sleep(0.05)
        time.sleep(0.5)
    elif scenario == "flood":
        send(conn, tpv(-33.9249, 18.4241, eph=8.0))
        end = time.time() + 5
        i = 0
        while time.time() < end:
            burst = "".join(tpv(-33.9249 + ((i + k) % 100) * 1e-7, 18.4241, eph=8.0) + "\r\n" for k in range(100))
            conn.sendall(burst.encode())
            i += 100
            time.sleep(0.01)
        sys.stderr.write(f"flood: sent {i + 1} TPV\n")
        time.sleep(3600)


def main():
    port, scenario = int(sys.argv[1]), sys.argv[2]
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(4)
    print("listening", flush=True)
    connections = 0
    while True:
        conn, _ = server.accept()
        connections += 1
        try:
            serve(conn, scenario, connections)
        except OSError:
            pass
        finally:
            conn.close()


if __name__ == "__main__":
    main()
