"""DPR's top-k retrieval accuracy, exactly as Pyserini's ``evaluate_dpr_retrieval.py`` (after
DPR's ``qa_validation.py``) computes it.

:func:`dpr_retrieval` returns the script's accuracies, :func:`dpr_first_hits` each question's
first rank with a hit, :class:`RetrievalAccuracy` accumulates batches of questions as a
training loop has them, and ``qafast dpr-retrieval --retrieval FILE --topk 1 5 20 100``
prints what the script prints. The rules are in :mod:`qafast.reference.dpr`. A compiled
kernel reads the contexts (with the GIL, at C speed, keeping only where each passage lies in
its text); the rest runs without the GIL: passages and answers are cut into words and
interned, each new word is put in NFD, tokenized and lowercased once (in Python only for the
rare word holding a character whose NFD, combining class or lowercase needs more than a
table, such as a precomposed accent or a capital sigma), and each question's first passage
holding one of its answers is searched. Ranks are examined in blocks (1, 4, 16, ...), so
that, as in the script, a question with an early hit costs only its first passages. The
``regex`` mode matches with Python's ``re`` module, as the script does, in Python.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from . import _kernels
from ._gc import gc_paused
from .errors import FormatError, InputError, InputTypeError

__all__ = ["RetrievalAccuracy", "dpr_first_hits", "dpr_retrieval"]

_TABLES: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
_REGEX_FLAGS = re.IGNORECASE | re.UNICODE | re.MULTILINE
# in the lowercase table: a character whose word is tokenized in Python (the kernels' value)
_COMPLEX = 0xFFFFFFFF


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per code point: SimpleTokenizer's class (0 no token, 1 letter/number/mark, 2 a token
    of its own), the word-splitting class (0 for a class-0 character that NFD leaves alone
    and that no reordering moves, which therefore splits the text in parts that NFD and
    the tokenizer treat independently; 1 otherwise), and the lowercase of each character
    of a token that is its own NFD, has no combining class and lowercases to one character
    whatever surrounds it (``_COMPLEX`` for any other: its words take the Python path)."""
    global _TABLES
    if _TABLES is None:
        codes = np.arange(0x110000, dtype=np.uint32)
        everything = codes.tobytes().decode("utf-32-le", "surrogatepass")
        try:
            import regex
        except ImportError:
            cats = [unicodedata.category(c)[0] for c in everything]
            cls = np.array([1 if c in "LNM" else 0 if c in "ZC" else 2 for c in cats],
                           dtype=np.uint8)
            moved = np.zeros(len(codes), dtype=bool)
            for c in np.flatnonzero(cls == 0).tolist():
                ch = chr(c)
                moved[c] = unicodedata.combining(ch) != 0 or unicodedata.normalize(
                    "NFD", ch) != ch
        else:
            flags = regex.IGNORECASE | regex.UNICODE | regex.MULTILINE

            def marked(pattern: str, mark: str) -> np.ndarray:
                s = regex.compile(pattern, flags=flags).sub(mark, everything)
                got = np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
                return (got == ord(mark)) & (codes != ord(mark))

            alnum = marked(r"[\p{L}\p{N}\p{M}]", "\x01")
            other = marked(r"[^\p{Z}\p{C}]", "\x02")
            # the marks themselves (U+0001, U+0002) are controls: no token
            cls = np.where(alnum, 1, np.where(other, 2, 0)).astype(np.uint8)
            # a superset of what Python's (older or equal) Unicode database decomposes or
            # reorders: those characters stay inside words, which is always exact
            moved = marked(r"[\p{Decomposition_Type=Canonical}\P{Canonical_Combining_Class=0}]",
                           "\x01")
        split = np.where((cls == 0) & ~moved, 0, 1).astype(np.uint8)
        # a token's characters: NFD and str.lower of each one alone, the characters joined
        # by U+0000 (no combining class, not cased: neither reordering nor the final sigma
        # rule looks across it); GREEK CAPITAL SIGMA's lowercase depends on its neighbours
        cand = np.flatnonzero(cls != 0).tolist()
        chars = [chr(c) for c in cand]
        joined = "\x00".join(chars)
        own_nfd = [a == b for a, b in zip(unicodedata.normalize("NFD", joined).split("\x00"),
                                          chars)]
        lower = np.full(0x110000, _COMPLEX, dtype=np.uint32)
        lower[cand] = [ord(low) if len(low) == 1 and same and not unicodedata.combining(ch)
                       else _COMPLEX
                       for low, same, ch in zip(joined.lower().split("\x00"), own_nfd, chars)]
        lower[0x3A3] = _COMPLEX
        _TABLES = (cls, split, lower)
    return _TABLES


_WHOLE: np.ndarray | None = None


def _whole() -> np.ndarray:
    """A class table that makes each whole string one token (every code point class 1)."""
    global _WHOLE
    if _WHOLE is None:
        _WHOLE = np.ones(0x110000, dtype=np.uint8)
    return _WHOLE


def _lowered_tokens(word: str, cls: np.ndarray) -> list[str]:
    """The tokens of ``word`` as the script makes them: NFD, the tokenizer, ``str.lower``
    per token (the specification's tokenizer, with the classes of the engine's table)."""
    from .reference.dpr import tokens

    return tokens(unicodedata.normalize("NFD", word), classify=lambda c: cls[ord(c)])


class _Matcher:
    """Token-mode matching with one vocabulary kept from batch to batch.

    The texts are cut into words at the characters that belong to no token and that NFD
    neither changes nor moves (spaces, controls...): NFD and the tokenizer see each word
    alone, so a text's tokens are its words' tokens in order. The kernels intern the words,
    give each new word its lowercased tokens (in Python only for a word holding a character
    that the lowercase table leaves out, see :func:`_tables`), replace the words by their
    tokens' ids and search the answers, without the GIL."""

    def __init__(self) -> None:
        self.vocab = _kernels.DprVocab()              # words
        self.lowered = _kernels.DprVocab()            # lowercased tokens
        self.tok_of = np.zeros(1, dtype=np.int64)     # word id -> its tokens' span
        self.toks = np.zeros(0, dtype=np.int32)       # lowercased token ids

    def _new_words(self, before: int) -> None:
        cls, _, lower = _tables()
        lens = np.empty(len(self.vocab) - before, dtype=np.int64)
        ids = np.empty(self.vocab.chars_since(before), dtype=np.int32)
        ids = ids[:self.vocab.word_tokens(before, cls, lower, self.lowered, lens, ids)]
        slow = np.flatnonzero(lens < 0).tolist()
        if slow:
            # NFD, the tokenizer and str.lower per token, in Python; the lowercased tokens
            # are interned by the kernel that interns words, each string as one word
            where: list[int] = []
            runs: list[str] = []
            at = np.concatenate([[0], np.cumsum(np.maximum(lens, 0))])
            for w in slow:
                got = _lowered_tokens(self.vocab.token(before + w), cls)
                lens[w] = len(got)
                where.extend([int(at[w])] * len(got))
                runs.extend(got)
            run_end = np.fromiter(map(len, runs), dtype=np.int64, count=len(runs))
            run_off = np.empty(len(runs) + 1, dtype=np.int64)
            run_ids = np.empty(int(run_end.sum()), dtype=np.int32)
            if self.lowered.tokenize(runs, np.zeros(len(runs), dtype=np.int64), run_end,
                                     _whole(), run_off, run_ids) != len(runs):
                raise InputError("the passages' words could not be tokenized")
            # each such word's ids go where its place among the others' says
            ids = np.insert(ids, where, run_ids[:len(runs)])
        self.tok_of = np.concatenate([self.tok_of, self.tok_of[-1] + np.cumsum(lens)])
        self.toks = np.concatenate([self.toks, ids])

    def search(self, texts: list[str], begin: np.ndarray, end: np.ndarray, q_pas: np.ndarray,
               q_ans: np.ndarray) -> np.ndarray:
        """Per question q, the place among its passages (strings ``q_pas[q]`` to
        ``q_pas[q + 1]`` of ``texts``, each its code points ``begin`` to ``end``) of the
        first holding one of its answers (strings ``q_ans[q]`` to ``q_ans[q + 1]``), or
        -1."""
        nq = len(q_pas) - 1
        if not texts:
            return np.full(nq, -1, dtype=np.int64)
        word_off = np.empty(len(texts) + 1, dtype=np.int64)
        words = np.empty(int((end - begin).sum()), dtype=np.int32)
        before = len(self.vocab)
        nwords = self.vocab.tokenize(texts, begin, end, _tables()[1], word_off, words)
        if len(self.vocab) > before:
            self._new_words(before)
        words = words[:nwords]
        total = _kernels.dpr_expand_count(words, self.tok_of)
        tok_off = np.empty(len(texts) + 1, dtype=np.int64)
        ids = np.empty(max(total, 0), dtype=np.int32)
        if total < 0 or _kernels.dpr_expand(words, word_off, self.tok_of, self.toks, tok_off,
                                            ids) != total:
            raise InputError("the passages' words could not be replaced by their tokens")
        out = np.empty(nq, dtype=np.int64)
        _kernels.dpr_first_hit(ids, tok_off, q_pas, q_ans, out)
        return out

    def first_hits(self, passages: list[list[str]], answers: list[list[str]]) -> np.ndarray:
        """Per question, the place of its first passage holding one of its answers, or -1."""
        nq = len(passages)
        q_pas = np.zeros(nq + 1, dtype=np.int64)
        q_ans = np.zeros(nq + 1, dtype=np.int64)
        texts: list[str] = []
        for q in range(nq):
            texts.extend(passages[q])
            q_pas[q + 1] = len(texts)
        q_ans[0] = len(texts)
        for q in range(nq):
            texts.extend(answers[q])
            q_ans[q + 1] = len(texts)
        end = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        return self.search(texts, np.zeros(len(texts), dtype=np.int64), end, q_pas, q_ans)


def _regex_first_hit(passages: list[str], answers: list[str]) -> int:
    patterns = []
    for a in answers:
        try:
            patterns.append(re.compile(unicodedata.normalize("NFD", a), _REGEX_FLAGS))
        except Exception:   # the script skips an answer that is not a pattern
            continue
    for i, p in enumerate(passages):
        text = unicodedata.normalize("NFD", p)
        if any(pat.search(text) is not None for pat in patterns):
            return i
    return -1


def _check_answers(answers: Any, where: str) -> list[str]:
    if not isinstance(answers, (list, tuple)):
        raise InputTypeError(f"{where}: \"answers\" must be a list of strings, not "
                             f"{type(answers).__name__}")
    for a in answers:
        if not isinstance(a, str):
            raise InputTypeError(f"{where}: an answer is not a string: {a!r}")
    return list(answers)


def _blocks(max_k: int) -> list[tuple[int, int]]:
    out, lo, hi = [], 0, 1
    while lo < max_k:
        out.append((lo, min(hi, max_k)))
        lo, hi = hi, hi * 4
    return out


# passages gathered per round of the kernels: bounds a round's memory (its words take four
# bytes per code point) while keeping the rounds long enough for the kernels to dominate
_PASSAGES = 32768


def _first_hits(entries: list[tuple[Any, Any]], max_k: int, regex: bool) -> np.ndarray:
    """Per entry ``(qid, record)``, the script's ``has_ans_idx``: the rank of the first hit
    among the first ``max_k`` contexts, else ``max_k``."""
    n = len(entries)
    hits = np.full(n, max_k, dtype=np.int64)
    answers_of: list[Any] = [None] * n
    contexts_of: list[Any] = [None] * n
    for q, (qid, rec) in enumerate(entries):
        try:
            answers_of[q] = rec["answers"]
            contexts_of[q] = rec["contexts"]
        except (KeyError, TypeError, IndexError):
            raise InputError(f"question {qid!r}: must be an object with \"answers\" and "
                             "\"contexts\"") from None
        if not isinstance(contexts_of[q], (list, tuple)):
            raise InputTypeError(f"question {qid!r}: \"contexts\" must be a list")
    n_ctx = np.fromiter(map(len, contexts_of), dtype=np.int64, count=n)
    matcher = None if regex else _Matcher()
    pending = np.arange(n, dtype=np.int64)
    for lo, hi in _blocks(max_k):
        still = []
        per = max(1, _PASSAGES // (hi - lo))
        for start in range(0, len(pending), per):
            chunk = pending[start:start + per]
            m = len(chunk)
            cap = int((np.clip(n_ctx[chunk], lo, hi) - lo).sum())
            texts: list[str] = []
            answers: list[str] = []
            begin = np.empty(cap, dtype=np.int64)
            end = np.empty(cap, dtype=np.int64)
            rank = np.empty(cap + 1, dtype=np.int64)
            q_pas = np.empty(m + 1, dtype=np.int64)
            q_ans = np.empty(m + 1, dtype=np.int64)
            flag = np.empty(m, dtype=np.int64)
            bad = np.empty(m, dtype=np.int64)
            npas = _kernels.dpr_gather(contexts_of, answers_of, chunk, lo, hi, texts, begin,
                                       end, rank[:cap], q_pas, answers, q_ans, flag, bad)
            if npas < 0:
                q = int(chunk[-1 - npas])
                _check_answers(answers_of[q], f"question {entries[q][0]!r}")
                raise InputError(f"question {entries[q][0]!r}: bad \"answers\"")
            if regex:
                found = np.array([
                    _regex_first_hit([texts[p][begin[p]:end[p]]
                                      for p in range(q_pas[i], q_pas[i + 1])],
                                     answers[q_ans[i]:q_ans[i + 1]])
                    if q_pas[i + 1] > q_pas[i] else -1 for i in range(m)], dtype=np.int64)
            else:
                assert matcher is not None
                ends = np.fromiter(map(len, answers), dtype=np.int64, count=len(answers))
                found = matcher.search(
                    texts + answers, np.concatenate([begin[:npas], np.zeros_like(ends)]),
                    np.concatenate([end[:npas], ends]), q_pas, q_ans + npas)
            # the first hit: a passage holding an answer, else a true has_answer, each
            # seen before the reading stopped
            rank[npas] = -1
            got = np.where(found >= 0, rank[np.where(found >= 0, q_pas[:-1] + found, npas)],
                           flag)
            done = got >= 0
            hits[chunk[done]] = got[done]
            broken = np.flatnonzero(~done & (bad >= 0))
            if broken.size:
                i = int(broken[0])
                q = int(chunk[i])
                _context_error(entries[q][0], contexts_of[q][bad[i]], int(bad[i]))
            if hi < max_k:
                still.append(chunk[~done & (n_ctx[chunk] > hi)])
        pending = np.concatenate(still) if still else np.zeros(0, dtype=np.int64)
    return hits


def _context_error(qid: Any, ctx: Any, rank: int) -> None:
    where = f"question {qid!r}, context {rank + 1}"
    if not isinstance(ctx, dict):
        raise InputTypeError(f"{where}: a context must be an object, not {type(ctx).__name__}")
    t = ctx.get("text")
    if t is None:
        raise InputError(f"{where}: no \"has_answer\" and no \"text\"")
    if not isinstance(t, str):
        raise InputTypeError(f"{where}: \"text\" must be a string, not {type(t).__name__}")
    raise InputError(f"{where}: \"text\" has no newline (it must be \"title\\ntext\"; the "
                     "script fails on it)")


def _load(retrieval: Any) -> tuple[Mapping[Any, Any], str]:
    if isinstance(retrieval, (str, os.PathLike)):
        path = os.fspath(retrieval)
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except OSError as e:
            raise InputError(f"{path}: cannot read the retrieval file: {e.strerror or e}",
                             path=path) from None
        except (ValueError, RecursionError) as e:
            raise FormatError(f"not a JSON retrieval file: {e}", path=path) from None
        src = path
    else:
        data, src = retrieval, "<retrieval>"
    if not isinstance(data, Mapping):
        raise InputError(f"{src}: the retrieval must be an object {{qid: {{\"answers\", "
                         f"\"contexts\"}}}}, not {type(data).__name__}")
    return data, src


def _check_topk(topk: Any) -> list[int]:
    if isinstance(topk, int) and not isinstance(topk, bool):
        topk = [topk]
    try:
        ks = list(topk)
    except TypeError:
        raise InputTypeError(f"topk must be ints, not {type(topk).__name__}") from None
    if not ks:
        raise InputError("topk must name at least one k")
    for k in ks:
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
            raise InputTypeError(f"topk must be ints, got {k!r}")
    return [int(k) for k in ks]


def dpr_first_hits(retrieval: Any, *, max_k: int = 100,
                   regex: bool = False) -> dict[Any, int | None]:
    """Each question's first rank (from 1) with a hit among its first ``max_k`` contexts.

    Parameters
    ----------
    retrieval : str, path or mapping
        Pyserini's retrieval JSON (``{qid: {"answers": [...], "contexts": [...]}}``) or the
        loaded object.
    max_k : int
        How many contexts of each question are looked at.
    regex : bool
        Match answers as regular expressions (``--regex``, for CuratedTREC).

    Returns
    -------
    dict
        ``{qid: rank}``, ``None`` for a question without a hit: the question counts in
        Top-k when ``rank <= k``.

    Examples
    --------
    >>> import qafast
    >>> run = {"q1": {"answers": ["Paris"], "contexts": [
    ...     {"text": "France\\nIts capital is Lyon."},
    ...     {"text": "Paris\\nParis is the capital."}]}}
    >>> qafast.dpr_first_hits(run)
    {'q1': 2}
    """
    data, _ = _load(retrieval)
    if not isinstance(max_k, int) or isinstance(max_k, bool):
        raise InputTypeError(f"max_k must be an int, not {type(max_k).__name__}")
    with gc_paused():
        entries = list(data.items())
        hits = _first_hits(entries, max_k, bool(regex)).tolist()
    return {qid: (h + 1 if h < max_k else None) for (qid, _), h in zip(entries, hits)}


def dpr_retrieval(retrieval: Any, *, topk: Iterable[int] = (1, 5, 20, 100),
                  regex: bool = False) -> dict[str, float]:
    """Top-k retrieval accuracy, as Pyserini's ``evaluate_dpr_retrieval.py`` computes it.

    Parameters
    ----------
    retrieval : str, path or mapping
        Pyserini's retrieval JSON, ``{qid: {"question": ..., "answers": [...], "contexts":
        [{"docid", "text": "title\\npassage", "score", "has_answer"?}, ...]}}``, or the
        loaded object. A context's ``has_answer``, when present, is taken as is.
    topk : iterable of int
        The k's (``--topk``).
    regex : bool
        Match answers as regular expressions (``--regex``).

    Returns
    -------
    dict
        ``{"Top{k}": accuracy}`` for each k, in order (NaN for an empty retrieval).

    Examples
    --------
    >>> import qafast
    >>> run = {"q1": {"answers": ["Paris"], "contexts": [
    ...     {"text": "France\\nIts capital is Lyon."},
    ...     {"text": "Paris\\nParis is the capital."}]},
    ...        "q2": {"answers": ["42"], "contexts": [{"has_answer": True}]}}
    >>> qafast.dpr_retrieval(run, topk=[1, 2])
    {'Top1': 0.5, 'Top2': 1.0}
    """
    ks = _check_topk(topk)
    data, _ = _load(retrieval)
    with gc_paused():
        hits = _first_hits(list(data.items()), max(ks), bool(regex))
    return _accuracies(hits, ks)


def _accuracies(hits: np.ndarray, ks: list[int]) -> dict[str, float]:
    n = len(hits)
    return {f"Top{k}": (int(np.count_nonzero(hits < k)) / n if n else math.nan) for k in ks}


class RetrievalAccuracy:
    """Top-k retrieval accuracy accumulated over batches of questions.

    Each :meth:`update` takes a batch's answers and, per question, its passages' texts in
    rank order (the passage itself: no "title" line), and scores them as the script scores a
    context without ``has_answer``. The tokens interned stay for the next batches.

    Examples
    --------
    >>> from qafast.dpr_eval import RetrievalAccuracy
    >>> m = RetrievalAccuracy(topk=(1, 2))
    >>> m.update([["Paris"], ["x"]], [["Lyon is big.", "Paris, the capital"], ["no", "no"]])
    >>> m.compute()
    {'Top1': 0.0, 'Top2': 0.5}
    >>> m.state_dict()
    {'topk': [1, 2], 'regex': False, 'first_hit_counts': [0, 1], 'misses': 1}
    """

    def __init__(self, *, topk: Iterable[int] = (1, 5, 20, 100), regex: bool = False) -> None:
        self.topk = _check_topk(topk)
        self.max_k = max(self.topk)
        self.regex = bool(regex)
        self._matcher = None if self.regex else _Matcher()
        # counts[r]: the questions whose first hit is rank r (from 0), as long as the
        # deepest first hit seen; misses: the questions with no hit in their first max_k
        self._counts = np.zeros(0, dtype=np.int64)
        self._misses = 0

    def reset(self) -> None:
        self._counts = np.zeros(0, dtype=np.int64)
        self._misses = 0

    def update(self, answers: Sequence[Sequence[str]],
               passages: Sequence[Sequence[str]]) -> None:
        if len(answers) != len(passages):
            raise InputError(f"update: {len(answers)} answer lists but {len(passages)} "
                             "passage lists")
        pas: list[list[str]] = []
        ans: list[list[str]] = []
        for q, (a, p) in enumerate(zip(answers, passages)):
            ans.append(_check_answers(a, f"question {q} of the batch"))
            if isinstance(p, str) or not isinstance(p, Sequence):
                raise InputTypeError(f"question {q} of the batch: the passages must be a "
                                     "list of strings")
            texts = list(p[:max(self.max_k, 0)])
            for t in texts:
                if not isinstance(t, str):
                    raise InputTypeError(f"question {q} of the batch: a passage is not a "
                                         f"string: {type(t).__name__}")
            pas.append(texts)
        if self.regex:
            found = np.array([_regex_first_hit(p, a) for p, a in zip(pas, ans)],
                             dtype=np.int64)
        else:
            assert self._matcher is not None
            found = self._matcher.first_hits(pas, ans)
        hit = found[found >= 0]
        self._misses += len(found) - len(hit)
        counts = np.bincount(hit, minlength=len(self._counts)).astype(np.int64)
        counts[:len(self._counts)] += self._counts
        self._counts = counts

    def compute(self) -> dict[str, float]:
        n = int(self._counts.sum()) + self._misses
        cum = np.concatenate([[0], np.cumsum(self._counts)])
        out = {}
        for k in self.topk:
            hit = int(cum[min(k, len(self._counts))]) if k > 0 else 0
            out[f"Top{k}"] = hit / n if n else math.nan
        return out

    def state_dict(self) -> dict[str, Any]:
        return {"topk": list(self.topk), "regex": self.regex,
                "first_hit_counts": self._counts.tolist(), "misses": self._misses}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        try:
            counts = np.asarray(state["first_hit_counts"], dtype=np.int64)
            misses = int(state["misses"])
            same = list(state["topk"]) == self.topk and bool(state["regex"]) == self.regex
        except (KeyError, TypeError, ValueError):
            same = False
        if not same or counts.ndim != 1 or len(counts) > max(self.max_k, 0) or (
                counts < 0).any() or misses < 0:
            raise InputError("load_state_dict: the state is for other settings (topk, "
                             "regex) or does not hold counts")
        self._counts = counts.copy()
        self._misses = misses


def register_cli(subparsers: Any) -> dict[str, Any]:
    """Add ``qafast dpr-retrieval``; returns ``{"dpr-retrieval": handler}``."""
    p = subparsers.add_parser(
        "dpr-retrieval", help="top-k retrieval accuracy, printing what Pyserini's "
                              "evaluate_dpr_retrieval.py prints",
        description="Top-k retrieval accuracy of a DPR-style retrieval JSON file, as "
                    "Pyserini's evaluate_dpr_retrieval.py computes and prints it.")
    p.add_argument("--retrieval", type=str, metavar="path", required=True,
                   help="Path to retrieval output file.")
    p.add_argument("--topk", type=int, nargs="+", required=True, help="topk to evaluate")
    p.add_argument("--regex", action="store_true", default=False, help="regex match")
    return {"dpr-retrieval": _run_cli}


def _run_cli(args: Any) -> int:
    acc = dpr_retrieval(args.retrieval, topk=args.topk, regex=args.regex)
    ks = _check_topk(args.topk)
    sys.stdout.write("".join(f"Top{k}\taccuracy: {acc[f'Top{k}']:.4f}\n" for k in ks))
    return 0
