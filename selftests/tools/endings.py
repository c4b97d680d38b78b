#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How one end of a TCP connection sees the other end go away.

  endings.py PORT MODE END

A server child process listens on 127.0.0.1:PORT; this process connects
and is the reader.  The server sends 1000 bytes, then ends the connection
one of four ways (END), 300 ms later, while the reader waits:

  fin          close(): FIN
  abort        SO_LINGER {1, 0} and close(): RST
  killunread   the reader first sent 64 KiB the server never reads; the
               server process is killed (SIGKILL)
  killblocked  the server process is killed while blocked in read()

The reader waits one of three ways (MODE):

  block        blocking read() (SO_RCVTIMEO 5 s, so it cannot hang)
  nonblock     O_NONBLOCK, read() every 5 ms until it stops saying EAGAIN
  epoll        O_NONBLOCK, epoll_wait() (EPOLLIN | EPOLLRDHUP), then read()

It prints one JSON object: "seq", what the reads returned in order
("data:N" with consecutive data merged, "eof", "err:ENAME", and for epoll
"ev:IN|HUP|..." before each read; "EAGAIN-woken" when a blocking read
returned EAGAIN before its SO_RCVTIMEO ran out, "EAGAIN-timeout" when it
did), "poll", the revents of a
poll() with no wait after the last read, and "writes", what a write of one
byte returned at once and again 100 ms later.  The same run over plain TCP
and through the local bypass must print the same object
(selftests/bypass/test_endings.sh).  Exit 0 unless the run itself broke.
"""
import errno
import json
import os
import select
import signal
import socket
import sys
import time

PORT, MODE, END = int(sys.argv[1]), sys.argv[2], sys.argv[3]
SLOW = float(os.environ.get("TOE_SLOW", "1"))
DELAY = 0.3 * SLOW
HELLO = 1000


def ename(e):
    return errno.errorcode.get(e, str(e))


def server(lsk, ready_w):
    c, _ = lsk.accept()
    lsk.close()
    os.write(ready_w, b"a")
    if END == "killunread":
        # wait until the 64 KiB are here (unread), then say so
        deadline = time.time() + 10
        while time.time() < deadline:
            n = len(c.recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                    if select.select([c], [], [], 0.05)[0] else b"")
            if n >= 65536:
                break
    c.sendall(b"h" * HELLO)
    os.write(ready_w, b"s")
    if END in ("killunread", "killblocked"):
        if END == "killblocked":
            c.recv(1)        # blocks: the reader sends nothing
        time.sleep(60)       # killed before this ends
        os._exit(1)
    time.sleep(DELAY)
    if END == "abort":
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     (1).to_bytes(4, "little") + (0).to_bytes(4, "little"))
    c.close()
    os._exit(0)


def read_all(sk, seq):
    """Read until EOF or an error; append what each read returned."""
    data = 0
    deadline = time.time() + 5 * SLOW + 2
    ep = None
    if MODE == "epoll":
        ep = select.epoll()
        ep.register(sk.fileno(), select.EPOLLIN | select.EPOLLRDHUP)
    names = [(select.EPOLLIN, "IN"), (select.EPOLLOUT, "OUT"),
             (select.EPOLLERR, "ERR"), (select.EPOLLHUP, "HUP"),
             (select.EPOLLRDHUP, "RDHUP")]
    while time.time() < deadline:
        if ep:
            evs = ep.poll(5 * SLOW)
            if not evs:
                seq.append("ev:none-in-5s")
                break
            m = evs[0][1]
            ev = "ev:" + "|".join(n for b, n in names if m & b)
            if not data or seq[-1] != ev:
                if data:
                    seq.append("data:%d" % data)
                    data = 0
                seq.append(ev)
        t0 = time.time()
        try:
            b = sk.recv(65536)
        except OSError as e:
            if e.errno == errno.EAGAIN and MODE == "nonblock":
                time.sleep(0.005)
                continue
            if data:
                seq.append("data:%d" % data)
                data = 0
            if e.errno == errno.EAGAIN:
                # before SO_RCVTIMEO ran out: a wake-up that found nothing
                timed_out = time.time() - t0 >= 5 * SLOW - 0.5
                seq.append("EAGAIN-timeout" if timed_out else "EAGAIN-woken")
            else:
                seq.append("err:" + ename(e.errno))
            break
        if not b:
            if data:
                seq.append("data:%d" % data)
                data = 0
            seq.append("eof")
            break
        data += len(b)
    if data:
        seq.append("data:%d" % data)


def poll_names(sk):
    p = select.poll()
    p.register(sk.fileno(), select.POLLIN | select.POLLOUT | select.POLLRDHUP)
    ev = p.poll(0)
    m = ev[0][1] if ev else 0
    names = [(select.POLLIN, "IN"), (select.POLLOUT, "OUT"),
             (select.POLLERR, "ERR"), (select.POLLHUP, "HUP"),
             (select.POLLRDHUP, "RDHUP")]
    return "|".join(n for b, n in names if m & b) or "none"


def write_one(sk):
    try:
        return str(sk.send(b"w", socket.MSG_NOSIGNAL | socket.MSG_DONTWAIT))
    except OSError as e:
        return "err:" + ename(e.errno)


def main():
    if MODE not in ("block", "nonblock", "epoll") or \
       END not in ("fin", "abort", "killunread", "killblocked"):
        print(__doc__, file=sys.stderr)
        return 2
    lsk = socket.socket()
    lsk.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsk.bind(("127.0.0.1", PORT))
    lsk.listen(1)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        try:
            server(lsk, ready_w)
        finally:
            os._exit(3)
    lsk.close()
    os.close(ready_w)
    sk = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    sk.settimeout(None)
    out = {"mode": MODE, "end": END, "seq": []}
    try:
        if os.read(ready_r, 1) != b"a":
            raise RuntimeError("the server did not accept")
        if END == "killunread":
            sk.sendall(b"u" * 65536)
        if os.read(ready_r, 1) != b"s":
            raise RuntimeError("the server did not send")
        if END.startswith("kill"):
            # the kill comes while the reader waits: from a child of ours
            if os.fork() == 0:
                time.sleep(DELAY)
                os.kill(pid, signal.SIGKILL)
                os._exit(0)
        if MODE == "block":
            sk.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO,
                          int(5 * SLOW).to_bytes(8, "little") + bytes(8))
        else:
            sk.setblocking(False)
        read_all(sk, out["seq"])
        out["poll"] = poll_names(sk)
        w1 = write_one(sk)
        time.sleep(0.1 * SLOW)
        out["writes"] = [w1, write_one(sk)]
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        while True:
            try:
                os.wait()
            except ChildProcessError:
                break
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
