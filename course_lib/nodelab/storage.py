"""The persisted checkpoint behind a real link: a storage node and a buddy in namespaces of their own (notebook 11).

    from course_lib.nodelab.storage import Link, run_storage_link
    res = run_storage_link([64, 256], repeats=3)      # MiB; buddy (peer memory) vs persisted, interleaved
    res.rows[0]["fetch_s"], res.rows[0]["predicted_s"]

Three nodes of :class:`~course_lib.nodelab.net.LabNetwork` (their own network namespaces behind one
bridge): ``n0`` the restoring rank, ``n1`` the **buddy** (the checkpoint in a peer's host memory,
:mod:`course_lib.nodelab.blobs` ``--mode memory``), ``n2`` the **storage node** (the persisted file
on its disk, its pages dropped from the page cache before every read, ``--mode file``). Each of
``n1`` and ``n2`` has its link shaped with ``tc`` (``tbf``, :meth:`LabNetwork.shape`) to a stated
rate; the storage node adds a stated per-request latency (the kernel here has no ``netem``). The
reader fetches over the bridge, so a persisted restore crosses the storage link, not the reader's
page cache. A restore here = connect, fetch the bytes, verify the sha256 (the same ``torch.load``
would follow on either tier). The model: ``size / rate + latency`` (:func:`predicted_fetch_s`).
Everything is torn down on the way out (the network's own clean-up), whatever happens.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .._validate import Validated, check_int_positive, check_non_negative, check_positive, checked
from .net import LabNetwork, leftovers

__all__ = ["Link", "PERSISTED_LINK", "BUDDY_LINK", "predicted_fetch_s", "StorageLinkResult", "run_storage_link"]

MIB = 1 << 20


@dataclass(frozen=True)
class Link(Validated):
    """A node's link: ``rate_mbit`` (Mbit/s, both directions) and the server's per-request ``latency_ms``."""

    rate_mbit: float = checked(check_positive)
    latency_ms: float = checked(check_non_negative, default=0.0)


#: The stated links (assumptions): a 4:1 ratio of the buddy's peer link to the storage node's share, as a
#: 100 Gbit/s peer link against a 25 Gbit/s share of a shared file system per node, scaled by 1/100 so that both
#: stay below what one Python socket reader on this loaded 2-core machine moves (about 2 Gbit/s at a load of 15:
#: above that the buddy would measure the CPU, not its link); 1 ms per request at the storage node.
PERSISTED_LINK = Link(250.0, 1.0)
BUDDY_LINK = Link(1000.0, 0.0)


def predicted_fetch_s(size_bytes: float, link: Link) -> float:
    """``size / rate + latency`` in seconds: the time to move ``size_bytes`` over ``link``."""
    size = check_non_negative("size_bytes", size_bytes)
    return size * 8 / (link.rate_mbit * 1e6) + link.latency_ms / 1000


@dataclass
class StorageLinkResult:
    """rows: one per fetch (tier, size_mib, repeat, fetch_s, verify_s, predicted_s, bit_exact);
    netns: the lab's namespaces; left: what of them was still there after the teardown."""

    rows: list = field(default_factory=list)
    netns: list = field(default_factory=list)
    left: dict = field(default_factory=dict)
    links: dict = field(default_factory=dict)
    wall_s: float = 0.0


def _write_blob(path: Path, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "wb") as fh:
        left = size
        while left:
            chunk = os.urandom(min(left, 16 * MIB))
            h.update(chunk)
            fh.write(chunk)
            left -= len(chunk)
    return h.hexdigest()


def _wait_port(path: Path, proc, deadline: float) -> int:
    while not path.exists():
        if proc.poll() is not None:
            raise RuntimeError(f"the server for {path.name} exited with {proc.returncode}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the server for {path.name} did not listen in time")
        time.sleep(0.02)
    return int(path.read_text())


def run_storage_link(sizes_mib, *, repeats: int = 3, persisted: Link = PERSISTED_LINK, buddy: Link = BUDDY_LINK,
                     timeout_s: float = 600.0, work_dir: str | os.PathLike | None = None) -> StorageLinkResult:
    """Fetch each size from the buddy and from the storage node, ``repeats`` times, interleaved (see the module doc)."""
    sizes = [check_int_positive(f"sizes_mib[{i}]", s) for i, s in enumerate(sizes_mib)]
    if not sizes:
        raise ValueError("sizes_mib must name at least one size (got an empty sequence)")
    repeats = check_int_positive("repeats", repeats)
    t0 = time.monotonic()
    deadline = t0 + check_positive("timeout_s", timeout_s)
    res = StorageLinkResult(links={"persisted": asdict(persisted), "buddy": asdict(buddy)})
    with tempfile.TemporaryDirectory(prefix="crs-storage-", dir=work_dir) as tmp:
        tmp = Path(tmp)
        blobs = tmp / "blobs"
        blobs.mkdir()
        digests = {s: _write_blob(blobs / f"ckpt-{s}MiB.bin", s * MIB) for s in sizes}
        with LabNetwork() as net:
            reader, peer, store = net.add_node(), net.add_node(), net.add_node()
            res.netns = [net.switch, *net.nodes]
            net.shape(peer, buddy.rate_mbit)
            net.shape(store, persisted.rate_mbit)
            py = [sys.executable, "-m", "course_lib.nodelab.blobs", "serve"]
            servers = {}
            for tier, node, mode, link in (("buddy", peer, "memory", buddy), ("persisted", store, "file", persisted)):
                pf = tmp / f"{tier}.port"
                proc = net.popen(node, [*py, "--mode", mode, "--dir", str(blobs), "--port-file", str(pf),
                                        "--latency-ms", str(link.latency_ms)])
                servers[tier] = (node, proc, pf)
            ports = {tier: _wait_port(pf, proc, deadline) for tier, (node, proc, pf) in servers.items()}
            plan = []
            for r in range(repeats):  # interleaved: buddy, persisted, buddy, ... so load hits both alike
                for s in sizes:
                    for tier in ("buddy", "persisted"):
                        node = servers[tier][0]
                        plan.append({"tier": tier, "size_mib": s, "repeat": r, "addr": net.addr(node), "port": ports[tier],
                                     "name": f"ckpt-{s}MiB.bin", "size": s * MIB, "sha256": digests[s]})
            (tmp / "plan.json").write_text(json.dumps(plan))
            client = net.popen(reader, [sys.executable, "-m", "course_lib.nodelab.blobs", "fetch", str(tmp / "plan.json"),
                                        str(tmp / "results.json")])
            try:
                rc = client.wait(timeout=max(deadline - time.monotonic(), 1))
            except Exception:
                raise TimeoutError(f"the fetches did not finish within timeout_s = {timeout_s:g}") from None
            if rc != 0:
                raise RuntimeError(f"the fetching client exited with {rc}")
            got = json.loads((tmp / "results.json").read_text())
        res.left = leftovers(net.tag)
    links = {"buddy": buddy, "persisted": persisted}
    for g in got:
        res.rows.append({"tier": g["tier"], "size_mib": g["size_mib"], "repeat": g["repeat"], "fetch_s": g["fetch_s"],
                         "verify_s": g["verify_s"], "predicted_s": predicted_fetch_s(g["size"], links[g["tier"]]),
                         "bit_exact": g["bit_exact"]})
    res.wall_s = time.monotonic() - t0
    return res
