"""Line numbers of a text file's data rows, kept as the places where they jump."""

from __future__ import annotations

import numpy as np


class LineNumbers:
    """The 1-based file line of each of ``n`` rows, without a column of them.

    Consecutive rows are usually consecutive lines; only the rows after a skipped comment
    or blank line (and row 0) are stored: ``rows`` (ascending, starting at 0 when ``n``)
    and their ``lines``. Row ``r``'s line is ``lines[k] + r - rows[k]`` for the last ``k``
    with ``rows[k] <= r``. Indexing with an integer gives that line; ``numpy.asarray``
    gives the column (int64), as does indexing with a slice or an array.

    Examples
    --------
    >>> import numpy as np
    >>> lines = LineNumbers(np.array([0, 3]), np.array([2, 7]), 5)
    >>> lines[1], lines[4]
    (3, 8)
    >>> np.asarray(lines).tolist()
    [2, 3, 4, 7, 8]
    """

    __slots__ = ("lines", "n", "rows")

    def __init__(self, rows: np.ndarray, lines: np.ndarray, n: int) -> None:
        self.rows = rows
        self.lines = lines
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            i = int(index)
            if i < 0:
                i += self.n
            if not 0 <= i < self.n:
                raise IndexError(f"row {int(index)} of {self.n}")
            k = int(np.searchsorted(self.rows, i, side="right")) - 1
            return int(self.lines[k]) + i - int(self.rows[k])
        return np.asarray(self)[index]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = np.arange(self.n, dtype=np.int64)
        if self.n:
            out += np.repeat(self.lines - self.rows, np.diff(self.rows, append=self.n))
        return out if dtype is None else out.astype(dtype, copy=False)

    def tolist(self) -> list[int]:
        return np.asarray(self).tolist()

    def __repr__(self) -> str:
        return f"LineNumbers({self.n} rows, {len(self.rows)} jumps)"
