"""KILT's retrieval evaluation (``kilt/eval_retrieval.py``) in plain Python: the specification
:mod:`qafast.kilt_eval` is tested against.

Rules (each checked against the unmodified script):

* Files are JSON lines; the gold file's order is the order of the questions. Ids are compared as
  ``str(id).strip()``; every gold id needs a guess, guesses the gold lacks are ignored.
* Of a guess's outputs only those with a ``"provenance"`` key are kept, and exactly one must
  remain.
* The *id* of a provenance is ``"+".join(str(provenance[key]).strip() for key in rank_keys)``.
  The guess's ids and each gold output's ids skip a provenance lacking a rank key and keep
  the first of repeated ids. For the rank's *evidence sets* a provenance lacking a key joins
  the keys it has (possibly ``""``); each gold output with a ``"provenance"`` key (even an
  empty list) is one set, repeated sets counted once.
* ``Rprec``: for each gold output with R ids, the share of the first R guess ids among them
  (0 if R is 0); the best output's share.
* The rank: each guess id in order appends, for each evidence set containing it (in set
  order), ``True`` if it was the set's last missing member, otherwise a marker of the set,
  after removing that set's earlier marker; a guess id in no set appends ``False``.
  ``precision@k`` = Trues among the first k / k, ``recall@k`` = Trues among the first k / the
  number of sets, ``success_rate@k`` = 1 if a True is among the first k; all 0 without guess
  ids or without sets. ``recall@k`` and ``success_rate@k`` are reported for k > 1 only.
* ``answer_in_context@k``: 1 if the SQuAD-normalized gold answer (any non-blank ``"answer"`` of
  the gold outputs, stripped) is a substring of the SQuAD-normalized ``"text"`` of one of the
  first k guess provenances. ``entity_in_context@k`` the same with the gold provenance titles,
  ``answer_and_ent_in_context@k`` with an answer and a title in the same text;
  ``entity_in_input`` a title in the gold ``"input"``.
* The means add each question's numbers in order and divide by the number of questions, both
  once per occurrence of k in ``ks``: a k given twice gives 2 * sum / n ** 2.
"""

from __future__ import annotations

from .answers import normalize_squad

__all__ = ["RETRIEVAL_KEYS", "aligned_guesses", "downstream_question", "guess_ids", "lcs_words",
           "rank", "retrieval_keys", "retrieval_means", "retrieval_question", "rouge_l",
           "rouge_sentences", "rprecision"]


def aligned_guesses(gold: list, guess: list):
    """The index of each gold record's guess, in gold order, the ids compared as
    ``str(id).strip()``; None where a gold id or a guess id occurs twice or a gold id has no
    guess (the script stops on each)."""
    gold_keys = [str(record["id"]).strip() for record in gold]
    guess_keys = [str(record["id"]).strip() for record in guess]
    if len(set(gold_keys)) != len(gold_keys) or len(set(guess_keys)) != len(guess_keys):
        return None
    if not set(gold_keys) <= set(guess_keys):
        return None
    return [guess_keys.index(key) for key in gold_keys]


def _pid(provenance: dict, rank_keys) -> str:
    return "+".join(str(provenance[key]).strip() for key in rank_keys)


def output_ids(output: dict, rank_keys) -> list:
    """The ids of one output's provenance, first occurrences, skipping incomplete ones."""
    ids: list = []
    for p in output.get("provenance", ()):
        if all(key in p for key in rank_keys):
            pid = _pid(p, rank_keys)
            if pid not in ids:
                ids.append(pid)
    return ids


def guess_ids(guess: dict, rank_keys) -> list:
    return output_ids(guess["output"][0], rank_keys)


def rprecision(guess: dict, gold: dict, rank_keys) -> float:
    ids = guess_ids(guess, rank_keys)
    values: list = []
    for output in gold["output"]:
        gold_ids = output_ids(output, rank_keys)
        r = len(gold_ids)
        values.append(sum(1 for x in ids[:r] if x in gold_ids) / r if r > 0 else 0)
    return max(values)


def rank(guess: dict, gold: dict, rank_keys) -> tuple[list, int]:
    """The rank (True, False or an evidence-set marker per entry) and the number of sets."""
    ids = guess_ids(guess, rank_keys)
    if not ids:
        return [], 0
    sets: list = []
    for output in gold["output"]:
        if "provenance" in output:
            s = {"+".join(str(p[key]).strip() for key in rank_keys if key in p)
                 for p in output["provenance"]}
            if s not in sets:
                sets.append(s)
    out: list = []
    for gid in ids:
        found = False
        for i, s in enumerate(sets):
            if gid in s:
                found = True
                marker = ("set", i)
                if marker in out:
                    out.remove(marker)
                s.remove(gid)
                out.append(True if not s else marker)
        if not found:
            out.append(False)
    return out, len(sets)


def _answers(gold: dict) -> set:
    return {o["answer"].strip() for o in gold["output"]
            if "answer" in o and o["answer"] and o["answer"].strip()}


def _titles(gold: dict) -> set:
    return {p["title"].strip() for o in gold["output"] if "provenance" in o
            for p in o["provenance"] if "title" in p and p["title"] and p["title"].strip()}


def _in_context(guess: dict, k: int, needles, titles=None) -> int:
    for p in guess["output"][0]["provenance"][:k]:
        if "text" in p:
            text = normalize_squad(p["text"])
            if any(normalize_squad(a) in text for a in needles) and (
                    titles is None or any(normalize_squad(t) in text for t in titles)):
                return 1
    return 0


def retrieval_keys(ks) -> list:
    """The script's keys for ``ks``, in the order it prints them."""
    keys = ["Rprec", "entity_in_input"]
    for k in sorted(ks):
        names = ["precision", "answer_in_context", "answer_and_ent_in_context",
                 "entity_in_context"] if k > 0 else []
        names += ["recall", "success_rate"] if k > 1 else []
        keys += [f"{n}@{k}" for n in names if f"{n}@{k}" not in keys]
    return keys


RETRIEVAL_KEYS = retrieval_keys([1, 5, 10, 20])


def retrieval_question(guess: dict, gold: dict, ks, rank_keys) -> dict:
    """One question's numbers, keyed as :func:`retrieval_keys` (``ks`` all positive)."""
    answers, titles = _answers(gold), _titles(gold)
    text = normalize_squad(gold["input"])
    row = {"Rprec": rprecision(guess, gold, rank_keys),
           "entity_in_input": int(any(normalize_squad(t) in text for t in titles))}
    r, n_sets = rank(guess, gold, rank_keys)
    for k in sorted(ks):
        top = r[:k]
        row[f"precision@{k}"] = top.count(True) / k if n_sets else 0
        row[f"answer_in_context@{k}"] = _in_context(guess, k, answers)
        row[f"answer_and_ent_in_context@{k}"] = _in_context(guess, k, answers, titles)
        row[f"entity_in_context@{k}"] = _in_context(guess, k, titles)
        if k > 1:
            row[f"recall@{k}"] = top.count(True) / n_sets if n_sets else 0
            row[f"success_rate@{k}"] = int(True in top) if n_sets else 0
    return row


def retrieval_means(rows: list, ks) -> dict:
    """The printed means of the questions' rows: sums in question order over the number of
    questions, each k's added and divided once per occurrence in ``ks``."""
    keys = retrieval_keys(ks)
    sums = {key: 0.0 for key in keys}
    for row in rows:
        sums["Rprec"] += row["Rprec"]
        sums["entity_in_input"] += row["entity_in_input"]
        for k in sorted(ks):
            for key in keys[2:]:
                if key.endswith(f"@{k}"):
                    sums[key] += row[key]
    if rows:
        sums["Rprec"] /= len(rows)
        sums["entity_in_input"] /= len(rows)
        for k in sorted(ks):
            for key in keys[2:]:
                if key.endswith(f"@{k}"):
                    sums[key] /= len(rows)
    return sums


# --------------------------------------------------------------------------------------------
# kilt/eval_downstream.py
# --------------------------------------------------------------------------------------------
#
# * Each guess has exactly one output, with an "answer"; the answer is ``str(answer).strip()``
#   and an empty one scores 0 everywhere (the question still counts).
# * accuracy: the answer is one of the gold answers (the stripped non-blank "answer"s of the
#   gold outputs); em and f1: SQuAD's, the best over the gold answers.
# * rougel: the ``rouge`` package's (1.0.1) ROUGE-L F, the best over the gold answers. Both
#   texts are cut at every "." into sentences (a piece of no characters dropped, whitespace
#   runs made one space, so a blank piece is the sentence ""); words are a sentence split at
#   " ". m and n are the numbers of distinct words of the reference and the answer; for every
#   (reference sentence, answer sentence) pair the words of one LCS (the one found by walking
#   the table back from the end: a match, else up when the cell above is strictly larger,
#   else left) join a set; with llcs its size, r = llcs / m, p = llcs / n and
#   F = 2 * ((p * r) / (p + r + 1e-8)). No sentence on either side: 0.0.
# * KILT-x: x where the page R-precision (rank key wikipedia_id) of the guess is 1, else 0.
# * means over the questions; retrieval: Rprec and recall@5 of the page ranking.


def rouge_sentences(text: str) -> list:
    return [" ".join(piece.split()) for piece in text.split(".") if len(piece) > 0]


def lcs_words(x: list, y: list) -> set:
    table = {}
    for i in range(len(x) + 1):
        for j in range(len(y) + 1):
            if i == 0 or j == 0:
                table[i, j] = 0
            elif x[i - 1] == y[j - 1]:
                table[i, j] = table[i - 1, j - 1] + 1
            else:
                table[i, j] = max(table[i - 1, j], table[i, j - 1])
    words = set()
    i, j = len(x), len(y)
    while i > 0 and j > 0:
        if x[i - 1] == y[j - 1]:
            words.add(x[i - 1])
            i, j = i - 1, j - 1
        elif table[i - 1, j] > table[i, j - 1]:
            i -= 1
        else:
            j -= 1
    return words


def rouge_l(prediction: str, reference: str) -> float:
    hyp, ref = rouge_sentences(prediction), rouge_sentences(reference)
    if not hyp or not ref:
        return 0.0
    m = len({w for s in ref for w in s.split(" ")})
    n = len({w for s in hyp for w in s.split(" ")})
    union: set = set()
    for r in ref:
        for h in hyp:
            union |= lcs_words(r.split(" "), h.split(" "))
    r_lcs, p_lcs = len(union) / m, len(union) / n
    return 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8))


def _squad_f1(prediction: str, gold: str) -> float:
    from collections import Counter
    p, g = normalize_squad(prediction).split(), normalize_squad(gold).split()
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0
    precision, recall = same / len(p), same / len(g)
    return (2 * precision * recall) / (precision + recall)


def downstream_question(guess: dict, gold: dict) -> dict:
    """One question's accuracy, em, f1, rougel and the page Rprec that gates the KILT ones."""
    answer = str(guess["output"][0]["answer"]).strip()
    golds = _answers(gold)
    row = {"accuracy": 0, "em": 0, "f1": 0, "rougel": 0.0,
           "Rprec": rprecision(guess, gold, ["wikipedia_id"])}
    if answer:
        row["accuracy"] = int(answer in golds)
        row["em"] = max(int(normalize_squad(answer) == normalize_squad(g)) for g in golds)
        row["f1"] = max(_squad_f1(answer, g) for g in golds)
        row["rougel"] = max(rouge_l(answer, g) for g in golds)
    return row
