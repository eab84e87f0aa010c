"""Exactly rounded sums: the accumulator behind every mean that may be split across work.

A sum is kept as a fixed-point integer spread over 68 limbs of 32 bits (``int64`` each; bit 0
is worth 2**-1074, so every finite double is an integer in these units), plus a float for
infinities and NaNs. Adding values, adding accumulators (merges, ``all_reduce``) and the
order of both never change the integer; :func:`rounded` rounds it to the nearest double once.
So a sum over batches, ranks or partitions, merged in any order, has the bits of the sum of
all values at once, which is what ``math.fsum`` returns.
"""

from __future__ import annotations

import numpy as np

from . import _kernels

#: limbs per accumulator row (``_stream_kernels.pxi``)
LIMBS = 68
_LIMB_BITS = 32
_SCALE = 1 << 1074


def new(columns: int) -> tuple[np.ndarray, np.ndarray]:
    """Empty accumulators for ``columns`` sums: (limbs, non-finite sums)."""
    return np.zeros((columns, LIMBS), dtype=np.int64), np.zeros(columns, dtype=np.float64)


def add(values: np.ndarray, limbs: np.ndarray, special: np.ndarray) -> None:
    """Add column j of the 2-d ``values`` into accumulator j."""
    _kernels.exact_accumulate(np.ascontiguousarray(values, dtype=np.float64), limbs, special)


def merge(limbs: np.ndarray, special: np.ndarray, other_limbs: np.ndarray,
          other_special: np.ndarray) -> None:
    """Add another set of accumulators into these (in place)."""
    limbs += other_limbs
    special += other_special
    _kernels.exact_normalize(limbs)


def is_normal(limbs: np.ndarray) -> bool:
    """Whether every limb but the top one is in [0, 2**32), as the kernels leave them."""
    low = limbs[:, :-1]
    return bool(((low >= 0) & (low < (1 << _LIMB_BITS))).all())


def as_integers(limbs: np.ndarray) -> list[int]:
    """Each normal accumulator row as the integer it holds, in units of 2**-1074."""
    low = limbs[:, :-1].astype("<u4").tobytes()  # every row's low limbs, one row after another
    width = 4 * (LIMBS - 1)
    return [int.from_bytes(low[i * width:(i + 1) * width], "little")
            + (int(top) << (_LIMB_BITS * (LIMBS - 1)))
            for i, top in enumerate(limbs[:, -1].tolist())]


def units(x: float) -> int:
    """The finite double ``x`` in units of 2**-1074: an integer, exactly."""
    numerator, denominator = float(x).as_integer_ratio()  # denominator: a power of 2
    return numerator * (_SCALE // denominator)


def rounded(limbs: np.ndarray, special: np.ndarray) -> list[float]:
    """Each accumulator's sum, rounded once to the nearest double."""
    limbs = np.array(limbs, dtype=np.int64, copy=True)
    _kernels.exact_normalize(limbs)
    out = []
    for total, sp in zip(as_integers(limbs), special.tolist()):
        if sp != 0.0:  # an infinity or NaN was added: it decides the sum
            out.append(float(sp))
            continue
        try:
            out.append(total / _SCALE)  # int / int is correctly rounded
        except OverflowError:
            out.append(float("inf") if total > 0 else float("-inf"))
    return out


def column_sums(values: np.ndarray) -> list[float]:
    """The exactly rounded sum of each column of the 2-d ``values``."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    limbs, special = new(values.shape[1])
    _kernels.exact_accumulate(values, limbs, special)
    return rounded(limbs, special)
