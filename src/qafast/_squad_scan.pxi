# ---------------------------------------------------------------------------------------------
# Reading a SQuAD-format dataset file and a {question id: answer} predictions file straight
# from their bytes (qafast.io.squad: the SQuAD v1.1/v2.0 and MLQA evaluations)
#
# squad_scan_dataset gives what the evaluations read of a dataset, and nothing else: the
# question ids in file order, every answer text in one flat list with each question's offsets,
# and the "version" field; titles, contexts, questions, answer offsets and any other key are
# checked as JSON and skipped eight plain bytes at a time, without building anything.
# squad_scan_predictions gives the {id: text} dict. Each works in two passes: the first, with
# the GIL released, walks the bytes and writes the spans of the kept strings as events into a
# C array (_HsEvents of _hotpot_scan.pxi); the second makes the str objects, in file order.
#
# The scan takes only files of the plain form: valid JSON (checked as json_skip_spans checks
# it: no raw control characters in strings, valid UTF-8, no NaN/Infinity, numbers of at most
# 4000 characters), a root object with one "data" array of articles, each article an object
# with one "paragraphs" array of paragraph objects, each with one "qas" array of question
# objects, each with one string "id" and one "answers" array of objects with one string
# "text"; "version" a string or null (the last one given counts, as in json.loads); no key of
# these objects written with an escape (it could spell a kept key). Anything else (a key given
# twice where it matters, a value of another type, a BOM, UTF-16, a malformed file) gives None:
# the caller then reads the file with json.loads, which builds what the file holds and says
# where it is wrong. Uses _ty_ws, _ty_word (_tydi_kernels.pxi), _tq_string, _tq_is, _tq_skip,
# _tq_str (_triviaqa_scan.pxi), _HsEvents, _hs_add, _hs_key and _hs_next (_hotpot_scan.pxi).
# ---------------------------------------------------------------------------------------------

cdef enum:
    # event kinds (four int64 each: kind, a string's span with its quotes, its escape flag)
    _SQ_QUESTION = 1     # a question: its id
    _SQ_TEXT = 2         # an answer text of the last question
    _SQ_VERSION = 3      # the "version" string
    _SQ_VERSION_NULL = 4 # "version": null
    _SQ_PREDICTION = 5   # a predicted question's id; the next event is its text
    # what an object in an array is
    _SQ_ARTICLE = 0
    _SQ_PARAGRAPH = 1
    _SQ_QA = 2
    _SQ_ANSWER = 3


cdef Py_ssize_t _sq_string_into(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                                _HsEvents* e, Py_ssize_t k) noexcept nogil:
    """The string value at p put as the span of event k (filled in place, made with a
    placeholder): the position after it, or -1 where it is not a string or was set already
    (a key given twice: json.loads keeps the last, this scan leaves it to json.loads)."""
    cdef bint esc = False
    cdef Py_ssize_t q
    if p >= n or s[p] != 34 or e.ev[4 * k + 1] >= 0:
        return -1
    q = _tq_string(s, p, n, &esc)
    if q < 0:
        return -1
    e.ev[4 * k + 1] = p
    e.ev[4 * k + 2] = q
    e.ev[4 * k + 3] = 1 if esc else 0
    return q


cdef Py_ssize_t _sq_list(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, _HsEvents* e,
                         int what, Py_ssize_t depth) noexcept nogil:
    """p at an array of objects of kind ``what`` (at nesting ``depth``): the position after
    it, or -1."""
    if p >= n or s[p] != 91:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p >= n:
        return -1
    if s[p] == 93:
        return p + 1
    while True:
        p = _sq_object(s, p, n, e, what, depth + 1)
        if p < 0:
            return -1
        p = _hs_next(s, p, n, 93)
        if p == -1:
            return -1
        if p < -1:
            return -p - 2


cdef Py_ssize_t _sq_object(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, _HsEvents* e,
                           int what, Py_ssize_t depth) noexcept nogil:
    """p at an article, paragraph, question or answer object: the position after it, or -1
    where it is not of the plain form (its one kept key missing or given twice among them)."""
    cdef Py_ssize_t key, kend = 0, ev = -1
    cdef bint seen_list = False   # the object's one array ("paragraphs", "qas", "answers")
    if p >= n or s[p] != 123:
        return -1
    if what == _SQ_QA or what == _SQ_ANSWER:
        # its event first (a question before its answers' texts), the span put in place
        # when its key is met, in whatever order the keys come
        ev = e.n
        if _hs_add(e, _SQ_QUESTION if what == _SQ_QA else _SQ_TEXT, -1, -1, 0) < 0:
            return -1
    p = _ty_ws(s, p + 1, n)
    if p >= n or s[p] == 125:
        return -1   # (an empty object lacks its kept key)
    while True:
        key = p
        p = _hs_key(s, p, n, &kend)
        if p < 0:
            return -1
        if what == _SQ_ARTICLE and _tq_is(s, key, kend, b"paragraphs", 10):
            if seen_list:
                return -1
            seen_list = True
            p = _sq_list(s, p, n, e, _SQ_PARAGRAPH, depth)
        elif what == _SQ_PARAGRAPH and _tq_is(s, key, kend, b"qas", 3):
            if seen_list:
                return -1
            seen_list = True
            p = _sq_list(s, p, n, e, _SQ_QA, depth)
        elif what == _SQ_QA and _tq_is(s, key, kend, b"answers", 7):
            if seen_list:
                return -1
            seen_list = True
            p = _sq_list(s, p, n, e, _SQ_ANSWER, depth)
        elif what == _SQ_QA and _tq_is(s, key, kend, b"id", 2):
            p = _sq_string_into(s, p, n, e, ev)
        elif what == _SQ_ANSWER and _tq_is(s, key, kend, b"text", 4):
            p = _sq_string_into(s, p, n, e, ev)
        else:
            p = _tq_skip(s, p, n, _JS_MAX_DEPTH - depth)
        if p < 0:
            return -1
        p = _hs_next(s, p, n, 125)
        if p == -1:
            return -1
        if p < -1:
            p = -p - 2
            break
    if what == _SQ_ANSWER:
        return p if e.ev[4 * ev + 1] >= 0 else -1
    if not seen_list or (what == _SQ_QA and e.ev[4 * ev + 1] < 0):
        return -1
    return p


cdef Py_ssize_t _sq_dataset_events(const unsigned char* s, Py_ssize_t n,
                                   _HsEvents* e) noexcept nogil:
    """A dataset file's events; 0, or -1 where the scan leaves the file to json.loads."""
    cdef Py_ssize_t p, q, key, kend = 0
    cdef bint seen_data = False, esc
    p = _ty_ws(s, 0, n)
    if p >= n or s[p] != 123:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p >= n or s[p] == 125:
        return -1
    while True:
        key = p
        p = _hs_key(s, p, n, &kend)
        if p < 0:
            return -1
        if _tq_is(s, key, kend, b"data", 4):
            if seen_data:
                return -1
            seen_data = True
            p = _sq_list(s, p, n, e, _SQ_ARTICLE, 1)
        elif _tq_is(s, key, kend, b"version", 7):
            if p >= n:
                return -1
            if s[p] == 34:
                esc = False
                q = _tq_string(s, p, n, &esc)
                if q < 0 or _hs_add(e, _SQ_VERSION, p, q, 1 if esc else 0) < 0:
                    return -1
                p = q
            elif _ty_word(s, p, n, b"null", 4):
                if _hs_add(e, _SQ_VERSION_NULL, 0, 0, 0) < 0:
                    return -1
                p += 4
            else:
                return -1
        else:
            p = _tq_skip(s, p, n, _JS_MAX_DEPTH - 1)
        if p < 0:
            return -1
        p = _hs_next(s, p, n, 125)
        if p == -1:
            return -1
        if p < -1:
            break
    if not seen_data:
        return -1
    return 0 if _ty_ws(s, -p - 2, n) == n else -1


def squad_scan_dataset(const unsigned char[::1] buf, list ids, list texts, object scanstring,
                       bint as_numpy=True):
    """Read a SQuAD-format dataset file's bytes: each question's id appended to ``ids`` and
    its answer texts to ``texts`` (json.loads' str values), in file order. Returns
    ``(offsets, has_version, version)``: question i's texts are ``texts[offsets[i]:offsets[i +
    1]]`` (an int64 array, or with ``as_numpy`` false a buffer of int64 for a caller that
    does without numpy; ``offsets[0]`` is the length ``texts`` had), and the "version"
    field (a str, or None where it is null or absent: ``has_version`` says which); or None
    where the file is not of the plain form this scan reads (``ids`` and ``texts`` then
    unchanged). ``scanstring``: json.decoder.scanstring, for the long escaped strings."""
    cdef const unsigned char* s = &buf[0] if buf.shape[0] else NULL
    cdef Py_ssize_t n = buf.shape[0], k, r
    cdef Py_ssize_t nids = len(ids), ntexts = len(texts)
    cdef _HsEvents e
    cdef _AkOffsets off
    cdef int64_t kind
    cdef bint has_version = False
    cdef object version = None
    cdef list new_ids = [], new_texts = []
    if n == 0:
        return None
    memset(&e, 0, sizeof(_HsEvents))
    off.off = NULL
    try:
        with nogil:
            r = _sq_dataset_events(s, n, &e)
        if r < 0:
            return None
        _ak_offsets_init(&off, ntexts, 1 << 16)
        k = 0
        while k < e.n:
            kind = e.ev[4 * k]
            if kind == _SQ_TEXT:
                new_texts.append(_hs_string(s, e.ev + 4 * k, scanstring))
                ntexts += 1
            elif kind == _SQ_QUESTION:
                if new_ids:
                    _ak_offsets_push(&off, ntexts)
                new_ids.append(_hs_string(s, e.ev + 4 * k, scanstring))
            elif kind == _SQ_VERSION:
                has_version = True
                version = _hs_string(s, e.ev + 4 * k, scanstring)
            elif kind == _SQ_VERSION_NULL:
                has_version = True
                version = None
            k += 1
        if new_ids:
            _ak_offsets_push(&off, ntexts)
        ids.extend(new_ids)
        texts.extend(new_texts)
        return _ak_offsets_array(&off, as_numpy), has_version, version
    finally:
        free(e.ev)
        _ak_offsets_free(&off)


cdef Py_ssize_t _sq_prediction_events(const unsigned char* s, Py_ssize_t n,
                                      _HsEvents* e) noexcept nogil:
    """A predictions file's events (each id, then its text); 0, or -1 where the scan leaves
    the file to json.loads."""
    cdef Py_ssize_t p, q
    cdef bint esc
    p = _ty_ws(s, 0, n)
    if p >= n or s[p] != 123:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p >= n:
        return -1
    if s[p] == 125:
        return 0 if _ty_ws(s, p + 1, n) == n else -1
    while True:
        # the id (escapes allowed: a key here is data, not a field name)
        if s[p] != 34:
            return -1
        esc = False
        q = _tq_string(s, p, n, &esc)
        if q < 0 or _hs_add(e, _SQ_PREDICTION, p, q, 1 if esc else 0) < 0:
            return -1
        p = _ty_ws(s, q, n)
        if p >= n or s[p] != 58:
            return -1
        p = _ty_ws(s, p + 1, n)
        if p >= n or s[p] != 34:
            return -1   # not a string: json.loads builds it, the evaluation names it
        esc = False
        q = _tq_string(s, p, n, &esc)
        if q < 0 or _hs_add(e, _SQ_TEXT, p, q, 1 if esc else 0) < 0:
            return -1
        p = _hs_next(s, q, n, 125)
        if p == -1:
            return -1
        if p < -1:
            return 0 if _ty_ws(s, -p - 2, n) == n else -1


def squad_scan_predictions(const unsigned char[::1] buf, object scanstring):
    """The ``{question id: answer text}`` dict of a predictions file's bytes, as json.loads
    makes it (an id given twice keeps its first place and its last text), or None where the
    file is not a plain object of string values. ``scanstring``: json.decoder.scanstring."""
    cdef const unsigned char* s = &buf[0] if buf.shape[0] else NULL
    cdef Py_ssize_t n = buf.shape[0], k, r
    cdef _HsEvents e
    cdef dict out = {}
    if n == 0:
        return None
    memset(&e, 0, sizeof(_HsEvents))
    try:
        with nogil:
            r = _sq_prediction_events(s, n, &e)
        if r < 0:
            return None
        k = 0
        while k + 1 < e.n:
            out[_hs_string(s, e.ev + 4 * k, scanstring)] = _hs_string(
                s, e.ev + 4 * k + 4, scanstring)
            k += 2
        return out
    finally:
        free(e.ev)
