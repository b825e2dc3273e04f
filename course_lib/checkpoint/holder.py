"""A node's memory for checkpoint copies: a small TCP server that holds sealed snapshot bytes.

The in-memory tiers of :mod:`course_lib.checkpoint.tiers` must outlive the training processes
(torchrun restarts every worker after any failure) but die with the node, as host memory does.
So each node runs one holder beside its torchrun agent::

    python course_lib/checkpoint/holder.py --host 10.0.0.2 --port 0 --keep 2

(the script path, not ``-m``: the holder imports only the standard library, so it starts in
milliseconds and never imports torch). It prints ``HOLDER host:port`` on its first line of
output and then serves until it is killed; killing it is losing that node's memory.

Every copy is stored as the bytes it was sent (sealed by the sender: payload + sha256 footer of
:func:`course_lib.checkpoint.safe.seal`), per ``(job, shard)``, the newest ``keep`` steps. The
holder never interprets or trusts them: the reader verifies the checksum end to end, so a copy
damaged in transit or in the holder's memory is detected where it is loaded.

Wire format, one request after another on a connection: a 4-byte big-endian header length,
the header as JSON, then ``header["nbytes"]`` bytes of payload (none for most requests). The
reply has the same framing. Requests (``op``): ``put`` (job, shard, step, role, payload),
``list`` (job, shard) -> ``steps`` (newest first, with role, nbytes, writer), ``get`` (job,
shard, step) -> payload, ``damage`` (job, shard, step, how = ``flip`` | ``truncate``: the lab's
fault injection, a bit flip or a lost tail in this node's memory), ``drop`` (job) and ``stats`` (``held_bytes``).
"""
from __future__ import annotations

import argparse
import json
import socket
import socketserver
import struct
import sys
import threading

__all__ = ["MemoryHolder", "HolderServer", "HolderClient", "serve", "send_msg", "recv_msg"]

_LEN = struct.Struct(">I")
MAX_HEADER = 1 << 20
BUFFER_BYTES = 8 << 20  # socket buffers: fewer wake-ups per copy of a large snapshot


def _recv_exact(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError(f"connection closed after {got} of {n} bytes")
        got += k
    return buf


def _tune(sock: socket.socket) -> None:
    """No Nagle delay for the small requests; large kernel buffers for the bulk copies."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for opt in (socket.SO_SNDBUF, socket.SO_RCVBUF):
        try:
            sock.setsockopt(socket.SOL_SOCKET, opt, BUFFER_BYTES)
        except OSError:  # pragma: no cover - a kernel limit
            pass


def send_msg(sock: socket.socket, header: dict, payload: bytes = b"") -> None:
    """Send one framed message (header JSON + payload)."""
    header = dict(header, nbytes=len(payload))
    raw = json.dumps(header).encode()
    sock.sendall(_LEN.pack(len(raw)) + raw)
    if payload:
        sock.sendall(payload)


def recv_msg(sock: socket.socket) -> tuple[dict, bytearray]:
    """Receive one framed message; ``ConnectionError`` when the peer closed the connection."""
    (n,) = _LEN.unpack(_recv_exact(sock, _LEN.size))
    if n > MAX_HEADER:
        raise ConnectionError(f"header of {n} bytes is not a holder message")
    header = json.loads(_recv_exact(sock, n))
    payload = _recv_exact(sock, int(header.get("nbytes", 0))) if header.get("nbytes") else bytearray()
    return header, payload


class MemoryHolder:
    """The stored copies: ``{(job, shard): {step: (meta, bytes)}}``, newest ``keep`` steps per shard."""

    def __init__(self, keep: int = 2):
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError(f"keep must be an integer >= 1 (got {keep!r})")
        self.keep = keep
        self._copies: dict = {}
        self._lock = threading.Lock()

    def put(self, job: str, shard: int, step: int, data: bytes, **meta) -> None:
        with self._lock:
            steps = self._copies.setdefault((job, int(shard)), {})
            steps[int(step)] = (dict(meta, step=int(step), nbytes=len(data)), data)  # kept as received (no copy)
            for old in sorted(steps)[: -self.keep]:
                del steps[old]

    def list(self, job: str, shard: int) -> list[dict]:
        with self._lock:
            steps = self._copies.get((job, int(shard)), {})
            return [dict(steps[s][0]) for s in sorted(steps, reverse=True)]

    def get(self, job: str, shard: int, step: int):
        with self._lock:
            return self._copies.get((job, int(shard)), {}).get(int(step))

    def damage(self, job: str, shard: int, step: int, how: str = "flip") -> bool:
        """Flip bytes in the middle of a stored copy, or cut its second half off (the lab's faults)."""
        if how not in ("flip", "truncate"):
            raise ValueError(f"how must be one of ['flip', 'truncate'] (got {how!r})")
        with self._lock:
            steps = self._copies.get((job, int(shard)), {})
            if int(step) not in steps:
                return False
            meta, data = steps[int(step)]
            if how == "truncate":
                data = data[: len(data) // 2]
            else:
                mid = len(data) // 2
                data = data[:mid] + bytes(b ^ 0xFF for b in data[mid:mid + 8]) + data[mid + 8:]
            steps[int(step)] = (meta, data)
            return True

    def drop(self, job: str) -> int:
        with self._lock:
            keys = [k for k in self._copies if k[0] == job]
            for k in keys:
                del self._copies[k]
            return len(keys)

    def nbytes(self) -> int:
        with self._lock:
            return sum(len(d) for steps in self._copies.values() for _, d in steps.values())


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        holder: MemoryHolder = self.server.holder
        sock = self.request
        with self.server.conns_lock:
            self.server.conns.add(sock)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            try:
                req, payload = recv_msg(sock)
            except (ConnectionError, OSError, ValueError):
                return
            op = req.get("op")
            try:
                if op == "put":
                    meta = {k: v for k, v in req.items() if k not in ("op", "job", "shard", "step", "nbytes")}
                    holder.put(req["job"], req["shard"], req["step"], payload, **meta)
                    send_msg(sock, {"ok": True})
                elif op == "list":
                    send_msg(sock, {"ok": True, "steps": holder.list(req["job"], req["shard"])})
                elif op == "get":
                    got = holder.get(req["job"], req["shard"], req["step"])
                    if got is None:
                        send_msg(sock, {"ok": False, "error": "no such copy"})
                    else:
                        send_msg(sock, {"ok": True, "meta": got[0]}, got[1])
                elif op == "damage":
                    send_msg(sock, {"ok": holder.damage(req["job"], req["shard"], req["step"], req.get("how", "flip"))})
                elif op == "drop":
                    send_msg(sock, {"ok": True, "dropped": holder.drop(req["job"])})
                elif op == "stats":
                    send_msg(sock, {"ok": True, "held_bytes": holder.nbytes(), "keep": holder.keep})
                else:
                    send_msg(sock, {"ok": False, "error": f"unknown op {op!r}"})
            except (ConnectionError, OSError):
                return
            except Exception as exc:  # a bad request: answer it, keep serving
                try:
                    send_msg(sock, {"ok": False, "error": f"{type(exc).__name__}: {exc}"})
                except OSError:
                    return


class HolderServer(socketserver.ThreadingTCPServer):
    """A threaded TCP server around one :class:`MemoryHolder` (``server_address`` is where it listens)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, host: str = "127.0.0.1", port: int = 0, keep: int = 2):
        self.holder = MemoryHolder(keep)
        self.conns: set = set()
        self.conns_lock = threading.Lock()
        super().__init__((host, port), _Handler)

    @property
    def address(self) -> str:
        host, port = self.server_address[:2]
        return f"{host}:{port}"

    def start_thread(self) -> "HolderServer":
        """Serve from a daemon thread of this process (the tests' in-process holder)."""
        threading.Thread(target=self.serve_forever, args=(0.05,), name=f"holder-{self.address}", daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving and cut every open connection (for an in-process holder: the node is gone)."""
        self.shutdown()
        self.server_close()
        with self.conns_lock:
            for sock in self.conns:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                    sock.close()
                except OSError:
                    pass
            self.conns.clear()


def split_address(address: str) -> tuple[str, int]:
    host, _, port = str(address).rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"holder address must be 'host:port' (got {address!r})")
    return host, int(port)


class HolderClient:
    """One connection to a holder; every call is bounded by ``timeout_s`` (then ``OSError``)."""

    def __init__(self, address: str, timeout_s: float = 5.0):
        self.address = str(address)
        self.timeout_s = float(timeout_s)
        self._sock = None
        self._lock = threading.Lock()

    def _call(self, header: dict, payload: bytes = b"") -> tuple[dict, bytes]:
        with self._lock:
            for attempt in (0, 1):
                fresh = self._sock is None
                try:
                    if self._sock is None:
                        self._sock = socket.create_connection(split_address(self.address), timeout=self.timeout_s)
                        _tune(self._sock)
                    send_msg(self._sock, header, payload)
                    return recv_msg(self._sock)
                except (OSError, ConnectionError):
                    self.close_locked()
                    if fresh or attempt:  # a new connection failed: the holder is gone
                        raise
            raise AssertionError("unreachable")  # pragma: no cover

    def close_locked(self):
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def close(self) -> None:
        with self._lock:
            self.close_locked()

    def put(self, job: str, shard: int, step: int, data: bytes, **meta) -> None:
        rep, _ = self._call({"op": "put", "job": job, "shard": int(shard), "step": int(step), **meta}, data)
        if not rep.get("ok"):
            raise OSError(f"holder {self.address} refused the copy: {rep.get('error')}")

    def list(self, job: str, shard: int) -> list[dict]:
        rep, _ = self._call({"op": "list", "job": job, "shard": int(shard)})
        return rep.get("steps", [])

    def get(self, job: str, shard: int, step: int) -> bytearray | None:
        rep, payload = self._call({"op": "get", "job": job, "shard": int(shard), "step": int(step)})
        return payload if rep.get("ok") else None

    def damage(self, job: str, shard: int, step: int, how: str = "flip") -> bool:
        rep, _ = self._call({"op": "damage", "job": job, "shard": int(shard), "step": int(step), "how": how})
        return bool(rep.get("ok"))

    def drop(self, job: str) -> int:
        return int(self._call({"op": "drop", "job": job})[0].get("dropped", 0))

    def stats(self) -> dict:
        return self._call({"op": "stats"})[0]


def serve(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="holder.py", description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--keep", type=int, default=2)
    args = ap.parse_args(argv)
    server = HolderServer(args.host, args.port, args.keep)
    print(f"HOLDER {server.address}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(serve())
