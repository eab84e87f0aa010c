"""Reading a gold JSON file without the fields that are not scored (see
``_json_scan_kernels.pxi``)."""

from __future__ import annotations

from . import _kernels


def scan_skip(raw: bytes, layout: int) -> str | None:
    """The text of ``raw`` with null for the values the scan skips (line ends made ``\\n``),
    or None where the scan leaves the file to json.loads."""
    spans = _kernels.json_skip_spans(raw, layout) if raw else None
    if not spans:   # (nothing to skip: json.loads reads the file as before)
        return None
    view = memoryview(raw)
    parts: list = []
    at = 0
    for k in range(0, len(spans), 2):
        parts.append(view[at:spans[k]])
        parts.append(b"null")
        at = spans[k + 1]
    parts.append(view[at:])
    text = b"".join(parts).decode("utf-8")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text
