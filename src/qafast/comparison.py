"""Comparing systems: many runs on the same queries, paired significance tests, tables, plots.

:func:`compare` encodes the qrels once, evaluates every run on the same queries with
:func:`qafast.evaluate`'s kernels, and tests the per-query differences; the
:class:`Comparison` it returns holds the per-query values, the means, the p-values and the
decisions, and writes them as a tidy DataFrame, Markdown, LaTeX (booktabs) or text.

Tests (two-sided, on the paired per-query differences):

- ``"student"``: paired Student's t-test (``scipy.stats.ttest_rel``);
- ``"wilcoxon"``: Wilcoxon signed-rank test with scipy's defaults (zeros dropped, no
  continuity correction; exact for at most 50 differences without zeros or ties, an exact
  sign-flip enumeration for at most 13 with them, the normal approximation otherwise);
- ``"fisher"``: Fisher's paired randomization test (sign flipping): every sign vector when
  2**n is at most ``n_resamples``, otherwise ``n_resamples`` seeded random ones;
- ``"bootstrap"``: Sakai's paired bootstrap test (resampling the differences shifted to mean
  0, and comparing t statistics);
- ``"tukey"``: Tukey's HSD over all runs (``scipy.stats.tukey_hsd``, as ranx computes it).

The t and normal tails and the signed-rank distribution are computed here; only Tukey's HSD
needs scipy (``pip install "qafast[stats]"``).

Several runs per system (seeds or folds). A system given as a list of runs is one row of
the comparison. With ``group="seeds"`` (the default) the runs are repeated runs of the same
system on the same queries (training seeds, say): each run is evaluated as
:func:`qafast.evaluate` would, then each query's value is the mean of the runs' values for
that query, and the tests pair these per-query means over queries as they pair single runs'
values. So the averaging over seeds comes first, and the tests and intervals are over
queries; the spread over seeds is reported beside them, as the standard deviation of the
runs' own means (``seed_std``). With ``group="folds"`` the runs hold disjoint sets of
queries (cross-validation folds) and are joined into one run of all their queries. A list
of lists nests the other kind: with ``group="seeds"``, each seed a list of its folds.

Each system's mean also has a confidence interval at level 1 - alpha, over queries
(``mean_ci_low``, ``mean_ci_high``): Student's t, or the percentile bootstrap of the mean
with the same seeded resamples of queries as the bootstrap test.
"""

from __future__ import annotations

import math
import os
import re
import string
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from . import _distributions as dist
from . import _kernels
from ._engine import check_options
from ._measure_parser import parse_measures, reads_subtopics
from ._measures import TEXT_MEASURES
from ._ranked import as_qrels
from ._run_sources import add_missing_queries, per_query_values
from ._summaries import column_summaries
from ._threads import closes_pools_on_interrupt, parts, resolve_workers, run_parts, steps
from .errors import InputError, InputTypeError, in_context

__all__ = ["Comparison", "compare", "plot_precision_recall", "to_frame"]

TESTS = {
    "student": "paired Student's t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "fisher": "Fisher's paired randomization test",
    "bootstrap": "paired bootstrap test",
    "tukey": "Tukey's HSD test",
}
_TEST_ALIASES = {"t": "student", "ttest": "student", "t-test": "student",
                 "randomization": "fisher", "permutation": "fisher"}
CORRECTIONS = {
    "none": "no correction",
    "bonferroni": "Bonferroni correction",
    "holm": "Holm correction",
    "holm-sidak": "Holm-Sidak correction",
    "bh": "Benjamini-Hochberg correction",
    "by": "Benjamini-Yekutieli correction",
}
_CORRECTION_ALIASES = {None: "none", "fdr_bh": "bh", "benjamini-hochberg": "bh",
                       "fdr_by": "by", "benjamini-yekutieli": "by",
                       "holm_sidak": "holm-sidak", "sidak-holm": "holm-sidak"}
GROUPS = {
    "seeds": "repeated runs on the same queries, averaged per query",
    "folds": "runs on disjoint queries, joined",
}
#: Two sums (or t statistics) closer than this fraction of their scale count as equal.
TIE_TOLERANCE = 1e-10
_SUPERSCRIPTS = dict(zip(string.ascii_lowercase, "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ𐞥ʳˢᵗᵘᵛʷˣʸᶻ"))


def _test_name(test) -> str:
    if not isinstance(test, str):
        raise InputTypeError(f"test must be a str, not {type(test).__name__}")
    name = _TEST_ALIASES.get(test.lower(), test.lower())
    if name not in TESTS:
        raise InputError(f"unknown test {test!r}; expected one of {', '.join(TESTS)}")
    return name


def _correction_name(correction) -> str:
    if correction is not None and not isinstance(correction, str):
        raise InputTypeError(f"correction must be a str, not {type(correction).__name__}")
    key = correction.lower() if isinstance(correction, str) else correction
    name = _CORRECTION_ALIASES.get(key, key)
    if name not in CORRECTIONS:
        raise InputError(f"unknown correction {correction!r}; expected one of "
                         f"{', '.join(CORRECTIONS)}")
    return name


def adjust_p_values(p_values, correction: str = "holm") -> np.ndarray:
    """Adjust the p-values of one family of tests for multiple testing.

    Parameters
    ----------
    p_values : array_like
        p-values, 1-D (one family) or 2-D (one family per column).
    correction : {"none", "bonferroni", "holm", "holm-sidak", "bh", "by"}
        ``"bh"`` is Benjamini-Hochberg, equal to ``scipy.stats.false_discovery_control``;
        ``"by"`` is Benjamini-Yekutieli, Benjamini-Hochberg's adjusted p-values times
        ``1 + 1/2 + ... + 1/m`` (capped at 1), which controls the false discovery rate
        under any dependence between the tests (statsmodels' ``"fdr_by"``, scipy's
        ``false_discovery_control(..., method="by")``).

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, same shape; a test is significant at level alpha when its
        adjusted p-value is at most alpha (for Holm this is the step-down procedure).

    Examples
    --------
    >>> from qafast.comparison import adjust_p_values
    >>> adjust_p_values([0.01, 0.04, 0.03], "holm").tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_p_values([0.5, 0.6, 0.1, 0.001], "bh").tolist()
    [0.6, 0.6, 0.2, 0.004]
    >>> [round(p, 6) for p in adjust_p_values([0.5, 0.6, 0.1, 0.001], "by").tolist()]
    [1.0, 1.0, 0.416667, 0.008333]
    """
    method = _correction_name(correction)
    p = np.array(p_values, dtype=np.float64)
    if p.ndim == 1:
        return _adjust_columns(p[:, None], method)[:, 0]
    if p.ndim != 2:
        raise InputError(f"p_values must be 1-D or 2-D, not {p.ndim}-D")
    return _adjust_columns(p, method)


def _adjust_columns(p: np.ndarray, method: str) -> np.ndarray:
    m = p.shape[0]
    if method == "none" or m <= 1:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    order = np.argsort(p, axis=0, kind="stable")
    ps = np.take_along_axis(p, order, axis=0)
    if method in ("bh", "by"):
        i = np.arange(1, m + 1, dtype=np.float64)[:, None]
        ps = ps * (m / i)
        if method == "by":
            ps = ps * math.fsum(1.0 / k for k in range(1, m + 1))
        ps = np.minimum.accumulate(ps[::-1], axis=0)[::-1]
        ps = np.minimum(ps, 1.0)
    else:
        k = np.arange(m, 0, -1, dtype=np.float64)[:, None]
        if method == "holm":
            ps = np.minimum(ps * k, 1.0)
        else:
            with np.errstate(divide="ignore"):  # p = 1: log1p(-1) = -inf, adjusted to 1
                ps = -np.expm1(k * np.log1p(-ps))
        ps = np.maximum.accumulate(ps, axis=0)
    out = np.empty_like(ps)
    np.put_along_axis(out, order, ps, axis=0)
    return out


def _average_ranks(values: np.ndarray):
    """Ranks 1..n of ``values`` with ties averaged, and the size of each tie group."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    first = np.cumsum(counts) - counts + 1
    return (first + (counts - 1) / 2.0)[inverse], counts


def _wilcoxon(d: np.ndarray) -> tuple[float, float]:
    """(statistic, two-sided p) as ``scipy.stats.wilcoxon(d)`` with its defaults."""
    n = len(d)
    nonzero = d[d != 0]
    count = len(nonzero)
    if count == 0:
        return 0.0, 1.0  # every difference is zero: nothing to test (scipy gives NaN)
    ranks, ties = _average_ranks(np.abs(nonzero))
    r_plus = float(ranks[nonzero > 0].sum())
    r_minus = float(ranks[nonzero < 0].sum())
    statistic = min(r_plus, r_minus)
    has_ties = bool((ties > 1).any())
    if n <= 50 and not has_ties and count == n:
        return statistic, dist.signed_rank_exact_two_sided(r_plus, n)
    if n <= 50 and n <= 13:
        # every sign vector of the non-zero differences; scipy's tolerance for equal sums
        bits = (np.arange(1 << count, dtype=np.int64)[:, None] >> np.arange(count)) & 1
        null = bits @ ranks
        gamma = abs(np.finfo(np.float64).eps * 100 * r_plus)
        less = np.count_nonzero(null <= r_plus + gamma) / len(null)
        greater = np.count_nonzero(null >= r_plus - gamma) / len(null)
        return statistic, float(min(1.0, 2.0 * min(less, greater)))
    c = float(count)
    mean = c * (c + 1.0) * 0.25
    var = c * (c + 1.0) * (2.0 * c + 1.0)
    tie_term = float(np.sum(ties.astype(np.float64) ** 3 - ties))
    se = math.sqrt((var - tie_term / 2) / 24)
    return statistic, dist.normal_two_sided((r_plus - mean) / se)


def _student(cols: np.ndarray):
    """Per row of ``cols`` (tests x queries): mean, sd (ddof 1), t and two-sided p."""
    n = cols.shape[1]
    mean = np.mean(cols, axis=1)
    sd = np.std(cols, axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / math.sqrt(n))
    p = np.array([1.0 if math.isnan(x) else dist.t_two_sided(x, n - 1) for x in t.tolist()])
    t = np.where(np.isnan(t), 0.0, t)
    return mean, sd, t, p


#: differences (queries x tests) a kernel call adds up at most, over its resamples: a few
#: milliseconds, between which an interrupt is seen
_PIECE = 1 << 23


def _resample_parts(total: int, workers: int, n: int, m: int, work) -> None:
    """``work(lo, hi)`` over resamples 0 to ``total``: a contiguous part per thread, each
    done a few milliseconds at a time. Resample r draws from its own stream (seed, r), so
    the pieces change nothing."""
    each = max(1, _PIECE // max(1, n * m))
    run_parts(work, parts(total, workers), lambda lo, hi: steps(lo, hi, each))


def _randomization(diffs: np.ndarray, n_resamples: int, seed: int, workers: int):
    """(p-values, resamples used, exact) of the randomization test of each column."""
    n, m = diffs.shape
    exact = n <= 62 and (1 << n) <= n_resamples
    total = (1 << n) if exact else n_resamples
    totals = np.zeros(m, dtype=np.float64)
    _kernels.column_sums(diffs, totals)
    scale = np.abs(diffs).sum(axis=0)
    thresholds = np.abs(totals) - TIE_TOLERANCE * scale
    counts = np.zeros(m, dtype=np.int64)
    lock = threading.Lock()

    def work(lo, hi):
        got = np.zeros(m, dtype=np.int64)
        _kernels.paired_randomization(diffs, totals, thresholds, seed, lo, hi, exact,
                                      got, np.empty(m, dtype=np.float64))
        with lock:
            counts[:] += got

    _resample_parts(total, workers, n, m, work)
    return counts / total, total, exact


def _bootstrap(diffs: np.ndarray, t_observed: np.ndarray, n_resamples: int, seed: int,
               workers: int, also: np.ndarray | None = None):
    """(p-values, resample means (resamples x columns)) of Sakai's paired bootstrap test;
    with ``also`` (queries x k), a third item: the means of its columns in the same
    resamples of queries (not shifted, and not tested), for percentile intervals.

    The kernel treats each column alone, with the query indices drawn from (seed, resample),
    so the extra columns leave the test's numbers as they are without them."""
    n, m = diffs.shape
    if n >= 2**32:
        raise InputError(f"the bootstrap draws query indices below 2**32; got {n} queries")
    shifted = np.ascontiguousarray(diffs - diffs.mean(axis=0))
    thresholds = np.abs(t_observed) * (1.0 - TIE_TOLERANCE)
    if also is not None:
        shifted = np.ascontiguousarray(np.hstack([shifted, also]))
        thresholds = np.concatenate([thresholds, np.full(also.shape[1], np.inf)])
    width = shifted.shape[1]
    counts = np.zeros(width, dtype=np.int64)
    means = np.empty((n_resamples, width), dtype=np.float64)
    lock = threading.Lock()

    def work(lo, hi):
        got = np.zeros(width, dtype=np.int64)
        _kernels.paired_bootstrap(shifted, thresholds, seed, lo, hi, got, means[lo:hi],
                                  np.empty((2, width), dtype=np.float64))
        with lock:
            counts[:] += got

    _resample_parts(n_resamples, workers, n, width, work)
    p = counts[:m] / n_resamples
    if also is None:
        return p, means
    return p, means[:, :m], means[:, m:]


def _by_query(values: np.ndarray) -> np.ndarray:
    """(runs, queries, measures) values as a queries x (runs * measures) matrix."""
    r, n, k = values.shape
    return np.ascontiguousarray(values.transpose(1, 0, 2).reshape(n, r * k))


def _mean_intervals(values: np.ndarray, means: np.ndarray, *, alpha: float, ci: str,
                    n_resamples: int, seed: int, workers: int, resampled=None):
    """(low, high) of each run's mean at level 1 - alpha, shape (runs, measures), over
    queries: Student's t about the mean, or the alpha/2 and 1 - alpha/2 quantiles (numpy's
    default, linear) of the means of ``n_resamples`` seeded bootstrap resamples of the
    queries. ``resampled``: those means already drawn, resamples x (runs * measures)."""
    r, n, k = values.shape
    if ci == "bootstrap":
        if resampled is None:
            _, _, resampled = _bootstrap(np.empty((n, 0)), np.empty(0), n_resamples, seed,
                                         workers, also=_by_query(values))
        q = np.quantile(resampled, [alpha / 2, 1 - alpha / 2], axis=0)
        return q[0].reshape(r, k), q[1].reshape(r, k)
    sd = np.std(values, axis=1, ddof=1)
    half = dist.t_isf(alpha / 2, n - 1) * sd / math.sqrt(n)
    return means - half, means + half


def _tukey(values: np.ndarray, pairs):
    """p-values of Tukey's HSD over all runs, per pair and measure."""
    try:
        from scipy.stats import tukey_hsd
    except ImportError:
        raise ImportError('Tukey\'s HSD test needs scipy: pip install "qafast[stats]"') from None
    n_runs, _, n_measures = values.shape
    out = np.empty((len(pairs), n_measures), dtype=np.float64)
    for j in range(n_measures):
        pv = tukey_hsd(*[values[r, :, j] for r in range(n_runs)]).pvalue
        for c, (a, b) in enumerate(pairs):
            out[c, j] = pv[a, b]
    return out


def _letters(n: int) -> list[str]:
    letters = list(string.ascii_lowercase)
    if n <= 26:
        return letters[:n]
    return [letters[i] if i < 26 else f"{letters[i // 26 - 1]}{letters[i % 26]}"
            for i in range(n)]


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def _latex_legend(text: str) -> str:
    """The caption's legend escaped, keeping its ``$\\pm$``."""
    return "$\\pm$".join(_latex_escape(part) for part in text.split("$\\pm$"))


class Comparison:
    """Runs compared on the same queries: per-query values, means, tests and decisions.

    Made by :func:`compare` (or :meth:`from_per_query`). Arrays are indexed by run (in the
    order of ``runs``), query (``query_ids``, in id order) and measure (``measures``);
    the per-test arrays by comparison (``pairs``) and measure.

    Attributes
    ----------
    runs : list of str
        Run names.
    measures : list of str
        Measure names, as :func:`qafast.evaluate` returns them.
    query_ids : list
        The queries every run was evaluated on, in id order.
    values : numpy.ndarray
        Per-query values, shape (runs, queries, measures).
    means : numpy.ndarray
        Means per run and measure (runs, measures), equal to :func:`qafast.evaluate`'s.
    pairs : list of (str, str)
        The comparisons ``(run, versus)``: each run against the baseline, or every pair of
        runs (a later run against an earlier one). Differences are ``run - versus``.
    diff, statistic, p_value, p_adjusted, effect_size, ci_low, ci_high : numpy.ndarray
        Per comparison and measure: mean difference, test statistic (t for the t and
        bootstrap tests, the signed-rank statistic min(R+, R-) for Wilcoxon, the mean
        difference for the randomization test and Tukey's HSD), raw and adjusted p-value,
        Cohen's d_z (mean difference / its standard deviation) and the confidence interval
        of the mean difference at level 1 - alpha.
    significant : numpy.ndarray of bool
        ``p_adjusted <= alpha``.
    wins, ties, losses : numpy.ndarray of int
        Queries where ``run`` is above, equal to and below ``versus``.
    mean_ci_low, mean_ci_high : numpy.ndarray
        Per run and measure: the confidence interval of the run's mean at level 1 - alpha,
        over queries (Student's t, or the percentile bootstrap with ``ci="bootstrap"``).
    group : {"seeds", "folds"}
        How a run given as a list of runs was combined (see :func:`compare`).
    n_seeds, n_folds : numpy.ndarray of int
        Per run: how many seeds were averaged, and how many folds joined (1 and 1 for a
        single run).
    seed_means : list of numpy.ndarray
        Per run, the means of each of its seeds, shape (seeds, measures); a single run's
        is its mean.
    seed_std : numpy.ndarray
        Per run and measure: the standard deviation (ddof 1) of ``seed_means``, the spread
        of the run's mean over its seeds; NaN for a run of one seed.
    """

    #: resamples the bootstrap intervals drew (set by compare; n_resamples when unset)
    _ci_resamples: int | None = None

    def __init__(self, runs, measures, query_ids, values, means, *, baseline, test,
                 correction, alpha, n_resamples, exact, seed, ci, pairs, diff, statistic,
                 p_value, p_adjusted, effect_size, ci_low, ci_high, wins, ties, losses,
                 mean_ci_low=None, mean_ci_high=None, group="seeds", n_seeds=None,
                 n_folds=None, seed_means=None):
        self.runs, self.measures, self.query_ids = runs, measures, query_ids
        self.values, self.means = values, means
        self.baseline, self.test, self.correction, self.alpha = baseline, test, correction, alpha
        self.n_resamples, self.exact, self.seed, self.ci = n_resamples, exact, seed, ci
        self.pairs = pairs
        self.diff, self.statistic = diff, statistic
        self.p_value, self.p_adjusted = p_value, p_adjusted
        self.significant = p_adjusted <= alpha
        self.effect_size, self.ci_low, self.ci_high = effect_size, ci_low, ci_high
        self.wins, self.ties, self.losses = wins, ties, losses
        self._set_systems(mean_ci_low, mean_ci_high, group, n_seeds, n_folds, seed_means)

    def _set_systems(self, mean_ci_low, mean_ci_high, group, n_seeds, n_folds, seed_means):
        r, k = self.means.shape
        if mean_ci_low is None or mean_ci_high is None:
            mean_ci_low, mean_ci_high = np.full((r, k), np.nan), np.full((r, k), np.nan)
        self.mean_ci_low, self.mean_ci_high = mean_ci_low, mean_ci_high
        self.group = group
        self.n_seeds = (np.ones(r, dtype=np.int64) if n_seeds is None
                        else np.asarray(n_seeds, dtype=np.int64))
        self.n_folds = (np.ones(r, dtype=np.int64) if n_folds is None
                        else np.asarray(n_folds, dtype=np.int64))
        if seed_means is None:
            seed_means = [None] * r
        self.seed_means = [self.means[i][None].copy() if sm is None else np.asarray(sm)
                           for i, sm in enumerate(seed_means)]
        self.seed_std = np.array([np.std(sm, axis=0, ddof=1) if len(sm) > 1
                                  else np.full(k, np.nan) for sm in self.seed_means]
                                 ).reshape(r, k)

    def __setstate__(self, state):
        """A Comparison pickled before runs could be lists of seeds or folds gets their
        defaults (one seed, one fold) and its means' confidence intervals."""
        self.__dict__.update(state)
        if "mean_ci_low" not in state:
            low = high = None
            if self.ci == "t" or not (self.test == "fisher" and self.exact):
                # n_resamples is what the bootstrap drew, unless the exact randomization
                # test replaced it by its count of sign vectors
                low, high = _mean_intervals(self.values, self.means, alpha=self.alpha,
                                            ci=self.ci, n_resamples=self.n_resamples,
                                            seed=self.seed, workers=1)
            self._set_systems(low, high, "seeds", None, None, None)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_per_query(cls, per_query, *, baseline: str | None = None, test: str = "student",
                       correction: str | None = "holm", alpha: float = 0.05,
                       n_resamples: int = 10_000, seed: int = 0, ci: str = "t",
                       group: str = "seeds", workers: int = 1) -> Comparison:
        """Compare runs from their per-query values, for any metric.

        Parameters
        ----------
        per_query : mapping
            ``{run: {query_id: {measure: value}}}``, each run as
            ``qafast.evaluate(..., per_query=True)`` returns it (or per-question scores of
            any other metric). Every run must have the same queries and measures. A run may
            be a list of such mappings, its seeds or folds as ``group`` says.
        baseline, test, correction, alpha, n_resamples, seed, ci, group, workers
            As for :func:`compare`.

        Examples
        --------
        >>> from qafast.comparison import Comparison
        >>> f1 = {"a": {"q1": {"f1": 0.5}, "q2": {"f1": 0.2}, "q3": {"f1": 0.4}},
        ...       "b": {"q1": {"f1": 0.6}, "q2": {"f1": 0.5}, "q3": {"f1": 0.9}}}
        >>> c = Comparison.from_per_query(f1, baseline="a", test="fisher")
        >>> c.means.tolist(), c.p_value.tolist(), c.exact
        ([[0.3666666666666667], [0.6666666666666666]], [[0.25]], True)

        Two seeds of ``b``: each question's F1 is the mean of the seeds' F1, and
        ``seed_std`` the spread of the seeds' own means.

        >>> b2 = {"q1": {"f1": 0.8}, "q2": {"f1": 0.2}, "q3": {"f1": 0.9}}
        >>> c = Comparison.from_per_query({"a": f1["a"], "b": [f1["b"], b2]}, baseline="a")
        >>> c.values[1, :, 0].tolist(), c.n_seeds.tolist()
        ([0.7, 0.35, 0.9], [1, 2])
        >>> [round(x, 4) for x in c.seed_std[:, 0].tolist()]
        [nan, 0.0236]
        """
        if not isinstance(per_query, Mapping):
            raise InputTypeError("per_query must be a mapping {run: {query_id: {measure: value}}}, "
                                 f"not {type(per_query).__name__}")
        names = _run_names(per_query)
        _check_settings(names, baseline, test, correction, alpha, n_resamples, seed, ci)
        group = _group_name(group)
        layouts = [_layout(name, per_query[name], group) for name in names]
        first_label, _, first = layouts[0][0][1][0]
        if not isinstance(first, Mapping) or not first:
            raise InputError(f"{first_label}: expected a non-empty mapping "
                             "{query_id: {measure: value}}")
        measures = list(next(iter(first.values())))
        query_ids = sorted(first)

        def summarize(block):
            sums = np.empty(len(measures), dtype=np.float64)
            _kernels.column_sums(np.ascontiguousarray(block), sums)
            return sums / len(block)

        blocks, seed_means = [], []
        for name, layout in zip(names, layouts):
            seeds = []
            for seed_label, folds in layout:
                if len(folds) == 1:
                    label, _, data = folds[0]
                    seeds.append((seed_label, *_per_query_block(label, data, measures)))
                    continue
                seeds.append((seed_label, *_join_folds(
                    name, [(where, *_per_query_block(label, data, measures))
                           for label, where, data in folds])))
            ids, values, means = _average_seeds(name, seeds, summarize)
            _check_same_queries(names[0], query_ids, name, ids)
            blocks.append(values)
            seed_means.append(means)
        values = np.stack(blocks)
        means = np.empty((len(names), len(measures)), dtype=np.float64)
        for r in range(len(names)):
            means[r] = summarize(values[r])
        systems = (group, [len(layout) for layout in layouts],
                   [len(layout[0][1]) for layout in layouts], seed_means)
        return _analyse(names, measures, query_ids, values, means, baseline=baseline,
                        test=test, correction=correction, alpha=alpha,
                        n_resamples=n_resamples, seed=seed, ci=ci, workers=workers,
                        systems=systems)

    # -- reports ------------------------------------------------------------------------

    def _pair_rows(self):
        """(run index, versus index, comparison index, sign) of every row of the reports."""
        index = {name: i for i, name in enumerate(self.runs)}
        rows = []
        for c, (a, b) in enumerate(self.pairs):
            rows.append((index[a], index[b], c, 1.0))
            if self.baseline is None:
                rows.append((index[b], index[a], c, -1.0))
        return rows

    def to_records(self) -> list[dict]:
        """The rows of :meth:`to_dataframe` as a list of dicts."""
        records = []
        by_run: dict[int, list] = {}
        for ri, vi, c, sign in self._pair_rows():
            by_run.setdefault(ri, []).append((vi, c, sign))
        for r, name in enumerate(self.runs):
            entries = by_run.get(r) or [(None, None, 1.0)]
            for vi, c, sign in entries:
                for j, m in enumerate(self.measures):
                    rec: dict[str, Any] = {"run": name, "measure": m,
                                           "mean": float(self.means[r, j])}
                    if c is None:
                        rec.update(versus=None, versus_mean=math.nan, diff=math.nan,
                                   statistic=math.nan, p_value=math.nan, p_adjusted=math.nan,
                                   significant=False, effect_size=math.nan, ci_low=math.nan,
                                   ci_high=math.nan, wins=0, ties=0, losses=0)
                    else:
                        lo, hi = float(self.ci_low[c, j]), float(self.ci_high[c, j])
                        rec.update(
                            versus=self.runs[vi], versus_mean=float(self.means[vi, j]),
                            diff=sign * float(self.diff[c, j]),
                            statistic=sign * float(self.statistic[c, j]),
                            p_value=float(self.p_value[c, j]),
                            p_adjusted=float(self.p_adjusted[c, j]),
                            significant=bool(self.significant[c, j]),
                            effect_size=sign * float(self.effect_size[c, j]),
                            ci_low=lo if sign > 0 else -hi, ci_high=hi if sign > 0 else -lo,
                            wins=int((self.wins if sign > 0 else self.losses)[c, j]),
                            ties=int(self.ties[c, j]),
                            losses=int((self.losses if sign > 0 else self.wins)[c, j]))
                    rec.update(n_seeds=int(self.n_seeds[r]), n_folds=int(self.n_folds[r]),
                               seed_std=float(self.seed_std[r, j]),
                               mean_ci_low=float(self.mean_ci_low[r, j]),
                               mean_ci_high=float(self.mean_ci_high[r, j]))
                    records.append(rec)
        return records

    def to_dataframe(self):
        """A tidy pandas DataFrame: one row per run, measure and run compared against.

        Columns: ``run, measure, mean, versus, versus_mean, diff, statistic, p_value,
        p_adjusted, significant, effect_size, ci_low, ci_high, wins, ties, losses, n_seeds,
        n_folds, seed_std, mean_ci_low, mean_ci_high``. With a baseline, each run has one
        row per measure against the baseline (the baseline's own rows have no test);
        without one, one row per other run. ``ci_low, ci_high`` bound the difference
        ``diff``; ``mean_ci_low, mean_ci_high`` the run's own ``mean``; ``seed_std`` is the
        spread of the run's mean over its ``n_seeds`` seeds (NaN for one).
        """
        import pandas as pd

        return pd.DataFrame.from_records(self.to_records())

    def per_query_frame(self):
        """The per-query values as a long pandas DataFrame: ``run, query_id, measure,
        value``."""
        import pandas as pd

        r, q, m = self.values.shape
        return pd.DataFrame({
            "run": np.repeat(np.array(self.runs, dtype=object), q * m),
            "query_id": np.tile(np.repeat(np.array(self.query_ids, dtype=object), m), r),
            "measure": np.tile(np.array(self.measures, dtype=object), r * q),
            "value": self.values.reshape(-1),
        })

    def to_dict(self) -> dict:
        """Settings, means and test rows as plain Python data (the CLI's JSON)."""
        return {"test": self.test, "correction": self.correction, "alpha": self.alpha,
                "baseline": self.baseline, "queries": len(self.query_ids),
                "n_resamples": self.n_resamples if self.test in ("fisher", "bootstrap") else None,
                "exact": self.exact, "seed": self.seed, "runs": list(self.runs),
                "measures": list(self.measures),
                "means": {name: dict(zip(self.measures, self.means[r].tolist()))
                          for r, name in enumerate(self.runs)},
                "mean_ci": {name: {m: [float(self.mean_ci_low[r, j]),
                                       float(self.mean_ci_high[r, j])]
                                   for j, m in enumerate(self.measures)}
                            for r, name in enumerate(self.runs)},
                "group": self.group,
                "n_seeds": dict(zip(self.runs, self.n_seeds.tolist())),
                "n_folds": dict(zip(self.runs, self.n_folds.tolist())),
                "seed_means": {name: {m: self.seed_means[r][:, j].tolist()
                                      for j, m in enumerate(self.measures)}
                               for r, name in enumerate(self.runs)},
                "seed_std": {name: dict(zip(self.measures, self.seed_std[r].tolist()))
                             for r, name in enumerate(self.runs)},
                "comparisons": [rec for rec in self.to_records() if rec["versus"] is not None]}

    def better_than(self) -> np.ndarray:
        """``out[i, j, m]``: run i is significantly better than run j on measure m (a
        significant test between them and a higher mean)."""
        n, m = len(self.runs), len(self.measures)
        out = np.zeros((n, n, m), dtype=bool)
        index = {name: i for i, name in enumerate(self.runs)}
        for c, (a, b) in enumerate(self.pairs):
            i, j = index[a], index[b]
            sig = self.significant[c]
            out[i, j] = sig & (self.means[i] > self.means[j])
            out[j, i] = sig & (self.means[j] > self.means[i])
        return out

    def _description(self) -> str:
        what = TESTS[self.test]
        if self.test == "fisher":
            what += (f", all {self.n_resamples:,} sign vectors" if self.exact
                     else f", {self.n_resamples:,} resamples")
        elif self.test == "bootstrap":
            what += f", {self.n_resamples:,} resamples"
        correction = CORRECTIONS[self.correction]
        if self.test == "tukey":
            correction = "adjusted for all pairs of runs"
        elif self.correction != "none":
            correction += " per measure"
        against = f"against {self.baseline}" if self.baseline is not None else "all pairs"
        return f"{what}, {correction}, {against}, alpha = {self.alpha:g}"

    def _cells(self, digits: int, superscript):
        better = self.better_than()
        letters = _letters(len(self.runs))
        sep = "," if len(self.runs) > 26 else ""
        rounded = np.round(self.means, digits)
        best = rounded == rounded.max(axis=0)
        cells = []
        for i in range(len(self.runs)):
            row = []
            for j in range(len(self.measures)):
                marks = sep.join(letters[k] for k in range(len(self.runs)) if better[i, k, j])
                row.append((f"{self.means[i, j]:.{digits}f}", marks, bool(best[i, j])))
            cells.append(row)
        return letters, cells

    def _show_spread(self, spread) -> bool:
        return bool((self.n_seeds > 1).any()) if spread is None else bool(spread)

    def _extras(self, i: int, j: int, digits: int, intervals: bool, spread: bool):
        """(spread, interval) texts of run i's mean of measure j, each None if not shown
        (a run of one seed has no spread)."""
        sd = float(self.seed_std[i, j])
        shown = f"{sd:.{digits}f}" if spread and self.n_seeds[i] > 1 else None
        interval = (f"[{self.mean_ci_low[i, j]:.{digits}f}, {self.mean_ci_high[i, j]:.{digits}f}]"
                    if intervals else None)
        return shown, interval

    def _systems_note(self) -> str:
        """Which runs were several runs, or "" when none was."""
        parts = []
        for i, name in enumerate(self.runs):
            s, f = int(self.n_seeds[i]), int(self.n_folds[i])
            kinds = ([f"{s} seeds"] if s > 1 else []) + ([f"{f} folds"] if f > 1 else [])
            if kinds:
                parts.append(f"{name}: {' x '.join(kinds)}")
        if not parts:
            return ""
        note = "several runs per system (" + ", ".join(parts) + ")"
        if (self.n_seeds > 1).any():
            note += "; a query's value is the mean of its seeds' values"
        return note

    def _legend(self, intervals: bool, spread: bool, pm: str = "±") -> list[str]:
        """The sentences that say what the spreads, intervals and several runs are."""
        out = []
        note = self._systems_note()
        if note:
            out.append(note[0].upper() + note[1:] + ".")
        if spread:
            out.append(f"{pm}: standard deviation of a run's mean over its seeds.")
        if intervals:
            # the intervals drew what was asked for, where the exact randomization test
            # counted its sign vectors in n_resamples
            drawn = self._ci_resamples or self.n_resamples
            how = (f"percentile bootstrap, {drawn:,} resamples" if self.ci == "bootstrap"
                   else "Student's t")
            out.append(f"[ ]: {100 * (1 - self.alpha):g}% confidence interval of a run's mean "
                       f"over queries ({how}).")
        return out

    def to_markdown(self, *, digits: int = 4, intervals: bool = False,
                    spread: bool | None = None) -> str:
        """A Markdown table: a row per run, a column per measure, the best mean of each
        column in bold, and after each mean the letters of the runs it is significantly
        better than (``<sup>``); a line below names the test.

        Parameters
        ----------
        digits : int, default 4
            Decimals shown.
        intervals : bool, default False
            Show each mean's confidence interval, ``[low, high]``.
        spread : bool, optional
            Show ``± seed_std`` after the means of runs given as several seeds; by default,
            when there is such a run.

        Examples
        --------
        >>> from qafast.comparison import Comparison
        >>> pq = {"bm25": {"q1": {"P_1": 0.0}, "q2": {"P_1": 1.0}},
        ...       "dense": {"q1": {"P_1": 1.0}, "q2": {"P_1": 1.0}}}
        >>> print(Comparison.from_per_query(pq, test="fisher").to_markdown(digits=2))
        | # | run | P_1 |
        | --- | --- | ---: |
        | a | bm25 | 0.50 |
        | b | dense | **1.00** |
        <BLANKLINE>
        Superscripts: significantly better than the run with that letter (Fisher's paired randomization test, all 4 sign vectors, Holm correction per measure, all pairs, alpha = 0.05); 2 queries.
        """
        spread = self._show_spread(spread)
        letters, cells = self._cells(digits, None)
        lines = ["| # | run | " + " | ".join(self.measures) + " |",
                 "| --- | --- | " + " | ".join("---:" for _ in self.measures) + " |"]
        for i, name in enumerate(self.runs):
            parts = []
            for j, (value, marks, best) in enumerate(cells[i]):
                text = f"**{value}**" if best else value
                text += f"<sup>{marks}</sup>" if marks else ""
                sd, interval = self._extras(i, j, digits, intervals, spread)
                text += f" ± {sd}" if sd is not None else ""
                text += f" {interval}" if interval is not None else ""
                parts.append(text)
            lines.append(f"| {letters[i]} | {name} | " + " | ".join(parts) + " |")
        lines.append("")
        footer = (f"Superscripts: significantly better than the run with that letter "
                  f"({self._description()}); {len(self.query_ids)} queries.")
        lines.append(" ".join([footer, *self._legend(intervals, spread)]))
        return "\n".join(lines)

    def to_latex(self, *, digits: int = 4, caption: str | None = None,
                 label: str = "tab:results", intervals: bool = False,
                 spread: bool | None = None) -> str:
        """A LaTeX table (``booktabs``): the best mean of each measure in bold, and
        superscript letters after a mean naming the runs it is significantly better than,
        padded with ``\\hphantom`` so the numbers stay aligned. The caption names the test
        and the correction unless ``caption`` is given. ``intervals`` and ``spread`` add
        each mean's confidence interval and ``± seed_std``, in small type, as for
        :meth:`to_markdown`.
        """
        spread = self._show_spread(spread)
        letters, cells = self._cells(digits, None)
        if caption is None:
            legend = " ".join(self._legend(intervals, spread, pm="$\\pm$"))
            caption = (f"Mean effectiveness over {len(self.query_ids)} queries. The best "
                       "value of each measure is in bold. A superscript letter marks a "
                       "significant improvement over the run with that letter ("
                       + re.sub(r"alpha = (\S+)$", r"$\\alpha = \1$",
                                _latex_escape(self._description()))
                       + ")." + (" " + _latex_legend(legend) if legend else ""))
        width = max((len(marks) for row in cells for _, marks, _ in row), default=0)
        lines = [r"\begin{table}[t]", r"\centering", f"\\caption{{{caption}}}",
                 f"\\label{{{label}}}",
                 r"\begin{tabular}{cl" + "r" * len(self.measures) + "}", r"\toprule",
                 r"\# & Run & " + " & ".join(_latex_escape(m) for m in self.measures)
                 + r" \\", r"\midrule"]
        for i, name in enumerate(self.runs):
            parts = []
            for j, (value, marks, best) in enumerate(cells[i]):
                text = f"\\textbf{{{value}}}" if best else value
                if marks:
                    text += f"$^{{{marks}}}$"
                pad = width - len(marks)
                if pad > 0:
                    text += f"\\hphantom{{$^{{{'a' * pad}}}$}}"
                sd, interval = self._extras(i, j, digits, intervals, spread)
                if sd is not None:
                    text += f" {{\\scriptsize $\\pm${sd}}}"
                if interval is not None:
                    text += f" {{\\scriptsize {interval}}}"
                parts.append(text)
            lines.append(f"{letters[i]} & {_latex_escape(name)} & " + " & ".join(parts)
                         + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def to_text(self, *, digits: int = 4, intervals: bool = False,
                spread: bool | None = None) -> str:
        """The plain-text table ``str()`` prints (the CLI's default output): superscript
        letters after a mean for the runs it is significantly better than, ``*`` after the
        best; ``intervals`` and ``spread`` as for :meth:`to_markdown`."""
        spread = self._show_spread(spread)
        letters, cells = self._cells(digits, None)
        header = ["#", "run"] + list(self.measures)
        rows = []
        for i, name in enumerate(self.runs):
            row = [letters[i], name]
            for j, (value, marks, best) in enumerate(cells[i]):
                sup = "".join(_SUPERSCRIPTS.get(ch, ch) for ch in marks)
                sd, interval = self._extras(i, j, digits, intervals, spread)
                text = value + sup
                text += f" ±{sd}" if sd is not None else ""
                text += f" {interval}" if interval is not None else ""
                row.append(text + (" *" if best else ""))
            rows.append(row)
        widths = [max(len(str(r[k])) for r in [header] + rows) for k in range(len(header))]
        out = ["  ".join(str(c).ljust(w) if k < 2 else str(c).rjust(w)
                         for k, (c, w) in enumerate(zip(r, widths))).rstrip()
               for r in [header] + rows]
        out.append(f"{len(self.query_ids)} queries; * best mean; superscripts: significantly "
                   f"better than the run with that letter ({self._description()})")
        out += self._legend(intervals, spread)
        return "\n".join(out)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return (f"Comparison({len(self.runs)} runs x {len(self.query_ids)} queries x "
                f"{len(self.measures)} measures, {self._description()})")

    # -- plots --------------------------------------------------------------------------

    def plot_differences(self, measure: str | None = None, *, path=None, ax=None):
        """Per-query differences of each run against the baseline (or, without one, of
        each later run against the first), sorted, one panel per run.

        Needs matplotlib (``pip install "qafast[plot]"``). Saves to ``path`` (PNG, SVG,
        ... by its extension) if given; returns the matplotlib Figure.
        """
        plt = _pyplot()
        m = self.measures.index(measure) if measure is not None else 0
        base = self.runs.index(self.baseline) if self.baseline is not None else 0
        others = [i for i in range(len(self.runs)) if i != base]
        if ax is None:
            fig, axes = plt.subplots(len(others), 1, figsize=(7, 2.2 * len(others)),
                                     squeeze=False, sharex=True)
            axes = axes[:, 0]
        else:
            axes = np.atleast_1d(ax)
            fig = axes[0].figure
        for a, i in zip(axes, others):
            d = np.sort(self.values[i, :, m] - self.values[base, :, m])[::-1]
            a.bar(np.arange(len(d)), d, width=1.0,
                  color=np.where(d >= 0, "tab:blue", "tab:red"))
            a.axhline(0.0, color="black", linewidth=0.5)
            a.set_ylabel(f"{self.runs[i]}\n- {self.runs[base]}")
        axes[0].set_title(f"{self.measures[m]}: per-query difference")
        axes[-1].set_xlabel("queries, sorted by difference")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path)
        return fig


def _pyplot():
    try:
        import matplotlib

        if os.environ.get("MPLBACKEND") is None and not os.environ.get("DISPLAY"):
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError('plots need matplotlib: pip install "qafast[plot]"') from None
    return plt


def _per_query_block(label: str, data, measures: list):
    """(query ids in id order, values of shape (queries, measures)) of one run's
    ``{query_id: {measure: value}}``."""
    if not isinstance(data, Mapping):
        raise InputTypeError(f"{label}: expected a mapping {{query_id: {{measure: value}}}}, "
                             f"not {type(data).__name__}")
    ids = sorted(data)
    values = np.empty((len(ids), len(measures)), dtype=np.float64)
    for i, q in enumerate(ids):
        row = data[q]
        try:
            values[i] = [row[m] for m in measures]
        except KeyError as e:
            raise InputError(f"{label}, query {q!r}: no value for measure "
                             f"{e.args[0]!r}") from None
        except (TypeError, ValueError):
            raise InputTypeError(f"{label}, query {q!r}: values must be numbers") from None
    return ids, values


def _run_names(runs) -> list[str]:
    names = list(runs)
    for name in names:
        if not isinstance(name, str):
            raise InputTypeError(f"run names must be str, not {type(name).__name__} ({name!r})")
    if len(names) < 2:
        raise InputError(f"compare needs at least two runs, got {len(names)}"
                         + (f" ({names[0]!r})" if names else ""))
    return names


def _some(ids) -> str:
    ids = list(ids)
    return ", ".join(map(repr, ids[:5])) + (", ..." if len(ids) > 5 else "")


def _queries(count: int) -> str:
    return f"{count} quer{'y' if count == 1 else 'ies'}"


def _mismatch(first: str, first_ids: list, label: str, ids: list) -> str:
    """How the queries of ``label`` differ from those of ``first`` (both described)."""
    a, b = set(first_ids), set(ids)
    missing = sorted(a - b, key=str)
    extra = sorted(b - a, key=str)
    parts = []
    if missing:
        parts.append(f"{label} has no value for {_queries(len(missing))} of {first}: "
                     + _some(missing))
    if extra:
        parts.append(f"{label} has {_queries(len(extra))} that {first} lacks: " + _some(extra))
    return "; ".join(parts)


def _check_same_queries(first: str, first_ids: list, name: str, ids: list) -> None:
    if ids == first_ids:
        return
    raise InputError("a paired test needs every run on the same queries; "
                     + _mismatch(f"run {first!r}", first_ids, f"run {name!r}", ids)
                     + " (queries='qrels' scores a query missing from a run as 0)")


# -- several runs per system ----------------------------------------------------------------

def _group_name(group) -> str:
    if not isinstance(group, str) or group not in GROUPS:
        raise InputError(f"group must be 'seeds' or 'folds', not {group!r}")
    return group


def _where(label: str, run) -> str:
    return label + (f" ({os.fspath(run)})" if isinstance(run, (str, os.PathLike)) else "")


def _layout(name: str, system, group: str):
    """One system's runs as ``[(seed label, [(label, description, run) per fold]) per
    seed]``: a single run is one seed of one fold; a list, its seeds (``group="seeds"``)
    or folds; a list of lists, seeds of folds or folds of seeds. Labels index the lists
    as given: ``run 'dense'[1]``."""
    if not isinstance(system, (list, tuple)):
        label = f"run {name!r}"
        return [(label, [(label, label, system)])]
    if not system:
        raise InputError(f"run {name!r} is an empty list; give a run, or a list of its "
                         f"{group}")
    other = "folds" if group == "seeds" else "seeds"
    outer = []
    for i, item in enumerate(system):
        if isinstance(item, (list, tuple)):
            if not item:
                raise InputError(f"run {name!r}[{i}] is an empty list of {other}")
            inner = []
            for j, run in enumerate(item):
                if isinstance(run, (list, tuple)):
                    raise InputTypeError(
                        f"run {name!r}[{i}][{j}] is a list: a run is given alone, as a list "
                        f"of its {group}, or as a list of its {group}, each a list of its "
                        f"{other}")
                label = f"run {name!r}[{i}][{j}]"
                inner.append((label, _where(label, run), run))
        else:
            label = f"run {name!r}[{i}]"
            inner = [(label, _where(label, item), item)]
        outer.append(inner)
    sizes = [len(inner) for inner in outer]
    if len(set(sizes)) > 1:
        raise InputError(f"run {name!r}: each of its {group} needs the same number of "
                         f"{other}, not " + ", ".join(map(str, sizes)))
    if group == "seeds":
        return [(f"run {name!r}[{i}]", inner) for i, inner in enumerate(outer)]
    if sizes[0] == 1:
        return [(f"run {name!r}", [inner[0] for inner in outer])]
    # folds of seeds: seed s is the s-th run of every fold
    return [(f"run {name!r}[:][{k}]", [inner[k] for inner in outer]) for k in range(sizes[0])]


def _join_folds(name: str, folds) -> tuple[list, np.ndarray]:
    """The union of disjoint folds' queries, in id order, and their values;
    ``folds``: ``[(description, ids, values)]``."""
    owner: dict = {}
    for k, (where, ids, _) in enumerate(folds):
        shared = [q for q in ids if q in owner]
        if shared:
            raise InputError(
                f"the folds of run {name!r} must hold disjoint queries; {where} shares "
                f"{_queries(len(shared))} with the folds before it ({_some(shared)}; "
                f"{shared[0]!r} is also in {folds[owner[shared[0]]][0]}); group='seeds' "
                "averages runs on the same queries")
        owner.update(dict.fromkeys(ids, k))
    ids = [q for _, fold_ids, _ in folds for q in fold_ids]
    values = np.concatenate([v for _, _, v in folds])
    order = sorted(range(len(ids)), key=ids.__getitem__)
    return [ids[i] for i in order], np.ascontiguousarray(values[order])


def _average_seeds(name: str, seeds, summarize):
    """(query ids, per-query values averaged over the seeds, each seed's means (seeds x
    measures), or None for one seed); ``seeds``: ``[(label, ids, values)]``, each on the
    same queries. A query's values are added in increasing order, so the order of the seeds
    does not change a bit."""
    first, ids, values = seeds[0]
    if len(seeds) == 1:
        return ids, values, None
    for label, other_ids, _ in seeds[1:]:
        if other_ids != ids:
            raise InputError(
                f"the seeds of run {name!r} must cover the same queries; "
                + _mismatch(first, ids, label, other_ids)
                + " (group='folds' joins runs on disjoint queries; queries='qrels' scores a "
                "query missing from a run as 0)")
    stacked = np.sort(np.stack([v for _, _, v in seeds]), axis=0)
    total = stacked[0].copy()
    for part in stacked[1:]:
        total += part
    seed_means = np.array([summarize(v) for _, _, v in seeds], dtype=np.float64)
    return ids, np.ascontiguousarray(total / len(seeds)), seed_means


@closes_pools_on_interrupt
def compare(qrels, runs: Mapping[str, Any], measures: str | Iterable[str], *,
            baseline: str | None = None, test: str = "student",
            correction: str | None = "holm", alpha: float = 0.05, n_resamples: int = 10_000,
            seed: int = 0, queries: str = "run", ci: str = "t", group: str = "seeds",
            relevance_level: int = 1, judged_only: bool = False, max_docs: int | None = None,
            workers: int = 1) -> Comparison:
    """Evaluate several runs on the same queries and test their differences.

    Parameters
    ----------
    qrels : Qrels, dict, DataFrame or path
        Relevance judgments, encoded once for every run.
    runs : mapping
        ``{name: run}``, each run anything :func:`qafast.evaluate` accepts (dict of dicts,
        TREC file path, DataFrame, :class:`qafast.Run`); at least two. A system with
        several runs is a list of them (its seeds or folds, as ``group`` says), or a list
        of lists (seeds of folds, or folds of seeds).
    measures : str or iterable of str
        Measures as :func:`qafast.evaluate` names them; each must be averaged over queries
        (not the ``num_*`` counts or the geometric ``gm_*`` means).
    baseline : str, optional
        Test each run against this one; by default every pair of runs is tested.
    test : {"student", "wilcoxon", "fisher", "bootstrap", "tukey"}, default "student"
        See :mod:`qafast.comparison`. ``"fisher"``'s p-value is the fraction of sign vectors
        whose ``|sum of signed differences|`` reaches the observed one (sums within 1e-10 of
        ``sum(|d|)`` count as equal); it enumerates all 2**n sign vectors (the observed one
        included) when 2**n <= ``n_resamples``, and otherwise draws ``n_resamples`` seeded
        random ones and divides by ``n_resamples``, as ranx and Smucker et al. (2007) do.
        ``"bootstrap"``'s is the fraction of ``n_resamples`` resamples of the differences
        shifted to mean 0 whose ``|t|`` reaches the observed ``|t|`` (Sakai, 2006).
    correction : {"holm", "none", "bonferroni", "holm-sidak", "bh", "by"}, default "holm"
        Multiple-testing correction across the comparisons of each measure (``"bh"``:
        Benjamini-Hochberg, ``"by"``: Benjamini-Yekutieli; see :func:`adjust_p_values`).
        Tukey's HSD is adjusted for all pairs already: it takes ``"none"`` (or None), and
        the default ``"holm"`` is not applied to it.
    alpha : float, default 0.05
        A comparison is significant when its adjusted p-value is at most ``alpha``; the
        confidence intervals are at level 1 - alpha.
    n_resamples : int, default 10,000
        Resamples of the randomization and bootstrap tests and bootstrap intervals.
    seed : int, default 0
        Seed of those resamples (qafast's own xoshiro256** generator: the same seed gives
        the same p-values on every platform and for every ``workers``).
    queries : {"run", "qrels"}, default "run"
        ``"run"``: each run is evaluated on the queries it shares with the qrels, and
        all runs must cover the same ones (the error names the run and queries);
        ``"qrels"``: every qrels query, a query missing from a run scoring 0.
    ci : {"t", "bootstrap"}, default "t"
        Confidence intervals of the mean differences and of each run's mean
        (``mean_ci_low``, ``mean_ci_high``), over queries: Student's t, or the percentile
        bootstrap (from the bootstrap test's resamples when ``test="bootstrap"``; a run's
        mean from the same resamples of queries as the differences).
    group : {"seeds", "folds"}, default "seeds"
        What the runs of a system given as a list are. ``"seeds"``: repeated runs on the
        same queries (training seeds, samples); each is evaluated alone, a query's value is
        the mean of the runs' values for it (added in increasing order, so the order of the
        runs does not matter), and the tests and intervals treat these means as one run's
        values. ``seed_means`` holds each run's own mean and ``seed_std`` their standard
        deviation: the spread over seeds, which the tests over queries do not include.
        The runs must cover the same queries (with ``queries="run"``; the error names the
        run and queries). ``"folds"``: runs on disjoint queries (cross-validation folds),
        joined into one run of all their queries; a query in two folds is an error. In a
        list of lists the inner lists are the other kind.
    relevance_level, judged_only, max_docs
        As for :func:`qafast.evaluate`.
    workers : int, default 1
        Threads (-1: all cores); results do not depend on it.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        Fewer than two runs or queries, runs on different queries (``queries="run"``), a
        system's seeds on different queries or folds that share a query, an unknown test,
        correction or measure, a baseline that is not a run, a bad option.

    Examples
    --------
    >>> import qafast
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}, "q4": {"d4": 1}}
    >>> runs = {
    ...     "bm25": {q: {"d1": 0.9, "d2": 0.8, "d3": 0.7, "d4": 0.6} for q in qrels},
    ...     "dense": {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}, "q3": {"d3": 1.0},
    ...               "q4": {"d1": 1.0, "d4": 0.5}},
    ... }
    >>> c = qafast.compare(qrels, runs, ["recip_rank", "P_1"], baseline="bm25",
    ...                    test="fisher")
    >>> c.means.tolist()
    [[0.5208333333333334, 0.25], [0.875, 0.75]]
    >>> c.p_value.tolist()
    [[0.25, 0.5]]
    >>> print(c)
    #  run     recip_rank       P_1
    a  bm25        0.5208    0.2500
    b  dense     0.8750 *  0.7500 *
    4 queries; * best mean; superscripts: significantly better than the run with that letter (Fisher's paired randomization test, all 16 sign vectors, Holm correction per measure, against bm25, alpha = 0.05)

    Two seeds of ``dense``: a query's value is the mean over the seeds; the spread of the
    seeds' means is shown after the mean, and ``intervals=True`` adds each mean's 95%
    confidence interval over queries:

    >>> seed2 = {q: {f"d{q[1]}": 1.0} for q in qrels}  # every query right
    >>> c = qafast.compare(qrels, {"bm25": runs["bm25"], "dense": [runs["dense"], seed2]},
    ...                    ["recip_rank"], baseline="bm25")
    >>> c.values[1, :, 0].tolist(), c.seed_means[1][:, 0].tolist()
    ([1.0, 1.0, 1.0, 0.75], [0.875, 1.0])
    >>> print(c.to_text(intervals=True, digits=2))
    #  run                   recip_rank
    a  bm25          0.52 [-0.01, 1.06]
    b  dense  0.94 ±0.09 [0.74, 1.14] *
    4 queries; * best mean; superscripts: significantly better than the run with that letter (paired Student's t-test, Holm correction per measure, against bm25, alpha = 0.05)
    Several runs per system (dense: 2 seeds); a query's value is the mean of its seeds' values.
    ±: standard deviation of a run's mean over its seeds.
    [ ]: 95% confidence interval of a run's mean over queries (Student's t).
    """
    if not isinstance(runs, Mapping):
        raise InputTypeError("runs must be a mapping {name: run}, not " + type(runs).__name__)
    names = _run_names(runs)
    check_options(relevance_level, judged_only, max_docs)
    _check_settings(names, baseline, test, correction, alpha, n_resamples, seed, ci)
    group = _group_name(group)
    if queries not in ("run", "qrels"):
        raise InputError(f"queries must be 'run' or 'qrels', not {queries!r}")
    columns = [c for c in parse_measures(measures) if c.family not in TEXT_MEASURES]
    if not columns:
        raise InputError(f"measures {measures!r}: none of them is a per-query number")
    _check_averaged(columns)
    layouts = [_layout(name, runs[name], group) for name in names]
    diverse = None
    if reads_subtopics(columns, qrels):  # diversity measures: their values come from there
        from .diversity import as_diversity_qrels, subtopic_values

        diverse = as_diversity_qrels(qrels)
        qrels = diverse.plain()
    qrels = as_qrels(qrels, workers)
    options = dict(relevance_level=int(relevance_level), judged_only=bool(judged_only),
                   max_docs=max_docs, workers=workers)

    def measure(label, run, which):
        try:
            if diverse is not None:
                return subtopic_values(diverse, run, columns, which, options)[:2]
            return per_query_values(qrels, run, columns, which, options)
        except (ValueError, TypeError) as e:
            raise in_context(e, label) from None

    def summarize(values):
        return column_summaries(columns, values, exact=True)

    seed_means: list = []

    def measured():
        for name, layout in zip(names, layouts):
            seeds = []
            for seed_label, folds in layout:
                if len(folds) == 1:
                    label, _, run = folds[0]
                    seeds.append((seed_label, *measure(label, run, queries)))
                    continue
                # each fold on its own queries; the qrels queries no fold has are added
                # after the join, as trec_eval -c scores them
                ids, values = _join_folds(name, [(where, *measure(label, run, "run"))
                                                 for label, where, run in folds])
                if queries == "qrels":
                    ids, values = add_missing_queries(qrels, ids, values, columns, options)
                seeds.append((seed_label, ids, values))
            ids, values, means = _average_seeds(name, seeds, summarize)
            seed_means.append(means)
            yield ids, values

    query_ids, values, means = _stack_runs(names, measured(), columns)
    systems = (group, [len(layout) for layout in layouts],
               [len(layout[0][1]) for layout in layouts], seed_means)
    return _analyse(names, [c.name for c in columns], query_ids, values, means,
                    baseline=baseline, test=test, correction=correction, alpha=alpha,
                    n_resamples=n_resamples, seed=seed, ci=ci, workers=workers,
                    systems=systems)


def _check_averaged(columns) -> None:
    """compare tests differences of means: every column must be a mean over queries."""
    for c in columns:
        if c.aggregate != "mean":
            kind = "summed" if c.aggregate == "sum" else "a geometric mean"
            raise InputError(f"measure {c.name!r} is {kind} over queries; compare tests "
                             "differences of means (use map or bpref for gm_map, gm_bpref)")


def _stack_runs(names, measured, columns):
    """``(query ids, values of shape (runs, queries, columns), means of shape (runs,
    columns))`` from each run's ``(ids, values)`` in ``measured``, in the order of ``names``;
    every run must have measured the same queries."""
    query_ids = None
    blocks = []
    means = np.empty((len(names), len(columns)), dtype=np.float64)
    for r, (name, (ids, values)) in enumerate(zip(names, measured)):
        if query_ids is None:
            query_ids = ids
        else:
            _check_same_queries(names[0], query_ids, name, ids)
        blocks.append(values)
        means[r] = column_summaries(columns, values, exact=True)
    return query_ids, np.stack(blocks), means


def _check_settings(names, baseline, test, correction, alpha, n_resamples, seed, ci):
    if baseline is not None and baseline not in names:
        raise InputError(f"baseline {baseline!r} is not one of the runs: "
                         + ", ".join(map(repr, names)))
    test = _test_name(test)
    correction = _correction_name(correction)
    if test == "tukey" and correction not in ("none", "holm"):
        raise InputError(f"Tukey's HSD p-values are adjusted for all pairs of runs already; "
                         f"correction must be 'none', not {correction!r}")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 < alpha < 1:
        raise InputError(f"alpha must be a number between 0 and 1, not {alpha!r}")
    if (not isinstance(n_resamples, (int, np.integer)) or isinstance(n_resamples, bool)
            or n_resamples < 1):
        raise InputError(f"n_resamples must be a positive int, not {n_resamples!r}")
    if (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool)
            or not 0 <= seed < 2**64):
        raise InputError(f"seed must be an int from 0 to 2**64 - 1, not {seed!r}")
    if ci not in ("t", "bootstrap"):
        raise InputError(f"ci must be 't' or 'bootstrap', not {ci!r}")


@closes_pools_on_interrupt  # from_per_query and qafast.dask.compare come here too
def _analyse(names, measures, query_ids, values, means, *, baseline, test, correction,
             alpha, n_resamples, seed, ci, workers, systems=None) -> Comparison:
    _check_settings(names, baseline, test, correction, alpha, n_resamples, seed, ci)
    test = _test_name(test)
    correction = "none" if test == "tukey" else _correction_name(correction)
    workers = resolve_workers(workers)
    n_runs, n, n_measures = values.shape
    if n < 2:
        raise InputError(f"a paired test needs at least two queries; the runs share {n}"
                         + (f" ({query_ids[0]!r})" if n else ""))
    bad = np.argwhere(~np.isfinite(values))
    if len(bad):
        r, q, m = bad[0]
        raise InputError(f"run {names[r]!r}, query {query_ids[q]!r}, measure "
                         f"{measures[m]!r}: value is {values[r, q, m]}, not a finite number")
    if baseline is not None:
        b = names.index(baseline)
        pair_index = [(i, b) for i in range(n_runs) if i != b]
    else:
        pair_index = [(j, i) for i in range(n_runs) for j in range(i + 1, n_runs)]
    n_pairs = len(pair_index)
    diffs = np.stack([values[a] - values[b] for a, b in pair_index])   # pairs x queries x m
    cols = np.ascontiguousarray(diffs.transpose(0, 2, 1).reshape(n_pairs * n_measures, n))
    mean, sd, t, p_t = _student(cols)
    shape = (n_pairs, n_measures)
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = np.where(sd > 0, mean / sd, np.where(mean == 0, 0.0, np.sign(mean) * np.inf))
    exact = False
    used = n_resamples
    boot_means = run_means = None
    matrix = None
    if test in ("fisher", "bootstrap") or ci == "bootstrap":
        matrix = np.ascontiguousarray(cols.T)                        # queries x tests
    if test == "student":
        p, statistic = p_t, t
    elif test == "wilcoxon":
        stats = [_wilcoxon(col) for col in cols]
        statistic = np.array([s for s, _ in stats])
        p = np.array([x for _, x in stats])
    elif test == "fisher":
        assert matrix is not None
        p, used, exact = _randomization(matrix, n_resamples, seed, workers)
        statistic = mean
    elif test == "bootstrap":
        assert matrix is not None
        if ci == "bootstrap":
            p, boot_means, run_means = _bootstrap(matrix, t, n_resamples, seed, workers,
                                                  also=_by_query(values))
        else:
            p, boot_means = _bootstrap(matrix, t, n_resamples, seed, workers)
        statistic = t
    else:
        p = _tukey(values, pair_index).reshape(-1)
        statistic = mean
    if ci == "bootstrap":
        if boot_means is None:
            assert matrix is not None
            _, boot_means, run_means = _bootstrap(matrix, t, n_resamples, seed, workers,
                                                  also=_by_query(values))
        q = np.quantile(boot_means, [alpha / 2, 1 - alpha / 2], axis=0)
        ci_low, ci_high = mean + q[0], mean + q[1]
    else:
        half = dist.t_isf(alpha / 2, n - 1) * sd / math.sqrt(n)
        ci_low, ci_high = mean - half, mean + half
    p = np.asarray(p, dtype=np.float64).reshape(shape)
    p_adj = _adjust_columns(p, correction)
    mean_low, mean_high = _mean_intervals(values, means, alpha=alpha, ci=ci,
                                          n_resamples=n_resamples, seed=seed, workers=workers,
                                          resampled=run_means)
    group, n_seeds, n_folds, seed_means = systems or ("seeds", None, None, None)
    result = Comparison(
        list(names), list(measures), list(query_ids), values, means, baseline=baseline,
        test=test, correction=correction, alpha=float(alpha), n_resamples=int(used),
        exact=exact, seed=int(seed), ci=ci,
        pairs=[(names[a], names[b]) for a, b in pair_index],
        diff=mean.reshape(shape), statistic=np.asarray(statistic, dtype=np.float64).reshape(shape),
        p_value=p, p_adjusted=p_adj, effect_size=effect.reshape(shape),
        ci_low=np.asarray(ci_low).reshape(shape), ci_high=np.asarray(ci_high).reshape(shape),
        wins=(diffs > 0).sum(axis=1), ties=(diffs == 0).sum(axis=1),
        losses=(diffs < 0).sum(axis=1), mean_ci_low=mean_low, mean_ci_high=mean_high,
        group=group, n_seeds=n_seeds, n_folds=n_folds, seed_means=seed_means)
    result._ci_resamples = int(n_resamples)
    return result


def to_frame(per_query: Mapping, *, run: str | None = None):
    """Per-query values as a pandas DataFrame: a ``query_id`` column, then one column per
    measure (and a first ``run`` column if ``run`` is given).

    Parameters
    ----------
    per_query : mapping
        ``{query_id: {measure: value}}``, as ``qafast.evaluate(..., per_query=True)``
        returns it.
    run : str, optional
        A run name to put in a ``run`` column (to concatenate several runs' frames).

    Examples
    --------
    >>> import qafast
    >>> pq = qafast.evaluate({"q1": {"d1": 1}, "q2": {"d2": 1}},
    ...                      {"q1": {"d1": 0.5}, "q2": {"d1": 0.9, "d2": 0.2}},
    ...                      ["P_1", "recip_rank"], per_query=True)
    >>> qafast.to_frame(pq)
      query_id  P_1  recip_rank
    0       q1  1.0         1.0
    1       q2  0.0         0.5
    """
    import pandas as pd

    if not isinstance(per_query, Mapping):
        raise InputTypeError("per_query must be a mapping {query_id: {measure: value}}, not "
                             + type(per_query).__name__)
    frame = pd.DataFrame.from_dict(dict(per_query), orient="index")
    frame.index.name = "query_id"
    frame = frame.reset_index()
    if run is not None:
        frame.insert(0, "run", run)
    return frame


def plot_precision_recall(qrels, runs: Mapping[str, Any], *, path=None, ax=None,
                          queries: str = "run", relevance_level: int = 1):
    """Interpolated precision-recall curves of several runs on one figure: the mean of
    trec_eval's ``iprec_at_recall`` at recall 0, 0.1, ..., 1 of each run.

    Needs matplotlib (``pip install "qafast[plot]"``). Saves to ``path`` (PNG, SVG, ... by
    its extension) if given; returns the matplotlib Figure.
    """
    from .ranking import evaluate

    plt = _pyplot()
    if not isinstance(runs, Mapping):
        raise InputTypeError("runs must be a mapping {name: run}, not " + type(runs).__name__)
    qrels = as_qrels(qrels)
    if ax is None:
        fig, ax = plt.subplots(figsize=(5, 4))
    else:
        fig = ax.figure
    levels = [i / 10 for i in range(11)]
    for name, run in runs.items():
        got = evaluate(qrels, run, "iprec_at_recall", queries=queries,
                       relevance_level=relevance_level)
        ax.plot(levels, list(got.values()), marker="o", markersize=3, label=str(name))
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(True, linewidth=0.3)
    ax.legend()
    fig.tight_layout()
    if path is not None:
        fig.savefig(path)
    return fig


# -- command line -------------------------------------------------------------------------

def register_cli(subparsers) -> dict:
    p = subparsers.add_parser(
        "compare", help="compare runs on the same queries with significance tests",
        description="Evaluate several TREC runs against one qrels file and test their "
                    "differences. RUN is a path or NAME=PATH; a run's name is otherwise its "
                    "file name without extension.")
    p.add_argument("qrels", help="qrels file")
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="run files (at least two systems); with --group, the runs given "
                        "one NAME are one system (NAME=PATTERN takes every file the glob "
                        "pattern matches, in name order)")
    p.add_argument("-m", action="append", metavar="MEASURE",
                   help="measure (repeatable; default map, ndcg_cut_10, P_10, recall_100)")
    p.add_argument("--baseline", metavar="NAME", help="test each run against this one "
                   "(default: every pair)")
    p.add_argument("--test", default="student", choices=sorted(TESTS),
                   help="significance test (default student)")
    p.add_argument("--correction", default=None, choices=sorted(CORRECTIONS),
                   help="multiple-testing correction per measure (default holm; none for tukey)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    p.add_argument("--resamples", type=int, default=10_000, metavar="N",
                   help="resamples of the fisher and bootstrap tests (10000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the resamples (0)")
    p.add_argument("--ci", default="t", choices=("t", "bootstrap"),
                   help="confidence intervals: Student's t (default) or percentile bootstrap")
    p.add_argument("--mean-ci", action="store_true",
                   help="show each mean's confidence interval in the text, markdown and "
                        "latex tables (csv and json always have it)")
    p.add_argument("--group", choices=sorted(GROUPS),
                   help="runs given under one NAME are one system: seeds (per-query values "
                        "averaged over them) or folds (disjoint queries, joined)")
    p.add_argument("-c", action="store_true",
                   help="use every qrels query; a query missing from a run scores 0")
    p.add_argument("-o", choices=("text", "markdown", "latex", "csv", "json"), default="text",
                   help="output format")
    p.add_argument("--plot", metavar="FILE",
                   help="save the runs' interpolated precision-recall curves (PNG, SVG, ...)")
    p.add_argument("--plot-diff", metavar="FILE",
                   help="save the per-query differences of the first measure")
    p.add_argument("--workers", type=int, default=1, help="threads (-1: all cores)")
    return {"compare": _run_compare}


def _cli_names(paths: list[str], group: str | None = None) -> dict:
    if group is not None:
        return _cli_groups(paths)
    named = []
    for spec in paths:
        if "=" in spec and not os.path.exists(spec):
            name, path = spec.split("=", 1)
        else:
            path = spec
            name = os.path.basename(spec)
            for ext in (".gz",):
                name = name.removesuffix(ext)
            name = os.path.splitext(name)[0] or name
        named.append((name, path))
    names = [n for n, _ in named]
    if len(set(names)) < len(names):
        named = [(path if names.count(n) > 1 else n, path) for n, path in named]
    out: dict = {}
    for name, path in named:
        if name in out:
            raise InputError(f"run {path!r} is given twice")
        out[name] = path
    return out


def _cli_groups(specs: list[str]) -> dict:
    """``{name: path or [paths]}`` for --group: NAME=PATH arguments with one NAME are one
    system's runs in the order given, NAME=PATTERN adds every file the glob pattern matches
    in sorted order, and a bare PATH is a system of one run named after its file."""
    import glob

    out: dict = {}
    for spec in specs:
        if "=" in spec and not os.path.exists(spec):
            name, path = spec.split("=", 1)
            paths = [path]
            if glob.has_magic(path) and not os.path.exists(path):
                paths = sorted(glob.glob(path))
                if not paths:
                    raise InputError(f"run {name!r}: no file matches {path!r}")
            if name in out and not isinstance(out[name], list):
                raise InputError(f"run {name!r} is given twice")
            given = out.setdefault(name, [])
            for path in paths:
                if path in given:
                    raise InputError(f"run {path!r} is given twice for {name!r}")
                given.append(path)
        else:
            ((name, path),) = _cli_names([spec]).items()
            if name in out:
                raise InputError(f"run {name!r} is given twice; give a system's runs as "
                                 "NAME=PATH, with one NAME for all of them")
            out[name] = path
    return {name: paths[0] if isinstance(paths, list) and len(paths) == 1 else paths
            for name, paths in out.items()}


def _run_compare(args) -> int:
    import csv
    import sys

    from ._output import write_json
    from .ranking import Qrels

    runs = _cli_names(args.runs, args.group)
    correction = args.correction or ("none" if args.test == "tukey" else "holm")
    qrels = Qrels.from_file(args.qrels)
    result = compare(qrels, runs, args.m or ["map", "ndcg_cut_10", "P_10", "recall_100"],
                     baseline=args.baseline, test=args.test, correction=correction,
                     alpha=args.alpha, n_resamples=args.resamples, seed=args.seed,
                     queries="qrels" if args.c else "run", ci=args.ci,
                     group=args.group or "seeds", workers=args.workers)
    if args.o == "json":
        write_json(result.to_dict())
    elif args.o == "csv":
        records = result.to_records()
        writer = csv.DictWriter(sys.stdout, fieldnames=list(records[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
    elif args.o == "markdown":
        sys.stdout.write(result.to_markdown(intervals=args.mean_ci) + "\n")
    elif args.o == "latex":
        sys.stdout.write(result.to_latex(intervals=args.mean_ci))
    else:
        sys.stdout.write(result.to_text(intervals=args.mean_ci) + "\n")
    if args.plot:
        # a curve per single run (a system of several runs has no one ranking to draw)
        plot_precision_recall(qrels, {name: run for name, run in runs.items()
                                      if not isinstance(run, list)}, path=args.plot,
                              queries="qrels" if args.c else "run")
    if args.plot_diff:
        result.plot_differences(path=args.plot_diff)
    return 0
