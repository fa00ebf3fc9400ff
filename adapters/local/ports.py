"""TCP ports on the loopback for the agents' servers: a free one, whether one is free, waiting for one."""

from __future__ import annotations

import socket
import time


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could listen on ``host:port`` now (as servers do, with ``SO_REUSEADDR``)."""
    if not 0 < port < 65536:
        return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def wait_port_free(port: int, timeout: float, host: str = "127.0.0.1") -> bool:
    """Poll until ``host:port`` is free or ``timeout`` seconds pass; whether it is free."""
    deadline = time.monotonic() + timeout
    while not port_is_free(port, host):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
