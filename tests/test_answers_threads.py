"""Answer metrics called from many threads at once on shared inputs.

The answer kernels read the strings' bytes without the GIL; each thread's results must equal
those of one call made alone, for every normalizer and unit (ASCII text normalized in C,
non-ASCII text lowered through CPython, normalizers written in Python), and the inputs must be
left as they were.
"""

import copy
import random
import threading

import numpy as np
import pytest

import qafast
from qafast import answers

THREADS = 8
ROUNDS = 3

WORDS = ("The river", "a King", "an Empire", "Peace", "north-south", "University",
         "1848", "Napoleon's", "Beyoncé", "ÉCOLE Normale", "Zürich", "İstanbul",
         "北京大学", "长江 黄河", "ΣΊΣΥΦΟΣ", "straße", "", "  ", "the", "A.B.C.", "x_y")


def _questions(n, seed):
    rng = random.Random(seed)
    preds, refs = [], []
    for _ in range(n):
        golds = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4)))
                 for _ in range(rng.randint(0, 3))]
        refs.append(golds)
        if golds and rng.random() < 0.4:
            p = rng.choice(golds)
            preds.append(p.upper() if rng.random() < 0.3 else p + rng.choice(["", ".", "!"]))
        else:
            preds.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4))))
    return preds, refs


# more questions than the 4096 after which the kernels that walk Python objects with the GIL
# give it up for a moment, so that the pauses are exercised
PREDS, REFS = _questions(9000, 2024)
REFS_V1 = [r if r else [""] for r in REFS]

CALLS = {}
for _norm in ("squad", "drcd", "none"):
    for _unit in ("token", "char"):
        CALLS[f"f1-{_norm}-{_unit}"] = (
            lambda n=_norm, u=_unit: answers.f1(PREDS, REFS, normalizer=n, unit=u,
                                                per_question=True))
        CALLS[f"both-{_norm}-{_unit}"] = (
            lambda n=_norm, u=_unit: answers.exact_match_and_f1(PREDS, REFS, normalizer=n,
                                                                unit=u))
    CALLS[f"em-{_norm}"] = (lambda n=_norm: answers.exact_match(PREDS, REFS, normalizer=n,
                                                                per_question=True))
# the character F1 that normalizes question by question (SQuAD normalizer, unit="char")
CALLS["f1-char-v1-mean"] = lambda: answers.f1(PREDS, REFS_V1, unit="char", empty_rule="v1")

_IDS = [f"q{i}" for i in range(len(PREDS))]


def _dataset(refs):
    qas = [{"id": q, "question": "?", "answers": [{"text": g, "answer_start": 0} for g in golds]}
           for q, golds in zip(_IDS, refs)]
    return {"version": "v2.0", "data": [{"title": "t", "paragraphs": [{"context": "c",
                                                                       "qas": qas}]}]}


DATASET, DATASET_V1 = _dataset(REFS), _dataset(REFS_V1)
SQUAD_PREDS = dict(zip(_IDS, PREDS))
CALLS["squad-2.0"] = lambda: qafast.squad(DATASET, SQUAD_PREDS)
CALLS["squad-1.1"] = lambda: qafast.squad(DATASET_V1, SQUAD_PREDS, version="1.1")


def _same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


# eight threads, three rounds each, for each of the 18 calls on 9,000 questions: 12 to 18 s
# together; test_all_calls_at_once runs every call at the same time as the others in the
# default run
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CALLS))
def test_threads_agree_with_one_call(name):
    call = CALLS[name]
    preds_before, refs_before = list(PREDS), copy.deepcopy(REFS)
    expected = call()
    barrier = threading.Barrier(THREADS)
    results, errors = [], []

    def work():
        try:
            barrier.wait()
            for _ in range(ROUNDS):
                results.append(call())
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == THREADS * ROUNDS
    for r in results:
        assert _same(r, expected)
    assert PREDS == preds_before and REFS == refs_before


def test_all_calls_at_once():
    """Every call in its own thread at the same time: different normalizers and kernels
    interleaved on the same lists."""
    expected = {name: call() for name, call in CALLS.items()}
    barrier = threading.Barrier(len(CALLS))
    got, errors = {}, []

    def work(name):
        try:
            barrier.wait()
            got[name] = CALLS[name]()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append((name, exc))

    threads = [threading.Thread(target=work, args=(name,)) for name in CALLS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for name in CALLS:
        assert _same(got[name], expected[name]), name


# the list-taking calls the disturbed-input tests make, by name
LIST_CALLS = {"f1": answers.f1, "exact_match": answers.exact_match,
              "f1_char": lambda preds, refs: answers.f1(preds, refs, unit="char")}


def _score_beside(score_once, rounds, disturb):
    """``score_once()`` ``rounds`` times on one thread while ``disturb(stop)`` runs on another
    until they are done: the outcomes, a ValueError kept as one (any other error is raised)."""
    stop = threading.Event()
    outcomes, errors = [], []

    def score():
        try:
            for _ in range(rounds):
                try:
                    outcomes.append(score_once())
                except ValueError as exc:
                    outcomes.append(exc)
        except BaseException as exc:  # noqa: BLE001 - raised below, on the test's thread
            errors.append(exc)
        finally:
            stop.set()

    threads = [threading.Thread(target=score), threading.Thread(target=disturb, args=(stop,))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(outcomes) == rounds
    return outcomes


def _grow_or_shrink(rng, rows: list, floor: int, refs: list, words=WORDS) -> None:
    """One change another thread makes to the lists being scored: drop a row from each of
    ``rows`` (while they hold more than ``floor``) or repeat one, then add one of ``words``
    to some reference list."""
    k = rng.randrange(len(rows[0]))
    if rng.random() < 0.5 and len(rows[0]) > floor:
        for column in rows:
            column.pop(k)
    else:
        for column in rows:
            column.append(column[k])
    refs[rng.randrange(len(refs))].append(rng.choice(words))


@pytest.mark.filterwarnings("ignore")  # predictions for questions the changes removed
@pytest.mark.parametrize("call", ["f1", "exact_match", "f1_char", "squad"])
def test_lists_changed_by_another_thread(call):
    """A thread that changes the lists while another scores them: the kernels give up the
    GIL now and then, so they may see the change. The scoring thread gets a result or a
    ValueError saying the lists changed, never a crash or an IndexError from inside."""
    preds, refs = list(PREDS), [list(r) or [""] for r in REFS]
    ids = list(_IDS)
    qas = [{"id": q, "answers": [{"text": g} for g in golds]} for q, golds in zip(ids, refs)]

    def score_once():
        if call in LIST_CALLS:
            return LIST_CALLS[call](preds, refs)
        data = {"version": "1.1", "data": [{"title": "t", "paragraphs": [
            {"context": "c", "qas": qas}]}]}
        return qafast.squad(data, dict(zip(ids, preds)), version="1.1")["f1"]

    def mutate(stop):
        rng = random.Random(7)
        while not stop.is_set():
            _grow_or_shrink(rng, [preds, refs, qas], 5000, refs)

    for o in _score_beside(score_once, 20, mutate):
        assert isinstance(o, (float, ValueError)), o
        if isinstance(o, float):
            assert 0.0 <= o <= 100.0


def _copy(s):
    # an equal str that is another object (the list then holds the only reference to it)
    return s.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")


@pytest.mark.parametrize("call", ["f1", "exact_match", "f1_char", "both", "squad"])
def test_strings_freed_by_another_thread_while_scored(call):
    """Another thread replaces every string with an equal copy, over and over, dropping the
    last reference to the one before, while the lists' lengths never change: the kernels
    copy the strings out with the GIL and read only the copies without it, so every result
    is exactly that of a call made alone (a kernel that read a freed string would give
    another number, or crash)."""
    preds = [_copy(p) for p in PREDS]
    refs = [[_copy(g) for g in r] or [""] for r in REFS]
    qas = [{"id": q, "answers": [{"text": g} for g in golds]} for q, golds in zip(_IDS, refs)]
    data = {"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": "c",
                                                                      "qas": qas}]}]}
    squad_preds = dict(zip(_IDS, preds))

    def run():
        if call == "f1":
            return answers.f1(preds, refs, per_question=True)
        if call == "exact_match":
            return answers.exact_match(preds, refs, per_question=True)
        if call == "f1_char":
            return answers.f1(preds, refs, unit="char", per_question=True)
        if call == "both":
            return answers.exact_match_and_f1(preds, refs)
        return qafast.squad(data, squad_preds, version="1.1")

    expected = run()

    def replace(stop):
        rng = random.Random(11)
        while not stop.is_set():
            for _ in range(500):
                k = rng.randrange(len(preds))
                preds[k] = _copy(preds[k])
                squad_preds[_IDS[k]] = _copy(squad_preds[_IDS[k]])
                golds = refs[k]
                for j in range(len(golds)):
                    golds[j] = _copy(golds[j])
                    qas[k]["answers"][j]["text"] = _copy(golds[j])

    for r in _score_beside(run, 12, replace):
        assert _same(r, expected)


@pytest.mark.parametrize("call", ["f1", "f1_char"])
def test_lists_refilled_by_another_thread(call):
    """Another thread puts fresh equal strings in the lists (the old ones freed), all at once
    or by emptying and filling them again: a call gets exactly the single-call result, or a
    ValueError (the lists changed, or were seen empty or of different lengths), never
    another number."""
    preds = [_copy(p) for p in PREDS]
    refs = [[_copy(g) for g in r] or [""] for r in REFS]
    saved_preds, saved_refs = list(preds), [list(r) for r in refs]
    unit = "char" if call == "f1_char" else "token"
    expected = answers.f1(preds, refs, unit=unit)

    def churn(stop):
        rounds = 0
        while not stop.is_set():
            rounds += 1
            if rounds % 8 == 0:
                preds.clear()
                refs.clear()
                preds.extend(_copy(p) for p in saved_preds)
                refs.extend([_copy(g) for g in r] for r in saved_refs)
            else:
                # all at once, the lengths kept: the old strings are freed at this line
                new_preds = [_copy(p) for p in saved_preds]
                new_refs = [[_copy(g) for g in r] for r in saved_refs]
                preds[:] = new_preds
                refs[:] = new_refs
                del new_preds, new_refs

    for o in _score_beside(lambda: answers.f1(preds, refs, unit=unit), 20, churn):
        assert isinstance(o, ValueError) or o == expected, o


def test_collection_paused_until_the_last_thread_is_done():
    # squad(), hotpot() and drop() pause the process-wide garbage collector while it builds its lists: with
    # two calls overlapping, the first to end must not resume collection under the other,
    # and the last restores the state found before the first
    import gc

    from qafast._gc import gc_paused

    both_in = threading.Barrier(3, timeout=30)
    first_out, second_out = threading.Event(), threading.Event()

    def call(leave):
        with gc_paused():
            both_in.wait()
            leave.wait(30)

    assert gc.isenabled()
    threads = [threading.Thread(target=call, args=(e,)) for e in (first_out, second_out)]
    for t in threads:
        t.start()
    both_in.wait()
    assert not gc.isenabled()
    first_out.set()
    threads[0].join()
    assert not gc.isenabled()  # the other call is still running
    second_out.set()
    threads[1].join()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # the caller's choice is kept
    finally:
        gc.enable()
