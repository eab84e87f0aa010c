"""Run ir_measures' own test suite with qafast's provider in place of pytrec_eval's, judged's
and msmarco's, by hand (CI has no checkout of ir_measures):

    git clone https://github.com/terrierteam/ir_measures /tmp/ir_measures
    PYTHONPATH=src python tests/peer_ir_measures_suite.py /tmp/ir_measures

Each call a test makes to one of those providers goes to qafast's provider when qafast computes
every measure of the call, else to the original; cwl_eval's calls go to qafast for its C/W/L
models (RBP, BPM, SDCG, NERR8-11, INST, INSQ) only; the other providers (pyndeval,
gdeval, compat, ...) are untouched. It prints unittest's summary and the measures qafast
computed. (gdeval's tests stay with gdeval.pl: it prints 5 decimals, which the tests compare to
the last digit, and its nDCG@k is ir_measures' nDCG(dcg='exp-log2')@k.)
"""

import sys
import unittest

import ir_measures
from ir_measures import providers

from qafast._measure_parser import parse_measures
from qafast.integrations.ir_measures import QafastProvider

SWAPPED = ("pytrec_eval", "judged", "msmarco")


class _Either:
    """A provider that hands a call to qafast when qafast computes all its measures."""

    def __init__(self, original, qafast, used, accepts=lambda measure: True):
        self.original, self.qafast, self.used = original, qafast, used
        self.accepts = accepts

    def _pick(self, measures):
        if all(self.qafast.supports(m) and self.accepts(m) for m in measures):
            self.used.update(map(str, measures))
            return self.qafast
        return self.original

    def iter_calc(self, measures, qrels, run):
        measures = list(measures)
        return self._pick(measures).iter_calc(measures, qrels, run)

    def calc_aggregate(self, measures, qrels, run):
        measures = list(measures)
        return self._pick(measures).calc_aggregate(measures, qrels, run)

    def calc(self, measures, qrels, run):
        measures = list(measures)
        return self._pick(measures).calc(measures, qrels, run)

    def evaluator(self, measures, qrels):
        measures = list(measures)
        return self._pick(measures).evaluator(measures, qrels)

    def __getattr__(self, name):
        return getattr(self.original, name)


def _cwl_model(measure) -> bool:
    """cwl_eval's calls go to qafast for its C/W/L models only: its P, RR and AP are cwl_eval's
    own definitions, and qafast reads those names as trec_eval's."""
    return parse_measures([measure])[0].family.startswith("cwl_")


def main(checkout: str) -> int:
    qafast, used = QafastProvider(), set()
    for name in SWAPPED:
        setattr(ir_measures, name, _Either(getattr(ir_measures, name), qafast, used))
    ir_measures.cwl_eval = _Either(ir_measures.cwl_eval, qafast, used, _cwl_model)
    original = providers.PytrecEvalProvider
    providers.PytrecEvalProvider = lambda: _Either(original(), qafast, used)
    suite = unittest.defaultTestLoader.discover(f"{checkout}/tests", top_level_dir=checkout)
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    print(f"measures computed by qafast ({len(used)}):", ", ".join(sorted(used)))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
