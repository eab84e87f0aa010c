"""Event mentions in tweets (seed 004): the seed's worked examples, the kernel against the
plain-Python reference, bad input, the CoNLL reader and the CLI."""

import doctest
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast.events
import qafast.io.conll
import qafast.reference.events
from qafast import cli
from qafast.events import (
    LABELS,
    LabelSequences,
    encode_labels,
    event_mention_score,
    tw_events_score,
    tweet_score,
    tweet_scores,
)
from qafast.io.conll import ConllFormatError, read_conll
from qafast.reference import events as ref
from _examples import examples

# The seed's tweet: 'Cant wait for the ravens game tomorrow .... go ray rice !!!!!!!'
ANN = ["ep", "ep", "o", "en", "en", "en", "o", "o", "ep1", "en1", "en1", "o"]
MISSED_EVENTS = ["o"] * 12
MISSED_EVENT = ["ep", "ep", "o", "en", "en", "en", "o", "o", "o", "o", "o", "o"]
MISSED_ENTITY = ["ep", "ep", "o", "o", "o", "o", "o", "o", "ep1", "en1", "en1", "o"]
FP_ENTITY = ["ep", "ep", "o", "en", "en", "en", "o", "o", "ep1", "en1", "en1", "en2"]
WRONG_ENTITY = ["en", "en", "o", "o", "o", "o", "o", "o", "ep1", "en1", "en1", "o"]
INACCURATE_ENTITY = ["ep", "ep", "o", "o", "en", "en", "en", "o", "ep1", "en1", "en1", "o"]


@pytest.mark.parametrize("impl", [qafast.events, ref], ids=["qafast", "reference"])
def test_seed_mention_scores(impl):
    assert impl.event_mention_score(MISSED_ENTITY, ANN, "en") == 0
    assert impl.event_mention_score(WRONG_ENTITY, ANN, "en") == 0
    assert round(impl.event_mention_score(INACCURATE_ENTITY, ANN, "en"), 2) == 0.67
    assert impl.event_mention_score(ANN, ANN, "en") == 1.0


@pytest.mark.parametrize("impl", [qafast.events, ref], ids=["qafast", "reference"])
def test_seed_tweet_scores(impl):
    got = [round(impl.tweet_score(r, ANN), 2)
           for r in (MISSED_EVENTS, MISSED_EVENT, MISSED_ENTITY, FP_ENTITY, INACCURATE_ENTITY)]
    assert got == [0, 0.67, 0.86, 0.89, 0.92]


def test_seed_exact_values():
    # worked by hand from the seed's definition
    assert tweet_score(MISSED_EVENT, ANN) == (2 * 0.5 * 1.0) / 1.5
    assert tweet_score(FP_ENTITY, ANN) == (2 * 1.0 * 0.8) / 1.8
    em = event_mention_score(INACCURATE_ENTITY, ANN, "en")
    assert em == (2 * (2 / 3) * (2 / 3)) / (4 / 3)
    tp = 1.0 + em + 1.0 + 1.0  # en, ep, en1, ep1 in that order
    assert tweet_score(INACCURATE_ENTITY, ANN) == (2 * (tp / 4) * (tp / 4)) / (tp / 4 + tp / 4)


def test_corpus_score_is_mean_in_one_call():
    tweets = [MISSED_EVENTS, MISSED_EVENT, MISSED_ENTITY, FP_ENTITY, WRONG_ENTITY,
              INACCURATE_ENTITY, ANN]
    anns = [ANN] * len(tweets)
    per = [ref.tweet_score(r, ANN) for r in tweets]
    total = 0.0
    for v in per:
        total += v
    assert tw_events_score(tweets, anns) == total / len(per) == ref.tw_events_score(tweets, anns)
    assert tweet_scores(tweets, anns).tolist() == per
    assert tw_events_score(tweets, anns, per_tweet=True) == dict(enumerate(per))


def test_mention_score_of_every_label_matches_reference():
    for label in LABELS:
        for r in (MISSED_ENTITY, FP_ENTITY, WRONG_ENTITY, INACCURATE_ENTITY, ANN):
            assert event_mention_score(r, ANN, label) == ref.event_mention_score(r, ANN, label)


def test_empty_tweet_scores_zero():
    assert tweet_score([], []) == 0.0
    assert tw_events_score([[], ["en"]], [[], ["en"]]) == 0.5


# ---- kernel against reference ------------------------------------------------------------

label = st.sampled_from(LABELS)
tweet_pair = st.integers(0, 12).flatmap(
    lambda n: st.tuples(st.lists(label, min_size=n, max_size=n),
                        st.lists(label, min_size=n, max_size=n)))


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(tweet_pair, min_size=1, max_size=20))
def test_kernel_matches_reference(pairs):
    res = [r for r, _ in pairs]
    ann = [a for _, a in pairs]
    assert tweet_scores(res, ann).tolist() == [ref.tweet_score(r, a) for r, a in pairs]
    assert tw_events_score(res, ann) == ref.tw_events_score(res, ann)
    r, a = pairs[0]
    for lab in LABELS:
        assert event_mention_score(r, a, lab) == ref.event_mention_score(r, a, lab)


@settings(max_examples=examples(50), deadline=None)
@given(st.lists(tweet_pair, min_size=1, max_size=10))
def test_seed_code_agrees_to_rounding(pairs):
    # the seed's own code adds mention scores in set order; it can differ in the last bit only
    def seed_em(res, ann, label):
        tp = sum(int(r == label and a == label) for r, a in zip(res, ann))
        if ann.count(label) == 0 or res.count(label) == 0 or tp == 0:
            return 0
        rec, prec = tp / ann.count(label), tp / res.count(label)
        return (2 * rec * prec) / (rec + prec)

    def seed_tweet(res, ann):
        ann_ems, res_ems = set(ann) - set("o"), set(res) - set("o")
        tp = 0
        for lab in res_ems:
            tp += seed_em(res, ann, lab)
        if len(ann_ems) == 0 or len(res_ems) == 0 or tp == 0:
            return 0
        rec, prec = tp / len(ann_ems), tp / len(res_ems)
        return (2 * rec * prec) / (rec + prec)

    got = tweet_scores([r for r, _ in pairs], [a for _, a in pairs])
    want = [seed_tweet(r, a) for r, a in pairs]
    assert np.allclose(got, want, rtol=1e-15, atol=0)


# ---- bad input ---------------------------------------------------------------------------

def test_unknown_label_names_the_tweet():
    with pytest.raises(ValueError, match=r"tweet 1: label 'EP' in the annotations is not one of"):
        tw_events_score([["o"], ["ep"]], [["o"], ["EP"]])
    with pytest.raises(ValueError, match=r"tweet 'b': label 'x' in the results"):
        tw_events_score({"a": ["o"], "b": ["x"]}, {"a": ["o"], "b": ["o"]})
    with pytest.raises(ValueError, match="label 'X' is not one of"):
        event_mention_score(["o"], ["o"], "X")
    with pytest.raises(ValueError, match="label None"):
        tweet_score([None], ["o"])


def test_different_lengths_name_the_tweet():
    with pytest.raises(ValueError, match=r"tweet 1: the results have 2 labels and the "
                                         r"annotations 1"):
        tw_events_score([["o"], ["o", "en"]], [["o"], ["en"]])
    with pytest.raises(ValueError, match="the results have 1 labels and the annotations 2"):
        tweet_score(["o"], ["o", "o"])
    with pytest.raises(ValueError, match="2 tweets of results but 1"):
        tw_events_score([["o"], ["o"]], [["o"]])
    with pytest.raises(ValueError, match="tweet 'b' is in the annotations only"):
        tw_events_score({"a": ["o"]}, {"a": ["o"], "b": ["o"]})


def test_bad_types_and_empty_corpus():
    with pytest.raises(TypeError, match="got the string"):
        tweet_score("o o", ["o"])
    with pytest.raises(TypeError):
        tw_events_score({"a": ["o"]}, [["o"]])
    with pytest.raises(ValueError, match="no tweets"):
        tw_events_score([], [])


def test_encoded_input_is_checked():
    res, ann = encode_labels([["en", "o"], ["ep"]], [["en", "en"], ["ep"]])
    assert tw_events_score(res, ann) == ref.tw_events_score([["en", "o"], ["ep"]],
                                                            [["en", "en"], ["ep"]])
    bad = LabelSequences(res.tweet_ids, res.offsets, np.array([0, 9, 1], dtype=np.int32),
                         "results")
    with pytest.raises(ValueError, match=r"tweet 0: label code 9 in the results"):
        tw_events_score(bad, ann)
    short = LabelSequences(res.tweet_ids, np.array([0, 1, 3], dtype=np.int64),
                           res.codes, "results")
    with pytest.raises(ValueError, match=r"tweet 0: the results have 1 labels and the "
                                         r"annotations 2"):
        tw_events_score(short, ann)
    with pytest.raises(TypeError, match="offsets must be a 1-d int64"):
        tw_events_score(LabelSequences([0, 1], res.offsets.astype(np.int32), res.codes), ann)
    with pytest.raises(TypeError):
        tw_events_score(res, [["en", "en"], ["ep"]])


# ---- CoNLL reader and CLI ----------------------------------------------------------------

def conll_text(res_tweets, ann_tweets, sep=" "):
    blocks = []
    for r, a in zip(res_tweets, ann_tweets):
        blocks.append("".join(f"tok{i}{sep}{g}{sep}{p}\n" for i, (g, p) in enumerate(zip(a, r))))
    return "\n".join(blocks)


SEED_RUNS = [MISSED_EVENTS, MISSED_EVENT, MISSED_ENTITY, FP_ENTITY, WRONG_ENTITY,
             INACCURATE_ENTITY]


def test_read_conll_seed_file(tmp_path):
    path = tmp_path / "tweets.conll"
    path.write_text(conll_text(SEED_RUNS, [ANN] * 6) + "\n\n", encoding="utf-8")
    res, ann = read_conll(path)
    assert len(res) == 6 and res.lines.tolist() == [1, 14, 27, 40, 53, 66]
    assert res.labels(3) == FP_ENTITY and ann.labels(3) == ANN
    assert tweet_scores(res, ann).tolist() == [ref.tweet_score(r, ANN) for r in SEED_RUNS]
    assert tw_events_score(res, ann) == ref.tw_events_score(SEED_RUNS, [ANN] * 6)


def test_read_conll_unicode_tokens_and_tabs():
    text = "Ça\tep\tep\n😀 rice\ten1\ten1\n\n\n\n中文\to\ten\n"
    res, ann = read_conll(io.StringIO(text))
    assert res.labels(0) == ["ep", "en1"] and ann.labels(1) == ["o"]
    assert tw_events_score(res, ann, per_tweet=True) == {0: 1.0, 1: 0.0}


def test_read_conll_errors(tmp_path):
    path = tmp_path / "bad.conll"
    path.write_text("a en en\nb en\n")
    with pytest.raises(ConllFormatError, match=r"bad.conll, line 2: expected 'token gold_label"):
        read_conll(path)
    path.write_text("a en en\n\nb o o\nc o EN\n")
    with pytest.raises(ConllFormatError, match=r"line 4: predicted label 'EN' \(tweet 1\)") as e:
        read_conll(path)
    assert e.value.line == 4 and isinstance(e.value, ValueError)
    with pytest.raises(TypeError):
        read_conll(42)


def test_cli_text_and_json(tmp_path, capsys):
    path = tmp_path / "tweets.conll"
    path.write_text(conll_text(SEED_RUNS, [ANN] * 6))
    assert cli.main(["events", str(path)]) == 0
    mean = ref.tw_events_score(SEED_RUNS, [ANN] * 6)
    assert capsys.readouterr().out == f"tweets\tall\t6\ntw_events\tall\t{mean:.4f}\n"
    assert cli.main(["events", str(path), "-q", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tweets"] == 6 and doc["tw_events"] == mean
    assert doc["per_tweet"] == [ref.tweet_score(r, ANN) for r in SEED_RUNS]
    path.write_text("a en XX\n")
    assert cli.main(["events", str(path)]) == 2
    assert "line 1: predicted label 'XX'" in capsys.readouterr().err


@pytest.mark.parametrize("module", [qafast.events, qafast.io.conll, qafast.reference.events],
                         ids=lambda m: m.__name__)
def test_docstring_examples(module):
    assert doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
