"""The specification: DROP's exact match and F1, as AllenAI's official ``drop_eval.py`` scores them.

Plain Python (the standard library only), written to be read; :mod:`qafast.drop` returns the
same numbers bit for bit and ``tests/test_drop.py`` checks it against this module. The rules,
in the script's order:

Normalizing a span
    The text is cut at every ``" "`` and ``"-"`` (so ``"-5"`` is the tokens ``""`` and ``"5"``:
    no negative numbers). Each piece is lowercased; unless Python's ``float()`` parses it, its
    ASCII punctuation (``string.punctuation``) is removed; then, if ``float()`` parses what is
    left, it becomes ``str(float(piece))`` (``"5"`` -> ``"5.0"``, ``"1e3"`` -> ``"1000.0"``,
    ``"nan"`` -> ``"nan"``, ``"٣"`` -> ``"3.0"``, ``"1_0"`` -> ``"10.0"``); the words a/an/the
    become spaces; whitespace is collapsed. Empty pieces are dropped and the rest joined by
    single spaces. Number words ("five") stay words.

An answer's bags
    A prediction or gold answer is one string or a list of spans. Each span gives its normalized
    string and its *bag*: the set of its normalized string's whitespace tokens.

Exact match
    1.0 when the normalized spans of both sides are equal as sets and equally many, else 0.0
    (so ``["a b", "a b", "c"]`` matches ``["a b", "c", "c"]``).

F1
    Gold bag g and predicted bag p score the F1 of their token sets (precision 1.0 for an empty
    p, recall 1.0 for an empty g, 0.0 when both are 0) if g holds no number token or shares one
    with p, else 0.0 (a token is a number when ``float()`` parses it). Gold and predicted bags
    are then paired one to one to maximize the total, as SciPy's ``linear_sum_assignment``
    pairs them (:func:`assign`, the same algorithm and arithmetic, so it picks the same pairs
    among equal totals). Each gold bag keeps its pair's score (0.0 unpaired); the list, padded
    with zeros to the larger side's length, is averaged as ``numpy.mean`` averages
    (:func:`numpy_mean`) and rounded to 2 decimals as NumPy rounds a float64 (:func:`round2`).

A question
    Its gold answers are ``answer`` then, if non-empty, ``validated_answers``. Each becomes
    strings by the first rule that applies: a truthy ``"number"`` gives ``(str(number),)`` of
    type ``"number"``; truthy ``"spans"`` give ``tuple(spans)``, of type ``"span"`` for one and
    ``"spans"`` for more; a ``"date"`` gives ``("{day} {month} {year}",)`` of type ``"date"``.
    A gold answer whose first string is blank is skipped; the question's EM and F1 are the
    maxima over the others (starting from 0.0), and its type is that of the last gold answer
    whose scores equal both running maxima (None if none is kept). A question without a
    prediction scores 0.0, its type that of ``answer`` (``"number"`` if ``answer`` is empty),
    and the script prints ``Missing prediction for question: <id>``.

The totals
    Questions are taken in the gold file's order (passages, then their ``qa_pairs``), a
    duplicated id once per occurrence. ``global_em`` and ``global_f1`` are the ``numpy.mean`` of
    the per-question scores; per type, the count, its share of all questions, and the means.
"""

from __future__ import annotations

import math
import re
import string

__all__ = [
    "PUNCTUATION", "align_bags", "answer_bags", "answer_strings", "assign", "bag_f1", "evaluate",
    "exact_match", "get_metrics", "is_number", "normalize", "normalize_piece", "numbers_match",
    "numpy_mean",
    "report_lines", "round2", "score_question",
]

#: What the script removes from a non-number piece: the 32 ASCII punctuation characters.
PUNCTUATION = frozenset(string.punctuation)

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_CUT = re.compile(" |-")


def is_number(text: str) -> bool:
    """Whether Python's ``float()`` parses ``text`` (whitespace around it, underscores between
    digits, "nan", "inf", non-ASCII decimal digits included)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def normalize_piece(token: str) -> str:
    """One piece of a span (cut at spaces and hyphens) as the script normalizes it."""
    token = token.lower()
    if not is_number(token):
        token = "".join(ch for ch in token if ch not in PUNCTUATION)
    if is_number(token):
        token = str(float(token))
    token = _ARTICLES.sub(" ", token)
    return " ".join(token.split())


def normalize(text: str) -> str:
    """One span as the script normalizes it (see the module's docstring)."""
    pieces = [normalize_piece(token) for token in _CUT.split(text)]
    return " ".join(p for p in pieces if p.strip()).strip()


def answer_bags(answer) -> tuple[list, list]:
    """``(normalized spans, bags)`` of a string or a list/tuple of span strings."""
    spans = list(answer) if isinstance(answer, (list, tuple)) else [answer]
    normalized = [normalize(s) for s in spans]
    return normalized, [set(n.split()) for n in normalized]


def exact_match(predicted_spans: list, gold_spans: list) -> float:
    """1.0 when the normalized spans are equal as sets and equally many."""
    same = set(predicted_spans) == set(gold_spans) and len(predicted_spans) == len(gold_spans)
    return 1.0 if same else 0.0


def bag_f1(predicted: set, gold: set) -> float:
    """F1 of two token sets; an empty side has precision (or recall) 1.0."""
    shared = len(gold & predicted)
    precision = 1.0 if not predicted else shared / float(len(predicted))
    recall = 1.0 if not gold else shared / float(len(gold))
    if precision == 0.0 and recall == 0.0:
        return 0.0
    return (2 * precision * recall) / (precision + recall)


def numbers_match(gold: set, predicted: set) -> bool:
    """True when the gold bag has no number token or shares one with the predicted bag."""
    gold_numbers = {w for w in gold if is_number(w)}
    if not gold_numbers:
        return True
    return bool(gold_numbers & {w for w in predicted if is_number(w)})


def assign(cost: list) -> list:
    """The pairs ``(row, column)`` minimizing the total of ``cost`` (a list of equal-length
    rows of finite floats), as SciPy's ``linear_sum_assignment`` finds them: every row of a
    wide (or square) matrix is paired, every column of a tall one.

    This is the shortest augmenting path algorithm of Crouse (2016), rows added one at a time
    with dual prices ``u`` (rows) and ``v`` (columns), written with SciPy's choices where paths
    tie: columns are scanned from the last to the first, a column is taken over an earlier one
    of equal path cost only when it is unassigned, and a tall matrix is solved transposed. The
    floating-point operations are the same, in the same order, so that near-equal totals are
    resolved alike. Pairs are returned by increasing row.
    """
    rows = len(cost)
    cols = len(cost[0]) if rows else 0
    if rows == 0 or cols == 0:
        return []
    tall = cols < rows
    if tall:
        cost = [[cost[i][j] for i in range(rows)] for j in range(cols)]
        rows, cols = cols, rows
    u = [0.0] * rows
    v = [0.0] * cols
    col_of = [-1] * rows
    row_of = [-1] * cols
    path = [-1] * cols
    for start in range(rows):
        dist = [math.inf] * cols
        seen_rows = [False] * rows
        seen_cols = [False] * cols
        todo = list(range(cols - 1, -1, -1))
        reach = 0.0
        i = start
        sink = -1
        while sink == -1:
            seen_rows[i] = True
            best, at = math.inf, -1
            for k, j in enumerate(todo):
                r = reach + cost[i][j] - u[i] - v[j]
                if r < dist[j]:
                    path[j] = i
                    dist[j] = r
                if dist[j] < best or (dist[j] == best and row_of[j] == -1):
                    best, at = dist[j], k
            reach = best
            j = todo[at]
            if row_of[j] == -1:
                sink = j
            else:
                i = row_of[j]
            seen_cols[j] = True
            todo[at] = todo[-1]
            todo.pop()
        u[start] += reach
        for r in range(rows):
            if seen_rows[r] and r != start:
                u[r] += reach - dist[col_of[r]]
        for c in range(cols):
            if seen_cols[c]:
                v[c] -= reach - dist[c]
        j = sink
        while True:
            i = path[j]
            row_of[j] = i
            col_of[i], j = j, col_of[i]
            if i == start:
                break
    if tall:
        return sorted((col_of[i], i) for i in range(rows))
    return [(i, col_of[i]) for i in range(rows)]


def _pairwise_sum(values: list, lo: int, n: int) -> float:
    if n < 8:
        total = 0.0
        for k in range(lo, lo + n):
            total += values[k]
        return total
    if n <= 128:
        acc = list(values[lo:lo + 8])
        k = 8
        whole = n - n % 8
        while k < whole:
            for lane in range(8):
                acc[lane] += values[lo + k + lane]
            k += 8
        total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
        for k in range(lo + whole, lo + n):
            total += values[k]
        return total
    half = n // 2
    half -= half % 8
    return _pairwise_sum(values, lo, half) + _pairwise_sum(values, lo + half, n - half)


def numpy_mean(values: list) -> float:
    """``numpy.mean`` of a list of floats (NaN for none): NumPy's pairwise sum (eight lanes
    over blocks of up to 128, halves above) divided by the count."""
    if not values:
        return math.nan
    return _pairwise_sum(values, 0, len(values)) / len(values)


def round2(x: float) -> float:
    """``round(numpy.float64(x), 2)``: ``x * 100`` rounded half to even, divided by 100 (not
    Python's correctly rounded ``round(x, 2)``). NaN stays NaN."""
    if math.isnan(x):
        return x
    return float(round(x * 100.0)) / 100.0


def align_bags(predicted: list, gold: list) -> list:
    """Each gold bag's score under the best one-to-one pairing, padded with zeros to the
    length of the longer side."""
    scores = [[bag_f1(p, g) if numbers_match(g, p) else 0.0 for p in predicted] for g in gold]
    best = [0.0] * max(len(gold), len(predicted))
    if predicted:
        for row, col in assign([[-s for s in row] for row in scores]):
            best[row] = max(best[row], scores[row][col])
    return best


def get_metrics(predicted, gold) -> tuple[float, float]:
    """``(exact match, F1)`` of one prediction against one gold answer, each a string or a
    list/tuple of spans."""
    p_spans, p_bags = answer_bags(predicted)
    g_spans, g_bags = answer_bags(gold)
    return exact_match(p_spans, g_spans), round2(numpy_mean(align_bags(p_bags, g_bags)))


def answer_strings(answer: dict) -> tuple[tuple, str]:
    """A gold answer object as ``(its strings, its type)``; ``ValueError`` when it has no
    number, spans or date (``KeyError`` for a date without day, month or year)."""
    if answer.get("number"):
        return (str(answer["number"]),), "number"
    if answer.get("spans"):
        spans = tuple(answer["spans"])
        return spans, "span" if len(spans) == 1 else "spans"
    if "date" in answer:
        date = answer["date"]
        return ("{} {} {}".format(date["day"], date["month"], date["year"]),), "date"
    raise ValueError("the answer has no number, spans or date")


def score_question(qa_pair: dict, predictions: dict):
    """``(exact match, F1, type, predicted)`` of one entry of a passage's ``qa_pairs``."""
    qid = qa_pair["query_id"]
    kind: str | None
    if qid not in predictions:
        kind = answer_strings(qa_pair["answer"])[1] if qa_pair["answer"] else "number"
        return 0.0, 0.0, kind, False
    predicted = predictions[qid]
    golds = [qa_pair["answer"]]
    if qa_pair.get("validated_answers"):
        golds += qa_pair["validated_answers"]
    best_em, best_f1, kind = 0.0, 0.0, None
    for gold in golds:
        strings, gold_kind = answer_strings(gold)
        em, f1 = get_metrics(predicted, strings)
        if strings[0].strip() != "":
            best_em, best_f1 = max(best_em, em), max(best_f1, f1)
            if best_em == em and best_f1 == f1:
                kind = gold_kind
    return best_em, best_f1, kind, True


def _type_order(kind) -> str:
    # the script sorts the type names; a question whose gold answers are all blank has type
    # None, which Python cannot sort among strings: qafast sorts it as the text "None"
    return str(kind)


def evaluate(gold: dict, predictions: dict) -> dict:
    """The whole file: ``{"questions": [(id, em, f1, type, predicted), ...], "global_em",
    "global_f1", "types": {type: (count, share %, em mean, f1 mean)}}`` in the script's order
    (types sorted by name)."""
    questions = []
    for passage in gold.values():
        for qa_pair in passage["qa_pairs"]:
            em, f1, kind, predicted = score_question(qa_pair, predictions)
            questions.append((qa_pair["query_id"], em, f1, kind, predicted))
    ems = [q[1] for q in questions]
    f1s = [q[2] for q in questions]
    types = {}
    for kind in sorted({q[3] for q in questions}, key=_type_order):
        em_k = [q[1] for q in questions if q[3] == kind]
        f1_k = [q[2] for q in questions if q[3] == kind]
        types[kind] = (len(em_k), 100.0 * len(em_k) / len(questions), numpy_mean(em_k),
                       numpy_mean(f1_k))
    return {"questions": questions, "global_em": numpy_mean(ems),
            "global_f1": numpy_mean(f1s), "types": types}


def report_lines(result: dict) -> list:
    """The lines the script prints for :func:`evaluate`'s result, missing predictions first."""
    lines = [f"Missing prediction for question: {q[0]}" for q in result["questions"] if not q[4]]
    em, f1 = result["global_em"] * 100, result["global_f1"] * 100
    lines += [f"Exact-match accuracy {em:.2f}", f"F1 score {f1:.2f}", f"{em:.2f}   &   {f1:.2f}",
              "----"]
    for kind, (count, share, em_k, f1_k) in result["types"].items():
        lines += [f"{kind}: {count} ({share:.2f}%)",
                  f"  Exact-match accuracy {100.0 * em_k:.3f}",
                  f"  F1 score {100.0 * f1_k:.3f}"]
    return lines
