"""The specification: MS MARCO passage ranking's MRR@10, as the official ``ms_marco_eval.py``
(microsoft/MSMARCO-Passage-Ranking) computes it.

Plain Python (the standard library only), written to be read; :mod:`qafast.msmarco_eval`
returns the same numbers bit for bit and ``tests/test_msmarco.py`` checks it against this
module. It is also what qafast runs on a file its compiled reader does not take (signs,
spaces, Unicode digits, ids beyond 64 bits, a query whose lines are not together). The rules,
in the script's order:

Reading a line
    The line (text, universal newlines) is stripped of whitespace at both ends and split at
    tabs; the fields used are read by Python's ``int`` (which takes spaces around the digits,
    a sign, ``_`` between digits and any Unicode digits). A line it cannot read (too few
    fields, an empty line, a field that is no integer) stops the script with
    ``"[fields]" is not valid format``.

The reference (qrels)
    ``qid <tab> anything <tab> pid ...``: each line adds ``pid`` to the query's relevant
    list (a pid may be there twice).

The candidate
    ``qid <tab> pid <tab> rank ...``: each query has 1000 slots, all pid 0 at first; a line
    puts ``pid`` in slot ``rank - 1`` *as a Python list index*: rank 0 is the last slot
    (1000), ranks -999..-1 count from the end (so -999 is slot 1), and a rank above 1000 or
    below -999 stops the script (IndexError, reported as the line's format error). A later
    line for the same slot replaces the earlier pid. Queries keep the order of their first
    line. The score column is never read.

Checks
    For each query in that order, a pid other than 0 in two slots (whatever their ranks) sets
    the message ``Cannot rank a passage multiple times for a single query. QID=q, PID=p``,
    where p is the first element of the Python set of the query's repeated pids (0 among
    them if two slots are empty or hold 0); the last such query's message is printed before
    the result, and scoring goes on.

MRR@10
    For each candidate query that the reference has, in candidate order: the first of slots 1
    to 10 whose pid is relevant (an empty slot holds pid 0, relevant if the reference lists
    pid 0) adds ``1 / slot`` to a running sum. No candidate query in the reference stops the
    script ("No matching QIDs found..."). ``MRR @10`` is the sum divided by the number of
    reference queries (so a reference query never ranked counts 0); ``QueriesRanked`` is the
    number of candidate queries (those not in the reference too).
"""

from __future__ import annotations

from collections import Counter

MAX_RANK = 10
SLOTS = 1000
DUPLICATE = ("Cannot rank a passage multiple times for a single query. QID={qid}, "
             "PID={pid}")
NO_MATCH = "No matching QIDs found. Are you sure you are scoring the evaluation set?"


class LineError(ValueError):
    """A line the script cannot read: ``line`` (1-based) and the script's ``message``."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _fields(n: int, raw: str, columns: tuple) -> list:
    parts = raw.strip().split("\t")
    try:
        values = [int(parts[c]) for c in columns]
        return values
    except (ValueError, IndexError):
        raise LineError(n, f'"{parts}" is not valid format') from None


def load_reference(lines) -> dict:
    """``{qid: [relevant pid, ...]}`` from the reference file's lines."""
    relevant: dict = {}
    for n, raw in enumerate(lines, 1):
        qid, pid = _fields(n, raw, (0, 2))
        relevant.setdefault(qid, []).append(pid)
    return relevant


def load_candidate(lines) -> dict:
    """``{qid: [pid of slot 1, ..., pid of slot 1000]}`` from the candidate file's lines."""
    ranked: dict = {}
    for n, raw in enumerate(lines, 1):
        qid, pid, rank = _fields(n, raw, (0, 1, 2))
        slots = ranked.setdefault(qid, [0] * SLOTS)
        if not -SLOTS <= rank - 1 < SLOTS:
            raise LineError(n, f'"{raw.strip().split(chr(9))}" is not valid format')
        slots[rank - 1] = pid
    return ranked


def duplicate_message(ranked: dict) -> str:
    """The check's message, '' if no query ranks a pid twice."""
    message = ""
    for qid, slots in ranked.items():
        repeated = {pid for pid, count in Counter(slots).items() if count > 1}
        if repeated - {0}:
            message = DUPLICATE.format(qid=qid, pid=next(iter(repeated)))
    return message


def reciprocal_ranks(relevant: dict, ranked: dict) -> dict:
    """``{qid: 1 / first relevant slot, or 0}`` for the candidate queries the reference has."""
    out: dict = {}
    for qid, slots in ranked.items():
        if qid in relevant:
            out[qid] = 0
            for i in range(MAX_RANK):
                if slots[i] in relevant[qid]:
                    out[qid] = 1 / (i + 1)
                    break
    return out


def metrics(relevant: dict, ranked: dict) -> dict:
    """``{"MRR @10": ..., "QueriesRanked": ...}``; ValueError(NO_MATCH) if no candidate query is
    in the reference."""
    rr = reciprocal_ranks(relevant, ranked)
    if not rr:
        raise ValueError(NO_MATCH)
    total: float = 0
    for value in rr.values():
        total += value
    return {"MRR @10": total / len(relevant), "QueriesRanked": len(ranked)}


def printed(message: str, result: dict) -> str:
    """What the script prints on stdout."""
    head = f"{message}\n" if message else ""
    body = "".join(f"{k}: {result[k]}\n" for k in sorted(result))
    return f"{head}#####################\n{body}#####################\n"
