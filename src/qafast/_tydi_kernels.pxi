# TyDi QA kernels part: the per-example passage and minimal-answer scores of the primary tasks
# and the score-threshold sweep (optimal F1, recall at precision) over examples sorted by score.

from libc.stdint cimport int64_t, uint8_t


cdef inline bint _ty_null(double start, double end) noexcept nogil:
    return start < 0 and end < 0


cdef inline double _ty_ratio(double x, double y) noexcept nogil:
    return 0.0 if y == 0 else x / y


def tydi_examples(const int64_t[::1] gold_row, const int64_t[::1] pred_row,
                  const int64_t[::1] ann_ptr, const double[::1] ann_index,
                  const double[::1] ann_start, const double[::1] ann_end,
                  const uint8_t[::1] ann_yes_no, const double[::1] pred_index,
                  const double[::1] pred_start, const double[::1] pred_end,
                  const uint8_t[::1] pred_yes_no, int64_t passage_threshold,
                  int64_t minimal_threshold, uint8_t[:, ::1] flags, double[:, ::1] prf):
    """Score example ``i`` (gold row ``gold_row[i]``, prediction row ``pred_row[i]`` or -1).

    ``flags[i]`` gets (passage has gold, has prediction, correct, minimal has gold, has
    prediction); ``prf[i]`` the minimal answer's best precision, recall and F1 over annotators.
    Yes/no codes: 0 none, 1 yes, 2 no, 3 anything else. Returns -1, or the first ``i`` whose
    prediction span is compared with an annotator's span that overlaps it in no byte although
    neither ends where the other starts (an empty span strictly inside the other).
    """
    cdef Py_ssize_t n = gold_row.shape[0], i
    cdef int64_t g, q, a, lo, hi, n_pass, n_min
    cdef double idx, ps, pe, gs, ge, shared, gold_only, pred_only, p, r, f, bp, br, bf
    cdef uint8_t yn
    cdef bint p_gold, m_gold, p_pred, m_pred, correct
    cdef int64_t failed = -1
    with nogil:
        for i in range(n):
            g = gold_row[i]
            q = pred_row[i]
            lo = ann_ptr[g]
            hi = ann_ptr[g + 1]
            n_pass = 0
            n_min = 0
            for a in range(lo, hi):
                if ann_index[a] >= 0:
                    n_pass += 1
                if (not _ty_null(ann_start[a], ann_end[a])) or ann_yes_no[a] != 0:
                    n_min += 1
            p_gold = n_pass >= passage_threshold
            m_gold = n_min >= minimal_threshold
            bp = br = bf = 0.0
            correct = False
            if q < 0:
                p_pred = not p_gold
                m_pred = not m_gold
            else:
                idx = pred_index[q]
                p_pred = idx >= 0
                if p_gold and p_pred:
                    for a in range(lo, hi):
                        if ann_index[a] >= 0 and ann_index[a] == idx:
                            correct = True
                            break
                ps = pred_start[q]
                pe = pred_end[q]
                yn = pred_yes_no[q]
                m_pred = (not _ty_null(ps, pe)) or yn != 0
                if m_gold and m_pred:
                    if yn != 0:
                        for a in range(lo, hi):
                            if ann_yes_no[a] == yn:
                                bp = br = bf = 1.0
                                break
                    else:
                        for a in range(lo, hi):
                            gs = ann_start[a]
                            ge = ann_end[a]
                            if _ty_null(gs, ge):
                                continue
                            if ge <= ps or pe <= gs:
                                p = r = 0.0
                            else:
                                shared = (ge if ge < pe else pe) - (gs if gs > ps else ps)
                                if not shared > 0:
                                    if failed < 0:
                                        failed = i
                                    continue
                                if gs <= ps:
                                    gold_only = (ps - gs) + (ge - pe if ge - pe > 0 else 0.0)
                                    pred_only = pe - ge if pe - ge > 0 else 0.0
                                else:
                                    pred_only = (gs - ps) + (pe - ge if pe - ge > 0 else 0.0)
                                    gold_only = ge - pe if ge - pe > 0 else 0.0
                                p = _ty_ratio(shared, shared + pred_only)
                                r = _ty_ratio(shared, shared + gold_only)
                            f = _ty_ratio(2 * p * r, p + r)
                            if f > bf:
                                bp = p
                                br = r
                                bf = f
            flags[i, 0] = p_gold
            flags[i, 1] = p_pred
            flags[i, 2] = correct
            flags[i, 3] = m_gold
            flags[i, 4] = m_pred
            prf[i, 0] = bp
            prf[i, 1] = br
            prf[i, 2] = bf
    return failed


def tydi_curve(const uint8_t[::1] has_gold, const uint8_t[::1] has_pred,
               const double[::1] value, const double[::1] score, const int64_t[::1] order,
               const double[::1] targets, double[::1] best, int64_t[::1] best_at,
               double[:, ::1] rows, int64_t[::1] row_at):
    """Sweep the thresholds of examples visited in ``order`` (by score, descending; no NaN).

    Equal consecutive scores form one threshold, scored after its last example. ``best`` gets
    the first strictly best (F1, precision, recall) and ``best_at[0]`` the position in ``order``
    where its threshold starts (-1: none beat 0). For target ``k``, ``rows[k]`` gets the
    (recall, precision) of the first point of largest recall with precision >= target and
    ``row_at[k]`` its threshold's start (-1: none).
    """
    cdef Py_ssize_t n = order.shape[0], nt = targets.shape[0], i, k
    cdef int64_t o, start = 0
    cdef double total_gold = 0.0, total_value = 0.0, total_pred = 0.0, p, r, f
    with nogil:
        best[0] = best[1] = best[2] = 0.0
        best_at[0] = -1
        for k in range(nt):
            rows[k, 0] = rows[k, 1] = 0.0
            row_at[k] = -1
        for i in range(n):
            total_gold += has_gold[i]
        for i in range(n):
            o = order[i]
            total_value += value[o]
            total_pred += has_pred[o]
            if i + 1 < n and score[order[i + 1]] == score[o]:
                continue
            p = _ty_ratio(total_value, total_pred)
            r = _ty_ratio(total_value, total_gold)
            for k in range(nt):
                if p >= targets[k] and r > rows[k, 0]:
                    rows[k, 0] = r
                    rows[k, 1] = p
                    row_at[k] = start
            f = _ty_ratio(2 * p * r, p + r)
            if f > best[0]:
                best[0] = f
                best[1] = p
                best[2] = r
                best_at[0] = start
            start = i + 1


# ---------------------------------------------------------------------------------------------
# Reading parsed records: the common shapes in one C loop; anything else is left to the
# Python reader (return -2), which gives the same result or the precise error
# ---------------------------------------------------------------------------------------------

from libc.stdint cimport int8_t

cdef extern from "Python.h":
    PyObject* PyDict_GetItemWithError(object d, object key) except? NULL

cdef object _TY_YES_NO = {"none": 0, "yes": 1, "no": 2, "NONE": 0, "YES": 1, "NO": 2,
                          "None": 0, "Yes": 1, "No": 2}
cdef object _TY_LANG = {lang: i for i, lang in enumerate(
    ("english", "arabic", "bengali", "finnish", "indonesian", "japanese", "swahili", "korean",
     "russian", "telugu", "thai"))}
cdef double _TY_LIMIT = 4503599627370496.0  # 2**52


cdef class _TyFallback(Exception):
    pass


cdef inline object _ty_get(object d, object key):
    cdef PyObject* v
    if type(d) is not dict:
        raise _TyFallback()
    v = PyDict_GetItemWithError(d, key)
    if v == NULL:
        raise _TyFallback()
    return <object>v


cdef inline double _ty_int(object v) except? -1.0:
    cdef long long x
    if type(v) is not int:
        raise _TyFallback()
    try:
        x = v
    except OverflowError:
        raise _TyFallback()
    if x > _TY_LIMIT or x < -_TY_LIMIT:
        raise _TyFallback()
    return <double>x


cdef inline uint8_t _ty_yes_no(object v, bint gold) except 255:
    cdef PyObject* c
    if type(v) is not str:
        raise _TyFallback()
    c = PyDict_GetItemWithError(_TY_YES_NO, v)
    if c != NULL:
        return <uint8_t><long>(<object>c)
    c = PyDict_GetItemWithError(_TY_YES_NO, v.lower())
    if c != NULL:
        return <uint8_t><long>(<object>c)
    if not gold:
        raise _TyFallback()
    return 3


cdef inline int8_t _ty_lang(object v) except -2:
    cdef PyObject* c
    if type(v) is not str:
        raise _TyFallback()
    c = PyDict_GetItemWithError(_TY_LANG, v)
    return -1 if c == NULL else <int8_t><long>(<object>c)


def tydi_walk_gold(list records, dict slot_of, list ids, list langs, int64_t[::1] slot_lo,
                   int64_t[::1] slot_hi, int8_t[::1] slot_lang, double[::1] index,
                   double[::1] start, double[::1] end, uint8_t[::1] yes_no):
    """Read gold records (dicts, as ``json.loads`` gives them) into slots, one per distinct id in
    order of first appearance, a repeated id's slot taking the later record.

    Returns the number of annotations written, -1 if the annotation arrays are too small, or
    -2 where a record is not of the common shape (the Python reader then reads them all).
    """
    cdef Py_ssize_t n = len(records), i, cap = index.shape[0], k = 0, slot
    cdef object rec, anns, a, m, eid, got, lang
    cdef double s, e
    try:
        for i in range(n):
            rec = records[i]
            eid = _ty_get(rec, "example_id")
            anns = _ty_get(rec, "annotations")
            if type(anns) is not list or len(<list>anns) == 0:
                raise _TyFallback()
            lang = _ty_get(rec, "language")
            _ty_get(rec, "question_text")
            _ty_get(rec, "document_plaintext")
            if type(eid) is not int and type(eid) is not str:
                raise _TyFallback()
            if k + len(<list>anns) > cap:
                return -1
            got = slot_of.setdefault(eid, len(ids))
            slot = got
            if slot == len(ids):
                ids.append(eid)
                langs.append(lang)
            else:
                langs[slot] = lang
            slot_lang[slot] = _ty_lang(lang)
            slot_lo[slot] = k
            for a in <list>anns:
                index[k] = _ty_int(_ty_get(_ty_get(a, "passage_answer"), "candidate_index"))
                m = _ty_get(a, "minimal_answer")
                s = _ty_int(_ty_get(m, "plaintext_start_byte"))
                e = _ty_int(_ty_get(m, "plaintext_end_byte"))
                if (s < 0) != (e < 0) or (s >= 0 and s > e):
                    raise _TyFallback()
                start[k] = s
                end[k] = e
                yes_no[k] = _ty_yes_no(_ty_get(a, "yes_no_answer"), True)
                k += 1
            slot_hi[slot] = k
    except _TyFallback:
        return -2
    return k


def tydi_walk_predictions(list records, dict row_of, list langs, list pscore_obj,
                          list mscore_obj, int8_t[::1] lang, double[::1] index,
                          double[::1] start, double[::1] end, uint8_t[::1] yes_no,
                          double[::1] pscore, double[::1] mscore):
    """Read prediction records into rows, one per distinct id in order of first appearance,
    a repeated id's row taking the later record. A record without ``minimal_answer`` takes
    the previous record's span (the script's rule).

    Returns the number of rows, or -2 where a record is not of the common shape (a missing
    field, a non-integer offset or index, a score that is not a finite float or int, ...).
    """
    cdef Py_ssize_t n = len(records), i, row
    cdef object rec, m, eid, got, v, ps, ms
    cdef PyObject* p
    cdef double s = 0, e = 0, idx, fps, fms
    cdef bint have_span = False
    cdef uint8_t yn
    try:
        for i in range(n):
            rec = records[i]
            if type(rec) is not dict:
                raise _TyFallback()
            eid = _ty_get(rec, "example_id")
            if type(eid) is not int and type(eid) is not str:
                raise _TyFallback()
            p = PyDict_GetItemWithError(rec, "passage_answer_index")
            idx = -1.0 if p == NULL else _ty_int(<object>p)
            p = PyDict_GetItemWithError(rec, "minimal_answer")
            if p != NULL:
                m = <object>p
                s = _ty_int(_ty_get(m, "start_byte_offset"))
                e = _ty_int(_ty_get(m, "end_byte_offset"))
                if (s < 0) != (e < 0) or (s >= 0 and s > e):
                    raise _TyFallback()
                have_span = True
            elif not have_span:
                raise _TyFallback()
            yn = 0
            p = PyDict_GetItemWithError(rec, "yes_no_answer")
            if p != NULL:
                yn = _ty_yes_no(<object>p, False)
                if yn != 0 and not (s < 0 and e < 0):
                    raise _TyFallback()
            v = _ty_get(rec, "language")
            ps = _ty_get(rec, "passage_answer_score")
            ms = _ty_get(rec, "minimal_answer_score")
            if type(ps) is float:
                fps = ps
            elif type(ps) is int:
                try:
                    fps = float(ps)
                except OverflowError:
                    raise _TyFallback()
                ps = fps
            else:
                raise _TyFallback()
            if type(ms) is float:
                fms = ms
            elif type(ms) is int:
                try:
                    fms = float(ms)
                except OverflowError:
                    raise _TyFallback()
                ms = fms
            else:
                raise _TyFallback()
            got = row_of.setdefault(eid, len(langs))
            row = got
            if row == len(langs):
                langs.append(v)
                pscore_obj.append(ps)
                mscore_obj.append(ms)
            else:
                langs[row] = v
                pscore_obj[row] = ps
                mscore_obj[row] = ms
            lang[row] = _ty_lang(v)
            index[row] = idx
            start[row] = s
            end[row] = e
            yes_no[row] = yn
            pscore[row] = fps
            mscore[row] = fms
    except _TyFallback:
        return -2
    return len(langs)


def tydi_lookup(list order, dict slot_of, dict row_of, int64_t[::1] gold_rows,
                int64_t[::1] pred_rows):
    """``gold_rows[i] = slot_of[order[i]]`` and ``pred_rows[i] = row_of.get(order[i], -1)``."""
    cdef Py_ssize_t i, n = len(order)
    cdef PyObject* v
    cdef object key
    for i in range(n):
        key = order[i]
        v = PyDict_GetItemWithError(slot_of, key)
        if v == NULL:
            raise KeyError(key)
        gold_rows[i] = <object>v
        v = PyDict_GetItemWithError(row_of, key)
        pred_rows[i] = -1 if v == NULL else <int64_t>(<object>v)
