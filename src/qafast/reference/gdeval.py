"""The specification: the TREC Web track's ``gdeval.pl`` (version 1.3) in plain Python.

The readable definition of what ``qafast gdeval`` prints and :func:`qafast.gdeval` returns,
written from what the Perl script does (read, then described here in our own words). The
compiled path is tested against it byte for byte.

Reading the qrels
-----------------
* Lines end at ``\\n``; every ``\\r`` in a line is dropped. A line is split at runs of ASCII
  whitespace (space, tab, ``\\n``, ``\\v``, ``\\f``, ``\\r``), leading whitespace ignored:
  ``topic``, a second column, ``docno``, ``judgment``; more columns are ignored.
* Everything up to the topic's last ``-`` is dropped (``WT10-51`` is topic ``51``). The line
  is a format error unless the topic is digits, the second column is 0 as a Perl number
  (``0``, ``Q0``, ``abc`` and ``0.0`` are; ``1`` is not), and the judgment is an optional
  ``-`` and digits, at most 4. A blank line is a format error.
* Only judgments above 0 are kept. A topic with one is *seen*; its ideal gains are its kept
  judgments (a document judged twice counts twice), best first. A document's judgment is the
  lowest of its kept ones (the script keeps the last, in its best-first order); a document
  without one has gain 0.

Reading a run
-------------
* The same splitting: ``topic``, a second column (not checked), ``docno``, ``rank``, ``score``,
  ``runid``. A format error unless the topic (after the same ``-`` rule) and the rank are
  digits and the run id is neither missing, empty nor ``0``. The run id printed is the last
  line's.
* The score is read as Perl reads a number from a string: the longest prefix that is a
  decimal number (optional sign, digits, a point, an exponent; ``inf``, ``infinity`` and
  ``nan`` in any case), else 0 (``abc`` is 0, ``12abc`` is 12, ``0x10`` is 0).
* Documents are ordered by topic (as numbers), then score (highest first), then docno (in
  byte order, the greater first). A document retrieved twice is two documents.

Measures, at depth ``k`` (20 by default)
----------------------------------------
* ``dcg(gains) = sum over the first min(k, n) gains of (2**g - 1) / (log(i + 2) / log(2))``
  (``i`` from 0, natural logarithms, summed in rank order).
* ``ndcg = dcg(run gains) / dcg(ideal gains)``.
* ``err``: ``r = (2**g - 1) / 16``, ``err += r * decay / (i + 1)``, ``decay *= 1 - r``, over the
  first min(k, n) gains.
* A topic of the run that is not seen prints nothing and counts for nothing. The others print
  ``runid,topic,ndcg,err`` with ``%.5f``, in topic order, then ``runid,amean,...``: the sums
  taken in that order, divided by the number of topics printed (with ``-c``, by the number of
  seen topics), or 0 when that number is 0.

Risk-sensitive evaluation (``-baseline FILE``, ``-riskAlpha a``)
-----------------------------------------------------------------
* The baseline run is read and measured first, printing nothing. Each printed value of the
  run becomes ``v - b`` when ``v >= b``, else ``(1 + a) * (v - b)``, ``b`` the baseline's value
  for the topic (0 where the baseline has none). The run id printed is
  ``runid (rel to. baseline_runid, rs=1+a, a=A)``, ``A`` as given (``0`` when not given).
* With ``-c`` too, each seen topic missing from the run is printed after the others (in topic
  order) with 0 for both measures, weighted against the baseline; where the baseline has no
  value for such a topic, the value of the previous such topic is used (the script keeps it
  in a variable it does not reset), 0 at first.

What qafast refuses (``docs/known-differences.md``): a topic written two ways that are the
same number (``7`` and ``07``: the script groups them as one topic but looks them up as two,
and divides by zero), a topic of more than 18 digits, a ``NaN`` score (the script's sort then
depends on its merge order), and a ``%`` in the run id printed (the script uses it as a
``printf`` format).

This module stands alone and raises :class:`Rejected` (a ``ValueError``) for input the script
rejects and the input qafast refuses.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["MAX_JUDGMENT", "QRELS_FORM", "RUN_FORM", "Rejected", "format_report",
           "gdeval_report", "gdeval_values", "perl_number", "read_qrels", "read_run"]

#: the highest judgment gdeval.pl takes
MAX_JUDGMENT = 4
_SPLIT = re.compile(rb"[ \t\n\x0b\x0c\r]+")
_NUMBER = re.compile(
    rb"[ \t\n\x0b\x0c\r]*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|(?i:infinity|inf|nan)))")
_LOG2 = math.log(2.0)


QRELS_FORM = "gdeval.pl reads 'topic 0 docno judgment', the topic digits, the judgment at most 4"
RUN_FORM = ("gdeval.pl reads 'topic Q0 docno rank score runid', the topic and rank digits, "
             "the run id not 0")


class Rejected(ValueError):
    """A line the script rejects, or one qafast refuses: ``source`` (``"qrels"``, ``"run"``
    or ``"baseline"``), ``line`` (1-based) and ``reason``."""

    def __init__(self, source: str, line: int, reason: str):
        super().__init__(f"{source} line {line}: {reason}")
        self.source, self.line, self.reason = source, line, reason


def perl_number(text: bytes) -> float:
    """The number Perl reads from ``text`` (0 when no prefix of it is a number)."""
    m = _NUMBER.match(text)
    if not m:
        return 0.0
    token = m.group(1)
    try:
        return float(token)
    except ValueError:  # a sign with no digits after it ("+.e3" matches no digits)
        return 0.0


def _fields(line: bytes) -> list[bytes]:
    return [f for f in _SPLIT.split(line.replace(b"\r", b"")) if f]


def _topic(raw: bytes | None) -> bytes | None:
    if raw is None:
        return None
    topic = raw.rpartition(b"-")[2]
    return topic if re.fullmatch(rb"[0-9]+", topic) else None


def _lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _check_topic(topic: bytes, spellings: dict, name: str, number: int) -> int:
    if len(topic) > 18:
        raise Rejected(name, number, f"topic {topic.decode()!r} has more than 18 digits")
    value = int(topic)
    first = spellings.setdefault(value, topic)
    if first != topic:
        raise Rejected(name, number, f"topic {topic.decode()!r} is topic {first.decode()!r} "
                       "written another way (gdeval.pl would group them but look them up "
                       "apart)")
    return value


def read_qrels(data: bytes, spellings: dict, name: str = "qrels"):
    """``(ideal, judgment)``: each seen topic's ideal gains (best first) and each judged
    ``(topic, docno)``'s gain."""
    kept: dict[int, list[int]] = {}
    judgment: dict[tuple[int, bytes], int] = {}
    for number, line in enumerate(_lines(data), 1):
        f: list[Any] = _fields(line) + [None] * 4
        topic, zero, docno, grade = _topic(f[0]), f[1], f[2], f[3]
        if (topic is None or zero is None or perl_number(zero) != 0 or grade is None
                or not re.fullmatch(rb"-?[0-9]+", grade) or int(grade) > MAX_JUDGMENT):
            raise Rejected(name, number, QRELS_FORM)
        value = _check_topic(topic, spellings, name, number)
        g = int(grade)
        if g > 0:
            kept.setdefault(value, []).append(g)
            key = (value, docno)
            judgment[key] = min(judgment.get(key, g), g)
    ideal = {t: sorted(gains, reverse=True) for t, gains in kept.items()}
    return ideal, judgment


def read_run(data: bytes, spellings: dict, name: str = "run"):
    """``(runid, rows)``: the last line's run id and ``(topic, score, docno)`` rows, in the
    order the script ranks them."""
    rows = []
    runid = b"?????"
    number = 0
    for number, line in enumerate(_lines(data), 1):
        f: list[Any] = _fields(line) + [None] * 6
        topic, docno, rank, score, runid = _topic(f[0]), f[2], f[3], f[4], f[5]
        if (topic is None or rank is None or not re.fullmatch(rb"[0-9]+", rank)
                or runid is None or runid == b"0"):
            raise Rejected(name, number, RUN_FORM)
        s = perl_number(score)
        if math.isnan(s):
            raise Rejected(name, number, f"score {score.decode(errors='replace')!r} is NaN")
        rows.append((_check_topic(topic, spellings, name, number), s, docno))
    # topic ascending, score descending, docno descending (bytes), input order for the rest
    rows.sort(key=lambda r: r[2], reverse=True)
    rows.sort(key=lambda r: r[1], reverse=True)
    rows.sort(key=lambda r: r[0])
    if b"%" in runid:
        raise Rejected(name, number, f"run id {runid.decode(errors='replace')!r} holds a %, "
                       "which gdeval.pl reads as a printf format")
    return runid, rows


def dcg(k: int, gains: list[int]) -> float:
    score = 0.0
    for i, g in enumerate(gains[:k]):
        score += (2.0 ** g - 1) / (math.log(i + 2) / _LOG2)
    return score


def err(k: int, gains: list[int]) -> float:
    score, decay = 0.0, 1.0
    for i, g in enumerate(gains[:k]):
        r = (2.0 ** g - 1) / 2.0 ** MAX_JUDGMENT
        score += r * decay / (i + 1)
        decay *= 1 - r
    return score


def _weighted(value: float, base: float, alpha: float) -> float:
    return (1 + alpha) * (value - base) if value < base else value - base


def _measure(rows, ideal, judgment, k):
    """``{topic: (ndcg, err)}`` of the seen topics of a ranked run, in topic order."""
    out: dict[int, tuple[float, float]] = {}
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and rows[j][0] == rows[i][0]:
            j += 1
        topic = rows[i][0]
        if topic in ideal:
            gains = [judgment.get((topic, r[2]), 0) for r in rows[i:j]]
            out[topic] = (dcg(k, gains) / dcg(k, ideal[topic]), err(k, gains))
        i = j
    return out


def gdeval_values(qrels: bytes, run: bytes, *, k: int = 20, all_topics: bool = False,
                  baseline: bytes | None = None, risk_alpha: str | None = None
                  ) -> tuple[str, list[tuple[str, float, float]], tuple[float, float]]:
    """``(label, rows, amean)``: the run id gdeval.pl prints, its ``(topic, ndcg, err)`` lines
    and the ``(ndcg, err)`` means, unrounded."""
    spellings: dict = {}
    ideal, judgment = read_qrels(qrels, spellings)
    alpha = perl_number(risk_alpha.encode()) if risk_alpha is not None else 0.0
    base: dict | None = None
    if baseline is not None:
        base_id, base_rows = read_run(baseline, spellings, "baseline")
        base = _measure(base_rows, ideal, judgment, k)
    runid, rows = read_run(run, spellings)
    values = _measure(rows, ideal, judgment, k)
    label = runid.decode("utf-8", "surrogateescape")
    if base is not None:
        label = (f"{label} (rel to. {base_id.decode('utf-8', 'surrogateescape')}, rs=1+a, "
                 f"a={risk_alpha if risk_alpha is not None else '0'})")
    lines = []
    ndcg_total = err_total = 0.0
    for topic, (nd, er) in values.items():
        if base is not None:
            b = base.get(topic, (0.0, 0.0))
            nd, er = _weighted(nd, b[0], alpha), _weighted(er, b[1], alpha)
        ndcg_total += nd
        err_total += er
        lines.append((spellings[topic].decode(), nd, er))
    count = len(values)
    if all_topics:
        count = len(ideal)
        if base is not None:
            b = (0.0, 0.0)
            for topic in sorted(set(ideal) - set(values)):
                b = base.get(topic, b)
                nd, er = _weighted(0.0, b[0], alpha), _weighted(0.0, b[1], alpha)
                ndcg_total += nd
                err_total += er
                lines.append((spellings[topic].decode(), nd, er))
    if count > 0:
        ndcg_total /= count
        err_total /= count
    return label, lines, (ndcg_total, err_total)


def format_report(label: str, rows, amean, k: int) -> str:
    """gdeval.pl's printed lines."""
    out = [f"runid,topic,ndcg@{k},err@{k}"]
    out += [f"{label},{topic},{nd:.5f},{er:.5f}" for topic, nd, er in rows]
    out.append(f"{label},amean,{amean[0]:.5f},{amean[1]:.5f}")
    return "\n".join(out) + "\n"


def gdeval_report(qrels: bytes, run: bytes, *, k: int = 20, all_topics: bool = False,
                  baseline: bytes | None = None, risk_alpha: str | None = None) -> str:
    """What ``gdeval.pl [-c] [-k k] [-baseline FILE] [-riskAlpha a] qrels run`` prints."""
    return format_report(*gdeval_values(qrels, run, k=k, all_topics=all_topics,
                                         baseline=baseline, risk_alpha=risk_alpha), k)
