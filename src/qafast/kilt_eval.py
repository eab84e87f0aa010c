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
from .answers import exact_match_and_f1, normalize_squad
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


def _records(data, what: str) -> list:
    if isinstance(data, (str, os.PathLike)):
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


_NEVER = sys.maxsize


def _first(texts: list, needles: list) -> int:
    """Index of the first text containing one of ``needles`` (``_NEVER`` if none)."""
    for i, text in enumerate(texts):
        if text is not None and any(n in text for n in needles):
            return i
    return _NEVER


def _ids_of(provenances, rank_keys: list) -> list:
    """The distinct ids of the provenances that have every rank key, in order."""
    if len(rank_keys) == 1:
        key = rank_keys[0]
        return list(dict.fromkeys([str(p[key]).strip() for p in provenances if key in p]))
    return list(dict.fromkeys(
        "+".join([str(p[key]).strip() for key in rank_keys]) for p in provenances
        if all(key in p for key in rank_keys)))


class _Normalized(dict):
    """``normalize_squad`` of each string asked for, each distinct one computed once (titles,
    answers and passages recur across questions)."""

    def __missing__(self, s: str) -> str:
        value = self[s] = normalize_squad(s)
        return value


def _question(prov: list, gold: dict, ks: list, rank_keys: list, *,
              in_context: bool = True, norm: dict | None = None) -> dict:
    """One question's retrieval row. Without ``in_context`` only ``Rprec`` and the largest
    k's ``recall@k`` (what ``eval_downstream.py`` prints), the strings the script reads for
    the rest still type-checked (it stops on them all the same)."""
    qid = gold["id"]
    outputs = gold.get("output")
    if not outputs:
        raise InputError(f"gold question {qid!r} has no outputs (the script fails on it)",
                         query=qid, field="output")
    # ids: guess (first occurrences of complete provenances) and each gold output's
    guess = _ids_of(prov, rank_keys)
    best = None
    for o in outputs:
        gold_ids = set(_ids_of(o.get("provenance", ()), rank_keys))
        r = len(gold_ids)
        value = sum(1 for x in guess[:r] if x in gold_ids) / r if r > 0 else 0
        if best is None or value > best:
            best = value
    # the rank of evidence sets
    trues = [0]
    n_sets = 0
    if guess:
        sets: list = []
        for o in outputs:
            if "provenance" in o:
                if len(rank_keys) == 1:   # (the join of one id is that id)
                    key = rank_keys[0]
                    s = {str(p[key]).strip() if key in p else "" for p in o["provenance"]}
                else:
                    s = {"+".join([str(p[key]).strip() for key in rank_keys if key in p])
                         for p in o["provenance"]}
                if s not in sets:
                    sets.append(s)
        n_sets = len(sets)
        entries: list = []
        for gid in guess:
            found = False
            for i, s in enumerate(sets):
                if gid in s:
                    found = True
                    marker = ("set", i)   # (a bare int would equal True or False)
                    if marker in entries:
                        entries.remove(marker)
                    s.remove(gid)
                    entries.append(True if not s else marker)
            if not found:
                entries.append(False)
        for e in entries:
            trues.append(trues[-1] + (e is True))
    if not in_context:
        return _checked_rows(prov, gold, ks, best, trues, n_sets)
    # answers and titles in the guess texts and the gold input
    answers, titles = set(), set()
    for o in outputs:
        a = o.get("answer")
        if a:
            a = _str(a, qid, "answer").strip()
            if a:
                answers.add(a)
        for p in o.get("provenance", ()):
            t = p.get("title")
            if t:
                t = _str(t, qid, "title").strip()
                if t:
                    titles.add(t)
    if norm is None:
        norm = _Normalized()
    norm_answers = [norm[a] for a in answers]
    norm_titles = [norm[t] for t in titles]
    top = max(ks)
    texts = [norm[_str(p["text"], qid, "text")] if "text" in p else None
             for p in prov[:top]]
    first_answer = _first(texts, norm_answers)
    first_title = _first(texts, norm_titles)
    first_both = next((i for i, t in enumerate(texts) if t is not None
                       and any(n in t for n in norm_answers)
                       and any(n in t for n in norm_titles)), _NEVER)
    source = norm[_str(gold.get("input"), qid, "input")]
    row = {"Rprec": best, "entity_in_input": int(any(t in source for t in norm_titles))}
    n = len(trues) - 1
    for k in ks:
        hits = trues[min(k, n)]
        row[f"precision@{k}"] = hits / k if n_sets else 0
        row[f"answer_in_context@{k}"] = int(first_answer < k)
        row[f"answer_and_ent_in_context@{k}"] = int(first_both < k)
        row[f"entity_in_context@{k}"] = int(first_title < k)
        if k > 1:
            row[f"recall@{k}"] = hits / n_sets if n_sets else 0
            row[f"success_rate@{k}"] = int(hits > 0) if n_sets else 0
    return row


def _checked_rows(prov: list, gold: dict, ks: list, best, trues: list, n_sets: int) -> dict:
    qid = gold["id"]
    for o in gold["output"]:
        a = o.get("answer")
        if a:
            _str(a, qid, "answer")
        for p in o.get("provenance", ()):
            t = p.get("title")
            if t:
                _str(t, qid, "title")
    for p in prov[:max(ks)]:
        if "text" in p:
            _str(p["text"], qid, "text")
    _str(gold.get("input"), qid, "input")
    k = max(ks)
    hits = trues[min(k, len(trues) - 1)]
    return {"Rprec": best, f"recall@{k}": hits / n_sets if n_sets else 0}


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


def _means(rows: list, ks: list, keys: list) -> dict:
    sums = dict.fromkeys(keys, 0.0)
    by_k = {k: [key for key in keys[2:] if key.rsplit("@", 1)[1] == str(k)] for k in ks}
    for row in rows:
        sums["Rprec"] += row["Rprec"]
        sums["entity_in_input"] += row["entity_in_input"]
        for k in ks:   # a k given twice is added twice, as the script adds it
            for key in by_k[k]:
                sums[key] += row[key]
    if rows:   # and divided once per occurrence too
        sums["Rprec"] /= len(rows)
        sums["entity_in_input"] /= len(rows)
        for k in ks:
            for key in by_k[k]:
                sums[key] /= len(rows)
    return sums


def _evaluate(gold: list, guess: list, ks: list, rank_keys: list) -> list:
    provs = _align(gold, guess)
    norm = _Normalized()
    return [_question(prov, record, ks, rank_keys, norm=norm) for prov, record in zip(provs, gold)]


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
        gold = _records(gold, "gold")
        guess = _records(guess, "guess")
        rows = _evaluate(gold, guess, ks, rank_keys)
    keys = retrieval_keys(ks)
    if per_question:
        out: dict = {"id": [record["id"] for record in gold]}
        for key in keys:
            out[key] = np.array([row[key] for row in rows], dtype=np.float64)
        return out
    return _means(rows, ks, keys)


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


def _downstream(gold: list, guess: list) -> tuple[list, list]:
    """Each question's (accuracy, em, f1, rougel, page Rprec) and the page retrieval rows."""
    aligned_ids = {str(r["id"]).strip(): r for r in guess}
    _align(gold, [dict(r, output=[{"provenance": []}]) for r in guess])   # ids only
    rows: list = []
    provs: list = []
    answered: list = []   # the rows of the questions with an answer
    predictions: list = []
    references: list = []
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
    retrieval = [_question(prov, record, [1, 5], ["wikipedia_id"], in_context=False)
                 for prov, record in zip(provs, gold)]
    return rows, retrieval


COLUMNS = DOWNSTREAM_KEYS + ("Rprec", "recall@5")


def _columns(rows: list, retrieval: list) -> dict:
    """Each question's numbers as float64 arrays keyed by :data:`COLUMNS`."""
    cols = {key: np.array([row[i] for row in rows], dtype=np.float64)
            for i, key in enumerate(DOWNSTREAM_KEYS)}
    cols["Rprec"] = np.array([r["Rprec"] for r in retrieval], dtype=np.float64)
    cols["recall@5"] = np.array([r["recall@5"] for r in retrieval], dtype=np.float64)
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
        gold = _records(gold, "gold")
        guess = _records(guess, "guess")
        cols = _columns(*_downstream(gold, guess))
    if per_question:
        return {"id": [record["id"] for record in gold], **cols}
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
            gold = _records(gold, "gold")
            guess = _records(guess, "guess")
            cols = _columns(*_downstream(gold, guess))
        self._add([str(record["id"]).strip() for record in gold], cols)

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
    with gc_paused():
        gold = _records(args.gold, "gold")
        guess = _records(args.guess, "guess")
        rows = _evaluate(gold, guess, ks, rank_keys)   # an error prints nothing on stdout
    means = _means(rows, ks, retrieval_keys(ks))
    out = pprint.PrettyPrinter(indent=4).pformat(OrderedDict(means)) + "\n"
    if len(gold) != len(guess):
        out = f"WARNING: DIFFERENT SIZE gold: {len(gold)} guess: {len(guess)}\n" + out
    sys.stdout.write(out)
    return 0


def _run_downstream_cli(args) -> int:
    with gc_paused():
        gold = _records(args.gold, "gold")
        guess = _records(args.guess, "guess")
        cols = _columns(*_downstream(gold, guess))   # an error prints nothing on stdout
    out = pprint.PrettyPrinter(indent=4).pformat(_downstream_result(cols)) + "\n"
    if len(gold) != len(guess):
        out = f"WARNING: DIFFERENT SIZE gold: {len(gold)} guess: {len(guess)}\n" + out
    sys.stdout.write(out)
    return 0
