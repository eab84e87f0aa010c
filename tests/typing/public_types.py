"""What a type checker infers for the public functions: checked by mypy (``files`` in
pyproject.toml), never run. A wrong overload makes an ``assert_type`` fail."""

from typing import Any

import numpy as np
from typing_extensions import assert_type

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
