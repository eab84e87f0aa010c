"""What a type checker infers for the public functions: checked by mypy (``files`` in
pyproject.toml), never run. A wrong overload makes an ``assert_type`` fail."""

from typing import Any, assert_type

import numpy as np

import qafast

qrels = {"q1": {"d1": 1}}
run = {"q1": {"d1": 0.5}}
flag = bool(len(run))

assert_type(qafast.evaluate(qrels, run, "map"), dict[str, float])
assert_type(qafast.evaluate(qrels, run, ["map", "ndcg@10"], per_query=False), dict[str, float])
assert_type(qafast.evaluate(qrels, run, "map", per_query=True), dict[Any, dict[str, float]])
assert_type(qafast.evaluate(qrels, run, "map", per_query=flag),
            dict[str, float] | dict[Any, dict[str, float]])

assert_type(qafast.exact_match(["a"], ["a"]), float)
assert_type(qafast.exact_match(["a"], ["a"], per_question=True), np.ndarray)
assert_type(qafast.f1(["a"], [["a", "b"]]), float)
assert_type(qafast.f1(["a"], ["a"], per_question=True), np.ndarray)

predicted = {"q1": [("tree", 0.9)]}
gold = {"q1": ["tree"]}
assert_type(qafast.evaluate_concepts(predicted, gold, ["hit@1"]), dict[str, float])
assert_type(qafast.evaluate_concepts(predicted, gold, "hit@1", per_question=True),
            dict[Any, dict[str, float]])
assert_type(qafast.hit_at_k(predicted, gold, k=1), float)
assert_type(qafast.recall_at_k(predicted, gold, per_question=True), dict[Any, float])
assert_type(qafast.tw_events_score([["o"]], [["o"]]), float)
assert_type(qafast.tw_events_score([["o"]], [["o"]], per_tweet=True), dict[Any, float])

precision, recall, thresholds = qafast.precision_recall_curve([0, 1], [0.1, 0.9])
assert_type(precision, np.ndarray)
