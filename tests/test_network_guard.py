import socket

import pytest

from tests.conftest import NetworkBlocked


def test_guard_blocks_non_loopback_addresses() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(NetworkBlocked):
        sock.connect(("192.0.2.1", 80))  # TEST-NET-1: never routed, never contacted


def test_guard_lets_loopback_through() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client:
            client.connect(server.getsockname())
