# ---------------------------------------------------------------------------------------------
# Natural Questions (nq_eval.py): reading gold lines and the predictions document from their
# bytes, and each example's long/short answer statistics.
#
# The readers use the strict JSON scanner of _tydi_kernels.pxi (_ty_ws, _ty_string, _ty_value,
# _ty_int_at, _ty_yes_no_at, _ty_key; keys and span offsets through inlined readers of the same
# rules, _nq_key and _nq_int_at) and take a record only when it is plainly valid JSON whose
# scored fields qafast reads as the script does: keys without escapes where fields are looked up,
# offsets plain integers within 2**52, spans whose offsets are both null or form a span, yes/no
# ASCII strings. Any other record is left to json.loads and the Python checks (the caller's
# fallback), which then give the script's values or the error naming the line or prediction.
# A span is stored as 4 int64 (start byte, end byte, start token, end token).
# ---------------------------------------------------------------------------------------------

from libc.stdlib cimport strtod
from libc.string cimport memchr, memcmp

cdef struct _NqOut:
    int64_t* ann        # annotations' long spans, 4 a row
    uint8_t* ann_yn     # their yes/no codes (0 none, 1 yes, 2 no, 3 another string)
    int64_t* ann_slo    # their short spans at [ann_slo, ann_shi) of spans
    int64_t* ann_shi
    int64_t* spans      # short spans, 4 a row
    Py_ssize_t na, cap_a, ns, cap_s


cdef inline Py_ssize_t _nq_key(const unsigned char* s, Py_ssize_t p,
                               Py_ssize_t n) noexcept nogil:
    # s[p] opens a key: the position after its closing quote, or -1 when it has an escape
    # (a field is then looked up by a name qafast does not compare) or is not valid JSON.
    # Keys are short printable ASCII: those take one loop, the rest _ty_string's checks
    cdef Py_ssize_t q = p + 1
    cdef unsigned char c
    cdef bint escaped = False
    while q < n:
        c = s[q]
        if c == 34:
            return q + 1
        if c == 92 or c < 32 or c >= 128:
            break
        q += 1
    q = _ty_string(s, p, n, &escaped)
    return -1 if escaped else q


cdef inline bint _nq_key_is(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, const char* w,
                            Py_ssize_t k) noexcept nogil:
    # s[p] opens a key: whether it is the k plain ASCII bytes w and its closing quote. Such a key
    # is the one _nq_key reads without escapes and _ty_key finds equal to w, compared here at
    # once instead of byte by byte (that loop took a third of a span's reading)
    return p + k + 1 < n and s[p + k + 1] == 34 and memcmp(s + p + 1, w, k) == 0


cdef inline Py_ssize_t _nq_int_at(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                                  double* out) noexcept nogil:
    # _ty_int_at's reading (a plain JSON integer of at most 15 digits within 2**52, else -1),
    # inlined in the span reader, where most of a gold line's values are read
    cdef Py_ssize_t q = p, first
    cdef bint neg = False
    cdef long long x = 0
    if q < n and s[q] == 45:
        neg = True
        q += 1
    first = q
    if q >= n or not (48 <= s[q] <= 57) or (s[q] == 48 and q + 1 < n and 48 <= s[q + 1] <= 57):
        return -1
    while q < n and 48 <= s[q] <= 57:
        if q - first >= 15:
            return -1
        x = x * 10 + (s[q] - 48)
        q += 1
    if q < n and (s[q] == 46 or s[q] == 101 or s[q] == 69):
        return -1
    if x > <long long>_TY_LIMIT:
        return -1
    out[0] = <double>(-x if neg else x)
    return q


cdef Py_ssize_t _nq_span(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                         int64_t* out) noexcept nogil:
    # a span object: its four offsets (the last of a repeated key), checked as the script's
    # Span is; other keys are only checked as JSON
    cdef Py_ssize_t q
    cdef double v[4]
    cdef bint got[4]
    cdef int k
    for k in range(4):
        got[k] = False
    if p >= n or s[p] != 123:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p < n and s[p] == 125:
        return -1
    while True:
        if p >= n or s[p] != 34:
            return -1
        # the four offsets' keys as written plainly; any other key (or one with an escape,
        # which _nq_key refuses) through the general reader, its value only checked
        k = -1
        if _nq_key_is(s, p, n, b"start_byte", 10):
            k = 0
            q = p + 12
        elif _nq_key_is(s, p, n, b"end_byte", 8):
            k = 1
            q = p + 10
        elif _nq_key_is(s, p, n, b"start_token", 11):
            k = 2
            q = p + 13
        elif _nq_key_is(s, p, n, b"end_token", 9):
            k = 3
            q = p + 11
        else:
            q = _nq_key(s, p, n)
            if q < 0:
                return -1
        p = _ty_ws(s, q, n)
        if p >= n or s[p] != 58:
            return -1
        p = _ty_ws(s, p + 1, n)
        if k >= 0:
            p = _nq_int_at(s, p, n, &v[k])
            got[k] = True
        else:
            p = _ty_value(s, p, n, 5, NULL, NULL)
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
    if not (got[0] and got[1] and got[2] and got[3]):
        return -1
    if (v[0] < 0) != (v[1] < 0) or (v[2] < 0) != (v[3] < 0):
        return -1
    if (v[0] >= 0 and v[0] >= v[1]) or (v[2] >= 0 and v[2] >= v[3]):
        return -1
    for k in range(4):
        out[k] = <int64_t>v[k]
    return p + 1


cdef Py_ssize_t _nq_spans(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                          _NqOut* out) noexcept nogil:
    # a list of span objects, appended to out.spans
    if p >= n or s[p] != 91:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p < n and s[p] == 93:
        return p + 1
    while True:
        if out.ns >= out.cap_s:
            return -1
        p = _nq_span(s, p, n, &out.spans[4 * out.ns])
        if p < 0:
            return -1
        out.ns += 1
        p = _ty_ws(s, p, n)
        if p >= n:
            return -1
        if s[p] == 93:
            return p + 1
        if s[p] != 44:
            return -1
        p = _ty_ws(s, p + 1, n)


cdef Py_ssize_t _nq_annotation(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                               _NqOut* out) noexcept nogil:
    cdef Py_ssize_t q, k
    cdef int field
    cdef bint has_long = False, has_short = False, has_yn = False
    cdef uint8_t yn = 0
    if p >= n or s[p] != 123 or out.na >= out.cap_a:
        return -1
    k = out.na
    p = _ty_ws(s, p + 1, n)
    if p < n and s[p] == 125:
        return -1
    while True:
        if p >= n or s[p] != 34:
            return -1
        # the three keys read, as written plainly (as _nq_span's); any other through _nq_key
        field = 0
        if _nq_key_is(s, p, n, b"long_answer", 11):
            field = 1
            q = p + 13
        elif _nq_key_is(s, p, n, b"short_answers", 13):
            field = 2
            q = p + 15
        elif _nq_key_is(s, p, n, b"yes_no_answer", 13):
            field = 3
            q = p + 15
        elif _nq_key_is(s, p, n, b"annotation_id", 13):  # (NQ's, its value only checked)
            q = p + 15
        else:
            q = _nq_key(s, p, n)
            if q < 0:
                return -1
        p = _ty_ws(s, q, n)
        if p >= n or s[p] != 58:
            return -1
        p = _ty_ws(s, p + 1, n)
        if field == 1:
            p = _nq_span(s, p, n, &out.ann[4 * k])
            has_long = True
        elif field == 2:
            if has_short:
                out.ns = out.ann_slo[k]  # a repeated key: the last list counts
            out.ann_slo[k] = out.ns
            p = _nq_spans(s, p, n, out)
            out.ann_shi[k] = out.ns
            has_short = True
        elif field == 3:
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
    if not (has_long and has_short and has_yn):
        return -1
    out.ann_yn[k] = yn
    out.na += 1
    return p + 1


cdef Py_ssize_t _nq_gold_line(const unsigned char* s, Py_ssize_t n, int64_t* found,
                              _NqOut* out, Py_ssize_t a0, Py_ssize_t s0) noexcept nogil:
    # one gold record: found[0:2] the example_id's byte range; its annotations at [a0, out.na)
    cdef Py_ssize_t p, q, ka, kb, v
    cdef bint has_ann = False
    found[0] = -1
    p = _ty_ws(s, 1, n)
    if p < n and s[p] == 125:
        return -1
    while True:
        if p >= n or s[p] != 34:
            return -1
        q = _nq_key(s, p, n)
        if q < 0:
            return -1
        ka = p + 1
        kb = q - 1
        p = _ty_ws(s, q, n)
        if p >= n or s[p] != 58:
            return -1
        p = _ty_ws(s, p + 1, n)
        v = p
        if _ty_key(s, ka, kb, b"annotations", 11):
            out.na = a0  # a repeated key: the last list counts
            out.ns = s0
            has_ann = True
            if p >= n or s[p] != 91:
                return -1
            p = _ty_ws(s, p + 1, n)
            if p < n and s[p] == 93:
                p += 1
            else:
                while True:
                    p = _nq_annotation(s, p, n, out)
                    if p < 0:
                        return -1
                    p = _ty_ws(s, p, n)
                    if p >= n:
                        return -1
                    if s[p] == 93:
                        p += 1
                        break
                    if s[p] != 44:
                        return -1
                    p = _ty_ws(s, p + 1, n)
        else:
            p = _ty_value(s, p, n, 1, NULL, NULL)
            if p >= 0 and _ty_key(s, ka, kb, b"example_id", 10):
                found[0] = v
                found[1] = p
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
    if _ty_ws(s, p + 1, n) != n or not has_ann or found[0] < 0:
        return -1
    if s[found[0]] == 91 or s[found[0]] == 123:  # an unhashable id: Python says so
        return -1
    return p + 1


def nq_scan_gold(const unsigned char[::1] data, bint final, Py_ssize_t first_line,
                 Py_ssize_t first_ann, Py_ssize_t first_span, int64_t[::1] line_start,
                 int64_t[::1] line_end, int64_t[:, ::1] found, int64_t[::1] ann_lo,
                 int64_t[::1] ann_hi, int64_t[:, ::1] ann, uint8_t[::1] ann_yn,
                 int64_t[::1] ann_slo, int64_t[::1] ann_shi, int64_t[:, ::1] spans):
    """Split ``data`` into lines at ``\\n`` as the script's reader does (with ``final``, the
    text after the last ``\\n``, if any, is a line; without, it is left for the next call,
    ``data`` being a piece of a longer text): the lines are rows ``first_line`` on of the line
    arrays, line i being ``data[line_start[i]:line_end[i]]``, a gold record. ``found[i]`` gets
    the byte range of its example_id and its annotations go to rows ``[ann_lo[i], ann_hi[i])``
    (from ``first_ann`` on) of ``ann`` (long span), ``ann_yn`` (yes/no code) and
    ``ann_slo``/``ann_shi`` (its short spans' rows of ``spans``, from ``first_span`` on);
    ``found[i, 0] = -1`` leaves the line to json.loads (not plainly valid JSON, a field missing
    or read only through Python, or the annotation or span arrays full). It stops where the line
    arrays are full. Returns ``(lines end, lines found, annotation rows end, span rows end,
    bytes taken)``: the lines taken are ``data[:bytes taken]``. Runs without the GIL."""
    cdef Py_ssize_t m = first_line, i, a, b, a0, s0, ok = 0, size = data.shape[0], taken
    cdef const unsigned char* base = &data[0] if size else NULL
    cdef const unsigned char* nl
    cdef _NqOut out
    out.ann = &ann[0, 0] if ann.shape[0] else NULL
    out.ann_yn = &ann_yn[0] if ann_yn.shape[0] else NULL
    out.ann_slo = &ann_slo[0] if ann_slo.shape[0] else NULL
    out.ann_shi = &ann_shi[0] if ann_shi.shape[0] else NULL
    out.spans = &spans[0, 0] if spans.shape[0] else NULL
    out.cap_a = min(ann.shape[0], ann_yn.shape[0], ann_slo.shape[0], ann_shi.shape[0])
    out.cap_s = spans.shape[0]
    cdef Py_ssize_t cap = min(line_start.shape[0], line_end.shape[0], found.shape[0],
                              ann_lo.shape[0], ann_hi.shape[0])
    if ann.shape[1] != 4 or spans.shape[1] != 4 or found.shape[1] < 2:
        raise ValueError("nq_scan_gold: array shapes do not fit")
    if not (0 <= first_line <= cap and 0 <= first_ann <= out.cap_a
            and 0 <= first_span <= out.cap_s):
        raise ValueError("nq_scan_gold: first rows beyond the arrays")
    out.na = first_ann
    out.ns = first_span
    with nogil:
        a = 0
        while a < size and m < cap:
            nl = <const unsigned char*>memchr(base + a, 10, size - a)
            if nl == NULL and not final:
                break  # an unfinished line: the caller gives it again with what follows
            b = size if nl == NULL else nl - base
            line_start[m] = a
            line_end[m] = b
            m += 1
            a = b + 1
    taken = min(a, size)  # (short of the last line when the line arrays are full)
    with nogil:
        for i in range(first_line, m):
            a = line_start[i]
            b = line_end[i]
            a0 = out.na
            s0 = out.ns
            ann_lo[i] = ann_hi[i] = a0
            found[i, 0] = found[i, 1] = -1
            # json.loads(bytes) reads UTF-8 only when the first two bytes are not NUL
            if b - a < 2 or data[a] != 123 or data[a + 1] == 0 \
                    or _nq_gold_line(&data[a], b - a, &found[i, 0], &out, a0, s0) < 0:
                found[i, 0] = -1
                out.na = a0
                out.ns = s0
                continue
            found[i, 0] += a
            found[i, 1] += a
            ann_hi[i] = out.na
            ok += 1
    return m, ok, out.na, out.ns, taken


def nq_int_ids(const unsigned char[::1] data, const int64_t[:, ::1] found,
               int64_t[::1] ids, uint8_t[::1] is_int):
    """Each id text ``data[found[i, 0]:found[i, 1]]`` that is a plain JSON integer within
    int64 (what json.loads reads as an int of that size) into ``ids[i]``, ``is_int[i] = 1``;
    any other text (or ``found[i, 0] < 0``) gets ``is_int[i] = 0``. Returns how many are
    integers. Runs without the GIL."""
    cdef Py_ssize_t n = found.shape[0], i, p, q, got = 0, size = data.shape[0]
    cdef uint64_t x, limit
    cdef bint neg, good
    if ids.shape[0] < n or is_int.shape[0] < n or (n and found.shape[1] < 2):
        raise ValueError("nq_int_ids: array shapes do not fit")
    with nogil:
        for i in range(n):
            p = found[i, 0]
            q = found[i, 1]
            is_int[i] = 0
            if p < 0 or q > size or q - p < 1:
                continue
            neg = data[p] == 45
            if neg:
                p += 1
            # digits only, no leading zero but a lone 0, at most 19 (below 2**64)
            good = 1 <= q - p <= 19 and not (data[p] == 48 and q - p > 1)
            x = 0
            while good and p < q:
                if not (48 <= data[p] <= 57):
                    good = False
                else:
                    x = x * 10 + (data[p] - 48)
                p += 1
            limit = 9223372036854775808ULL if neg else 9223372036854775807ULL
            if not good or x > limit:
                continue
            ids[i] = <int64_t>(0 - x) if neg else <int64_t>x
            is_int[i] = 1
            got += 1
    return got


cdef Py_ssize_t _nq_score_at(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, double* out,
                             uint8_t* is_int) noexcept nogil:
    # a JSON number as json.loads gives it: an int within 10**15 or a float (as float() reads
    # the text); else -1 (the prediction goes to Python)
    cdef Py_ssize_t q = _ty_number(s, p, n), k
    cdef char text[64]
    cdef char* end
    if q < 0:
        return -1
    is_int[0] = True
    for k in range(p, q):
        if s[k] == 46 or s[k] == 101 or s[k] == 69:
            is_int[0] = False
    if is_int[0]:
        if _ty_int_at(s, p, n, out) != q:
            return -1
        if out[0] == 0:
            out[0] = 0.0  # -0 is the int 0
        return q
    if q - p >= 64:
        return -1
    for k in range(q - p):
        text[k] = <char>s[p + k]
    text[q - p] = 0
    out[0] = strtod(text, &end)
    if end != text + (q - p):  # (a locale whose decimal point is not ".")
        return -1
    return q


cdef Py_ssize_t _nq_prediction(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                               Py_ssize_t r, int64_t* found, int64_t* long_span,
                               uint8_t* yn, int64_t* slo, int64_t* shi, double* score,
                               uint8_t* score_int, _NqOut* out) noexcept nogil:
    # one prediction object as row r
    cdef Py_ssize_t q, ka, kb, v, k
    cdef bint has_id = False, has_ls = False, has_ss = False, has_short = False
    cdef uint8_t code = 0
    found[2 * r] = found[2 * r + 1] = -1
    for k in range(4):
        long_span[4 * r + k] = -1
    slo[r] = shi[r] = out.ns
    if p >= n or s[p] != 123:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p < n and s[p] == 125:
        return -1
    while True:
        if p >= n or s[p] != 34:
            return -1
        q = _nq_key(s, p, n)
        if q < 0:
            return -1
        ka = p + 1
        kb = q - 1
        p = _ty_ws(s, q, n)
        if p >= n or s[p] != 58:
            return -1
        p = _ty_ws(s, p + 1, n)
        v = p
        if _ty_key(s, ka, kb, b"example_id", 10):
            p = _ty_value(s, p, n, 2, NULL, NULL)
            found[2 * r] = v
            found[2 * r + 1] = p
            has_id = True
        elif _ty_key(s, ka, kb, b"long_answer", 11):
            p = _nq_span(s, p, n, &long_span[4 * r])
        elif _ty_key(s, ka, kb, b"short_answers", 13):
            if has_short:
                out.ns = slo[r]
            slo[r] = out.ns
            p = _nq_spans(s, p, n, out)
            shi[r] = out.ns
            has_short = True
        elif _ty_key(s, ka, kb, b"yes_no_answer", 13):
            p = _ty_yes_no_at(s, p, n, &code)
            if code > 2:
                return -1
        elif _ty_key(s, ka, kb, b"long_answer_score", 17):
            p = _nq_score_at(s, p, n, &score[2 * r], &score_int[2 * r])
            has_ls = True
        elif _ty_key(s, ka, kb, b"short_answers_score", 19):
            p = _nq_score_at(s, p, n, &score[2 * r + 1], &score_int[2 * r + 1])
            has_ss = True
        else:
            p = _ty_value(s, p, n, 2, NULL, NULL)
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
    if not (has_id and has_ls and has_ss):
        return -1
    if s[found[2 * r]] == 91 or s[found[2 * r]] == 123:  # an unhashable id: Python says so
        return -1
    if code != 0:  # a yes/no answer with short spans: the Python checks say what is wrong
        for k in range(slo[r], shi[r]):
            if out.spans[4 * k] >= 0 or out.spans[4 * k + 2] >= 0:
                return -1
    yn[r] = code
    return p + 1


def nq_scan_predictions(const unsigned char[::1] data, int64_t[:, ::1] found,
                        int64_t[:, ::1] raw, int64_t[:, ::1] long_span, uint8_t[::1] yes_no,
                        int64_t[::1] short_lo, int64_t[::1] short_hi, int64_t[:, ::1] spans,
                        double[:, ::1] score, uint8_t[:, ::1] score_int):
    """The predictions JSON document ``{"predictions": [...], ...}`` from its bytes: row r of
    the arrays gets prediction r (its example_id's byte range in ``found``, long span,
    yes/no code, short spans' rows of ``spans``, the two scores and whether each is an int);
    a prediction qafast reads only through Python gets ``raw[r]``, its byte range (else -1).
    Returns ``(predictions, span rows used)``; ``(-1, 0)`` when the document is not plainly
    valid JSON of that shape (json.loads then reads it), ``(-2, 0)`` when the arrays are too
    short. Runs without the GIL."""
    cdef const unsigned char* s = &data[0] if data.shape[0] else NULL
    cdef Py_ssize_t n = data.shape[0], p, q, ka, kb, v, r = 0, cap, got = -1
    cdef bint escaped, full = False
    cdef _NqOut out
    cap = min(found.shape[0], raw.shape[0], long_span.shape[0], yes_no.shape[0],
              short_lo.shape[0], short_hi.shape[0], score.shape[0], score_int.shape[0])
    if found.shape[1] != 2 or raw.shape[1] != 2 or long_span.shape[1] != 4 \
            or spans.shape[1] != 4 or score.shape[1] != 2 or score_int.shape[1] != 2:
        raise ValueError("nq_scan_predictions: array shapes do not fit")
    out.spans = &spans[0, 0] if spans.shape[0] else NULL
    out.ns = 0
    out.cap_s = spans.shape[0]
    out.na = out.cap_a = 0
    if n < 2:
        return -1, 0
    with nogil:
        p = _ty_ws(s, 0, n)
        # json.loads(bytes) reads UTF-8 only when the first two bytes are not NUL
        if p != 0 or s[0] != 123 or s[1] == 0:
            got = -1
        else:
            p = _ty_ws(s, 1, n)
            if p < n and s[p] == 125:
                p = -1  # no "predictions": Python says so
            while p >= 0:
                if p >= n or s[p] != 34:
                    p = -1
                    break
                escaped = False
                q = _ty_string(s, p, n, &escaped)
                if q < 0:
                    p = -1
                    break
                ka = p + 1
                kb = q - 1
                p = _ty_ws(s, q, n)
                if p >= n or s[p] != 58:
                    p = -1
                    break
                p = _ty_ws(s, p + 1, n)
                if not escaped and _ty_key(s, ka, kb, b"predictions", 11):
                    r = 0  # a repeated key: the last list counts
                    out.ns = 0
                    got = 0
                    if p >= n or s[p] != 91:
                        p = -1
                        break
                    p = _ty_ws(s, p + 1, n)
                    if p < n and s[p] == 93:
                        p += 1
                    else:
                        while True:
                            if r >= cap:
                                full = True
                                p = -1
                                break
                            v = p
                            q = out.ns
                            p = _nq_prediction(s, p, n, r, &found[0, 0], &long_span[0, 0],
                                               &yes_no[0], &short_lo[0], &short_hi[0],
                                               &score[0, 0], &score_int[0, 0], &out)
                            raw[r, 0] = raw[r, 1] = -1
                            if p < 0:
                                found[r, 0] = found[r, 1] = -1
                                out.ns = q
                                p = _ty_value(s, v, n, 2, NULL, NULL)
                                if p < 0:
                                    break
                                raw[r, 0] = v
                                raw[r, 1] = p
                            r += 1
                            p = _ty_ws(s, p, n)
                            if p >= n:
                                p = -1
                                break
                            if s[p] == 93:
                                p += 1
                                break
                            if s[p] != 44:
                                p = -1
                                break
                            p = _ty_ws(s, p + 1, n)
                    got = r
                elif escaped:  # (it may spell "predictions": json.loads decides)
                    p = -1
                else:
                    p = _ty_value(s, p, n, 1, NULL, NULL)
                if p < 0:
                    break
                p = _ty_ws(s, p, n)
                if p >= n:
                    p = -1
                    break
                if s[p] == 125:
                    p += 1
                    break
                if s[p] != 44:
                    p = -1
                    break
                p = _ty_ws(s, p + 1, n)
            if p < 0 or _ty_ws(s, p, n) != n:
                got = -1
    if full:
        return -2, 0
    if got < 0:
        return -1, 0
    return got, out.ns


cdef inline bint _nq_same(const int64_t* a, const int64_t* b) noexcept nogil:
    # two non-null spans are one answer: the same byte offsets or the same token offsets
    return ((a[0] >= 0 and b[0] >= 0 and a[0] == b[0] and a[1] == b[1])
            or (a[2] >= 0 and b[2] >= 0 and a[2] == b[2] and a[3] == b[3]))


cdef inline bint _nq_null(const int64_t* a) noexcept nogil:
    return a[0] < 0 and a[2] < 0


cdef bint _nq_covered(const int64_t* xs, Py_ssize_t xa, Py_ssize_t xb, const int64_t* ys,
                      Py_ssize_t ya, Py_ssize_t yb) noexcept nogil:
    # every non-null span of xs[xa:xb] equals some non-null span of ys[ya:yb]
    cdef Py_ssize_t i, j
    cdef bint hit
    for i in range(xa, xb):
        if _nq_null(&xs[4 * i]):
            continue
        hit = False
        for j in range(ya, yb):
            if not _nq_null(&ys[4 * j]) and _nq_same(&xs[4 * i], &ys[4 * j]):
                hit = True
                break
        if not hit:
            return False
    return True


def nq_stats(const int64_t[::1] gold_lo, const int64_t[::1] gold_hi,
             const int64_t[:, ::1] ann, const uint8_t[::1] ann_yn,
             const int64_t[::1] ann_slo, const int64_t[::1] ann_shi,
             const int64_t[:, ::1] gold_spans, const int64_t[::1] pred_row,
             const int64_t[:, ::1] long_span, const uint8_t[::1] yes_no,
             const int64_t[::1] short_lo, const int64_t[::1] short_hi,
             const int64_t[:, ::1] pred_spans, int64_t long_threshold,
             int64_t short_threshold, uint8_t[:, ::1] flags):
    """Each example's (long has gold, has prediction, correct, short has gold, has
    prediction, correct) into ``flags[i]``: example i has annotations ``[gold_lo[i],
    gold_hi[i])`` and prediction row ``pred_row[i]``. Runs without the GIL."""
    cdef Py_ssize_t n = gold_lo.shape[0], i, a, r, k
    cdef int64_t long_votes, short_votes
    cdef bint long_correct, long_pred, short_pred, short_correct, keys, yes_seen, no_seen
    cdef const int64_t* gs = &gold_spans[0, 0] if gold_spans.shape[0] else NULL
    cdef const int64_t* ps = &pred_spans[0, 0] if pred_spans.shape[0] else NULL
    if flags.shape[0] < n or flags.shape[1] != 6 or gold_hi.shape[0] < n \
            or pred_row.shape[0] < n:
        raise ValueError("nq_stats: array shapes do not fit")
    with nogil:
        for i in range(n):
            r = pred_row[i]
            long_pred = not _nq_null(&long_span[r, 0])
            long_votes = short_votes = 0
            long_correct = yes_seen = no_seen = False
            for a in range(gold_lo[i], gold_hi[i]):
                if not _nq_null(&ann[a, 0]):
                    long_votes += 1
                    if long_pred and _nq_same(&ann[a, 0], &long_span[r, 0]):
                        long_correct = True
                keys = False
                for k in range(ann_slo[a], ann_shi[a]):
                    if not _nq_null(&gs[4 * k]):
                        keys = True
                        break
                if keys or ann_yn[a] != 0:
                    short_votes += 1
                yes_seen = yes_seen or ann_yn[a] == 1
                no_seen = no_seen or ann_yn[a] == 2
            flags[i, 0] = gold_hi[i] > gold_lo[i] and long_votes >= long_threshold
            flags[i, 1] = long_pred
            flags[i, 2] = flags[i, 0] and long_pred and long_correct
            flags[i, 3] = gold_hi[i] > gold_lo[i] and short_votes >= short_threshold
            short_pred = yes_no[r] != 0
            if not short_pred:
                for k in range(short_lo[r], short_hi[r]):
                    if not _nq_null(&ps[4 * k]):
                        short_pred = True
                        break
            flags[i, 4] = short_pred
            short_correct = False
            if flags[i, 3] and short_pred:
                if yes_no[r] == 1:
                    short_correct = yes_seen
                elif yes_no[r] == 2:
                    short_correct = no_seen
                else:
                    for a in range(gold_lo[i], gold_hi[i]):
                        if (_nq_covered(ps, short_lo[r], short_hi[r], gs, ann_slo[a],
                                        ann_shi[a])
                                and _nq_covered(gs, ann_slo[a], ann_shi[a], ps, short_lo[r],
                                                short_hi[r])):
                            short_correct = True
                            break
            flags[i, 5] = short_correct
