# ---------------------------------------------------------------------------------------------
# DROP files read straight from their bytes (the gold file and the predictions), included by
# _kernels.pyx after _triviaqa_scan.pxi, whose string helpers it uses.
#
# drop_scan_gold walks a gold file as drop_walk walks the loaded object, appending the same
# lists, without building a Python object for what is not scored (passages, questions, any
# other field): only the passage and query ids and the answer strings become str. It accepts
# the file only where json.loads would read it as written and give what drop_walk takes: the
# checks of json_skip_spans (valid UTF-8, no raw control characters in strings, no
# NaN/Infinity, numbers of at most 4000 characters, bounded nesting), keys of the fields it
# reads written without escapes, no passage id and no field it reads given twice in one object
# (json.loads keeps the last value, and a repeated passage id keeps the first one's place), and
# the usual value types. Anything else
# returns False: the caller then reads the file with json.loads, which names what is wrong.
#
# The gold side builds no str per answer span: a span's bag is looked up by the bytes of its
# JSON string as written (_DpSpans), and a str is made only the first time those bytes are
# met. Equal bytes are the same decoded text; two spellings of one text (an escape and the
# character itself) are two entries holding the same bag, which DropVocab gives both. The
# numeric outputs are array.array objects the kernel appends to in place.
# ---------------------------------------------------------------------------------------------

cdef struct _DpText:
    Py_ssize_t p      # the string, quotes included, is s[p:q]; p < 0: the field is absent
    Py_ssize_t q
    bint esc          # it has escapes


cdef struct _DpAnswer:
    Py_ssize_t n_keys     # keys of the object (0: an empty object, which is falsy)
    _DpText number
    Py_ssize_t spans      # where the spans array starts ("["), or -1
    Py_ssize_t n_spans
    bint date             # a "date" object is there
    _DpText day
    _DpText month
    _DpText year


from cpython cimport array as cparray
from cpython.object cimport Py_SIZE


cdef struct _DpSpan:
    uint64_t hash
    Py_ssize_t p      # the string's bytes, between its quotes, are s[p:p + n]
    Py_ssize_t n
    int64_t bag       # < 0: an empty slot
    bint blank        # the decoded text is blank (str.strip() leaves nothing)


cdef struct _DpSpans:
    # the answer spans met so far, by the bytes of their JSON strings (open addressing)
    _DpSpan* slots
    Py_ssize_t cap    # a power of two, at least twice ``used``
    Py_ssize_t used


cdef int _dp_spans_init(_DpSpans* t, Py_ssize_t cap) except -1:
    cdef Py_ssize_t i
    t.slots = <_DpSpan*>malloc(cap * sizeof(_DpSpan))
    if t.slots == NULL:
        raise MemoryError()
    t.cap = cap
    t.used = 0
    for i in range(cap):
        t.slots[i].bag = -1
    return 0


cdef int _dp_spans_grow(_DpSpans* t) except -1:
    # twice the slots, every entry placed again
    cdef _DpSpan* old = t.slots
    cdef Py_ssize_t old_cap = t.cap, i, j, mask
    _dp_spans_init(t, 2 * old_cap)
    mask = t.cap - 1
    for i in range(old_cap):
        if old[i].bag >= 0:
            j = <Py_ssize_t>(old[i].hash & <uint64_t>mask)
            while t.slots[j].bag >= 0:
                j = (j + 1) & mask
            t.slots[j] = old[i]
            t.used += 1
    free(old)
    return 0


cdef int64_t _dp_span_bag(const unsigned char* s, Py_ssize_t p, Py_ssize_t q, bint esc,
                          _DpSpans* t, DropVocab vocab, object scanstring,
                          bint* blank) except -1:
    # the bag of the checked JSON string s[p:q] (quotes included), and whether its text is
    # blank: from the table when these bytes were met before, else from the decoded str
    cdef const unsigned char* key = s + p + 1
    cdef Py_ssize_t n = q - p - 2
    cdef uint64_t h = _gd_hash(key, n)
    cdef Py_ssize_t mask = t.cap - 1
    cdef Py_ssize_t i = <Py_ssize_t>(h & <uint64_t>mask)
    cdef _DpSpan* e
    cdef str text
    cdef int64_t b
    while True:
        e = &t.slots[i]
        if e.bag < 0:
            break
        if e.hash == h and e.n == n and memcmp(s + e.p, key, n) == 0:
            blank[0] = e.blank
            return e.bag
        i = (i + 1) & mask
    text = _tq_str(s, p, q, esc, scanstring)
    b = _dk_bag_of(vocab, text)
    blank[0] = not text.strip()
    e = &t.slots[i]           # (the table is unchanged since the probe above)
    e.hash = h
    e.p = p + 1
    e.n = n
    e.bag = b
    e.blank = blank[0]
    t.used += 1
    if 2 * t.used > t.cap:
        _dp_spans_grow(t)
    return b


cdef inline int _dp_push(cparray.array a, int64_t v) except -1:
    # append to an array of typecode "q" (checked by the caller)
    cdef Py_ssize_t n = Py_SIZE(a)
    cparray.resize_smart(a, n + 1)
    a.data.as_longlongs[n] = v
    return 0


cdef inline int _dp_push8(cparray.array a, int v) except -1:
    # append to an array of one-byte items (checked by the caller)
    cdef Py_ssize_t n = Py_SIZE(a)
    cparray.resize_smart(a, n + 1)
    a.data.as_schars[n] = <signed char>v
    return 0


cdef inline void _dp_clear(_DpText* t) noexcept nogil:
    t.p = -1
    t.q = -1
    t.esc = False


cdef inline Py_ssize_t _dp_next(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                                unsigned char close) noexcept nogil:
    # after a member of a container: the position of the next member (> 0), 0 where the
    # container closes (_dp_close then gives the position after it), or -1
    p = _ty_ws(s, p, n)
    if p >= n:
        return -1
    if s[p] == close:
        return 0
    if s[p] != 44:
        return -1
    p = _ty_ws(s, p + 1, n)
    return p if p < n else -1


cdef inline Py_ssize_t _dp_close(const unsigned char* s, Py_ssize_t p,
                                 Py_ssize_t n) noexcept nogil:
    # the position after the closing bracket that _dp_next (or _dp_first) found after p
    return _ty_ws(s, p, n) + 1


cdef inline Py_ssize_t _dp_first(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                                 unsigned char open_, unsigned char close) noexcept nogil:
    # p at the opening bracket: the first member's position, 0 for an empty container, or -1
    if p >= n or s[p] != open_:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p >= n:
        return -1
    if s[p] == close:
        return 0
    return p


cdef Py_ssize_t _dp_text(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                         _DpText* t) noexcept nogil:
    # p at the value of a field that must be a string given once: its end, or -1
    cdef bint esc = False
    cdef Py_ssize_t q
    if t.p >= 0 or s[p] != 34:
        return -1
    q = _tq_string(s, p, n, &esc)
    if q < 0:
        return -1
    t.p = p
    t.q = q
    t.esc = esc
    return q


cdef Py_ssize_t _dp_strings(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                            Py_ssize_t* count) noexcept nogil:
    # p at an array that must hold strings only: its end, or -1; counts them
    cdef bint esc
    cdef Py_ssize_t at = _dp_first(s, p, n, 91, 93)
    count[0] = 0
    if at == 0:
        return _dp_close(s, p + 1, n)
    while at > 0:
        if s[at] != 34:
            return -1
        esc = False
        p = _tq_string(s, at, n, &esc)
        if p < 0:
            return -1
        count[0] += 1
        at = _dp_next(s, p, n, 93)
    if at < 0:
        return -1
    return _dp_close(s, p, n)


cdef Py_ssize_t _dp_date(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                         _DpAnswer* a) noexcept nogil:
    # p at a date object: its end, or -1; its day, month and year must be strings
    cdef Py_ssize_t at = _dp_first(s, p, n, 123, 125), key_end = 0, v = 0
    if at == 0:
        return _dp_close(s, p + 1, n)
    while at > 0:
        v = _tq_plain_key(s, at, n, &key_end)
        if v < 0:
            return -1
        if _tq_is(s, at, key_end, b"day", 3):
            v = _dp_text(s, v, n, &a.day)
        elif _tq_is(s, at, key_end, b"month", 5):
            v = _dp_text(s, v, n, &a.month)
        elif _tq_is(s, at, key_end, b"year", 4):
            v = _dp_text(s, v, n, &a.year)
        else:
            v = _tq_skip(s, v, n, _JS_MAX_DEPTH - 8)
        if v < 0:
            return -1
        at = _dp_next(s, v, n, 125)
    if at < 0:
        return -1
    return _dp_close(s, v, n)


cdef Py_ssize_t _dp_answer(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                           _DpAnswer* a) noexcept nogil:
    # p at an answer object: its end, or -1; its number must be a string, its spans an array
    # of strings, its date an object (as above)
    cdef Py_ssize_t at, key_end = 0, v = 0
    a.n_keys = 0
    _dp_clear(&a.number)
    _dp_clear(&a.day)
    _dp_clear(&a.month)
    _dp_clear(&a.year)
    a.spans = -1
    a.n_spans = 0
    a.date = False
    at = _dp_first(s, p, n, 123, 125)
    if at == 0:
        return _dp_close(s, p + 1, n)
    while at > 0:
        a.n_keys += 1
        v = _tq_plain_key(s, at, n, &key_end)
        if v < 0:
            return -1
        if _tq_is(s, at, key_end, b"number", 6):
            v = _dp_text(s, v, n, &a.number)
        elif _tq_is(s, at, key_end, b"spans", 5):
            if a.spans >= 0:
                return -1
            a.spans = v
            v = _dp_strings(s, v, n, &a.n_spans)
        elif _tq_is(s, at, key_end, b"date", 4):
            if a.date:
                return -1
            a.date = True
            v = _dp_date(s, v, n, a)
        else:
            v = _tq_skip(s, v, n, _JS_MAX_DEPTH - 6)
        if v < 0:
            return -1
        at = _dp_next(s, v, n, 125)
    if at < 0:
        return -1
    return _dp_close(s, v, n)


cdef Py_ssize_t _dp_qa(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, _DpText* qid,
                       _DpAnswer* first, Py_ssize_t* validated,
                       Py_ssize_t* n_validated) noexcept nogil:
    # p at an entry of qa_pairs: its end, or -1. It must be an object with a string query_id
    # and an answer object; validated_answers, if there, an array of answer objects.
    cdef Py_ssize_t at, key_end = 0, v = 0, w
    cdef bint has_answer = False
    cdef _DpAnswer other
    _dp_clear(qid)
    validated[0] = -1
    n_validated[0] = 0
    at = _dp_first(s, p, n, 123, 125)
    if at <= 0:
        return -1
    while at > 0:
        v = _tq_plain_key(s, at, n, &key_end)
        if v < 0:
            return -1
        if _tq_is(s, at, key_end, b"query_id", 8):
            v = _dp_text(s, v, n, qid)
        elif _tq_is(s, at, key_end, b"answer", 6):
            if has_answer:
                return -1
            has_answer = True
            v = _dp_answer(s, v, n, first)
        elif _tq_is(s, at, key_end, b"validated_answers", 17):
            if validated[0] >= 0:
                return -1
            validated[0] = v
            w = _dp_first(s, v, n, 91, 93)
            if w == 0:
                v = _dp_close(s, v + 1, n)
            else:
                while w > 0:
                    v = _dp_answer(s, w, n, &other)
                    if v < 0:
                        return -1
                    n_validated[0] += 1
                    w = _dp_next(s, v, n, 93)
                if w < 0:
                    return -1
                v = _dp_close(s, v, n)
        else:
            v = _tq_skip(s, v, n, _JS_MAX_DEPTH - 4)
        if v < 0:
            return -1
        at = _dp_next(s, v, n, 125)
    if at < 0 or qid.p < 0 or not has_answer:
        return -1
    return _dp_close(s, v, n)


cdef inline str _dp_str(const unsigned char* s, _DpText* t, object scanstring):
    return _tq_str(s, t.p, t.q, t.esc, scanstring)


cdef int _dp_gold(const unsigned char* s, Py_ssize_t n, _DpAnswer* a, DropVocab vocab,
                  object scanstring, _DpSpans* table, cparray.array gold_bags,
                  cparray.array gold_blank, cparray.array gold_kind) except -2:
    # one gold answer's bags, as drop_walk takes them; -1 where drop_walk would give up
    cdef str text
    cdef Py_ssize_t p, q
    cdef bint esc, blank = False, first_blank = False, first = True
    if a.number.p >= 0 and a.number.q - a.number.p > 2:    # a non-empty number
        _dp_push(gold_bags, _dp_span_bag(s, a.number.p, a.number.q, a.number.esc, table,
                                         vocab, scanstring, &blank))
        _dp_push8(gold_blank, blank)
        _dp_push8(gold_kind, 0)
    elif a.spans >= 0 and a.n_spans > 0:
        p = _ty_ws(s, a.spans + 1, n)
        while True:
            esc = False
            q = _tq_string(s, p, n, &esc)
            _dp_push(gold_bags, _dp_span_bag(s, p, q, esc, table, vocab, scanstring, &blank))
            if first:
                first_blank = blank
                first = False
            p = _ty_ws(s, q, n)
            if s[p] == 93:
                break
            p = _ty_ws(s, p + 1, n)
        _dp_push8(gold_blank, first_blank)
        _dp_push8(gold_kind, 1 if a.n_spans == 1 else 2)
    elif a.date:
        if a.day.p < 0 or a.month.p < 0 or a.year.p < 0:
            return -1
        text = (f"{_dp_str(s, &a.day, scanstring)} {_dp_str(s, &a.month, scanstring)} "
                f"{_dp_str(s, &a.year, scanstring)}")
        _dp_push(gold_bags, _dk_bag_of(vocab, text))
        _dp_push8(gold_blank, not text.strip())
        _dp_push8(gold_kind, 3)
    else:
        return -1
    return 0


cdef int _dp_missing_kind(_DpAnswer* a) noexcept:
    # drop_walk's type code of an unpredicted question, or -1 where it gives up
    if a.n_keys == 0:
        return 0
    if a.number.p >= 0 and a.number.q - a.number.p > 2:
        return 0
    if a.spans >= 0 and a.n_spans > 0:
        return 1 if a.n_spans == 1 else 2
    if a.date and a.day.p >= 0 and a.month.p >= 0 and a.year.p >= 0:
        return 3
    return -1


def drop_scan_gold(const unsigned char[::1] buf, dict predictions, DropVocab vocab,
                   object scanstring, list ids, dict missing, cparray.array pred_off not None,
                   cparray.array pred_bags not None, cparray.array pair_pred not None,
                   cparray.array gold_off not None, cparray.array gold_bags not None,
                   cparray.array gold_blank not None, cparray.array gold_kind not None,
                   cparray.array q_off not None):
    """drop_walk over a gold file's bytes (see the top of _drop_scan.pxi): True, having
    appended what drop_walk appends, or False (with partial outputs, to be cleared) where the
    file must be read with json.loads. ``scanstring`` is ``json.decoder.scanstring``. The
    offsets and bag ids are array.array("q") objects, ``gold_blank`` array("B") and
    ``gold_kind`` array("b"), each holding what the list of drop_walk would hold."""
    cdef _DpSpans table
    cdef cparray.array a
    for a in (pred_off, pred_bags, pair_pred, gold_off, gold_bags, q_off):
        if a.ob_descr.itemsize != 8:
            raise ValueError("drop_scan_gold: offsets and bag ids must be array('q')")
    if gold_blank.ob_descr.itemsize != 1 or gold_kind.ob_descr.itemsize != 1:
        raise ValueError("drop_scan_gold: gold_blank and gold_kind must be one-byte arrays")
    if predictions is None:
        raise TypeError("drop_scan_gold: predictions must be a dict")
    _dp_spans_init(&table, 4096)
    try:
        return _dp_scan_gold(buf, predictions, vocab, scanstring, ids, missing, pred_off,
                             pred_bags, pair_pred, gold_off, gold_bags, gold_blank, gold_kind,
                             q_off, &table)
    finally:
        free(table.slots)


cdef bint _dp_scan_gold(const unsigned char[::1] buf, dict predictions, DropVocab vocab,
                        object scanstring, list ids, dict missing, cparray.array pred_off,
                        cparray.array pred_bags, cparray.array pair_pred,
                        cparray.array gold_off, cparray.array gold_bags,
                        cparray.array gold_blank, cparray.array gold_kind,
                        cparray.array q_off, _DpSpans* table) except -1:
    cdef const unsigned char* s = &buf[0] if buf.shape[0] else NULL
    cdef Py_ssize_t n = buf.shape[0]
    cdef Py_ssize_t p, q, at, v = 0, qa_at, key_end = 0, k = -1, n_validated, w, validated
    cdef bint esc, has_qa, qa_empty
    cdef _DpText qid_t
    cdef _DpAnswer first, other
    cdef set seen = set()
    cdef str qid
    cdef object key, predicted, text
    cdef int code
    if n == 0:
        return False
    p = _ty_ws(s, 0, n)
    at = _dp_first(s, p, n, 123, 125)
    if at < 0:
        return False
    if at == 0:
        p = _dp_close(s, p + 1, n)
    while at > 0:
        # ---- a passage: its id (seen once), then its object
        if s[at] != 34:
            return False
        esc = False
        q = _tq_string(s, at, n, &esc)
        if q < 0:
            return False
        key = _tq_str(s, at, q, esc, scanstring)
        if key in seen:
            return False
        seen.add(key)
        p = _ty_ws(s, q, n)
        if p >= n or s[p] != 58:
            return False
        p = _ty_ws(s, p + 1, n)
        at = _dp_first(s, p, n, 123, 125)
        if at <= 0:
            return False
        has_qa = False
        while at > 0:
            v = _tq_plain_key(s, at, n, &key_end)
            if v < 0:
                return False
            if not _tq_is(s, at, key_end, b"qa_pairs", 8):
                v = _tq_skip(s, v, n, _JS_MAX_DEPTH - 2)
                if v < 0:
                    return False
                at = _dp_next(s, v, n, 125)
                continue
            if has_qa:
                return False
            has_qa = True
            qa_at = _dp_first(s, v, n, 91, 93)
            if qa_at < 0:
                return False
            qa_empty = qa_at == 0
            if qa_empty:
                v = _dp_close(s, v + 1, n)
            while qa_at > 0:
                # ---- a question
                v = _dp_qa(s, qa_at, n, &qid_t, &first, &validated, &n_validated)
                if v < 0:
                    return False
                qid = _dp_str(s, &qid_t, scanstring)
                predicted = predictions.get(qid)
                if predicted is None:
                    if qid in predictions:
                        return False
                    code = _dp_missing_kind(&first)
                    if code < 0:
                        return False
                    missing[len(ids)] = code
                    ids.append(qid)
                    _dp_push(q_off, Py_SIZE(pair_pred))
                    qa_at = _dp_next(s, v, n, 93)
                    continue
                ids.append(qid)
                if type(predicted) is str:
                    _dp_push(pred_bags, _dk_bag_of(vocab, <str>predicted))
                elif type(predicted) is list:
                    for text in <list>predicted:
                        if type(text) is not str:
                            return False
                        _dp_push(pred_bags, _dk_bag_of(vocab, <str>text))
                else:
                    return False
                k += 1
                _dp_push(pred_off, Py_SIZE(pred_bags))
                _dp_push(pair_pred, k)
                if _dp_gold(s, n, &first, vocab, scanstring, table, gold_bags, gold_blank,
                            gold_kind) < 0:
                    return False
                _dp_push(gold_off, Py_SIZE(gold_bags))
                if n_validated:
                    w = _ty_ws(s, validated + 1, n)
                    while True:
                        w = _dp_answer(s, w, n, &other)
                        _dp_push(pair_pred, k)
                        if _dp_gold(s, n, &other, vocab, scanstring, table, gold_bags,
                                    gold_blank, gold_kind) < 0:
                            return False
                        _dp_push(gold_off, Py_SIZE(gold_bags))
                        w = _dp_next(s, w, n, 93)
                        if w <= 0:
                            break
                _dp_push(q_off, Py_SIZE(pair_pred))
                qa_at = _dp_next(s, v, n, 93)
            if qa_at < 0:
                return False
            if not qa_empty:
                v = _dp_close(s, v, n)   # after the qa_pairs array
            at = _dp_next(s, v, n, 125)
        if at < 0 or not has_qa:
            return False
        p = _dp_close(s, v, n)           # after the passage object
        at = _dp_next(s, p, n, 125)
        if at == 0:
            p = _dp_close(s, p, n)       # after the gold object
    if at < 0:
        return False
    return _ty_ws(s, p, n) == n


def drop_scan_predictions(const unsigned char[::1] buf, object scanstring):
    """The predictions file's object ``{query id: string or list of strings}`` as json.loads
    gives it, or None where the file is anything else (then read it with json.loads, which
    names what is wrong). ``scanstring`` is ``json.decoder.scanstring``."""
    cdef const unsigned char* s = &buf[0] if buf.shape[0] else NULL
    cdef Py_ssize_t n = buf.shape[0]
    cdef Py_ssize_t p, q, at, v, w
    cdef bint esc
    cdef dict out = {}
    cdef list values
    cdef object key
    if n == 0:
        return None
    p = _ty_ws(s, 0, n)
    at = _dp_first(s, p, n, 123, 125)
    if at < 0:
        return None
    if at == 0:
        p = _dp_close(s, p + 1, n)
    while at > 0:
        if s[at] != 34:
            return None
        esc = False
        q = _tq_string(s, at, n, &esc)
        if q < 0:
            return None
        key = _tq_str(s, at, q, esc, scanstring)
        p = _ty_ws(s, q, n)
        if p >= n or s[p] != 58:
            return None
        p = _ty_ws(s, p + 1, n)
        if p >= n:
            return None
        if s[p] == 34:
            esc = False
            q = _tq_string(s, p, n, &esc)
            if q < 0:
                return None
            out[key] = _tq_str(s, p, q, esc, scanstring)
            p = q
        elif s[p] == 91:
            values = []
            w = _dp_first(s, p, n, 91, 93)
            if w == 0:
                p = _dp_close(s, p + 1, n)
            else:
                while w > 0:
                    if s[w] != 34:
                        return None
                    esc = False
                    q = _tq_string(s, w, n, &esc)
                    if q < 0:
                        return None
                    values.append(_tq_str(s, w, q, esc, scanstring))
                    w = _dp_next(s, q, n, 93)
                if w < 0:
                    return None
                p = _dp_close(s, q, n)
            out[key] = values
        else:
            return None
        at = _dp_next(s, p, n, 125)
        if at == 0:
            p = _dp_close(s, p, n)
    if at < 0:
        return None
    return out if _ty_ws(s, p, n) == n else None
