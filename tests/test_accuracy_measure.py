"""ir_measures' ``Accuracy`` (its accuracy provider's measure): qafast's values against the
provider's own, query by query and to the last bit, on random tie-heavy runs, and the rules
qafast chose where the provider gives no value or divides by zero.

The provider ranks equal scores in the run's order (a stable sort by score), qafast by
document id descending (trec_eval's order): the runs handed to the provider list their
documents in that order, so that both rank every query alike."""

import math
import random

import pytest

import qafast
from qafast.reference import ranking as spec

ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is the reference")
from ir_measures import Accuracy  # noqa: E402

NAMES = ["Accuracy", "Accuracy@1", "Accuracy@3", "Accuracy@10", "Accuracy(rel=2)@5",
         "Accuracy(rel=2)", "Accuracy(rel=0)@4", "Accuracy(rel=3)@8"]


def tie_heavy_case(seed: int):
    """Qrels with grades -1..3 (some queries with no relevant document, some with no
    non-relevant one), and a run of scores from a handful of values, each query's documents
    listed by document id descending (qafast's order among equal scores)."""
    rng = random.Random(seed)
    qrels: dict = {}
    run: dict = {}
    for q in range(rng.randint(1, 12)):
        qid = f"q{q}"
        docs = [f"d{d:02d}" for d in range(rng.randint(0, 14))]
        judged = rng.sample(docs, rng.randint(0, len(docs)))
        grades = rng.choice(((-1, 0, 1, 2, 3), (1, 2), (0, -1), (0, 1)))
        qrels[qid] = {d: rng.choice(grades) for d in judged}
        if rng.random() < 0.3:
            qrels[qid][f"x{q}"] = rng.choice(grades)  # judged, never retrieved
        if not qrels[qid]:
            del qrels[qid]
        if docs and rng.random() < 0.9:
            scores = rng.choice(((1.0,), (0.5, 1.0), (0.1, 0.2, 0.3, 0.7)))
            run[qid] = {d: rng.choice(scores) for d in sorted(docs, reverse=True)}
    qrels["both"] = {"b": 1, "a": 0}  # a query in common, whatever the draw
    run["both"] = {"c": 0.5, "b": 0.5, "a": 0.5}
    run["extra"] = {"a": 1.0}  # a run query the qrels lack: no value anywhere
    qrels["unranked"] = {"a": 1}  # a qrels query the run lacks
    return qrels, run


def provider_value(measure, qrels_q: dict, run_q: dict):
    """The accuracy provider's value for one query: a float, None where it gives none, or
    "divides by zero"."""
    try:
        got = list(ir_measures.accuracy.iter_calc([measure], {"q": qrels_q}, {"q": run_q}))
    except ZeroDivisionError:
        return "divides by zero"
    assert len(got) <= 1
    return got[0].value if got else None


@pytest.mark.parametrize("seed", range(40))
def test_every_value_the_provider_gives_to_the_last_bit(seed):
    qrels, run = tie_heavy_case(seed)
    measures = [ir_measures.parse_measure(n) for n in NAMES]
    ours = qafast.evaluate(qrels, run, NAMES, per_query=True)
    for qid, row in ours.items():
        for name, measure in zip(NAMES, measures):
            want = provider_value(measure, qrels[qid], run[qid])
            if want is None:
                assert row[name] == 0.0, (qid, name)
            elif want == "divides by zero":
                assert row[name] == 1.0, (qid, name)
            else:
                assert row[name] == want, (qid, name, row[name], want)
            # and the specification
            rq = spec.rank_query(qrels[qid], run[qid],
                                 relevance_level=measure["rel"])
            k = measure.params.get("cutoff")
            assert spec.measure("accuracy", rq, k) == row[name], (qid, name)


def test_the_provider_computes_it_where_it_gives_a_mean():
    # no query divides by zero here: the provider's mean is over the queries it gives a
    # value for, and qafast's provider gives the same values, keys and mean
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"a": 1}, "q3": {"b": 0, "c": 1},
             "q4": {"z": 1}}
    run = {"q1": {"c": 0.5, "b": 0.5, "a": 0.2, "e": 0.9}, "q2": {"e": 1.0, "d": 0.5},
           "q3": {"c": 0.2, "b": 0.3}}
    measures = [Accuracy, Accuracy @ 2, Accuracy(rel=2) @ 3]
    theirs = ir_measures.accuracy.calc_aggregate(measures, qrels, run)
    from qafast.integrations import ir_measures as qafast_ir

    provider = qafast_ir.QafastProvider()
    assert all(provider.supports(m) for m in measures)
    ours = provider.calc_aggregate(measures, qrels, run)
    assert ours == theirs
    per_query = {(m.query_id, m.measure): m.value
                 for m in ir_measures.accuracy.iter_calc(measures, qrels, run)}
    assert {(m.query_id, m.measure): m.value
            for m in provider.iter_calc(measures, qrels, run)} == per_query
    with qafast_ir.patch():
        assert ir_measures.calc_aggregate(measures, qrels, run) == theirs
    # asked beside another provider's measures, ir_measures fills in the default 0 for the
    # queries without a value: so does qafast's provider
    mixed = measures + [ir_measures.P @ 2]
    theirs_mixed = ir_measures.calc_aggregate(mixed, qrels, run)
    assert theirs_mixed[Accuracy] != theirs[Accuracy]
    with qafast_ir.patch():
        assert ir_measures.calc_aggregate(mixed, qrels, run) == theirs_mixed
    assert provider.calc_aggregate(mixed, qrels, run) == theirs_mixed
    # qafast.evaluate scores the queries without a value 0 and averages over every query
    evaluated = qafast.evaluate(qrels, run, ["Accuracy"], per_query=True)
    assert evaluated["q2"]["Accuracy"] == 0.0
    assert qafast.evaluate(qrels, run, ["Accuracy"])["Accuracy"] == pytest.approx(
        sum(r["Accuracy"] for r in evaluated.values()) / 3)


def test_where_the_provider_divides_by_zero_the_value_is_one():
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": {"a": 0.5, "b": 0.4}}
    with pytest.raises(ZeroDivisionError):
        ir_measures.accuracy.calc_aggregate([Accuracy], qrels, run)
    assert qafast.evaluate(qrels, run, "Accuracy") == {"Accuracy": 1.0}
    from qafast.integrations import ir_measures as qafast_ir

    assert qafast_ir.QafastProvider().calc_aggregate([Accuracy], qrels, run) == {
        Accuracy: 1.0}


def test_level_zero_counts_unjudged_documents_as_relevant():
    # the provider reads an unjudged document as grade 0: relevant at rel=0
    qrels = {"q": {"a": -1, "b": 0}}
    run = {"q": {"z": 0.9, "a": 0.8, "b": 0.7}}
    want = provider_value(Accuracy(rel=0), qrels["q"], run["q"])
    assert want == 1 - 1 / 2
    assert qafast.evaluate(qrels, run, "Accuracy(rel=0)") == {"Accuracy(rel=0)": want}
    # qafast's ir_measures provider leaves rel <= 0 to the accuracy provider
    from qafast.integrations import ir_measures as qafast_ir

    assert not qafast_ir.QafastProvider().supports(Accuracy(rel=0))
    assert qafast_ir.QafastProvider().supports(Accuracy(rel=1) @ 5)


def test_negative_rel_and_bad_cutoffs_are_refused_by_name():
    with pytest.raises(ValueError, match=r"Accuracy\(rel=-1\).*0 or more"):
        qafast.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "Accuracy(rel=-1)")
    with pytest.raises(ValueError, match="cutoff must be positive"):
        qafast.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "Accuracy@0")
    with pytest.raises(ValueError, match="takes no parameter 'judged_only'"):
        qafast.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "Accuracy(judged_only=True)")


def test_measure_objects_and_strings_agree():
    qrels, run = tie_heavy_case(3)
    objects = [Accuracy, Accuracy @ 3, Accuracy(rel=2) @ 5]
    by_object = qafast.evaluate(qrels, run, objects)
    by_name = qafast.evaluate(qrels, run, [str(m) for m in objects])
    assert list(by_object.values()) == list(by_name.values())
    assert all(0.0 <= v <= 1.0 and not math.isnan(v) for v in by_name.values())
