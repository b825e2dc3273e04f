"""A checkpoint's bytes served over the nodes lab's network: a server and a client (stdlib only).

    python -m course_lib.nodelab.blobs serve  --mode file|memory --dir DIR --port-file PATH [--latency-ms L]
    python -m course_lib.nodelab.blobs fetch  PLAN.json RESULTS.json

``serve`` listens on every address of the namespace it runs in (the lab's node: its own ``eth0``
and ``lo``) and answers ``GET name\\n`` with the bytes of ``DIR/name``, then closes:

* ``--mode file`` (the **storage node**, the persisted tier): the file is read from its disk for
  each request, after ``posix_fadvise(POSIX_FADV_DONTNEED)`` has dropped its pages from the page
  cache, and sent with ``sendfile``;
* ``--mode memory`` (the **buddy**, a peer's host memory): every file of ``DIR`` is read into memory
  once at start and sent from there.

``--latency-ms`` waits that long before answering (the storage service's per-request latency: this
kernel has no ``netem`` to delay packets, so it is the server's; stated where it is used). It
writes its port to ``--port-file`` once it listens, and serves until it is killed.

``fetch`` runs a plan (``[{"addr", "port", "name", "size", "sha256", "tier"}, ...]``), each item a
fresh connection: connect, ``GET``, receive ``size`` bytes into one preallocated buffer, then verify
the sha256; it writes one result per item (fetch seconds, verify seconds, bit-exact) to RESULTS.json.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path


def serve(mode: str, folder: str, port_file: str, latency_ms: float) -> None:
    root = Path(folder)
    held = {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()} if mode == "memory" else {}
    srv = socket.create_server(("0.0.0.0", 0), backlog=16)
    tmp = Path(port_file + ".tmp")
    tmp.write_text(str(srv.getsockname()[1]))
    tmp.rename(port_file)  # the port appears whole, once the server listens

    def answer(conn: socket.socket) -> None:
        with conn:
            line = b""
            while not line.endswith(b"\n"):
                chunk = conn.recv(256)
                if not chunk:
                    return
                line += chunk
            name = Path(line.decode().split()[1]).name  # a name inside DIR, nothing else
            if latency_ms:
                time.sleep(latency_ms / 1000)
            if mode == "memory":
                conn.sendall(held[name])
                return
            with open(root / name, "rb") as fh:
                os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)  # from the disk, not the page cache
                conn.sendfile(fh)

    while True:
        conn, _ = srv.accept()
        threading.Thread(target=answer, args=(conn,), daemon=True).start()


def fetch_one(addr: str, port: int, name: str, size: int) -> tuple[bytearray, float]:
    """Connect, ask for ``name``, receive its ``size`` bytes; (the bytes, seconds from connect to the last byte)."""
    buf = bytearray(size)
    view = memoryview(buf)
    t0 = time.perf_counter()
    with socket.create_connection((addr, port), timeout=120) as s:
        s.sendall(f"GET {name}\n".encode())
        got = 0
        while got < size:
            n = s.recv_into(view[got:], min(size - got, 1 << 22))
            if n == 0:
                raise ConnectionError(f"{name}: the server closed after {got} of {size} bytes")
            got += n
    return buf, time.perf_counter() - t0


def fetch(plan_path: str, results_path: str) -> None:
    out = []
    for item in json.loads(Path(plan_path).read_text()):
        buf, t_fetch = fetch_one(item["addr"], item["port"], item["name"], item["size"])
        t0 = time.perf_counter()
        ok = hashlib.sha256(buf).hexdigest() == item["sha256"]
        out.append({**item, "fetch_s": t_fetch, "verify_s": time.perf_counter() - t0, "bit_exact": ok})
        del buf
    Path(results_path).write_text(json.dumps(out, indent=1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="the nodes lab's checkpoint server and client")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--mode", choices=("file", "memory"), required=True)
    s.add_argument("--dir", required=True)
    s.add_argument("--port-file", required=True)
    s.add_argument("--latency-ms", type=float, default=0.0)
    f = sub.add_parser("fetch")
    f.add_argument("plan")
    f.add_argument("results")
    a = ap.parse_args(argv)
    if a.cmd == "serve":
        serve(a.mode, a.dir, a.port_file, a.latency_ms)
    else:
        fetch(a.plan, a.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
