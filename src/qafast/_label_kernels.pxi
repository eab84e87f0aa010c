# Label kernels, included by _kernels.pyx: concept sets and token labels.
#
# ``lb_concepts_at_k`` (OpenCSR / DrFact): Hit@K and Rec@K of ranked concept lists
# against sets of gold concepts, one row per question, one column per K.
# ``lb_tweet_scores`` (event mentions in tweets): the tweet score (an F1 over the
# event-mention labels) of each tweet, and optionally each label's mention score.
#
# Ragged data is CSR: int64 offsets (n + 1) and flat int32 ids or label codes. Inputs are
# validated in Python (qafast.concepts, qafast.events) before these run.

from libc.stdint cimport int32_t, int64_t

# Event-mention label codes; keep in step with qafast.events.LABELS.
# 0 is 'o' (outside); 1..6 are en, ep, en1, ep1, en2, ep2, the order a tweet's mention scores
# are added in.
cdef enum:
    _LB_N_LABELS = 7


cdef inline int64_t _lb_count_ahead(const double* w, const int32_t* ids, int64_t lo, int64_t hi,
                                    double x, int32_t cx) noexcept nogil:
    """How many of the entries lo..hi-1 rank before one of weight x and id cx: a larger
    weight, or the same weight and a smaller id. Branch-free, as weights are unpredictable."""
    cdef int64_t j, r = 0
    for j in range(lo, hi):
        r += <int64_t>(w[j] > x) + <int64_t>((w[j] == x) & (ids[j] < cx))
    return r


cdef inline int64_t _lb_count_same(const double* w, const int32_t* ids, int64_t lo, int64_t i,
                                   double x, int32_t cx) noexcept nogil:
    """How many of the entries lo..i-1 have weight x and id cx: a repeated concept's earlier
    entries of equal weight, which take the places just before entry i."""
    cdef int64_t j, r = 0
    for j in range(lo, i):
        r += <int64_t>((w[j] == x) & (ids[j] == cx))
    return r


def lb_concepts_at_k(const int64_t[::1] pred_offsets, const int32_t[::1] pred_ids,
                     const double[::1] pred_weights, const int64_t[::1] gold_offsets,
                     const int32_t[::1] gold_ids, const int64_t[::1] ks, int64_t extra,
                     int64_t[::1] seen, int64_t[::1] gold_mark, int64_t[::1] rank_buf,
                     double[:, ::1] hit, double[:, ::1] rec):
    """Hit@K and Rec@K per question; returns -1, or the index of the first question whose
    predictions name a concept twice.

    Question q's predictions are ``pred_ids[pred_offsets[q]:pred_offsets[q + 1]]``. With
    ``pred_weights`` empty they are ranked in list order; otherwise by weight descending,
    ties by id ascending, then by list order. Every entry takes a place, and a concept named
    more than once counts at its last place (the published DrFact script keeps a concept's
    last position). Its gold concepts are ``gold_ids[gold_offsets[q]:...]`` (repeats count
    once; at least one). A cut-off ``ks[t]`` keeps the ranks below ``ks[t] + extra``
    (``extra`` is 1 for the published DrFact script's T + 1 items). ``seen`` and
    ``gold_mark`` are scratch, one slot per concept id, filled with -1 by the caller;
    ``rank_buf`` is scratch with a slot per gold entry of the largest gold list.
    """
    cdef Py_ssize_t n = pred_offsets.shape[0] - 1, nk = ks.shape[0]
    cdef Py_ssize_t q, t
    cdef int64_t i, j, lo, hi, c, g, m, r, s, cut, found, g0, g1
    cdef bint weighted = pred_weights.shape[0] > 0, again
    cdef int64_t bad = -1
    # the shapes the caller sized from its own reads: O(1) here, and the loops below then
    # index only within them (ids and offsets themselves are checked by the caller)
    if (n < 0 or gold_offsets.shape[0] != n + 1 or seen.shape[0] != gold_mark.shape[0]
            or hit.shape[0] != n or rec.shape[0] != n or hit.shape[1] != nk
            or rec.shape[1] != nk or (weighted and pred_weights.shape[0] != pred_ids.shape[0])
            or (n > 0 and (pred_offsets[n] != pred_ids.shape[0]
                           or gold_offsets[n] != gold_ids.shape[0]))):
        raise ValueError("lb_concepts_at_k: arrays of mismatched shapes")
    with nogil:
        for q in range(n):
            # mark the gold set: gold_mark[c] is the index of c's first gold entry, so it
            # is >= g0 only for this question's gold; its rank goes to rank_buf[that - g0]
            g0 = gold_offsets[q]
            g1 = gold_offsets[q + 1]
            g = 0
            for j in range(g0, g1):
                c = gold_ids[j]
                if gold_mark[c] < g0:
                    gold_mark[c] = j
                    rank_buf[j - g0] = -1
                    g += 1
            lo = pred_offsets[q]
            hi = pred_offsets[q + 1]
            # the rank of each gold concept among the predictions: its last place
            for i in range(lo, hi):
                c = pred_ids[i]
                again = seen[c] == q
                if again and bad < 0:
                    bad = q
                seen[c] = q
                if gold_mark[c] < g0:
                    continue
                if not weighted:
                    r = i - lo
                else:
                    r = _lb_count_ahead(&pred_weights[0], &pred_ids[0], lo, hi,
                                        pred_weights[i], pred_ids[i])
                    if again:
                        r += _lb_count_same(&pred_weights[0], &pred_ids[0], lo, i,
                                            pred_weights[i], pred_ids[i])
                s = gold_mark[c] - g0
                if r > rank_buf[s]:
                    rank_buf[s] = r
            # the ranks of the gold concepts found, packed to the front (m <= j - g0)
            m = 0
            for j in range(g0, g1):
                if gold_mark[gold_ids[j]] == j and rank_buf[j - g0] >= 0:
                    rank_buf[m] = rank_buf[j - g0]
                    m += 1
            for t in range(nk):
                cut = ks[t] + extra
                found = 0
                for j in range(m):
                    if rank_buf[j] < cut:
                        found += 1
                hit[q, t] = 1.0 if found > 0 else 0.0
                rec[q, t] = <double>found / <double>g
    return bad


cdef inline double _lb_f1(double tp, double n_gold, double n_pred) noexcept nogil:
    """The definition's (2 * rec * prec) / (rec + prec), rec = tp / n_gold, prec = tp / n_pred."""
    cdef double rec = tp / n_gold, prec = tp / n_pred
    return (2 * rec * prec) / (rec + prec)


def lb_tweet_scores(const int64_t[::1] offsets, const int32_t[::1] res, const int32_t[::1] ann,
                    double[::1] out, double[:, ::1] mention):
    """Tweet score of each tweet into ``out``; with ``mention`` of shape (n, 7), each label's
    mention score too (column 0, 'o', is its own F1 like any label's).

    Tweet q's predicted and gold labels are ``res[offsets[q]:offsets[q + 1]]`` and ``ann[...]``,
    codes 0..6 (0 = 'o').
    """
    cdef Py_ssize_t n = offsets.shape[0] - 1, q
    cdef int64_t i, lab, n_res_ems, n_ann_ems
    if (n < 0 or out.shape[0] != n or (mention.shape[0] > 0 and (
            mention.shape[0] != n or mention.shape[1] != _LB_N_LABELS))
            or (n > 0 and (offsets[n] > res.shape[0] or offsets[n] > ann.shape[0]))):
        raise ValueError("lb_tweet_scores: arrays of mismatched shapes")
    cdef int64_t cr[_LB_N_LABELS]
    cdef int64_t ca[_LB_N_LABELS]
    cdef int64_t tp[_LB_N_LABELS]
    cdef double em, total
    cdef bint want_mention = mention.shape[0] > 0
    cdef int32_t a, b
    with nogil:
        for q in range(n):
            for lab in range(_LB_N_LABELS):
                cr[lab] = 0
                ca[lab] = 0
                tp[lab] = 0
            for i in range(offsets[q], offsets[q + 1]):
                a = res[i]
                b = ann[i]
                cr[a] += 1
                ca[b] += 1
                if a == b:
                    tp[a] += 1
            if want_mention:
                for lab in range(_LB_N_LABELS):
                    if ca[lab] == 0 or cr[lab] == 0 or tp[lab] == 0:
                        mention[q, lab] = 0.0
                    else:
                        mention[q, lab] = _lb_f1(<double>tp[lab], <double>ca[lab], <double>cr[lab])
            total = 0.0
            n_res_ems = 0
            n_ann_ems = 0
            for lab in range(1, _LB_N_LABELS):
                if ca[lab] > 0:
                    n_ann_ems += 1
                if cr[lab] > 0:
                    n_res_ems += 1
                    if ca[lab] > 0 and tp[lab] > 0:
                        total += _lb_f1(<double>tp[lab], <double>ca[lab], <double>cr[lab])
            if n_ann_ems == 0 or n_res_ems == 0 or total == 0.0:
                out[q] = 0.0
            else:
                out[q] = _lb_f1(total, <double>n_ann_ems, <double>n_res_ems)


cdef extern from "Python.h":
    bint _lb_is_list "PyList_CheckExact"(PyObject* o)
    bint _lb_is_dict "PyDict_CheckExact"(PyObject* o)
    bint _lb_is_tuple "PyTuple_CheckExact"(PyObject* o)
    bint _lb_is_str "PyUnicode_CheckExact"(PyObject* o)
    bint _lb_is_float "PyFloat_CheckExact"(PyObject* o)
    bint _lb_is_int "PyLong_CheckExact"(PyObject* o)
    Py_ssize_t _lb_list_len "PyList_GET_SIZE"(PyObject* o)
    PyObject* _lb_list_item "PyList_GET_ITEM"(PyObject* o, Py_ssize_t i)
    Py_ssize_t _lb_tuple_len "PyTuple_GET_SIZE"(PyObject* o)
    PyObject* _lb_tuple_item "PyTuple_GET_ITEM"(PyObject* o, Py_ssize_t i)
    Py_ssize_t _lb_dict_len "PyDict_GET_SIZE"(PyObject* o)
    double _lb_float "PyFloat_AS_DOUBLE"(PyObject* o)
    double _lb_int_as_double "PyLong_AsDouble"(PyObject* o)


cdef inline int _lb_concept_id(dict prov, list names, PyObject* c) except -2:
    # a provisional id per distinct concept, in order of first appearance
    cdef PyObject* v = PyDict_GetItemWithError(prov, <object>c)
    cdef int n
    if v != NULL:
        return <int>(<object>v)
    n = len(names)
    prov[<object>c] = n
    names.append(<object>c)
    return n


def lb_encode_concepts(dict predictions, dict references, int32_t[::1] pred_ids,
                       double[::1] pred_weights, int64_t[::1] pred_off, int32_t[::1] gold_ids,
                       int64_t[::1] gold_off, list names):
    """encode_concepts for the usual forms, in one C pass per side: predictions that are all
    lists of str (ranked), or all lists of (str, float or int) pairs or dicts {str: float or
    int} (weighted); references that are lists of str. Concepts get provisional ids in order
    of first appearance (``names``); the caller sorts the vocabulary and maps them. The
    arrays are sized by the caller (from the lengths). Returns 0 (ranked), 1 (weighted), or
    -1 at the first entry of any other kind (the caller's general path names it)."""
    cdef dict prov = {}
    cdef Py_ssize_t qpos = 0, i, m, pos = 0, dpos
    cdef Py_ssize_t q = 0
    cdef PyObject* qk
    cdef PyObject* p
    cdef PyObject* it
    cdef PyObject* c
    cdef PyObject* w
    cdef int form = -1          # 0 ranked, 1 pairs, 2 dicts; -1 not known yet
    cdef int kind
    cdef double x
    pred_off[0] = 0
    while _enc_dict_next(predictions, &qpos, &qk, &p):
        if _lb_is_list(p):
            m = _lb_list_len(p)
            for i in range(m):
                it = _lb_list_item(p, i)
                if _lb_is_str(it):
                    kind = 0
                    c = it
                    w = NULL
                elif _lb_is_tuple(it) and _lb_tuple_len(it) == 2:
                    kind = 1
                    c = _lb_tuple_item(it, 0)
                    w = _lb_tuple_item(it, 1)
                else:
                    return -1
                if form == -1:
                    form = kind
                elif (form == 0) != (kind == 0):
                    return -1
                if not _lb_is_str(c):
                    return -1
                pred_ids[pos] = _lb_concept_id(prov, names, c)
                if w != NULL:
                    if _lb_is_float(w):
                        x = _lb_float(w)
                    elif _lb_is_int(w):
                        x = _lb_int_as_double(w)
                        if x == -1.0 and PyErr_Occurred() != NULL:
                            PyErr_Clear()
                            return -1
                    else:
                        return -1
                    pred_weights[pos] = x
                pos += 1
        elif _lb_is_dict(p):
            if _lb_dict_len(p) and form == 0:
                return -1
            if _lb_dict_len(p) and form == -1:
                form = 2
            dpos = 0
            while _enc_dict_next(<dict>p, &dpos, &c, &w):
                if not _lb_is_str(c):
                    return -1
                if _lb_is_float(w):
                    x = _lb_float(w)
                elif _lb_is_int(w):
                    x = _lb_int_as_double(w)
                    if x == -1.0 and PyErr_Occurred() != NULL:
                        PyErr_Clear()
                        return -1
                else:
                    return -1
                pred_ids[pos] = _lb_concept_id(prov, names, c)
                pred_weights[pos] = x
                pos += 1
        else:
            return -1
        q += 1
        pred_off[q] = pos
    qpos = 0
    pos = 0
    q = 0
    gold_off[0] = 0
    while _enc_dict_next(references, &qpos, &qk, &p):
        if not _lb_is_list(p):
            return -1
        m = _lb_list_len(p)
        for i in range(m):
            c = _lb_list_item(p, i)
            if not _lb_is_str(c):
                return -1
            gold_ids[pos] = _lb_concept_id(prov, names, c)
            pos += 1
        q += 1
        gold_off[q] = pos
    return 0 if form <= 0 else 1
