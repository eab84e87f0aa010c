"""Factoid answers whose str subclass methods change the lists being read: a clear error or
the reference's numbers, never a read past a list or of a freed answer."""

import pytest

from qafast.factoid import evaluate_factoid
from qafast.reference import factoid as R


class Clearing(str):
    """A str whose == empties the lists it was told about (and is never equal)."""

    victims: list = []

    def __eq__(self, other):
        for v in Clearing.victims:
            del v[:]
        return False

    __hash__ = str.__hash__

    def lower(self):
        for v in Clearing.victims:
            del v[:]
        return "nothing"


@pytest.mark.parametrize("normalizer", [None, "bioasq"])
@pytest.mark.parametrize("victim", ["answers", "synonyms", "questions"])
def test_answer_whose_eq_empties_the_lists(normalizer, victim):
    answers = [Clearing("x"), "a", "b", "c", "d"]
    synonyms = ["d", "e", "f"]
    predicted = [answers, ["z"] * 5, ["q"] * 5]
    target = [synonyms if normalizer else "d", "z", "q"]
    Clearing.victims = [{"answers": answers, "synonyms": synonyms,
                         "questions": predicted}[victim]]
    kw = {} if normalizer is None else {"normalizer": normalizer}
    try:
        got = evaluate_factoid(predicted, target, **kw)
    except ValueError as e:
        assert "changed" in str(e)
        return
    finally:
        Clearing.victims = []
    assert 0.0 <= got["strict_accuracy"] <= 1.0


def test_str_subclasses_still_compare_as_text():
    class Sub(str):
        pass

    predicted = [[Sub("x"), Sub("a")], ["b"]]
    target = [Sub("a"), [Sub("c"), "b"]]
    assert evaluate_factoid(predicted, target) == R.evaluate_factoid(
        [["x", "a"], ["b"]], ["a", ["c", "b"]])
