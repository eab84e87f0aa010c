"""KILT, exactly as its official evaluation scripts ``kilt/eval_downstream.py`` and
``kilt/eval_retrieval.py`` compute it.

:func:`kilt` returns the dict ``eval_downstream.py`` prints: accuracy, EM, F1 and ROUGE-L of
the answers, the KILT variants that count a question only where its page R-precision is 1,
and the page R-precision and recall@5. ``qafast kilt GUESS GOLD`` prints what it prints.

:func:`kilt_retrieval` returns the dict the script prints: R-precision, precision@k,
recall@k, success rate@k and the answer/entity-in-context numbers of the guess provenance,
with the script's keys, in its order, and bit-identical floats. ``qafast kilt-retrieval GUESS
GOLD --ks 1,5 --rank_keys wikipedia_id`` is the command-line form, printing what the script
prints. The plain-Python specification is :mod:`qafast.reference.kilt`; its docstring lists
every rule reproduced here.
"""

from __future__ import annotations

import json
import os
import pprint
import sys
from collections import Counter, OrderedDict

import numpy as np

from . import _kernels
from ._gc import gc_paused
from .answers import exact_match_and_f1
from .errors import FormatError, InputError, InputTypeError

__all__ = ["KiltMetrics", "kilt", "kilt_retrieval", "read_jsonl", "retrieval_keys", "rouge_l"]


# --------------------------------------------------------------------------------------------
# Input
# --------------------------------------------------------------------------------------------

def read_jsonl(path, what: str) -> list:
    """The records of a KILT file as the script reads it: UTF-8 text, universal line ends,
    one JSON value a line (a blank line is an error, as in the script)."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        raise InputTypeError(f"the {what} path must be str or os.PathLike[str], not bytes")
    with open(path, "rb") as f:
        raw = f.read()
    return _parse_jsonl(raw, path)


def _parse_jsonl(raw: bytes, path: str) -> list:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 text ({e.reason})", path=path) from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    records = []
    for i, line in enumerate(lines, 1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise FormatError(f"not a JSON line ({e.msg})", path=path, line=i) from None
        except RecursionError:
            raise FormatError("JSON nested too deeply to read", path=path, line=i) from None
    return records


def _records(data, what: str, raw: bytes | None = None) -> list:
    if raw is not None:
        data = _parse_jsonl(raw, os.fspath(data))
    elif isinstance(data, (str, os.PathLike)):
        data = read_jsonl(data, what)
    elif not isinstance(data, (list, tuple)):
        raise InputTypeError(f"{what} must be a path or a list of records, "
                             f"not {type(data).__name__}")
    for i, record in enumerate(data):
        if not isinstance(record, dict):
            raise InputTypeError(f"{what} record {i + 1} is a {type(record).__name__}, "
                                 f"not a JSON object")
        if "id" not in record:
            raise InputError(f"{what} record {i + 1} has no \"id\"", field="id")
        outputs = record.get("output")
        if "output" in record and not (isinstance(outputs, list)
                                       and all(isinstance(o, dict) for o in outputs)):
            raise InputTypeError(f"{what} question {record['id']!r}: \"output\" must be a list "
                                 f"of objects")
        for o in outputs or ():
            prov = o.get("provenance", [])
            if not (isinstance(prov, list) and all(isinstance(p, dict) for p in prov)):
                raise InputTypeError(f"{what} question {record['id']!r}: \"provenance\" must be "
                                     f"a list of objects")
    return list(data)


def _align(gold: list, guess: list) -> list:
    """The guesses in gold order, as the script's ``validate_input`` and ``filter_answers``
    select them: each a ``(id, provenance list of its one output with provenance)``."""
    gold_ids: dict = {}
    for record in gold:
        qid = str(record["id"]).strip()
        if qid in gold_ids:
            raise InputError(f"gold id {qid!r} occurs twice (gold ids must be unique)", query=qid)
        gold_ids[qid] = None
    by_id: dict = {}
    for record in guess:
        qid = str(record["id"]).strip()
        if qid in by_id:
            raise InputError(f"guess id {qid!r} occurs twice (guess ids must be unique)",
                             query=qid)
        by_id[qid] = record
    aligned = []
    for qid in gold_ids:
        record = by_id.get(qid)
        if record is None:
            raise InputError(f"no guess for gold id {qid!r}", query=qid)
        with_prov = [o for o in record.get("output", ()) if "provenance" in o]
        if len(with_prov) != 1:
            raise InputError(f"guess {qid!r} has {len(with_prov)} outputs with provenance; "
                             f"the script takes exactly one", query=qid, field="output")
        aligned.append(with_prov[0]["provenance"])
    return aligned


# --------------------------------------------------------------------------------------------
# Reading without the GIL: the compiled scanner (kernel kilt_scan) reads two plainly valid
# files into rows of spans and ids; anything else, and any file with an error, is read by
# json.loads as above (which then reports the error).
# --------------------------------------------------------------------------------------------

_scanstring = json.decoder.scanstring   # type: ignore[attr-defined]
_STRING = (1, 2)   # kilt_scan's kinds of a string value: without escapes, with escapes


class _Scanned:
    """One file's rows from ``kilt_scan``: ``rec`` (id kind/lo/hi, input kind/lo/hi, outputs
    lo/hi), ``out`` (answer kind/lo/hi, has provenance, provenances lo/hi) and ``prov``
    (complete id, partial id, title kind/lo/hi, text kind/lo/hi)."""

    def __init__(self, raw: bytes, rec: bytes, out: bytes, prov: bytes) -> None:
        w_rec, w_out, w_prov = _kernels.KILT_SCAN_WIDTHS
        self.raw = raw
        self.rec = np.frombuffer(rec, dtype=np.int64).reshape(-1, w_rec)
        self.out = np.frombuffer(out, dtype=np.int64).reshape(-1, w_out)
        self.prov = np.frombuffer(prov, dtype=np.int64).reshape(-1, w_prov)

    def strings(self, rows: np.ndarray, col: int) -> list:
        """The string at column ``col`` (kind, lo, hi) of each row, None where it is none."""
        raw = self.raw
        # (json's own string decoder for one with escapes: the string json.loads makes)
        return [None if k == 0 or k == 3 else raw[lo:hi].decode("utf-8") if k == 1
                else _scanstring(raw[lo - 1:hi + 1].decode("utf-8"), 1)[0]
                for k, lo, hi in rows[:, col:col + 3].tolist()]

    def kinds_are(self, rows: np.ndarray, col: int, kinds: tuple) -> bool:
        """Every row's kind at column ``col`` is one of ``kinds`` (consecutive integers:
        two reductions, where np.isin's temporaries cost several times more)."""
        column = rows[:, col]
        return not len(column) or bool(column.min() >= kinds[0] and column.max() <= kinds[-1])


def _read_bytes(path):
    """The bytes of a path (None where it is a bytes path: read_jsonl reports that)."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        return None
    with open(path, "rb") as f:
        return f.read()


def _scan(guess, gold, rank_keys: list):
    """``(gold, guess)`` as :class:`_Scanned` files with their raw bytes, or None where they
    are not two paths; the scans are None where a file is not plainly valid."""
    if not (isinstance(guess, (str, os.PathLike)) and isinstance(gold, (str, os.PathLike))):
        return None
    gold_raw = _read_bytes(gold)
    guess_raw = _read_bytes(guess)
    if gold_raw is None or guess_raw is None:
        return None
    rows = _kernels.kilt_scan(gold_raw, guess_raw, rank_keys)
    if rows is None:
        return gold_raw, guess_raw, None, None
    return (gold_raw, guess_raw, _Scanned(gold_raw, *rows[0:3]),
            _Scanned(guess_raw, *rows[3:6]), rows[6])


def _spans(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The indexes lo[i]..hi[i] - 1 of every i, one after another."""
    n = hi - lo
    firsts = np.repeat(lo - (np.cumsum(n) - n), n)
    return firsts + np.arange(int(n.sum()), dtype=np.int64)


class _GoldIds:
    """The gold ids of a scanned file, decoded only where they are read (per-question results,
    KiltMetrics): the means need only their number."""

    def __init__(self, g: _Scanned) -> None:
        self._g = g

    def __len__(self) -> int:
        return len(self._g.rec)

    def __iter__(self):
        return iter(self._g.strings(self._g.rec, 0))


def _aligned_by_dict(g: _Scanned, q: _Scanned):
    """The guess row of each gold question, the ids decoded and matched by a dict (for ids
    the kernel leaves to CPython), or None where an id repeats or has no guess."""
    keys = [qid.strip() for qid in g.strings(g.rec, 0)]
    guess_ids = q.strings(q.rec, 0)
    by_id = {qid.strip(): i for i, qid in enumerate(guess_ids)}
    if len(set(keys)) != len(keys) or len(by_id) != len(guess_ids):
        return None
    aligned = [by_id.get(key) for key in keys]
    if None in aligned:
        return None
    return np.array(aligned, dtype=np.int64)


def _scanned_questions(g: _Scanned, q: _Scanned, downstream: bool):
    """Per gold question, the row of its guess output (with provenance; for ``downstream``
    its only output, with an answer), or None where the script's checks of the records (ids,
    outputs, value types) fail or might: json.loads then reads them (and names the id at
    fault). The ids are matched from the files' bytes by a kernel without the GIL; no id
    becomes a Python string here."""
    if not (g.kinds_are(g.rec, 0, _STRING) and q.kinds_are(q.rec, 0, _STRING)
            and g.kinds_are(g.rec, 3, _STRING) and g.kinds_are(g.out, 0, (0, 1, 2))
            and g.kinds_are(g.prov, 2, (0, 1, 2))):
        return None
    if (g.rec[:, 7] <= g.rec[:, 6]).any():   # a gold question without outputs
        return None
    rows = np.empty(len(g.rec), dtype=np.int64)
    slots = 1 << max(1, (2 * (len(g.rec) + len(q.rec)) - 1).bit_length())
    state = _kernels.kilt_align_ids(g.raw, g.rec, q.raw, q.rec, 0, rows,
                                    np.empty(slots, dtype=np.int64))
    if state == _kernels.KILT_ALIGN_MISMATCH:
        return None
    if state == _kernels.KILT_ALIGN_LEFT:
        rows = _aligned_by_dict(g, q)
        if rows is None:
            return None
    n_out = q.rec[rows, 7] - q.rec[rows, 6]
    if downstream:
        if (n_out != 1).any():
            return None
        chosen = q.rec[rows, 6]
        if not q.kinds_are(q.out[chosen], 0, _STRING):
            return None
    else:
        with_prov = np.concatenate([[0], np.cumsum(q.out[:, 3])])
        if (with_prov[q.rec[rows, 7]] - with_prov[q.rec[rows, 6]] != 1).any():
            return None
        first = np.flatnonzero(q.out[:, 3])   # each chosen record has exactly one
        of_record = np.searchsorted(q.rec[:, 7], first, side="right")
        chosen = np.empty(len(q.rec), dtype=np.int64)
        chosen[of_record] = first
        chosen = chosen[rows]
    return chosen


def _scanned_ranking(g: _Scanned, q: _Scanned, chosen: np.ndarray, vocab: int, ks: list,
                     in_context: bool):
    """:func:`_ranking`'s columns from scanned files, or None where a guess text the script
    reads is not a string (json.loads then reads the files and reports it)."""
    nq = len(g.rec)
    top = max(ks)
    plo = q.out[chosen, 4]
    phi = q.out[chosen, 5]
    tops = _spans(plo, np.minimum(phi, plo + top))
    if not q.kinds_are(q.prov[tops], 5, (0, 1, 2)):
        return None
    idx = _spans(plo, phi)
    full = q.prov[idx, 0]
    keep = full >= 0
    kept = np.concatenate([[0], np.cumsum(keep)])
    bounds = np.concatenate([[0], np.cumsum(phi - plo)])
    out_off = np.append(g.rec[:, 6], g.rec[-1, 7]) if nq else np.zeros(1, dtype=np.int64)
    prov_bounds = (np.append(g.out[:, 4], g.out[-1, 5]) if len(g.out)
                   else np.zeros(1, dtype=np.int64))
    gold_full = g.prov[:, 0]
    gold_keep = gold_full >= 0
    gold_kept = np.concatenate([[0], np.cumsum(gold_keep)])
    a = {"guess_ids": full[keep], "guess_off": kept[bounds], "out_off": out_off,
         "rp_ids": gold_full[gold_keep], "rp_off": gold_kept[prov_bounds],
         "set_ids": g.prov[:, 1], "set_off": prov_bounds, "has_prov": g.out[:, 3],
         "vocab": vocab}
    if in_context:
        tops_n = np.minimum(phi, plo + top) - plo
        # the strings normalized from their bytes by one kernel without the GIL: the gold
        # answers, titles and inputs, then the guess texts, one string index each
        groups = [(g, g.out, 0), (g, g.prov, 2), (g, g.rec, 3), (q, q.prov[tops], 5)]
        chars, char_off, state, index = _normalized_spans(groups)
        answer_idx, title_idx, input_idx, text_idx = index
        # an answer or title counts where it is a string that str.strip() leaves non-empty
        answer_keep = state[answer_idx] == _kernels.KILT_SPAN_DONE
        title_keep = state[title_idx] == _kernels.KILT_SPAN_DONE
        answer_kept = np.concatenate([[0], np.cumsum(answer_keep)])
        title_kept = np.concatenate([[0], np.cumsum(title_keep)])
        a.update(chars=chars, char_off=char_off,
                 texts=np.where(state[text_idx] == _kernels.KILT_SPAN_ABSENT, -1, text_idx),
                 text_off=np.concatenate([[0], np.cumsum(tops_n)]),
                 answers=answer_idx[answer_keep], answer_off=answer_kept[out_off],
                 titles=title_idx[title_keep], title_off=title_kept[prov_bounds[out_off]],
                 source=input_idx)
    return _score_ranking(nq, ks, in_context, a)


def _normalized_spans(groups: list):
    """SQuAD's normalize_answer of the strings at columns ``col`` of each group's rows
    ``(scanned file, rows, col)``, as one string table: ``(chars, char_off, state, index)``,
    string i's code points ``chars[char_off[i]:char_off[i + 1]]``, its ``KILT_SPAN_*`` state
    ``state[i]``, and each group's string indexes in ``index``. The kernel leaves a few
    strings to CPython (see kilt_squad_spans); they are decoded and normalized here."""
    counts = [len(rows) for _, rows, _ in groups]
    total = sum(counts)
    room = sum(int(np.where((rows[:, col] == 1) | (rows[:, col] == 2),
                            rows[:, col + 2] - rows[:, col + 1], 0).sum())
               for _, rows, col in groups)
    chars = np.empty(room, dtype=np.int32)
    char_off = np.empty(total + 1, dtype=np.int64)
    state = np.empty(total, dtype=np.uint8)
    char_off[0] = 0
    start = 0
    index = []
    for (f, rows, col), n in zip(groups, counts):
        _kernels.kilt_squad_spans(f.raw, np.ascontiguousarray(rows), col,
                                  char_off[start:start + n + 1], chars,
                                  state[start:start + n])
        index.append(np.arange(start, start + n, dtype=np.int64))
        start += n
    chars = chars[:char_off[total]]
    left = np.flatnonzero(state == _kernels.KILT_SPAN_LEFT)
    if len(left):
        # each such string decoded as json.loads decodes it, normalized by the str kernel and
        # appended as a new string that its row then names
        starts = np.cumsum([0] + counts)
        texts = []
        for g, (f, rows, col) in enumerate(groups):
            mine = left[(left >= starts[g]) & (left < starts[g + 1])] - starts[g]
            if len(mine):
                texts += [_plain(t) for t in f.strings(rows[mine], col)]
        extra_off = np.empty(len(texts) + 1, dtype=np.int64)
        extra = np.frombuffer(_kernels.answer_squad_chars(texts, extra_off), dtype=np.int32)
        new_ids = total + np.arange(len(texts), dtype=np.int64)
        chars = np.concatenate([chars, extra])
        char_off = np.concatenate([char_off, char_off[total] + extra_off[1:]])
        state = np.concatenate([state, np.array(
            [_kernels.KILT_SPAN_DONE if t.strip() else _kernels.KILT_SPAN_BLANK for t in texts],
            dtype=np.uint8)])
        remap = np.arange(total + len(texts), dtype=np.int64)
        remap[left] = new_ids
        index = [remap[ix] for ix in index]
    return chars, char_off, state, index


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------

def retrieval_keys(ks) -> list:
    """The keys :func:`kilt_retrieval` returns for ``ks``, in the script's order."""
    keys = ["Rprec", "entity_in_input"]
    for k in sorted(set(ks)):
        if k > 0:
            keys += [f"precision@{k}", f"answer_in_context@{k}",
                     f"answer_and_ent_in_context@{k}", f"entity_in_context@{k}"]
        if k > 1:
            keys += [f"recall@{k}", f"success_rate@{k}"]
    return keys


def _str(value, qid, field: str) -> str:
    if not isinstance(value, str):
        raise InputTypeError(f"question {qid!r}: {field} must be a string, not "
                             f"{type(value).__name__}")
    return value


def _plain(s: str) -> str:
    """s as an exact str (a str subclass's text), as the normalizing kernel takes it."""
    return s if type(s) is str else str.__str__(s)


def _ranking(provs: list, gold: list, ks: list, rank_keys: list, *,
             in_context: bool = True) -> dict:
    """Each question's retrieval numbers, as float64 arrays keyed by :func:`retrieval_keys`.
    Without ``in_context`` only ``Rprec`` and the largest k's ``recall@k`` (what
    ``eval_downstream.py`` prints), the strings the script reads for the rest still
    type-checked (it stops on them all the same).

    The provenance keys are interned here, one id per distinct string, and the texts, answers
    and titles normalized once each; the ranking and the substring tests then run in two
    kernels without the GIL."""
    top = max(ks)
    single = len(rank_keys) == 1
    key = rank_keys[0]
    ids: dict = {}
    intern = ids.setdefault   # (intern(s, len(ids)): the next id for a new string)
    guess_ids: list = []
    guess_off = [0]
    out_off = [0]
    rp_ids: list = []         # per output: its complete provenances' ids (R-precision)
    rp_off = [0]
    set_ids: list = []        # per output: its evidence set's ids (the keys each provenance has)
    set_off = [0]
    has_prov: list = []
    strings: dict = {}
    sid = strings.setdefault
    texts: list = []
    text_off = [0]
    answers: list = []
    answer_off = [0]
    titles: list = []
    title_off = [0]
    source: list = []
    for prov, record in zip(provs, gold):
        qid = record["id"]
        outputs = record.get("output")
        if not outputs:
            raise InputError(f"gold question {qid!r} has no outputs (the script fails on it)",
                             query=qid, field="output")
        if single:
            guess_ids += [intern(str(p[key]).strip(), len(ids)) for p in prov if key in p]
        else:
            guess_ids += [intern("+".join([str(p[k]).strip() for k in rank_keys]), len(ids))
                          for p in prov if all(k in p for k in rank_keys)]
        guess_off.append(len(guess_ids))
        for o in outputs:
            ps = o.get("provenance", ())
            if single:
                rp_ids += [intern(str(p[key]).strip(), len(ids)) for p in ps if key in p]
            else:
                rp_ids += [intern("+".join([str(p[k]).strip() for k in rank_keys]), len(ids))
                           for p in ps if all(k in p for k in rank_keys)]
            rp_off.append(len(rp_ids))
            if "provenance" in o:
                has_prov.append(1)
                if single:   # (the join of one id is that id; a missing one joins to "")
                    set_ids += [intern(str(p[key]).strip() if key in p else "", len(ids))
                                for p in ps]
                else:
                    set_ids += [intern("+".join([str(p[k]).strip() for k in rank_keys
                                                 if k in p]), len(ids)) for p in ps]
            else:
                has_prov.append(0)
            set_off.append(len(set_ids))
        out_off.append(len(has_prov))
        # the strings the script reads for the rest, checked in its order
        for o in outputs:
            a = o.get("answer")
            if a:
                a = _str(a, qid, "answer").strip()
                if a and in_context:
                    answers.append(sid(a, len(strings)))
            for p in o.get("provenance", ()):
                t = p.get("title")
                if t:
                    t = _str(t, qid, "title").strip()
                    if t and in_context:
                        titles.append(sid(t, len(strings)))
        if in_context:
            answer_off.append(len(answers))
            title_off.append(len(titles))
            texts += [sid(_plain(_str(p["text"], qid, "text")), len(strings)) if "text" in p
                      else -1 for p in prov[:top]]
            text_off.append(len(texts))
            source.append(sid(_plain(_str(record.get("input"), qid, "input")), len(strings)))
        else:
            for p in prov[:top]:
                if "text" in p:
                    _str(p["text"], qid, "text")
            _str(record.get("input"), qid, "input")
    return _score_ranking(len(gold), ks, in_context, {
        "guess_ids": guess_ids, "guess_off": guess_off, "out_off": out_off, "rp_ids": rp_ids,
        "rp_off": rp_off, "set_ids": set_ids, "set_off": set_off, "has_prov": has_prov,
        "vocab": len(ids), "strings": list(strings), "texts": texts, "text_off": text_off,
        "answers": answers, "answer_off": answer_off, "titles": titles, "title_off": title_off,
        "source": source})


def _score_ranking(nq: int, ks: list, in_context: bool, a: dict) -> dict:
    """:func:`_ranking`'s columns from its kernels' inputs (lists or arrays)."""
    top = max(ks)
    distinct_ks = sorted(set(ks))
    rprec = np.empty(nq, dtype=np.float64)
    n_sets = np.empty(nq, dtype=np.int64)
    hits = np.empty((nq, len(distinct_ks)), dtype=np.int64)

    def i32(key: str) -> np.ndarray:
        return np.ascontiguousarray(a[key], dtype=np.int32)

    def i64(key: str) -> np.ndarray:
        return np.ascontiguousarray(a[key], dtype=np.int64)

    _kernels.kilt_rank(i32("guess_ids"), i64("guess_off"), i64("out_off"), i32("rp_ids"),
                       i64("rp_off"), i32("set_ids"), i64("set_off"),
                       np.ascontiguousarray(a["has_prov"], dtype=np.uint8), a["vocab"],
                       np.array(distinct_ks, dtype=np.int64), rprec, n_sets, hits)
    ranked = n_sets > 0
    per_set = np.maximum(n_sets, 1)
    cols: dict = {"Rprec": rprec}
    if not in_context:
        h = hits[:, len(distinct_ks) - 1]
        cols[f"recall@{top}"] = np.where(ranked, h / per_set, 0.0)
        return cols
    if "chars" in a:   # (normalized from the file's bytes already)
        chars, char_off = a["chars"], a["char_off"]
    else:
        char_off = np.empty(len(a["strings"]) + 1, dtype=np.int64)
        chars = np.frombuffer(_kernels.answer_squad_chars(a["strings"], char_off),
                              dtype=np.int32)
    first_answer, first_title, first_both, entity_in_input = (
        np.empty(nq, dtype=np.int64) for _ in range(4))
    _kernels.kilt_in_context(chars, char_off, i64("texts"), i64("text_off"), i64("answers"),
                             i64("answer_off"), i64("titles"), i64("title_off"),
                             i64("source"), first_answer, first_title, first_both,
                             entity_in_input)
    cols["entity_in_input"] = entity_in_input.astype(np.float64)
    for j, k in enumerate(distinct_ks):
        h = hits[:, j]
        cols[f"precision@{k}"] = np.where(ranked, h / k, 0.0)
        cols[f"answer_in_context@{k}"] = (first_answer < k).astype(np.float64)
        cols[f"answer_and_ent_in_context@{k}"] = (first_both < k).astype(np.float64)
        cols[f"entity_in_context@{k}"] = (first_title < k).astype(np.float64)
        if k > 1:
            cols[f"recall@{k}"] = np.where(ranked, h / per_set, 0.0)
            cols[f"success_rate@{k}"] = np.where(ranked, (h > 0).astype(np.float64), 0.0)
    return cols


def _check_ks(ks) -> list:
    if isinstance(ks, (str, bytes)) or not hasattr(ks, "__iter__"):
        raise InputTypeError(f"ks must be a list of positive integers, not {type(ks).__name__}")
    out = []
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise InputTypeError(f"ks must hold integers, not {type(k).__name__}")
        if k <= 0:
            raise InputError(f"every k of ks must be a positive integer, not {k} (the script "
                             f"stops on it)")
        out.append(int(k))
    if not out:
        raise InputError("ks is empty")
    return sorted(out)


def _check_rank_keys(rank_keys) -> list:
    if isinstance(rank_keys, str):
        rank_keys = [rank_keys]
    rank_keys = list(rank_keys)
    if not rank_keys or not all(isinstance(key, str) for key in rank_keys):
        raise InputTypeError("rank_keys must be a non-empty list of strings")
    return rank_keys


def _means(cols: dict, n: int, ks: list, keys: list) -> dict:
    """The script's means of ``n`` questions: each value added left to right (a k given twice
    adds it twice in a row), the sum divided by n once per occurrence of its k."""
    times = Counter(ks)
    sums = dict.fromkeys(keys, 0.0)
    if not n:
        return sums
    for key in keys:
        m = times[int(key.rsplit("@", 1)[1])] if "@" in key else 1
        values = cols[key] if m == 1 else np.repeat(cols[key], m)
        total = float(np.add.accumulate(values)[-1])   # (np.add.accumulate is sequential)
        for _ in range(m):
            total /= n
        sums[key] = total
    return sums


def _evaluate(guess, gold, ks: list, rank_keys: list) -> tuple[dict, list | _GoldIds, int]:
    """The columns of :func:`kilt_retrieval`, the gold ids and the number of guesses, the
    files read by the compiled scanner where they are plainly valid."""
    scan = _scan(guess, gold, rank_keys)
    raw_gold = raw_guess = None
    if scan is not None:
        raw_gold, raw_guess = scan[0], scan[1]
        if scan[2] is not None:
            g, q = scan[2], scan[3]
            chosen = _scanned_questions(g, q, downstream=False)
            if chosen is not None:
                cols = _scanned_ranking(g, q, chosen, scan[4], ks, True)
                if cols is not None:
                    return cols, _GoldIds(g), len(q.rec)
    gold = _records(gold, "gold", raw_gold)
    guess = _records(guess, "guess", raw_guess)
    cols = _ranking(_align(gold, guess), gold, ks, rank_keys)
    return cols, [record["id"] for record in gold], len(guess)


def kilt_retrieval(guess, gold, *, ks=(1, 5, 10, 20), rank_keys=("wikipedia_id",),
                   per_question: bool = False) -> dict:
    """Score KILT provenance as the official ``kilt/eval_retrieval.py`` does.

    Parameters
    ----------
    guess, gold : str, os.PathLike or list of dict
        KILT JSON-lines files or their loaded records: ``{"id", "input", "output": [...]}``,
        each output a dict with an ``"answer"`` and/or a ``"provenance"`` list of dicts
        (``"wikipedia_id"``, ``"title"``, ``"text"``, ``"start_paragraph_id"``, ...). Gold
        order is question order; every gold id needs a guess whose outputs have exactly one
        with provenance (the ranked list); extra guesses are ignored.
    ks : list of int, default (1, 5, 10, 20)
        The cutoffs, positive. A k given twice is added twice to its sums and its sums divided twice by the
        number of questions, as in the script.
    rank_keys : list of str, default ("wikipedia_id",)
        The provenance fields naming a retrieved item: ``["wikipedia_id"]`` for pages,
        ``["wikipedia_id", "start_paragraph_id"]`` for paragraphs.
    per_question : bool, default False
        Return each question's numbers instead of the means.

    Returns
    -------
    dict
        The means as Python floats, keyed and ordered as the script prints them (see
        :func:`retrieval_keys`). With ``per_question=True``: ``"id"``, the gold ids, then
        each key's float64 array in gold order (a repeated k once).

    Examples
    --------
    >>> gold = [{"id": "q1", "input": "Who wrote Hamlet?", "output": [
    ...     {"answer": "Shakespeare",
    ...      "provenance": [{"wikipedia_id": "7", "title": "Hamlet"}]}]}]
    >>> guess = [{"id": "q1", "output": [{"provenance": [
    ...     {"wikipedia_id": "3", "text": "Macbeth"},
    ...     {"wikipedia_id": "7", "text": "Hamlet is by William Shakespeare."}]}]}]
    >>> kilt_retrieval(guess, gold, ks=[1, 2])  # doctest: +NORMALIZE_WHITESPACE
    {'Rprec': 0.0, 'entity_in_input': 1.0, 'precision@1': 0.0, 'answer_in_context@1': 0.0,
     'answer_and_ent_in_context@1': 0.0, 'entity_in_context@1': 0.0, 'precision@2': 0.5,
     'answer_in_context@2': 1.0, 'answer_and_ent_in_context@2': 1.0,
     'entity_in_context@2': 1.0, 'recall@2': 1.0, 'success_rate@2': 1.0}
    """
    if not isinstance(per_question, (bool, np.bool_)):
        raise InputTypeError(f"per_question must be a bool, not {type(per_question).__name__}")
    ks = _check_ks(ks)
    rank_keys = _check_rank_keys(rank_keys)
    with gc_paused():
        cols, ids, _ = _evaluate(guess, gold, ks, rank_keys)
    keys = retrieval_keys(ks)
    if per_question:
        return {"id": list(ids), **{key: cols[key] for key in keys}}
    return _means(cols, len(ids), ks, keys)


# --------------------------------------------------------------------------------------------
# Downstream
# --------------------------------------------------------------------------------------------

def _sentences(text: str) -> list:
    return [" ".join(piece.split()).split(" ") for piece in text.split(".") if len(piece) > 0]


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F of the ``rouge`` package (1.0.1) that KILT uses, as ``Rouge().get_scores(
    prediction, reference, avg=True)["rouge-l"]["f"]``, 0.0 where it raises (no sentence).

    Sentences are the pieces between "." (whitespace runs made one space); its LCS counts
    distinct words: the union of the words of one LCS per sentence pair, over the distinct
    words of each side; F = 2 * (p * r) / (p + r + 1e-8).

    Examples
    --------
    >>> rouge_l("the cat sat", "the cat sat down")
    0.8571428522448981
    >>> rouge_l("...", "anything")
    0.0
    """
    if not isinstance(prediction, str) or not isinstance(reference, str):
        raise InputTypeError("rouge_l takes two strings")
    return float(_rouge_l_pairs([prediction], [reference])[0])


def _rouge_l_pairs(hyps: list, refs: list) -> np.ndarray:
    """:func:`rouge_l` of each pair ``(hyps[p], refs[p])``, each distinct text split and its
    words interned once, the LCS in a kernel."""
    words: dict = {}
    texts: dict = {}
    toks: list = []
    sent_off, text_sent = [0], [0]

    def text_id(text: str) -> int:
        i = texts.get(text)
        if i is None:
            i = texts[text] = len(texts)
            for sentence in _sentences(text):
                toks.extend([words.setdefault(w, len(words)) for w in sentence])
                sent_off.append(len(toks))
            text_sent.append(len(sent_off) - 1)
        return i

    hyp = np.fromiter((text_id(t) for t in hyps), np.int64, len(hyps))
    ref = np.fromiter((text_id(t) for t in refs), np.int64, len(refs))
    out = np.empty(len(hyp), dtype=np.float64)
    _kernels.kilt_rouge_l(np.array(toks, dtype=np.int32), np.array(sent_off, dtype=np.int64),
                          np.array(text_sent, dtype=np.int64), hyp, ref, len(words), out)
    return out


def _f1(tokens: list, gold: list):
    same = sum((Counter(tokens) & Counter(gold)).values())
    if same == 0:
        return 0
    precision, recall = same / len(tokens), same / len(gold)
    return (2 * precision * recall) / (precision + recall)


DOWNSTREAM_KEYS = ("accuracy", "em", "f1", "rougel")


def _downstream(gold: list, guess: list) -> tuple[list, dict]:
    """Each question's (accuracy, em, f1, rougel, page Rprec) and the page retrieval rows."""
    aligned_ids = {str(r["id"]).strip(): r for r in guess}
    _align(gold, [dict(r, output=[{"provenance": []}]) for r in guess])   # ids only
    provs: list = []
    answers: list = []
    gold_answers: list = []
    for record in gold:
        qid = str(record["id"]).strip()
        g = aligned_ids[qid]
        outputs = g.get("output") or []
        if len(outputs) != 1 or "answer" not in outputs[0]:
            raise InputError(f"guess {qid!r} must have exactly one output, with an \"answer\" "
                             f"(the script stops on it)", query=qid, field="output")
        provs.append(outputs[0].get("provenance", []))
        answer = str(outputs[0]["answer"]).strip()
        golds = set()
        for o in record.get("output") or ():
            a = o.get("answer")
            if a:
                a = _str(a, qid, "answer").strip()
                if a:
                    golds.add(a)
        if answer and not golds:
            raise InputError(f"gold question {qid!r} has no answer to compare with (the script "
                             f"fails on it)", query=qid, field="answer")
        answers.append(answer)
        gold_answers.append(golds)
    rows = _answer_rows(answers, gold_answers)
    retrieval = _ranking(provs, gold, [1, 5], ["wikipedia_id"], in_context=False)
    return rows, retrieval


def _answer_rows(answers: list, gold_answers: list) -> list:
    """Each question's (accuracy, em, f1, rougel) from its stripped answer and the set of its
    stripped gold answers (not empty where the answer is not)."""
    rows: list = []
    answered: list = []   # the rows of the questions with an answer
    predictions: list = []
    references: list = []
    for answer, golds in zip(answers, gold_answers):
        if not answer:
            rows.append((0, 0, 0, 0.0))
            continue
        rows.append(None)
        answered.append(len(rows) - 1)
        predictions.append(answer)
        references.append(list(golds))
    if answered:
        # EM and F1 are SQuAD v1.1's (KILT normalizes as SQuAD does), each the best over the
        # gold answers; ROUGE-L the best of each pair's
        em, f1 = exact_match_and_f1(predictions, references, empty_rule="v1")
        pair_of = [i for i, golds in enumerate(references) for _ in golds]
        rl = _rouge_l_pairs([predictions[i] for i in pair_of],
                            [a for golds in references for a in golds])
        best = np.full(len(predictions), -np.inf)
        np.maximum.at(best, np.array(pair_of, dtype=np.intp), rl)
        for j, row in enumerate(answered):
            rows[row] = (int(predictions[j] in references[j]), int(em[j]), float(f1[j]),
                         float(best[j]))
    return rows


COLUMNS = DOWNSTREAM_KEYS + ("Rprec", "recall@5")


def _downstream_files(guess, gold) -> tuple[dict, list | _GoldIds, int]:
    """:func:`_columns` of two KILT files or record lists, the gold ids and the number of
    guesses, the files read by the compiled scanner where they are plainly valid."""
    scan = _scan(guess, gold, ["wikipedia_id"])
    raw_gold = raw_guess = None
    if scan is not None:
        raw_gold, raw_guess = scan[0], scan[1]
        if scan[2] is not None:
            g, q = scan[2], scan[3]
            chosen = _scanned_questions(g, q, downstream=True)
            if chosen is not None:
                cols = _scanned_answers(g, q, chosen)
                if cols is not None:
                    retrieval = _scanned_ranking(g, q, chosen, scan[4], [1, 5], False)
                    if retrieval is not None:
                        cols["Rprec"] = retrieval["Rprec"]
                        cols["recall@5"] = retrieval["recall@5"]
                        return cols, _GoldIds(g), len(q.rec)
    gold = _records(gold, "gold", raw_gold)
    guess = _records(guess, "guess", raw_guess)
    return _columns(*_downstream(gold, guess)), [record["id"] for record in gold], len(guess)


def _scanned_answers(g: _Scanned, q: _Scanned, chosen: np.ndarray):
    """Each question's (accuracy, em, f1, rougel) columns from the scanned files (the guess
    output rows ``chosen``, in gold order), or None where a question has an answer but no
    gold answer (the records path reports it). The kernel scores from the files' bytes
    without the GIL; the few questions it leaves to CPython are decoded and scored here."""
    nq = len(g.rec)
    answers = np.ascontiguousarray(q.out[chosen, 0:3])
    gold_rows = np.ascontiguousarray(g.out[:, 0:3])
    gold_off = (np.append(g.rec[:, 6], g.rec[-1, 7]) if nq
                else np.zeros(1, dtype=np.int64))
    out = np.zeros((nq, len(DOWNSTREAM_KEYS)), dtype=np.float64)
    state = np.empty(nq, dtype=np.uint8)
    _kernels.kilt_answer_scores(q.raw, answers, g.raw, gold_rows, gold_off, out, state)
    if (state == _kernels.KILT_ANSWER_NO_GOLD).any():
        return None
    left = np.flatnonzero(state == _kernels.KILT_ANSWER_LEFT)
    if len(left):
        texts = [a.strip() for a in q.strings(answers[left], 0)]
        golds = []
        for lo, hi in zip(gold_off[left].tolist(), gold_off[left + 1].tolist()):
            gold_text = g.strings(gold_rows[lo:hi], 0)
            golds.append({a for a in (t.strip() for t in gold_text if t) if a})
        if any(a and not gs for a, gs in zip(texts, golds)):
            return None
        out[left] = np.array(_answer_rows(texts, golds), dtype=np.float64).reshape(-1, 4)
    return {key: np.ascontiguousarray(out[:, k]) for k, key in enumerate(DOWNSTREAM_KEYS)}


def _columns(rows: list, retrieval: dict) -> dict:
    """Each question's numbers as float64 arrays keyed by :data:`COLUMNS`."""
    cols = {key: np.array([row[i] for row in rows], dtype=np.float64)
            for i, key in enumerate(DOWNSTREAM_KEYS)}
    cols["Rprec"] = retrieval["Rprec"]
    cols["recall@5"] = retrieval["recall@5"]
    return cols


def _seq_mean(values: np.ndarray):
    """The script's mean: added left to right (``np.add.accumulate`` is sequential), divided
    by the count; the int 0 for no question, as it prints."""
    if not len(values):
        return 0
    return float(np.add.accumulate(values)[-1]) / len(values)


def _downstream_result(cols: dict) -> dict:
    kilt_gate = cols["Rprec"] == 1   # (adding 0.0 where the script adds nothing changes no bit)
    means = {key: _seq_mean(cols[key]) for key in DOWNSTREAM_KEYS}
    kilt = {key: _seq_mean(np.where(kilt_gate, cols[key], 0.0)) for key in DOWNSTREAM_KEYS}
    n = len(cols["Rprec"])
    return {
        "kilt": {f"KILT-{key}": kilt[key] for key in DOWNSTREAM_KEYS},
        "downstream": means,
        "retrieval": {"Rprec": _seq_mean(cols["Rprec"]) if n else 0.0,
                      "recall@5": _seq_mean(cols["recall@5"]) if n else 0.0},
    }


def kilt(guess, gold, *, per_question: bool = False) -> dict:
    """Score KILT answers as the official ``kilt/eval_downstream.py`` does.

    Parameters
    ----------
    guess, gold : str, os.PathLike or list of dict
        KILT JSON-lines files or their loaded records. Each guess has exactly one output,
        with an ``"answer"`` (and a ``"provenance"`` list for the KILT numbers); every gold
        id needs a guess, extra guesses are ignored.
    per_question : bool, default False
        Return each question's numbers instead of the means.

    Returns
    -------
    dict
        ``{"kilt": {"KILT-accuracy", "KILT-em", "KILT-f1", "KILT-rougel"}, "downstream":
        {"accuracy", "em", "f1", "rougel"}, "retrieval": {"Rprec", "recall@5"}}`` as the
        script returns it (floats; ints 0 when there is no question, as in the script). With
        ``per_question=True``: ``"id"`` and float64 arrays ``accuracy``, ``em``, ``f1``,
        ``rougel``, ``Rprec`` and ``recall@5`` (page ranking) in gold order; a KILT number is
        its plain one where ``Rprec`` is 1, else 0.

    Examples
    --------
    >>> gold = [{"id": "q1", "input": "Who wrote Hamlet?", "output": [
    ...     {"answer": "William Shakespeare", "provenance": [{"wikipedia_id": "7"}]}]}]
    >>> guess = [{"id": "q1", "output": [{"answer": "Shakespeare",
    ...                                   "provenance": [{"wikipedia_id": "7"}]}]}]
    >>> kilt(guess, gold)  # doctest: +NORMALIZE_WHITESPACE
    {'kilt': {'KILT-accuracy': 0.0, 'KILT-em': 0.0, 'KILT-f1': 0.6666666666666666,
              'KILT-rougel': 0.6666666622222223},
     'downstream': {'accuracy': 0.0, 'em': 0.0, 'f1': 0.6666666666666666,
                    'rougel': 0.6666666622222223},
     'retrieval': {'Rprec': 1.0, 'recall@5': 1.0}}
    """
    if not isinstance(per_question, (bool, np.bool_)):
        raise InputTypeError(f"per_question must be a bool, not {type(per_question).__name__}")
    with gc_paused():
        cols, ids, _ = _downstream_files(guess, gold)
    if per_question:
        return {"id": list(ids), **cols}
    return _downstream_result(cols)


class KiltMetrics:
    """KILT's downstream numbers (:func:`kilt`) accumulated over batches of questions.

    ``update(guess, gold)`` scores a batch: its gold records and the guesses for them (each
    gold id needs one; extra guesses are ignored), as :func:`kilt` reads them. ``compute()``
    gives what :func:`kilt` gives for all the batches' gold records in the order they came,
    bit for bit: the script adds each score left to right, so every question's six numbers
    are kept (48 bytes a question). A gold id met in two batches is an error, as it is in
    one file.

    Examples
    --------
    >>> import qafast
    >>> gold = [{"id": "q1", "input": "Who wrote Hamlet?", "output": [
    ...     {"answer": "Shakespeare", "provenance": [{"wikipedia_id": "7"}]}]},
    ...     {"id": "q2", "input": "Capital of France?", "output": [{"answer": "Paris"}]}]
    >>> guess = [{"id": "q1", "output": [{"answer": "Shakespeare",
    ...                                   "provenance": [{"wikipedia_id": "7"}]}]},
    ...          {"id": "q2", "output": [{"answer": "Lyon"}]}]
    >>> m = qafast.KiltMetrics()
    >>> m.update(guess[:1], gold[:1])
    >>> m.update(guess[1:], gold[1:])
    >>> m.compute() == qafast.kilt(guess, gold)
    True
    >>> m.compute()["downstream"]
    {'accuracy': 0.5, 'em': 0.5, 'f1': 0.5, 'rougel': 0.4999999975}
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        self._ids: list = []
        self._seen: set = set()
        self._cols: list = []

    def __len__(self) -> int:
        return len(self._ids)

    def __repr__(self) -> str:
        return f"KiltMetrics({len(self)} questions)"

    def _add(self, ids: list, cols: dict) -> None:
        repeated = next((qid for qid in ids if qid in self._seen), None)
        if repeated is None and len(set(ids)) != len(ids):
            repeated = next(qid for i, qid in enumerate(ids) if qid in ids[:i])
        if repeated is not None:
            raise InputError(f"gold id {repeated!r} occurs twice (gold ids must be unique)",
                             query=repeated)
        self._ids += ids
        self._seen.update(ids)
        self._cols.append(cols)

    def update(self, guess, gold) -> None:
        """Score a batch of questions (the state is unchanged if it raises)."""
        with gc_paused():
            cols, ids, _ = _downstream_files(guess, gold)
        self._add([str(qid).strip() for qid in ids], cols)

    def _arrays(self) -> dict:
        if not self._cols:
            return {key: np.zeros(0) for key in COLUMNS}
        return {key: np.concatenate([c[key] for c in self._cols]) for key in COLUMNS}

    def compute(self) -> dict:
        """:func:`kilt`'s dict over every question so far."""
        return _downstream_result(self._arrays())

    def state_dict(self) -> dict:
        """The state as plain lists: ``{"format", "version", "id", <each column>}``."""
        return {"format": "qafast.KiltMetrics", "version": 1, "id": list(self._ids),
                **{key: values.tolist() for key, values in self._arrays().items()}}

    def load_state_dict(self, state: dict) -> None:
        """Replace the state by one from :meth:`state_dict`."""
        ids, cols = self._checked_state(state)
        self.reset()
        self._add(ids, cols)

    def merge(self, *others) -> KiltMetrics:
        """Append the questions of ``others`` (unchanged), in order, after this one's."""
        for o in others:
            if type(o) is not KiltMetrics:
                raise InputTypeError(f"cannot merge a {type(o).__name__} into a KiltMetrics")
        states = [self._checked_state(o.state_dict()) for o in others]
        before = (list(self._ids), set(self._seen), list(self._cols))
        try:
            for state in states:
                self._add(*state)
        except InputError:
            self._ids, self._seen, self._cols = before
            raise
        return self

    @staticmethod
    def _checked_state(state) -> tuple[list, dict]:
        if not isinstance(state, dict) or state.get("format") != "qafast.KiltMetrics":
            raise InputError("not a KiltMetrics state")
        if state.get("version") != 1:
            raise InputError(f"KiltMetrics state version {state.get('version')!r}, expected 1")
        try:
            ids = state["id"]
            cols = {key: np.array(state[key], dtype=np.float64) for key in COLUMNS}
        except (KeyError, TypeError, ValueError):
            raise InputError("a KiltMetrics state needs id and " + ", ".join(COLUMNS)
                             + " lists") from None
        if not (isinstance(ids, list) and all(isinstance(qid, str) for qid in ids)):
            raise InputError("a KiltMetrics state's ids must be a list of strings")
        if not all(c.ndim == 1 and len(c) == len(ids) for c in cols.values()):
            raise InputError("a KiltMetrics state's lists differ in length")
        if not all(((c >= 0) & (c <= 1)).all() for c in cols.values()):
            raise InputError("a KiltMetrics state holds scores outside [0, 1]")
        return ids, cols


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

def register_cli(subparsers) -> dict:
    """Add ``qafast kilt-retrieval``; returns ``{name: handler}``."""
    p = subparsers.add_parser(
        "kilt-retrieval",
        help="score KILT provenance, printing what kilt/eval_retrieval.py prints",
        description="Score KILT provenance as the official kilt/eval_retrieval.py does, "
                    "printing the same dict.")
    p.add_argument("guess", metavar="GUESS", help="guess KILT file (JSON lines)")
    p.add_argument("gold", metavar="GOLD", help="gold KILT file (JSON lines)")
    p.add_argument("--ks", type=str, default="1,5,10,20",
                   help="comma separated positive integers for recall@k and precision@k")
    p.add_argument("--rank_keys", type=str, default="wikipedia_id",
                   help="comma separated provenance fields naming an item "
                        "(wikipedia_id,start_paragraph_id for paragraphs)")
    d = subparsers.add_parser(
        "kilt", help="score KILT answers, printing what kilt/eval_downstream.py prints",
        description="Score KILT answers as the official kilt/eval_downstream.py does "
                    "(accuracy, EM, F1, ROUGE-L, their KILT variants, page R-precision and "
                    "recall@5), printing the same dict.")
    d.add_argument("guess", metavar="GUESS", help="guess KILT file (JSON lines)")
    d.add_argument("gold", metavar="GOLD", help="gold KILT file (JSON lines)")
    return {"kilt-retrieval": _run_retrieval_cli, "kilt": _run_downstream_cli}


def _parse_ks(text: str) -> list:
    try:
        return [int(k) for k in text.split(",")]
    except ValueError:
        raise InputError(f"--ks must be comma separated integers, not {text!r}") from None


def _run_retrieval_cli(args) -> int:
    ks = _check_ks(_parse_ks(args.ks))
    rank_keys = args.rank_keys.split(",")
    with gc_paused():   # (an error prints nothing on stdout)
        cols, ids, n_guess = _evaluate(args.guess, args.gold, ks, rank_keys)
    means = _means(cols, len(ids), ks, retrieval_keys(ks))
    out = pprint.PrettyPrinter(indent=4).pformat(OrderedDict(means)) + "\n"
    if len(ids) != n_guess:
        out = f"WARNING: DIFFERENT SIZE gold: {len(ids)} guess: {n_guess}\n" + out
    sys.stdout.write(out)
    return 0


def _run_downstream_cli(args) -> int:
    with gc_paused():   # (an error prints nothing on stdout)
        cols, ids, n_guess = _downstream_files(args.guess, args.gold)
    out = pprint.PrettyPrinter(indent=4).pformat(_downstream_result(cols)) + "\n"
    if len(ids) != n_guess:
        out = f"WARNING: DIFFERENT SIZE gold: {len(ids)} guess: {n_guess}\n" + out
    sys.stdout.write(out)
    return 0
