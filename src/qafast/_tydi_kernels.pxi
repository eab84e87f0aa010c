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
# Reading parsed records: the common shapes in one C loop over borrowed references; anything
# else is left to the Python reader (return -2), which gives the same result or the precise
# error. The records of a large file lie far apart in memory (each beside its document), so
# the loop touches each object once, and every id it keeps is a new int object: the sets and
# dicts built from the ids later then read small objects allocated side by side.
# ---------------------------------------------------------------------------------------------

from libc.stdint cimport int8_t
from libc.string cimport memcmp

cdef extern from "Python.h":
    PyObject* PyDict_GetItemWithError(object d, object key) except? NULL
    PyObject* _ty_dict_get "PyDict_GetItemWithError"(PyObject* d, PyObject* key)
    PyObject* _ty_err "PyErr_Occurred"()
    bint _ty_is_dict "PyDict_CheckExact"(PyObject* o)
    bint _ty_is_list "PyList_CheckExact"(PyObject* o)
    bint _ty_is_int "PyLong_CheckExact"(PyObject* o)
    bint _ty_is_str "PyUnicode_CheckExact"(PyObject* o)
    bint _ty_is_float "PyFloat_CheckExact"(PyObject* o)
    bint _ty_ascii "PyUnicode_IS_COMPACT_ASCII"(PyObject* o)
    Py_ssize_t _ty_str_len "PyUnicode_GET_LENGTH"(PyObject* o)
    const char* _ty_str_data "PyUnicode_DATA"(PyObject* o)
    Py_ssize_t _ty_list_len "PyList_GET_SIZE"(PyObject* o)
    PyObject* _ty_list_item "PyList_GET_ITEM"(PyObject* o, Py_ssize_t i)
    long long _ty_as_ll "PyLong_AsLongLongAndOverflow"(PyObject* o, int* overflow)
    double _ty_float_value "PyFloat_AS_DOUBLE"(PyObject* o)
    PyObject* PyDict_SetDefault(object d, object key, object default) except NULL  # borrowed

cdef object _TY_YES_NO = {"none": 0, "yes": 1, "no": 2}
cdef tuple _TY_LANG_NAMES = ("english", "arabic", "bengali", "finnish", "indonesian",
                             "japanese", "swahili", "korean", "russian", "telugu", "thai")
cdef object _TY_LANG = {lang: i for i, lang in enumerate(_TY_LANG_NAMES)}
cdef double _TY_LIMIT = 4503599627370496.0  # 2**52

# the C names of the languages, for comparing compact ASCII strings without hashing them
cdef const char* _TY_LANG_C[11]
_TY_LANG_C[:] = [b"english", b"arabic", b"bengali", b"finnish", b"indonesian", b"japanese",
                 b"swahili", b"korean", b"russian", b"telugu", b"thai"]
cdef Py_ssize_t _TY_LANG_LEN[11]
_TY_LANG_LEN[:] = [7, 6, 7, 7, 10, 8, 7, 6, 7, 6, 4]


cdef inline PyObject* _ty_field(PyObject* d, str key) except? NULL:
    # d[key] (borrowed) when d is a dict holding key; NULL when it is not
    if not _ty_is_dict(d):
        return NULL
    return _ty_dict_get(d, <PyObject*>key)  # NULL and an error: a key's __eq__ failed


cdef inline bint _ty_small(PyObject* v, double* out) noexcept:
    # an int (not a bool) within 2**52 in size, as a double; False for anything else
    cdef int overflow = 0
    cdef long long x
    if v == NULL or not _ty_is_int(v):
        return False
    x = _ty_as_ll(v, &overflow)
    if overflow or x > <long long>_TY_LIMIT or x < -<long long>_TY_LIMIT:
        return False
    out[0] = <double>x
    return True


cdef inline int _ty_yes_no_code(PyObject* v, bint gold) except -2:
    # 0 none, 1 yes, 2 no (compared lowered); 3 for any other string in gold; -1: the Python
    # reader decides (not a string, or any other string in a prediction)
    cdef Py_ssize_t n, i
    cdef const char* c
    cdef char low[4]
    cdef PyObject* code
    if v == NULL or not _ty_is_str(v):
        return -1
    if _ty_ascii(v):
        n = _ty_str_len(v)
        if 2 <= n <= 4:
            c = _ty_str_data(v)
            for i in range(n):
                low[i] = c[i] + 32 if 65 <= c[i] <= 90 else c[i]
            if n == 4 and memcmp(low, b"none", 4) == 0:
                return 0
            if n == 3 and memcmp(low, b"yes", 3) == 0:
                return 1
            if n == 2 and memcmp(low, b"no", 2) == 0:
                return 2
        return 3 if gold else -1
    # any other string: as str.lower() and the dict decide
    code = PyDict_GetItemWithError(_TY_YES_NO, (<object>v).lower())
    if code != NULL:
        return <int><long>(<object>code)
    return 3 if gold else -1


cdef inline int _ty_lang_code(PyObject* v) noexcept:
    # the place of a language in the script's list, -1 for any other string, -2 for a
    # non-string (the Python reader decides)
    cdef Py_ssize_t n, i
    cdef const char* c
    if v == NULL or not _ty_is_str(v):
        return -2
    if not _ty_ascii(v):
        return -1  # every name in the list is ASCII
    n = _ty_str_len(v)
    c = _ty_str_data(v)
    for i in range(11):
        if n == _TY_LANG_LEN[i] and memcmp(c, _TY_LANG_C[i], n) == 0:
            return <int>i
    return -1


cdef inline object _ty_id(PyObject* v):
    # the id to keep: a new int of an int's value, the string itself; None: the Python reader
    # decides (any other type)
    cdef int overflow = 0
    cdef long long x
    if _ty_is_str(v):
        return <object>v
    if not _ty_is_int(v):
        return None
    x = _ty_as_ll(v, &overflow)
    if overflow:
        return <object>v
    return x  # a new int object, unless a small cached one


cdef inline object _ty_language(PyObject* v, int code):
    # the language to keep: the shared name of a listed language, else the record's object
    return _TY_LANG_NAMES[code] if code >= 0 else <object>v


def tydi_walk_gold(list records, dict slot_of, list ids, list langs, int64_t[::1] slot_lo,
                   int64_t[::1] slot_hi, int8_t[::1] slot_lang, double[::1] index,
                   double[::1] start, double[::1] end, uint8_t[::1] yes_no):
    """Read gold records (dicts, as ``json.loads`` gives them) into slots, one per distinct id in
    order of first appearance, a repeated id's slot taking the later record. An int id is kept
    as an int of the same value (a new object), a listed language as its shared name.

    Returns the number of annotations written, -1 if the annotation arrays are too small, or
    -2 where a record is not of the common shape (the Python reader then reads them all).
    """
    cdef Py_ssize_t n = len(records), i, j, n_anns, cap = index.shape[0], k = 0, slot
    cdef PyObject* rec
    cdef PyObject* anns
    cdef PyObject* a
    cdef PyObject* m
    cdef PyObject* lang
    cdef object eid, got
    cdef double s, e, idx
    cdef int code, yn
    for i in range(n):
        rec = _ty_list_item(<PyObject*>records, i)
        anns = _ty_field(rec, "annotations")
        if anns == NULL or not _ty_is_list(anns):
            return -2
        n_anns = _ty_list_len(anns)
        lang = _ty_field(rec, "language")
        code = _ty_lang_code(lang)
        if n_anns == 0 or code == -2 or _ty_field(rec, "question_text") == NULL or \
                _ty_field(rec, "document_plaintext") == NULL:
            return -2
        a = _ty_field(rec, "example_id")
        if a == NULL:
            return -2
        eid = _ty_id(a)
        if eid is None:
            return -2
        if k + n_anns > cap:
            return -1
        got = <object>PyDict_SetDefault(slot_of, eid, len(ids))
        slot = got
        if slot == len(ids):
            ids.append(eid)
            langs.append(_ty_language(lang, code))
        else:
            langs[slot] = _ty_language(lang, code)
        slot_lang[slot] = code
        slot_lo[slot] = k
        for j in range(n_anns):
            a = _ty_list_item(anns, j)
            m = _ty_field(a, "passage_answer")
            if m == NULL or not _ty_small(_ty_field(m, "candidate_index"), &idx):
                return -2
            m = _ty_field(a, "minimal_answer")
            if m == NULL or not _ty_small(_ty_field(m, "plaintext_start_byte"), &s) or \
                    not _ty_small(_ty_field(m, "plaintext_end_byte"), &e):
                return -2
            if (s < 0) != (e < 0) or (s >= 0 and s > e):
                return -2
            yn = _ty_yes_no_code(_ty_field(a, "yes_no_answer"), True)
            if yn < 0:
                return -2
            index[k] = idx
            start[k] = s
            end[k] = e
            yes_no[k] = <uint8_t>yn
            k += 1
        slot_hi[slot] = k
    return k


cdef inline object _ty_score(PyObject* v, double* out):
    # a float, or an int float() converts: the float object the script compares (None: the
    # Python reader decides)
    if v == NULL:
        return None
    if _ty_is_float(v):
        out[0] = _ty_float_value(v)
        return <object>v
    if not _ty_is_int(v):
        return None
    try:
        out[0] = float(<object>v)
    except OverflowError:
        return None
    return out[0]


def tydi_walk_predictions(list records, dict row_of, list langs, list pscore_obj,
                          list mscore_obj, int8_t[::1] lang, double[::1] index,
                          double[::1] start, double[::1] end, uint8_t[::1] yes_no,
                          double[::1] pscore, double[::1] mscore):
    """Read prediction records into rows, one per distinct id in order of first appearance,
    a repeated id's row taking the later record. A record without ``minimal_answer`` takes
    the previous record's span (the script's rule). Ids and languages are kept as in
    :func:`tydi_walk_gold`.

    Returns the number of rows, or -2 where a record is not of the common shape (a missing
    field, a non-integer offset or index, a score that is not a finite float or int, ...).
    """
    cdef Py_ssize_t n = len(records), i, row
    cdef PyObject* rec
    cdef PyObject* v
    cdef PyObject* m
    cdef PyObject* language
    cdef object eid, got, ps, ms
    cdef double s = 0, e = 0, idx, fps = 0, fms = 0
    cdef bint have_span = False
    cdef int yn, code
    for i in range(n):
        rec = _ty_list_item(<PyObject*>records, i)
        if not _ty_is_dict(rec):
            return -2
        v = _ty_field(rec, "example_id")
        if v == NULL:
            return -2
        eid = _ty_id(v)
        if eid is None:
            return -2
        idx = -1.0
        v = _ty_field(rec, "passage_answer_index")
        if v != NULL and not _ty_small(v, &idx):
            return -2
        m = _ty_field(rec, "minimal_answer")
        if m != NULL:
            if not _ty_small(_ty_field(m, "start_byte_offset"), &s) or \
                    not _ty_small(_ty_field(m, "end_byte_offset"), &e):
                return -2
            if (s < 0) != (e < 0) or (s >= 0 and s > e):
                return -2
            have_span = True
        elif not have_span:
            return -2
        yn = 0
        v = _ty_field(rec, "yes_no_answer")
        if v != NULL:
            yn = _ty_yes_no_code(v, False)
            if yn < 0 or (yn != 0 and not (s < 0 and e < 0)):
                return -2
        language = _ty_field(rec, "language")
        code = _ty_lang_code(language)
        if code == -2:
            return -2
        ps = _ty_score(_ty_field(rec, "passage_answer_score"), &fps)
        ms = _ty_score(_ty_field(rec, "minimal_answer_score"), &fms)
        if ps is None or ms is None:
            return -2
        got = <object>PyDict_SetDefault(row_of, eid, len(langs))
        row = got
        if row == len(langs):
            langs.append(_ty_language(language, code))
            pscore_obj.append(ps)
            mscore_obj.append(ms)
        else:
            langs[row] = _ty_language(language, code)
            pscore_obj[row] = ps
            mscore_obj[row] = ms
        lang[row] = code
        index[row] = idx
        start[row] = s
        end[row] = e
        yes_no[row] = <uint8_t>yn
        pscore[row] = fps
        mscore[row] = fms
    return len(langs)


def tydi_rows(list keys, dict row_of, int64_t[::1] rows):
    """``rows[i] = row_of.get(keys[i], -1)`` (``row_of``'s values are ints)."""
    cdef Py_ssize_t i, n = len(keys)
    cdef PyObject* v
    if rows.shape[0] < n:
        raise ValueError("tydi_rows: rows is shorter than keys")
    for i in range(n):
        v = PyDict_GetItemWithError(row_of, keys[i])
        rows[i] = -1 if v == NULL else <int64_t>(<object>v)


# ---------------------------------------------------------------------------------------------
# Gold JSONL (the gzipped bytes): find each line's example_id, language and annotations
# without decoding its document. A line is taken only when it is plainly valid JSON (strict
# strings of valid UTF-8 without surrogates, no NaN/Infinity, keys without escapes at the top
# level); any other line is left to json.loads, which then decides as in the script.
# ---------------------------------------------------------------------------------------------

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING

cdef enum:
    _TY_MAX_DEPTH = 200


cdef inline Py_ssize_t _ty_ws(const unsigned char* s, Py_ssize_t p, Py_ssize_t n) noexcept nogil:
    while p < n and (s[p] == 32 or s[p] == 9 or s[p] == 10 or s[p] == 13):
        p += 1
    return p


cdef inline bint _ty_hex(unsigned char c) noexcept nogil:
    return (48 <= c <= 57) or (65 <= c <= 70) or (97 <= c <= 102)


cdef Py_ssize_t _ty_string(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                           bint* escaped) noexcept nogil:
    # s[p] is the opening quote; returns the position after the closing one, or -1
    cdef unsigned char c, c1, c2, c3
    cdef Py_ssize_t k
    p += 1
    while p < n:
        c = s[p]
        if c == 34:
            return p + 1
        if c == 92:
            escaped[0] = True
            if p + 1 >= n:
                return -1
            c = s[p + 1]
            if c == 117:  # \uXXXX
                if p + 5 >= n:
                    return -1
                for k in range(2, 6):
                    if not _ty_hex(s[p + k]):
                        return -1
                p += 6
            elif c == 34 or c == 92 or c == 47 or c == 98 or c == 102 or c == 110 or \
                    c == 114 or c == 116:
                p += 2
            else:
                return -1
        elif c < 32:
            return -1
        elif c < 128:
            p += 1
        elif 0xC2 <= c <= 0xDF:
            if p + 1 >= n or (s[p + 1] & 0xC0) != 0x80:
                return -1
            p += 2
        elif 0xE0 <= c <= 0xEF:
            if p + 2 >= n:
                return -1
            c1 = s[p + 1]
            c2 = s[p + 2]
            if (c1 & 0xC0) != 0x80 or (c2 & 0xC0) != 0x80:
                return -1
            if c == 0xE0 and c1 < 0xA0:  # overlong
                return -1
            if c == 0xED and c1 >= 0xA0:  # a surrogate
                return -1
            p += 3
        elif 0xF0 <= c <= 0xF4:
            if p + 3 >= n:
                return -1
            c1 = s[p + 1]
            c2 = s[p + 2]
            c3 = s[p + 3]
            if (c1 & 0xC0) != 0x80 or (c2 & 0xC0) != 0x80 or (c3 & 0xC0) != 0x80:
                return -1
            if (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 >= 0x90):
                return -1
            p += 4
        else:
            return -1
    return -1


cdef Py_ssize_t _ty_number(const unsigned char* s, Py_ssize_t p, Py_ssize_t n) noexcept nogil:
    if p < n and s[p] == 45:
        p += 1
    if p >= n:
        return -1
    if s[p] == 48:
        p += 1
    elif 49 <= s[p] <= 57:
        while p < n and 48 <= s[p] <= 57:
            p += 1
    else:
        return -1
    if p < n and s[p] == 46:
        p += 1
        if p >= n or not (48 <= s[p] <= 57):
            return -1
        while p < n and 48 <= s[p] <= 57:
            p += 1
    if p < n and (s[p] == 101 or s[p] == 69):
        p += 1
        if p < n and (s[p] == 43 or s[p] == 45):
            p += 1
        if p >= n or not (48 <= s[p] <= 57):
            return -1
        while p < n and 48 <= s[p] <= 57:
            p += 1
    return p


cdef inline bint _ty_word(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                          const char* w, Py_ssize_t k) noexcept nogil:
    cdef Py_ssize_t i
    if p + k > n:
        return False
    for i in range(k):
        if s[p + i] != <unsigned char>w[i]:
            return False
    return True


cdef struct _TyOut:
    # where one gold line's annotations go: values at [base, base + count) of the arrays
    double* index
    double* start
    double* end
    uint8_t* yes_no
    Py_ssize_t base
    Py_ssize_t count
    Py_ssize_t cap


cdef Py_ssize_t _ty_int_at(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                           double* out) noexcept nogil:
    # a plain JSON integer within 2**52 (else -1: the line goes to json.loads)
    cdef Py_ssize_t q = p, digits = 0
    cdef bint neg = False
    cdef long long x = 0
    if q < n and s[q] == 45:
        neg = True
        q += 1
    if q >= n or not (48 <= s[q] <= 57) or (s[q] == 48 and q + 1 < n and 48 <= s[q + 1] <= 57):
        return -1
    while q < n and 48 <= s[q] <= 57:
        x = x * 10 + (s[q] - 48)
        q += 1
        digits += 1
        if digits > 15:
            return -1
    if q < n and (s[q] == 46 or s[q] == 101 or s[q] == 69):
        return -1
    if x > <long long>_TY_LIMIT:
        return -1
    out[0] = <double>(-x if neg else x)
    return q


cdef Py_ssize_t _ty_yes_no_at(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                              uint8_t* out) noexcept nogil:
    # an ASCII string without escapes, compared lowered with none/yes/no (else code 3)
    cdef Py_ssize_t q = p + 1, k
    cdef unsigned char c
    cdef char low[5]
    if p >= n or s[p] != 34:
        return -1
    while q < n and s[q] != 34:
        c = s[q]
        if c == 92 or c < 32 or c >= 128:
            return -1
        if q - p - 1 < 5:
            low[q - p - 1] = <char>(c + 32 if 65 <= c <= 90 else c)
        q += 1
    if q >= n:
        return -1
    k = q - p - 1
    if k == 4 and low[0] == b'n' and low[1] == b'o' and low[2] == b'n' and low[3] == b'e':
        out[0] = 0
    elif k == 3 and low[0] == b'y' and low[1] == b'e' and low[2] == b's':
        out[0] = 1
    elif k == 2 and low[0] == b'n' and low[1] == b'o':
        out[0] = 2
    else:
        out[0] = 3
    return q + 1


cdef Py_ssize_t _ty_fields(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, int depth,
                           int kind, double* a, double* b, bint* got_a,
                           bint* got_b) noexcept nogil:
    # an object of kind 0 (passage_answer: candidate_index -> a), 1 (gold minimal_answer:
    # plaintext_start_byte -> a, plaintext_end_byte -> b) or 2 (predicted minimal_answer:
    # start_byte_offset -> a, end_byte_offset -> b); other keys are only checked
    cdef Py_ssize_t q, ka, kb
    cdef bint escaped
    if p >= n or s[p] != 123:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p < n and s[p] == 125:
        return p + 1
    while True:
        if p >= n or s[p] != 34:
            return -1
        escaped = False
        q = _ty_string(s, p, n, &escaped)
        if q < 0 or escaped:
            return -1
        ka = p + 1
        kb = q - 1
        p = _ty_ws(s, q, n)
        if p >= n or s[p] != 58:
            return -1
        p = _ty_ws(s, p + 1, n)
        if kind == 0 and _ty_key(s, ka, kb, b"candidate_index", 15):
            p = _ty_int_at(s, p, n, a)
            got_a[0] = True
        elif kind == 1 and _ty_key(s, ka, kb, b"plaintext_start_byte", 20):
            p = _ty_int_at(s, p, n, a)
            got_a[0] = True
        elif kind == 1 and _ty_key(s, ka, kb, b"plaintext_end_byte", 18):
            p = _ty_int_at(s, p, n, b)
            got_b[0] = True
        elif kind == 2 and _ty_key(s, ka, kb, b"start_byte_offset", 17):
            p = _ty_int_at(s, p, n, a)
            got_a[0] = True
        elif kind == 2 and _ty_key(s, ka, kb, b"end_byte_offset", 15):
            p = _ty_int_at(s, p, n, b)
            got_b[0] = True
        else:
            p = _ty_value(s, p, n, depth + 1, NULL, NULL)
        if p < 0:
            return -1
        p = _ty_ws(s, p, n)
        if p >= n:
            return -1
        if s[p] == 125:
            return p + 1
        if s[p] != 44:
            return -1
        p = _ty_ws(s, p + 1, n)


cdef Py_ssize_t _ty_annotation(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                               _TyOut* out) noexcept nogil:
    cdef Py_ssize_t q, ka, kb, k
    cdef bint escaped, has_pa = False, has_ma = False, has_yn = False
    cdef bint got_i = False, got_s = False, got_e = False, unused = False
    cdef double idx = 0, st = 0, en = 0, dummy = 0
    cdef uint8_t yn = 0
    if p >= n or s[p] != 123 or out.count >= out.cap:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p < n and s[p] == 125:
        return -1  # an annotation without its fields: json.loads, then the error
    while True:
        if p >= n or s[p] != 34:
            return -1
        escaped = False
        q = _ty_string(s, p, n, &escaped)
        if q < 0 or escaped:
            return -1
        ka = p + 1
        kb = q - 1
        p = _ty_ws(s, q, n)
        if p >= n or s[p] != 58:
            return -1
        p = _ty_ws(s, p + 1, n)
        if _ty_key(s, ka, kb, b"passage_answer", 14):
            got_i = False
            p = _ty_fields(s, p, n, 3, 0, &idx, &dummy, &got_i, &unused)
            has_pa = True
        elif _ty_key(s, ka, kb, b"minimal_answer", 14):
            got_s = got_e = False
            p = _ty_fields(s, p, n, 3, 1, &st, &en, &got_s, &got_e)
            has_ma = True
        elif _ty_key(s, ka, kb, b"yes_no_answer", 13):
            p = _ty_yes_no_at(s, p, n, &yn)
            has_yn = True
        else:
            p = _ty_value(s, p, n, 3, NULL, NULL)
        if p < 0:
            return -1
        p = _ty_ws(s, p, n)
        if p >= n:
            return -1
        if s[p] == 125:
            break
        if s[p] != 44:
            return -1
        p = _ty_ws(s, p + 1, n)
    if not (has_pa and has_ma and has_yn and got_i and got_s and got_e):
        return -1
    if (st < 0) != (en < 0) or (st >= 0 and st > en):
        return -1
    k = out.base + out.count
    out.index[k] = idx
    out.start[k] = st
    out.end[k] = en
    out.yes_no[k] = yn
    out.count += 1
    return p + 1


cdef Py_ssize_t _ty_annotations(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                                _TyOut* out) noexcept nogil:
    out.count = 0  # a repeated "annotations" key: the last one wins
    if p >= n or s[p] != 91:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p < n and s[p] == 93:
        return p + 1  # none (an error unless a later "annotations" key has some)
    while True:
        p = _ty_annotation(s, p, n, out)
        if p < 0:
            return -1
        p = _ty_ws(s, p, n)
        if p >= n:
            return -1
        if s[p] == 93:
            return p + 1
        if s[p] != 44:
            return -1
        p = _ty_ws(s, p + 1, n)


cdef Py_ssize_t _ty_value(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, int depth,
                          int64_t* found, _TyOut* out) noexcept nogil:
    cdef unsigned char c
    cdef bint escaped = False
    cdef Py_ssize_t q, ka, kb, v
    cdef int which
    if p >= n or depth > _TY_MAX_DEPTH:
        return -1
    c = s[p]
    if c == 34:
        return _ty_string(s, p, n, &escaped)
    if c == 45 or 48 <= c <= 57:
        return _ty_number(s, p, n)
    if c == 116:
        return p + 4 if _ty_word(s, p, n, b"true", 4) else -1
    if c == 102:
        return p + 5 if _ty_word(s, p, n, b"false", 5) else -1
    if c == 110:
        return p + 4 if _ty_word(s, p, n, b"null", 4) else -1
    if c == 91:  # array
        p = _ty_ws(s, p + 1, n)
        if p < n and s[p] == 93:
            return p + 1
        while True:
            p = _ty_value(s, p, n, depth + 1, NULL, NULL)
            if p < 0:
                return -1
            p = _ty_ws(s, p, n)
            if p >= n:
                return -1
            if s[p] == 93:
                return p + 1
            if s[p] != 44:
                return -1
            p = _ty_ws(s, p + 1, n)
    if c == 123:  # object
        p = _ty_ws(s, p + 1, n)
        if p < n and s[p] == 125:
            return p + 1
        while True:
            if p >= n or s[p] != 34:
                return -1
            escaped = False
            q = _ty_string(s, p, n, &escaped)
            if q < 0 or (escaped and found != NULL):
                return -1
            ka = p + 1
            kb = q - 1
            p = _ty_ws(s, q, n)
            if p >= n or s[p] != 58:
                return -1
            p = _ty_ws(s, p + 1, n)
            v = p
            if found != NULL and _ty_key(s, ka, kb, b"annotations", 11):
                p = _ty_annotations(s, p, n, out)
            else:
                p = _ty_value(s, p, n, depth + 1, NULL, NULL)
            if p < 0:
                return -1
            if found != NULL:
                which = -1
                if _ty_key(s, ka, kb, b"example_id", 10):
                    which = 0
                elif _ty_key(s, ka, kb, b"language", 8):
                    which = 1
                elif _ty_key(s, ka, kb, b"annotations", 11):
                    which = 2
                elif _ty_key(s, ka, kb, b"question_text", 13):
                    which = 3
                elif _ty_key(s, ka, kb, b"document_plaintext", 18):
                    which = 4
                if which >= 0:  # the last of repeated keys wins, as in json.loads
                    found[2 * which] = v
                    found[2 * which + 1] = p
            p = _ty_ws(s, p, n)
            if p >= n:
                return -1
            if s[p] == 125:
                return p + 1
            if s[p] != 44:
                return -1
            p = _ty_ws(s, p + 1, n)
    return -1


cdef inline bint _ty_key(const unsigned char* s, Py_ssize_t a, Py_ssize_t b, const char* w,
                         Py_ssize_t k) noexcept nogil:
    return b - a == k and _ty_word(s, a, b, w, k)


def tydi_scan_gold(const unsigned char[::1] data, const int64_t[::1] line_start,
                   const int64_t[::1] line_end, int64_t[:, ::1] found, int64_t[::1] ann_lo,
                   int64_t[::1] ann_hi, double[::1] index, double[::1] start,
                   double[::1] end, uint8_t[::1] yes_no):
    """For each line ``data[line_start[i]:line_end[i]]`` (a gold record), set ``found[i]`` to
    the (start, end) byte ranges of its example_id, language, annotations, question_text and
    document_plaintext values and write its annotations (candidate index, minimal span,
    yes/no code) at ``[ann_lo[i], ann_hi[i])`` of the arrays; or set ``found[i, 0] = -1``
    when the line is left to json.loads: it is not plainly valid JSON, lacks a field, or has
    a value qafast reads only through Python (a float, a big number, an escaped or non-ASCII
    yes/no, a bad span). Returns the number of lines found."""
    cdef Py_ssize_t m = line_start.shape[0], i, j, a, b, p, ok = 0
    cdef const unsigned char* s
    cdef _TyOut out
    out.index = &index[0] if index.shape[0] else NULL
    out.start = &start[0] if start.shape[0] else NULL
    out.end = &end[0] if end.shape[0] else NULL
    out.yes_no = &yes_no[0] if yes_no.shape[0] else NULL
    out.base = 0
    with nogil:
        for i in range(m):
            a = line_start[i]
            b = line_end[i]
            for j in range(10):
                found[i, j] = -1
            ann_lo[i] = ann_hi[i] = out.base
            # json.loads(bytes) reads UTF-8 only when the first two bytes are not NUL
            if b - a < 2 or data[a] != 123 or data[a + 1] == 0:
                continue
            s = &data[a]
            out.count = 0
            out.cap = index.shape[0] - out.base
            p = _ty_value(s, 0, b - a, 0, &found[i, 0], &out)
            if p < 0 or _ty_ws(s, p, b - a) != b - a:
                found[i, 0] = -1
                continue
            for j in range(5):
                if found[i, 2 * j] < 0:
                    found[i, 0] = -1
                    break
            if out.count == 0:
                found[i, 0] = -1  # no annotations: json.loads, then the error
            if found[i, 0] >= 0:
                for j in range(10):
                    found[i, j] += a
                ann_hi[i] = out.base + out.count
                out.base += out.count
                ok += 1
    return ok


def tydi_gather_gold(const unsigned char[::1] data, const int64_t[:, ::1] found,
                     int fields=2):
    """The JSON text ``[[id, language], ...]`` of the lines ``found`` (the first ``fields``
    byte ranges of each row; with ``fields=1``, the flat list ``[id, ...]``)."""
    cdef Py_ssize_t m = found.shape[0], i, j, total = 2, k = 0
    cdef bint inner = fields != 1
    cdef char* out
    cdef bytes result
    if fields < 1 or 2 * fields > found.shape[1]:
        raise ValueError("tydi_gather_gold: fields does not fit found")
    for i in range(m):
        if found[i, 0] >= 0:
            total += 2 * fields + 2
            for j in range(fields):
                total += found[i, 2 * j + 1] - found[i, 2 * j]
    result = PyBytes_FromStringAndSize(NULL, total)
    out = PyBytes_AS_STRING(result)
    out[k] = b'['
    k += 1
    for i in range(m):
        if found[i, 0] < 0:
            continue
        if inner:
            out[k] = b'['
            k += 1
        for j in range(fields):
            memcpy(&out[k], &data[found[i, 2 * j]], found[i, 2 * j + 1] - found[i, 2 * j])
            k += found[i, 2 * j + 1] - found[i, 2 * j]
            if j < fields - 1:
                out[k] = b','
                k += 1
        if inner:
            out[k] = b']'
            k += 1
        out[k] = b','
        k += 1
    if k > 1:
        k -= 1  # the last comma
    out[k] = b']'
    k += 1
    return result[:k]


# ---------------------------------------------------------------------------------------------
# Prediction JSONL: the same scanner over each line's fields; scores converted as Python's
# float() converts the number json.loads gives
# ---------------------------------------------------------------------------------------------

cdef extern from "Python.h":
    double PyOS_string_to_double(const char* s, char** endptr, PyObject* overflow_exception) except? -1.0


cdef Py_ssize_t _ty_score_at(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                             double* out) except? -2:
    cdef Py_ssize_t q = _ty_number(s, p, n), k
    cdef char text[48]
    cdef bint is_int = True
    if q < 0 or q - p >= 48:
        return -1
    for k in range(q - p):
        text[k] = <char>s[p + k]
        if s[p + k] == 46 or s[p + k] == 101 or s[p + k] == 69:
            is_int = False
    text[q - p] = 0
    out[0] = PyOS_string_to_double(text, NULL, NULL)
    if is_int:
        if out[0] == 0:
            out[0] = 0.0  # json reads -0 as the int 0, whose float is +0.0
        elif out[0] - out[0] != 0:
            return -1  # float() of so large an int fails in the script
    return q


def tydi_scan_predictions(const unsigned char[::1] data, const int64_t[::1] line_start,
                          const int64_t[::1] line_end, int64_t[:, ::1] found,
                          uint8_t[:, ::1] has, double[::1] index, double[::1] start,
                          double[::1] end, uint8_t[::1] yes_no, double[::1] pscore,
                          double[::1] mscore):
    """For each prediction line, ``found[i, 0:4]`` gets the byte ranges of its example_id and
    language, ``has[i]`` whether it gives (passage_answer_index, minimal_answer,
    yes_no_answer), and the arrays their values and both scores; ``found[i, 0] = -1`` leaves
    the line to json.loads (not plainly valid JSON, a field missing, a value only Python
    reads: a float index, a yes/no other than none/yes/no, a score that is not a number, ...).
    Returns the number of lines found."""
    cdef Py_ssize_t m = line_start.shape[0], i, j, a, b, p, q, ka, kb, ok = 0, nn
    cdef const unsigned char* s
    cdef bint escaped, bad, got_ps, got_ms, got_s, got_e
    cdef double dummy = 0
    for i in range(m):
        a = line_start[i]
        b = line_end[i]
        for j in range(4):
            found[i, j] = -1
        has[i, 0] = has[i, 1] = has[i, 2] = 0
        index[i] = -1
        start[i] = end[i] = 0
        yes_no[i] = 0
        if b - a < 2 or data[a] != 123:
            continue
        s = &data[a]
        nn = b - a
        bad = False
        got_ps = got_ms = False
        p = _ty_ws(s, 1, nn)
        if p < nn and s[p] == 125:
            continue
        while True:
            if p >= nn or s[p] != 34:
                bad = True
                break
            escaped = False
            q = _ty_string(s, p, nn, &escaped)
            if q < 0 or escaped:
                bad = True
                break
            ka = p + 1
            kb = q - 1
            p = _ty_ws(s, q, nn)
            if p >= nn or s[p] != 58:
                bad = True
                break
            p = _ty_ws(s, p + 1, nn)
            if _ty_key(s, ka, kb, b"example_id", 10):
                q = _ty_value(s, p, nn, 1, NULL, NULL)
                found[i, 0] = p + a
                found[i, 1] = q + a
            elif _ty_key(s, ka, kb, b"language", 8):
                q = _ty_value(s, p, nn, 1, NULL, NULL)
                found[i, 2] = p + a
                found[i, 3] = q + a
            elif _ty_key(s, ka, kb, b"passage_answer_index", 20):
                q = _ty_int_at(s, p, nn, &index[i])
                has[i, 0] = 1
            elif _ty_key(s, ka, kb, b"minimal_answer", 14):
                got_s = got_e = False
                q = _ty_fields(s, p, nn, 1, 2, &start[i], &end[i], &got_s, &got_e)
                if not (got_s and got_e):
                    q = -1
                has[i, 1] = 1
            elif _ty_key(s, ka, kb, b"yes_no_answer", 13):
                q = _ty_yes_no_at(s, p, nn, &yes_no[i])
                if q >= 0 and yes_no[i] == 3:
                    q = -1
                has[i, 2] = 1
            elif _ty_key(s, ka, kb, b"passage_answer_score", 20):
                q = _ty_score_at(s, p, nn, &pscore[i])
                got_ps = True
            elif _ty_key(s, ka, kb, b"minimal_answer_score", 20):
                q = _ty_score_at(s, p, nn, &mscore[i])
                got_ms = True
            else:
                q = _ty_value(s, p, nn, 1, NULL, NULL)
            if q < 0:
                bad = True
                break
            p = _ty_ws(s, q, nn)
            if p >= nn:
                bad = True
                break
            if s[p] == 125:
                p += 1
                break
            if s[p] != 44:
                bad = True
                break
            p = _ty_ws(s, p + 1, nn)
        if bad or _ty_ws(s, p, nn) != nn or not (got_ps and got_ms) or found[i, 0] < 0 \
                or found[i, 2] < 0:
            found[i, 0] = -1
            continue
        if has[i, 1] and ((start[i] < 0) != (end[i] < 0) or (start[i] >= 0 and start[i] > end[i])):
            found[i, 0] = -1
            continue
        ok += 1
    return ok


# ---------------------------------------------------------------------------------------------
# After the scanners: lines, the ids and languages they found, and each id's last line, in C
# loops over the file's bytes and the lists (the Python loops took as long as the scans)
# ---------------------------------------------------------------------------------------------

from libc.string cimport memchr

from cpython.unicode cimport PyUnicode_DecodeUTF8


cdef Py_ssize_t _ty_lines(const unsigned char* base, Py_ssize_t n, int64_t* starts,
                         int64_t* ends) noexcept nogil:
    # the lines of base[:n] split at \n, the text after the last newline counting only when
    # it is not empty; written when starts is not NULL; returns their number
    cdef Py_ssize_t p = 0, m = 0
    cdef const unsigned char* nl
    while p < n:
        nl = <const unsigned char*>memchr(base + p, 10, n - p)
        if starts != NULL:
            starts[m] = p
            ends[m] = n if nl == NULL else nl - base
        m += 1
        if nl == NULL:
            break
        p = nl - base + 1
    return m


def tydi_count_lines(const unsigned char[::1] data not None):
    """The number of lines :func:`tydi_line_bounds` finds in ``data``."""
    cdef Py_ssize_t n = data.shape[0], m
    with nogil:
        m = _ty_lines(&data[0] if n else NULL, n, NULL, NULL)
    return m


def tydi_line_bounds(const unsigned char[::1] data not None, int64_t[::1] starts,
                     int64_t[::1] ends):
    """Write the byte ranges ``[starts[i], ends[i])`` of the lines of ``data`` split at
    ``\n`` (the text after the last newline is a line only when it is not empty); the arrays
    hold :func:`tydi_count_lines` entries."""
    cdef Py_ssize_t n = data.shape[0]
    if starts.shape[0] < tydi_count_lines(data) or ends.shape[0] < starts.shape[0]:
        raise ValueError("tydi_line_bounds: the arrays do not hold every line")
    if starts.shape[0] == 0:
        return None
    with nogil:
        _ty_lines(&data[0] if n else NULL, n, &starts[0], &ends[0])
    return None


cdef inline object _ty_plain_int(const unsigned char* s, Py_ssize_t n):
    # a JSON integer within a long long's range as an int; None for any other text
    cdef Py_ssize_t i = 0
    cdef unsigned long long x = 0
    cdef bint neg = False
    if n > 0 and s[0] == 45:
        neg = True
        i = 1
    if i >= n or n - i > 19:  # 19 digits stay below 2**64
        return None
    while i < n:
        if not (48 <= s[i] <= 57):
            return None
        x = x * 10 + (s[i] - 48)
        i += 1
    if x > 9223372036854775807ULL:
        return None
    return -<long long>x if neg else <long long>x


cdef inline object _ty_plain_str(const unsigned char* s, Py_ssize_t n):
    # a JSON string without escapes (the scanner checked its UTF-8) as a str; None otherwise
    cdef Py_ssize_t i
    if n < 2 or s[0] != 34 or s[n - 1] != 34:
        return None
    for i in range(1, n - 1):
        if s[i] == 92:
            return None
    return PyUnicode_DecodeUTF8(<const char*>s + 1, n - 2, NULL)


def tydi_ids_langs(const unsigned char[::1] data not None, const int64_t[:, ::1] found,
                   list ids, list langs):
    """Append the example_id and language of each found line (``found[i, 0] >= 0``, the byte
    ranges of ``tydi_scan_gold`` or ``tydi_scan_predictions``) to ``ids`` and ``langs``, as
    ``json.loads`` reads them, with listed languages as their shared names. Returns False,
    leaving the lists to be cleared, at the first value that is neither an integer of at
    most 18 digits nor a string without escapes (``json.loads`` then reads them all)."""
    cdef Py_ssize_t m = found.shape[0], i, a, b, j, n = data.shape[0]
    cdef object v
    if found.shape[1] < 4:
        raise ValueError("tydi_ids_langs: found needs the id and language ranges")
    for i in range(m):
        if found[i, 0] < 0:
            continue
        for j in range(4):
            if not 0 <= found[i, j] <= n:
                raise ValueError("tydi_ids_langs: a range outside the data")
        a = found[i, 0]
        b = found[i, 1]
        if b <= a:
            return False
        v = _ty_plain_int(&data[a], b - a) if data[a] != 34 else _ty_plain_str(&data[a], b - a)
        if v is None:
            return False
        ids.append(v)
        a = found[i, 2]
        b = found[i, 3]
        if b <= a:
            return False
        v = _ty_plain_str(&data[a], b - a)
        if v is None:
            return False
        j = _ty_lang_code(<PyObject*>v)
        langs.append(_TY_LANG_NAMES[j] if j >= 0 else v)
    return True


def tydi_last_lines(list keys, dict slot_of, int64_t[::1] last):
    """Give each distinct key a slot in order of first appearance (``slot_of[key]``) and set
    ``last[slot]`` to the position of its last appearance in ``keys``; returns the number of
    slots, or -1 at the first key that is not an int or a str (the caller then decides)."""
    cdef Py_ssize_t n = len(keys), i, slot, count = 0
    cdef PyObject* key
    if last.shape[0] < n:
        raise ValueError("tydi_last_lines: last is shorter than keys")
    for i in range(n):
        key = _ty_list_item(<PyObject*>keys, i)
        if not (_ty_is_int(key) or _ty_is_str(key)):
            return -1
        slot = <object>PyDict_SetDefault(slot_of, <object>key, count)
        if slot == count:
            count += 1
        last[slot] = i
    return count


def tydi_lang_codes(list langs, int8_t[::1] codes):
    """``codes[i]``: the place of ``langs[i]`` among the script's languages, -1 for any other
    value (as dict keys compare)."""
    cdef Py_ssize_t n = len(langs), i
    cdef PyObject* v
    cdef PyObject* c
    if codes.shape[0] < n:
        raise ValueError("tydi_lang_codes: codes is shorter than langs")
    for i in range(n):
        v = _ty_list_item(<PyObject*>langs, i)
        if _ty_is_str(v):
            codes[i] = _ty_lang_code(v)
        else:
            try:
                c = PyDict_GetItemWithError(_TY_LANG, <object>v)
            except TypeError:  # unhashable: refused on reading
                c = NULL
            codes[i] = -1 if c == NULL else <int8_t><long>(<object>c)
    return None


# ---------------------------------------------------------------------------------------------
# One language's two threshold sweeps in one call: the examples' flags and scores gathered in
# the order of the script's id set, a stable sort by score (descending) and the sweep of
# tydi_curve, without the GIL. The numpy gathers and stable argsorts this replaces took a
# third of the scoring of 100,000 parsed questions.
# ---------------------------------------------------------------------------------------------

from libc.stdint cimport uint64_t
from libc.string cimport memcpy, memset


cdef inline uint64_t _ty_desc_key(double x) noexcept nogil:
    # an unsigned key whose ascending order is the descending order of the (non-NaN) scores,
    # equal keys for equal scores: -0.0 keyed as 0.0, which it equals
    cdef uint64_t u
    if x == 0.0:
        x = 0.0
    memcpy(&u, &x, 8)
    if u >> 63:
        u = ~u
    else:
        u |= (<uint64_t>1) << 63
    return ~u


cdef void _ty_radix_sort(uint64_t* key, int64_t* item, uint64_t* key_tmp, int64_t* item_tmp,
                         Py_ssize_t n) noexcept nogil:
    # stable LSD radix sort of key[:n] (items alongside), 8 bits a pass, skipping a pass
    # where every key has the same digit; the result ends in key and item
    cdef Py_ssize_t count[256]
    cdef Py_ssize_t i, pos, total
    cdef int shift, d
    cdef uint64_t* ks = key
    cdef int64_t* its = item
    cdef uint64_t* kd = key_tmp
    cdef int64_t* itd = item_tmp
    cdef uint64_t* kswap
    cdef int64_t* iswap
    if n < 2:
        return
    for shift in range(0, 64, 8):
        memset(count, 0, sizeof(count))
        for i in range(n):
            count[(ks[i] >> shift) & 255] += 1
        if count[(ks[0] >> shift) & 255] == n:
            continue
        total = 0
        for d in range(256):
            pos = count[d]
            count[d] = total
            total += pos
        for i in range(n):
            d = <int>((ks[i] >> shift) & 255)
            pos = count[d]
            count[d] = pos + 1
            kd[pos] = ks[i]
            itd[pos] = its[i]
        kswap = ks
        ks = kd
        kd = kswap
        iswap = its
        its = itd
        itd = iswap
    if ks != key:
        memcpy(key, ks, n * sizeof(uint64_t))
        memcpy(item, its, n * sizeof(int64_t))


def tydi_language_sweeps(const int64_t[::1] gold_row, const int64_t[::1] pred_row,
                         const uint8_t[:, ::1] flags, const double[:, ::1] prf,
                         const double[::1] pscore, const double[::1] mscore,
                         const double[::1] targets, int64_t[:, ::1] order,
                         int64_t[:, ::1] keys, int64_t[::1] scratch, double[:, ::1] best,
                         int64_t[::1] best_at, double[:, :, ::1] rows,
                         int64_t[:, ::1] row_at):
    """Both threshold sweeps of one language: example ``i`` is gold row ``gold_row[i]`` of
    ``flags`` and ``prf`` (as :func:`tydi_examples` wrote them) with prediction row
    ``pred_row[i]`` of the scores (-1: none, score 0).

    Sweep 0 is the passage task (flags columns 0, 1, value column 2), sweep 1 the minimal
    answer (flags 3, 4, value ``prf[:, 2]``). For sweep ``s``, ``order[s]`` gets the examples
    sorted by score, descending, ties in their given order, and ``best[s]``, ``best_at[s]``,
    ``rows[s]``, ``row_at[s]`` what :func:`tydi_curve` writes. ``keys`` (2 by n) and
    ``scratch`` (n) are working space. Returns 0; -1 where a score is NaN (nothing else is
    then meaningful); -2 where a row lies outside the arrays.
    """
    cdef Py_ssize_t n = gold_row.shape[0], nt = targets.shape[0], i, k
    cdef int s, status = 0
    cdef int64_t g, q, o, start
    cdef double x, total_gold, total_value, total_pred, p, r, f
    cdef uint64_t* key
    cdef int64_t* item
    if (pred_row.shape[0] != n or order.shape[0] != 2 or order.shape[1] != n
            or keys.shape[0] != 2 or keys.shape[1] != n or scratch.shape[0] != n
            or flags.shape[1] < 5 or prf.shape[1] < 3 or best.shape[0] != 2
            or best.shape[1] != 3 or best_at.shape[0] != 2 or rows.shape[0] != 2
            or rows.shape[1] != nt or rows.shape[2] != 2 or row_at.shape[0] != 2
            or row_at.shape[1] != nt):
        raise ValueError("tydi_language_sweeps: arrays of mismatched shapes")
    with nogil:
        for i in range(n):
            g = gold_row[i]
            q = pred_row[i]
            if g < 0 or g >= flags.shape[0] or g >= prf.shape[0] or q >= pscore.shape[0] \
                    or q >= mscore.shape[0]:
                status = -2
                break
        for s in range(2):
            if status != 0:
                break
            if n > 0:
                key = <uint64_t*>&keys[0, 0]
                item = &order[s, 0]
                for i in range(n):
                    q = pred_row[i]
                    x = 0.0 if q < 0 else (pscore[q] if s == 0 else mscore[q])
                    if x != x:
                        status = -1
                        break
                    key[i] = _ty_desc_key(x)
                    item[i] = i
                if status != 0:
                    break
                _ty_radix_sort(key, item, <uint64_t*>&keys[1, 0], &scratch[0], n)
            best[s, 0] = best[s, 1] = best[s, 2] = 0.0
            best_at[s] = -1
            for k in range(nt):
                rows[s, k, 0] = rows[s, k, 1] = 0.0
                row_at[s, k] = -1
            total_gold = 0.0
            total_value = 0.0
            total_pred = 0.0
            for i in range(n):
                total_gold += flags[gold_row[i], 3 * s]
            start = 0
            for i in range(n):
                o = order[s, i]
                g = gold_row[o]
                total_value += flags[g, 2] if s == 0 else prf[g, 2]
                total_pred += flags[g, 3 * s + 1]
                if i + 1 < n and keys[0, i + 1] == keys[0, i]:
                    continue  # a tie: one threshold, scored after its last example
                p = _ty_ratio(total_value, total_pred)
                r = _ty_ratio(total_value, total_gold)
                for k in range(nt):
                    if p >= targets[k] and r > rows[s, k, 0]:
                        rows[s, k, 0] = r
                        rows[s, k, 1] = p
                        row_at[s, k] = start
                f = _ty_ratio(2 * p * r, p + r)
                if f > best[s, 0]:
                    best[s, 0] = f
                    best[s, 1] = p
                    best[s, 2] = r
                    best_at[s] = start
                start = i + 1
    return status


cdef extern from "Python.h":
    int _ty_dict_next "PyDict_Next"(object d, Py_ssize_t* pos, PyObject** key,
                                    PyObject** value)
    bint _ty_is_bool "PyBool_Check"(PyObject* o)


cdef inline int _ty_kind(PyObject* v) noexcept:
    if _ty_is_int(v):
        return 1
    if _ty_is_str(v):
        return 2
    if _ty_is_float(v):
        return 4
    if _ty_is_bool(v):
        return 8
    return 16


def tydi_id_kinds(object ids):
    """A bit mask of the exact types among the items of a list or the keys of a dict: 1 int,
    2 str, 4 float, 8 bool, 16 any other."""
    cdef Py_ssize_t i, pos = 0
    cdef PyObject* key
    cdef PyObject* value
    cdef int mask = 0
    if type(ids) is list:
        for i in range(_ty_list_len(<PyObject*>ids)):
            mask |= _ty_kind(_ty_list_item(<PyObject*>ids, i))
    elif type(ids) is dict:
        while _ty_dict_next(ids, &pos, &key, &value):
            mask |= _ty_kind(key)
    else:
        raise TypeError("tydi_id_kinds: a list or a dict")
    return mask
