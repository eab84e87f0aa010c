"""ndeval (the TREC Web track's diversity measures): its recorded output, the compiled path
against the specification on random files, pyndeval's numbers, and the inputs qafast refuses.

tests/fuzz_ndeval.py compares ``qafast ndeval`` with the ndeval program itself, by hand.
"""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qafast
from qafast import _kernels, ndeval_eval
from qafast.errors import FormatError, InputError
from qafast.reference import diversity as spec

DATA = Path(__file__).parent / "data" / "ndeval"
GOLDEN = [
    ("out.default", []),
    ("out.c.alpha0.25.beta0.8", ["-c", "-alpha", "0.25", "-beta", "0.8"]),
    ("out.traditional.M10", ["-traditional", "-M", "10"]),
    ("out.c.risk1", ["-c", "-baseline", "{baseline}", "-riskAlpha", "1"]),
]


@pytest.mark.parametrize("expected, options", GOLDEN)
def test_cli_prints_what_ndeval_printed(expected, options):
    options = [o.format(baseline=DATA / "baseline.txt") for o in options]
    out = subprocess.run([sys.executable, "-m", "qafast", "ndeval", *options,
                          str(DATA / "qrels.txt"), str(DATA / "run.txt")],
                         capture_output=True, check=True)
    assert out.stdout == (DATA / expected).read_bytes()


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


def test_api_returns_the_printed_numbers_unrounded():
    result = qafast.ndeval(DATA / "qrels.txt", DATA / "run.txt", alpha=0.25, beta=0.8,
                           all_topics=True)
    printed = (DATA / "out.c.alpha0.25.beta0.8").read_text().splitlines()
    header = printed[0].split(",")[2:]
    assert list(result) == [line.split(",")[1] for line in printed[1:]]
    for line in printed[1:]:
        fields = line.split(",")
        for name, text in zip(header, fields[2:]):
            value = result[fields[1]][name]
            assert (text == "-nan") if math.isnan(value) else f"{value:.6f}" == text


def _values(qrels, run, baseline=None, **options):
    return ndeval_eval._values(qrels, run, ("qrels", "run", "baseline"), baseline, **options)


def _same(a, b):
    (la, ra, ma), (lb, rb, mb) = a, b
    assert la == lb
    assert [t for t, _ in ra] == [t for t, _ in rb]
    for x, y in zip([v for _, r in ra for v in r] + ma, [v for _, r in rb for v in r] + mb):
        assert (math.isnan(x) and math.isnan(y)) or x == y


# -- the compiled path against the specification ----------------------------------------------

_DOCS = st.sampled_from(["d1", "d2", "d3", "D1", "doc-\u00e9", "x", "\u4e2d", "d10"])
_QREL = st.tuples(st.sampled_from([1, 2, 7, 51]), st.sampled_from([0, 1, 2, 3, 40, 999]),
                  _DOCS, st.sampled_from([0, 0, 1, 1, 2, 7, 100000]))


@st.composite
def _inputs(draw):
    qrels = draw(st.lists(_QREL, min_size=1, max_size=25))
    run = []
    for topic in draw(st.lists(st.sampled_from([1, 2, 7, 8, 51]), min_size=1, max_size=4,
                               unique=True)):
        docs = draw(st.lists(_DOCS, max_size=8, unique=True)) or ["d1"]
        ranks = draw(st.permutations(range(1, 30)))[:len(docs)]
        prefix = draw(st.sampled_from(["", "", "wt09-"]))
        for doc, rank in zip(docs, ranks):
            score = draw(st.sampled_from(["1", "2", "2.0", "0.5"]))
            run.append(f"{prefix}{topic} Q0 {doc} {rank} {score} r")
    q = "".join(f"{t} {s} {d} {j}\n" for t, s, d, j in qrels).encode()
    return q, ("\n".join(run) + "\n").encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_inputs(), st.sampled_from([0.0, 0.5, 0.9, 1.0]), st.sampled_from([0.0, 0.5, 1.0]),
       st.booleans(), st.booleans(), st.sampled_from([0, 1, 3]))
def test_compiled_path_is_the_specification(data, alpha, beta, traditional, all_topics, depth):
    q, r = data
    options = dict(alpha=alpha, beta=beta, traditional=traditional, all_topics=all_topics,
                   depth=depth)
    expected = spec.ndeval_values(q, r, **options, risk_alpha=0.0, risk_alpha_text="0")
    _same(_values(q, r, **options, risk_alpha=0.0, risk_alpha_text="0"), expected)


@settings(max_examples=40, deadline=None)
@given(_inputs(), _inputs())
def test_baseline_matches_the_specification(data, base):
    q, r = data
    for all_topics in (False, True):
        options = dict(alpha=0.5, beta=0.5, traditional=False, all_topics=all_topics, depth=0,
                       risk_alpha=2.0, risk_alpha_text="2")
        _same(_values(q, r, base[1], **options),
              spec.ndeval_values(q, r, baseline=base[1], **options))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), max_size=4, unique=True), max_size=12),
       st.lists(st.integers(-1, 11), max_size=30), st.integers(1, 60),
       st.sampled_from([0.0, 0.3, 0.5, 1.0]), st.sampled_from([0.0, 0.5, 1.0]))
def test_kernel_at_any_depth_is_the_specification(docs, ranking, k, alpha, beta):
    """Any k, k beyond the ranking, unjudged documents (-1), subtopics with no relevant
    document, an empty ranking."""
    subtopics = 6
    rels = [sorted(d) for d in docs]
    ranking = [d if d < len(rels) else -1 for d in ranking]
    topic = spec.Topic(subtopics=subtopics)
    topic.nrel_sub = [sum(1 for d in rels if j in d) for j in range(subtopics)]
    listed = [[1 if j in rels[d] else 0 for j in range(subtopics)] if d >= 0 else None
              for d in ranking]
    want = spec.topic_values(listed, topic, alpha, beta, k)
    rel_offsets = np.concatenate(([0], np.cumsum([len(d) for d in rels]))).astype(np.int64)
    curves, scalars = np.empty((1, 4 * k)), np.empty((1, 2))
    _kernels.ndeval_topics(np.array([0, len(ranking)], np.int64), np.array(ranking, np.int64),
                           np.zeros(1, np.int64), rel_offsets,
                           np.array([j for d in rels for j in d], np.int64),
                           np.array([subtopics], np.int64), np.array([0, subtopics], np.int64),
                           np.array(topic.nrel_sub, np.int64), alpha, beta, curves, scalars)
    got = curves[0]
    assert got[:k].tolist() == want["err"]
    assert got[k:2 * k].tolist() == want["dcg"]
    assert got[2 * k:3 * k].tolist() == want["precision"]
    assert got[3 * k:].tolist() == want["strec"]
    assert scalars[0].tolist() == [want["nrbp"], want["map_ia"]]


def test_ideal_ranking_breaks_ties_to_the_greatest_docno():
    qrels = b"1 1 a 1\n1 1 b 1\n1 2 c 1\n1 2 d 0\n"
    topic = spec.read_qrels(qrels)[1]
    assert spec.ideal_order(topic, 0.5) == [b"c", b"b", b"a", b"d"]
    order = np.empty(4, np.int64)
    _kernels.ndeval_ideal(np.array([0, 4], np.int64), np.array([0, 1, 2, 3, 3], np.int64),
                          np.array([1, 1, 2], np.int64), np.array([3], np.int64), 0.5, order)
    assert order.tolist() == [2, 1, 0, 3]



@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.integers(0, 4), max_size=3, unique=True), min_size=1, max_size=14),
       st.sampled_from([0.0, 0.5, 0.9, 1.0]))
def test_ideal_kernel_is_the_specification(rels, alpha):
    """Documents relevant to no subtopic (never scored by the kernel) among relevant ones,
    ties at score 0 (alpha 1) between the two kinds."""
    subtopics = 5
    docnos = [b"d%02d" % i for i in range(len(rels))]
    topic = spec.Topic(subtopics=subtopics)
    topic.rel = {d: [1 if j in r else 0 for j in range(subtopics)] for d, r in zip(docnos, rels)}
    rel_offsets = np.concatenate(([0], np.cumsum([len(r) for r in rels]))).astype(np.int64)
    order = np.empty(len(rels), np.int64)
    _kernels.ndeval_ideal(np.array([0, len(rels)], np.int64), rel_offsets,
                          np.array([j for r in rels for j in sorted(r)], np.int64),
                          np.array([subtopics], np.int64), alpha, order)
    assert [docnos[i] for i in order.tolist()] == spec.ideal_order(topic, alpha)


def test_judged_rows_and_duplicates_kernels():
    # two rankings of topics 1 and 0 of the qrels; codes 0..5
    code = np.array([3, 0, 5, 1, 3, 2], np.int64)
    rows = np.empty(6, np.int64)
    _kernels.ndeval_judged_rows(np.array([0, 3, 6], np.int64), code, np.array([1, 0], np.int64),
                                np.array([0, 2, 4], np.int64),
                                np.array([1, 3, 0, 5], np.int64), 6, rows)
    assert rows.tolist() == [-1, 2, 3, 0, 1, -1]
    with pytest.raises(ValueError):
        _kernels.ndeval_judged_rows(np.array([0, 1], np.int64), np.array([6], np.int64),
                                    np.zeros(1, np.int64), np.array([0, 0], np.int64),
                                    np.zeros(0, np.int64), 6, np.empty(1, np.int64))
    topic = np.array([1, 1, 2, 2, 2], np.int64)
    assert not _kernels.ndeval_has_duplicate(topic, np.array([0, 1, 0, 1, 2], np.int64), 3)
    assert _kernels.ndeval_has_duplicate(topic, np.array([0, 1, 0, 2, 0], np.int64), 3)
    with pytest.raises(ValueError):
        _kernels.ndeval_has_duplicate(topic, np.array([0, 1, 0, 2, 3], np.int64), 3)

# -- ndeval's rules, and what qafast refuses --------------------------------------------------

def test_topic_without_relevant_document_has_nan_nnrbp_and_zeros():
    result = qafast.ndeval(b"1 1 d1 0\n", b"1 Q0 d1 1 1 r\n")
    assert math.isnan(result["1"]["nNRBP"]) and result["1"]["alpha-nDCG@20"] == 0.0


@pytest.mark.parametrize("qrels, run, line", [
    (b"1 1 d1 -1\n", b"1 Q0 d1 1 1 r\n", 1),      # a negative judgment
    (b"1 1 d1 1\n1 1 d2\n", b"1 Q0 d1 1 1 r\n", 2),
    (b"1 1 d1 1\n", b"1 Q0 d1 x 1 r\n", 1),       # a rank that is no number
    (b"1 1 d1 1\n", b"1 Q0 d1 1 1\n", 1),          # five fields
])
def test_lines_ndeval_rejects_name_file_and_line(qrels, run, line):
    with pytest.raises(FormatError) as e:
        qafast.ndeval(qrels, run)
    assert e.value.line == line


@pytest.mark.parametrize("run, text", [
    (b"1 Q0 d1 1 1 r\n1 Q0 d2 1 1 r\n", "duplicate rank (1) for topic 1"),
    (b"1 Q0 d1 1 1 r\n1 Q0 d1 2 1 r\n", "duplicate docno (d1) for topic 1"),
])
def test_duplicates_are_refused(run, text):
    with pytest.raises(FormatError, match=text.replace("(", r"\(").replace(")", r"\)")):
        qafast.ndeval(b"1 1 d1 1\n", run)


def test_options_out_of_range_are_refused():
    with pytest.raises(InputError):
        qafast.ndeval(b"1 1 d1 1\n", b"1 Q0 d1 1 1 r\n", alpha=1.5)
    with pytest.raises(InputError):
        qafast.ndeval(b"1 1 d1 1\n", b"1 Q0 d1 1 1 r\n", depth=0)


def test_pyndeval_gives_the_same_numbers():
    pyndeval = pytest.importorskip("pyndeval")
    qrels = [tuple(line.split()) for line in (DATA / "qrels.txt").read_text().splitlines()]
    qrels = [(t, s, d, int(j)) for t, s, d, j in qrels]
    lines = [line.split() for line in (DATA / "run.txt").read_text().splitlines()]
    # unique scores falling with the rank: pyndeval ranks by score
    run = [(t.split("-")[-1], d, 1000.0 - int(r)) for t, _, d, r, _, _ in lines]
    theirs = pyndeval.ndeval(qrels, run, alpha=0.25, beta=0.8)
    ours = qafast.ndeval(DATA / "qrels.txt", DATA / "run.txt", alpha=0.25, beta=0.8)
    assert set(theirs) == {t for t in ours if t != "amean" and t in {q[0] for q in qrels}}
    for topic, values in theirs.items():
        for name, value in values.items():
            assert ours[topic][name] == pytest.approx(value, rel=1e-12, abs=1e-15, nan_ok=True)


@pytest.mark.parametrize("name", ["alpha_nDCG(alpha=0.5)@20", "ERR_IA@20", "NRBP", "StRecall@10"])
def test_evaluate_asks_diversity_names_for_diversity_qrels(name):
    with pytest.raises(qafast.errors.InputTypeError, match="needs diversity qrels"):
        qafast.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, [name])
