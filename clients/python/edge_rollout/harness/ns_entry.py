"""The program that runs first inside a rollout's namespaces (as PID 1), then starts the harness CLI.

``python3 -I ns_entry.py SPEC.json`` (standalone: no package imports, so ``-I`` and any cwd work).
The spec holds ``argv``, ``cwd``, ``port`` (the gateway's port), ``socket`` (the host forwarder's
Unix socket) and ``hide`` (directories to cover with an empty tmpfs). In order:

1. bring up the namespace's own loopback (a new network namespace starts with it down);
2. cover ``hide`` (the tasks root: solutions and tests stay out of the harness's sight);
3. listen on 127.0.0.1:``port`` (and [::1]:``port``), relaying each connection to ``socket``,
   whose other end (``forward.py``, on the host) connects to the real gateway: so the CLI uses
   the gateway's own URL and reaches nothing else;
4. run ``argv`` (stdin closed, stdout/stderr inherited) and exit with its status. When PID 1
   exits, the kernel kills everything left in the PID namespace.

``relay`` is also what the host side uses to splice its two sockets.
"""
from __future__ import annotations

import ctypes
import fcntl
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


def relay(a: socket.socket, b: socket.socket) -> None:
    """Copies bytes both ways between two connected sockets until both sides are done, then closes them."""
    def pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            # Half-close: an HTTP client that finished sending still waits for the answer.
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass
    back = threading.Thread(target=pump, args=(b, a), daemon=True)
    back.start()
    pump(a, b)
    back.join()
    a.close()
    b.close()


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(s, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | _IFF_UP))


def _hide(paths: list[str]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for path in paths:
        if libc.mount(b"tmpfs", path.encode(), b"tmpfs", 0, b"size=16k,mode=755") != 0:
            errno = ctypes.get_errno()
            print(f"edge-rollout ns: cannot hide {path}: {os.strerror(errno)}", file=sys.stderr)


def _listen(family: int, host: str, port: int, target: str) -> None:
    server = socket.socket(family, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    server.bind((host, port))
    server.listen(64)

    def accept() -> None:
        while True:
            client, _ = server.accept()
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                upstream.connect(target)
            except OSError:
                client.close()
                upstream.close()
                continue
            threading.Thread(target=relay, args=(client, upstream), daemon=True).start()
    threading.Thread(target=accept, daemon=True).start()


def main(spec_path: str) -> int:
    """Sets the namespace up as the spec says, runs the CLI, returns its exit status."""
    with open(spec_path) as f:
        spec = json.load(f)
    _loopback_up()
    _hide(spec.get("hide", []))
    if spec.get("port"):
        _listen(socket.AF_INET, "127.0.0.1", spec["port"], spec["socket"])
        try:  # a CLI may resolve localhost to ::1 first
            _listen(socket.AF_INET6, "::1", spec["port"], spec["socket"])
        except OSError:
            pass
    try:
        child = subprocess.Popen(spec["argv"], cwd=spec["cwd"], stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as error:
        print(f"edge-rollout ns: cannot start {spec['argv'][0]}: {error}", file=sys.stderr)
        return 127

    # PID 1 only receives the signals it handles: pass a SIGTERM on to the CLI's group.
    def forward(signum: int, _frame: object) -> None:
        try:
            os.killpg(child.pid, signum)
        except OSError:
            pass
    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    code = child.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv[1]))
