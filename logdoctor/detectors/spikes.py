"""Loss spikes (LD101), grad-norm spikes with them (LD102) and frequent/regular spikes (LD103)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors import robust
from logdoctor.detectors.base import TOO_FEW_ROWS, Analyzer, Detection
from logdoctor.detectors.gradspikes import grad_spikes_alone
from logdoctor.detectors.nanprecursor import MIN_RATIO, nan_precursor
from logdoctor.detectors.robust import FloatArray, IntArray, Series
from logdoctor.detectors.shortjump import MIN_RISE, short_jump
from logdoctor.detectors.spikefind import Spikes, find_spikes, upward_z
from logdoctor.detectors.spikenull import chance_coincidence_p, null_count_limit, run_p_value
from logdoctor.model import GRAD_NORM, LOSS, LOSS_MAX, Finding, Run, Severity
from logdoctor.options import Option, fraction, int_opt, positive

#: Frequent spikes whose median height above the local level is below this share of the run's
#: starting loss are information, not a warning: healthy real runs that converge near zero
#: (t5_finetune_per_batch_memorize, hf_trainer_state_whisper_ja_5k, msswift_logging_dup_lines in
#: ../shared/reallogs) end at 0.02-2% of their starting loss, where a 0.002 blip is a large ratio.
SPIKE_FLOOR = 0.01


def interval_regularity(times: IntArray, n_sim: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Are event times more regular than a Poisson process?

    Statistic: coefficient of variation (CV) of the inter-event intervals (about 1 for Poisson
    events, 0 for a clock). Null: the same number of events placed uniformly at random between
    the first and last event; p-value = P(CV_null <= CV_observed), by seeded simulation.

    Returns:
        (cv, p_value, median interval in steps); (nan, 1, nan) with fewer than 4 events.
    """
    if times.size < 4:
        return float("nan"), 1.0, float("nan")
    d = np.diff(np.sort(times)).astype(np.float64)
    cv = float(d.std() / d.mean()) if d.mean() > 0 else 0.0
    k = times.size - 2
    u = np.sort(np.random.default_rng(seed).uniform(size=(n_sim, k)), axis=1)
    edges = np.concatenate([np.zeros((n_sim, 1)), u, np.ones((n_sim, 1))], axis=1)
    dd = np.diff(edges, axis=1)
    cv_null = dd.std(axis=1) / dd.mean(axis=1)
    p = float((1 + np.count_nonzero(cv_null <= cv)) / (1 + n_sim))
    return cv, p, float(np.median(d))


def _confidence(z: float, threshold: float) -> float:
    """0.5 at the threshold, rising towards 0.99 as z grows."""
    return float(min(0.99, 0.5 + 0.5 * max(0.0, 1.0 - threshold / max(z, 1e-9))))


def times(ratio: float) -> str:
    """A ratio with the digits it carries: ``1.61x``, ``218x`` (``773.80x`` over a median printed
    as 0.0005 claims four digits the median does not have)."""
    return f"{ratio:.3g}x" if ratio < 1000 else f"{ratio:,.0f}x"


def precursor_spike(run: Run) -> Finding | None:
    """LD101 for the rise that came before the first non-finite loss (nanprecursor.py), None without one."""
    p = nan_precursor(run)
    if p is None:
        return None
    what = "the loss" if p.column == LOSS else f"the loss part `{p.column}`"
    return codes.finding(
        "LD101",
        f"Loss spike before the loss turned NaN/inf (step {p.nonfinite_step}): at step {p.step} {what} rose to "
        f"{p.value:.4g}, {times(p.ratio)} the highest it had been before ({p.highest_before:.4g}); the blow-up "
        "began while the loss was still a number.",
        confidence=0.75,
        first_step=p.step,
        last_step=p.step,
        line=p.line or None,
        evidence={
            "column": p.column,
            "step": p.step,
            "value": p.value,
            "highest_before": p.highest_before,
            "ratio": round(p.ratio, 4),
            "min_ratio": MIN_RATIO,
            "nonfinite_step": p.nonfinite_step,
        },
    )


def short_spike(s: Series) -> Finding | None:
    """LD101 in a run too short for the rolling statistics: a row that rose ``MIN_RISE`` times the first
    loss above the lowest loss before it, and the loss came back down by the last row (a jump that
    holds to the end is divergence's, LD002)."""
    j = short_jump(s)
    if j is None or j.held:
        return None
    v, p, lo = s.values, j.row, j.low_row
    return codes.finding(
        "LD101",
        f"Loss spike at step {s.steps[p]}: {v[p]:.4g}, {times(float(v[p] / v[lo]))} the {v[lo]:.4g} of step "
        f"{s.steps[lo]} (a rise of {times(j.rise)[:-1]} times the first loss, {v[0]:.4g}); the loss came back to "
        f"{v[-1]:.4g} by step {s.steps[-1]}. Judged on all {s.n} rows of a run too short for the rolling statistics.",
        confidence=0.7,
        first_step=int(s.steps[p]),
        last_step=int(s.steps[p]),
        line=int(s.lines[p]) or None,
        evidence={
            "step": int(s.steps[p]),
            "value": float(v[p]),
            "low_before": float(v[lo]),
            "low_step": int(s.steps[lo]),
            "first_loss": float(v[0]),
            "rise_over_first": round(j.rise, 4),
            "min_rise": MIN_RISE,
            "rows": s.n,
        },
    )


class SpikeDetector(Analyzer):
    """Points far above the local level of the loss, with grad-norm context and regularity."""

    name = "spikes"
    #: every keyword of ``__init__`` with its type and bounds (checked where configured)
    options: ClassVar[tuple[Option, ...]] = (
        positive("z_threshold"),
        positive("min_ratio"),
        int_opt("window", 3),
        int_opt("scale_window", 3),
        int_opt("max_findings", 1),
        int_opt("frequent_count", 1),
        positive("grad_z_threshold"),
        int_opt("grad_tolerance", 0),
        fraction("alpha", high_open=True),
        positive("grad_alone_z"),
        positive("grad_alone_ratio"),
        positive("null_df"),
        fraction("null_alpha", high_open=True),
    )

    def __init__(
        self,
        *,
        z_threshold: float = 5.0,
        min_ratio: float = 1.5,
        window: int = 31,
        scale_window: int = 301,
        max_findings: int = 10,
        frequent_count: int = 5,
        grad_z_threshold: float = 4.0,
        grad_tolerance: int = 2,
        alpha: float = 0.01,
        grad_alone_z: float = 8.0,
        grad_alone_ratio: float = 10.0,
        null_df: float = 3.0,
        null_alpha: float = 0.01,
    ) -> None:
        self.null_df = null_df
        self.null_alpha = null_alpha
        self.grad_alone_z = grad_alone_z
        self.grad_alone_ratio = grad_alone_ratio
        self.z_threshold = z_threshold
        self.min_ratio = min_ratio
        self.window = window
        self.scale_window = scale_window
        self.max_findings = max_findings
        self.frequent_count = frequent_count
        self.grad_z_threshold = grad_z_threshold
        self.grad_tolerance = grad_tolerance
        self.alpha = alpha

    def _find(self, s: Series) -> Spikes:
        return find_spikes(
            s,
            z_threshold=self.z_threshold,
            min_ratio=self.min_ratio,
            window=self.window,
            scale_window=self.scale_window,
        )

    def analyze(self, run: Run) -> Detection:
        """Find loss spikes; report the strongest individually and the rest as a summary.

        In a run reduced to per-block means (logdoctor.ingest.reduce) spikes are sought in the blocks'
        largest losses, where a one-step spike is not averaged away.
        """
        det = self._analyze(run)
        pre = precursor_spike(run)
        if pre is None or any(
            f.code == "LD101" and (f.first_step or 0) <= (pre.first_step or 0) <= (f.last_step or 0)
            for f in det.findings
        ):
            return det
        return Detection((*det.findings, pre), det.artifacts)

    def _analyze(self, run: Run) -> Detection:
        s = robust.series(run, LOSS_MAX if LOSS_MAX in run.table.columns else LOSS)
        if s.n < 8:
            short = short_spike(s)
            return Detection((short,)) if short else Detection(skipped=TOO_FEW_ROWS)
        sp = self._find(s)
        alone = grad_spikes_alone(
            run,
            s,
            sp.peak,
            z_threshold=self.grad_alone_z,
            min_ratio=self.grad_alone_ratio,
            window=self.window,
            scale_window=self.scale_window,
            tolerance=self.grad_tolerance,
        )
        if sp.peak.size == 0:
            return Detection(tuple(alone))
        grad_z = self._grad_z(run, s, sp)
        st = run.meta.structure
        undone = st is not None and LOSS in st.running_mean
        findings = alone + self._individual(s, sp, grad_z, undone)
        findings += self._grad_finding(run, s, sp, grad_z)
        findings += self._summary(run, s, sp)
        return Detection(tuple(findings), {"spike_steps": tuple(int(x) for x in s.steps[sp.peak])})

    def _grad_z(self, run: Run, s: Series, sp: Spikes) -> FloatArray | None:
        """Largest grad-norm robust z within ``grad_tolerance`` rows of each loss-spike peak."""
        g = robust.series(run, GRAD_NORM)
        if g.n < 8:
            return None
        gz, _ = upward_z(g, self.window, self.scale_window)
        pos = np.clip(np.searchsorted(g.steps, s.steps[sp.peak]), 0, g.n - 1)
        offs = np.arange(-self.grad_tolerance, self.grad_tolerance + 1)
        idx = np.clip(pos[:, None] + offs[None, :], 0, g.n - 1)
        return np.asarray(gz[idx].max(axis=1), dtype=np.float64)

    def _grad_rate(self, run: Run, s: Series, sp: Spikes) -> float:
        """Fraction of grad-norm rows at or above the grad z threshold away from the loss spikes (the
        run's own background rate: the coincidences under test do not inflate their own null)."""
        g = robust.series(run, GRAD_NORM)
        if not g.n:
            return 0.0
        gz, _ = upward_z(g, self.window, self.scale_window)
        near = np.zeros(g.n, dtype=bool)
        pos = np.clip(np.searchsorted(g.steps, s.steps[sp.peak]), 0, g.n - 1)
        for off in range(-self.grad_tolerance, self.grad_tolerance + 1):
            near[np.clip(pos + off, 0, g.n - 1)] = True
        away = gz[~near]
        return float(np.mean(away >= self.grad_z_threshold)) if away.size else 0.0

    def _individual(self, s: Series, sp: Spikes, grad_z: FloatArray | None, undone: bool = False) -> list[Finding]:
        """One LD101 per spike; ``undone``: the log prints a running mean, and the value named is the
        logged interval's own mean read back from it (said, since the log's line shows another number)."""
        own = " (that logged interval's own mean, undone from the running mean the log prints)" if undone else ""
        out: list[Finding] = []
        for i in np.argsort(-sp.z, kind="stable")[: self.max_findings]:
            p, a, b = int(sp.peak[i]), int(sp.start[i]), int(sp.end[i])
            ev: dict[str, float | int | str | bool | None] = {
                "step": int(s.steps[p]),
                "value": float(sp.value[i]),
                "local_median": float(sp.level[i]),
                "ratio": round(float(sp.ratio[i]), 4),
                "robust_z": round(float(sp.z[i]), 2),
                "width_rows": b - a + 1,
                "width_steps": int(s.steps[b] - s.steps[a] + 1),
                "rank": len(out) + 1,
                "n_spikes": int(sp.peak.size),
            }
            if grad_z is not None:
                ev["grad_norm_z"] = round(float(grad_z[i]), 2)
            p_null = run_p_value(float(sp.z[i]), s.n, self.null_df)
            ev["null_p_value"] = float(f"{p_null:.3g}")
            ev["null_df"] = self.null_df
            sev = {} if p_null <= self.null_alpha else {"severity": Severity.INFO}
            out.append(
                codes.finding(
                    "LD101",
                    # plain words first; robust z and its null are evidence (-v, JSON)
                    f"Loss spike at step {s.steps[p]}: {sp.value[i]:.4g}{own}, {times(float(sp.ratio[i]))} the local "
                    f"median of {sp.level[i]:.4g}" + (f", {b - a + 1} rows wide." if b > a else "."),
                    confidence=_confidence(float(sp.z[i]), self.z_threshold),
                    first_step=int(s.steps[a]),
                    last_step=int(s.steps[b]),
                    line=int(s.lines[a]) or None,
                    evidence=ev,
                    **sev,
                )
            )
        return out

    def _grad_finding(self, run: Run, s: Series, sp: Spikes, grad_z: FloatArray | None) -> list[Finding]:
        if grad_z is None:
            return []
        hit = grad_z >= self.grad_z_threshold
        rate = self._grad_rate(run, s, sp)
        p_chance = chance_coincidence_p(rate, 2 * self.grad_tolerance + 1, hit.size, int(hit.sum()))
        if hit.sum() < 2 or p_chance > self.null_alpha:
            return []  # one blip, or no more coincidences than the grad norm's own spikiness gives
        significant = np.array([run_p_value(float(z), s.n, self.null_df) <= self.null_alpha for z in sp.z])
        # a grad-norm blow-up beyond the grad norm's own heavy-tailed null counts as well: a loss
        # episode's rolling median follows it, so its loss z stays modest (docs/detectors.md, LD102)
        grad_p = np.array([run_p_value(float(z), s.n, self.null_df) for z in grad_z])
        if not (hit & (significant | (grad_p <= self.null_alpha))).any():
            return []  # grad-norm blips beside loss bumps within noise: not "optimisation instability"
        first = int(np.flatnonzero(hit)[0])
        frac = float(hit.mean())
        step = int(s.steps[sp.peak[first]])
        ev = {
            "n_loss_spikes": int(hit.size),
            "n_with_grad_spike": int(hit.sum()),
            "fraction_with_grad_spike": round(frac, 4),
            "max_grad_norm_z": round(float(grad_z.max()), 2),
            "first_step": step,
            "grad_z_threshold": self.grad_z_threshold,
            "chance_p_value": float(f"{p_chance:.3g}"),
            "grad_null_p_value": float(f"{grad_p[hit].min():.3g}"),
        }
        return [
            codes.finding(
                "LD102",
                f"{int(hit.sum())} of {hit.size} loss spike(s) coincide with a grad-norm spike (first at step {step}).",
                confidence=float(min(0.99, 0.5 + 0.5 * frac)),
                first_step=step,
                last_step=int(s.steps[sp.peak[np.flatnonzero(hit)[-1]]]),
                line=int(s.lines[sp.peak[first]]) or None,
                evidence=ev,
            )
        ]

    def _summary(self, run: Run, s: Series, sp: Spikes) -> list[Finding]:
        n = int(sp.peak.size)
        times = s.steps[sp.peak]
        cv, p, period = interval_regularity(times)
        regular = p < self.alpha
        limit = null_count_limit(s.n, self.z_threshold, self.null_df, self.null_alpha)
        if (n < self.frequent_count or n <= limit) and not (regular and n >= 4):
            return []
        span = max(1, int(s.steps[-1] - s.steps[0] + 1))
        spe = run.meta.steps_per_epoch
        ev: dict[str, float | int | str | bool | None] = {
            "n_spikes": n,
            "rate_per_1k_steps": round(1000.0 * n / span, 4),
            "interval_cv": round(cv, 4),
            "regularity_p_value": round(p, 6),
            "regular": bool(regular),
            "period": period if regular else None,
            "median_interval": period,
            "steps_per_epoch": spe,
            "epoch_ratio": round(period / spe, 4) if (spe and np.isfinite(period)) else None,
            "null_count_limit": limit,
        }
        # plain words first; the interval CV and its p-value are evidence (-v, JSON)
        what = f"regular in time, about every {period:.0f} steps" if regular else "irregular in time"
        start = float(np.median(s.values[: max(5, s.n // 20)]))
        height = float(np.median(sp.value - sp.level))
        ev["spike_height_vs_start"] = round(height / start, 5) if start > 0 else None
        floor = start > 0 and height < SPIKE_FLOOR * start
        note = (
            f" They sit at a loss of {float(np.median(sp.level)):.2g}, {height / start:.2%} of the starting "
            f"{start:.3g}: the noise of a converged loss, not instability."
            if floor
            else ""
        )
        return [
            codes.finding(
                "LD103",
                f"{n} loss spikes ({ev['rate_per_1k_steps']:.3g} per 1k steps), {what}.{note}",
                **({"severity": Severity.INFO} if floor else {}),
                confidence=float(min(0.99, 0.5 + 0.5 * (1 - p))) if regular else 0.6,
                first_step=int(times.min()),
                last_step=int(times.max()),
                evidence=ev,
            )
        ]
