# ---------------------------------------------------------------------------------------------
# Reading HotpotQA's gold and prediction files straight from their bytes (qafast.hotpot)
#
# hotpot_scan_gold builds the gold list with only what the evaluation reads: each question a
# dict of its "_id", "answer" and "supporting_facts" (every other field, a real file's
# "context" above all, is checked as JSON and skipped without building anything);
# hotpot_scan_predictions builds {"answer": {id: str}, "sp": {id: [[title, int], ...]}}.
# Each works in two passes: the first, with the GIL released, walks the bytes and writes what
# it keeps as events (an id, an answer, a fact: their byte spans) into a C array, skipping the
# rest eight plain bytes at a time; the second makes the Python objects from the events, in
# file order, so that a key given twice keeps its last value as json.loads does.
#
# The scan takes only files of the plain form: valid JSON (checked as json_skip_spans checks
# it: no raw control characters in strings, valid UTF-8, no NaN/Infinity), kept strings where
# they are expected, sentence ids written as integers of at most 18 digits, no key written
# with an escape (it could spell a kept key). Anything else, malformed files included, gives
# None: the caller then reads the file with json.loads, which builds what the file holds or
# says where it is wrong. Uses _ty_ws, _ty_number (_tydi_kernels.pxi), _tq_string, _tq_is,
# _tq_skip and _tq_str (_triviaqa_scan.pxi).
# ---------------------------------------------------------------------------------------------

from libc.stdlib cimport realloc
from cpython.long cimport PyLong_FromLongLong

cdef enum:
    # event kinds; each event is four int64: kind, then two byte positions (a string's span,
    # quotes included) and a third value (a string's escape flag, or a fact's sentence id)
    _HS_ENTRY = 1        # a gold question begins
    _HS_ID = 2           # its "_id" (a string)
    _HS_ANSWER = 3       # its "answer" (a string)
    _HS_FACTS = 4        # a list of facts begins (a gold "supporting_facts" or a prediction's)
    _HS_FACT = 5         # a fact: its title's span; third value: escape flag + 2 * sentence id
    _HS_ANSWERS = 6      # the predictions' "answer" object begins
    _HS_SPS = 7          # the predictions' "sp" object begins
    _HS_KEY = 8          # a question id (a key of "answer" or "sp")
    _HS_TEXT = 9         # a predicted answer (a string)


cdef struct _HsEvents:
    int64_t* ev
    Py_ssize_t n      # events written
    Py_ssize_t cap    # events room


cdef inline int _hs_add(_HsEvents* e, int64_t kind, int64_t a, int64_t b,
                        int64_t c) noexcept nogil:
    """Append one event; -1 when memory runs out."""
    cdef int64_t* grown
    cdef Py_ssize_t cap
    if e.n == e.cap:
        cap = e.cap * 2 if e.cap else 4096
        grown = <int64_t*>realloc(e.ev, cap * 4 * sizeof(int64_t))
        if grown == NULL:
            return -1
        e.ev, e.cap = grown, cap
    e.ev[4 * e.n] = kind
    e.ev[4 * e.n + 1] = a
    e.ev[4 * e.n + 2] = b
    e.ev[4 * e.n + 3] = c
    e.n += 1
    return 0


cdef extern from *:
    """
    #include "_portable.h"
    /* The index (0-8, 8: none) of the first of the eight bytes at p that a JSON string's
     * scan must look at: a quote, a backslash, a control character or a byte not ASCII.
     * (Of the bytes the word tests flag, the lowest is exact: a borrow runs upwards only.) */
    static inline int _hs_first_stop(const unsigned char *p) {
        const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
        uint64_t x, quote, slash, bits;
        memcpy(&x, p, 8);
        quote = x ^ (0x22 * ones);
        slash = x ^ (0x5C * ones);
        bits = (((quote - ones) & ~quote) | ((slash - ones) & ~slash)
                | ((x - 0x20 * ones) & ~x) | x) & highs;
        if (!bits)
            return 8;
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        for (int i = 0; i < 8; i++)
            if (p[i] == 0x22 || p[i] == 0x5C || p[i] < 0x20 || p[i] >= 0x80)
                return i;
        return 8;
    #else
        return qafast_ctz64(bits) >> 3;
    #endif
    }
    """
    int _hs_first_stop(const unsigned char* p) noexcept nogil


cdef inline Py_ssize_t _hs_string_end(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                                      bint* escaped) noexcept nogil:
    """_tq_string (the same strings accepted, the same end and escape flag), which ends a
    plain string at its closing quote found in the eight bytes of the last step, where
    _tq_string takes the last step's bytes again one at a time: ids and titles are short."""
    cdef Py_ssize_t q = p + 1
    cdef int k
    while q + 8 <= n:
        k = _hs_first_stop(s + q)
        if k < 8:
            q += k
            if s[q] == 34:
                return q + 1
            break
        q += 8
    # the rest byte by byte from the first byte to look at: _ty_string takes s[q - 1] for
    # the opening quote (it is one, or a plain byte: neither changes what follows)
    return _ty_string(s, q - 1, n, escaped)


cdef Py_ssize_t _hs_text(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, int64_t kind,
                         _HsEvents* e) noexcept nogil:
    """The string at p as an event of this kind; the position after it, or -1 (not a
    string, or memory)."""
    cdef bint esc = False
    cdef Py_ssize_t q
    if p >= n or s[p] != 34:
        return -1
    q = _hs_string_end(s, p, n, &esc)
    if q < 0 or _hs_add(e, kind, p, q, esc) < 0:
        return -1
    return q


cdef Py_ssize_t _hs_int(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                        int64_t* value) noexcept nogil:
    """The JSON integer at p (no fraction, no exponent, at most 18 digits) into value; the
    position after it, or -1."""
    cdef Py_ssize_t q = _ty_number(s, p, n), k
    cdef bint minus
    cdef int64_t v = 0
    if q < 0:
        return -1
    minus = s[p] == 45
    k = p + 1 if minus else p
    if q - k > 18:
        return -1
    while k < q:
        if not 48 <= s[k] <= 57:
            return -1   # a fraction or an exponent: a float, left to json.loads
        v = v * 10 + (s[k] - 48)
        k += 1
    value[0] = -v if minus else v
    return q


cdef Py_ssize_t _hs_facts(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                          _HsEvents* e) noexcept nogil:
    """The facts array at p ([[title, integer], ...]) as events; the position after it, or
    -1 where it is anything else."""
    cdef Py_ssize_t q
    cdef int64_t sid = 0
    if p >= n or s[p] != 91 or _hs_add(e, _HS_FACTS, 0, 0, 0) < 0:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p < n and s[p] == 93:
        return p + 1
    while True:
        if p >= n or s[p] != 91:
            return -1
        p = _ty_ws(s, p + 1, n)
        q = _hs_text(s, p, n, _HS_FACT, e)
        if q < 0:
            return -1
        p = _ty_ws(s, q, n)
        if p >= n or s[p] != 44:
            return -1
        p = _ty_ws(s, p + 1, n)
        p = _hs_int(s, p, n, &sid)
        if p < 0:
            return -1
        e.ev[4 * (e.n - 1) + 3] += 2 * sid   # (the title's escape flag stays the parity)
        p = _ty_ws(s, p, n)
        if p >= n or s[p] != 93:
            return -1
        p = _ty_ws(s, p + 1, n)
        if p >= n:
            return -1
        if s[p] == 93:
            return p + 1
        if s[p] != 44:
            return -1
        p = _ty_ws(s, p + 1, n)


cdef Py_ssize_t _hs_key(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                        Py_ssize_t* end) noexcept nogil:
    """The key at p, written without escapes: end[0] gets the position after it; returns
    the position of its value, or -1."""
    cdef bint esc = False
    cdef Py_ssize_t q
    if p >= n or s[p] != 34:
        return -1
    q = _hs_string_end(s, p, n, &esc)
    if q < 0 or esc:
        return -1
    end[0] = q
    p = _ty_ws(s, q, n)
    if p >= n or s[p] != 58:
        return -1
    return _ty_ws(s, p + 1, n)


cdef Py_ssize_t _hs_next(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                         unsigned char close) noexcept nogil:
    """After a member or element ending at p: the position of the next one (after the
    comma), or, where the container ends there with its closing byte, -2 minus the position
    after that byte (always < -1); -1 where neither follows."""
    p = _ty_ws(s, p, n)
    if p >= n:
        return -1
    if s[p] == 44:
        return _ty_ws(s, p + 1, n)
    if s[p] == close:
        return -(p + 1) - 2
    return -1


cdef Py_ssize_t _hs_gold_events(const unsigned char* s, Py_ssize_t n,
                                _HsEvents* e) noexcept nogil:
    """A gold file's events; 0, or -1 where the scan leaves the file to json.loads."""
    cdef Py_ssize_t p, q, k, end = 0
    p = _ty_ws(s, 0, n)
    if p >= n or s[p] != 91:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p >= n or s[p] == 93:
        return -1   # (no question: the caller's error)
    while True:   # ---- a question at p
        if p >= n or s[p] != 123 or _hs_add(e, _HS_ENTRY, 0, 0, 0) < 0:
            return -1
        p = _ty_ws(s, p + 1, n)
        if p >= n:
            return -1
        if s[p] == 125:
            q = p + 1
        else:
            while True:   # ---- a member at p
                k = p
                p = _hs_key(s, p, n, &end)
                if p < 0:
                    return -1
                if _tq_is(s, k, end, b"_id", 3):
                    q = _hs_text(s, p, n, _HS_ID, e)
                elif _tq_is(s, k, end, b"answer", 6):
                    q = _hs_text(s, p, n, _HS_ANSWER, e)
                elif _tq_is(s, k, end, b"supporting_facts", 16):
                    q = _hs_facts(s, p, n, e)
                else:
                    q = _tq_skip(s, p, n, _JS_MAX_DEPTH - 2)
                if q < 0:
                    return -1
                p = _hs_next(s, q, n, 125)
                if p == -1:
                    return -1
                if p < -1:
                    q = -p - 2
                    break
        p = _hs_next(s, q, n, 93)
        if p == -1:
            return -1
        if p < -1:
            return 0 if _ty_ws(s, -p - 2, n) == n else -1


cdef Py_ssize_t _hs_pred_events(const unsigned char* s, Py_ssize_t n,
                                _HsEvents* e) noexcept nogil:
    """A prediction file's events; 0, or -1 where the scan leaves the file to json.loads."""
    cdef Py_ssize_t p, q, k, end = 0
    cdef bint sp
    p = _ty_ws(s, 0, n)
    if p >= n or s[p] != 123:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p >= n or s[p] == 125:
        return -1   # (no "answer": the caller's error)
    while True:   # ---- a member of the top object at p
        k = p
        p = _hs_key(s, p, n, &end)
        if p < 0:
            return -1
        sp = _tq_is(s, k, end, b"sp", 2)
        if sp or _tq_is(s, k, end, b"answer", 6):
            if p >= n or s[p] != 123 or _hs_add(e, _HS_SPS if sp else _HS_ANSWERS, 0, 0, 0) < 0:
                return -1
            p = _ty_ws(s, p + 1, n)
            if p >= n:
                return -1
            if s[p] == 125:
                q = p + 1
            else:
                while True:   # ---- id: value at p
                    if p >= n or s[p] != 34:
                        return -1
                    q = _hs_text(s, p, n, _HS_KEY, e)
                    if q < 0:
                        return -1
                    p = _ty_ws(s, q, n)
                    if p >= n or s[p] != 58:
                        return -1
                    p = _ty_ws(s, p + 1, n)
                    q = _hs_facts(s, p, n, e) if sp else _hs_text(s, p, n, _HS_TEXT, e)
                    if q < 0:
                        return -1
                    p = _hs_next(s, q, n, 125)
                    if p == -1:
                        return -1
                    if p < -1:
                        q = -p - 2
                        break
        else:
            q = _tq_skip(s, p, n, _JS_MAX_DEPTH - 1)
            if q < 0:
                return -1
        p = _hs_next(s, q, n, 125)
        if p == -1:
            return -1
        if p < -1:
            return 0 if _ty_ws(s, -p - 2, n) == n else -1


cdef object _hs_string(const unsigned char* s, const int64_t* ev, object scanstring):
    """The string of an event (its span and escape flag in bit 0 of its third value)."""
    return _tq_str(s, ev[1], ev[2], (ev[3] & 1) != 0, scanstring)


cdef list _hs_fact_list(const unsigned char* s, const int64_t* ev, Py_ssize_t* at,
                        Py_ssize_t n, object scanstring):
    """The facts list whose events follow event at[0] (a _HS_FACTS), at[0] moved past them."""
    cdef list facts = []
    cdef Py_ssize_t k = at[0] + 1
    while k < n and ev[4 * k] == _HS_FACT:
        facts.append([_hs_string(s, ev + 4 * k, scanstring),
                      PyLong_FromLongLong((ev[4 * k + 3] - (ev[4 * k + 3] & 1)) // 2)])
        k += 1
    at[0] = k - 1
    return facts


def hotpot_scan_gold(const unsigned char[::1] buf, object scanstring):
    """The gold questions of a HotpotQA gold file's bytes: a list of dicts holding the
    "_id", "answer" and "supporting_facts" each question has (json.loads' values), or None
    where the file is not of the plain form this scan reads. ``scanstring``:
    json.decoder.scanstring, for the long escaped strings."""
    cdef const unsigned char* s = &buf[0] if buf.shape[0] else NULL
    cdef Py_ssize_t n = buf.shape[0], k, r
    cdef _HsEvents e
    cdef list gold = []
    cdef dict entry = None
    cdef int64_t kind
    if n == 0:
        return None
    memset(&e, 0, sizeof(_HsEvents))
    try:
        with nogil:
            r = _hs_gold_events(s, n, &e)
        if r < 0:
            return None
        k = 0
        while k < e.n:
            kind = e.ev[4 * k]
            if kind == _HS_ENTRY:
                entry = {}
                gold.append(entry)
            elif kind == _HS_ID:
                entry["_id"] = _hs_string(s, e.ev + 4 * k, scanstring)
            elif kind == _HS_ANSWER:
                entry["answer"] = _hs_string(s, e.ev + 4 * k, scanstring)
            elif kind == _HS_FACTS:
                entry["supporting_facts"] = _hs_fact_list(s, e.ev, &k, e.n, scanstring)
            k += 1
        return gold
    finally:
        free(e.ev)


def hotpot_scan_predictions(const unsigned char[::1] buf, object scanstring):
    """The predictions of a HotpotQA prediction file's bytes, ``{"answer": {id: str}, "sp":
    {id: [[title, int], ...]}}`` (json.loads' values, other top-level keys left out), or None
    where the file is not of the plain form this scan reads (both keys there, an object
    each, answers strings, facts [string, integer] pairs)."""
    cdef const unsigned char* s = &buf[0] if buf.shape[0] else NULL
    cdef Py_ssize_t n = buf.shape[0], k, r
    cdef _HsEvents e
    cdef dict out = {}
    cdef dict into = None
    cdef object key = None
    cdef int64_t kind
    if n == 0:
        return None
    memset(&e, 0, sizeof(_HsEvents))
    try:
        with nogil:
            r = _hs_pred_events(s, n, &e)
        if r < 0:
            return None
        k = 0
        while k < e.n:
            kind = e.ev[4 * k]
            if kind == _HS_ANSWERS:
                into = out["answer"] = {}
            elif kind == _HS_SPS:
                into = out["sp"] = {}
            elif kind == _HS_KEY:
                key = _hs_string(s, e.ev + 4 * k, scanstring)
            elif kind == _HS_TEXT:
                into[key] = _hs_string(s, e.ev + 4 * k, scanstring)
            elif kind == _HS_FACTS:
                into[key] = _hs_fact_list(s, e.ev, &k, e.n, scanstring)
            k += 1
        if "answer" not in out or "sp" not in out:
            return None
        return out
    finally:
        free(e.ev)
