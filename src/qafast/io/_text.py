"""Text read as UTF-8, a byte that is not being a format error naming the line."""

from __future__ import annotations

import io
import os
from typing import Any


def _decoded(data: bytes, name: str, error: type, newline: str | None) -> io.StringIO:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise error(f"not UTF-8 text (byte {data[e.start:e.start + 1]!r} at offset "
                    f"{e.start}: {e.reason})", path=name, line=line) from None
    return io.StringIO(text, newline=newline)


def open_utf8(path: Any, error: type, *, newline: str | None = None) -> io.StringIO:
    """The file at ``path`` decoded as UTF-8, as a text stream with ``open``'s ``newline``
    rule. Invalid UTF-8 raises ``error(message, path=..., line=...)`` (a LineFormatError
    subclass) with the line of the first bad byte; ``open``'s own error names neither."""
    from ..errors import InputTypeError

    if not isinstance(path, (str, os.PathLike)):
        raise InputTypeError(f"expected a path (str or os.PathLike), got {type(path).__name__}")
    name = os.fspath(path)
    if isinstance(name, bytes):
        raise InputTypeError(f"path must be str or os.PathLike[str], got bytes {name!r:.60}")
    with open(name, "rb") as f:
        data = f.read()
    return _decoded(data, name, error, newline)


def as_text(f: Any, path: str, error: type, *, newline: str | None = None) -> Any:
    """A file object as text: a binary one (``open(path, "rb")``, ``io.BytesIO``) is read
    and decoded as :func:`open_utf8` decodes a file; a text one is returned as is."""
    if isinstance(f, (io.BufferedIOBase, io.RawIOBase)):
        return _decoded(f.read(), path, error, newline)
    return f


def iter_decoded(f: Any, path: str, error: type):
    """``enumerate(f, 1)`` for a text file object, its decoding error (if any) becoming
    ``error`` at the line after the last one read (a text stream decodes ahead, so the bad
    byte may be a few lines further)."""
    lineno = 0
    it = iter(f)
    while True:
        try:
            line = next(it)
        except StopIteration:
            return
        except UnicodeDecodeError as e:
            raise error(f"not UTF-8 text ({e.reason}), at or after this line", path=path,
                        line=lineno + 1) from None
        lineno += 1
        yield lineno, line


def read_bytes(source: Any, name: str) -> tuple[bytes, str]:
    """``(data, label)``: the bytes of ``source`` (a path, or bytes as they are) and the name
    errors give it (the path, or ``<name bytes>``). ``name`` says what the input is
    (``"qrels"``, ``"run"``) in the error for a file that cannot be read."""
    from ..errors import InputError

    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), f"<{name} bytes>"
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            with open(path, "rb") as f:
                return f.read(), path
        except OSError as e:
            raise InputError(f"{name}: cannot read {path!r}: {e.strerror}") from None
    raise InputError(f"{name}: expected a path or bytes, got {type(source).__name__}")


def load_json(source: Any, what: str) -> tuple[Any, str]:
    """``(data, label)``: a JSON file read whole as the official scripts read it (the path is
    the label), or an object given as it is (labelled ``<what>``). Bytes are refused: they
    could be either."""
    import json

    from ..errors import FormatError, InputError, InputTypeError

    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f), path
        except OSError as e:
            raise InputError(f"{path}: cannot read the {what}: {e.strerror or e}",
                             path=path) from None
        except (ValueError, RecursionError) as e:
            raise FormatError(f"not a JSON {what}: {e}", path=path) from None
    if isinstance(source, (bytes, bytearray)):
        raise InputTypeError(f"the {what} must be a path or an object, got bytes")
    return source, f"<{what}>"

