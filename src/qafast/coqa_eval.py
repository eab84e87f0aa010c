"""CoQA, exactly as Stanford's official ``evaluate-v1.0.py`` scores it.

:func:`coqa` returns the script's result (exact match and F1 per domain, in domain, out of
domain and overall, rounded as it rounds them, with its keys in its order);
:func:`coqa_human` its ``--human`` result; :func:`coqa_per_turn` every turn's unrounded
scores; ``qafast coqa --data-file D --pred-file P`` prints what the script prints. The rules
are in :mod:`qafast.reference.coqa`. Every (gold answer, prediction) pair is scored once by
the compiled SQuAD answer kernels; the leave-one-out maxima and the sums are taken over
arrays, in the script's order.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from ._gc import gc_paused
from ._kept_scores import KeptScores
from .errors import InputError, InputTypeError
from .io._text import load_json
from .reference.coqa import DOMAINS, IN_DOMAIN, OUT_DOMAIN

__all__ = ["CoqaMetrics", "coqa", "coqa_human", "coqa_per_turn"]

_SOURCES = IN_DOMAIN + OUT_DOMAIN
_SOURCE_CODE = {s: i for i, s in enumerate(_SOURCES)}


class _Gold:
    """The gold file's turns in the script's order: keys, gold answers, source codes, and the
    turns whose gold answers are not all strings (``{turn: (what is wrong, the answers)}``;
    ``golds`` has "" in their place), an error only in a turn that is scored (the script
    normalizes only those)."""

    __slots__ = ("bad", "golds", "keys", "source", "src")

    def __init__(self, keys, golds, source, src, bad=None):
        self.keys, self.golds, self.source, self.src = keys, golds, source, src
        self.bad = bad or {}


def _read_gold(dataset) -> _Gold:
    dataset, src = load_json(dataset, "data file")
    try:
        stories = dataset["data"]
    except (KeyError, TypeError, IndexError):
        raise InputError(f"{src}: the data file must be an object with a \"data\" list of "
                         "stories") from None
    if not isinstance(stories, list):
        raise InputError(f"{src}: \"data\" must be a list of stories")
    all_turns: list = []   # ((story id, turn id), gold answers), in the file's order
    story_of: list = []
    source_of: dict = {}
    checked = False
    for n, story in enumerate(stories):
        try:
            sid = story["id"]
            source = story["source"]
            questions = story["questions"]
            lists = [story["answers"], *story["additional_answers"].values()]
        except (KeyError, TypeError, AttributeError):
            raise InputError(f"{src}: story {n} needs an id, a source, questions, answers and "
                             "an additional_answers object") from None
        try:
            source_of[sid] = source
        except TypeError:
            raise InputError(f"{src}: story {n}: an id must be a string, got "
                             f"{type(sid).__name__}") from None
        if not questions and isinstance(questions, (list, dict, str)):
            continue   # no turn: the script never reads the story's answer lists
        if type(questions) is not list:
            raise InputError(f"{src}: story {sid!r}: questions must be a list")
        if not all(type(a) is list for a in lists):
            raise InputError(f"{src}: story {sid!r}: answers and each additional answer list "
                             "must be lists")
        turns = _story_turns(sid, questions, lists)
        if turns is None:   # may hold answers that are not strings
            turns = _story_turns_checked(sid, questions, lists, src)
            checked = True
        all_turns.extend(turns)
        story_of.extend([sid] * len(turns))
    keys = [key for key, _ in all_turns]
    golds = [texts for _, texts in all_turns]
    if len(dict.fromkeys(keys)) != len(keys):
        # a turn seen again keeps its first place and takes the later answers
        where: dict = {}
        for t, key in enumerate(keys):
            where.setdefault(key, []).append(t)
        keep = [ts[0] for ts in where.values()]
        golds = [golds[ts[-1]] for ts in where.values()]
        keys = list(where)
        story_of = [story_of[t] for t in keep]
    # the source that counts is the story id's last one, and only for an id with turns
    codes = {}
    for sid in dict.fromkeys(story_of):
        source = source_of[sid]
        code = _SOURCE_CODE.get(source) if isinstance(source, str) else None
        if code is None:
            raise InputError(f"{src}: story {sid!r}: unknown source {source!r} (the script "
                             f"knows {', '.join(_SOURCES)})", field="source")
        codes[sid] = code
    source_codes = np.array([codes[s] for s in story_of], dtype=np.int64)
    bad = {}
    if checked and any(type(t) is not str for g in golds for t in g):
        for t, g in enumerate(golds):
            if any(type(x) is not str for x in g):
                what = next(type(x).__name__ for x in g if type(x) is not str)
                bad[t] = (f"an input_text must be a string, got {what}", g)
                golds[t] = tuple(x if type(x) is str else "" for x in g)
    return _Gold(keys, golds, source_codes, src, bad)


def _story_turns(sid, questions: list, lists: list):
    """A story's [((story id, turn id), gold answers)] for the usual shapes, else None."""
    nq = len(questions)
    try:
        keys = [(sid, qa["turn_id"]) for qa in questions]
        cols = [[a["input_text"] for a in answers[:nq]] for answers in lists]
    except (KeyError, TypeError, IndexError):
        return None
    for col in cols:
        if len(col) != nq or (nq and set(map(type, col)) != {str}):
            return None
    try:
        hash(tuple(keys))
    except TypeError:
        return None
    return list(zip(keys, zip(*cols))) if nq else []


def _story_turns_checked(sid, questions: list, lists: list, src: str) -> list:
    """_story_turns for any shape: the answers (str subclasses as plain str; other types kept
    for _read_gold to mark), or an error naming the turn."""
    out = []
    for i, qa in enumerate(questions):
        try:
            key = (sid, qa["turn_id"])
            hash(key)
        except (KeyError, TypeError, IndexError):
            raise InputError(f"{src}: story {sid!r}: question {i} has no usable "
                             "turn_id") from None
        texts = []
        for m, answers in enumerate(lists):
            name = "answers" if m == 0 else f"additional answer list {m}"
            try:
                text = answers[i]["input_text"]
            except IndexError:
                raise InputError(f"{src}: story {sid!r}, turn {key[1]!r}: {name} has no "
                                 f"entry {i}", query=key) from None
            except (KeyError, TypeError):
                raise InputError(f"{src}: story {sid!r}, turn {key[1]!r}: entry {i} of "
                                 f"{name} has no input_text", query=key) from None
            if type(text) is not str and isinstance(text, str):
                text = str.__str__(text)
            texts.append(text)
        out.append((key, tuple(texts)))
    return out


def _check_scored(gold: _Gold, preds: list | None) -> None:
    """An InputError for the first turn the script would normalize a non-string answer of:
    a predicted one (``preds``), or any turn (``preds`` None: human performance)."""
    for t, (what, _) in gold.bad.items():
        if preds is None or preds[t] is not None:
            key = gold.keys[t]
            raise InputError(f"{gold.src}: story {key[0]!r}, turn {key[1]!r}: {what}",
                             query=key)


def _read_predictions(predictions, gold: _Gold) -> list:
    """Each turn's predicted answer (a plain str), None where there is none."""
    predictions, src = load_json(predictions, "predictions")
    if not isinstance(predictions, list):
        raise InputTypeError(f"{src}: the predictions must be a list of {{\"id\", \"turn_id\", "
                             f"\"answer\"}} objects, got {type(predictions).__name__}")
    try:
        pred = {(p["id"], p["turn_id"]): p["answer"] for p in predictions}
    except (KeyError, TypeError, IndexError):
        for n, p in enumerate(predictions):
            try:
                hash((p["id"], p["turn_id"]))
                p["answer"]
            except (KeyError, TypeError, IndexError):
                raise InputError(f"{src}: prediction {n} needs an id, a turn_id and an "
                                 "answer") from None
        raise  # pragma: no cover - the loop above names the entry
    get = pred.get
    out = [get(k) for k in gold.keys]
    if set(map(type, out)) - {str, type(None)}:
        for i, (k, a) in enumerate(zip(gold.keys, out)):
            if a is not None and type(a) is not str:
                if not isinstance(a, str):
                    raise InputError(f"{src}: story {k[0]!r}, turn {k[1]!r}: the answer must "
                                     f"be a string, got {type(a).__name__}", query=k)
                out[i] = str.__str__(a)
    if None in pred.values():
        for k in gold.keys:
            if k in pred and pred[k] is None:
                raise InputError(f"{src}: story {k[0]!r}, turn {k[1]!r}: the answer must be "
                                 "a string, got None", query=k)
    _check_scored(gold, out)
    return out


def _score_pairs(pair_pred: np.ndarray, pair_ref: np.ndarray, enc):
    """Exact match and F1 of each (prediction, single gold) pair of interned strings, SQuAD
    v2.0's rules (which drop a gold answer normalizing to nothing for "": the same scores
    for a single gold)."""
    from . import answers

    n = len(pair_pred)
    em, f1 = np.empty(n), np.empty(n)
    if n:
        answers._kernels.answer_scores(
            np.ascontiguousarray(pair_pred, dtype=np.int32), answers._EMPTY_I64,
            np.arange(n + 1, dtype=np.int64), np.ascontiguousarray(pair_ref, dtype=np.int32),
            enc.tok_off, enc.toks, enc.key_off, enc.keys, 1, True, True, em, f1, np.zeros(2))
    return em, f1


def _turn_scores(gold: _Gold, preds: list | None):
    """Per-turn (em, f1) arrays; with ``preds`` None the human scores. Missing turns 0."""
    from . import answers

    n = len(gold.keys)
    em, f1 = np.zeros(n), np.zeros(n)
    if not n:
        return em, f1
    # every distinct string interned and tokenized once; ref_sid[off[t]:off[t + 1]] are turn
    # t's gold answers
    firsts = [p if p is not None else "" for p in preds] if preds is not None else \
        [""] * n
    pred_sid, off, ref_sid, enc = answers._prepare_encoded(firsts, gold.golds, "v2", "squad",
                                                          "token", bag=True)
    sizes = np.diff(off)
    for k in np.unique(sizes).tolist():
        rows = np.flatnonzero(sizes == k)
        if preds is not None:
            rows = rows[[preds[r] is not None for r in rows.tolist()]]
            if not len(rows):
                continue
            at = off[rows][:, None] + np.arange(k)            # (turns, k) gold positions
            e, f = _score_pairs(np.repeat(pred_sid[rows], k), ref_sid[at].ravel(), enc)
            e, f = e.reshape(-1, k), f.reshape(-1, k)
            e_t, f_t = np.zeros(len(rows)), np.zeros(len(rows))
            if k == 1:
                e_t += e[:, 0]
                f_t += f[:, 0]
            else:
                for i in range(k):
                    others = [j for j in range(k) if j != i]
                    e_t += e[:, others].max(axis=1)
                    f_t += f[:, others].max(axis=1)
                e_t, f_t = e_t / k, f_t / k
        else:
            # gold answer i as the prediction against each other answer j, as rows
            at = off[rows][:, None] + np.arange(k)
            ii, jj = zip(*[(i, j) for i in range(k) for j in range(k) if j != i])
            e, f = _score_pairs(ref_sid[at[:, list(ii)]].ravel(),
                                ref_sid[at[:, list(jj)]].ravel(), enc)
            e = e.reshape(-1, k, k - 1).max(axis=2)
            f = f.reshape(-1, k, k - 1).max(axis=2)
            e_t, f_t = np.zeros(len(rows)), np.zeros(len(rows))
            for i in range(k):
                e_t += e[:, i]
                f_t += f[:, i]
            e_t, f_t = e_t / k, f_t / k
        em[rows], f1[rows] = e_t, f_t
    return em, f1


def _seq_sum(values: np.ndarray) -> float:
    """Left-to-right sum, as the script's ``+=`` loop adds."""
    return float(np.add.accumulate(values)[-1]) if len(values) else 0.0


def _entry(e: float, f: float, n: int) -> dict:
    return {"em": round(e / max(1, n) * 100, 1), "f1": round(f / max(1, n) * 100, 1),
            "turns": n}


def _domain_scores(gold: _Gold, em: np.ndarray, f1: np.ndarray) -> dict:
    out: dict = {}
    # in domain (True) and out of domain: the sums of the sources' sums, from 0.0
    part_e = {True: 0.0, False: 0.0}
    part_f = {True: 0.0, False: 0.0}
    part_n = {True: 0, False: 0}
    for code, s in enumerate(_SOURCES):
        mask = gold.source == code
        e, f, n = _seq_sum(em[mask]), _seq_sum(f1[mask]), int(mask.sum())
        out[DOMAINS[s]] = _entry(e, f, n)
        inside = s in IN_DOMAIN
        part_e[inside] += e
        part_f[inside] += f
        part_n[inside] += n
    out["in_domain"] = _entry(part_e[True], part_f[True], part_n[True])
    out["out_domain"] = _entry(part_e[False], part_f[False], part_n[False])
    out["overall"] = _entry(part_e[True] + part_e[False], part_f[True] + part_f[False],
                            part_n[True] + part_n[False])
    return out


def _single_answer_turn(gold: _Gold):
    for t, (key, g) in enumerate(zip(gold.keys, gold.golds)):
        if len(g) < 2:
            return key, gold.bad[t][1] if t in gold.bad else g
    return None


def coqa(data, predictions) -> dict:
    """Score predictions as Stanford's official CoQA evaluation script (``evaluate-v1.0.py``)
    does.

    Parameters
    ----------
    data : str, os.PathLike or dict
        The CoQA data file (a path or the loaded object): ``{"data": [{"id", "source",
        "questions": [{"turn_id", ...}], "answers": [{"input_text", ...}],
        "additional_answers": {name: [...]}}, ...]}``.
    predictions : str, os.PathLike or list
        ``[{"id": story id, "turn_id": ..., "answer": text}, ...]`` (or a JSON file of it). A
        turn without one scores 0 and counts.

    Returns
    -------
    dict
        The script's result: for ``children_stories``, ``literature``, ``mid-high_school``,
        ``news``, ``wikipedia``, ``science``, ``reddit``, ``in_domain``, ``out_domain`` and
        ``overall``, ``{"em", "f1", "turns"}`` (percentages rounded to 1 decimal), bit for
        bit and in its key order.

    Examples
    --------
    >>> data = {"data": [{"id": "s1", "source": "cnn", "questions": [{"turn_id": 1}],
    ...     "answers": [{"input_text": "the white cat", "turn_id": 1}],
    ...     "additional_answers": {"0": [{"input_text": "white", "turn_id": 1}],
    ...                            "1": [{"input_text": "a cat", "turn_id": 1}]}}]}
    >>> coqa(data, [{"id": "s1", "turn_id": 1, "answer": "White cat"}])["overall"]
    {'em': 66.7, 'f1': 88.9, 'turns': 1}
    """
    with gc_paused():
        gold = _read_gold(data)
        preds = _read_predictions(predictions, gold)
        em, f1 = _turn_scores(gold, preds)
        return _domain_scores(gold, em, f1)


def coqa_human(data) -> dict:
    """The script's ``--human`` result: each gold answer scored against the turn's others.

    Every turn needs at least two gold answers (the script stops otherwise); a turn with one
    raises :class:`qafast.errors.InputError`.

    Examples
    --------
    >>> data = {"data": [{"id": "s1", "source": "reddit", "questions": [{"turn_id": 1}],
    ...     "answers": [{"input_text": "yes"}],
    ...     "additional_answers": {"0": [{"input_text": "Yes."}], "1": [{"input_text": "no"}]}}]}
    >>> coqa_human(data)["out_domain"]
    {'em': 66.7, 'f1': 66.7, 'turns': 1}
    """
    with gc_paused():
        gold = _read_gold(data)
        bad = _single_answer_turn(gold)
        if bad is not None:
            raise InputError(f"{gold.src}: story {bad[0][0]!r}, turn {bad[0][1]!r} has one gold "
                             "answer; human performance needs several", query=bad[0])
        _check_scored(gold, None)
        em, f1 = _turn_scores(gold, None)
        return _domain_scores(gold, em, f1)


def coqa_per_turn(data, predictions) -> dict:
    """Every turn's scores, in the order the script sums them (a duplicated turn once, where
    it first appears, with its last answers).

    Returns
    -------
    dict
        ``"id"`` and ``"turn_id"`` (lists), ``"source"`` (list), ``"exact_match"`` and
        ``"f1"`` (float64 arrays in [0, 1], before the script's averaging and rounding) and
        ``"predicted"`` (bool array; a turn without a prediction scores 0).

    Examples
    --------
    >>> data = {"data": [{"id": "s", "source": "race", "questions": [{"turn_id": 1}],
    ...     "answers": [{"input_text": "unknown"}], "additional_answers": {}}]}
    >>> t = coqa_per_turn(data, [{"id": "s", "turn_id": 1, "answer": "Unknown!"}])
    >>> t["exact_match"][0], t["f1"][0], t["source"]
    (np.float64(1.0), np.float64(1.0), ['race'])
    """
    with gc_paused():
        gold = _read_gold(data)
        preds = _read_predictions(predictions, gold)
        em, f1 = _turn_scores(gold, preds)
    return {"id": [k[0] for k in gold.keys], "turn_id": [k[1] for k in gold.keys],
            "source": [_SOURCES[c] for c in gold.source.tolist()], "exact_match": em,
            "f1": f1, "predicted": np.array([p is not None for p in preds], dtype=bool)}


class CoqaMetrics(KeptScores):
    """CoQA's exact match and F1 accumulated over batches of turns.

    ``update(predictions, answers, sources)`` scores a batch; ``compute()`` gives what
    :func:`coqa` gives for all the turns so far, in the order they came: the script's result,
    bit for bit, for a data file holding them in that order.

    The script sums each source's turns left to right in plain floating point, so only the
    turns' own scores give its last bit whatever the batches: this keeps them (17 bytes a
    turn), unlike :class:`qafast.AnswerMetrics`, which keeps exactly rounded sums.

    Parameters of :meth:`update`
    ----------------------------
    predictions : sequence
        Per turn the predicted answer, or None for no prediction (the turn scores 0).
    answers : sequence
        Per turn its gold answers (``answers`` then the additional ones), a list of strings.
    sources : sequence
        Per turn its story's source (``"mctest"``, ..., ``"reddit"``), or one source for all.

    Examples
    --------
    >>> import qafast
    >>> m = qafast.CoqaMetrics()
    >>> m.update(["white cat", None], [["the white cat", "white", "a cat"], ["no", "No"]], "cnn")
    >>> m.update(["Yes!"], [["yes", "yes", "no", "yes"]], ["reddit"])
    >>> m.compute()["overall"]
    {'em': 55.6, 'f1': 63.0, 'turns': 3}
    """

    _UNIT = "turns"
    _LABEL = "source"
    _LABELS = _SOURCES

    def update(self, predictions, answers, sources) -> None:
        """Score a batch of turns (the state is unchanged if it raises)."""
        if isinstance(predictions, (str, bytes)) or isinstance(answers, (str, bytes)):
            raise InputTypeError("predictions and answers are sequences, one item a turn")
        predictions, answers = list(predictions), list(answers)
        n = len(predictions)
        if len(answers) != n:
            raise InputError(f"{n} predictions for {len(answers)} turns")
        sources = [sources] * n if isinstance(sources, str) else list(sources)
        golds = self._golds(answers, sources, n)
        preds = []
        for i, p in enumerate(predictions):
            if p is not None and not isinstance(p, str):
                raise InputError(f"turn {i} of the batch: a prediction is a string or None, "
                                 f"got {type(p).__name__}")
            preds.append(None if p is None else str.__str__(p))
        self._score(golds, sources, preds)

    def update_human(self, answers, sources) -> None:
        """Score a batch of turns as :func:`coqa_human` does (the script's ``--human``): each
        gold answer against the turn's others, so every turn needs two answers or more.
        A turn's score needs only its own answers, so this streams like :meth:`update`; feed
        one metric either ``update`` or ``update_human`` calls, not both."""
        if isinstance(answers, (str, bytes)):
            raise InputTypeError("answers is a sequence, one item a turn")
        answers = list(answers)
        golds = self._golds(answers, sources, len(answers))
        for i, g in enumerate(golds):
            if len(g) < 2:
                raise InputError(f"turn {i} of the batch has one gold answer; human "
                                 "performance needs several")
        self._score(golds, sources, None)

    @staticmethod
    def _golds(answers: list, sources, n: int) -> list:
        sources = [sources] * n if isinstance(sources, str) else list(sources)
        if len(sources) != n:
            raise InputError(f"{len(sources)} sources for {n} turns")
        golds = []
        for i, (a, src) in enumerate(zip(answers, sources)):
            if src not in _SOURCE_CODE:
                raise InputError(f"turn {i} of the batch: unknown source {src!r} (CoQA's are "
                                 f"{', '.join(_SOURCES)})")
            if isinstance(a, (str, bytes)) or not a:
                raise InputError(f"turn {i} of the batch: the gold answers must be a non-empty "
                                 "list of strings")
            a = tuple(a)
            if not all(isinstance(t, str) for t in a):
                raise InputError(f"turn {i} of the batch: the gold answers must be strings")
            golds.append(tuple(str.__str__(t) for t in a))
        return golds

    def _score(self, golds: list, sources, preds: list | None) -> None:
        n = len(golds)
        if not n:
            return
        sources = [sources] * n if isinstance(sources, str) else list(sources)
        codes = np.array([_SOURCE_CODE[s] for s in sources], dtype=np.int8)
        gold = _Gold(list(range(n)), golds, codes, "<batch>")
        with gc_paused():
            em, f1 = _turn_scores(gold, preds)
        self._append(em, f1, codes)

    def compute(self) -> dict:
        """What :func:`coqa` returns for every turn so far."""
        em, f1, codes = self._arrays()
        return _domain_scores(_Gold([], [], codes, ""), em, f1)


# --------------------------------------------------------------------------------------------
# The `qafast coqa` command
# --------------------------------------------------------------------------------------------

def register_cli(subparsers) -> dict:
    """Add ``qafast coqa`` to the ``qafast`` command; returns ``{"coqa": handler}``."""
    p = subparsers.add_parser(
        "coqa", help="score CoQA predictions, printing what the official evaluate-v1.0.py "
                     "prints",
        description="Score predictions against a CoQA data file as the official "
                    "evaluate-v1.0.py does, printing the same JSON.")
    p.add_argument("--data-file", dest="data_file", required=True, help="the data JSON file")
    p.add_argument("--pred-file", dest="pred_file", help="the model predictions")
    p.add_argument("--out-file", "-o", metavar="eval.json",
                   help="also write the (last) printed result here")
    p.add_argument("--verbose", "-v", action="store_true", help="accepted, as by the script")
    p.add_argument("--human", action="store_true", help="print human performance first")
    return {"coqa": _run_cli}


def _run_cli(args) -> int:
    printed = []
    with gc_paused():
        gold = _read_gold(args.data_file)
        if args.human:
            bad = _single_answer_turn(gold)
            if bad is not None:
                sys.stderr.write(f"Gold answers should be multiple: {bad[0]}={list(bad[1])}\n")
                return 1
            _check_scored(gold, None)
            printed.append(_domain_scores(gold, *_turn_scores(gold, None)))
            sys.stdout.write(json.dumps(printed[-1], indent=2) + "\n")
        if args.pred_file:
            preds = _read_predictions(args.pred_file, gold)
            em, f1 = _turn_scores(gold, preds)
            sys.stderr.write("".join(f"Missing prediction for {k[0]} and turn_id: {k[1]}\n"
                                     for k, p in zip(gold.keys, preds) if p is None))
            printed.append(_domain_scores(gold, em, f1))
            sys.stdout.write(json.dumps(printed[-1], indent=2) + "\n")
    if args.out_file is not None and printed:
        with open(args.out_file, "w", encoding="utf8") as f:
            json.dump(printed[-1], f, indent=2)
    return 0
