"""The measure table (``qafast._measures``) is the one declaration of every ranking family, and
these tests are derived from it, row by row: every row is complete, the kernel codes the build
generated are the table's, every name a row lists parses to that row's family, and the kernel
computes each family exactly as the plain-Python specification the row names, on random
tie-heavy input, for every name of the family."""

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qafast
from qafast import _measures as table
from qafast import reference
from qafast._measure_parser import Column, listed_names, parse_measure
from qafast.reference import ranking as spec
from test_measure_names import cases, close  # random tie-heavy runs, grades up to 4 (ERR's)
from _examples import examples

KERNEL_ROWS = [row for row in table.TABLE if row.kernel is not None]


@pytest.mark.parametrize("row", table.TABLE, ids=lambda r: r.name)
def test_every_row_is_complete(row):
    assert row.params in ("none", "cut", "fcut", "floats", "pairs")
    assert row.summary in ("mean", "sum", "gm")
    assert row.origin in ("trec_eval", "qafast", "ranx", "ir_measures", "torchmetrics")
    assert row.since in ("9.0.8", "10.0")
    assert row.group in table.GROUPS
    assert row.values in ("count", "ratio", "ratio or nan", "rounded ratio",
                          "rounded ratio or nan", "log", "any")
    assert row.title and row.definition
    assert set(row.nicknames) <= set(table.NICKNAMES)
    assert {n.tool for n in row.names} <= set(table.TOOLS) - {"trec_eval"}
    assert row.kernel in ("", None) or table.BY_NAME[row.kernel].kernel == ""
    # torchmetrics' rule for scores of 0 or less: only where a torchmetrics class is named
    assert row.torchmetrics_nonpositive in ("", "not relevant", "not retrieved")
    assert not row.torchmetrics_nonpositive or row.spelled("torchmetrics")
    if row.kernel is not None:
        assert row.agrees and set(row.agrees) <= set(table.AGREEMENT)
    if row.subtopics:
        # the diversity rows: ndeval's rules, specified in qafast.reference.diversity and
        # tested in tests/test_diversity_measures.py
        assert row.kernel is None and not row.reference
        assert row.agrees and set(row.agrees) <= set(table.AGREEMENT)
    elif row.name != "runid":
        assert callable(getattr(spec, row.reference)), row.reference


def test_the_build_wrote_the_tables_codes():
    generated = Path(qafast.__file__).parent / "_measure_codes.pxi"
    if not generated.exists():
        pytest.skip("an installed qafast: the codes were compiled in, their source is not here")
    assert generated.read_text() == table.kernel_constants()
    codes = re.findall(r"M_(\w+) = (\d+)", generated.read_text())
    assert {name: int(code) for name, code in codes} == {
        row.name.upper(): table.CODES[row.name] for row in table.TABLE if row.kernel == ""}


def test_the_specification_registry_is_the_tables():
    assert spec.FAMILIES == tuple(row.name for row in table.TABLE if row.reference)


def concrete(name: str) -> str:
    """A name the user types, from a table pattern: k = 3, N = 2, r = 0.5, p = 0.8."""
    return (name.replace("@k", "@3").replace("@r", "@0.5").replace("-lN", "-l2")
            .replace("rel=N", "rel=2").replace("rbp.p", "rbp.8").replace("rbp@p", "rbp@8")
            .replace("top_k=k", "top_k=3"))


def names_of(row) -> list[str]:
    """Every name of the family: its trec_eval-style name and each tool's spellings."""
    listed = listed_names(row)
    return [concrete(n) for tool in ("trec_eval", "qafast", "ranx", "ir_measures")
            for n in listed[tool]]


@pytest.mark.parametrize("row", KERNEL_ROWS, ids=lambda r: r.name)
def test_every_listed_name_parses_to_its_row(row):
    assert names_of(row) or row.origin != "trec_eval", row.name
    for name in names_of(row):
        assert {c.family for c in parse_measure(name)} == {row.name}, name


# ---------------------------------------------------------------------------------------------
# The kernel against the specification, family by family

def spec_param(c: Column):
    """The parameter ``reference.ranking.measure`` takes for column ``c``, read off the row."""
    row = table.BY_NAME[c.family]
    whole = c.k >= table.NO_CUTOFF
    if c.family == "graded_dcg":
        flags = int(c.x)
        return (None if whole else c.k, bool(flags & table.DCG_EXP),
                bool(flags & table.DCG_NORMALISED))
    if c.family.startswith("cwl_"):  # the C/W/L models: (k, p or T, min_rel, max_rel)
        return (None if row.params != "cut" else c.k, c.x) + (tuple(c.keys) or (None, None))
    if row.origin not in ("trec_eval", "qafast"):  # the other tools' definitions
        if row.params == "cut":
            return None if whole else c.k
        return c.x if c.family == "rbp_graded" else None
    if row.params == "cut":
        return c.k
    if row.params == "fcut":
        return c.x
    if row.params == "floats":
        return c.x if row.arity == 1 else tuple(c.values)
    if row.params == "pairs":
        pairs = tuple(zip(c.keys, c.values))
        if row.persistence:
            return pairs + (("p", c.x),) if pairs else c.x
        return pairs or None
    return None


@pytest.mark.parametrize("row", KERNEL_ROWS, ids=lambda r: r.name)
def test_the_kernel_computes_what_the_specification_of_its_row_defines(row):
    columns = [c for name in names_of(row) for c in parse_measure(name)]

    @settings(max_examples=examples(50), deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=cases(), level=st.sampled_from([1, 2]))
    def check(case, level):
        qrels, run = case
        got = qafast.evaluate(qrels, run, [c.name for c in columns], relevance_level=level,
                              per_query=True)
        for c in columns:
            param = spec_param(c)
            want = reference.evaluate(qrels, run, [(c.family, param)],
                                      relevance_level=c.rel if c.rel is not None else level,
                                      version="9.0.8" if c.v9 else "10.0")
            for q in want:
                assert close(got[q][c.name], want[q][(c.family, param)]), (
                    q, c.name, got[q][c.name], want[q][(c.family, param)])

    check()
