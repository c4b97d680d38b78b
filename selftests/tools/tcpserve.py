# SPDX-License-Identifier: GPL-2.0
"""What the selftests' TCP endpoints share (tcpx.py, selftests/xdp/xfer.py,
selftests/xdp/fwdflow.py): their command line's shape, dual-stack
listening sockets, a thread for each connection accepted, and reading a
stream to its end."""
import argparse
import socket
import threading
import time


def command_line(clients, **kw):
    """The command line the endpoints share: a parser (kw: its own
    arguments) with a "server" subcommand (--port, repeatable: a listener
    on each) and, for each name in clients, a subcommand with the peer's
    --addr and --port.  (parser, server's subparser, {name: subparser})."""
    ap = argparse.ArgumentParser(**kw)
    sub = ap.add_subparsers(dest="cmd", required=True)
    server = sub.add_parser("server")
    server.add_argument("--port", type=int, action="append", required=True)
    peers = {}
    for name in clients:
        c = peers[name] = sub.add_parser(name)
        c.add_argument("--addr", required=True)
        c.add_argument("--port", type=int, required=True)
    return ap, server, peers


def listener(port, backlog, rcvbuf=0):
    """A socket listening on port, IPv6 and (v4-mapped) IPv4."""
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    if rcvbuf:
        # SO_RCVBUFFORCE (33): past net.core.rmem_max; the accepted
        # sockets inherit it (and its lock: no autotuning)
        s.setsockopt(socket.SOL_SOCKET, 33, rcvbuf)
    s.bind(("::", port))
    s.listen(backlog)
    return s


def read_to_eof(c, feed):
    """Read c until the peer's FIN, every piece to feed(bytes)."""
    while True:
        b = c.recv(1 << 16)
        if not b:
            return
        feed(b)


def serve_forever(socks, ports, handle):
    """handle(connection, port) in a thread of its own for every connection
    accepted on socks (each listening on the port at the same place in
    ports); prints "ready" once they accept.  Never returns."""
    def accept_loop(s, port):
        while True:
            c, _ = s.accept()
            threading.Thread(target=handle, args=(c, port), daemon=True).start()

    for s, port in zip(socks, ports):
        threading.Thread(target=accept_loop, args=(s, port), daemon=True).start()
    print("ready", flush=True)
    while True:
        time.sleep(3600)
