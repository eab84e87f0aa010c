"""The exceptions qafast raises for bad input.

Every error qafast raises for what it was given is an instance of :class:`QafastError`, and
also of :class:`ValueError` (a wrong value: :class:`InputError` and its subclasses) or
:class:`TypeError` (a wrong type: :class:`InputTypeError`), so ``except ValueError`` keeps
working. Messages name the offending file and line, query, question, document, measure or
argument; the attributes below carry the same facts for programs.

- :class:`InputError` (``ValueError``): a value qafast cannot evaluate (NaN score, document
  retrieved twice, mismatched lengths, a number too large for the kernels, ...).
- :class:`FormatError` (``InputError``): a file that is not in its format, including
  truncated or corrupt gzip data and JSON nested too deeply to read; ``path`` names it and
  ``line`` the 1-based line when there is one. Each reader raises a subclass
  (``qafast.io.TrecFormatError``, ``SquadFormatError``, ``DbqaFormatError``, ...).
- :class:`MeasureError` (``InputError``): an unknown measure name or malformed parameters.
- :class:`InputTypeError` (``TypeError``): an argument of a type qafast does not take, such
  as bytes where a path or a file is expected.

The plain-Python specification (``qafast.reference``) stands alone and raises the built-in
classes.

Examples
--------
>>> import qafast
>>> from qafast.errors import QafastError, FormatError
>>> try:
...     qafast.Run.from_file(b"q1 Q0 d1 1\\n")
... except FormatError as e:
...     print(e.path, e.line, isinstance(e, ValueError), isinstance(e, QafastError))
<bytes> 1 True True
"""

from __future__ import annotations

from typing import Any

__all__ = ["FormatError", "InputError", "InputTypeError", "MeasureError", "QafastError"]


class QafastError(Exception):
    """Base of every qafast error; each concrete class is also a ValueError or TypeError.

    ``path``, ``line``, ``query`` and ``field`` say where the bad input is (None when it
    does not apply).
    """

    path: str | None = None
    line: int | None = None
    query: Any = None
    field: str | None = None

    def __reduce__(self) -> Any:
        # subclasses take keyword-only arguments: rebuild without calling __init__
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


def _rebuild(cls, args, state):
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class InputError(QafastError, ValueError):
    """A value qafast cannot evaluate. The message says what and where; ``path``, ``line``,
    ``query`` and ``field`` are set when given."""

    def __init__(self, message: str = "", *, path: str | None = None, line: int | None = None,
                 query: Any = None, field: str | None = None) -> None:
        super().__init__(message)
        if path is not None:
            self.path = path
        if line is not None:
            self.line = line
        if query is not None:
            self.query = query
        if field is not None:
            self.field = field


class FormatError(InputError):
    """A file (or bytes, or stream) that is not in its format. The message starts with
    ``path`` (``'<stdin>'``, ``'<bytes>'`` or ``'<file>'`` when there is no file name) and,
    when known, the 1-based ``line``."""

    def __init__(self, message: str, *, path: str, line: int | None = None,
                 query: Any = None, field: str | None = None) -> None:
        where = path if line is None else f"{path}, line {line}"
        super().__init__(f"{where}: {message}", path=path, line=line, query=query,
                         field=field)
        self.path = path
        self.line = line
        self.message = message


class MeasureError(InputError):
    """A measure name that no family, alias or nickname matches, or malformed parameters."""


class InputTypeError(QafastError, TypeError):
    """An argument of a type qafast does not take (``field`` names it when given)."""

    def __init__(self, message: str = "", *, field: str | None = None) -> None:
        super().__init__(message)
        if field is not None:
            self.field = field


def in_context(error: Exception, prefix: str) -> Exception:
    """``error`` again, of the same class and with the same attributes, its message led by
    ``prefix`` (the run or file it concerns). The error is copied rather than built again,
    since the qafast classes take keyword-only arguments that a bare ``type(error)(text)``
    would lack."""
    import copy

    again = copy.copy(error)
    again.args = (f"{prefix}: {error}",)
    return again
