"""What every test module shares: the hypothesis profiles.

``pytest`` runs each property with the number of examples its ``@settings`` names, written
``examples(n)`` (``tests/_examples.py``), or Hypothesis' 100 where it names none.
``pytest --hypothesis-profile=ci`` doubles them all (.ci/run, once, with the slow tests:
``pytest -m "" --hypothesis-profile=ci``), gives every example as long as it takes (the
bounds-checked build is slower) and prints the blob that replays a failure.

The ``slow`` marker is declared beside the rest of pytest's configuration, in pyproject.toml.
"""

from hypothesis import settings

# registered here, before pytest's Hypothesis plugin loads the profile --hypothesis-profile names
settings.register_profile("ci", max_examples=200, deadline=None, print_blob=True)
