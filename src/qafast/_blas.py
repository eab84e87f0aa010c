"""What the command line sets up before numpy is first imported.

Its own module, below :mod:`qafast.cli` and :mod:`qafast._program`, because both entry points
(``qafast`` / ``python -m qafast`` and ``python -m qafast.cli``) call it before anything imports
numpy, and :mod:`qafast._program` imports :mod:`qafast.cli`.
"""

from __future__ import annotations

import os
import sys


def quiet_blas() -> None:
    """Start numpy's OpenBLAS with one thread, unless the user chose a number.

    The command line multiplies no matrices, while OpenBLAS starts a thread per core when
    numpy is imported, which spins for about 0.1 s of CPU time: on a two-core machine, time
    taken from the threads reading the qrels and the first blocks of the run.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
