"""From a log to the answer: every measurement in one record, then the course's answer for that fleet (notebook 13).

:func:`analyse` runs every test of :mod:`course_lib.incidents.analysis` on the log's *job
interruptions* (the classes :mod:`course_lib.incidents.policy` counts), the repair times too (a
job's spare pool covers the nodes it loses). :func:`answer_for_log` builds the
:class:`~course_lib.scenario.Scenario` of a job on that fleet (:func:`scenario_for_log`: the log's
interruption rate per GPU-day, and the log's measured restart stages where it has them) and asks
the course's one model for the levers and the floor (:func:`course_lib.answer.answer`), at the
rate and at both ends of its interval, with the lemon-removal factor measured out of sample
applied as a rate lever (:class:`course_lib.levers.RateLever`), and with the log's own mode shares
(the course's class-to-mode mapping, an assumption). The spare pool comes from the measured
repair times (Poisson and replayed) against the elastic alternative (:mod:`course_lib.spares`).

Slurm's accounting (notebook 15): a ``sacct`` log gives the job's interruptions (the rate) and,
from its requeue chain, the scheduler's reschedule (:func:`reschedule_times`: End of the failed
attempt to Start of the next, measured). It is a *job-level* log when its NodeLists name several
nodes (:func:`node_attribution`): nothing says which one failed, so the per-node analyses (dispersion,
worst nodes, lemons, repeat faults) and the node repair times come from the node events
(``sacctmgr show event``, ``node_events=``) when given, and are otherwise reported as not available,
with the reason, in the table, the JSON and the report (never a crash, never a silent zero).
"""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field

import numpy as np

from .. import spares as sp
from .._validate import check_int_positive, check_open_unit, check_unit_interval
from . import analysis as an
from . import policy as pl
from .readers import expand_hostlist
from .schema import SECONDS_PER_DAY, UNKNOWN, IncidentLog, stage_seconds

__all__ = ["LogAnalysis", "analyse", "scenario_for_log", "LogAnswer", "answer_for_log", "stage_minutes", "Reschedule",
           "reschedule_times", "node_attribution", "PER_NODE"]

#: The analyses that need to know which node each fault was on (a job-level log cannot say).
PER_NODE = ("nodes with a fault", "dispersion", "negative binomial", "worst nodes", "lemon removal", "repeat faults",
            "repeat faults within 7 days", "bursts", "repair times")


def stage_minutes(log: IncidentLog) -> dict[str, float]:
    """Median minutes of each of the course's four restart stages where the log has their timestamps (else NaN)."""
    out = {}
    for k, v in stage_seconds(log).items():
        v = v[np.isfinite(v)]
        out[k] = float(np.median(v)) / 60.0 if v.size else math.nan
    return out


@dataclass(frozen=True)
class Reschedule:
    """The scheduler's reschedule of each requeue in a sacct log (seconds): End of the failed attempt to Start of the next.

    What Slurm's accounting measures of the course's reschedule stage: the node set DOWN and the job
    ended (the End), the requeue, the wait before a requeued job may start again (``cred_expire``,
    slurm.conf(5)), the scheduler's cycle and the allocation, up to the batch script starting (the
    next Start). The job's own start-up (srun, torchrun's rendezvous, the load) comes after it.
    ``open``: interruptions with no later attempt in the log (not rescheduled before the export ended).
    Quantiles are numpy's default (linear between order statistics).
    """

    seconds: np.ndarray
    open: int

    @property
    def count(self) -> int:
        return int(self.seconds.size)

    @property
    def median_s(self) -> float:
        return float(np.median(self.seconds))

    @property
    def min_s(self) -> float:
        return float(self.seconds.min())

    @property
    def max_s(self) -> float:
        return float(self.seconds.max())

    def quantile_s(self, q: float) -> float:
        return float(np.quantile(self.seconds, check_unit_interval("q", q)))

    def text(self) -> str:
        return (f"{self.median_s:.0f} s at the median over {self.count:,} requeue{'s' if self.count != 1 else ''} "
                f"(shortest {self.min_s:.0f} s, longest {self.max_s:.0f} s)")


def reschedule_times(log: IncidentLog) -> Reschedule:
    """The reschedules of a sacct log's requeue chains (:func:`course_lib.incidents.read_sacct`: each closed
    interruption runs from the failed attempt's End to the next attempt's Start)."""
    if not isinstance(log, IncidentLog) or log.format != "sacct":
        raise ValueError("log must be a sacct log (read_sacct): the reschedule is read from its requeue chains")
    closed = ~log.open
    if not closed.any():
        raise ValueError("no interruption of the log was followed by a later attempt of its job: nothing was rescheduled "
                         "in it (export with sacct --duplicates)")
    return Reschedule(log.duration_days[closed] * SECONDS_PER_DAY, int(log.open.sum()))


def node_attribution(log: IncidentLog) -> str | None:
    """None when every incident names the one node it happened on; else why the log cannot say (a job-level log).

    A sacct log names each interruption's NodeList: one host for a one-node job (the node is known),
    all of them for a job on several (sacct does not say which one failed).
    """
    if log.format != "sacct" or not len(log):
        return None
    sizes = [len(expand_hostlist(n)) if n != UNKNOWN else 0 for n in np.asarray(log.nodes)[np.unique(log.node)]]
    if all(k == 1 for k in sizes):
        return None
    return (f"a job-level log: sacct's NodeList names every node of the job ({max(sizes):,} in its largest attempt), not the "
            f"one that failed; per-node analyses need the node events (sacctmgr show event: --events FILE)")


def _one_node(log: IncidentLog) -> IncidentLog:
    """The log with every incident on one pseudo-node: a job-level log's rate checks no node count against the fleet."""
    return dataclasses.replace(log, node=np.zeros(len(log), np.int64), nodes=("the job's nodes",))


def _job_size(log: IncidentLog) -> int:
    """The most nodes one attempt of the log's jobs ran on (a requeued job may come back on other nodes: the
    fleet a job-level log is rated on is the job's size, not every node its attempts touched)."""
    return max(len(expand_hostlist(n)) for n in np.asarray(log.nodes)[np.unique(log.node)] if n != UNKNOWN)


@dataclass(frozen=True)
class LogAnalysis:
    """Every measurement of one log on one fleet (see :func:`analyse`); ``skipped``: what could not be measured, and why."""

    log: IncidentLog
    fleet: an.Fleet
    classified: pl.Classified
    interruptions: IncidentLog
    rate_all: an.RateEstimate
    rate: an.RateEstimate
    mode_shares: dict | None
    counts: np.ndarray
    dispersion: an.Dispersion | None
    negbin: an.NegBinFit | None
    worst: an.WorstShares | None
    lemon: an.LemonRemoval | None
    repeat: an.RepeatShare | None
    repeat_week: an.RepeatShare | None
    bursts: an.Bursts | None
    monthly: an.Monthly | None
    repairs: an.Repairs | None
    stages_min: dict
    skipped: dict = field(default_factory=dict)
    node_log: IncidentLog | None = None   # the faults the per-node analyses used (the interruptions, or the node events')
    node_events: IncidentLog | None = None
    unavailable: dict = field(default_factory=dict)  # {analysis: why the log cannot give it} (also in skipped)
    reschedule: Reschedule | None = None


def _try(skipped: dict, name: str, fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except ValueError as exc:
        skipped[name] = str(exc)
        return None


def analyse(log: IncidentLog, fleet: an.Fleet, *, node_events: IncidentLog | None = None, policy: pl.Policy | None = None,
            burst_window_min: float = 5.0, lemon_split: float = 0.5, lemon_threshold: int | None = None,
            month_days: float = 30.0, confidence: float = 0.95) -> LogAnalysis:
    """Every test of the course's model on ``log`` over ``fleet`` (notebook 13; the CLI's ``--log``).

    The rate, bursts and monthly rates come from ``log``'s interruptions; the per-node analyses
    (:data:`PER_NODE`) from ``node_events`` (a :func:`~course_lib.incidents.read_slurm_events` log, its
    faults classified by ``policy`` too) when given, else from the log itself unless it cannot say
    which node failed (:func:`node_attribution`: then each is ``unavailable``, with the reason). A
    sacct log's repair times are its node events' (sacct says when the job ran again, not when its
    node was back); its requeue chains give the :class:`Reschedule`.
    """
    if not isinstance(log, IncidentLog):
        raise ValueError(f"log must be an IncidentLog (got {type(log).__name__}); read one with course_lib.incidents.read_log")
    if node_events is not None and not isinstance(node_events, IncidentLog):
        raise ValueError(f"node_events must be an IncidentLog (got {type(node_events).__name__}); read one with read_slurm_events")
    why = node_attribution(log)
    if why is None:
        rate_all = an.rate(log, fleet, confidence)  # first: it checks the fleet holds every node of the log
    else:
        size = _job_size(log)
        if size > fleet.n_nodes:
            raise ValueError(f"fleet.n_nodes must be >= the {size:,} nodes the log's largest attempt ran on (got {fleet.n_nodes:,})")
        rate_all = an.rate(_one_node(log), fleet, confidence)
    cl = pl.classify(log, policy)
    intr = log.where(cl.interruption)
    skipped: dict = {}
    unavailable: dict = {}
    modes = cl.mode[cl.interruption]
    shares = _try(skipped, "mode shares", pl.mode_shares, modes) if modes.size else None
    if modes.size == 0:
        skipped["mode shares"] = "the log holds no interruption"
    if node_events is not None:
        node_log = node_events.where(pl.classify(node_events, policy).interruption)
        seen = len(np.unique(node_log.node)) if len(node_log) else 0
        if seen > fleet.n_nodes:
            raise ValueError(f"fleet.n_nodes must be >= the {seen:,} distinct nodes in the node events (got {fleet.n_nodes:,})")
    elif why is not None:
        node_log = None
        unavailable.update(dict.fromkeys(PER_NODE, why))
    else:
        node_log = intr
        if log.format == "sacct":
            unavailable["repair times"] = ("sacct says when the job ran again, not when its node was back: repair times need "
                                           "the node events (sacctmgr show event: --events FILE)")
    disp = nb = worst = lemon = repeat = week = repairs = counts = None
    if node_log is not None:
        counts = an.node_counts(node_log, fleet.n_nodes)
        disp = _try(skipped, "dispersion", an.dispersion_test, counts)
        nb = _try(skipped, "negative binomial", an.fit_negative_binomial, counts, confidence) if disp else None
        worst = _try(skipped, "worst nodes", an.worst_node_shares, counts, fit=nb) if disp else None
        lemon = _try(skipped, "lemon removal", an.lemon_removal, node_log, fleet.n_nodes, lemon_split, lemon_threshold,
                     confidence=confidence) if len(node_log) else None
        repeat = _try(skipped, "repeat faults", an.repeat_fault_share, node_log, fleet.n_nodes, None, confidence)
        week = _try(skipped, "repeat faults within 7 days", an.repeat_fault_share, node_log, fleet.n_nodes, 7.0, confidence)
        if "repair times" not in unavailable:
            repairs = _try(skipped, "repair times", an.repair_times, node_log, confidence)
    skipped.update({name: f"not available: {reason}" for name, reason in unavailable.items()})
    bursts = None if node_log is None else _try(skipped, "bursts", an.bursts, node_log, burst_window_min, confidence=confidence)
    monthly = _try(skipped, "monthly rates", an.monthly_rates, intr, fleet, month_days, confidence)
    resched = _try(skipped, "reschedule", reschedule_times, log) if log.format == "sacct" else None
    rate = an.rate(intr if why is None else _one_node(intr), fleet, confidence)
    return LogAnalysis(log, fleet, cl, intr, rate_all, rate, shares, counts, disp, nb, worst, lemon, repeat, week, bursts, monthly,
                       repairs, stage_minutes(log), skipped, node_log, node_events, unavailable, resched)


def scenario_for_log(rate_per_gpu_day: float, n_gpus: int, base=None, stages_min: dict | None = None):
    """The course's :class:`~course_lib.scenario.Scenario` for a job of ``n_gpus`` at a log's rate.

    The log's per-GPU-day rate replaces the question's; the restart stages the log measured
    (``stages_min``: detect, reschedule, reload in minutes, NaN where it has none) replace the
    sourced ones; everything else is ``base``'s (default: the course's).
    """
    from ..scenario import Scenario

    s = Scenario() if base is None else base
    changes = {"n_gpus": check_int_positive("n_gpus", n_gpus), "rate_per_gpu_day": rate_per_gpu_day}
    for stage, field_name in (("detect", "detect_min"), ("reschedule", "reschedule_min"), ("reload", "reload_min")):
        v = (stages_min or {}).get(stage, math.nan)
        if v is not None and math.isfinite(v):
            changes[field_name] = v
    return s.replace(**changes)


@dataclass(frozen=True)
class LogAnswer:
    """The course's answer for a job on the log's fleet, at the log's rate (see :func:`answer_for_log`)."""

    analysis: LogAnalysis
    job_gpus: int
    fleet_answer: object       # course_lib.answer.Answer at the fleet's GPUs
    job_answer: object         # ... at job_gpus
    job_low: object            # ... at the low end of the rate's interval
    job_high: object           # ... at its high end
    lemon_after: object | None  # the job's after-levers day with the measured lemon factor (RestartBudget)
    log_modes_answer: object | None  # the job's answer with the log's mode shares (the course's mapping)
    spare_quantile: float
    job_nodes: int
    spares_poisson: int | None
    spares_replay: int | None
    spare_cost_min_per_day: float | None
    elastic_cost_min_per_day: float | None
    unavailable: dict = field(default_factory=dict)  # {answer part: why not} (the spare pool, the lemon lever)

    def rows(self) -> list:
        """The answer as table rows (the CLI prints them; ``--json`` gives the same keys).

        An analysis the log cannot give (:attr:`LogAnalysis.unavailable`, :attr:`unavailable`) is one row
        whose value reads "not available" (NaN; its reason in :meth:`as_dict` and the report).
        """
        return self._rows()[0]

    def _rows(self) -> tuple:
        from ..answer import AnswerRow
        from ..failures import log_rates

        a = self.analysis
        R = lambda *args: rows.append(AnswerRow(*args))  # noqa: E731
        rows: list = []
        reasons: dict = {}

        def NA(key, label, reason):  # noqa: N802
            rows.append(AnswerRow(key, label, math.nan, "", text="not available"))
            reasons[key] = reason

        gone = {**a.unavailable, **self.unavailable}
        rep = a.log.report
        R("log_rows_read", "log rows read", rep.rows_read, "rows", ",.0f")
        R("log_rows_used", "log rows used", rep.rows_used, "rows", ",.0f")
        R("log_rows_ignored", "log rows ignored (not incidents by design)", rep.rows_ignored, "rows", ",.0f")
        R("log_rows_rejected", "log rows rejected", rep.rows_rejected, "rows", ",.0f")
        R("window_days", "days the log covers", a.log.days, "days", ".1f")
        R("fleet_nodes", "nodes in the fleet (an input: with or without a fault)", a.fleet.n_nodes, "nodes", ",.0f")
        if "nodes with a fault" in gone:
            NA("nodes_with_fault", "nodes with a fault in the log", gone["nodes with a fault"])
        elif a.node_events is not None:
            R("nodes_with_fault", "nodes with a fault in the node events", int(len(np.unique(a.node_log.node))) if len(a.node_log) else 0,
              "nodes", ",.0f")
        else:
            R("nodes_with_fault", "nodes with a fault in the log", int(len(np.unique(a.log.node))) if len(a.log) else 0, "nodes", ",.0f")
        R("faults", "faults in the log", a.rate_all.count, "faults", ",.0f")
        for sh in an.shares(a.log.cause_part("level"), a.rate.confidence) if len(a.log) else ():
            slug = "".join(ch if ch.isalnum() else "_" for ch in sh.name.lower())
            R(f"share_{slug}", f"  {sh.name}, share of the faults ({100 * a.rate.confidence:g} % interval {100 * sh.low:.1f}-{100 * sh.high:.1f} %)",
              100 * sh.share, "%", ".1f")
        R("interruptions", "of which job interruptions (the course's classes)", a.rate.count, "faults", ",.0f")
        R("rate_all_per_gpu_day", "fault rate per GPU, every fault", a.rate_all.rate_per_gpu_day, "per GPU-day", ".3e")
        R("rate_per_gpu_day", "interruption rate per GPU", a.rate.rate_per_gpu_day, "per GPU-day", ".3e")
        R("rate_low", f"  {100 * a.rate.confidence:g} % interval, low (exact Poisson)", a.rate.low, "per GPU-day", ".3e")
        R("rate_high", f"  {100 * a.rate.confidence:g} % interval, high", a.rate.high, "per GPU-day", ".3e")
        llama = next((r for r in log_rates() if r.run == "Llama 3 405B"), None)
        if llama is not None:
            R("rate_llama3", "  beside: Llama 3 405B's unexpected interruptions", llama.rate_low, "per GPU-day", ".3e")
        if a.reschedule is not None:
            rs = a.reschedule
            R("reschedule_count", "requeues timed by the scheduler's accounting (End of the failed attempt to Start of the next)",
              rs.count, "requeues", ",.0f")
            R("reschedule_median_s", "  reschedule, measured: median", rs.median_s, "s", ".1f")
            R("reschedule_p10_s", "  ... 10th percentile", rs.quantile_s(0.1), "s", ".1f")
            R("reschedule_p90_s", "  ... 90th percentile", rs.quantile_s(0.9), "s", ".1f")
            R("reschedule_min_s", "  ... shortest", rs.min_s, "s", ".1f")
            R("reschedule_max_s", "  ... longest", rs.max_s, "s", ".1f")
            R("reschedule_open", "  interruptions not rescheduled before the log ends", rs.open, "interruptions", ",.0f")
            scen = getattr(self.job_answer, "scenario", None)
            if scen is not None:
                R("reschedule_assumed_min", "  the answer's reschedule stage (the course's, assumed: it adds the job's start-up)",
                  scen.reschedule_min, "min", ".2f")
        if "dispersion" in gone:
            NA("dispersion_ratio", "faults per node: variance / mean (Poisson: 1)", gone["dispersion"])
        if "negative binomial" in gone:
            NA("negbin_shape", "gamma shape k of the node rates (negative binomial fit)", gone["negative binomial"])
        if "worst nodes" in gone:
            NA("worst_nodes_share", "share of interruptions on the worst nodes", gone["worst nodes"])
        if "lemon removal" in gone:
            NA("lemon_factor", "lemons: rate factor, out of sample (second half)", gone["lemon removal"])
        if "repeat faults" in gone:
            NA("repeat_share", "interruptions on a node that had one before", gone["repeat faults"])
        if "repeat faults within 7 days" in gone:
            NA("repeat_week_share", "  ... within 7 days of the node's previous one", gone["repeat faults within 7 days"])
        if a.dispersion is not None:
            d = a.dispersion
            R("dispersion_ratio", "faults per node: variance / mean (Poisson: 1)", d.ratio, "x", ".2f")
            R("dispersion_p", "  p-value of identical Poisson nodes (index of dispersion)", d.p_value, "", ".2g")
            R("zero_nodes", "  nodes with no interruption, observed", d.zero_nodes, "nodes", ",.0f")
            R("zero_nodes_poisson", "  ... expected of identical Poisson nodes", d.zero_expected, "nodes", ",.1f")
        if a.negbin is not None and math.isfinite(a.negbin.shape):
            R("negbin_shape", "gamma shape k of the node rates (negative binomial fit)", a.negbin.shape, "", ".3g")
            R("negbin_shape_low", "  interval, low", a.negbin.shape_low, "", ".3g")
            R("negbin_shape_high", "  interval, high", a.negbin.shape_high, "", ".3g")
            R("node_rate_cv", "  node rates' coefficient of variation, 1 / sqrt(k)", a.negbin.rate_cv, "", ".2f")
        if a.worst is not None:
            for f, n, o, p in zip(a.worst.fractions, a.worst.nodes, a.worst.observed, a.worst.poisson):
                R(f"worst_{round(100 * f)}pct_share", f"share of interruptions on the worst {100 * f:g} % of nodes ({n})", 100 * o, "%", ".1f")
                R(f"worst_{round(100 * f)}pct_poisson", "  ... if the nodes were identical (Poisson)", 100 * p, "%", ".1f")
        if a.lemon is not None:
            lm = a.lemon
            R("lemon_threshold", "lemons: interruptions in the first half that flag a node", lm.threshold, "faults", ".0f")
            R("lemon_removed", "  nodes removed", lm.n_removed, "nodes", ",.0f")
            R("lemon_capacity_removed", "  capacity removed", 100 * lm.capacity_removed, "% of the nodes", ".1f")
            R("lemon_factor", "  rate factor, out of sample (second half)", lm.factor, "x", ".3f")
            R("lemon_factor_low", "  interval, low", lm.factor_low, "x", ".3f")
            R("lemon_factor_high", "  interval, high", lm.factor_high, "x", ".3f")
        if a.repeat is not None:
            R("repeat_share", "interruptions on a node that had one before", 100 * a.repeat.share, "%", ".1f")
            R("repeat_share_poisson", "  ... if the nodes were identical", 100 * a.repeat.poisson_share, "%", ".1f")
        if a.repeat_week is not None:
            R("repeat_week_share", "  ... within 7 days of the node's previous one", 100 * a.repeat_week.share, "%", ".1f")
            R("repeat_week_poisson", "  ... within 7 days, if identical", 100 * a.repeat_week.poisson_share, "%", ".1f")
        if a.bursts is not None:
            b = a.bursts
            R("gap_cv", "inter-arrival CV across the fleet (Poisson: 1)", b.gap_cv, "", ".2f")
            R("burst_share", f"interruptions within {b.window_min:g} min of one on another node", 100 * b.coincident_share, "%", ".1f")
            R("burst_share_chance", "  ... by chance, for independent faults", 100 * b.chance_share, "%", ".2f")
            R("p_day_observed", f"days with {b.at_least} or more interruptions, observed", 100 * b.p_at_least_observed, "% of days", ".1f")
            R("p_day_poisson", "  ... Poisson at the same mean", 100 * b.p_at_least_poisson, "% of days", ".1f")
        if a.monthly is not None:
            m = a.monthly
            R("first_month_ratio", "first 30 days' rate / the rest's", m.first_ratio, "x", ".2f")
            R("monthly_p", "  p-value of one constant rate over the 30-day periods", m.p_value, "", ".2g")
        if "bursts" in gone:
            NA("burst_share", "interruptions within minutes of one on another node", gone["bursts"])
        if "repair times" in gone:
            NA("repair_median_h", "repair time of an interrupted node, median", gone["repair times"])
        if "spare pool" in gone:
            NA("spares_poisson", f"spare pool: spares for a free one with {100 * self.spare_quantile:g} % probability", gone["spare pool"])
        if a.repairs is not None:
            r = a.repairs
            R("repair_median_h", "repair time of an interrupted node, median", 24 * r.median_days, "h", ".1f")
            R("repair_p90_h", "repair time, 90th percentile", 24 * r.p90_days, "h", ".0f")
            R("repair_mean_d", "repair time, mean", r.mean_days, "days", ".2f")
            R("repair_censored", "  repairs still open at the end of the log", r.censored, "faults", ",.0f")
        if self.spares_poisson is not None:
            R("spare_job_nodes", "spare pool: nodes of the job", self.job_nodes, "nodes", ",.0f")
            R("spares_poisson", f"  spares for a free one with {100 * self.spare_quantile:g} % probability (Poisson)", self.spares_poisson, "nodes", ",.0f")
            if self.spares_replay is not None:
                R("spares_replay", "  ... by replaying the log", self.spares_replay, "nodes", ",.0f")
            R("spare_cost_min_per_day", "  idle spares, as lost capacity", self.spare_cost_min_per_day, "min/day", ".1f")
            R("elastic_cost_min_per_day", "  elastic instead (a replica out until repair)", self.elastic_cost_min_per_day, "min/day", ".1f")
        for tag, ans, label in (("fleet", self.fleet_answer, f"the fleet, {self.fleet_answer.n_gpus:,} GPUs"),
                                ("job", self.job_answer, f"a {self.job_gpus:,}-GPU job")):
            R(f"{tag}_gpus", f"{label}: GPUs", ans.n_gpus, "GPUs", ",.0f")
            R(f"{tag}_failures_per_day", "  interruptions per day", ans.failures_per_day, "per day", ".3g")
            R(f"{tag}_baseline_pct", "  baseline loss, restarts + writes", 100 * ans.baseline.fraction_of_day, "% of the day", ".2f")
            R(f"{tag}_after_levers_pct", "  loss after the levers", 100 * ans.after.fraction_of_day, "% of the day", ".3f")
            R(f"{tag}_floor_pct", "  floor (its named terms, notebook 08)", 100 * ans.after.floor_fraction, "% of the day", ".3f")
        R("job_floor_low_pct", "  floor at the rate's interval, low", 100 * self.job_low.after.floor_fraction, "% of the day", ".3f")
        R("job_floor_high_pct", "  floor at the rate's interval, high", 100 * self.job_high.after.floor_fraction, "% of the day", ".3f")
        if self.lemon_after is not None:
            R("job_floor_lemon_pct", "  floor with the measured lemon removal (its factor clamped at 1)",
              100 * self.lemon_after.floor_fraction, "% of the day", ".3f")
        elif "lemon lever" in gone:
            NA("job_floor_lemon_pct", "  floor with the measured lemon removal", gone["lemon lever"])
        if self.log_modes_answer is not None:
            R("job_floor_log_modes_pct", "  floor with the log's mode shares (the course's mapping)",
              100 * self.log_modes_answer.after.floor_fraction, "% of the day", ".3f")
        return rows, reasons

    def table(self) -> str:
        rows = [(r.label, r.formatted(), r.unit) for r in self.rows()]
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        return "\n".join(f"{a.ljust(w0)}  {b.rjust(w1)}  {c}".rstrip() for a, b, c in rows)

    def as_dict(self) -> dict:
        rows, reasons = self._rows()
        out = {r.key: ({"label": r.label.strip(), "value": r.value, "unit": r.unit} if r.key not in reasons else
                       {"label": r.label.strip(), "value": None, "unit": r.unit, "not_available": reasons[r.key]}) for r in rows}
        out["report"] = self.analysis.log.report.as_dict()
        out["skipped"] = dict(self.analysis.skipped)
        out["text"] = self.text
        return out

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=1, default=float)

    @property
    def text(self) -> str:
        """The log's story in one paragraph, every number computed."""
        a, j = self.analysis, self.job_answer
        parts = [f"{a.rate.count:,} of the log's {a.rate_all.count:,} faults interrupt a job (the course's classes); on "
                 f"{a.fleet.n_nodes:,} nodes x {a.fleet.gpus_per_node} GPUs over {a.log.days:.0f} days that is "
                 f"{a.rate.rate_per_gpu_day:.2e} per GPU-day ({100 * a.rate.confidence:g} % interval {a.rate.low:.2e} to "
                 f"{a.rate.high:.2e})."]
        if a.reschedule is not None:
            rs, scen = a.reschedule, getattr(j, "scenario", None)
            parts.append(f"Slurm's accounting times the reschedule, End of the failed attempt to Start of the next: "
                         f"{rs.text()}, measured" + (f", {rs.open:,} more not rescheduled before the log ends" if rs.open else "")
                         + ". That is the scheduler's share only (the job's own start-up comes after its Start)"
                         + (f": the answer keeps the course's reschedule stage of {scen.reschedule_min:.2f} min (assumed)."
                            if scen is not None else "."))
        if "dispersion" in a.unavailable:
            parts.append(f"Per-node analyses are not available: {a.unavailable['dispersion']}.")
        if a.dispersion is not None and a.worst is not None:
            parts.append(("The nodes are not identical: their" if a.dispersion.p_value < 0.05 else "Nothing here says the nodes differ: their")
                         + f" counts have {a.dispersion.ratio:.1f} times the Poisson variance "
                         f"(p = {a.dispersion.p_value:.1g}) and the worst {100 * a.worst.fractions[-1]:g} % of nodes carry "
                         f"{a.worst.observed[-1]:.0%} of the interruptions ({a.worst.poisson[-1]:.0%} if identical).")
        if a.lemon is not None and a.lemon.n_removed == 0:
            parts.append(f"No node had {a.lemon.threshold} or more interruptions in the first half: no lemon to remove.")
        elif a.lemon is not None:
            lm = a.lemon
            parts.append(f"Yet removing the {lm.n_removed} nodes with {lm.threshold} or more in the first half "
                         f"({lm.capacity_removed:.1%} of the capacity) changes the second half's rate by x {lm.factor:.2f} "
                         f"(interval {lm.factor_low:.2f} to {lm.factor_high:.2f}): out of sample, past lemons are not the future's"
                         + (", so the lemon lever is clamped at x 1.00: removal buys nothing here." if lm.factor >= 1 else
                            f"; {self.unavailable['lemon lever']}." if "lemon lever" in self.unavailable else "."))
        if a.bursts is not None:
            b = a.bursts
            together = b.gap_cv > 1 + 2 * b.gap_cv_sd or b.coincident_low > b.chance_share  # beyond Poisson's spread
            parts.append(("Faults are not independent: the" if together else "Nothing here shows faults coming together: the")
                         + f" inter-arrival CV is {a.bursts.gap_cv:.2f} (Poisson 1) and "
                         f"{a.bursts.coincident_share:.0%} come within {a.bursts.window_min:g} min of one on another node "
                         f"({a.bursts.chance_share:.1%} by chance).")
        if a.monthly is not None:
            parts.append(f"Nor stationary: one rate over the 30-day periods has p = {a.monthly.p_value:.1g}." if a.monthly.p_value < 0.05
                         else f"One rate fits the 30-day periods (p = {a.monthly.p_value:.1g}).")
        if a.repairs is not None and self.spares_poisson is not None:
            parts.append(f"A repair takes {24 * a.repairs.median_days:.0f} h at the median and {a.repairs.p90_days:.1f} days at "
                         f"the 90th percentile, so a {self.job_nodes:,}-node job needs {self.spares_poisson} spares "
                         f"({self.spares_replay} replaying the log) to find one free {100 * self.spare_quantile:g} % of the time.")
        parts.append(f"At this rate a {self.job_gpus:,}-GPU job stops {j.failures_per_day:.2f} times a day; after the levers it "
                     f"loses {j.after.fraction_of_day:.3%} of the day, of which the floor is {j.after.floor_fraction:.3%} "
                     f"({self.job_low.after.floor_fraction:.3%} to {self.job_high.after.floor_fraction:.3%} over the rate's "
                     f"interval).")
        return " ".join(parts)


def answer_for_log(log: IncidentLog, fleet: an.Fleet, job_gpus: int | None = None, *, base=None,
                   spare_quantile: float = 0.99, replay_draws: int = 20, seed: int = 0, analysis: LogAnalysis | None = None,
                   **analyse_options) -> LogAnswer:
    """The log measured (:func:`analyse`) and the course's answer for the fleet and for a job on it.

    job_gpus: the job's GPUs (default: the course's 4,096). base: the Scenario to start from
    (default the course's; its failure-mode inputs are ``base.modes``). The measured stage times of a
    lab log replace the sourced stages.
    """
    from .. import levers as lv
    from ..answer import answer
    from ..scenario import Scenario

    a = analyse(log, fleet, **analyse_options) if analysis is None else analysis
    if a.rate.count == 0:
        raise ValueError("the log holds no job interruption: a rate of zero has no restarts to budget (its upper bound: "
                         f"{a.rate.high:.3e} per GPU-day)")
    base = Scenario() if base is None else base
    job = check_int_positive("job_gpus", base.n_gpus if job_gpus is None else job_gpus)
    mk = lambda gpus, r: answer(scenario_for_log(r, gpus, base, a.stages_min), spread_draws=0)  # noqa: E731
    fleet_ans = mk(fleet.gpus, a.rate.rate_per_gpu_day)
    job_ans = mk(job, a.rate.rate_per_gpu_day)
    low = mk(job, a.rate.low) if a.rate.low > 0 else job_ans
    high = mk(job, a.rate.high)
    lemon_after = None
    gone: dict = {}
    if "lemon removal" in a.unavailable:
        gone["lemon lever"] = a.unavailable["lemon removal"]
    elif a.lemon is not None and a.lemon.factor == 0:
        gone["lemon lever"] = (f"a measured factor of x 0 (the removal took every later interruption; interval up to x "
                               f"{a.lemon.factor_high:.2f}) is not applied: a lever of x 0 would budget no restart at all")
    elif a.lemon is not None:  # a factor above 1 (removal did not lower the rate out of sample) is clamped at 1: no gain
        lever = lv.RateLever("lemon-node removal, measured", lv.clamp_lemon_factor(a.lemon.factor),
                             f"nodes with {a.lemon.threshold}+ interruptions in the log's first half removed", a.log.source)
        lemon_after = lever(job_ans.after)
    log_modes = None
    if a.mode_shares is not None:
        log_modes = answer(scenario_for_log(a.rate.rate_per_gpu_day, job, base, a.stages_min).replace(
            shares=tuple(a.mode_shares[m] for m in pl.MODES)), spread_draws=0)
    q = check_open_unit("spare_quantile", spare_quantile)
    job_nodes = math.ceil(job / fleet.gpus_per_node)
    pois = replay = cost = elastic = None
    if "repair times" in a.unavailable:
        gone["spare pool"] = f"it needs the nodes' repair times: {a.unavailable['repair times']}"
    if a.repairs is not None and math.isfinite(a.repairs.mean_days) and a.repairs.mean_days > 0:
        lam = a.rate.rate_per_node_day * job_nodes
        pois = an.spare_pool(lam, a.repairs.mean_days, q)
        replay = an.replay_spares(a.node_log, job_nodes, fleet.n_nodes, q, replay_draws, seed)[0]
        cost = sp.spare_cost_minutes_per_day(pois * fleet.gpus_per_node, job)
        elastic = sp.elastic_cost_minutes_per_day(lam, min(base.modes.replica_gpus, job), job, 1440.0 * a.repairs.mean_days)
    return LogAnswer(a, job, fleet_ans, job_ans, low, high, lemon_after, log_modes, q, job_nodes, pois, replay, cost, elastic, gone)
