# Kernels included by _kernels.pyx: QuAC's official evaluation (qafast.quac).
#
# quac_scores takes each question's golds (already reduced by the CANNOTANSWER rule) and its
# prediction as ids of the shared SQuAD encoder (sorted token bags for F1, the normalized
# string as ids for exact match) and gives the human agreement, the model's leave-one-out F1,
# and which gold the overlap kind is taken from. quac_kinds then finds the prediction and
# that gold in the dialog's context to name the kind.

from cpython.unicode cimport PyUnicode_Find
from libc.math cimport fabs, isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t

# flags of a question (uint8)
cdef enum:
    _QU_PREDICTED = 1
    _QU_UNANSWERABLE = 2
    _QU_PRED_CANNOT = 4     # the prediction is exactly "CANNOTANSWER"

# kind codes (quac_eval.KINDS)
cdef enum:
    _QU_NO_ANSWER = 0
    _QU_EXACT = 1
    _QU_PARTIAL = 2
    _QU_NO_OVERLAP = 3
    _QU_INDEX_ERROR = 4


cdef inline double _qu_f1(const int32_t* toks, const int64_t[::1] tok_off, int32_t a,
                          int32_t b) noexcept nogil:
    """SQuAD v1.1 F1 of string a (as the prediction) against string b."""
    cdef int64_t na = tok_off[a + 1] - tok_off[a], nb = tok_off[b + 1] - tok_off[b]
    cdef int64_t same = _ak_bag_same(toks + tok_off[a], na, toks + tok_off[b], nb)
    cdef double p, r
    if same == 0:
        return 0.0
    p = 1.0 * same / na
    r = 1.0 * same / nb
    return (2 * p * r) / (p + r)


def quac_scores(const int32_t[::1] pred, const int64_t[::1] ref_off,
                const int32_t[::1] ref, const int64_t[::1] tok_off,
                const int32_t[::1] toks, const int64_t[::1] key_off,
                const int32_t[::1] keys, const uint8_t[::1] flags, bint compensated,
                double[::1] human, double[::1] model, int32_t[::1] best,
                uint8_t[::1] exact):
    """For each question q with golds ``ref[ref_off[q]:ref_off[q + 1]]`` (string ids):

    * ``human[q]``: 1.0 with one gold, else the mean over golds of each one's best F1 against
      the others (added left to right);
    * ``model[q]`` (questions flagged predicted): the leave-one-out F1 of string ``pred[q]``
      (with one gold, its score; else the mean of the best scores with each gold left out,
      added as Python's ``sum`` adds floats: plainly, or with Neumaier's compensation when
      ``compensated``, as from Python 3.12); against an unanswerable question's one gold the
      score is 1.0 if the prediction is flagged as exactly CANNOTANSWER, else 0.0;
    * ``best[q]``: the position (within the question's golds) of the first gold with the
      highest score, and ``exact[q]`` whether the prediction's normalized string equals
      that gold's."""
    cdef Py_ssize_t n = pred.shape[0], q
    cdef int64_t lo, hi, k, i, j, m
    cdef double s, total, top, second, t, c, x
    cdef int64_t top_at
    cdef const int32_t* tok_base = &toks[0] if toks.shape[0] else NULL
    cdef const int32_t* key_base = &keys[0] if keys.shape[0] else NULL
    cdef double* scores
    cdef double* bests
    cdef int64_t width = 0
    cdef int32_t p, g
    if (ref_off.shape[0] != n + 1 or flags.shape[0] != n or human.shape[0] != n
            or model.shape[0] != n or best.shape[0] != n or exact.shape[0] != n):
        raise InputError("one offset, flag and output slot per question are expected")
    for q in range(n):
        if ref_off[q + 1] - ref_off[q] > width:
            width = ref_off[q + 1] - ref_off[q]
        if ref_off[q + 1] < ref_off[q] or ref_off[q] < 0:
            raise InputError("reference offsets must not decrease")
    if n and ref_off[n] > ref.shape[0]:
        raise InputError("reference offsets beyond the references")
    scores = <double*> malloc((width + 1) * 2 * sizeof(double))
    if scores == NULL:
        raise MemoryError()
    bests = scores + width + 1
    try:
        with nogil:
            for q in range(n):
                lo = ref_off[q]
                hi = ref_off[q + 1]
                k = hi - lo
                # the golds' agreement
                if k <= 1:
                    human[q] = 1.0
                else:
                    for i in range(k):
                        bests[i] = 0.0
                    for i in range(k):
                        for j in range(i + 1, k):
                            s = _qu_f1(tok_base, tok_off, ref[lo + i], ref[lo + j])
                            if s > bests[i]:
                                bests[i] = s
                            if s > bests[j]:
                                bests[j] = s
                    total = 0.0
                    for i in range(k):
                        total += bests[i]
                    human[q] = total / k
                best[q] = 0
                exact[q] = 0
                model[q] = 0.0
                if not (flags[q] & _QU_PREDICTED) or k == 0:
                    continue
                p = pred[q]
                if flags[q] & _QU_UNANSWERABLE:
                    model[q] = 1.0 if flags[q] & _QU_PRED_CANNOT else 0.0
                    continue
                # each gold's score, the first highest and the runner-up
                top_at = 0
                for i in range(k):
                    scores[i] = _qu_f1(tok_base, tok_off, p, ref[lo + i])
                    if scores[i] > scores[top_at]:
                        top_at = i
                top = scores[top_at]
                g = ref[lo + top_at]
                best[q] = <int32_t> top_at
                exact[q] = _ak_equal(key_base + key_off[p], key_off[p + 1] - key_off[p],
                                     key_base + key_off[g], key_off[g + 1] - key_off[g])
                if k == 1:
                    model[q] = top
                    continue
                second = -1.0
                for i in range(k):
                    if i != top_at and scores[i] > second:
                        second = scores[i]
                # leave gold i out: the best of the others is the top unless i is the top
                total = 0.0
                c = 0.0
                for i in range(k):
                    x = second if i == top_at else top
                    if compensated:
                        t = total + x
                        if fabs(total) >= fabs(x):
                            c += (total - t) + x
                        else:
                            c += (x - t) + total
                        total = t
                    else:
                        total += x
                if compensated and c != 0.0 and isfinite(c):
                    total += c
                model[q] = 1.0 * total / k
    finally:
        free(scores)
    return None


def quac_kinds(list contexts, list preds, list golds, const uint8_t[::1] exact,
               uint8_t[::1] kinds):
    """The overlap kind of each answerable predicted question: ``preds[r]`` and ``golds[r]``
    (the gold the kind is taken from) are found in ``contexts[r]`` (all exact str);
    ``exact[r]`` says whether their normalized forms are equal."""
    cdef Py_ssize_t n = len(preds), r, ps, gs, pe, ge
    cdef object ctx, pr, gd
    if len(contexts) != n or len(golds) != n or exact.shape[0] != n or kinds.shape[0] != n:
        raise InputError("one context, gold and output slot per prediction are expected")
    for r in range(n):
        ctx = contexts[r]
        pr = preds[r]
        gd = golds[r]
        ps = PyUnicode_Find(ctx, pr, 0, len(ctx), 1)
        gs = PyUnicode_Find(ctx, gd, 0, len(ctx), 1) if ps != -1 else -1
        if ps == -1 or gs == -1:
            kinds[r] = _QU_INDEX_ERROR
        elif exact[r]:
            kinds[r] = _QU_EXACT
        else:
            pe = ps + len(pr)
            ge = gs + len(gd)
            kinds[r] = _QU_PARTIAL if max(ps, gs) <= min(pe, ge) else _QU_NO_OVERLAP
    return None


def quac_walk(list data, dict preds, list dialogs, list dialog_of, list qids, list golds,
              list spans, list flags, list entries, dict contexts):
    """The gold walk of quac_eval._evaluate for plain input: appends to the lists given
    (dialog ids, each question's dialog, id, golds after the CANNOTANSWER rule, predicted
    span or "", flags; ``(question, qa, prediction, None)`` of each predicted question) and
    fills ``contexts`` {dialog index: context}. Returns False, leaving them partly filled, at
    the first value that is not of the plain form (dicts, lists and str where expected; a
    prediction a tuple of three whose span is a str); the caller then walks in Python."""
    cdef object article, paragraphs, par, did, qas, qa, qid, answers, ans, text, pred, span
    cdef object dp, ctx
    cdef list texts, kept
    cdef Py_ssize_t d, q = 0, cannot, n_texts
    cdef int flag
    cdef str cannot_s = "CANNOTANSWER"
    for article in data:
        if type(article) is not dict:
            return False
        paragraphs = (<dict> article).get("paragraphs")
        if type(paragraphs) is not list:
            return False
        for par in <list> paragraphs:
            if type(par) is not dict:
                return False
            did = (<dict> par).get("id")
            qas = (<dict> par).get("qas")
            if type(did) is not str or type(qas) is not list:
                return False
            dp = preds.get(did)
            d = len(dialogs)
            dialogs.append(did)
            for qa in <list> qas:
                if type(qa) is not dict:
                    return False
                qid = (<dict> qa).get("id")
                answers = (<dict> qa).get("answers")
                if type(qid) is not str or type(answers) is not list:
                    return False
                texts = []
                cannot = 0
                for ans in <list> answers:
                    if type(ans) is not dict:
                        return False
                    text = (<dict> ans).get("text")
                    if type(text) is not str:
                        return False
                    if <str> text == cannot_s:
                        cannot += 1
                    texts.append(text)
                n_texts = len(texts)
                if cannot >= n_texts - cannot:
                    texts = [cannot_s]
                    flag = _QU_UNANSWERABLE
                else:
                    if cannot:
                        kept = []
                        for text in texts:
                            if <str> text != cannot_s:
                                kept.append(text)
                        texts = kept
                    flag = 0
                span = ""
                if dp is not None:
                    if type(dp) is not dict:
                        return False
                    pred = (<dict> dp).get(qid)
                    if pred is not None:
                        if type(pred) is not tuple or len(<tuple> pred) != 3:
                            return False
                        span = (<tuple> pred)[0]
                        if type(span) is not str:
                            return False
                        flag |= _QU_PREDICTED
                        if <str> span == cannot_s:
                            flag |= _QU_PRED_CANNOT
                        if d not in contexts:
                            ctx = (<dict> par).get("context", None)
                            if ctx is None and "context" not in <dict> par:
                                return False
                            contexts[d] = ctx
                        entries.append((q, qa, pred, None))
                dialog_of.append(d)
                qids.append(qid)
                golds.append(texts)
                spans.append(span)
                flags.append(flag)
                q += 1
    return True
