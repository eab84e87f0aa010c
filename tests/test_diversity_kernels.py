"""The compiled pieces of the diversity measures' fast path against what they replace: the
greedy ideal ranking (one score per group of rows listing the same subtopics) against
the specification's full scan, the placement of judged documents in pyndeval's order against the
numpy path that sorts each query's scores, the radix sort of the qrels' keys against
numpy's stable argsort, and the relevant-subtopic tables against the numpy masks and
bincounts they replace."""
import numpy as np
import pytest
from _examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qafast import _kernels
from qafast import errors as qafast_errors
from qafast.diversity import _place_sorted
from qafast.reference import diversity as spec

SLOW = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# a topic: each judged document's subtopics (some relevant to none)
topics = st.lists(st.lists(st.lists(st.integers(0, 7), max_size=4, unique=True),
                           min_size=0, max_size=40), min_size=1, max_size=4)
alphas = st.one_of(st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.9, 1.0]),
                   st.floats(0.0, 1.0, allow_nan=False))


@settings(max_examples=examples(200), **SLOW)
@given(topics, alphas)
def test_ideal_kernel_is_the_specifications_full_scan(per_topic, alpha):
    """Several topics in one call, many documents of equal gain (ties to the greatest
    docno), gains that round (alpha 0.1, 0.3), and documents relevant to nothing."""
    subtopics = 8
    doc_offsets = np.concatenate(([0], np.cumsum([len(t) for t in per_topic]))).astype(np.int64)
    rels = [r for t in per_topic for r in t]
    rel_offsets = np.concatenate(([0], np.cumsum([len(r) for r in rels]))).astype(np.int64)
    rel_sub = np.array([j for r in rels for j in sorted(r)], np.int64)
    order = np.empty(len(rels), np.int64)
    _kernels.ndeval_ideal(doc_offsets, rel_offsets, rel_sub,
                          np.full(len(per_topic), subtopics, np.int64), alpha, order)
    for t, docs in enumerate(per_topic):
        docnos = [b"d%03d" % i for i in range(len(docs))]
        topic = spec.Topic(subtopics=subtopics)
        topic.rel = {d: [1 if j in r else 0 for j in range(subtopics)]
                     for d, r in zip(docnos, docs)}
        got = order[doc_offsets[t]:doc_offsets[t + 1]] - doc_offsets[t]
        assert [docnos[i] for i in got.tolist()] == spec.ideal_order(topic, alpha)


def test_ideal_kernel_outside_zero_one_keeps_the_full_scan():
    # alpha 2 flips each gain's sign at each use (and can overflow it to inf): outside
    # [0, 1] every row is scored at each rank, as the specification scores them
    rels = [[0], [0, 1], [1], []]
    rel_offsets = np.concatenate(([0], np.cumsum([len(r) for r in rels]))).astype(np.int64)
    order = np.empty(4, np.int64)
    _kernels.ndeval_ideal(np.array([0, 4], np.int64), rel_offsets,
                          np.array([j for r in rels for j in r], np.int64),
                          np.array([2], np.int64), 2.0, order)
    topic = spec.Topic(subtopics=2)
    topic.rel = {b"d%d" % i: [1 if j in r else 0 for j in range(2)] for i, r in enumerate(rels)}
    assert [b"d%d" % i for i in order.tolist()] == spec.ideal_order(topic, 2.0)


def _rank_judged_like(scores: list[float], docs: list[str], judged: dict) -> list[tuple]:
    """(1-based rank in trec_eval's order, row) of the judged documents of one query: score
    descending, then document id descending."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], _neg(docs[i])))
    return [(r + 1, judged[docs[i]]) for r, i in enumerate(order) if docs[i] in judged]


def _neg(s: str) -> tuple:
    return tuple(-ord(c) for c in s) + (1,)  # descending, a prefix after its extensions


queries = st.lists(st.tuples(
    st.lists(st.sampled_from([0.0, 1.0, 2.0, 2.5, -1.0]), max_size=12),
    st.integers(0, 12), st.booleans()), max_size=5)


@settings(max_examples=examples(200), **SLOW)
@given(queries, st.one_of(st.none(), st.integers(1, 6)), st.booleans())
def test_placing_judged_documents_is_the_sorted_path(per_query, max_docs, sort_scores):
    """Queries with heavy ties, queries missing from the run (an empty list), no judged
    document, a cut; scores written in descending order (the kernel's) or not (it refuses,
    and the numpy path sorts them)."""
    run_offsets, values, qpos, found_off, f_rank, f_row, count = [0], [], [], [0], [], [], []
    for q, (scores, n_judged, absent) in enumerate(per_query):
        if sort_scores:
            scores = sorted(scores, reverse=True)
        docs = [f"d{i:02d}" for i in range(len(scores))]
        judged = {d: 100 * q + i for i, d in enumerate(docs[::2][:n_judged])}
        if absent:
            qpos.append(-1)
            found_off.append(found_off[-1])
            count.append(0)
            continue
        qpos.append(len(run_offsets) - 1)
        values += scores
        run_offsets.append(len(values))
        found = _rank_judged_like(scores, docs, judged)
        f_rank += [r for r, _ in found]
        f_row += [row for _, row in found]
        count.append(len(found))
        found_off.append(len(f_rank))
    i64 = np.int64
    run_offsets, values = np.array(run_offsets, i64), np.array(values, np.float64)
    qpos, found_off, count = np.array(qpos, i64), np.array(found_off, i64), np.array(count, i64)
    f_rank, f_row = np.array(f_rank, np.int32), np.array(f_row, np.int32)
    run_len = np.diff(run_offsets)
    seg_len = np.array([run_len[p] if p >= 0 else 0 for p in qpos.tolist()], i64)
    length = seg_len if max_docs is None else np.minimum(seg_len, max_docs)
    offsets = np.zeros(len(qpos) + 1, i64)
    np.cumsum(length, out=offsets[1:])

    class Run:
        pass

    run = Run()
    run.offsets, run.values = run_offsets, values
    want = _place_sorted(run, qpos, seg_len, found_off, f_rank, f_row, count, count, offsets,
                         length)
    got = np.empty(int(offsets[-1]), i64)
    done = _kernels.ndeval_place_judged(run_offsets, values, qpos, found_off, f_rank, f_row,
                                        count, offsets, got)
    in_order = all((np.diff(values[a:b]) <= 0).all()
                   for a, b in zip(run_offsets[:-1], run_offsets[1:]))
    assert done == in_order
    if done:
        assert got.tolist() == want.tolist()


def test_placing_judged_documents_checks_its_arrays():
    i64 = np.int64
    args = dict(run_offsets=np.array([0, 2], i64), scores=np.array([1.0, 1.0]),
                qpos=np.array([0], i64), found_offsets=np.array([0, 1], i64),
                found_rank=np.array([3], np.int32), found_row=np.array([0], np.int32),
                found_count=np.array([1], i64), offsets=np.array([0, 2], i64))
    with pytest.raises(ValueError, match="rank out of range"):
        _kernels.ndeval_place_judged(*args.values(), np.empty(2, i64))
    args["found_rank"] = np.array([2], np.int32)
    with pytest.raises(ValueError, match="offsets out of range"):
        _kernels.ndeval_place_judged(*args.values(), np.empty(3, i64))
    args["offsets"] = np.array([0, 3], i64)
    with pytest.raises(ValueError, match="longer than"):
        _kernels.ndeval_place_judged(*args.values(), np.empty(3, i64))
    args["offsets"] = np.array([0, 2], i64)
    out = np.empty(2, i64)
    assert _kernels.ndeval_place_judged(*args.values(), out)
    assert out.tolist() == [0, -1]  # trec_eval's rank 2 of a tie of two is pyndeval's first
    args["scores"] = np.array([1.0, np.nan])
    assert not _kernels.ndeval_place_judged(*args.values(), out)


@settings(max_examples=examples(200), **SLOW)
@given(st.lists(st.one_of(st.integers(0, 5), st.integers(0, 2**62 - 1)), max_size=300))
def test_key_order_is_numpys_stable_argsort(keys):
    key = np.array(keys, np.int64)
    order = np.empty(len(key), np.int64)
    _kernels.stable_key_order(key, order)
    assert order.tolist() == np.argsort(key, kind="stable").tolist()


def test_key_order_refuses_negative_keys():
    with pytest.raises(ValueError):
        _kernels.stable_key_order(np.array([1, -1], np.int64), np.empty(2, np.int64))
    with pytest.raises(ValueError):
        _kernels.stable_key_order(np.array([1], np.int64), np.empty(2, np.int64))


@settings(max_examples=examples(60), **SLOW)
@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.sampled_from("12"),
                          st.integers(0, 2)), min_size=1, max_size=20),
       st.lists(st.tuples(st.sampled_from("abcdefghij"), st.sampled_from([0.0, 1.0, 2.0])),
                min_size=1, max_size=10, unique_by=lambda x: x[0]),
       st.randoms(use_true_random=False))
def test_evaluate_does_not_depend_on_the_runs_order(judged, ranked, rng):
    """A run written in score order takes the kernel's placement, the same run shuffled
    the numpy path that sorts it: the values agree to the last bit."""
    import qafast

    qrels: dict = {}
    for doc, sub, grade in judged:
        qrels.setdefault("q", {}).setdefault(sub, {})[doc] = grade
    in_order = dict(sorted(ranked, key=lambda x: -x[1]))
    shuffled = list(ranked)
    rng.shuffle(shuffled)
    measures = ["alpha_nDCG@3", "ERR_IA@5", "NRBP", "nNRBP", "AP_IA", "P_IA@2", "StRecall@4"]
    a = qafast.evaluate(qrels, {"q": in_order}, measures, per_query=True)
    b = qafast.evaluate(qrels, {"q": dict(shuffled)}, measures, per_query=True)
    assert a == b or all(np.array_equal(np.array(list(a[q].values())),
                                        np.array(list(b[q].values())), equal_nan=True)
                         for q in a)


def _spec_rankings(qrels: dict, run: dict, ids: list, max_docs, judged_only: bool) -> list:
    """Each evaluated query's ranking as rows, in plain Python: the run's documents by score
    descending, then id ascending (code point order), cut at ``max_docs``; a judged document
    as its row (the topics in order of first appearance, each topic's judged documents
    in id order), any other as -1 (left out with ``judged_only``)."""
    start, first_row = 0, {}
    for q in qrels:
        first_row[q] = start
        start += len({d for docs in qrels[q].values() for d in docs})
    out = []
    for q in ids:
        judged = sorted({d for docs in qrels.get(q, {}).values() for d in docs})
        row = {d: first_row[q] + i for i, d in enumerate(judged)}
        ranked = sorted(run.get(q, {}).items(), key=lambda kv: (-kv[1], kv[0]))
        if max_docs is not None:
            ranked = ranked[:max_docs]
        rows = [row.get(d, -1) for d, _ in ranked]
        out.append([r for r in rows if r >= 0] if judged_only else rows)
    return out


_docs = st.sampled_from(["d", "d1", "d10", "d2", "D", "é", "e", "d\x00", "ß", "\U0001f600"])
_div_qrels = st.dictionaries(st.sampled_from(["q1", "q2", "q3", "10"]), st.dictionaries(
    st.sampled_from(["1", "2", "3"]), st.dictionaries(_docs, st.integers(0, 2), min_size=1),
    min_size=1), min_size=1)
_div_run = st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4", "10"]), st.lists(
    st.tuples(_docs, st.sampled_from([0.0, 1.0, 1.5, -2.0, float("inf")])), max_size=10,
    unique_by=lambda x: x[0]), min_size=1)


@settings(max_examples=examples(300), **SLOW)
@given(_div_qrels, _div_run, st.sampled_from(["run", "qrels"]),
       st.one_of(st.none(), st.integers(0, 5)), st.booleans(), st.booleans())
def test_rankings_are_the_specification(qrels, ranked, queries, max_docs, judged_only,
                                        in_order):
    """The judged documents found by rank_judged and placed in pyndeval's order give each
    query's ranking as the plain-Python specification does: ties broken by document id,
    non-ASCII and NUL-bearing ids, queries on one side only, cuts, runs written in score
    order (placed by the kernel) or not (sorted by numpy)."""
    from qafast._engine import Evaluation
    from qafast._ranked import as_run
    from qafast.diversity import DiversityQrels

    run = {q: dict(sorted(docs, key=lambda x: -x[1]) if in_order else docs)
           for q, docs in ranked.items()}
    if not any(q in qrels and docs for q, docs in run.items()):
        return  # no query in common: the engine's error, tested elsewhere
    encoded = DiversityQrels(qrels)._encode()
    general = as_run(run, 1)
    ids = Evaluation(encoded.plain, general, queries=queries, relevance_level=1,
                     judged_only=False, max_docs=None, workers=1).ids
    _topic_of, offsets, rows = encoded.rankings(general, ids, max_docs, judged_only)
    got = [rows[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])]
    assert got == _spec_rankings(qrels, run, ids, max_docs, judged_only)


# judgments: (query, subtopic, document, grade), ids that sort differently by UTF-16 code
# unit and by code point, that share a prefix longer than 8 bytes (or not), that end in NUL,
# repeated (query, document, subtopic) triples included
_judged_ids = st.builds(lambda prefix, rest: prefix + rest,
                        st.sampled_from(["", "", "clueweb09-en-", "clueweb09-en-\x00"]),
                        st.text(alphabet="ab1é日🙂\uff61\x00", max_size=3))
judgment_lists = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5), _judged_ids,
                                    st.integers(-3, 3)), max_size=60)


def _rows(judgments, n_queries=4, n_subtopics=6):
    """diversity_qrels_rows' outputs, with the documents coded in order of first
    appearance."""
    i64 = np.int64
    docs = list(dict.fromkeys(j[2] for j in judgments))
    code = {d: i for i, d in enumerate(docs)}
    n = len(judgments)
    query = np.array([j[0] for j in judgments], i64)
    sub = np.array([j[1] for j in judgments], i64)
    doc = np.array([code[j[2]] for j in judgments], i64)
    grade = np.array([j[3] for j in judgments], i64)
    outs = [np.full(n, -7, i64) for _ in range(4)]
    doc_offsets, subtopics = np.full(n_queries + 1, -7, i64), np.full(n_queries, -7, i64)
    rows = [np.full(n, -7, i64) for _ in range(3)]
    key_off = np.full(n + 1, -7, i64)
    kept, nrows, blob = _kernels.diversity_qrels_rows(query, sub, doc, grade, docs, n_queries,
                                                      n_subtopics, *outs, doc_offsets,
                                                      subtopics, *rows, key_off)
    return docs, kept, nrows, blob, outs, doc_offsets, subtopics, rows, key_off


@settings(max_examples=examples(300), **SLOW)
@given(judgment_lists)
def test_judgment_rows_are_the_specification(judgments):
    docs, kept, nrows, blob, outs, doc_offsets, subtopics, rows, key_off = _rows(judgments)
    want = spec.judgment_rows([j[0] for j in judgments], [j[1] for j in judgments],
                              [j[2] for j in judgments], [j[3] for j in judgments], 4)
    assert kept == len(want["t"])
    for name, got in zip(("t", "local", "row", "grade"), outs):
        assert got[:kept].tolist() == want[name]
    assert doc_offsets.tolist() == want["doc_offsets"]
    assert subtopics.tolist() == want["subtopics"]
    row_doc, best, hashes = rows
    assert nrows == len(want["row_doc"])
    assert [docs[c] for c in row_doc[:nrows].tolist()] == want["row_doc"]
    assert best[:nrows].tolist() == want["best"]
    # each row's id: its UTF-8 bytes and the hash the engine's qrels give it
    texts = [blob[key_off[i]:key_off[i + 1]].decode() for i in range(nrows)]
    assert texts == want["row_doc"]
    expect_hash = np.empty(nrows, np.int64)
    expect_off = np.empty(nrows + 1, np.int64)
    expect_blob, _ = _kernels.encode_str_column(want["row_doc"], expect_hash,
                                                np.empty(0, np.int64), expect_off)
    assert hashes[:nrows].tolist() == expect_hash.tolist()
    assert blob == expect_blob and key_off[:nrows + 1].tolist() == expect_off.tolist()


def test_judgment_rows_refuse_codes_outside_their_bounds():
    i64 = np.int64
    one = np.zeros(1, i64)

    def call(query=0, sub=0, doc=0, docs=("d",), n_queries=1, n_subtopics=1):
        n = 1
        return _kernels.diversity_qrels_rows(
            np.array([query], i64), np.array([sub], i64), np.array([doc], i64), one,
            list(docs), n_queries, n_subtopics, *(np.empty(n, i64) for _ in range(4)),
            np.empty(n_queries + 1, i64), np.empty(n_queries, i64),
            *(np.empty(n, i64) for _ in range(3)), np.empty(n + 1, i64))

    assert call()[:2] == (1, 1)
    for bad in (dict(query=1), dict(query=-1), dict(sub=1), dict(doc=1), dict(docs=())):
        with pytest.raises(qafast_errors.InputError, match="out of range"):
            call(**bad)
    with pytest.raises(qafast_errors.InputTypeError, match="not a str"):
        call(docs=(b"d",))
    with pytest.raises(qafast_errors.InputError, match="mismatched"):
        _kernels.diversity_qrels_rows(one, one, one, np.zeros(2, i64), ["d"], 1, 1,
                                      *(np.empty(2, i64) for _ in range(4)),
                                      np.empty(2, i64), np.empty(1, i64),
                                      *(np.empty(2, i64) for _ in range(3)),
                                      np.empty(3, i64))


# judgments as the relevant-subtopic tables read them: (grade, row, topic, subtopic) with
# each topic's subtopic count
_judged_tables = st.lists(st.integers(1, 4), min_size=1, max_size=4).flatmap(
    lambda subtopics: st.tuples(
        st.just(subtopics), st.integers(1, 12),
        st.lists(st.tuples(st.integers(-2, 3), st.integers(0, 11),
                           st.integers(0, len(subtopics) - 1), st.integers(0, 3)),
                 max_size=60)))


@settings(max_examples=examples(300), **SLOW)
@given(_judged_tables, st.integers(-3, 4))
def test_relevant_tables_are_the_numpy_formulation(tables, level):
    subtopics, rows, judged = tables
    i64 = np.int64
    judged = [(g, r % rows, t, s % subtopics[t]) for g, r, t, s in judged]
    grade, doc_row, topic, local = (np.array([j[k] for j in judged], i64).reshape(-1)
                                    for k in range(4))
    nrel_offsets = np.concatenate(([0], np.cumsum(subtopics))).astype(i64)
    rel_offsets = np.full(rows + 1, -7, i64)
    rel_sub = np.full(len(judged), -7, i64)
    nrel_sub = np.full(int(nrel_offsets[-1]), -7, i64)
    m = _kernels.diversity_relevant(grade, local, doc_row, topic, nrel_offsets, level,
                                    rel_offsets, rel_sub, nrel_sub)
    rel = grade >= level
    assert rel_sub[:m].tolist() == local[rel].tolist()
    assert rel_offsets.tolist() == [0, *np.cumsum(np.bincount(doc_row[rel], minlength=rows))]
    assert nrel_sub.tolist() == np.bincount(nrel_offsets[topic[rel]] + local[rel],
                                            minlength=int(nrel_offsets[-1])).tolist()


def test_relevant_tables_refuse_indexes_outside_their_arrays():
    i64 = np.int64
    one = np.zeros(1, i64)

    def call(row=0, topic=0, sub=0, rows=1, grade=1):
        return _kernels.diversity_relevant(np.array([grade], i64), np.array([sub], i64),
                                           np.array([row], i64), np.array([topic], i64),
                                           np.array([0, 1], i64), 1, np.empty(rows + 1, i64),
                                           np.empty(1, i64), np.empty(1, i64))

    assert call() == 1
    assert call(row=5, grade=0) == 0  # a judgment below the level is not read
    for bad in (dict(row=1), dict(row=-1), dict(topic=2), dict(topic=-1), dict(sub=1),
                dict(sub=-1)):
        with pytest.raises(ValueError, match="out of range"):
            call(**bad)
    with pytest.raises(ValueError, match="too short"):
        _kernels.diversity_relevant(np.zeros(2, i64), one, one, one, one, 1, one, one, one)


@settings(max_examples=examples(300), **SLOW)
@given(st.lists(st.integers(0, 3), max_size=30), st.data())
def test_relevant_rows_are_the_numpy_formulation(sizes, data):
    i64 = np.int64
    rel_offsets = np.concatenate(([0], np.cumsum(sizes))).astype(i64)
    rows = len(sizes)
    doc_offsets = np.array(sorted(data.draw(st.lists(st.integers(0, rows), max_size=6))), i64)
    doc_out = np.full(len(doc_offsets), -7, i64)
    rel_out = np.full(rows + 1, -7, i64)
    kept = _kernels.diversity_relevant_rows(doc_offsets, rel_offsets, doc_out, rel_out)
    relevant = np.diff(rel_offsets) > 0
    assert doc_out.tolist() == np.concatenate(([0], np.cumsum(relevant)))[doc_offsets].tolist()
    assert rel_out[:kept + 1].tolist() == [
        0, *np.cumsum(np.diff(rel_offsets)[relevant]).tolist()]


def test_relevant_rows_refuse_offsets_outside_the_rows():
    i64 = np.int64
    rel_offsets = np.array([0, 1], i64)
    for bad in (-1, 2):
        with pytest.raises(ValueError, match="out of range"):
            _kernels.diversity_relevant_rows(np.array([bad], i64), rel_offsets,
                                             np.empty(1, i64), np.empty(2, i64))
    with pytest.raises(ValueError, match="too short"):
        _kernels.diversity_relevant_rows(np.array([0, 1], i64), rel_offsets,
                                         np.empty(1, i64), np.empty(2, i64))
