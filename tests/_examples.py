"""The number of examples a hypothesis property runs, scaled by the loaded profile.

``@settings(max_examples=examples(150))`` runs 150 examples under Hypothesis' default profile
(``pytest``) and as many more as the loaded profile raises Hypothesis' default of 100 by:
300 under ``--hypothesis-profile=ci`` (tests/conftest.py), which .ci/run uses once. A property
that names no number gets the profile's own max_examples, so both kinds scale alike.
"""

from hypothesis import settings

#: Hypothesis' own default max_examples, which the numbers in the tests are relative to
BASE = 100


def examples(n: int) -> int:
    """``n`` examples, times the loaded profile's max_examples over Hypothesis' default."""
    return max(1, n * settings().max_examples // BASE)
