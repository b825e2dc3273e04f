"""A real Slurm cluster on one machine: munge, MariaDB, slurmdbd and slurmctld on the lab's switch, one
slurmd per node namespace (benchmarks/results/slurmlab.md).

Debian's packages (Slurm 22.05 on Debian 12): ``apt-get install -y slurmctld slurmd slurmdbd slurm-client
munge mariadb-server``. Every daemon is a process of the run's :class:`~course_lib.labkit.Lab` (its
token finds it), with its files under the run folder: the munge socket, key and seed, the database's
data folder, the spool and state folders, the logs and pid files. Nothing is written outside it, no
system service is touched (the packages' own services stay stopped), and :meth:`SlurmCluster.close`
(the lab's close) kills every daemon and job process, removes the namespaces and the run folder.

Namespaces are entered with ``nsenter --net=/run/netns/NAME``, not ``ip netns exec``: the latter
remounts /sys and slurmd then finds no cgroup file system. The database and slurmdbd listen inside
the switch namespace (127.0.0.1 there is the lab's own), slurmctld on the bridge's address, each
slurmd on its node's address (``SlurmdParameters=config_overrides``: the nodes share the host's CPUs).

The settings that decide a requeue's time are the cluster's :class:`SlurmSettings`: ``slurmd_timeout_s``
(how long slurmctld waits for an unresponsive slurmd before it sets the node DOWN, slurm.conf(5)
``SlurmdTimeout``, default 300 s) and ``cred_expire_s`` (``AuthInfo=cred_expire``, default 120 s,
"how long a requeued job must wait before starting again"), with the health check's program and
interval.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .._validate import check_int_non_negative, check_int_positive, checked
from ..labkit import Lab, LabError
from ..labkit.config import LabConfigBase, at_least
from ..nodelab.net import SWITCH_ADDR, LabNetwork, net_admin_missing

__all__ = ["PACKAGES", "INSTALL", "SlurmSettings", "SlurmCluster", "SlurmUnavailable", "slurm_missing", "slurm_version",
           "DEFAULTS", "TUNED"]

#: Debian's packages the lab needs, and the command that installs them.
PACKAGES = ("slurmctld", "slurmd", "slurmdbd", "slurm-client", "munge", "mariadb-server")
INSTALL = "apt-get install -y --no-install-recommends " + " ".join(PACKAGES)
_PROGRAMS = ("slurmctld", "slurmd", "slurmdbd", "sbatch", "sacct", "sacctmgr", "scontrol", "munged", "mariadbd",
             "mariadb-install-db", "nsenter")
MUNGE_KEY = Path("/etc/munge/munge.key")  # the package's key: every node of this machine shares it


class SlurmUnavailable(LabError):
    """This machine cannot run the scheduler lab (the message says why and how to install, in one line)."""


def _which(name: str) -> str | None:
    return shutil.which(name) or next((str(p) for p in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if p.exists()), None)


def slurm_missing() -> str | None:
    """Why the lab cannot run here (None when it can): not root, no namespaces, or a missing program."""
    if os.geteuid() != 0:
        return f"the scheduler lab runs its daemons as root (running as uid {os.geteuid()})"
    missing = net_admin_missing()
    if missing:
        return missing
    absent = [p for p in _PROGRAMS if _which(p) is None]
    if absent:
        return f"Slurm's programs are missing ({', '.join(absent)}): install them with `{INSTALL}`"
    if not MUNGE_KEY.exists():
        return f"munge's key {MUNGE_KEY} is missing: reinstall munge (`{INSTALL}`)"
    return None


def slurm_version() -> str:
    """The installed Slurm's version (``slurmctld -V``: e.g. ``22.05.8``; ``sbatch --version`` needs a
    configuration first, so it fails outside a running lab)."""
    out = subprocess.run([_which("slurmctld") or "slurmctld", "-V"], capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"(\d+\.\d+\.\d+)", out)
    return m.group(1) if m else out.strip()


@dataclass(frozen=True)
class SlurmSettings(LabConfigBase):
    """The scheduler's settings that time a requeue (seconds; slurm.conf(5) names in the comments).

    slurmd_timeout_s: ``SlurmdTimeout``, an unresponsive node is set DOWN after it (Slurm's default 300).
    cred_expire_s: ``AuthInfo=cred_expire``, a requeued batch job waits this long before it may start
        again (default 120).
    health_check_interval_s: ``HealthCheckInterval`` (0: no periodic health check).
    sched_interval_s: ``SchedulerParameters=sched_interval`` (default 60), the main scheduling loop's period
        (a job also starts at once when an event triggers the scheduler).
    message_timeout_s: ``MessageTimeout`` (default 10).
    """

    slurmd_timeout_s: int = checked(at_least(1, "slurmctld needs a timeout"), default=300)
    cred_expire_s: int = checked(at_least(5, "Slurm refuses a cred_expire below 5 s"), default=120)
    health_check_interval_s: int = checked(check_int_non_negative, default=0)
    sched_interval_s: int = checked(check_int_positive, default=60)
    message_timeout_s: int = checked(check_int_positive, default=10)


#: Slurm's own defaults for the settings above.
DEFAULTS = SlurmSettings()
#: The tuned settings the lab measures beside them (benchmarks/results/slurmlab.md; what each costs: design.md, the Slurm lab).
TUNED = SlurmSettings(slurmd_timeout_s=6, cred_expire_s=5, sched_interval_s=2, message_timeout_s=3)


MUNGE_RUN = Path("/run/munge")  # where every munge client looks for munged's socket (munge.socket.2)


def _enter(netns: str, munge_dir: Path, hosts: Path | None = None, hostname: str | None = None) -> list[str]:
    """The prefix that runs a command in namespace ``netns``'s network, with the lab's munge folder mounted
    over /run/munge in a mount namespace of its own (the clients' fixed socket path: nothing changes for
    the machine's own munge, and two labs can run at once). Where the machine has no /run/munge, a private
    tmpfs over /run holds the mount point (inside that namespace only).

    ``hosts``: a file mounted over /etc/hosts there (the lab's names: every node's name and address);
    ``hostname``: the host name inside (a UTS namespace of its own: a node's name, as on a real cluster,
    where slurmctld finds an srun by its host's name)."""
    setup = ['[ -d /run/munge ] || { mount -t tmpfs slurmlab /run && mkdir /run/munge; } && mount --bind "$0" /run/munge']
    if hosts is not None:
        setup.append(f"mount --bind '{hosts}' /etc/hosts")
    if hostname is not None:
        setup.append(f"hostname '{hostname}'")
    return [_which("nsenter") or "nsenter", f"--net=/run/netns/{netns}", "unshare", "--mount", "--propagation", "private",
            *(["--uts"] if hostname is not None else []), "sh", "-c", " && ".join(setup) + ' && exec "$@"', str(munge_dir)]


class SlurmCluster:
    """One Slurm cluster of ``nodes`` namespaced nodes (``n0`` ...), inside ``lab`` (a started Lab).

    ``with Lab(...) as lab: cluster = SlurmCluster(lab, nodes=3, settings=TUNED)`` brings it up (the
    lab's close takes it down). :meth:`run` runs a client command (``sbatch``, ``sacct``, ``scontrol``...)
    inside the switch with ``SLURM_CONF`` at the cluster's file; :meth:`kill_node` SIGKILLs every process
    of a node's namespace (slurmd and the job's processes); :meth:`cut_link` takes its link down.
    """

    def __init__(self, lab: Lab, nodes: int = 3, settings: SlurmSettings = DEFAULTS, *, health_check: str | None = None,
                 task_prolog: str | None = None, cluster_name: str = "lab"):
        self.lab = lab
        self.n_nodes = check_int_positive("nodes", nodes)
        if not isinstance(settings, SlurmSettings):
            raise ValueError(f"settings must be a SlurmSettings (got {type(settings).__name__})")
        self.settings = settings
        why = slurm_missing()
        if why:
            raise SlurmUnavailable(why)
        self.dir = lab.run_dir / "slurm"
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        lab.on_close(shutil.rmtree, self.dir, True)
        self.conf = self.dir / "slurm.conf"
        self.name = cluster_name
        self.net = LabNetwork()
        lab.on_close(self.net.close)
        self.net.__enter__()
        (lab.run_dir / "netns-tag").write_text(self.net.tag)  # what a clean-up check looks for
        for _ in range(self.n_nodes):
            self.net.add_node()
        self.names = [f"n{i}" for i in range(self.n_nodes)]
        self.env = lab.env(SLURM_CONF=self.conf)
        self.net_names = [self.net.netns(i) for i in range(self.n_nodes)]
        # every node under its own name (its UTS namespace), the names in a hosts file each namespace sees
        self.hosts = self.dir / "hosts"
        base = Path("/etc/hosts").read_text() if Path("/etc/hosts").exists() else "127.0.0.1 localhost\n"
        self.hosts.write_text(base.rstrip("\n") + "\n" + "".join(f"{self.net.addr(i)} {n}\n" for i, n in enumerate(self.names)))
        self._write_configs(health_check, task_prolog)
        self._start_munge()
        self._start_database()
        self._start("slurmdbd", [_which("slurmdbd"), "-D"])  # it reads slurmdbd.conf beside SLURM_CONF
        self._wait_port(6819, "slurmdbd")
        self._register()
        self._start("slurmctld", [_which("slurmctld"), "-D", "-i", "-f", self.conf])
        self._wait(lambda: self.run(["scontrol", "ping"], check=False).stdout.find("UP") >= 0, "slurmctld to answer", 60)
        for i, name in enumerate(self.names):
            self.start_slurmd(i)
        self._wait(lambda: self.idle_nodes() == set(self.names), "every slurmd to register", 60)

    # ----- set-up -----
    def _write_configs(self, health_check, task_prolog) -> None:
        s, d = self.settings, self.dir
        for sub in ("state", "spool", "db", "log"):
            (d / sub).mkdir()
        for n in self.names:
            (d / "spool" / n).mkdir()
        host = socket.gethostname().split(".")[0]
        self.munge_dir = d / "munge"
        self.munge_dir.mkdir()
        self.munge_socket = self.munge_dir / "munge.socket.2"
        auth = f"AuthInfo=cred_expire={s.cred_expire_s}"
        nodes = "\n".join(f"NodeName={n} NodeAddr={self.net.addr(i)} CPUs=2 RealMemory=1000 State=UNKNOWN"
                          for i, n in enumerate(self.names))
        lines = [
            f"ClusterName={self.name}", f"SlurmctldHost={host}({SWITCH_ADDR})", "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", "CredType=cred/munge", auth,
            f"StateSaveLocation={d / 'state'}", f"SlurmdSpoolDir={d / 'spool'}/%n",
            f"SlurmctldPidFile={d / 'slurmctld.pid'}", f"SlurmdPidFile={d / 'slurmd'}.%n.pid",
            f"SlurmctldLogFile={d / 'log' / 'slurmctld.log'}", f"SlurmdLogFile={d / 'log'}/slurmd.%n.log",
            "SlurmctldDebug=info", "SlurmdDebug=info",
            "ProctrackType=proctrack/pgid", "TaskPlugin=task/none", "SlurmdParameters=config_overrides",
            "SelectType=select/linear", "MpiDefault=none", "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/slurmdbd", f"AccountingStorageHost={SWITCH_ADDR}",
            "JobRequeue=1", "ReturnToService=2", "KillWait=5", "InactiveLimit=0", "MinJobAge=30",
            f"SlurmdTimeout={s.slurmd_timeout_s}", f"MessageTimeout={s.message_timeout_s}",
            f"SchedulerParameters=sched_interval={s.sched_interval_s}",
            "SlurmctldTimeout=30", "TreeWidth=65533",
        ]
        if task_prolog:
            lines.append(f"TaskProlog={task_prolog}")
        if health_check:
            lines += [f"HealthCheckProgram={health_check}", f"HealthCheckInterval={max(s.health_check_interval_s, 1)}",
                      "HealthCheckNodeState=ANY"]
        lines += [nodes, "PartitionName=lab Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE"]
        self.conf.write_text("\n".join(lines) + "\n")
        (d / "cgroup.conf").write_text("CgroupPlugin=cgroup/v1\n")
        dbd = d / "slurmdbd.conf"
        dbd.write_text("\n".join([
            "AuthType=auth/munge", f"DbdHost={host}", f"DbdAddr={SWITCH_ADDR}",
            "DbdPort=6819", "SlurmUser=root", "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1",
            "StoragePort=3306", "StorageUser=root", "StorageLoc=slurm_acct_db", f"PidFile={d / 'slurmdbd.pid'}",
            f"LogFile={d / 'log' / 'slurmdbd.log'}", "DebugLevel=info"]) + "\n")
        dbd.chmod(0o600)

    def _start(self, name: str, cmd: list, where: str | None = None) -> subprocess.Popen:
        node = self.names[self.net_names.index(where)] if where in self.net_names else None
        return self.lab.start(name, [*_enter(where or self.net.switch, self.munge_dir, self.hosts, node), *cmd], env=self.env)

    def _start_munge(self) -> None:
        key = self.dir / "munge.key"
        shutil.copyfile(MUNGE_KEY, key)
        key.chmod(0o400)
        d = self.dir
        self._start("munged", [_which("munged"), "-F", "--force", f"--socket={MUNGE_RUN / 'munge.socket.2'}", f"--key-file={key}",
                               f"--pid-file={d / 'munged.pid'}", f"--log-file={d / 'log' / 'munged.log'}",
                               f"--seed-file={d / 'munged.seed'}"])
        self._wait(lambda: self.munge_socket.exists(), "munged's socket", 30)

    def _start_database(self) -> None:
        d = self.dir
        subprocess.run([_which("mariadb-install-db"), f"--datadir={d / 'db'}", "--user=root", "--auth-root-authentication-method=normal",
                        "--skip-test-db", "--skip-name-resolve"], capture_output=True, text=True, check=True, timeout=120,
                       env=self.env)
        self.db_socket = d / "mysqld.sock"
        self._start("mariadbd", [_which("mariadbd"), "--no-defaults", "--user=root", f"--datadir={d / 'db'}",
                                 f"--socket={self.db_socket}", f"--pid-file={d / 'mariadbd.pid'}", "--bind-address=127.0.0.1",
                                 "--port=3306", "--skip-log-bin", "--innodb-buffer-pool-size=32M",
                                 "--innodb-flush-log-at-trx-commit=0", "--innodb-lock-wait-timeout=900",
                                 "--skip-grant-tables", f"--log-error={d / 'log' / 'mariadbd.log'}"])
        self._wait_port(3306, "the database")

    def _wait_port(self, port: int, what: str, timeout_s: float = 60) -> None:
        probe = [_which("nsenter"), f"--net=/run/netns/{self.net.switch}", "bash", "-c",
                 f"exec 3<>/dev/tcp/{'127.0.0.1' if port == 3306 else SWITCH_ADDR}/{port}"]
        self._wait(lambda: subprocess.run(probe, capture_output=True, timeout=10).returncode == 0, what, timeout_s)

    def _register(self) -> None:
        for args in (["add", "cluster", self.name], ["add", "account", "lab", "Description=lab", "Organization=lab"],
                     ["add", "user", "root", "DefaultAccount=lab"]):
            r = self.run(["sacctmgr", "-i", *args], check=False)
            if r.returncode != 0 and "Nothing new added" not in r.stdout + r.stderr and "already exists" not in r.stdout + r.stderr:
                self.lab.fail(f"sacctmgr {' '.join(args)} failed: {r.stdout}{r.stderr}")

    def _wait(self, ok, what: str, timeout_s: float) -> None:
        end = min(time.monotonic() + timeout_s, self.lab.deadline)
        while time.monotonic() < end:
            if ok():
                return
            time.sleep(0.2)
        self.lab.fail(f"timed out waiting for {what}")

    def start_slurmd(self, i: int) -> subprocess.Popen:
        """Start node ``i``'s slurmd inside its namespace (again after :meth:`kill_node`: a repaired node)."""
        return self._start(f"slurmd-{self.names[i]}-{time.monotonic_ns()}", [_which("slurmd"), "-D", "-N", self.names[i],
                                                                              "-f", self.conf], where=self.net.netns(i))

    # ----- using it -----
    def run(self, cmd: list, *, check: bool = True, timeout_s: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
        """A client command inside the switch (``SLURM_CONF`` at the cluster's file; ``env``: more variables, which
        ``sbatch`` passes on to the job)."""
        full = dict(self.env, **{k: str(v) for k, v in (env or {}).items()})
        r = subprocess.run([*_enter(self.net.switch, self.munge_dir, self.hosts), *[str(c) for c in cmd]], capture_output=True, text=True,
                           env=full, timeout=timeout_s)
        if check and r.returncode != 0:
            self.lab.fail(f"{' '.join(map(str, cmd))} exited {r.returncode}: {r.stdout}{r.stderr}")
        return r

    def node_states(self) -> dict[str, str]:
        """Each node's state as ``sinfo`` prints it (``idle``, ``alloc``, ``down*``, ``drain``...)."""
        out = self.run(["sinfo", "-N", "-h", "-o", "%N %t"], check=False).stdout
        return dict(line.split() for line in out.splitlines() if len(line.split()) == 2)

    def job_state(self, jobid: str) -> str:
        """The job's state as squeue/scontrol see it (``PENDING``, ``RUNNING``, ``COMPLETED``, ``FAILED``...)."""
        out = self.run(["scontrol", "show", "job", jobid], check=False).stdout
        m = re.search(r"JobState=(\S+)", out)
        return m.group(1) if m else "UNKNOWN"

    def idle_nodes(self) -> set:
        return {n for n, s in self.node_states().items() if s == "idle"}

    def kill_node(self, i: int) -> int:
        """SIGKILL every process of node ``i`` (its slurmd and the job's processes on it)."""
        return self.net.kill_node(i)

    def cut_link(self, i: int) -> None:
        self.net.cut_link(i)
