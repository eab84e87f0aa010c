# ---------------------------------------------------------------------------------------------
# A TriviaQA dataset file with only the fields the evaluation reads
#
# triviaqa_json_compact copies a dataset file into a buffer the caller allocated (at least as
# long as the file), each value that the evaluation never reads replaced by null: in a question
# of "Data" every key but QuestionId, QuestionPartOfVerifiedEval, Answer, EntityPages and
# SearchResults; in its Answer every key but NormalizedAliases and HumanAnswers; in a page of
# EntityPages or SearchResults every key but Filename and DocPartOfVerifiedEval. The keys stay,
# so json.loads of the copy builds every kept object as it would from the file (duplicate keys
# included). A key written with an escape is never recognised, so kept with all it holds.
#
# It returns the copy's length, or -1 where the file is not plainly JSON that json.loads reads
# as written (the same checks as json_skip_spans: strings without raw control characters,
# valid UTF-8, no NaN/Infinity, numbers of at most 4000 characters, nesting of at most
# _JS_MAX_DEPTH): the caller then reads the whole file as before, so that every error stays
# the one json.loads gives. Whitespace is copied as it is: where the file is valid, a carriage
# return can only be whitespace, which json.loads skips whatever it is.
# Uses _ty_ws, _ty_string, _ty_number and _ty_word of _tydi_kernels.pxi.
# ---------------------------------------------------------------------------------------------

from libc.string cimport memcpy

cdef enum:
    # what a container is, by where it stands in the dataset
    _TQ_OTHER = 0      # anything else: kept whole
    _TQ_ROOT = 1       # the top-level object
    _TQ_DATA = 2       # the root's "Data" array
    _TQ_QUESTION = 3   # an object in Data
    _TQ_ANSWER = 4     # a question's "Answer" object
    _TQ_PAGES = 5      # a question's "EntityPages" or "SearchResults" array
    _TQ_PAGE = 6       # an object in a page list
    _TQ_SKIP = 255     # (of a key) its value is not read: replaced by null


from libc.stdint cimport uint64_t

cdef extern from *:
    """
    #define _TQ_ONES  0x0101010101010101ULL
    #define _TQ_HIGHS 0x8080808080808080ULL
    /* a byte of x is a quote, a backslash, a control character or not ASCII */
    static inline int _tq_word_stops(uint64_t x) {
        uint64_t quote = x ^ (0x22 * _TQ_ONES), slash = x ^ (0x5C * _TQ_ONES);
        return (((quote - _TQ_ONES) & ~quote) | ((slash - _TQ_ONES) & ~slash)
                | ((x - 0x20 * _TQ_ONES) & ~x) | x) & _TQ_HIGHS ? 1 : 0;
    }
    """
    bint _tq_word_stops(uint64_t x) noexcept nogil


cdef inline Py_ssize_t _tq_string(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                                  bint* escaped) noexcept nogil:
    # _ty_string (the same strings accepted, the same end and escape flag), going over eight
    # plain ASCII bytes at a time first: most strings are, whole
    cdef uint64_t x
    cdef Py_ssize_t q = p + 1
    while q + 8 <= n:
        memcpy(&x, s + q, 8)
        if _tq_word_stops(x):
            break
        q += 8
    # the rest byte by byte, from the first byte not seen: _ty_string takes s[q - 1] for the
    # opening quote (it is one, or a plain byte: neither changes what follows)
    return _ty_string(s, q - 1, n, escaped)


cdef inline bint _tq_is(const unsigned char* s, Py_ssize_t p, Py_ssize_t q,
                        const char* w, Py_ssize_t k) noexcept nogil:
    # the key at s[p:q] (quotes included) is exactly "w"
    return q - p == k + 2 and _ty_word(s, p + 1, q, w, k)


cdef unsigned char _tq_key_role(const unsigned char* s, Py_ssize_t p, Py_ssize_t q,
                                unsigned char parent) noexcept nogil:
    # the role of the value of the (escape-free) key s[p:q] in a container of role parent
    if parent == _TQ_ROOT:
        return _TQ_DATA if _tq_is(s, p, q, b"Data", 4) else _TQ_OTHER
    if parent == _TQ_QUESTION:
        if _tq_is(s, p, q, b"Answer", 6):
            return _TQ_ANSWER
        if _tq_is(s, p, q, b"EntityPages", 11) or _tq_is(s, p, q, b"SearchResults", 13):
            return _TQ_PAGES
        if _tq_is(s, p, q, b"QuestionId", 10) or \
                _tq_is(s, p, q, b"QuestionPartOfVerifiedEval", 26):
            return _TQ_OTHER
        return _TQ_SKIP
    if parent == _TQ_ANSWER:
        if _tq_is(s, p, q, b"NormalizedAliases", 17) or _tq_is(s, p, q, b"HumanAnswers", 12):
            return _TQ_OTHER
        return _TQ_SKIP
    if parent == _TQ_PAGE:
        if _tq_is(s, p, q, b"Filename", 8) or _tq_is(s, p, q, b"DocPartOfVerifiedEval", 21):
            return _TQ_OTHER
        return _TQ_SKIP
    return _TQ_OTHER


cdef Py_ssize_t _tq_compact(const unsigned char* s, Py_ssize_t n,
                            unsigned char* out) noexcept nogil:
    cdef Py_ssize_t p, q, depth = 0, skip_start = -1, skip_depth = -1
    cdef Py_ssize_t w = 0, copied = 0   # written to out; s[:copied] is accounted for
    cdef unsigned char kinds[_JS_MAX_DEPTH]   # 0 object, 1 array
    cdef unsigned char roles[_JS_MAX_DEPTH]
    cdef unsigned char pending = _TQ_ROOT     # the role of the value about to start
    cdef unsigned char role
    cdef bint esc, ended, next_key
    cdef unsigned char c
    p = _ty_ws(s, 0, n)
    while True:
        # ---- a value starts at p; `pending` is its role if it is a container
        if p >= n:
            return -1
        c = s[p]
        ended = True
        if c == 123 or c == 91:  # { [
            if depth >= _JS_MAX_DEPTH:
                return -1
            role = _TQ_OTHER
            if skip_start < 0:
                if c == 123 and (pending == _TQ_ROOT or pending == _TQ_QUESTION
                                 or pending == _TQ_ANSWER or pending == _TQ_PAGE):
                    role = pending
                elif c == 91 and (pending == _TQ_DATA or pending == _TQ_PAGES):
                    role = pending
            kinds[depth] = 0 if c == 123 else 1
            roles[depth] = role
            depth += 1
            p = _ty_ws(s, p + 1, n)
            if p >= n:
                return -1
            if s[p] == (125 if c == 123 else 93):  # empty container
                depth -= 1
                p += 1
            elif c == 91:
                # the first element: an object in Data is a question, in a page list a page
                pending = (_TQ_QUESTION if role == _TQ_DATA else
                           _TQ_PAGE if role == _TQ_PAGES else _TQ_OTHER)
                continue
            else:
                ended = False   # the first key follows
        elif c == 34:
            esc = False
            p = _tq_string(s, p, n, &esc)
            if p < 0:
                return -1
        elif c == 45 or 48 <= c <= 57:
            q = _ty_number(s, p, n)
            if q < 0 or q - p > 4000:
                return -1
            p = q
        elif c == 116 and _ty_word(s, p, n, b"true", 4):
            p += 4
        elif c == 102 and _ty_word(s, p, n, b"false", 5):
            p += 5
        elif c == 110 and _ty_word(s, p, n, b"null", 4):
            p += 4
        else:
            return -1
        if ended:
            # ---- a value ended at p: then the next element, the next key or a closing
            next_key = False
            while True:
                if skip_start >= 0 and depth == skip_depth:
                    if p - skip_start > 4:   # (so the copy is never longer than the file)
                        memcpy(out + w, s + copied, skip_start - copied)
                        w += skip_start - copied
                        memcpy(out + w, b"null", 4)
                        w += 4
                        copied = p
                    skip_start = -1
                p = _ty_ws(s, p, n)
                if depth == 0:
                    if p != n:
                        return -1
                    memcpy(out + w, s + copied, n - copied)
                    return w + n - copied
                if p >= n:
                    return -1
                c = s[p]
                if c == 44:  # ,
                    p = _ty_ws(s, p + 1, n)
                    if p >= n:
                        return -1
                    if kinds[depth - 1] == 1:
                        role = roles[depth - 1]
                        pending = (_TQ_QUESTION if role == _TQ_DATA else
                                   _TQ_PAGE if role == _TQ_PAGES else _TQ_OTHER)
                    else:
                        next_key = True
                    break
                if c == (125 if kinds[depth - 1] == 0 else 93):
                    depth -= 1
                    p += 1
                    continue
                return -1
            if not next_key:
                continue
        # ---- a key of the object at depth - 1 starts at p
        if s[p] != 34:
            return -1
        esc = False
        q = _tq_string(s, p, n, &esc)
        if q < 0:
            return -1
        if esc or skip_start >= 0:
            pending = _TQ_OTHER
        else:
            pending = _tq_key_role(s, p, q, roles[depth - 1])
        p = _ty_ws(s, q, n)
        if p >= n or s[p] != 58:   # :
            return -1
        p = _ty_ws(s, p + 1, n)
        if pending == _TQ_SKIP:
            skip_start = p
            skip_depth = depth
            pending = _TQ_OTHER


def triviaqa_json_compact(const unsigned char[::1] buf, unsigned char[::1] out):
    """The length of the copy of ``buf`` written to ``out`` (see above), or -1."""
    cdef Py_ssize_t n = buf.shape[0], got
    if n == 0:
        return -1
    if out.shape[0] < n:
        raise ValueError("triviaqa_json_compact: the output is shorter than the input")
    with nogil:
        got = _tq_compact(&buf[0], n, &out[0])
    return got


# ---------------------------------------------------------------------------------------------
# A Wikipedia dataset's questions read straight from the file
#
# triviaqa_scan_questions reads a dataset file whose root object has one "Data" key (written
# without escapes) holding an array of questions, each an object with a string QuestionId, an
# Answer object whose NormalizedAliases is an array of strings (and HumanAnswers, if any, one
# too), and QuestionPartOfVerifiedEval, if any, true or false; no key of a question or an
# Answer written with an escape, none of those keys twice. For each question it appends the
# QuestionId to `qids`, {"NormalizedAliases": [...], "HumanAnswers": [...]} (the latter only if
# the file has it) to `answers`, the list of its gold strings to `golds` (NormalizedAliases,
# then HumanAnswers as they are: see _gold_answers_batch of triviaqa_eval.py) and
# QuestionPartOfVerifiedEval (1, 0, or -1 where there is none) to `flags`; into `out` (at
# least as long as the file) it writes the file with the value of "Data" replaced by [], for
# json.loads to read the rest (no key of the root written with an escape either). It returns the length
# written, or -1 for any other file, or one that is not plainly JSON as json_skip_spans
# checks it (then the lists hold garbage, and the caller reads the file the general way).
# Strings are decoded from the (checked) UTF-8 and escapes as json.loads decodes them; a long
# string with an escape is decoded by json's own scanstring. The scan
# holds the GIL: it makes a string object every few bytes.
# ---------------------------------------------------------------------------------------------

from cpython.unicode cimport PyUnicode_DecodeUTF8, PyUnicode_FromKindAndData
from cpython.unicode cimport PyUnicode_4BYTE_KIND


cdef Py_ssize_t _tq_key_value(const unsigned char* s, Py_ssize_t p, Py_ssize_t n) noexcept nogil:
    # p at a key: the position of its value, or -1
    cdef bint esc = False
    if p >= n or s[p] != 34:
        return -1
    p = _tq_string(s, p, n, &esc)
    if p < 0:
        return -1
    p = _ty_ws(s, p, n)
    if p >= n or s[p] != 58:
        return -1
    p = _ty_ws(s, p + 1, n)
    return p if p < n else -1


cdef Py_ssize_t _tq_skip(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                         Py_ssize_t room) noexcept nogil:
    # the end of the value at p, checked as json_skip_spans checks a file, or -1; it may nest
    # room containers deep (at most _JS_MAX_DEPTH)
    cdef unsigned char kinds[_JS_MAX_DEPTH]   # 0 object, 1 array
    cdef Py_ssize_t depth = 0, q
    cdef bint esc
    cdef unsigned char c
    while True:
        # ---- a value starts at p
        if p >= n:
            return -1
        c = s[p]
        if c == 123 or c == 91:  # { [
            if depth >= room:
                return -1
            kinds[depth] = 0 if c == 123 else 1
            depth += 1
            p = _ty_ws(s, p + 1, n)
            if p >= n:
                return -1
            if s[p] == (125 if c == 123 else 93):  # empty container
                depth -= 1
                p += 1
            elif c == 91:
                continue
            else:
                p = _tq_key_value(s, p, n)
                if p < 0:
                    return -1
                continue
        elif c == 34:
            esc = False
            p = _tq_string(s, p, n, &esc)
            if p < 0:
                return -1
        elif c == 45 or 48 <= c <= 57:
            q = _ty_number(s, p, n)
            if q < 0 or q - p > 4000:
                return -1
            p = q
        elif c == 116 and _ty_word(s, p, n, b"true", 4):
            p += 4
        elif c == 102 and _ty_word(s, p, n, b"false", 5):
            p += 5
        elif c == 110 and _ty_word(s, p, n, b"null", 4):
            p += 4
        else:
            return -1
        # ---- a value ended at p
        while True:
            if depth == 0:
                return p
            p = _ty_ws(s, p, n)
            if p >= n:
                return -1
            c = s[p]
            if c == 44:  # ,
                p = _ty_ws(s, p + 1, n)
                if kinds[depth - 1] == 0:
                    p = _tq_key_value(s, p, n)
                    if p < 0:
                        return -1
                break
            if c == (125 if kinds[depth - 1] == 0 else 93):
                depth -= 1
                p += 1
                continue
            return -1


cdef enum:
    _TQ_DECODE_MAX = 512   # the longest escaped string (in bytes) decoded here


cdef object _tq_str(const unsigned char* s, Py_ssize_t p, Py_ssize_t q, bint esc,
                    object scanstring):
    # the checked JSON string s[p:q] (quotes included) as json.loads makes it
    cdef Py_UCS4 buf[_TQ_DECODE_MAX]
    cdef Py_ssize_t k
    if not esc:
        return PyUnicode_DecodeUTF8(<const char*>s + p + 1, q - p - 2, NULL)
    if q - p - 2 <= _TQ_DECODE_MAX:   # (never more code points than bytes)
        k = _json_unescape(s, p + 1, q - 1, buf)
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, k)
    return scanstring(PyUnicode_DecodeUTF8(<const char*>s + p, q - p, NULL), 1, True)[0]


cdef Py_ssize_t _tq_strings(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, list into,
                            object scanstring) except -2:
    # p at "[": an array of strings appended to `into`; its end, or -1
    cdef Py_ssize_t q
    cdef bint esc
    p = _ty_ws(s, p + 1, n)
    if p >= n:
        return -1
    if s[p] == 93:
        return p + 1
    while True:
        if s[p] != 34:
            return -1
        esc = False
        q = _tq_string(s, p, n, &esc)
        if q < 0:
            return -1
        into.append(_tq_str(s, p, q, esc, scanstring))
        p = _ty_ws(s, q, n)
        if p >= n:
            return -1
        if s[p] == 93:
            return p + 1
        if s[p] != 44:
            return -1
        p = _ty_ws(s, p + 1, n)
        if p >= n:
            return -1


cdef Py_ssize_t _tq_plain_key(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                              Py_ssize_t* key_end) noexcept nogil:
    # p at a key written without escapes: the position of its value (key_end: after its
    # closing quote), or -1
    cdef bint esc = False
    cdef Py_ssize_t q
    if s[p] != 34:
        return -1
    q = _tq_string(s, p, n, &esc)
    if q < 0 or esc:
        return -1
    key_end[0] = q
    p = _ty_ws(s, q, n)
    if p >= n or s[p] != 58:
        return -1
    p = _ty_ws(s, p + 1, n)
    return p if p < n else -1


cdef object _tq_answer(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, Py_ssize_t* end,
                       object scanstring):
    # p at "{": the Answer's dict of the gold strings (end: after it), or None
    cdef Py_ssize_t q = 0, v
    cdef list aliases = None, human = None
    p = _ty_ws(s, p + 1, n)
    if p >= n or s[p] == 125:
        return None
    while True:
        v = _tq_plain_key(s, p, n, &q)
        if v < 0:
            return None
        if _tq_is(s, p, q, b"NormalizedAliases", 17):
            if aliases is not None or s[v] != 91:
                return None
            aliases = []
            p = _tq_strings(s, v, n, aliases, scanstring)
        elif _tq_is(s, p, q, b"HumanAnswers", 12):
            if human is not None or s[v] != 91:
                return None
            human = []
            p = _tq_strings(s, v, n, human, scanstring)
        else:
            p = _tq_skip(s, v, n, _JS_MAX_DEPTH - 4)
        if p < 0:
            return None
        p = _ty_ws(s, p, n)
        if p >= n:
            return None
        if s[p] == 125:
            break
        if s[p] != 44:
            return None
        p = _ty_ws(s, p + 1, n)
        if p >= n:
            return None
    if aliases is None:
        return None
    end[0] = p + 1
    if human is None:
        return {"NormalizedAliases": aliases}
    return {"NormalizedAliases": aliases, "HumanAnswers": human}


cdef inline list _tq_golds(dict answer):
    # the strings an Answer of _tq_answer is scored against (the human answers as they are)
    cdef list aliases = answer["NormalizedAliases"]
    cdef list human = answer.get("HumanAnswers")
    return aliases + human if human else aliases


cdef Py_ssize_t _tq_question(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, list qids,
                             list answers, list golds, list flags,
                             object scanstring) except -2:
    # p at "{": one question appended; its end, or -1
    cdef Py_ssize_t q = 0, v, qid_p = -1, qid_q = -1
    cdef bint qid_esc = False
    cdef int flag = -1
    answer = None
    p = _ty_ws(s, p + 1, n)
    if p >= n or s[p] == 125:
        return -1
    while True:
        v = _tq_plain_key(s, p, n, &q)
        if v < 0:
            return -1
        if _tq_is(s, p, q, b"QuestionId", 10):
            if qid_p >= 0 or s[v] != 34:
                return -1
            qid_esc = False
            qid_q = _tq_string(s, v, n, &qid_esc)
            qid_p = v
            p = qid_q
        elif _tq_is(s, p, q, b"Answer", 6):
            if answer is not None or s[v] != 123:
                return -1
            answer = _tq_answer(s, v, n, &p, scanstring)
            if answer is None:
                return -1
        elif _tq_is(s, p, q, b"QuestionPartOfVerifiedEval", 26):
            if flag != -1:
                return -1
            if _ty_word(s, v, n, b"true", 4):
                flag = 1
                p = v + 4
            elif _ty_word(s, v, n, b"false", 5):
                flag = 0
                p = v + 5
            else:
                return -1
        else:
            p = _tq_skip(s, v, n, _JS_MAX_DEPTH - 3)
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
        if p >= n:
            return -1
    if qid_p < 0 or answer is None:
        return -1
    qids.append(_tq_str(s, qid_p, qid_q, qid_esc, scanstring))
    answers.append(answer)
    golds.append(_tq_golds(answer))
    flags.append(flag)
    return p + 1


cdef Py_ssize_t _tq_questions(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, list qids,
                              list answers, list golds, list flags,
                              object scanstring) except -2:
    # p at "[": the questions appended; the array's end, or -1
    p = _ty_ws(s, p + 1, n)
    if p >= n:
        return -1
    if s[p] == 93:
        return p + 1
    while True:
        if s[p] != 123:
            return -1
        p = _tq_question(s, p, n, qids, answers, golds, flags, scanstring)
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
        if p >= n:
            return -1


def triviaqa_scan_questions(const unsigned char[::1] buf, unsigned char[::1] out, list qids,
                            list answers, list golds, list flags, object scanstring):
    """The length of the file without its questions, written to ``out``, or -1 (see above)."""
    cdef const unsigned char* s
    cdef unsigned char* o
    cdef Py_ssize_t n = buf.shape[0], p, q = 0, v, data_start = -1, data_end = -1
    if n == 0:
        return -1
    if out.shape[0] < n:
        raise ValueError("triviaqa_scan_questions: the output is shorter than the input")
    s = &buf[0]
    p = _ty_ws(s, 0, n)
    if p >= n or s[p] != 123:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p >= n or s[p] == 125:
        return -1
    while True:
        v = _tq_plain_key(s, p, n, &q)
        if v < 0:
            return -1
        if _tq_is(s, p, q, b"Data", 4):
            if data_start >= 0 or s[v] != 91:
                return -1
            data_start = v
            p = _tq_questions(s, v, n, qids, answers, golds, flags, scanstring)
            data_end = p
        else:
            p = _tq_skip(s, v, n, _JS_MAX_DEPTH - 1)
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
        if p >= n:
            return -1
    if _ty_ws(s, p + 1, n) != n or data_start < 0:
        return -1
    # (the array is at least "[]": the copy is never longer than the file)
    o = &out[0]
    memcpy(o, s, data_start)
    memcpy(o + data_start, b"[]", 2)
    memcpy(o + data_start + 2, s + data_end, n - data_end)
    return data_start + 2 + n - data_end


# ---------------------------------------------------------------------------------------------
# The strings a dataset object's keys are scored on, gathered in one walk
#
# triviaqa_gold_strings walks the keys of a dataset given as an object: for each key with a
# prediction, its prediction goes to `texts` and its gold strings (NormalizedAliases, then the
# HumanAnswers as they are: see _gold_answers_batch of triviaqa_eval.py) to `golds`, their
# end in `golds` to ref_off. Holding the GIL only for this walk, which makes no object, the
# strings are then normalized and scored without it (answer_tokens, answer_scores). Any key
# whose values are not exactly what the script takes stops the walk: the caller reads that
# key the general way, which names what is wrong or takes what it can (a subclass).
# ---------------------------------------------------------------------------------------------

#: what triviaqa_gold_strings returns once it has gathered every key (a key's index is >= 0)
TRIVIAQA_EVERY_KEY_TAKEN = -1


def triviaqa_gold_strings(list answers, list preds, list texts, list golds,
                          int64_t[::1] ref_off):
    """TRIVIAQA_EVERY_KEY_TAKEN once every key is gathered (see above), else the index of the
    first key at fault
    (an Answer that is not exactly a dict, NormalizedAliases or HumanAnswers not exactly a
    list, a string that is not exactly a str, no gold string). ``answers[i]`` is key i's
    Answer, ``preds[i]`` its prediction (None for none); ``ref_off`` has one entry per
    prediction and one more."""
    cdef Py_ssize_t i, n = len(preds), row = 0, rows = ref_off.shape[0] - 1, start
    cdef object p, s, human
    cdef dict answer
    cdef list aliases
    if len(answers) != n:
        raise InputError("triviaqa_gold_strings: one Answer per key is expected")
    if rows < 0:
        raise InputError("triviaqa_gold_strings: ref_off must have at least one entry")
    ref_off[0] = 0
    for i in range(n):
        p = preds[i]
        if p is None:
            continue
        if row == rows:
            raise InputError("triviaqa_gold_strings: more predictions than ref_off has room for")
        if type(p) is not str or type(answers[i]) is not dict:
            return i
        answer = <dict>answers[i]
        s = answer.get("NormalizedAliases")
        if type(s) is not list:
            return i
        aliases = <list>s
        human = None
        if "HumanAnswers" in answer:
            human = answer["HumanAnswers"]
            if type(human) is not list:
                return i
        start = len(golds)
        for s in aliases:
            if type(s) is not str:
                return i
            golds.append(s)
        if human:
            for s in <list>human:
                if type(s) is not str:
                    return i
                golds.append(s)
        if len(golds) == start:
            return i
        texts.append(p)
        row += 1
        ref_off[row] = len(golds)
        # (no borrowed reference is held here; preds and answers are the caller's own lists)
        _ak_pause_gil(i)
    if row != rows:
        raise InputError("triviaqa_gold_strings: fewer predictions than ref_off has room for")
    return TRIVIAQA_EVERY_KEY_TAKEN


# ---------------------------------------------------------------------------------------------
# A Wikipedia dataset object and its predictions dict, read in one walk and tokenized
#
# triviaqa_object_tokens walks the "Data" list of a Wikipedia dataset object and the
# predictions dict together, as the script pairs them: each question kept (the verified ones
# of a verified set) is a key; a key with a prediction is a row, whose prediction and gold
# strings (NormalizedAliases, then the HumanAnswers as they are: see _gold_answers_batch of
# triviaqa_eval.py) it scores against. The walk holds the GIL and makes no object a question:
# it records where each str keeps its characters (and a reference to the str, so that they
# stay alive whatever another thread or an __eq__ does to the dicts meanwhile); TriviaQA's
# normalizing and tokenizing of those characters then runs without the GIL (with it only for
# a str whose lowering needs CPython's tables, as answer_tokens does).
#
# Anything that is not exactly what the script takes stops the walk (a question or Answer
# that is not exactly a dict, a missing key, a QuestionId that is not exactly a str or comes
# twice, QuestionPartOfVerifiedEval not True or False, a prediction None or not exactly a str,
# NormalizedAliases or HumanAnswers not exactly a list of exactly str, no gold string): the
# caller then reads the inputs the general way, which names the fault or takes what it can.
# ---------------------------------------------------------------------------------------------

from cpython.bytearray cimport PyByteArray_AS_STRING


cdef struct _TqSources:
    # the str objects one walk recorded, in order, for the pass without the GIL
    const char** data     # each str's characters: ASCII bytes, or code units of its kind
    int64_t* length       # its length in code units
    uint8_t* kind         # 0 ASCII; else its PyUnicode kind (1, 2 or 4)
    PyObject** obj        # the str itself (the walk holds a reference to it)
    Py_ssize_t count
    Py_ssize_t cap


cdef void _tq_sources_free(_TqSources* src) noexcept:
    free(src.data)
    free(src.length)
    free(src.kind)
    free(src.obj)
    src.data = NULL
    src.length = NULL
    src.kind = NULL
    src.obj = NULL
    src.count = 0
    src.cap = 0


cdef int _tq_sources_add(_TqSources* src, object s) except -1:
    # s is exactly a str, which the caller keeps alive until the pass without the GIL is over
    cdef Py_ssize_t cap
    cdef void* grown
    cdef Py_ssize_t k = src.count
    if k == src.cap:
        cap = src.cap * 2 if src.cap else 1 << 12
        grown = realloc(<void*>src.data, cap * sizeof(const char*))
        if grown == NULL:
            raise MemoryError()
        src.data = <const char**>grown
        grown = realloc(src.length, cap * sizeof(int64_t))
        if grown == NULL:
            raise MemoryError()
        src.length = <int64_t*>grown
        grown = realloc(src.kind, cap)
        if grown == NULL:
            raise MemoryError()
        src.kind = <uint8_t*>grown
        grown = realloc(src.obj, cap * sizeof(PyObject*))
        if grown == NULL:
            raise MemoryError()
        src.obj = <PyObject**>grown
        src.cap = cap
    # (a str made by CPython is compact: its characters follow its header, and an ASCII
    # one's are its UTF-8 bytes)
    src.data[k] = <const char*>PyUnicode_DATA(s)
    src.length[k] = PyUnicode_GET_LENGTH(s)
    src.kind[k] = 0 if PyUnicode_IS_ASCII(s) else <uint8_t>PyUnicode_KIND(s)
    src.obj[k] = <PyObject*>s
    src.count = k + 1
    return 0


cdef int _tq_add_strings(_TqSources* src, list strings, list held) except -2:
    # every item of strings, if each is exactly a str (1), else 0
    cdef object s
    for s in strings:
        if type(s) is not str:
            return 0
        held.append(s)
        _tq_sources_add(src, s)
    return 1


cdef int _tq_tokens(_TqSources* src, int64_t* offp, _AkWork* work, char** w,
                    Py_ssize_t* wcap, _trec_Table* table, _AkIds* out) except -1 nogil:
    # TriviaQA's normalized tokens of every recorded str as ids (answer_tokens' mode 2);
    # offp[i + 1] is where string i's end (offp[0] is the caller's)
    cdef Py_ssize_t i
    for i in range(src.count):
        if i + 8 < src.count:
            AK_PREFETCH(src.data[i + 8])
        _ak_triviaqa_string(src.kind[i], src.data[i], src.length[i], src.obj[i], work, w,
                            wcap, table, out)
        offp[i + 1] = out.size
    return 0


def triviaqa_object_tokens(list questions, dict predictions, bint verified,
                           int64_t[::1] ref_off):
    """Read a Wikipedia dataset's questions and its predictions in one walk (see above).

    Returns None where some value is not exactly what the script takes, else ``(keys, rows,
    ids, tok_off)``: the number of keys and of rows (keys with a prediction); the token ids
    of every row's prediction (strings 0 to rows - 1) then of every row's gold strings, row
    by row (string rows + j is gold string j), as answer_tokens gives them (``ids``, an int32
    buffer) with string i's at ``tok_off[i]:tok_off[i + 1]`` (``tok_off``, a bytearray of
    int64). Row r's gold strings are ``ref_off[r]:ref_off[r + 1]`` of the gold strings;
    ``ref_off`` (the caller's) has at least ``len(questions) + 1`` entries.
    """
    cdef Py_ssize_t i = 0, keys = 0, rows = 0, start, seen_before, total
    cdef object q, flag, qid, answer, aliases, human, pred, tok_off
    cdef set seen = set()
    # a reference to every str recorded (their characters are read without the GIL)
    cdef list held = []
    cdef _TqSources texts, golds
    cdef int64_t* offp
    cdef _trec_Table table
    cdef _AkIds out
    cdef _AkWork work
    cdef char* w = NULL
    cdef Py_ssize_t wcap = 0
    if ref_off.shape[0] < len(questions) + 1:
        raise InputError("triviaqa_object_tokens: ref_off needs one entry per question, "
                         "and one more")
    memset(&texts, 0, sizeof(_TqSources))
    memset(&golds, 0, sizeof(_TqSources))
    out.data = NULL
    out.size = 0
    out.cap = 0
    work.cp = NULL
    work.cls = NULL
    work.spans = NULL
    work.utf8 = NULL
    work.cap = 0
    _ak_table_init(&table)
    try:
        ref_off[0] = 0
        # (the lengths are read again at each step: an __eq__ of a key in predictions that
        # shares a QuestionId's hash is Python code, which could change them)
        while i < len(questions):
            q = questions[i]
            i += 1
            if type(q) is not dict:
                return None
            if verified:
                flag = (<dict>q).get("QuestionPartOfVerifiedEval")
                if flag is False:
                    continue
                if flag is not True:
                    return None
            qid = (<dict>q).get("QuestionId")
            answer = (<dict>q).get("Answer")
            if type(qid) is not str or answer is None:
                return None
            seen_before = len(seen)
            seen.add(qid)
            if len(seen) == seen_before:   # a QuestionId twice: the general way keeps it once
                return None
            keys += 1
            pred = predictions.get(qid)
            if pred is None:
                if qid in predictions:
                    return None
                continue
            if type(pred) is not str or type(answer) is not dict:
                return None
            aliases = (<dict>answer).get("NormalizedAliases")
            human = (<dict>answer).get("HumanAnswers")
            if type(aliases) is not list or (human is not None and type(human) is not list) \
                    or (human is None and "HumanAnswers" in answer):
                return None
            held.append(pred)
            _tq_sources_add(&texts, pred)
            start = golds.count
            if not _tq_add_strings(&golds, <list>aliases, held):
                return None
            if human is not None and not _tq_add_strings(&golds, <list>human, held):
                return None
            if golds.count == start:
                return None
            rows += 1
            if rows >= ref_off.shape[0]:   # (questions grew meanwhile)
                return None
            ref_off[rows] = golds.count
        total = texts.count + golds.count
        if total >= 2**31 - 1:   # (string ids are int32: such an input goes the general way)
            return None
        tok_off = bytearray(8 * (total + 1))
        offp = <int64_t*>PyByteArray_AS_STRING(tok_off)
        with nogil:
            offp[0] = 0
            _tq_tokens(&texts, offp, &work, &w, &wcap, &table, &out)
            _tq_tokens(&golds, offp + texts.count, &work, &w, &wcap, &table, &out)
        return keys, rows, _ak_ids_buffer(&out), tok_off
    finally:
        free(w)
        _tq_sources_free(&texts)
        _tq_sources_free(&golds)
        _ak_ids_free(&out)
        _trec_table_free(&table)
        _ak_work_free(&work)
