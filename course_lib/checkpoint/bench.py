"""The write-cost benchmark: run the strategies, summarise them, record the machine (notebook 05).

:func:`run_benchmark` measures every (size, strategy) pair in this process;
``python -m course_lib.checkpoint --ranks N`` runs the same thing under torchrun
(:mod:`.dist_worker`). :func:`summarize` turns the raw rows into medians per (size,
strategy) and :func:`ratios` into the comparisons the course makes (snapshot vs bare copy,
sync save vs snapshot, async blocking vs dcp.save). :func:`check_resources` refuses sizes
that cannot fit in free memory or free disk *before* anything is allocated.
"""
from __future__ import annotations

import csv
import datetime as _dt
import json
import math
import os
import platform
import shutil
import statistics
import tempfile
from pathlib import Path

import torch

from .._validate import check_choice, check_int_positive
from .state import format_size, parse_size, toy_state
from .strategies import STRATEGIES, measure

__all__ = [
    "MEMORY_FACTOR",
    "DISK_FACTOR",
    "available_memory_bytes",
    "free_disk_bytes",
    "check_resources",
    "resolve_device",
    "parse_sizes",
    "parse_strategies",
    "machine_info",
    "run_benchmark",
    "summarize",
    "ratios",
    "write_csv",
    "write_json",
]

#: peak host memory per byte of state: the state, the bare-copy buffer, the snapshot buffers,
#: DCP's reload template (all allocated up front, the saves are interleaved) and a reload
#: in flight (torch.load reads the file's bytes, then builds the tensors)
MEMORY_FACTOR = 6
#: peak disk per byte of state: the previous checkpoint and the one being written
DISK_FACTOR = 2
_SLACK = 256 * 2**20


def available_memory_bytes() -> int:
    """Memory the kernel says is available (``MemAvailable`` in /proc/meminfo; sysconf fallback)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**63


def free_disk_bytes(directory) -> int:
    """Free bytes on the file system that holds ``directory`` (or its nearest existing parent)."""
    p = Path(directory).resolve()
    while not p.exists():
        p = p.parent
    return shutil.disk_usage(p).free


def resolve_device(device: str = "auto") -> str:
    """``auto`` -> ``cuda`` when a GPU is present, else ``cpu``; ``cuda`` without a GPU is an error."""
    check_choice("device", device, ("auto", "cpu", "cuda"))
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device must be 'cpu' or 'auto' on this machine: torch sees no CUDA GPU (got 'cuda')")
    return device


def parse_sizes(text) -> list[int]:
    """``"256MiB,1GiB"`` (or a list) -> sizes in bytes."""
    items = [s for s in (text.split(",") if isinstance(text, str) else list(text)) if str(s).strip()]
    if not items:
        raise ValueError(f"sizes must name at least one size such as 256MiB (got {text!r})")
    return [parse_size(s, "sizes") for s in items]


def parse_strategies(text) -> list[str]:
    """``"all"`` or a comma list of :data:`STRATEGIES`, in the canonical order."""
    items = list(STRATEGIES) if text in ("all", None) else [s.strip() for s in (text.split(",") if isinstance(text, str) else text)]
    for s in items:
        check_choice("strategies", s, STRATEGIES)
    return [s for s in STRATEGIES if s in items]


def check_resources(sizes, directory, device: str = "cpu", ranks: int = 1, memory=None, disk=None, gpu_memory=None) -> None:
    """Raise ValueError naming ``sizes`` when the largest size cannot fit; allocate nothing.

    Host memory must hold :data:`MEMORY_FACTOR` copies of the state, the disk under
    ``directory`` :data:`DISK_FACTOR` copies, and on a GPU each rank's shard must fit into the
    free memory of its GPU. ``memory``/``disk``/``gpu_memory`` override the measured free bytes
    (for tests).
    """
    ranks = check_int_positive("ranks", ranks)
    largest = max(sizes)
    memory = available_memory_bytes() if memory is None else memory
    disk = free_disk_bytes(directory) if disk is None else disk
    need_mem = MEMORY_FACTOR * largest + _SLACK
    if need_mem > memory:
        raise ValueError(
            f"sizes: {format_size(largest)} needs about {format_size(need_mem)} of host memory "
            f"({MEMORY_FACTOR} copies of the state) but only {format_size(memory)} is available; choose a smaller size"
        )
    need_disk = DISK_FACTOR * largest + _SLACK
    if need_disk > disk:
        raise ValueError(
            f"sizes: {format_size(largest)} needs about {format_size(need_disk)} of free disk under {directory} "
            f"({DISK_FACTOR} checkpoints) but only {format_size(disk)} is free; choose a smaller size or another --dir"
        )
    if device == "cuda":
        if gpu_memory is None:
            gpu_memory = min(torch.cuda.mem_get_info(i)[0] for i in range(min(ranks, torch.cuda.device_count())))
        shard = math.ceil(largest / ranks)
        if 2 * shard > gpu_memory:  # the state and DCP's reload template
            raise ValueError(
                f"sizes: a {format_size(shard)} shard per GPU needs {format_size(2 * shard)} of GPU memory "
                f"but only {format_size(gpu_memory)} is free; choose a smaller size"
            )


def _read_first(path, key):
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _filesystem(directory) -> str:
    p = Path(directory).resolve()
    best, fstype, dev = "", "?", "?"
    try:
        with open("/proc/mounts") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 3 and str(p).startswith(parts[1]) and len(parts[1]) > len(best):
                    best, dev, fstype = parts[1], parts[0], parts[2]
    except OSError:
        pass
    return f"{fstype} on {dev} (mounted at {best or '?'})"


def machine_info(directory=".", device: str = "cpu") -> dict:
    """The machine a benchmark ran on: CPU model, cores, RAM, disk, library versions, date."""
    import numpy

    mem_total = _read_first("/proc/meminfo", "MemTotal")
    info = {
        "date": _dt.date.today().isoformat(),
        "cpu_model": _read_first("/proc/cpuinfo", "model name") or platform.processor() or "?",
        "cpu_cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "ram": format_size(int(mem_total.split()[0]) * 1024) if mem_total else "?",
        "disk": _filesystem(directory),
        "disk_free": format_size(free_disk_bytes(directory)),
        "os": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "device": device,
    }
    if device == "cuda":
        info["gpu"] = torch.cuda.get_device_name(0)
        info["gpu_count"] = torch.cuda.device_count()
        info["cuda"] = torch.version.cuda
    return info


def run_benchmark(sizes, strategies=STRATEGIES, repeats: int = 3, device: str = "cpu", directory="build/checkpoint-bench",
                  seed: int = 0, verify: bool = False, progress: bool = True, check: bool = True) -> list[dict]:
    """Measure every (size, strategy) pair ``repeats`` times in this process; one row per save.

    Rows carry ``size`` (the requested bytes), ``ranks`` (1) and ``device`` besides the
    timings of :func:`measure`. ``check`` runs :func:`check_resources` first. The checkpoint
    files are written into a fresh folder inside ``directory`` that is removed afterwards
    (nothing else in ``directory`` is touched).
    """
    sizes = parse_sizes(sizes) if isinstance(sizes, str) else [parse_size(s, "sizes") for s in sizes]
    strategies = parse_strategies(strategies)
    repeats = check_int_positive("repeats", repeats)
    device = resolve_device(device)
    directory = Path(directory)
    if check:
        check_resources(sizes, directory, device)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(sizes) * len(strategies) * repeats, desc="checkpoint bench", unit="save", leave=False)
    rows = []
    directory.mkdir(parents=True, exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="ckpt-bench-", dir=directory))
    try:
        for size in sizes:
            state = toy_state(size, device=device, seed=seed)
            if bar is not None:
                bar.set_postfix_str(format_size(size))
            out = directory / f"{size}"
            for row in measure(strategies, state, out, repeats=repeats, verify=verify,
                               on_repeat=(lambda _r: bar.update(1)) if bar is not None else None):
                rows.append({"size": size, "ranks": 1, "device": device, **row})
            shutil.rmtree(out, ignore_errors=True)
            del state
    finally:
        if bar is not None:
            bar.close()
        shutil.rmtree(directory, ignore_errors=True)
    return rows


def _median(values):
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return statistics.median(vals) if vals else float("nan")


def summarize(rows) -> list[dict]:
    """Medians per (size, ranks, strategy): blocking_s, durable_s, reload_s, dcp_call_s, GB/s.

    ``nbytes`` and the per-GiB costs refer to the bytes one rank saves (its shard).
    """
    groups = {}
    for r in rows:
        groups.setdefault((r["size"], r.get("ranks", 1), r.get("device", "cpu"), r["strategy"]), []).append(r)
    order = {s: i for i, s in enumerate(STRATEGIES)}
    out = []
    for (size, ranks, device, strategy), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], order[kv[0][3]])):
        nbytes = rs[0]["nbytes"]  # bytes each rank saves (the whole state with one rank)
        med = {k: _median([r[k] for r in rs]) for k in ("blocking_s", "durable_s", "reload_s", "dcp_call_s")}
        out.append({
            "size": size, "ranks": ranks, "device": device, "strategy": strategy, "repeats": len(rs), "nbytes": nbytes,
            **med,
            "blocking_GBps": nbytes / med["blocking_s"] / 1e9 if med["blocking_s"] > 0 else float("nan"),
            "blocking_s_per_GiB": med["blocking_s"] / (nbytes / 2**30),
            "durable_s_per_GiB": med["durable_s"] / (nbytes / 2**30),
        })
    return out


#: the course's targets (issue 4): name -> (description, comparison, threshold)
TARGETS = {
    "snapshot_vs_bare_copy": ("snapshot blocking / bare copy", "<=", 1.5),
    "torch_save_vs_snapshot": ("torch.save+fsync / snapshot blocking", ">=", 10.0),
    "async_vs_dcp": ("async_save blocking / dcp.save", "<=", 0.20),
    "snapshot_bw_vs_pinned": ("snapshot D2H bandwidth / bare pinned copy (GPU)", ">=", 0.80),
}


def ratios(summary) -> list[dict]:
    """Per (size, ranks, device): the three ratios the course's targets are stated in, with pass/miss.

    ``async_vs_dcp`` divides async_save's blocking time by the time spent inside the blocking
    ``dcp.save`` call (without the manifest and commit the course adds), the stricter reading.
    """
    by = {}
    for s in summary:
        by.setdefault((s["size"], s["ranks"], s["device"]), {})[s["strategy"]] = s
    out = []
    for (size, ranks, device), d in sorted(by.items()):
        vals = {}
        if "snapshot" in d and "bare_copy" in d:
            vals["snapshot_vs_bare_copy"] = d["snapshot"]["blocking_s"] / d["bare_copy"]["blocking_s"]
        if "snapshot" in d and "torch_save" in d:
            vals["torch_save_vs_snapshot"] = d["torch_save"]["blocking_s"] / d["snapshot"]["blocking_s"]
        if "dcp_async" in d and "dcp" in d:
            vals["async_vs_dcp"] = d["dcp_async"]["blocking_s"] / d["dcp"]["dcp_call_s"]
        if device == "cuda" and "snapshot" in d and "bare_copy" in d:
            vals["snapshot_bw_vs_pinned"] = d["bare_copy"]["blocking_s"] / d["snapshot"]["blocking_s"]
        for key, v in vals.items():
            desc, op, thr = TARGETS[key]
            ok = v <= thr if op == "<=" else v >= thr
            out.append({"size": size, "ranks": ranks, "device": device, "ratio": key, "description": desc,
                        "value": v, "target": f"{op} {thr:g}", "met": bool(ok)})
    return out


def write_csv(rows, path) -> Path:
    """Write dict rows to a CSV file (columns in first-seen order)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    return path


def write_json(payload, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def clean(x):
        if isinstance(x, float) and math.isnan(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    path.write_text(json.dumps(clean(payload), indent=1) + "\n")
    return path
