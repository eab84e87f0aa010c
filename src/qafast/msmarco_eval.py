"""MS MARCO passage ranking, exactly as the official ``ms_marco_eval.py`` scores it.

:func:`msmarco_passage` returns the script's metrics (``MRR @10`` and ``QueriesRanked``);
:func:`msmarco_passage_per_query` each query's reciprocal rank; ``qafast msmarco-passage
REFERENCE CANDIDATE`` prints what the script prints. The rules are in
:mod:`qafast.reference.msmarco`.

The script ranks by the candidate file's rank column (``qid<TAB>pid<TAB>rank``), never by a
score: that is ``order="rank"``, the default. ``order="score"`` reads a TREC run (``qid Q0
docno rank score tag``) and ranks each query's passages by score as trec_eval does (score
descending, ties by docno descending), then applies the script's rules; with it, MRR@10 is
what ``qafast.evaluate(qrels, run, ["recip_rank@10"])`` gives times the share of the
reference's queries that the run has (the script divides by every reference query).

A candidate file in the usual form (ASCII digits, each query's lines together) is read by one
compiled pass that keeps only a query's 1000 slots at a time; any other file is read by the
specification itself, line by line, so both give the script's numbers.
"""

from __future__ import annotations

import io
import locale
import mmap
import operator
import os
import sys
from collections.abc import Mapping

import numpy as np

from ._gc import gc_paused
from ._warn import warn
from .errors import FormatError, InputError, InputTypeError
from .reference import msmarco as ref

__all__ = ["ORDERS", "MsmarcoMetrics", "MsmarcoWarning", "msmarco_passage",
           "msmarco_passage_per_query"]

#: ``"rank"``: the candidate file's rank column (the script's); ``"score"``: a TREC run's
#: scores, ordered as trec_eval orders them.
ORDERS = ("rank", "score")
_I64_MAX = (1 << 63) - 1


class MsmarcoWarning(UserWarning):
    """The script's check found a passage ranked twice for a query (it scores on)."""


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------

def _name(source) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return "<bytes>"
    raise InputTypeError(f"a reference or candidate is a path or bytes, not "
                         f"{type(source).__name__}")


def _text_lines(source, path: str) -> list:
    """The file's lines as the script's ``for l in open(path)`` gives them."""
    try:
        if isinstance(source, (bytes, bytearray, memoryview)):
            return io.StringIO(bytes(source).decode("utf-8"), newline=None).readlines()
        with open(path) as f:   # the script's encoding: the locale's
            return f.readlines()
    except OSError as e:
        raise InputError(f"{path}: cannot read it: {e.strerror or e}", path=path) from None
    except UnicodeDecodeError as e:
        raise FormatError(f"cannot decode the file as text: {e}", path=path) from None


def _checked(fn, lines: list, path: str, what: str):
    try:
        return fn(lines)
    except ref.LineError as e:
        raise FormatError(f"{e.message} (the script stops on this {what} line)", path=path,
                          line=e.line) from None


# what the fast reference reader takes: ASCII digits, tabs and "\n" alone; such bytes decode
# to the same text in any encoding that gives back these twelve characters
_PLAIN = b"0123456789\t\n"


def _plain_reference(source, path: str):
    """The reference read from its bytes, or None where the file is not plain (anything but
    digits, tabs and "\n"; a line with a tab at an end, which the script's strip would
    move; a line the script cannot read): the specification then reads it, with its error.

    A plain line's fields are what the script's ``strip().split("\t")`` gives, and
    ``int`` of ASCII digits is the same number from bytes as from text."""
    try:
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
        else:
            if _PLAIN.decode(locale.getpreferredencoding(False), "replace") != _PLAIN.decode():
                return None
            with open(path, "rb") as f:
                data = f.read()
    except (OSError, LookupError):
        return None     # the specification's reader reports it
    if (data.translate(None, _PLAIN) or data.startswith(b"\t") or data.endswith(b"\t")
            or b"\t\n" in data or b"\n\t" in data):
        return None
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()      # the newline ending the last line
    relevant: dict = {}
    try:
        for line in lines:
            parts = line.split(b"\t")
            relevant.setdefault(int(parts[0]), []).append(int(parts[2]))
    except (ValueError, IndexError):
        return None
    return relevant


def _read_reference(source) -> tuple[dict, str]:
    path = _name(source)
    relevant = _plain_reference(source, path)
    if relevant is not None:
        return relevant, path
    return _checked(ref.load_reference, _text_lines(source, path), path, "reference"), path


class _Ranked:
    """The candidate queries in file order: ids, reference rows and reciprocal ranks (None
    where the reference lacks the query), and the check's message."""

    __slots__ = ("message", "qids", "rr")

    def __init__(self, qids: list, rr: list, message: str) -> None:
        self.qids, self.rr, self.message = qids, rr, message


def _ref_arrays(relevant: dict):
    """The reference as sorted arrays, or None if an id does not fit in 64 bits."""
    qids = sorted(relevant)
    if qids and (qids[0] < -_I64_MAX - 1 or qids[-1] > _I64_MAX):
        return None
    sizes = [len(relevant[q]) for q in qids]
    off = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(sizes, out=off[1:])
    try:
        pids = np.array([p for q in qids for p in relevant[q]], dtype=np.int64)
    except OverflowError:
        return None
    return np.array(qids, dtype=np.int64), off, pids


def _fast_candidate(source, path: str, relevant: dict):
    """The compiled pass over the candidate's bytes, or None where it does not apply."""
    arrays = _ref_arrays(relevant)
    if arrays is None:
        return None
    if isinstance(source, (bytes, bytearray, memoryview)):
        buf = memoryview(source).cast("B")
        return _scan(buf, arrays)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return _scan(b"", arrays)
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                view = memoryview(m)
                try:
                    return _scan(view, arrays)
                finally:
                    view.release()
    except OSError as e:
        raise InputError(f"{path}: cannot read it: {e.strerror or e}", path=path) from None


def _scan(buf, arrays):
    from . import _kernels

    ref_qids, ref_off, ref_pids = arrays
    # a line takes 6 bytes or more ("1\t2\t3\n"); pages never written are never committed
    cap = len(buf) // 6 + 1
    group_qid = np.empty(cap, dtype=np.int64)
    group_ref = np.empty(cap, dtype=np.int64)
    group_rr = np.empty(cap, dtype=np.float64)
    last_dup = np.zeros(ref.SLOTS, dtype=np.int64)
    info = np.zeros(3, dtype=np.int64)
    data = np.frombuffer(buf, dtype=np.uint8) if len(buf) else np.zeros(0, dtype=np.uint8)
    if _kernels.msmarco_candidates(data, ref_qids, ref_off, ref_pids, group_qid, group_ref,
                                   group_rr, last_dup, info) != -1:
        return None
    g = int(info[0])
    qids = group_qid[:g]
    if len(np.unique(qids)) != g:
        return None   # a query's lines apart: the slow reader keeps its slots
    message = ""
    if info[1] >= 0:
        # the script names the first element of the Python set of the query's repeated pids
        slots = last_dup.tolist()
        counts: dict = {}
        for p in slots:
            counts[p] = counts.get(p, 0) + 1
        repeated = {p for p, c in counts.items() if c > 1}
        message = ref.DUPLICATE.format(qid=int(qids[info[1]]), pid=next(iter(repeated)))
    rr = np.where(group_ref[:g] >= 0, group_rr[:g], np.nan)
    return qids, rr, message


def _read_candidate(source, relevant: dict) -> _Ranked:
    path = _name(source)
    fast = _fast_candidate(source, path, relevant)
    if fast is not None:
        qids, rr, message = fast
        return _Ranked(qids.tolist(), [None if v != v else v for v in rr.tolist()], message)
    ranked = _checked(ref.load_candidate, _text_lines(source, path), path, "candidate")
    rrs = ref.reciprocal_ranks(relevant, ranked)
    return _Ranked(list(ranked), [rrs.get(q) for q in ranked], ref.duplicate_message(ranked))


def _read_run_by_score(source, relevant: dict) -> _Ranked:
    """A TREC run ranked by score as trec_eval ranks it (score descending, then docno
    descending), as the script's candidate: its first 1000 passages fill the slots."""
    from .io import read_trec_run

    path = _name(source)
    run = read_trec_run(bytes(source) if isinstance(source, (bytearray, memoryview))
                        else source)
    doc_ids: list = run.doc_ids or []
    try:
        qids = [int(q) for q in run.query_ids]
        pids = np.empty(len(doc_ids), dtype=object)
        pids[:] = [int(d) for d in doc_ids]
    except ValueError as e:
        raise FormatError(f"MS MARCO query and passage ids are integers: {e}",
                          path=path) from None
    by_name = np.empty(len(doc_ids), dtype=np.int64)
    by_name[sorted(range(len(doc_ids)), key=doc_ids.__getitem__)] = np.arange(len(doc_ids))
    doc = np.asarray(run.doc_index, dtype=np.int64)
    order = np.lexsort((-by_name[doc], -run.values, run.query_index))
    q_sorted = np.asarray(run.query_index)[order]
    starts = np.searchsorted(q_sorted, np.arange(len(qids) + 1))
    ranked: dict = {}
    for k, q in enumerate(qids):
        top = pids[doc[order[starts[k]:min(starts[k + 1], starts[k] + ref.SLOTS)]]].tolist()
        slots = ranked.setdefault(q, [0] * ref.SLOTS)   # "1" and "01" are one query
        slots[:len(top)] = top
    rrs = ref.reciprocal_ranks(relevant, ranked)
    return _Ranked(list(ranked), [rrs.get(q) for q in ranked], ref.duplicate_message(ranked))


def _evaluate(reference, candidate, order: str) -> tuple[dict, _Ranked]:
    if order not in ORDERS:
        raise InputError(f"unknown order {order!r}; expected one of {ORDERS}")
    with gc_paused():
        relevant, _ = _read_reference(reference)
        if order == "rank":
            ranked = _read_candidate(candidate, relevant)
        else:
            ranked = _read_run_by_score(candidate, relevant)
    return relevant, ranked


def _metrics(relevant: dict, ranked: _Ranked) -> dict:
    hits = np.array([v for v in ranked.rr if v is not None], dtype=np.float64)
    if not len(hits):
        raise InputError(f"{ref.NO_MATCH} (no candidate query is in the reference)")
    total = float(np.add.accumulate(hits)[-1])
    return {"MRR @10": total / len(relevant), "QueriesRanked": len(ranked.qids)}


def msmarco_passage(reference, candidate, *, order: str = "rank") -> dict:
    """MRR@10 as the official MS MARCO passage ranking script (``ms_marco_eval.py``) computes
    it.

    Parameters
    ----------
    reference : str, os.PathLike or bytes
        The qrels: ``qid<TAB>0<TAB>pid<TAB>1`` lines (the second and fourth columns are not
        read).
    candidate : str, os.PathLike or bytes
        With ``order="rank"``: ``qid<TAB>pid<TAB>rank`` lines, ranked by the rank column as
        the script ranks them (1000 slots a query; rank 0 is slot 1000; a later line for a slot
        replaces the earlier). With ``order="score"``: a TREC run, ranked by score as trec_eval
        ranks it.
    order : {"rank", "score"}, default "rank"

    Returns
    -------
    dict
        ``{"MRR @10": float, "QueriesRanked": int}``, the script's numbers bit for bit. The
        sum of reciprocal ranks is divided by the number of *reference* queries.

    Warns
    -----
    MsmarcoWarning
        With the script's message when a query ranks a passage twice (it scores on).

    Examples
    --------
    >>> qrels = b"1\\t0\\t7\\t1\\n2\\t0\\t9\\t1\\n3\\t0\\t4\\t1\\n"
    >>> run = b"1\\t5\\t1\\n1\\t7\\t2\\n2\\t9\\t1\\n"
    >>> msmarco_passage(qrels, run)
    {'MRR @10': 0.5, 'QueriesRanked': 2}
    """
    relevant, ranked = _evaluate(reference, candidate, order)
    if ranked.message:
        warn(ranked.message, MsmarcoWarning)
    return _metrics(relevant, ranked)


def msmarco_passage_per_query(reference, candidate, *, order: str = "rank") -> dict:
    """Each candidate query's reciprocal rank at 10, in the candidate file's order.

    Returns
    -------
    dict
        ``"qid"`` (int64 array), ``"reciprocal_rank"`` (float64; NaN for a query the
        reference lacks, which the script does not score) and ``"message"`` (the check's,
        "" if none).

    Examples
    --------
    >>> t = msmarco_passage_per_query(b"1\\t0\\t7\\t1\\n", b"1\\t5\\t1\\n1\\t7\\t2\\n4\\t7\\t1\\n")
    >>> t["qid"].tolist(), t["reciprocal_rank"].tolist()
    ([1, 4], [0.5, nan])
    """
    _, ranked = _evaluate(reference, candidate, order)
    try:
        qids = np.array(ranked.qids, dtype=np.int64)
    except OverflowError:
        qids = np.array(ranked.qids, dtype=object)
    return {"qid": qids, "reciprocal_rank": np.array(
        [np.nan if v is None else v for v in ranked.rr], dtype=np.float64),
        "message": ranked.message}


# --------------------------------------------------------------------------------------------
# Streaming: a training loop's top-k, batch by batch
# --------------------------------------------------------------------------------------------

def _integer(value, what: str) -> int:
    if isinstance(value, bool):
        raise InputTypeError(f"{what} is an integer, not a bool")
    try:
        return operator.index(value)
    except TypeError:
        raise InputTypeError(f"{what} is an integer, not {type(value).__name__}") from None


def _reference_mapping(reference: Mapping) -> dict:
    relevant: dict = {}
    for q, pids in reference.items():
        qid = _integer(q, "a reference query id")
        if isinstance(pids, (str, bytes)) or not hasattr(pids, "__iter__"):
            raise InputTypeError(f"reference query {qid}: the relevant passages are a list "
                                 f"of integer ids, not {type(pids).__name__}")
        relevant.setdefault(qid, []).extend(
            _integer(p, f"reference query {qid}: a passage id") for p in pids)
    return relevant


class MsmarcoMetrics:
    """MS MARCO passage ranking's MRR@10 from ranked passage ids, batch by batch.

    For a training or validation loop that ranks passages itself: each :meth:`update` takes
    query ids and each query's passage ids best first, and :meth:`compute` gives what
    :func:`msmarco_passage` gives for a candidate file with those rankings (ranks 1, 2, ...
    in that order), whatever the batches. A query is ranked once; its first 1000 passages
    are the script's 1000 slots, and, as in the script, slots a ranking does not fill hold
    passage 0.

    Parameters
    ----------
    reference : str, os.PathLike, bytes or mapping
        The qrels file (as :func:`msmarco_passage` reads it) or ``{qid: [relevant pid, ...]}``
        with integer ids.

    Examples
    --------
    >>> m = MsmarcoMetrics({1: [7], 2: [9], 3: [4]})
    >>> m.update([1, 2], [[5, 7, 8], [9, 1, 2]])
    >>> m.update([4], [[7]])        # not in the reference: ranked, not scored
    >>> m.compute()
    {'MRR @10': 0.5, 'QueriesRanked': 3}
    """

    def __init__(self, reference) -> None:
        if isinstance(reference, Mapping):
            relevant = _reference_mapping(reference)
        else:
            relevant = _read_reference(reference)[0]
        self._relevant = {q: frozenset(p) for q, p in relevant.items()}
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        self._qids: list = []
        self._rr: list = []          # a float, or None for a query the reference lacks
        self._seen: set = set()
        self._message = ""

    def __len__(self) -> int:
        return len(self._qids)

    def __repr__(self) -> str:
        return f"MsmarcoMetrics({len(self._qids)} queries)"

    def update(self, query_ids, rankings) -> None:
        """Add a batch: ``query_ids[i]``'s passages best first are ``rankings[i]`` (a
        sequence of integer passage ids, or a row of a 2-D integer array)."""
        qids = [_integer(q, "a query id") for q in query_ids]
        rows = list(rankings)
        if len(rows) != len(qids):
            raise InputError(f"{len(qids)} query ids but {len(rows)} rankings")
        batch: list = []
        for qid, row in zip(qids, rows):
            if qid in self._seen or any(qid == b[0] for b in batch):
                raise InputError(f"query {qid} is ranked twice: MS MARCO ranks a query once")
            if isinstance(row, (str, bytes)) or not hasattr(row, "__iter__"):
                raise InputTypeError(f"query {qid}: a ranking is a sequence of passage ids, "
                                     f"not {type(row).__name__}")
            pids = [_integer(p, f"query {qid}: a passage id") for p in row]
            if len(pids) > ref.SLOTS:
                raise InputError(f"query {qid}: {len(pids)} passages; the script ranks at "
                                 f"most {ref.SLOTS} a query")
            batch.append((qid, pids))
        for qid, pids in batch:
            self._seen.add(qid)
            self._qids.append(qid)
            nonzero = [p for p in pids if p != 0]
            if len(set(nonzero)) != len(nonzero):
                slots = pids + [0] * (ref.SLOTS - len(pids))
                self._message = ref.duplicate_message({qid: slots})
            relevant = self._relevant.get(qid)
            if relevant is None:
                self._rr.append(None)
                continue
            top = pids[:ref.MAX_RANK] + [0] * (ref.MAX_RANK - len(pids))
            self._rr.append(next((1 / (i + 1) for i, p in enumerate(top) if p in relevant),
                                 0.0))

    def compute(self) -> dict:
        """``{"MRR @10": float, "QueriesRanked": int}`` as :func:`msmarco_passage` gives them;
        warns the script's message (:class:`MsmarcoWarning`) if a query ranks a passage
        twice."""
        if self._message:
            warn(self._message, MsmarcoWarning)
        return _metrics(self._relevant, _Ranked(self._qids, self._rr, self._message))

    def merge(self, *others: "MsmarcoMetrics") -> "MsmarcoMetrics":
        """Append the queries of ``others`` (same reference), in order, after this one's."""
        for o in others:
            if type(o) is not MsmarcoMetrics:
                raise InputTypeError(f"cannot merge a {type(o).__name__} into a "
                                     "MsmarcoMetrics")
        for state in [o.state_dict() for o in others]:
            self._load(state, into=self)
        return self

    def state_dict(self) -> dict:
        """The state as plain values: ``{"format", "version", "reference_queries",
        "query_ids", "reciprocal_rank", "message"}`` (None for a query the reference
        lacks)."""
        return {"format": "qafast.MsmarcoMetrics", "version": 1,
                "reference_queries": len(self._relevant), "query_ids": list(self._qids),
                "reciprocal_rank": list(self._rr), "message": self._message}

    def load_state_dict(self, state: dict) -> None:
        """Replace the state by one from :meth:`state_dict` (same reference)."""
        fresh = MsmarcoMetrics.__new__(MsmarcoMetrics)
        fresh._relevant = self._relevant
        fresh.reset()
        self._load(state, into=fresh)
        self._qids, self._rr, self._seen, self._message = (
            fresh._qids, fresh._rr, fresh._seen, fresh._message)

    def _load(self, state, *, into: "MsmarcoMetrics") -> None:
        if not isinstance(state, dict) or state.get("format") != "qafast.MsmarcoMetrics":
            raise InputError("not a MsmarcoMetrics state")
        if state.get("version") != 1:
            raise InputError(f"MsmarcoMetrics state version {state.get('version')!r}, "
                             "expected 1")
        if state.get("reference_queries") != len(self._relevant):
            raise InputError("the MsmarcoMetrics state comes from another reference "
                             f"({state.get('reference_queries')!r} queries, not "
                             f"{len(self._relevant)})")
        try:
            qids = [_integer(q, "a state's query id") for q in state["query_ids"]]
            rr = [None if v is None else float(v) for v in state["reciprocal_rank"]]
            message = str(state["message"])
        except (KeyError, TypeError, ValueError):
            raise InputError("a MsmarcoMetrics state needs query_ids, reciprocal_rank and "
                             "message") from None
        if len(qids) != len(rr):
            raise InputError("a MsmarcoMetrics state's lists differ in length")
        if any(v is not None and not 0.0 <= v <= 1.0 for v in rr):
            raise InputError("a MsmarcoMetrics state holds reciprocal ranks outside [0, 1]")
        repeated = into._seen.intersection(qids)
        if repeated or len(set(qids)) != len(qids):
            q = min(repeated) if repeated else next(
                q for i, q in enumerate(qids) if q in qids[:i])
            raise InputError(f"query {q} is ranked twice: MS MARCO ranks a query once")
        into._qids.extend(qids)
        into._rr.extend(rr)
        into._seen.update(qids)
        if message:
            into._message = message


# --------------------------------------------------------------------------------------------
# The `qafast msmarco-passage` command
# --------------------------------------------------------------------------------------------

def register_cli(subparsers) -> dict:
    """Add ``qafast msmarco-passage``; returns ``{"msmarco-passage": handler}``."""
    p = subparsers.add_parser(
        "msmarco-passage", help="MS MARCO passage ranking MRR@10, printing what the official "
                                "ms_marco_eval.py prints",
        description="Compute MRR@10 of a candidate ranking as the official ms_marco_eval.py "
                    "does, printing the same lines.")
    p.add_argument("reference", help="the qrels: qid<TAB>0<TAB>pid<TAB>1 lines")
    p.add_argument("candidate", help="qid<TAB>pid<TAB>rank lines (or a TREC run with "
                                     "--order score)")
    p.add_argument("--order", choices=ORDERS, default="rank",
                   help="rank: the candidate's rank column, as the script (default); score: a "
                        "TREC run ranked by score as trec_eval ranks it")
    return {"msmarco-passage": _run_cli}


def _run_cli(args) -> int:
    relevant, ranked = _evaluate(args.reference, args.candidate, args.order)
    head = ranked.message
    try:
        result = _metrics(relevant, ranked)
    except InputError:
        if head:
            sys.stdout.write(head + "\n")
        raise
    sys.stdout.write(ref.printed(head, result))
    return 0
