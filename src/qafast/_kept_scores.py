"""Streaming state that keeps every question's exact match and F1, in arrival order.

Where an official script adds its scores left to right in plain floating point, or averages
them with ``numpy.mean`` (a pairwise sum), only the scores themselves give its last bit
whatever the batches; :class:`KeptScores` holds them, with a small code per question (CoQA's
source, DROP's answer type) that the script groups by. Each evaluation's class adds its own
``update`` and ``compute``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import InputError, InputTypeError

if TYPE_CHECKING:
    import numpy as np

# numpy is imported where it is used: defining a subclass (importing an evaluation's module)
# must not cost its import, which a command-line run that never needs it would pay


class KeptScores:
    """The state shared by the per-question streaming classes: scores kept batch by batch.

    A subclass sets ``_UNIT`` (what one row is, "turns" or "questions"), ``_LABEL`` (the name
    of the code's column in :meth:`state_dict`) and ``_LABELS`` (code -> label; a label's
    position is its code), and ``_BINARY_EM`` where exact match is 0 or 1 only.
    """

    _UNIT = "questions"
    _LABEL = "label"
    _LABELS: tuple = ()
    _BINARY_EM = False

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        self._em: list = []
        self._f1: list = []
        self._codes: list = []

    def __len__(self) -> int:
        return sum(len(a) for a in self._em)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} {self._UNIT})"

    def _append(self, em: np.ndarray, f1: np.ndarray, codes: np.ndarray) -> None:
        self._em.append(em)
        self._f1.append(f1)
        self._codes.append(codes)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        import numpy as np

        if not self._em:
            return np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int8)
        return (np.concatenate(self._em), np.concatenate(self._f1),
                np.concatenate(self._codes))

    def merge(self, *others):
        """Append the rows of ``others`` (unchanged), in order, after this one's."""
        cls = type(self)
        for o in others:
            if type(o) is not cls:
                raise InputTypeError(f"cannot merge a {type(o).__name__} into a {cls.__name__}")
        for state in [o.state_dict() for o in others]:
            self._append(*self._checked_state(state))
        return self

    def state_dict(self) -> dict:
        """The state as plain lists: ``{"format", "version", "exact_match", "f1", <label>}``."""
        em, f1, codes = self._arrays()
        return {"format": f"qafast.{type(self).__name__}", "version": 1,
                "exact_match": em.tolist(), "f1": f1.tolist(),
                self._LABEL: [self._LABELS[c] for c in codes.tolist()]}

    def load_state_dict(self, state: dict) -> None:
        """Replace the state by one from :meth:`state_dict`."""
        em, f1, codes = self._checked_state(state)
        self.reset()
        if len(em):
            self._append(em, f1, codes)

    def _code_of_label(self) -> dict:
        return {label: code for code, label in enumerate(self._LABELS)}

    def _checked_state(self, state) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        import numpy as np

        name = type(self).__name__
        if not isinstance(state, dict) or state.get("format") != f"qafast.{name}":
            raise InputError(f"not a {name} state")
        if state.get("version") != 1:
            raise InputError(f"{name} state version {state.get('version')!r}, expected 1")
        code_of = self._code_of_label()
        try:
            em = np.array(state["exact_match"], dtype=np.float64)
            f1 = np.array(state["f1"], dtype=np.float64)
            codes = np.array([code_of[k] for k in state[self._LABEL]], dtype=np.int8)
        except (KeyError, TypeError, ValueError):
            raise InputError(f"a {name} state needs exact_match, f1 and {self._LABEL} lists "
                             f"of numbers and {self._LABEL} names") from None
        if not (em.ndim == f1.ndim == 1 and len(em) == len(f1) == len(codes)):
            raise InputError(f"a {name} state's lists differ in length")
        em_ok = np.isin(em, (0.0, 1.0)) if self._BINARY_EM else (em >= 0) & (em <= 1)
        if not (em_ok.all() and ((f1 >= 0) & (f1 <= 1)).all()):
            raise InputError(f"a {name} state holds scores outside [0, 1]")
        return em, f1, codes
