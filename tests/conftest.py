"""What every test module shares: the hypothesis profiles.

``pytest`` runs each property, without a deadline, with the number of examples its
``@settings`` names, written ``examples(n)`` (``tests/_examples.py``), or Hypothesis' 100
where it names none.
``pytest --hypothesis-profile=ci`` doubles them all (.ci/run, once, with the slow tests:
``pytest -m "" --hypothesis-profile=ci``), gives every example as long as it takes (the
bounds-checked build is slower) and prints the blob that replays a failure.

The ``slow`` marker is declared beside the rest of pytest's configuration, in pyproject.toml.
"""

from hypothesis import settings

# registered here, before pytest's Hypothesis plugin loads the profile --hypothesis-profile names
settings.register_profile("ci", max_examples=200, deadline=None, print_blob=True)
# no test asserts a wall-clock time, and Hypothesis' 200 ms deadline is one: on a loaded
# machine it failed examples that passed when replayed (a 3,000-query Qrels, for one)
settings.register_profile("default", deadline=None)
settings.load_profile("default")
