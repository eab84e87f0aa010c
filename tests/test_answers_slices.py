"""Answer metrics and squad() copy their strings out a slice of questions at a time, and encode
and score each slice without the GIL before they take it back for the next one.

Nothing may depend on where the slices fall: with slices of one question, a few, or one slice
for everything, every per-question value and every mean is the same bit for bit, and equal to
the plain-Python reference; the encodings (each string's index, each token's id) are those of
one pass; errors name the same question. Data mixes ASCII, Latin-1, text that only CPython's
str.lower lowers (Greek, Cyrillic, the dotted capital I, astral characters), CJK, empty
answers and strings repeated across slices. Another thread that changes the lists between two
slices gets a result or a ValueError from the scoring thread, never a crash.
"""

import random
import warnings

import numpy as np
import pytest

import qafast
from qafast import _kernels, answers
from qafast.errors import InputError
from qafast.reference import answers as ref_answers
from qafast.reference import squad as ref_squad
from test_answers_threads import LIST_CALLS, _grow_or_shrink, _score_beside

WORDS = ("The river", "a King", "an Empire", "north-south", "Beyoncé", "ÉCOLE Normale",
         "İstanbul", "ΣΊΣΥΦΟΣ", "Москва Река", "北京大学", "长江 黄河", "😀 Emoji", "straße",
         "", "  ", "the", "A.B.C.", "x_y", "1848", "Don't")
SLICES = (1, 3, 17)
ONE_SLICE = 10**9


def _phrase(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3)))


def _questions(n, seed, *, empty=True):
    """Predictions and references; strings repeat across the whole list (so across slices)."""
    rng = random.Random(seed)
    pool = [_phrase(rng) for _ in range(40)]
    preds, refs = [], []
    for _ in range(n):
        golds = [rng.choice(pool) for _ in range(rng.randint(0 if empty else 1, 3))]
        refs.append(golds)
        preds.append(rng.choice(golds).upper() if golds and rng.random() < 0.4
                     else rng.choice(pool))
    return preds, refs


@pytest.fixture
def one_slice(monkeypatch):
    monkeypatch.setattr(answers, "_SLICE_QUESTIONS", ONE_SLICE)


def _bits(x):
    return np.asarray(x, dtype=np.float64).tobytes()


def _answer_calls(preds, refs, refs_v1):
    return {
        "f1": lambda: answers.f1(preds, refs, per_question=True),
        "f1-mean": lambda: answers.f1(preds, refs),
        "em": lambda: answers.exact_match(preds, refs, per_question=True),
        "em-mean-v1": lambda: answers.exact_match(preds, refs_v1, empty_rule="v1"),
        "both": lambda: answers.exact_match_and_f1(preds, refs),
        "char": lambda: answers.f1(preds, refs_v1, unit="char", per_question=True),
        "char-mean": lambda: answers.f1(preds, refs_v1, unit="char"),
        "char-v1": lambda: answers.f1(preds, refs_v1, unit="char", empty_rule="v1",
                                      per_question=True),
        "tuple-refs": lambda: answers.f1(preds, [tuple(r) for r in refs_v1], per_question=True),
    }


@pytest.mark.parametrize("size", SLICES)
def test_answer_metrics_do_not_depend_on_the_slices(monkeypatch, size):
    preds, refs = _questions(120, 11)
    refs_v1 = [r or [""] for r in refs]
    calls = _answer_calls(preds, refs, refs_v1)
    monkeypatch.setattr(answers, "_SLICE_QUESTIONS", ONE_SLICE)
    whole = {name: call() for name, call in calls.items()}
    monkeypatch.setattr(answers, "_SLICE_QUESTIONS", size)
    for name, call in calls.items():
        got = call()
        if isinstance(got, tuple):
            assert [_bits(g) for g in got] == [_bits(w) for w in whole[name]], name
        else:
            assert _bits(got) == _bits(whole[name]), name
    # and the reference's values, question by question
    assert _bits(calls["f1"]()) == _bits(ref_answers.f1(preds, refs, per_question=True))
    assert _bits(calls["em"]()) == _bits(ref_answers.exact_match(preds, refs, per_question=True))
    assert _bits(calls["char"]()) == _bits(ref_answers.f1(preds, refs_v1, unit="char",
                                                          per_question=True))


def _encodings(kernel, preds, refs_arg, ref_off, size):
    ps = np.empty(len(preds), dtype=np.int32)
    rs = np.empty(int(ref_off[-1]), dtype=np.int32)
    tok_off, ids = kernel(preds, refs_arg, ref_off, ps, rs, size)
    return [np.asarray(tok_off).tolist(), np.asarray(ids).tolist(), ps.tolist(), rs.tolist()]


def test_encodings_do_not_depend_on_the_slices():
    """Each string's index and each token's id are those of one pass: the tables live across
    slices, and new strings are tokenized in the order they first appear."""
    preds, refs = _questions(60, 5)
    ref_off = np.empty(len(refs) + 1, dtype=np.int64)
    assert _kernels.answer_count_refs(refs, ref_off) == -1
    flat = [g for r in refs for g in r]
    with_none = [None if i % 7 == 3 else p for i, p in enumerate(preds)]
    for kernel, p, r in ((_kernels.answer_encode_squad, preds, refs),
                         (_kernels.answer_encode_squad_flat, with_none, flat)):
        whole = _encodings(kernel, p, r, ref_off, ONE_SLICE)
        for size in (1, 2, 5, 59, 60):
            assert _encodings(kernel, p, r, ref_off, size) == whole
    # SquadEncoder fed in uneven slices, as squad()'s walk feeds it
    whole = _encodings(_kernels.answer_encode_squad_flat, with_none, flat, ref_off, ONE_SLICE)
    rng = random.Random(3)
    for _ in range(5):
        encoder = _kernels.SquadEncoder(rng.choice([0, 10, 1000]))
        i = 0
        while i < len(preds):
            j = min(len(preds), i + rng.randint(0, 9))
            assert encoder.add(with_none, i, flat, ref_off[i:j + 1].copy())
            i = j
        tok_off, ids, ps, rs = encoder.finish()
        assert [np.asarray(a).tolist() for a in (tok_off, ids, ps, rs)] == whole
        with pytest.raises(RuntimeError):       # finished: of no further use
            encoder.add([], 0, flat, ref_off[:1].copy())


def test_encoder_refuses_offsets_that_do_not_follow_on():
    encoder = _kernels.SquadEncoder()
    texts = ["a", "b", "c"]
    with pytest.raises(ValueError):             # must start at the answers added so far: 0
        encoder.add(["x"], 0, texts, np.array([1, 2], dtype=np.int64))
    encoder = _kernels.SquadEncoder()
    assert encoder.add(["x"], 0, texts, np.array([0, 2], dtype=np.int64))
    with pytest.raises(ValueError):
        encoder.add(["x", "y"], 1, texts, np.array([0, 1], dtype=np.int64))
    encoder = _kernels.SquadEncoder()
    with pytest.raises(ValueError):             # past the texts
        encoder.add(["x"], 0, texts, np.array([0, 4], dtype=np.int64))
    encoder = _kernels.SquadEncoder()
    with pytest.raises(ValueError):             # past the predictions
        encoder.add(["x"], 1, texts, np.array([0, 1], dtype=np.int64))

    class Str(str):
        pass

    encoder = _kernels.SquadEncoder()
    assert encoder.add([Str("x")], 0, texts, np.array([0, 1], dtype=np.int64)) is False
    with pytest.raises(RuntimeError):
        encoder.finish()


def _articles(questions, rng):
    """The questions spread over articles and paragraphs, some of them empty."""
    data, k = [], 0
    while k < len(questions) or not data:
        paragraphs = []
        for _ in range(rng.randint(0, 3)):
            take = rng.randint(0, 4)
            paragraphs.append({"context": "c", "qas": questions[k:k + take]})
            k += take
        data.append({"title": "t", "paragraphs": paragraphs})
    return data


def test_walk_in_slices_is_the_whole_walk():
    rng = random.Random(8)
    questions = [{"id": f"q{i}", "answers": [{"text": f"t{i}.{j}"} for j in range(i % 3)]}
                 if i % 4 else {"id": f"q{i}", "answers": {"text": [f"h{i}"],
                                                           "answer_start": [0]}}
                 for i in range(30)]
    data = _articles(questions, rng)
    ids, texts = [], []
    all_str, whole = _kernels.squad_flatten_flat(data, ids, texts)
    assert all_str and len(ids) == 30
    for budget in (1, 2, 5, 100):
        # lists made too short or too long: filled, then appended to
        got_ids, got_texts = [None] * (budget * 3), [None] * 7
        offsets, at, nids, ntexts = [], (0, 0, 0), 0, 0
        while True:
            ok, off, *at, nids, ntexts = _kernels.squad_flatten_slice(
                data, *at, budget, got_ids, nids, got_texts, ntexts)
            assert ok and len(off) - 1 <= budget
            offsets.append(off if not offsets else off[1:])
            if at[0] >= len(data):
                break
        assert (got_ids[:nids], got_texts[:ntexts]) == (ids, texts)
        assert np.concatenate(offsets).tolist() == whole.tolist()


def _squad_cases(seed):
    rng = random.Random(seed)
    preds_text, refs = _questions(90, seed)
    ids = [f"q{i}" for i in range(len(refs))]
    qas = [{"id": q, "answers": [{"text": g} for g in golds]} for q, golds in zip(ids, refs)]
    data = _articles(qas, rng)
    v1 = {"version": "1.1", "data": _articles(
        [{"id": q, "answers": [{"text": g} for g in (golds or ["x"])]}
         for q, golds in zip(ids, refs)], rng)}
    v2 = {"version": "v2.0", "data": data}
    aligned = dict(zip(ids, preds_text))
    shuffled = dict(rng.sample(list(aligned.items()), len(aligned)))
    missing = {q: t for i, (q, t) in enumerate(aligned.items()) if i % 11 != 5}
    stray = {**aligned, "nope": "x"}
    probs = {q: round(rng.random(), 1) for q in ids}
    return [
        (v1, aligned, {"version": "1.1"}),
        (v1, shuffled, {"version": "1.1"}),
        (v1, missing, {"version": "1.1"}),
        (v1, stray, {"version": "1.1"}),
        (v2, aligned, {}),
        (v2, shuffled, {"na_probs": probs}),
        (v2, aligned, {"na_probs": probs, "na_prob_thresh": 0.5}),
        (v2, missing, {"na_probs": probs}),
        (v2, missing, {"missing": "zero"}),
        (v2, stray, {}),
    ]


def _squad_outcome(fn, data, preds, kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(data, preds, **kw)
        except (ValueError, TypeError) as exc:
            result = (type(exc), str(exc))
    return result, [str(w.message) for w in caught]


@pytest.mark.parametrize("size", SLICES)
def test_squad_does_not_depend_on_the_slices(monkeypatch, size):
    cases = _squad_cases(4)
    monkeypatch.setattr(answers, "_SLICE_QUESTIONS", ONE_SLICE)
    whole = [_squad_outcome(qafast.squad, *case) for case in cases]
    monkeypatch.setattr(answers, "_SLICE_QUESTIONS", size)
    for case, want in zip(cases, whole):
        got = _squad_outcome(qafast.squad, *case)
        assert got == want
        assert repr(got[0]) == repr(want[0])          # bit-identical floats, same key order
        spec, _ = _squad_outcome(ref_squad.squad, *case)
        assert repr(got[0]) == repr(spec)


@pytest.mark.parametrize("size", SLICES)
def test_squad_errors_do_not_depend_on_the_slices(monkeypatch, size):
    """The dataset is read in slices as the predictions are looked up, yet a malformed
    dataset is still reported before a bad prediction, naming the question the whole walk
    names."""
    ids = [f"q{i}" for i in range(40)]
    good = [{"id": q, "answers": [{"text": "a"}]} for q in ids]

    def outcome(qas, preds, **kw):
        data = {"version": "1.1", "data": [{"paragraphs": [{"qas": qas[:20]}]},
                                           {"paragraphs": [{"qas": qas[20:]}]}]}
        return _squad_outcome(qafast.squad, data, preds, kw)

    preds = dict.fromkeys(ids, "a")
    late_bad = [*good[:30], {"id": "q30"}, *good[31:]]                   # no "answers"
    late_int_id = [*good[:30], {"id": 30, "answers": [{"text": "a"}]}, *good[31:]]
    late_int_text = [*good[:30], {"id": "q30", "answers": [{"text": 3}]}, *good[31:]]
    early_bad_pred = {**preds, "q1": 5}
    late_no_gold = [*good[:30], {"id": "q30", "answers": []}, *good[31:]]
    cases = [
        (late_bad, early_bad_pred, {}), (late_int_id, early_bad_pred, {}),
        (late_int_text, early_bad_pred, {}), (good, early_bad_pred, {}),
        (late_no_gold, preds, {}), (late_no_gold, {**preds, "q3": None}, {}),
        (good, {q: "a" for q in ids[:25]}, {"missing": "error"}),
        (late_bad, {q: "a" for q in ids[:25]}, {"missing": "error"}),
    ]
    monkeypatch.setattr(answers, "_SLICE_QUESTIONS", ONE_SLICE)
    whole = [outcome(*case[:2], **case[2]) for case in cases]
    monkeypatch.setattr(answers, "_SLICE_QUESTIONS", size)
    for case, want in zip(cases, whole):
        assert outcome(*case[:2], **case[2]) == want
    # a malformed dataset: read_squad_dataset's error, before the bad prediction's
    from qafast.io.squad import read_squad_dataset

    for case, want in zip(cases[:3], whole[:3]):
        data = {"version": "1.1", "data": [{"paragraphs": [{"qas": case[0][:20]}]},
                                           {"paragraphs": [{"qas": case[0][20:]}]}]}
        with pytest.raises((ValueError, TypeError)) as read:
            read_squad_dataset(data)
        assert want[0] == (type(read.value), str(read.value))
        assert "30" in str(read.value)
    assert "q1" in whole[3][0][1] and "q30" in whole[4][0][1]


@pytest.mark.filterwarnings("ignore")  # predictions for questions the changes removed
@pytest.mark.parametrize("call", [
    "f1", "exact_match", "f1_char", "squad-1.1",
    # v2.0's rounds leave the mutating thread the GIL for a second or two each, so its 15
    # take 10 to 30 s, as the scheduler decides; squad-1.1 walks the same dataset in the
    # default run
    pytest.param("squad-2.0", marks=pytest.mark.slow),
])
def test_lists_changed_between_slices(monkeypatch, call):
    """Slices of one question give up the GIL after every question; another thread then
    grows, shrinks and rewrites the lists (and the dataset's question lists, and the
    predictions dict) meanwhile. Each score is a float or qafast's ValueError."""
    monkeypatch.setattr(answers, "_SLICE_QUESTIONS", 1)
    preds, refs = _questions(3000, 21, empty=False)
    ids = [f"q{i}" for i in range(len(preds))]
    qas = [{"id": q, "answers": [{"text": g} for g in golds]} for q, golds in zip(ids, refs)]
    data = {"version": "1.1", "data": [{"paragraphs": [{"qas": qas[:1500]}, {"qas": qas[1500:]}]}]}
    by_id = dict(zip(ids, preds))
    paragraphs = data["data"][0]["paragraphs"]

    def score_once():
        if call in LIST_CALLS:
            return LIST_CALLS[call](preds, refs)
        version = call.split("-")[1]
        return qafast.squad(data, by_id, version=version)["f1"]

    def mutate(stop):
        rng = random.Random(7)
        while not stop.is_set():
            _grow_or_shrink(rng, [preds, refs], 2000, refs, WORDS)
            preds[rng.randrange(len(preds))] = rng.choice(WORDS)
            q = paragraphs[rng.randrange(2)]["qas"]
            if rng.random() < 0.5 and len(q) > 1000:
                q.pop(rng.randrange(len(q)))
            else:
                q.append(rng.choice(qas))
            by_id[rng.choice(ids)] = rng.choice(WORDS)

    for o in _score_beside(score_once, 15, mutate):
        assert isinstance(o, (float, ValueError)), o
        if isinstance(o, ValueError):
            # the kernels' "... changed while they were read", or, caught between the
            # other thread's two appends, different numbers of predictions and references
            assert isinstance(o, InputError), o
        else:
            assert 0.0 <= o <= 100.0
