#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Load on toed's control socket, every answer checked.

  ctlsoak.py SOCK --clients N --seconds S [--rate R]

N threads each make one request per connection, in turn from a list of
commands (text and -j), as fast as they can, or R requests a second in all.
Every answer must be well formed: "ok" and, for -j, one JSON document (read
with the json module); for text, at least one more line.  Prints one JSON
object: requests, bad (answers that were not), first few bad ones.
"""
import argparse
import json
import threading
import time

from ctlclient import conn, read_all  # the same raw client, one copy

CMDS = ["status -j", "stats -j", "flows -j", "neigh -j", "devices -j", "policy -j",
        "flows -j port 5300", "status", "stats", "flows", "neigh", "devices", "policy"]


def ask(path, req):
    s = conn(path)
    try:
        s.sendall(req.encode() + b"\n")
        return read_all(s)
    finally:
        s.close()


def check(req, data):
    text = data.decode()
    head, _, body = text.partition("\n")
    if head != "ok":
        return f"{req}: first line {head!r}"
    if "-j" in req.split():
        json.loads(body)
    elif not body.strip():
        return f"{req}: no output"
    return None


def worker(path, stop, gap, st, lock, idx):
    i = idx
    nxt = time.monotonic()
    while not stop.is_set():
        req = CMDS[i % len(CMDS)]
        i += 1
        try:
            err = check(req, ask(path, req))
        except Exception as e:  # a timeout, a reset, bad JSON: all bad
            err = f"{req}: {type(e).__name__}: {e}"
        with lock:
            st["requests"] += 1
            if err:
                st["bad"] += 1
                if len(st["first_bad"]) < 5:
                    st["first_bad"].append(err)
        if gap:
            nxt += gap
            d = nxt - time.monotonic()
            if d > 0:
                time.sleep(d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sock")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rate", type=float, default=0, help="requests a second, in all")
    a = ap.parse_args()
    st = {"requests": 0, "bad": 0, "first_bad": []}
    lock, stop = threading.Lock(), threading.Event()
    gap = a.clients / a.rate if a.rate else 0
    ts = [threading.Thread(target=worker, args=(a.sock, stop, gap, st, lock, i))
          for i in range(a.clients)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    time.sleep(a.seconds)
    stop.set()
    for t in ts:
        t.join()
    st["seconds"] = round(time.monotonic() - t0, 2)
    st["per_s"] = round(st["requests"] / st["seconds"], 1)
    print(json.dumps(st))


if __name__ == "__main__":
    main()
