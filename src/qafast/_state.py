"""The saved state of a streaming metric as data: one versioned record per kind of metric.

A metric's ``state_dict()`` is a flat dict of strings, ints and arrays (as plain lists:
``torch.load(..., weights_only=True)`` reads them, pickle and JSON write them; or as torch
tensors, or, in a pickled metric, numpy arrays). Each kind of metric
describes it once, as a :class:`StateSpec`: its fields (:class:`Field`: name, type or dtype,
shape, range of values, and how two ranks' values combine) and the rules that tie fields
together (:class:`Rule`: sums within what the count allows, rows only in a state of rows,
...). :meth:`StateSpec.validate` is the one reader of a state: ``load_state_dict``, ``merge``,
unpickling and the torch integrations all go through it, and it returns a
:class:`StateRecord` whose arrays are private, C-contiguous and of the field's dtype.

The rules accept every state that updates and merges can make, and nothing else that could
make ``compute()`` give a value outside what its measures can give, raise later, or overflow
when merged: an exact sum is held to its count times the range of one query's value
(:class:`ValueRange`), so its top limb stays far from the int64 limits however many states
are added.

An array may come as a plain (nested) list, a numpy array or a torch tensor (read by
:func:`qafast._convert.as_array`), so a state written by any of them loads, the numpy arrays
of earlier versions too.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from . import _exactsum
from ._convert import as_array
from .errors import InputError, InputTypeError

__all__ = ["Field", "Rule", "StateRecord", "StateSpec", "ValueRange", "exact_sum_rules"]


@dataclass(frozen=True)
class ValueRange:
    """What one query's (or question's) value of a measure may be: a finite value in
    ``[low, high]`` or, where ``nonfinite``, also NaN and, where ``infinite`` too, an
    infinity (summed apart, in the state's ``nonfinite_sums``)."""

    low: float
    high: float
    nonfinite: bool = False
    infinite: bool = True

    def describe(self) -> str:
        finite = f"in [{self.low:g}, {self.high:g}]"
        if not self.nonfinite:
            return finite
        return finite + (", or not finite" if self.infinite else ", or NaN")


@dataclass(frozen=True)
class Field:
    """One entry of a state dict.

    Attributes
    ----------
    name : str
        The key in the state dict.
    kind : {"str", "int", "bool", "names", "array"}
        A str, an int (any integer type but bool), a bool, a list of str, or an array.
    dtype : str
        Arrays: the dtype held (``"int64"``, ``"int32"`` or ``"float64"``). Any integer
        dtype is read for an integer field and any float dtype up to 64 bits for a float
        field; an empty array of any dtype is read for any field.
    shape : tuple of str
        Arrays: the name of each dimension. ``"columns"`` (one per measure) and ``"limbs"``
        (of an exact sum) are known before the state is read; any other name (``"rows"``) is
        set by the first array that has it, and every later one must agree.
    low, high : int or str, optional
        Ints and integer arrays: the least and greatest value (for arrays, the dtype's limits
        when not given). A str names a bound the metric holding the state sets (``bounds``
        of :meth:`StateSpec.validate`: the highest grade its measures take, ...).
    choices : tuple
        Strs and ints: the values allowed (any when empty).
    nan : bool
        Float arrays: whether NaN may appear.
    default : optional
        The value of a field that states written before it existed lack (a field without
        a default must be present).
    reduce : {"same", "sum", "exact_sum", "cat", "mode", "flag"}
        How the states of two ranks (or two merged metrics) combine: the value must be the
        same (the metric's options), values add (exact sums add limb by limb and are then
        normalized), arrays are concatenated (rows), or the one value that is set wins
        (``mode``: not ``""``; ``flag``: not -1).
    """

    name: str
    kind: str
    dtype: str = ""
    shape: tuple[str, ...] = ()
    low: int | str | None = None
    high: int | str | None = None
    choices: tuple = ()
    nan: bool = True
    default: Any = None
    reduce: str = "same"


#: a rule's check: the values read so far (every field) and the per-column value ranges, to
#: an explanation of what is wrong, or None
Check = Callable[[Mapping[str, Any], Sequence[tuple[str, ValueRange]]], str | None]


@dataclass(frozen=True)
class Rule:
    """A consistency rule between fields: ``check`` returns what is wrong (read after the
    name of ``field``, which the error names), or None when the rule holds."""

    field: str
    check: Check


@dataclass(frozen=True)
class StateSpec:
    """The state of one kind of metric: its format name, version, fields and rules.

    ``config`` names the fields that hold the metric's options: a state loads only into a
    metric with the same options.
    """

    kind: str
    version: int
    fields: tuple[Field, ...]
    rules: tuple[Rule, ...]
    config: tuple[str, ...]

    @property
    def format(self) -> str:
        """The ``"format"`` entry of every state of this kind."""
        return f"qafast.{self.kind}"

    def field(self, name: str) -> Field:
        """The field called ``name``."""
        return next(f for f in self.fields if f.name == name)

    def read_config(self, state) -> dict[str, Any]:
        """The options a state was saved with (checked for type and range only)."""
        self._check_header(state)
        return {f.name: self._read(state, f, {}) for f in self.fields if f.name in self.config}

    def validate(self, state, *, config: Mapping[str, Any],
                 columns: Sequence[tuple[str, ValueRange]],
                 bounds: Mapping[str, tuple[int, str]] = MappingProxyType({})) -> StateRecord:
        """``state`` checked field by field and rule by rule, as a :class:`StateRecord`.

        Parameters
        ----------
        state : dict
            From ``state_dict()`` (arrays as lists, numpy arrays or tensors).
        config : mapping
            The options of the metric that will hold the state (``config`` fields, as
            :meth:`read_config` gives them).
        columns : sequence of (str, ValueRange)
            That metric's values: name, and what one query's value may be.
        bounds : mapping of str to (int, str)
            The bounds that fields name (``Field.low`` / ``high``), each with what it is,
            for messages.

        Raises
        ------
        InputTypeError
            Not a state of this kind, or a field of the wrong type.
        InputError
            Another version, options other than ``config``, a missing field, or a field
            whose dtype, shape, values or consistency with the others is wrong. ``field``
            names the field.
        """
        saved = self.read_config(state)
        differ = [name for name in self.config if saved[name] != config[name]]
        if differ:
            raise InputError(f"the state is for {_describe(saved)}; this metric has "
                             f"{_describe(config)}", field=differ[0])
        dims = {"columns": len(columns), "limbs": _exactsum.LIMBS}
        values = dict(saved)
        for f in self.fields:
            if f.name not in values:
                values[f.name] = self._read(state, f, dims, bounds)
        for rule in self.rules:
            problem = rule.check(values, columns)
            if problem is not None:
                raise InputError(f"corrupted {self.kind} state: {rule.field} {problem}",
                                 field=rule.field)
        return StateRecord(self, MappingProxyType(values))

    def _check_header(self, state) -> None:
        """A mapping whose ``format`` is this kind's and ``version`` this version, and with
        no key that is not a field (a state of another kind or version, or tampered)."""
        fmt = state.get("format") if isinstance(state, Mapping) else None
        if not (isinstance(fmt, str) and fmt == self.format):
            raise InputTypeError(f"not a {self.format} state (from {self.kind}.state_dict())",
                                 field="format")
        version = _as_int(state.get("version"))
        if version != self.version:
            shown = (_short(version) if version is not None
                     else type(state.get("version")).__name__)
            raise InputError(f"{self.kind} state version {shown}; this qafast reads "
                             f"version {self.version}", field="version")
        known = {"format", "version", *(f.name for f in self.fields)}
        unknown = [k for k in state if k not in known]
        if unknown:
            raise InputError(f"corrupted {self.kind} state: {_shown_key(unknown[0])} is not a "
                             f"field of it (it has {', '.join(sorted(known))})",
                             field=str(unknown[0]))

    def _read(self, state: Mapping, f: Field, dims: dict[str, int],
              bounds: Mapping[str, tuple[int, str]] = MappingProxyType({})):
        if f.name not in state and f.default is not None:
            return f.default  # a state written before the field existed
        try:
            value = state[f.name]
        except KeyError:
            raise InputError(f"corrupted {self.kind} state: no {f.name!r}", field=f.name) \
                from None
        reader = _READERS[f.kind]
        return reader(_Where(self.kind, f, bounds), value, dims)


@dataclass(frozen=True)
class StateRecord:
    """A state that :meth:`StateSpec.validate` accepted: ``record[name]`` is a field's value
    (a str, an int, a tuple of str, or a read-only C-contiguous array of the field's
    dtype)."""

    spec: StateSpec
    values: Mapping[str, Any]

    def __getitem__(self, name: str):
        return self.values[name]


def state_dict(spec: StateSpec, values: Mapping[str, Any], *,
               arrays: str = "lists") -> dict[str, Any]:
    """The state dict of ``values`` (every field of ``spec``), sharing nothing with them.

    ``arrays`` says how arrays are given: ``"lists"`` (nested lists of Python ints and
    floats: with the strs and ints, what ``torch.load(..., weights_only=True)`` reads and
    plain pickle writes), ``"numpy"`` (arrays, for pickling a metric compactly and for the
    torch integrations) or ``"tensors"`` (torch CPU tensors). The names of a ``names`` field
    are a list; ints and strs are Python's own.
    """
    out: dict[str, Any] = {"format": spec.format, "version": spec.version}
    for f in spec.fields:
        value = values[f.name]
        if f.kind == "array":
            value = np.array(value, order="C")  # a copy the caller owns
            if arrays == "lists":
                value = value.tolist()
            elif arrays == "tensors":
                value = _torch().from_numpy(value)
        elif f.kind == "names":
            value = [str(name) for name in value]
        elif f.kind == "int":
            value = int(value)
        elif f.kind == "bool":
            value = bool(value)
        else:
            value = str(value)
        out[f.name] = value
    return out


def _torch():
    # imported for this option only: qafast itself never needs torch
    try:
        import torch
    except ImportError:
        raise ImportError("state_dict(tensors=True) gives torch tensors: install torch, or "
                          "save the plain lists state_dict() gives") from None
    return torch


# ------------------------------------------------------------------------------ field readers

@dataclass(frozen=True)
class _Where:
    """The field being read, for messages."""

    kind: str
    field: Field
    bounds: Mapping[str, tuple[int, str]]

    def limits(self, low: int, high: int) -> tuple[int, int, str]:
        """The field's least and greatest value (``low`` and ``high`` where it sets none),
        and what a bound named by the metric is."""
        f, why = self.field, []
        ends = []
        for end, default in ((f.low, low), (f.high, high)):
            if isinstance(end, str):
                end, what = self.bounds[end]
                why.append(f"{end} is {what}")
            ends.append(default if end is None else end)
        return ends[0], ends[1], "".join(f" ({w})" for w in why)

    def type_error(self, expected: str, value) -> InputTypeError:
        return InputTypeError(f"corrupted {self.kind} state: {self.field.name} must be "
                              f"{expected}, not {type(value).__name__}", field=self.field.name)

    def error(self, problem: str) -> InputError:
        return InputError(f"corrupted {self.kind} state: {self.field.name} {problem}",
                          field=self.field.name)


def _read_str(where: _Where, value, dims) -> str:
    if not isinstance(value, str):
        raise where.type_error("a str", value)
    _check_choice(where, str(value))
    return str(value)


def _as_int(value) -> int | None:
    """``value`` as an int, or None when it is not one. operator.index takes Python and numpy
    ints and 0-d integer tensors; a bool is an int to Python but never a count or a flag
    here."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _read_int(where: _Where, value, dims) -> int:
    n = _as_int(value)
    if n is None:
        raise where.type_error("an int", value)
    low, high, why = where.limits(-2**63, 2**63 - 1)
    if not low <= n <= high:
        raise where.error(f"{_short(n)} is outside {low}..{high}{why}")
    _check_choice(where, n)
    return n


def _read_bool(where: _Where, value, dims) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise where.type_error("a bool", value)
    return bool(value)


def _read_names(where: _Where, value, dims) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        raise where.type_error("a list of str", value)
    for i, name in enumerate(value):
        if not isinstance(name, str):
            raise InputTypeError(f"corrupted {where.kind} state: {where.field.name}[{i}] must "
                                 f"be a str, not {type(name).__name__}", field=where.field.name)
    return tuple(str(name) for name in value)


def _check_choice(where: _Where, value) -> None:
    choices = where.field.choices
    if choices and value not in choices:
        raise where.error(f"{value!r}; expected one of {', '.join(map(repr, choices))}")


def _read_array(where: _Where, value, dims: dict[str, int]) -> np.ndarray:
    try:
        a = as_array(value, where.field.name)
    except (InputError, InputTypeError) as e:
        raise where.error(f"is not an array ({e})") from None
    target = np.dtype(where.field.dtype)
    _check_dtype_and_shape(where, a, target, dims)
    if target.kind == "i":
        _check_int_range(where, a, target)
    elif not where.field.nan and a.dtype.kind == "f" and np.isnan(a).any():
        raise where.error(f"holds NaN (at {_first(np.isnan(a))})")
    out = np.array(a, dtype=target, order="C")  # a private copy, C-contiguous
    out.flags.writeable = False
    return out


def _check_dtype_and_shape(where: _Where, a: np.ndarray, target: np.dtype,
                           dims: dict[str, int]) -> None:
    # any integer dtype for an integer field (the values are range-checked), any float
    # dtype that float64 holds exactly for a float field; an empty array of any dtype, as a
    # plain empty list reads as float64
    readable = a.dtype.kind in "iu" if target.kind == "i" else (
        a.dtype.kind == "f" and a.dtype.itemsize <= 8)
    if a.size and not readable:
        raise where.error(f"of dtype {a.dtype} and shape {a.shape}; expected "
                          f"{'integers' if target.kind == 'i' else 'floats'} ({target})")
    names = where.field.shape
    if a.shape != _expected_shape(names, a.shape, dims):
        sizes = ", ".join(str(dims.get(name, name)) for name in names)
        raise where.error(f"of dtype {a.dtype} and shape {a.shape}; expected shape "
                          f"({sizes}{',' if len(names) == 1 else ''}) ({' x '.join(names)})")


def _expected_shape(names: tuple[str, ...], shape: tuple[int, ...],
                    dims: dict[str, int]) -> tuple[int | None, ...]:
    """The shape the dimension names ask for; a name not yet known takes its size from
    ``shape`` (when the number of dimensions is right)."""
    if len(shape) == len(names):
        for name, size in zip(names, shape):
            dims.setdefault(name, int(size))
    return tuple(dims.get(name) for name in names)


def _check_int_range(where: _Where, a: np.ndarray, target: np.dtype) -> None:
    if not a.size:
        return
    info = np.iinfo(target)
    low, high, why = where.limits(int(info.min), int(info.max))
    least, greatest = int(a.min()), int(a.max())
    if least < low or greatest > high:
        flat = int(np.argmin(a)) if least < low else int(np.argmax(a))
        at = _index(flat, a.shape)
        raise where.error(f"holds {int(a[at])} (at {at}), outside {low}..{high}{why}")


def _first(mask: np.ndarray) -> tuple[int, ...] | int:
    return _index(int(np.flatnonzero(mask.ravel())[0]), mask.shape)


def _index(flat: int, shape: tuple[int, ...]) -> tuple[int, ...] | int:
    i = np.unravel_index(flat, shape)
    return int(i[0]) if len(i) == 1 else tuple(int(k) for k in i)


def _shown_key(key) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."


def _short(n: int) -> str:
    text = repr(n)
    return text if len(text) <= 30 else f"{text[:12]}... (a {n.bit_length()}-bit number)"


def _describe(config: Mapping[str, Any]) -> str:
    """``measures ['map'] (relevance_level=1, ...)``: the first option, then the others."""
    (first, value), *rest = [(k, list(v) if isinstance(v, tuple) else v)
                             for k, v in config.items()]
    return f"{first} {value!r} ({', '.join(f'{k}={v!r}' for k, v in rest)})"


_READERS: dict[str, Callable[[_Where, Any, dict[str, int]], Any]] = {
    "str": _read_str, "int": _read_int, "bool": _read_bool, "names": _read_names,
    "array": _read_array,
}


# ------------------------------------------------------------------------------ exact sums

def exact_sum_rules(noun: str, nouns: str) -> tuple[Rule, ...]:
    """The rules of a state holding ``count`` (of what ``noun``, plural ``nouns``, names),
    exact ``sums`` (one accumulator per column) and ``nonfinite_sums``."""
    return (Rule("sums", _limbs_normal), Rule("sums", _sums_within(noun, nouns)),
            Rule("nonfinite_sums", _nonfinite_sums))


def _limbs_normal(values, columns) -> str | None:
    if _exactsum.is_normal(values["sums"]):
        return None
    return ("out of range: every limb of an exact sum but the last must be in [0, 2**32), "
            "as the kernels leave them")


def _sums_within(noun: str, nouns: str) -> Check:
    def check(values, columns) -> str | None:
        """Each exact sum is between count times the least and the greatest value one
        query can have: the sum of ``count`` such values, added exactly, always is."""
        count = values["count"]
        totals = _exactsum.as_integers(values["sums"])
        for j, (total, (name, allowed)) in enumerate(zip(totals, columns)):
            low, high = _fixed_point(allowed)
            if not count * low <= total <= count * high:
                return (f"out of range: column {j} ({name!r}) adds up to "
                        f"{_approx(total)} over {count} {noun if count == 1 else nouns}, "
                        f"where each value is "
                        f"{allowed.describe()}")
        return None
    return check


@functools.lru_cache(maxsize=64)
def _fixed_point(allowed: ValueRange) -> tuple[int, int]:
    """The range's ends as exact integers in units of 2**-1074, as exact sums hold values."""
    return _exactsum.units(allowed.low), _exactsum.units(allowed.high)


def _nonfinite_sums(values, columns) -> str | None:
    """Infinities and NaN are summed apart: the sum is 0, an infinity or NaN, and 0 where
    the measure is always finite or nothing was counted."""
    special = values["nonfinite_sums"]
    for j, (value, (name, allowed)) in enumerate(zip(special.tolist(), columns)):
        if value == 0.0:
            continue
        if np.isfinite(value):
            return (f"holds {value!r} for column {j} ({name!r}); it holds only the sum of "
                    "the infinite and NaN values: 0, an infinity or NaN")
        if not allowed.nonfinite or values["count"] == 0:
            why = "no value was counted" if allowed.nonfinite else "the measure is finite"
            return f"holds {value!r} for column {j} ({name!r}), where {why}"
        if not allowed.infinite and not np.isnan(value):
            return (f"holds {value!r} for column {j} ({name!r}), whose values are "
                    f"{allowed.describe()}")
    return None


def _approx(total: int) -> str:
    try:
        return f"{total / (1 << 1074):.6g}"
    except OverflowError:
        return "more than the largest double" if total > 0 else "less than -(largest double)"
