"""The error every line-based reader raises for a malformed line."""

from __future__ import annotations

from typing import Any

from ..errors import FormatError


class LineFormatError(FormatError):
    """A malformed line of a text file: ``path`` names the source (``'<stdin>'``,
    ``'<bytes>'`` or ``'<file>'`` when it has no file name), ``line`` is the 1-based line
    number (None for an error of the whole stream, such as truncated gzip data) and
    ``message`` says what was expected. Each reader raises its own subclass."""

    def __init__(self, message: str, *, path: str, line: int | None = None) -> None:
        super().__init__(message, path=path, line=line)

    def __reduce__(self) -> Any:
        # keyword-only arguments: rebuild through a function so the error pickles
        return (_rebuild, (type(self), self.message, self.path, self.line))


def _rebuild(cls, message: str, path: str, line: int | None) -> LineFormatError:
    return cls(message, path=path, line=line)
