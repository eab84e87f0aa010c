"""Hypothesis-driven fuzzing of every reader and of the array and dict entry points.

Each target (``fuzz/targets.py``) takes bytes: random ones, and the seed files of its format
with bytes flipped, cut, repeated or inserted. The only accepted outcomes are a result or a
:class:`qafast.QafastError`. ``QAFAST_FUZZ_EXAMPLES`` sets the number of examples per target
(50 by default; CI runs more, against the bounds-checked build); ``fuzz/fuzz_readers.py`` is
the atheris entry point over the same targets.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))

import targets
from _examples import examples

# 50 by default (each a few milliseconds), 100 under --hypothesis-profile=ci; .ci/run's
# hardening block sets 600
EXAMPLES = int(os.environ.get("QAFAST_FUZZ_EXAMPLES") or examples(50))

_BYTES = st.sampled_from([b"\x00", b"\n", b"\r", b"\t", b" ", b"#", b"\xff", b"\x1f\x8b",
                          b"nan", b"inf", b"-", b"1e999", b"9" * 30, b"[", b"{", b'"', b"\\"])


@st.composite
def mutated(draw, seeds):
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.integers(0, 4))
        at = draw(st.integers(0, len(data)))
        if op == 0 and data:  # flip a byte
            i = min(at, len(data) - 1)
            data[i] = draw(st.integers(0, 255))
        elif op == 1:  # cut
            data = data[:at]
        elif op == 2:  # insert a token parsers care about
            data[at:at] = draw(_BYTES)
        elif op == 3 and data:  # repeat a slice
            j = draw(st.integers(at, min(len(data), at + 64)))
            data[at:at] = data[at:j] * draw(st.integers(1, 4))
        else:  # delete a slice
            j = draw(st.integers(at, min(len(data), at + 16)))
            del data[at:j]
    return bytes(data)


def inputs(name):
    return st.one_of(mutated(targets.SEEDS[name]), st.binary(max_size=256))


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
def test_fuzz_target(name):
    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=inputs(name))
    def run(data):
        targets.run_target(name, data)

    run()


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
def test_seeds_give_results(name):
    # the seeds are valid: each gives a result, not an error
    for seed in targets.SEEDS[name]:
        out = targets.run_target(name, seed)
        assert not isinstance(out, Exception), (name, out)
