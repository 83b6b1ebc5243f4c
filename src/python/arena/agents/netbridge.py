"""Inside an agent's sandbox: loopback listeners that carry connections to the egress proxy's socket
(arena.agents.egress), then the agent's program, whose exit status this process exits with.

    python -m arena.agents.netbridge SOCKET PROXY_PORT [--forward HOST:PORT ...] -- PROGRAM ARGS...

127.0.0.1:PROXY_PORT is the agent's HTTP(S) proxy (HTTPS_PROXY names it): what a client sends
there goes to the socket as it is. Each --forward HOST:PORT (a runner or model endpoint on the
machine's loopback; `[::1]:PORT` for IPv6) listens at PORT on both loopbacks inside (127.0.0.1 and
::1) and asks the proxy for HOST:PORT, so the agent connects to the address it was given, as if no
sandbox stood between.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import threading

from arena.agents.egress import past_header, read_header, splice


def _listen(port: int) -> list[socket.socket]:
    """Listeners at `port` on both loopbacks: 127.0.0.1, and ::1 where the namespace has IPv6 (a
    client told `localhost` or `[::1]` may try it first)."""
    servers = []
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            server = socket.socket(family, socket.SOCK_STREAM)
        except OSError:  # no IPv6 in this kernel
            continue
        try:
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            server.bind((host, port))
            server.listen(64)
        except OSError:
            server.close()
            if family == socket.AF_INET:
                raise
            continue
        servers.append(server)
    return servers


def _outside(path: str) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    return connection


def _carry(client: socket.socket, path: str, target: str | None) -> None:
    """One connection to the proxy: as it comes (target None), or opened to `target` first."""
    with client:
        try:
            with _outside(path) as outside:
                if target is not None:
                    outside.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
                    answer = read_header(outside)
                    if answer is None or b" 200 " not in answer.split(b"\r\n", 1)[0]:
                        return
                    client.sendall(past_header(answer))  # the destination may speak first
                splice(client, outside)
        except OSError:
            return


def _accept(server: socket.socket, path: str, target: str | None) -> None:
    while True:
        client, _ = server.accept()
        threading.Thread(target=_carry, args=(client, path, target), daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("socket")
    parser.add_argument("proxy_port", type=int)
    parser.add_argument("--forward", action="append", default=[], metavar="HOST:PORT")
    given = sys.argv[1:]
    split = given.index("--") if "--" in given else len(given)
    args, program = parser.parse_args(given[:split]), given[split + 1 :]
    if not program:
        parser.error("no program to run (after --)")
    servers = [(server, None) for server in _listen(args.proxy_port)]
    for target in args.forward:  # HOST:PORT, an IPv6 host in brackets
        servers += [(server, target) for server in _listen(int(target.rsplit(":", 1)[1]))]
    for server, target in servers:
        threading.Thread(target=_accept, args=(server, args.socket, target), daemon=True).start()
    try:
        process = subprocess.Popen(program)
    except OSError as error:
        sys.exit(f"cannot start the agent {program[0]!r}: {error}")
    code = process.wait()
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
