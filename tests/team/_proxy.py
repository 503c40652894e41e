"""A TCP proxy in front of the sandbox that counts HTTP requests in flight.

A request is in flight from its first byte reaching the proxy to the first byte of its answer
(``requests`` never pipelines, so one connection carries one request at a time). With
``hold=N`` the first N requests wait until N are in flight together - proof that the client
did send N at once - before going on to the sandbox. With ``gate`` (an event), the first
request waits until the gate is set (``first_held`` is set while it waits).
"""

from __future__ import annotations

import contextlib
import socket
import threading


class InFlightProxy:
    def __init__(
        self, upstream_url: str, *, hold: int = 0, gate: threading.Event | None = None
    ) -> None:
        host_port = upstream_url.removeprefix("http://")
        host, port = host_port.split(":")
        self.upstream = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.requests = 0
        self.hold = hold
        # Deadlock guard only: a client that never sends `hold` at once breaks the barrier.
        self.barrier = threading.Barrier(hold, timeout=30) if hold else None
        self.held_broken = False
        self.gate = gate
        self.first_held = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.upstream)
        for sock in (client, upstream):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        busy = threading.Event()
        threading.Thread(target=self._answers, args=(upstream, client, busy), daemon=True).start()
        try:
            while data := client.recv(65536):
                if not busy.is_set():
                    busy.set()
                    self._started()
                upstream.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                sock.close()

    def _answers(
        self, upstream: socket.socket, client: socket.socket, busy: threading.Event
    ) -> None:
        try:
            while data := upstream.recv(65536):
                if busy.is_set():
                    busy.clear()
                    with self.lock:
                        self.in_flight -= 1
                client.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def _started(self) -> None:
        with self.lock:
            self.requests += 1
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            held = self.requests <= self.hold
            first = self.requests == 1
        if first and self.gate is not None:
            self.first_held.set()
            self.gate.wait(120)  # deadlock guard only: the test sets it
        if held and self.barrier is not None:
            try:
                self.barrier.wait()
            except threading.BrokenBarrierError:
                self.held_broken = True
