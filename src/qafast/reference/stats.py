"""Specification of the paired significance tests of :func:`qafast.compare`, in plain Python.

Slow on purpose: every sign vector enumerated, every p-value adjusted in the textbook order.
The kernels and :mod:`qafast.comparison` are tested against these definitions.
"""

from __future__ import annotations

import itertools
import math

_MASK = (1 << 64) - 1

#: Two sums of signed differences closer than this fraction of sum(|d|) are taken as equal
#: (summing the same numbers in another order moves the sum by far less).
TIE_TOLERANCE = 1e-10


def randomization_exact(diffs: list[float]) -> float:
    """Fisher's paired randomization test by enumerating all 2**n sign vectors: the fraction
    of them whose |sum of signed differences| is at least the observed |sum| (the observed
    one included), sums within ``TIE_TOLERANCE * sum(|d|)`` counting as equal."""
    observed = abs(sum(diffs))
    tolerance = TIE_TOLERANCE * sum(abs(d) for d in diffs)
    hits = 0
    total = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(diffs)):
        s = abs(sum(x * d for x, d in zip(signs, diffs)))
        hits += s >= observed - tolerance
        total += 1
    return hits / total


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & _MASK


def xoshiro_stream(seed: int, stream: int):
    """The generator of resample ``stream``: xoshiro256** (Blackman and Vigna) whose state
    is four splitmix64 outputs from a start mixing ``seed`` and ``stream``."""
    sm = _mix64((seed + 0x9E3779B97F4A7C15) & _MASK) ^ _mix64(
        (stream * 0xD1B54A32D192ED03 + 0x8BB84B93962EACC9) & _MASK)
    s = []
    for _ in range(4):
        sm = (sm + 0x9E3779B97F4A7C15) & _MASK
        s.append(_mix64(sm))
    while True:
        result = (_rotl((s[1] * 5) & _MASK, 7) * 9) & _MASK
        t = (s[1] << 17) & _MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        yield result


def randomization_monte_carlo(diffs: list[float], n_resamples: int, seed: int) -> float:
    """The Monte Carlo randomization test as qafast draws it: resample r keeps the sign of
    query q when bit q % 64 of the (q // 64)-th word of stream r is set, and flips it
    otherwise; p = (resamples reaching the observed |sum|) / n_resamples."""
    observed = abs(sum(diffs))
    tolerance = TIE_TOLERANCE * sum(abs(d) for d in diffs)
    hits = 0
    for r in range(n_resamples):
        words = xoshiro_stream(seed, r)
        word = 0
        s = 0.0
        for q, d in enumerate(diffs):
            if q % 64 == 0:
                word = next(words)
            s += d if (word >> (q % 64)) & 1 else -d
        hits += abs(s) >= observed - tolerance
    return hits / n_resamples


def adjust(p_values: list[float], method: str) -> list[float]:
    """Adjusted p-values of one family of tests, in the input order.

    ``bonferroni``: min(1, m p). ``holm``: the i-th smallest (1-based) times m - i + 1,
    then a running maximum. ``holm-sidak``: 1 - (1 - p)**(m - i + 1) (as expm1 and log1p, which keep
    the digits of a small p), then a running maximum. ``bh`` (Benjamini-Hochberg): the i-th smallest times m / i, then a running
    minimum from the largest down. ``by`` (Benjamini-Yekutieli): as ``bh``, each product
    also times 1 + 1/2 + ... + 1/m. ``none``: unchanged.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [0.0] * m
    if method == "none":
        return list(p_values)
    if method == "bonferroni":
        return [min(1.0, p * m) for p in p_values]
    if method in ("holm", "holm-sidak"):
        running = 0.0
        for rank, i in enumerate(order):
            k = m - rank
            p = p_values[i]
            if method == "holm":
                a = min(1.0, p * k)
            else:
                a = 1.0 if p >= 1.0 else -math.expm1(k * math.log1p(-p))
            running = max(running, a)
            out[i] = running
        return out
    if method in ("bh", "by"):
        factor = math.fsum(1 / k for k in range(1, m + 1)) if method == "by" else 1.0
        running = 1.0
        for rank in range(m - 1, -1, -1):
            i = order[rank]
            running = min(running, p_values[i] * m / (rank + 1) * factor)
            out[i] = running
        return out
    raise ValueError(f"unknown correction {method!r}")


def bootstrap_draws(n: int, seed: int, stream: int) -> list[int]:
    """The query indices resample ``stream`` of qafast's bootstrap draws from ``n`` queries:
    each index comes from the next 32-bit half (high half first) of the stream's words,
    times n, keeping the top 32 bits of the product, and a half whose low 32 bits fall
    below 2**32 mod n is rejected (Lemire's unbiased method)."""
    threshold = (2**32 - n) % n
    halves = (h for word in xoshiro_stream(seed, stream) for h in (word >> 32,
                                                                   word & 0xFFFFFFFF))
    out: list[int] = []
    while len(out) < n:
        product = next(halves) * n
        if product & 0xFFFFFFFF >= threshold:
            out.append(product >> 32)
    return out


def bootstrap_mean_interval(values: list[float], n_resamples: int, seed: int,
                            alpha: float) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of ``values`` at level 1 - alpha:
    resample r takes the values at :func:`bootstrap_draws` (n, seed, r), added in that
    order and divided by n; the bounds are the alpha/2 and 1 - alpha/2 quantiles of the
    ``n_resamples`` means, interpolated linearly between order statistics (numpy's
    default)."""
    n = len(values)
    means = []
    for r in range(n_resamples):
        total = 0.0
        for q in bootstrap_draws(n, seed, r):
            total += values[q]
        means.append(total / n)
    means.sort()

    def quantile(p: float) -> float:
        h = (len(means) - 1) * p
        lo = math.floor(h)
        hi = min(lo + 1, len(means) - 1)
        return means[lo] + (h - lo) * (means[hi] - means[lo])

    return quantile(alpha / 2), quantile(1 - alpha / 2)
