#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A raw client of toed's control socket, for the tests that abuse it.

  ctlclient.py SOCK send HEXBYTES [--timeout S]
      send the bytes (hex; "-": read the hex from stdin, for inputs past
      the kernel's 128 KiB limit on one argument), half-close, print toed's
      whole answer (stdout, bytes as they came); exit 3 if toed closed
      without a word, 2 on a time-out.
  ctlclient.py SOCK idle N SECONDS
      open N connections, send nothing, hold them SECONDS, print how many
      toed closed (and after how long the first one was closed).
  ctlclient.py SOCK drip SECONDS
      send "status\\n" one byte a second; print what toed answered and when.
  ctlclient.py SOCK trail
      send "stats\n", then after toed answered two more bytes 0.3 s apart
      (toed lingers, reading them, until we close); print whether both
      writes went through and the answer's first line.
  ctlclient.py SOCK flood N
      open N connections at once and print, per distinct answer, how many
      got it (after a one-line request each).
"""
import socket
import struct
import sys
import time


def conn(path, timeout=5.0):
    # A blocking connect waits while toed's listen backlog is full, as
    # toectl's does (bounded by SO_SNDTIMEO, which AF_UNIX connect obeys);
    # with settimeout() Python would connect non-blocking and get EAGAIN.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sec = int(timeout)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                 struct.pack("ll", sec, int((timeout - sec) * 1e6)))
    s.connect(path)
    s.settimeout(timeout)
    return s


def read_all(s):
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            # toed refused us and closed before reading our request: the
            # refusal came first; the reset only ends it (as for toectl).
            if data:
                return data
            raise
        if not chunk:
            return data
        data += chunk


def cmd_send(path, hexbytes, timeout):
    s = conn(path, timeout)
    try:
        s.sendall(bytes.fromhex(hexbytes))
        try:
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        data = read_all(s)
    except socket.timeout:
        print("timeout", file=sys.stderr)
        return 2
    except (ConnectionResetError, BrokenPipeError):
        data = b""
    sys.stdout.buffer.write(data)
    return 0 if data else 3


def cmd_idle(path, n, secs):
    socks = [conn(path) for _ in range(n)]
    for s in socks:
        s.setblocking(False)
    start = time.monotonic()
    closed, first = set(), None
    while time.monotonic() - start < secs:
        for i, s in enumerate(socks):
            if i in closed:
                continue
            try:
                if s.recv(4096) == b"":
                    closed.add(i)
            except BlockingIOError:
                continue
            except OSError:
                closed.add(i)
            if i in closed and first is None:
                first = time.monotonic() - start
        time.sleep(0.05)
    print(f"closed {len(closed)} of {n} first {first if first is not None else -1:.2f}")
    return 0


def cmd_drip(path, secs):
    s = conn(path, secs + 5)
    start = time.monotonic()
    data = b""
    for b in b"status\n":
        try:
            s.send(bytes([b]))
        except OSError:
            break
        time.sleep(1.0)
        if time.monotonic() - start > secs:
            break
    try:
        data = read_all(s)
    except OSError:
        pass
    first = data.split(b"\n", 1)[0].decode(errors="replace")
    print(f"after {time.monotonic() - start:.1f}s: {first}")
    return 0


def cmd_trail(path):
    s = conn(path)
    s.sendall(b"stats\n")
    sent = 0
    for b in (b"x", b"y"):
        time.sleep(0.3)
        try:
            s.send(b)
            sent += 1
        except OSError as e:
            print(f"write {sent + 1} after the answer failed: {e}")
            break
    try:
        data = read_all(s)
    except OSError as e:
        data = f"read failed: {e}".encode()
    first = data.split(b"\n", 1)[0].decode(errors="replace")
    print(f"wrote {sent} of 2 after the request; answer: {first}")
    return 0


def cmd_flood(path, n):
    socks = []
    for _ in range(n):
        try:
            socks.append(conn(path))
        except OSError as e:
            print(f"connect failed: {e}")
    for s in socks:
        try:
            s.sendall(b"stats\n")
        except OSError:
            pass
    answers = {}
    for s in socks:
        try:
            first = read_all(s).split(b"\n", 1)[0].decode(errors="replace")
        except OSError as e:
            first = f"socket error {e.errno}"
        answers[first] = answers.get(first, 0) + 1
        s.close()
    for a, c in sorted(answers.items()):
        print(f"{c} {a}")
    return 0


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 1
    path, op = sys.argv[1], sys.argv[2]
    if op == "send":
        t = float(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--timeout" else 5.0
        hexbytes = sys.argv[3]
        if hexbytes == "-":
            hexbytes = "".join(sys.stdin.read().split())
        return cmd_send(path, hexbytes, t)
    if op == "idle":
        return cmd_idle(path, int(sys.argv[3]), float(sys.argv[4]))
    if op == "drip":
        return cmd_drip(path, float(sys.argv[3]))
    if op == "trail":
        return cmd_trail(path)
    if op == "flood":
        return cmd_flood(path, int(sys.argv[3]))
    print(__doc__, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
