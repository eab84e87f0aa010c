"""atheris entry point over every fuzz target in ``targets.py``::

    PYTHONPATH=src python fuzz/fuzz_readers.py -atheris_runs=20000
    PYTHONPATH=src python fuzz/fuzz_readers.py -max_total_time=60 corpus_dir/

The first byte of each input picks the target, the rest is its input; the seed corpus (the
files shipped in ``src/qafast/data`` and small valid files of every format) is written to
a temporary directory and given to libFuzzer unless a corpus directory is named. A crash
or an exception other than a qafast error is reported by atheris with the input that caused
it; turn it into a regression test in ``tests/test_bad_input.py``.
"""

from __future__ import annotations

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import atheris

with atheris.instrument_imports():
    import targets

NAMES = sorted(targets.TARGETS)


def one_input(data: bytes) -> None:
    if not data:
        return
    targets.run_target(NAMES[data[0] % len(NAMES)], data[1:])


def _seed_corpus() -> str:
    directory = tempfile.mkdtemp(prefix="qafast-fuzz-corpus-")
    for name, seeds in targets.SEEDS.items():
        for i, seed in enumerate(seeds):
            with open(os.path.join(directory, f"{name}-{i}"), "wb") as f:
                f.write(bytes([NAMES.index(name)]) + seed)
    return directory


def main() -> None:
    argv = list(sys.argv)
    if not any(not a.startswith("-") for a in argv[1:]):
        argv.append(_seed_corpus())
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
