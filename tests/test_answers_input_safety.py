"""Answer metrics on inputs that are not plain lists of plain str: numpy strings, str
subclasses, and objects whose lengths, hashes or iteration change while they are read. Each
gives the reference's numbers or a clear error, never an out-of-bounds write."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qafast
from qafast import answers as F
from qafast import squad_eval as S
from qafast.reference import answers as R
from _examples import examples

WORDS = ["the", "Paris", "tower", "eiffel", "a", "北京", "É", "x", "", " ", "don't", "ß"]


class Sub(str):
    """A str subclass with nothing changed."""


def plain(x):
    if isinstance(x, str):
        return str.__str__(x)
    return [str.__str__(g) for g in x]


def reference_values(preds, refs, **kw):
    preds = [plain(p) for p in preds]
    refs = [plain(r) for r in refs]
    em = R.exact_match(preds, refs, per_question=True, normalizer=kw.get("normalizer", "squad"),
                       empty_rule=kw.get("empty_rule", "v2"))
    f1 = R.f1(preds, refs, per_question=True, **kw)
    return np.array(em, dtype=float), np.array(f1, dtype=float)


def check_all(preds, refs, **kw):
    em_ref, f1_ref = reference_values(preds, refs, **kw)
    em_kw = {k: v for k, v in kw.items() if k != "unit"}
    np.testing.assert_array_equal(F.exact_match(preds, refs, per_question=True, **em_kw), em_ref)
    np.testing.assert_array_equal(F.f1(preds, refs, per_question=True, **kw), f1_ref)
    em, f1 = F.exact_match_and_f1(preds, refs, **kw)
    np.testing.assert_array_equal(em, em_ref)
    np.testing.assert_array_equal(f1, f1_ref)


def test_numpy_str_reference_in_a_list():
    preds = ["a", "b", "c"]
    refs = ["a", np.str_("x"), "c"]
    np.testing.assert_array_equal(F.exact_match(preds, refs, per_question=True), [1, 0, 1])
    np.testing.assert_array_equal(F.f1(preds, refs, per_question=True), [1, 0, 1])
    em, f1 = F.exact_match_and_f1(preds, refs)
    np.testing.assert_array_equal(em, [1, 0, 1])
    np.testing.assert_array_equal(f1, [1, 0, 1])


@pytest.mark.parametrize("unit", ["token", "char"])
def test_numpy_string_arrays(unit):
    preds = np.array(["Paris", "the tower", "x", "eiffel tower"])
    refs = np.array(["paris", "tower", "y", "Eiffel"])
    check_all(preds, refs, unit=unit)
    check_all(list(preds), refs.astype(object), unit=unit)
    check_all(preds.tolist(), [np.array([r, "z"]) for r in refs], unit=unit)
    assert F.f1(preds, refs) == pytest.approx(np.mean(reference_values(preds, refs)[1]))


def test_str_subclass_references_after_the_first_question():
    # the first question that is not a plain str used to leave the rest of the offsets unset
    n = 50
    preds = [f"w{i}" for i in range(n)]
    refs = [f"w{i}" if i % 7 else Sub(f"w{i}") for i in range(n)]
    refs[3] = [Sub("w3"), "q"]
    refs[4] = ("z", Sub("w4"))
    check_all(preds, refs)
    check_all(preds, refs, unit="char")
    check_all(preds, refs, normalizer="none", unit="char")


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_mix_of_str_kinds_equals_reference(data):
    n = data.draw(st.integers(1, 6))
    kinds = st.sampled_from([str, np.str_, Sub])
    word = st.lists(st.sampled_from(WORDS), max_size=3).map(" ".join)

    def text():
        return data.draw(kinds)(data.draw(word))

    preds = [text() for _ in range(n)]
    refs = []
    for _ in range(n):
        form = data.draw(st.sampled_from(["str", "list", "tuple", "array", "object"]))
        items = [text() for _ in range(data.draw(st.integers(1, 3)))]
        refs.append(items[0] if form == "str" else items if form == "list"
                    else tuple(items) if form == "tuple"
                    else np.array([str(x) for x in items]) if form == "array"
                    else np.array(items, dtype=object))
    container = data.draw(st.sampled_from(["list", "object"]))
    if container == "object":
        preds = np.array(preds, dtype=object)
    unit = data.draw(st.sampled_from(["token", "char"]))
    normalizer = data.draw(st.sampled_from(["squad", "none", "mlqa:en"]))
    check_all(preds, refs, unit=unit, normalizer=normalizer)


class Noisy(str):
    """A str subclass whose hash, equality, length and lower() run code that changes the
    lists being scored (and lie about the string)."""

    victims: list = []

    def __hash__(self):
        for v in Noisy.victims:
            v.extend(["junk"] * 1000)
        return 1

    def __eq__(self, other):
        for v in Noisy.victims:
            del v[:]
        return False

    def __len__(self):
        return 10**9

    def lower(self):
        for v in Noisy.victims:
            v.clear()
        return "LIES"


def test_str_subclass_with_hostile_methods_scores_its_text():
    refs_inner = ["Paris", "tower"]
    preds = ["paris", Noisy("the Tower"), "x"]
    refs = [refs_inner, [Noisy("tower"), "y"], "x"]
    Noisy.victims = [refs_inner]
    try:
        expected = reference_values(preds, refs)
        for unit in ("token", "char"):
            em, f1 = F.exact_match_and_f1(preds, refs, unit=unit)
            np.testing.assert_array_equal(em, expected[0])
            np.testing.assert_array_equal(f1, reference_values(preds, refs, unit=unit)[1])
        assert refs_inner == ["Paris", "tower"]  # no method of theirs was called
    finally:
        Noisy.victims = []


class GrowingList(list):
    """A list whose length and iteration disagree, and change from one call to the next."""

    calls = 0

    def __len__(self):
        return 1

    def __iter__(self):
        GrowingList.calls += 1
        return iter(["a"] * (GrowingList.calls * 100))


def test_reference_lists_that_lie_about_their_length():
    GrowingList.calls = 0
    preds = ["a", "b"]
    refs = [GrowingList(), "b"]
    em, f1 = F.exact_match_and_f1(preds, refs)
    np.testing.assert_array_equal(em, [1, 1])
    np.testing.assert_array_equal(f1, [1, 1])
    assert GrowingList.calls == 1  # read once


def test_normalizer_returning_a_lying_str_subclass():
    class Long(str):
        def __len__(self):
            return 10**6

    preds = ["Paris is", "b", "c d"]
    refs = ["paris", ["b", "c"], "d c"]
    for unit in ("token", "char"):
        got = F.f1(preds, refs, normalizer=lambda s: Long(s.lower()), unit=unit,
                   per_question=True)
        want = R.f1(preds, refs, normalizer=lambda s: s.lower(), unit=unit, per_question=True)
        np.testing.assert_array_equal(got, want)
        got = F.exact_match(preds, refs, normalizer=lambda s: Long(s.lower()),
                            per_question=True)
        want = R.exact_match(preds, refs, normalizer=lambda s: s.lower(), per_question=True)
        np.testing.assert_array_equal(got, want)


def test_errors_still_name_the_question():
    with pytest.raises(TypeError, match=r"question 1: the prediction must be a str, not int"):
        F.f1(["a", 3], ["a", "b"])
    with pytest.raises(TypeError, match=r"question 2: a reference must be a str, not int"):
        F.f1(["a", "b", "c"], ["a", np.str_("b"), ["c", 4]])
    with pytest.raises(TypeError, match=r"question 1: the references must be a str or a list"):
        F.f1(["a", "b"], [np.str_("a"), 5])


def test_reader_and_retriever_metrics_take_numpy_strings():
    preds = [[np.str_("Paris"), "Lyon"], [Sub("Rome"), None]]
    refs = [np.array(["paris"]), []]
    assert F.reader_metrics(preds, refs) == R.reader_metrics(
        [[plain(a) if a is not None else None for a in p] for p in preds],
        [plain(r) for r in refs])
    got = F.retriever_metrics([np.array(["d1", "d2"]), [Sub("x"), np.str_("d3")]],
                              [[np.str_("d2")], {"d3"}])
    assert got == R.retriever_metrics([["d1", "d2"], ["x", "d3"]], [["d2"], ["d3"]])


def test_squad_scores_with_numpy_string_predictions():
    preds = ["Paris", np.str_("the tower"), Sub("b")]
    golds = [["paris"], ["Eiffel Tower"], ["a", "b"]]
    em, f1 = S._answer_scores(preds, golds, "v1")
    want_em, want_f1 = reference_values(preds, golds, empty_rule="v1")
    np.testing.assert_array_equal(em, want_em)
    np.testing.assert_array_equal(f1, want_f1)
    flat = S._Golds([g for gs in golds for g in gs], np.array([0, 1, 2, 4]))
    em, f1 = S._scores_flat(preds, flat, "v1")
    np.testing.assert_array_equal(em, want_em)
    np.testing.assert_array_equal(f1, want_f1)


def test_kernels_refuse_buffers_of_the_wrong_size():
    from qafast import _kernels as K

    with pytest.raises(ValueError):
        K.answer_count_refs(["a", "b"], np.empty(2, dtype=np.int64))
    with pytest.raises(ValueError):
        K.answer_intern(["a"], ["a"], [], np.empty(1, dtype=np.int32),
                        np.empty(0, dtype=np.int32))
    with pytest.raises(ValueError):
        K.answer_tokens(["a b"], None, True, np.empty(1, dtype=np.int64))
    with pytest.raises(ValueError):
        K.answer_squad_chars(["a b"], np.empty(1, dtype=np.int64))
    with pytest.raises(TypeError):
        K.answer_tokens([3], None, True, np.empty(2, dtype=np.int64))
    with pytest.raises(ValueError, match="mode 3"):
        K.answer_tokens(["a b"], None, 3, np.empty(2, dtype=np.int64))


def test_copying_kernels_refuse_offsets_they_cannot_trust():
    """The kernels that copy the strings out index only what they measured: offsets that
    do not ascend, or disagree with the lists, are refused before anything is read without
    the GIL; a value that is not exactly a str is handed back to the general path."""
    from qafast import _kernels as K

    i32 = lambda n: np.empty(n, dtype=np.int32)
    off = lambda *v: np.array(v, dtype=np.int64)
    preds, refs = ["w", "b", "c"], [["w"], ["b", "x"], ["c"]]
    tok_off, ids = K.answer_encode_squad(preds, refs, off(0, 1, 3, 4), i32(3), i32(4))
    assert len(tok_off) == 5 and len(ids) == 4
    with pytest.raises(ValueError):          # a question's count that is not its list's
        K.answer_encode_squad(preds, refs, off(0, 2, 3, 4), i32(3), i32(4))
    with pytest.raises(ValueError):          # offsets that go back
        K.answer_encode_squad(preds, refs, off(0, 3, 1, 4), i32(3), i32(4))
    with pytest.raises(ValueError):          # past the references' count
        K.answer_encode_squad(preds, refs, off(0, 1, 3, 5), i32(3), i32(4))
    with pytest.raises(ValueError):
        K.answer_encode_squad(preds, refs, off(0, 1, 3), i32(3), i32(4))
    with pytest.raises(ValueError):
        K.answer_encode_squad(preds, refs[:2], off(0, 1, 3, 4), i32(3), i32(4))
    flat = ["w", "b", "x", "c"]
    assert K.answer_encode_squad_flat(preds, flat, off(0, 1, 3, 4), i32(3), i32(4)) is not None
    with pytest.raises(ValueError):
        K.answer_encode_squad_flat(preds, flat, off(0, 3, 1, 4), i32(3), i32(4))
    with pytest.raises(ValueError):
        K.answer_encode_squad_flat(preds, flat, off(0, 5, 5, 4), i32(3), i32(4))
    with pytest.raises(ValueError):
        K.answer_encode_squad_flat(preds, flat, off(0, 1, 3, 4), i32(3), i32(3))

    class Str(str):
        pass

    for bad_preds, bad_refs in (([Str("w"), "b", "c"], refs), (preds, [["w"], ["b", Str("x")],
                                                                      ["c"]]),
                                (preds, [["w"], ("b", "x"), Str("c")])):
        assert K.answer_encode_squad(bad_preds, bad_refs, off(0, 1, 3, 4), i32(3),
                                     i32(4)) is None
    assert K.answer_encode_squad_flat(preds, ["w", Str("b"), "x", "c"], off(0, 1, 3, 4),
                                      i32(3), i32(4)) is None
    # no prediction: index -1
    ps = i32(3)
    K.answer_encode_squad_flat(["w", None, "c"], flat, off(0, 1, 3, 4), ps, i32(4))
    assert ps[1] == -1
    out, sums = np.empty(3), np.zeros(2)
    assert K.answer_char_f1_direct([Str("w"), "b", "c"], refs, False, out, sums) == (0,
                                                                                     "prediction")
    assert K.answer_char_f1_direct(preds, [["w"], [], ["c"]], False, out, sums) == (1, "none")


def _legacy_str(text):
    """A str as C extensions made them with the API that Python 3.12 removed: created empty,
    then filled, without its code units until something asks for them."""
    import ctypes

    try:
        make = ctypes.pythonapi.PyUnicode_FromUnicode
        buffer_of = ctypes.pythonapi.PyUnicode_AsUnicode
    except AttributeError:
        pytest.skip("this Python has no str without code units")
    make.restype, make.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_ssize_t]
    buffer_of.restype, buffer_of.argtypes = ctypes.c_void_p, [ctypes.py_object]
    s = make(None, len(text))
    chars = ctypes.create_unicode_buffer(text, len(text))
    ctypes.memmove(buffer_of(s), chars, len(text) * ctypes.sizeof(ctypes.c_wchar))
    return s


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_strings_made_through_the_legacy_c_api():
    """Such a str has no kind until asked: the kernels that copy strings out have it make
    its code units first (they divided by its kind, 0, and the process died)."""
    texts = ["The Zürich 北京", "Paris", "zürich 北京", "paris.", "ΣΊΣΥΦΟΣ", "σίσυφος"]
    preds, golds = [0, 1, 4], [[2], [3], [5]]

    def questions():
        made = [_legacy_str(t) for t in texts]
        return [made[i] for i in preds], [[made[g] for g in r] for r in golds]

    plain_p, plain_r = [texts[i] for i in preds], [[texts[g] for g in r] for r in golds]
    for unit in ("token", "char"):
        p, r = questions()
        assert (F.f1(p, r, unit=unit, per_question=True).tolist()
                == R.f1(plain_p, plain_r, unit=unit, per_question=True))
    p, r = questions()
    assert (F.exact_match(p, r, per_question=True).tolist()
            == R.exact_match(plain_p, plain_r, per_question=True))
    p, r = questions()
    data = {"version": "1.1", "data": [{"paragraphs": [{"qas": [
        {"id": f"q{i}", "answers": [{"text": g} for g in golds_i]}
        for i, golds_i in enumerate(r)]}]}]}
    got = qafast.squad(data, {f"q{i}": x for i, x in enumerate(p)}, version="1.1")
    assert got == qafast.squad(data, {f"q{i}": texts[j] for i, j in enumerate(preds)},
                               version="1.1")


class ClearsOnCompare(str):
    """A dict key that collides with "text" and, when compared, empties a list."""

    victims: list = []

    def __hash__(self):
        return hash("text")

    def __eq__(self, other):
        for v in ClearsOnCompare.victims:
            del v[:]
        return False


@pytest.mark.parametrize("flat", [True, False])
def test_squad_walk_when_a_key_comparison_empties_the_lists(flat):
    from qafast import _kernels as K

    def answer(t):
        d = {ClearsOnCompare("k"): 0}  # first in the dict: probed before "text"
        d["text"] = t
        return d

    answers = [answer("a"), answer("b"), answer("c")]
    qas = [{"id": f"q{i}", "answers": answers if i == 0 else [{"text": "z"}]}
           for i in range(6)]
    data = [{"paragraphs": [{"qas": qas}]}]
    ClearsOnCompare.victims = [qas, answers]
    try:
        ids, texts = [], []
        if flat:
            K.squad_flatten_flat(data, ids, texts)
        else:
            K.squad_flatten(data, ids, texts)
    finally:
        ClearsOnCompare.victims = []
    assert ids == ["q0"]  # the walk stopped where the lists ended


def test_squad_lookup_when_an_id_hash_empties_the_ids():
    from qafast import _kernels as K

    class Clears(str):
        def __hash__(self):
            del ids[:]
            return 7

    ids = ["x", Clears("q1")] + [f"q{i}" for i in range(2, 40)]
    with pytest.raises(ValueError, match="changed"):
        K.squad_lookup(ids, {"q0": "a", "q1": "b"})
