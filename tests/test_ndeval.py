"""ndeval (the TREC Web track's diversity measures): the specification against ndeval's
recorded output.
"""

from pathlib import Path

import pytest

from qafast.reference import diversity as spec

DATA = Path(__file__).parent / "data" / "ndeval"
GOLDEN = [
    ("out.default", []),
    ("out.c.alpha0.25.beta0.8", ["-c", "-alpha", "0.25", "-beta", "0.8"]),
    ("out.traditional.M10", ["-traditional", "-M", "10"]),
    ("out.c.risk1", ["-c", "-baseline", "{baseline}", "-riskAlpha", "1"]),
]


@pytest.mark.parametrize("expected, options", GOLDEN)
def test_specification_prints_what_ndeval_printed(expected, options):
    baseline = (DATA / "baseline.txt").read_bytes() if "-baseline" in options else None
    label, rows, amean = spec.ndeval_values(
        (DATA / "qrels.txt").read_bytes(), (DATA / "run.txt").read_bytes(),
        alpha=0.25 if "-alpha" in options else 0.5, beta=0.8 if "-beta" in options else 0.5,
        traditional="-traditional" in options, all_topics="-c" in options,
        depth=10 if "-M" in options else 0, baseline=baseline,
        risk_alpha=1.0 if baseline else 0.0, risk_alpha_text="1")
    assert spec.format_report(label, rows, amean) == (DATA / expected).read_bytes()
