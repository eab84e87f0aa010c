# ---------------------------------------------------------------------------------------------
# Skipping the bulky fields of a JSON file (HotpotQA and DROP gold files, a Natural Questions line)
#
# json_skip_spans checks that the whole buffer is JSON that json.loads reads as written
# (strings without raw control characters, valid UTF-8, no NaN/Infinity, numbers of at most
# 4000 characters, nesting of at most _JS_MAX_DEPTH) and gives the byte spans of the values
# to skip (those of at least _JS_MIN_SKIP bytes): the caller puts null in their place and hands the (much shorter) rest to json.loads,
# which then builds every kept object, duplicate keys included, as it would have. Anything the
# scan does not accept gives None: the caller then reads the whole file as before. Keys with
# escapes are never skipped (they are left to json.loads). Uses _ty_ws, _ty_string,
# _ty_number and _ty_word of _tydi_kernels.pxi.
# ---------------------------------------------------------------------------------------------

cdef enum:
    _JS_MAX_DEPTH = 200
    _JS_MIN_SKIP = 64     # values shorter than this (in bytes) are kept
    _JS_HOTPOT = 0  # [ {"context", "question", "type", "level": skipped} ]
    _JS_DROP = 1    # { pid: {"passage": skipped, "qa_pairs": [ {"question": skipped} ]} }
    _JS_NQ = 2      # {"example_id", "annotations", any other key: skipped}


cdef inline bint _js_key(const unsigned char* s, Py_ssize_t p, Py_ssize_t q,
                         const char* w, Py_ssize_t k) noexcept nogil:
    # the key at s[p:q] (quotes included) is exactly "w"
    return q - p == k + 2 and _ty_word(s, p + 1, q, w, k)


cdef bint _js_skip_key(const unsigned char* s, Py_ssize_t p, Py_ssize_t q, int layout,
                       Py_ssize_t depth, const unsigned char* kinds,
                       const unsigned char* flags) noexcept nogil:
    if layout == _JS_HOTPOT:
        if depth != 2 or kinds[0] != 1 or kinds[1] != 0:
            return False
        return (_js_key(s, p, q, b"context", 7) or _js_key(s, p, q, b"question", 8)
                or _js_key(s, p, q, b"type", 4) or _js_key(s, p, q, b"level", 5))
    if layout == _JS_NQ:
        return (depth == 1 and not _js_key(s, p, q, b"example_id", 10)
                and not _js_key(s, p, q, b"annotations", 11))
    if depth == 2 and kinds[0] == 0 and kinds[1] == 0:
        return _js_key(s, p, q, b"passage", 7)
    if depth == 4 and kinds[0] == 0 and kinds[1] == 0 and kinds[2] == 1 and kinds[3] == 0 \
            and flags[1]:
        return _js_key(s, p, q, b"question", 8)
    return False


def json_skip_spans(const unsigned char[::1] buf, int layout):
    cdef const unsigned char* s = &buf[0] if buf.shape[0] else NULL
    cdef Py_ssize_t n = buf.shape[0]
    cdef Py_ssize_t p = 0, q, depth = 0, skip_start = -1, skip_depth = -1
    cdef unsigned char kinds[_JS_MAX_DEPTH]   # 0 object, 1 array
    cdef unsigned char flags[_JS_MAX_DEPTH]   # the current key at this level is "qa_pairs"
    cdef bint esc, skip
    cdef unsigned char c
    spans = []
    if n == 0:
        return None
    p = _ty_ws(s, 0, n)
    while True:
        # ---- a value starts at p
        if p >= n:
            return None
        c = s[p]
        if c == 123 or c == 91:  # { [
            if depth >= _JS_MAX_DEPTH:
                return None
            kinds[depth] = 0 if c == 123 else 1
            flags[depth] = False
            depth += 1
            p = _ty_ws(s, p + 1, n)
            if p >= n:
                return None
            if s[p] == (125 if c == 123 else 93):  # empty container
                depth -= 1
                p += 1
            elif c == 91:
                continue
            else:
                # ---- a key starts at p
                while True:
                    if s[p] != 34:
                        return None
                    esc = False
                    q = _ty_string(s, p, n, &esc)
                    if q < 0 or q - p > 4002:
                        return None
                    skip = (not esc and skip_start < 0
                            and _js_skip_key(s, p, q, layout, depth, kinds, flags))
                    if layout == _JS_DROP and depth == 2:
                        flags[1] = not esc and _js_key(s, p, q, b"qa_pairs", 8)
                    p = _ty_ws(s, q, n)
                    if p >= n or s[p] != 58:
                        return None
                    p = _ty_ws(s, p + 1, n)
                    if skip:
                        skip_start = p
                        skip_depth = depth
                    break
                continue
        elif c == 34:
            esc = False
            p = _ty_string(s, p, n, &esc)
            if p < 0:
                return None
        elif c == 45 or 48 <= c <= 57:
            q = _ty_number(s, p, n)
            if q < 0 or q - p > 4000:
                return None
            p = q
        elif c == 116 and _ty_word(s, p, n, b"true", 4):
            p += 4
        elif c == 102 and _ty_word(s, p, n, b"false", 5):
            p += 5
        elif c == 110 and _ty_word(s, p, n, b"null", 4):
            p += 4
        else:
            return None
        # ---- a value ended at p
        while True:
            if skip_start >= 0 and depth == skip_depth:
                if p - skip_start >= _JS_MIN_SKIP:   # (a short value costs less to read)
                    spans.append(skip_start)
                    spans.append(p)
                skip_start = -1
            p = _ty_ws(s, p, n)
            if depth == 0:
                return spans if p == n else None
            if p >= n:
                return None
            c = s[p]
            if c == 44:  # ,
                p = _ty_ws(s, p + 1, n)
                if p >= n:
                    return None
                if kinds[depth - 1] == 1:
                    break   # the next element
                # the next key
                if s[p] != 34:
                    return None
                esc = False
                q = _ty_string(s, p, n, &esc)
                if q < 0 or q - p > 4002:
                    return None
                skip = (not esc and skip_start < 0
                        and _js_skip_key(s, p, q, layout, depth, kinds, flags))
                if layout == _JS_DROP and depth == 2:
                    flags[1] = not esc and _js_key(s, p, q, b"qa_pairs", 8)
                p = _ty_ws(s, q, n)
                if p >= n or s[p] != 58:
                    return None
                p = _ty_ws(s, p + 1, n)
                if skip:
                    skip_start = p
                    skip_depth = depth
                break
            if c == (125 if kinds[depth - 1] == 0 else 93):
                depth -= 1
                p += 1
                continue
            return None


#: the layouts json_skip_spans knows
JSON_SKIP_HOTPOT = _JS_HOTPOT
JSON_SKIP_DROP = _JS_DROP
JSON_SKIP_NQ = _JS_NQ


# ---------------------------------------------------------------------------------------------
# Decoding a checked JSON string's escapes without the GIL (the file scanners that make no str
# per string: TriviaQA's and MLQA's)
# ---------------------------------------------------------------------------------------------

cdef inline unsigned int _json_hex4(const unsigned char* s) noexcept nogil:
    # four checked hex digits
    cdef unsigned int v = 0
    cdef int i
    cdef unsigned char c
    for i in range(4):
        c = s[i]
        v = v * 16 + (c - 48 if c <= 57 else (c | 32) - 87)
    return v


cdef Py_ssize_t _json_unescape(const unsigned char* s, Py_ssize_t p, Py_ssize_t q,
                               Py_UCS4* out) noexcept nogil:
    # the code points of the checked JSON string s[p:q] (quotes excluded), as json.loads
    # decodes them (a \\u escape of a high surrogate followed by one of a low surrogate is one
    # code point; any other surrogate stays as it is); returns how many
    cdef Py_ssize_t k = 0
    cdef unsigned int cp, lo
    cdef unsigned char c
    while p < q:
        c = s[p]
        if c == 92:
            c = s[p + 1]
            if c == 117:  # u
                cp = _json_hex4(s + p + 2)
                p += 6
                if 0xD800 <= cp <= 0xDBFF and p + 6 <= q and s[p] == 92 and s[p + 1] == 117:
                    lo = _json_hex4(s + p + 2)
                    if 0xDC00 <= lo <= 0xDFFF:
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                        p += 6
            else:
                cp = (8 if c == 98 else 12 if c == 102 else 10 if c == 110 else
                      13 if c == 114 else 9 if c == 116 else c)   # " \\ / stand for themselves
                p += 2
        elif c < 0x80:
            cp = c
            p += 1
        elif c < 0xE0:
            cp = ((c & 0x1F) << 6) | (s[p + 1] & 0x3F)
            p += 2
        elif c < 0xF0:
            cp = ((c & 0x0F) << 12) | ((s[p + 1] & 0x3F) << 6) | (s[p + 2] & 0x3F)
            p += 3
        else:
            cp = (((c & 0x07) << 18) | ((s[p + 1] & 0x3F) << 12) | ((s[p + 2] & 0x3F) << 6)
                  | (s[p + 3] & 0x3F))
            p += 4
        out[k] = <Py_UCS4>cp
        k += 1
    return k
