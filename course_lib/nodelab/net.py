"""Nodes on one machine: network namespaces joined by veth pairs to a bridge (notebook 11).

:class:`LabNetwork` is a context manager that builds, for one lab run,

* a *switch* namespace ``crs-<id>-sw`` holding a Linux bridge ``br0`` with the address
  ``10.213.0.254/24`` (the rendezvous server listens there) and a MAC address of its own that never
  changes as nodes are plugged in (:data:`SWITCH_MAC`);
* one namespace per node, ``crs-<id>-n<i>``, holding ``lo`` and ``eth0``, the inside end
  of a veth pair whose other end ``v<i>`` is plugged into the bridge, with the address
  ``10.213.0.<i + 1>/24``.

Every name starts with ``crs-`` and the run's unique id (the owning process's pid and a random
suffix: a run killed by a signal leaves its namespaces behind, and the next run removes them,
:func:`remove_stale`; its processes die with it, ``PR_SET_PDEATHSIG``); every address lives inside a
namespace the lab created, so nothing is added to the machine's own network (its root
namespace sees no new link, address or port). Leaving the context (normally, on an
exception, or through :meth:`LabNetwork.close` from a fixture's teardown) SIGKILLs every
process inside the lab's namespaces and deletes the namespaces, which removes their links
and sockets with them. The clean-up is registered before anything is created.

It needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for ``ip netns``): :func:`net_admin_missing`
says why not, in one line, or returns ``None``.
"""
from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

from ..labkit.procs import die_with_parent

__all__ = ["PREFIX", "SUBNET", "SWITCH_MAC", "LabNetwork", "net_admin_missing", "leftovers", "netns_of", "remove_stale"]

PREFIX = "crs-"
SUBNET = "10.213.0"  # /24 inside the lab's namespaces only
SWITCH_ADDR = f"{SUBNET}.254"
IFACE = "eth0"  # the node's link (inside its own namespace)
#: The bridge's own MAC address, set once (locally administered, from the switch's address 10.213.0.254).
#: A Linux bridge left to choose takes the lowest MAC of its ports and changes it when a port with a lower
#: one is plugged in: a node added mid-run (a spare, a replacement) then moves the switch's MAC, and every
#: node whose ARP entry still names the old one sends into nothing (the bridge hands such a frame up as
#: addressed to another host, and IP drops it) until that entry expires, 15-45 s later. A rendezvous store
#: read on such a node timed out (15 s), its agent died and closed the rendezvous for every node: the
#: node-and-buddy flake of issue 22. An address set by hand is never changed by the bridge.
SWITCH_MAC = "02:00:0a:d5:00:fe"
_CAP_NET_ADMIN = 12
_CAP_SYS_ADMIN = 21


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=30)


_MISSING: list = []


def net_admin_missing() -> str | None:
    """``None`` when this process can create network namespaces, else one line saying why not.

    Checked once per process: the ``ip`` command, root's capabilities, then a probe
    namespace that is created and deleted at once.
    """
    if _MISSING:
        return _MISSING[0]
    reason = None
    if shutil.which("ip") is None:
        reason = "the nodes lab needs the `ip` command (iproute2), which is not installed"
    else:
        try:
            status = Path("/proc/self/status").read_text()
            eff = int(next(line.split()[1] for line in status.splitlines() if line.startswith("CapEff:")), 16)
        except (OSError, StopIteration, ValueError):
            eff = 0
        if not (eff >> _CAP_NET_ADMIN) & 1 or not (eff >> _CAP_SYS_ADMIN) & 1:
            reason = "the nodes lab needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for network namespaces); this process lacks them"
        else:
            probe = f"{PREFIX}probe-{uuid.uuid4().hex[:8]}"
            r = _ip("netns", "add", probe, check=False)
            if r.returncode != 0:
                reason = f"the nodes lab cannot create a network namespace here: {r.stderr.strip()[:200]}"
            _ip("netns", "del", probe, check=False)
    _MISSING.append(reason)
    return reason


def netns_of(pid: int) -> str | None:
    """The network-namespace identity of a process (``net:[inode]``), or None if it is gone."""
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def _netns_inode(name: str) -> str | None:
    try:
        return f"net:[{os.stat(f'/run/netns/{name}').st_ino}]"
    except OSError:
        return None


def _pids_in(name: str) -> list[int]:
    ident = _netns_inode(name)
    if ident is None:
        return []
    found = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit() and netns_of(int(p.name)) == ident:
            found.append(int(p.name))
    return found


def leftovers(tag: str = PREFIX) -> dict[str, list]:
    """What of the lab is still there: namespaces and root-namespace links whose name contains
    ``tag``, and processes living in such a namespace (``{"netns": [...], "links": [...],
    "processes": [...]}``, all empty after a clean teardown)."""
    r = _ip("netns", "list", check=False)
    names = [line.split()[0] for line in r.stdout.splitlines() if line.strip() and tag in line.split()[0]]
    r = _ip("-o", "link", "show", check=False)
    links = [line.split(":")[1].strip().split("@")[0] for line in r.stdout.splitlines() if tag in line]
    procs = [pid for n in names for pid in _pids_in(n)]
    return {"netns": names, "links": links, "processes": procs}


def _kill_and_delete_procs(name: str) -> None:
    for _ in range(50):
        pids = _pids_in(name)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)


def _kill_and_delete(names: list[str]) -> None:
    for name in names:
        _kill_and_delete_procs(name)
    for name in names:
        _ip("netns", "del", name, check=False)


def remove_stale() -> list[str]:
    """Delete the namespaces (and kill the processes) of lab runs whose owning process is gone
    (a run killed by a signal cannot clean up after itself); return their names."""
    stale = []
    for name in leftovers(PREFIX)["netns"]:
        owner = name[len(PREFIX):].split("-")[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            stale.append(name)
    _kill_and_delete(stale)
    return stale


class LabNetwork:
    """The lab's switch and nodes (see the module doc). Use as ``with LabNetwork() as net:``.

    ``net.add_node()`` creates the next node and returns its index; ``net.netns(i)``,
    ``net.addr(i)`` name it; ``net.popen(i, cmd, ...)`` starts a process inside it;
    ``net.kill_node(i)`` SIGKILLs every process of node ``i`` at once (the host is gone);
    ``net.cut_link(i)`` takes its link down (the host is alive but unreachable).
    """

    def __init__(self, run_id: str | None = None):
        # the owner's pid is part of every name, so a later run can remove what a killed one left
        self.run_id = run_id or f"{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.tag = f"{PREFIX}{self.run_id}"
        self.switch = f"{self.tag}-sw"
        self.nodes: list[str] = []
        self._procs: list[subprocess.Popen] = []
        self._closed = False
        self._made: list[str] = []

    # ----- set-up -----
    def __enter__(self) -> "LabNetwork":
        atexit.register(self.close)  # registered before anything exists
        remove_stale()
        try:
            self._add_netns(self.switch)
            _ip("-n", self.switch, "link", "set", "lo", "up")
            _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.switch, "link", "set", "br0", "address", SWITCH_MAC)  # fixed: see SWITCH_MAC
            _ip("-n", self.switch, "addr", "add", f"{SWITCH_ADDR}/24", "dev", "br0")
            _ip("-n", self.switch, "link", "set", "br0", "up")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _add_netns(self, name: str) -> None:
        self._made.append(name)  # remembered first: a half-made namespace is removed too
        _ip("netns", "add", name)

    def add_node(self) -> int:
        """Create the next node (namespace, veth pair into the bridge, address); return its index."""
        i = len(self.nodes)
        ns = f"{self.tag}-n{i}"
        self.nodes.append(ns)
        self._add_netns(ns)
        _ip("-n", self.switch, "link", "add", f"v{i}", "type", "veth", "peer", "name", IFACE, "netns", ns)
        _ip("-n", self.switch, "link", "set", f"v{i}", "master", "br0", "up")
        _ip("-n", ns, "addr", "add", f"{self.addr(i)}/24", "dev", IFACE)
        _ip("-n", ns, "link", "set", IFACE, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        return i

    def netns(self, i: int) -> str:
        return self.nodes[i]

    @staticmethod
    def addr(i: int) -> str:
        return f"{SUBNET}.{i + 1}"

    def prefix(self, where: int | str) -> list[str]:
        """The command prefix that runs a command inside node ``where`` (an index) or the switch (``"switch"``)."""
        return ["ip", "netns", "exec", self.switch if where == "switch" else self.netns(where)]

    def popen(self, where: int | str, cmd: list[str], **kw) -> subprocess.Popen:
        """Start ``cmd`` inside node ``where`` (an index) or the switch (``"switch"``)."""
        proc = subprocess.Popen([*self.prefix(where), *cmd], start_new_session=True, preexec_fn=die_with_parent, **kw)
        self._procs.append(proc)
        return proc

    def shape(self, i: int, rate_mbit: float) -> None:
        """Limit node ``i``'s link to ``rate_mbit`` Mbit/s in both directions (``tc`` token bucket, ``tbf``,
        on both ends of its veth pair; a burst of 10 ms at the rate, at least 64 KiB)."""
        burst = max(int(rate_mbit * 1e6 / 8 / 100), 65536)
        for ns, dev in ((self.netns(i), IFACE), (self.switch, f"v{i}")):
            subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate",
                            f"{rate_mbit:g}mbit", "burst", str(burst), "latency", "200ms"],
                           capture_output=True, text=True, check=True, timeout=30)

    # ----- failures -----
    def kill_node(self, i: int) -> int:
        """SIGKILL every process of node ``i`` (agent and workers together); return how many."""
        pids = _pids_in(self.netns(i))
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return len(pids)

    def cut_link(self, i: int) -> None:
        """Take node ``i``'s port on the switch down: its peers' packets go nowhere, nothing errors."""
        _ip("-n", self.switch, "link", "set", f"v{i}", "down")

    # ----- teardown -----
    def close(self) -> None:
        """Kill every process in the lab's namespaces, delete the namespaces (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for proc in self._procs:
            try:
                proc.kill()
            except OSError:  # pragma: no cover
                pass
        names = list(reversed(self._made))
        for name in names:  # first every process of every namespace ...
            _kill_and_delete_procs(name)
        for proc in self._procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass
        _kill_and_delete(names)  # ... then the namespaces
        try:
            atexit.unregister(self.close)
        except Exception:  # pragma: no cover
            pass
