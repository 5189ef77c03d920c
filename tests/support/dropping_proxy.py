"""A TCP proxy on loopback that drops the connection once, after a number of bytes sent
through it: what a client sees when its network goes away mid-request. Every connection
after the drop is passed through untouched."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

CHUNK = 256 * 1024


@dataclass
class DroppingProxy:
    """Forwards to `upstream`; cuts the connection carrying the `drop_after`-th byte sent
    by clients (counted over every connection), once."""

    upstream: tuple[str, int]
    drop_after: int
    sent: int = 0
    dropped: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def allowance(self, wanted: int) -> tuple[int, bool]:
        """How many of `wanted` bytes may pass, and whether the connection drops after."""
        with self._lock:
            if self.dropped or self.sent + wanted < self.drop_after:
                self.sent += wanted
                return wanted, False
            passing = max(0, self.drop_after - self.sent)
            self.sent += passing
            self.dropped += 1
            return passing, True

    def serve(self, client: socket.socket) -> None:
        server = socket.create_connection(self.upstream)
        done = threading.Event()

        def close() -> None:
            done.set()
            for sock in (client, server):
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()

        def answers() -> None:
            try:
                while chunk := server.recv(CHUNK):
                    client.sendall(chunk)
            except OSError:
                pass
            finally:
                if not done.is_set():
                    close()

        threading.Thread(target=answers, daemon=True).start()
        try:
            while chunk := client.recv(CHUNK):
                passing, drop = self.allowance(len(chunk))
                server.sendall(chunk[:passing])
                if drop:
                    break
        except OSError:
            pass
        finally:
            if not done.is_set():
                close()


@contextmanager
def dropping_proxy(upstream_url: str, drop_after: int) -> Iterator[tuple[str, DroppingProxy]]:
    """A proxy in front of `http://127.0.0.1:<port>`; yields its own URL and itself."""
    host, port = upstream_url.removeprefix("http://").split(":")
    proxy = DroppingProxy((host, int(port)), drop_after)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    stopping = threading.Event()

    def accept() -> None:
        while not stopping.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=proxy.serve, args=(client,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", proxy
    finally:
        stopping.set()
        listener.close()
        thread.join(timeout=5)
