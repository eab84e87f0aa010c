# Answer kernels part (_answer_kernels.pxi includes the parts in order): SQuAD's
# normalize_answer and split, in C. ASCII text takes one pass over its bytes; any other str
# goes by code points, Latin-1 lowered by a table made from str.lower and CJK ideographs taken
# as they are, other cased scripts lowered by CPython; then the token spans and their UTF-8
# bytes. Apart from the tokenizers because the snapshot encoder and the character F1 run it
# too, on copies of the strings.

# ---------------------------------------------------------------------------------------------
# SQuAD's normalize_answer + split, for ASCII strings
# ---------------------------------------------------------------------------------------------

# Per byte: 1 = dropped (string.punctuation), 2 = whitespace for str.split, 4 = word character
# for the regex's \b ([a-z0-9] once lowercased; "_" is punctuation and already gone).
cdef uint8_t _AK_CLASS[128]


cdef void _ak_init_classes() noexcept:
    cdef int c
    cdef bytes punct = b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
    for c in range(128):
        _AK_CLASS[c] = 0
    for c in punct:
        _AK_CLASS[c] = 1
    for c in (9, 10, 11, 12, 13, 28, 29, 30, 31, 32):
        _AK_CLASS[c] = 2
    for c in range(ord('a'), ord('z') + 1):
        _AK_CLASS[c] = 4
    for c in range(ord('A'), ord('Z') + 1):
        _AK_CLASS[c] = 4
    for c in range(ord('0'), ord('9') + 1):
        _AK_CLASS[c] = 4


_ak_init_classes()


cdef inline bint _ak_is_article(const char* w, Py_ssize_t n) noexcept nogil:
    if n == 1:
        return w[0] == b'a'
    if n == 2:
        return w[0] == b'a' and w[1] == b'n'
    if n == 3:
        return w[0] == b't' and w[1] == b'h' and w[2] == b'e'
    return False


cdef int _ak_squad_ascii(const char* s, Py_ssize_t n, char* w, _trec_Table* t,
                         _AkIds* out) except -1 nogil:
    """Tokens of normalize_squad(s).split() for an ASCII s; w has room for n bytes."""
    cdef Py_ssize_t i, m = 0
    cdef uint8_t c
    for i in range(n):
        c = <uint8_t>s[i]
        if _AK_CLASS[c] == 1:
            continue
        if c >= b'A' and c <= b'Z':
            c += 32
        w[m] = <char>c
        m += 1
    return _ak_ascii_words(w, m, t, out)


cdef int _ak_triviaqa_ascii(const char* s, Py_ssize_t n, char* w, _trec_Table* t,
                            _AkIds* out) except -1 nogil:
    """Tokens of TriviaQA's normalize_answer(s).split() for an ASCII s: SQuAD's, except that
    punctuation becomes a space instead of going (w has room for n bytes)."""
    cdef Py_ssize_t i
    cdef uint8_t c
    for i in range(n):
        c = <uint8_t>s[i]
        if _AK_CLASS[c] == 1:
            c = b' '
        elif c >= b'A' and c <= b'Z':
            c += 32
        w[i] = <char>c
    return _ak_ascii_words(w, n, t, out)


cdef int _ak_ascii_words(const char* w, Py_ssize_t m, _trec_Table* t,
                         _AkIds* out) except -1 nogil:
    """The tokens of lowercased ASCII text with no punctuation left: split at whitespace,
    the words a/an/the (between non-word characters, as the regex's \\b) dropped."""
    cdef Py_ssize_t i = 0, j, start = -1
    cdef uint8_t k
    while i < m:
        k = _AK_CLASS[<uint8_t>w[i]]
        if k == 2:
            if start >= 0:
                _ak_push(out, _ak_intern(t, w + start, i - start))
                start = -1
            i += 1
        elif k == 4:
            j = i + 1
            while j < m and _AK_CLASS[<uint8_t>w[j]] == 4:
                j += 1
            if _ak_is_article(w + i, j - i):
                if start >= 0:
                    _ak_push(out, _ak_intern(t, w + start, i - start))
                    start = -1
            elif start < 0:
                start = i
            i = j
        else:
            if start < 0:
                start = i
            i += 1
    if start >= 0:
        _ak_push(out, _ak_intern(t, w + start, m - start))
    return 0


cdef inline void _ak_emit_chars(_AkIds* out, Py_ssize_t first, const char* w,
                                Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    # one token's characters, after a space unless it is the string's first token
    cdef Py_ssize_t j
    if out.size > first:
        out.data[out.size] = 32
        out.size += 1
    for j in range(a, b):
        out.data[out.size] = <uint8_t>w[j]
        out.size += 1


cdef int _ak_squad_ascii_chars(const char* s, Py_ssize_t n, char* w, _AkIds* out) except -1 nogil:
    """The code points of normalize_squad(s) for an ASCII s: the tokens _ak_squad_ascii
    finds, joined by single spaces, appended to out; w has room for n bytes."""
    cdef Py_ssize_t i, j, m = 0, start = -1, first = out.size
    cdef uint8_t c, k
    for i in range(n):
        c = <uint8_t>s[i]
        if _AK_CLASS[c] == 1:
            continue
        if c >= b'A' and c <= b'Z':
            c += 32
        w[m] = <char>c
        m += 1
    _ak_reserve(out, m)  # the tokens and the spaces between them fit in m
    i = 0
    while i < m:
        k = _AK_CLASS[<uint8_t>w[i]]
        if k == 2:
            if start >= 0:
                _ak_emit_chars(out, first, w, start, i)
                start = -1
            i += 1
        elif k == 4:
            j = i + 1
            while j < m and _AK_CLASS[<uint8_t>w[j]] == 4:
                j += 1
            if _ak_is_article(w + i, j - i):
                if start >= 0:
                    _ak_emit_chars(out, first, w, start, i)
                    start = -1
            elif start < 0:
                start = i
            i = j
        else:
            if start < 0:
                start = i
            i += 1
    if start >= 0:
        _ak_emit_chars(out, first, w, start, m)
    return 0


# ---------------------------------------------------------------------------------------------
# SQuAD's normalize_answer for any str: code points, then token spans
# ---------------------------------------------------------------------------------------------

cdef struct _AkWork:
    Py_UCS4* cp          # the code points of s.lower() without string.punctuation
    uint8_t* cls         # their classes (as _AK_CLASS: 2 whitespace, 4 word character, 0 other)
    Py_ssize_t* spans    # token (start, end) pairs
    char* utf8           # one token's UTF-8 bytes
    Py_ssize_t cap       # room in cp/cls (spans: 2 * cap + 2, utf8: 4 * cap)


cdef int _ak_work_reserve(_AkWork* w, Py_ssize_t n) except -1 nogil:
    cdef Py_ssize_t cap
    cdef void* p
    if n <= w.cap:
        return 0
    cap = n + 64
    if cap < 2 * w.cap:
        cap = 2 * w.cap
    p = realloc(w.cp, cap * sizeof(Py_UCS4))
    if p != NULL:
        w.cp = <Py_UCS4*>p
        p = realloc(w.cls, cap)
    if p != NULL:
        w.cls = <uint8_t*>p
        p = realloc(w.spans, (2 * cap + 2) * sizeof(Py_ssize_t))
    if p != NULL:
        w.spans = <Py_ssize_t*>p
        p = realloc(w.utf8, 4 * cap)
    if p == NULL:
        with gil:
            raise MemoryError()
    w.utf8 = <char*>p
    w.cap = cap
    return 0


cdef void _ak_work_free(_AkWork* w) noexcept:
    free(w.cp)
    free(w.cls)
    free(w.spans)
    free(w.utf8)
    w.cp = NULL
    w.cls = NULL
    w.spans = NULL
    w.utf8 = NULL
    w.cap = 0


cdef extern from "Python.h":
    # the same character database lookups, declared for the passes without the GIL (they
    # read static tables only)
    bint _ak_isspace "Py_UNICODE_ISSPACE"(Py_UCS4 ch) noexcept nogil
    bint _ak_isalnum "Py_UNICODE_ISALNUM"(Py_UCS4 ch) noexcept nogil


cdef inline uint8_t _ak_uclass(Py_UCS4 c) noexcept nogil:
    # str.split's whitespace is Py_UNICODE_ISSPACE (\x1c-\x1f included); re's \b (str
    # pattern) has Py_UNICODE_ISALNUM or "_" as word characters, and "_" is punctuation here.
    if <uint32_t>c < 128:
        return _AK_CLASS[c]
    if _ak_isspace(c):
        return 2
    if _ak_isalnum(c):
        return 4
    return 0


# Latin-1 text (str kind 1 with a character past ASCII) lowered and classified without
# CPython: str.lower maps each of these 256 characters to one of them, with no context (the
# one context rule, final sigma, is Greek). Filled from str.lower itself when the module
# loads; _AK_LATIN1_OK stays False, and such text goes through str.lower, if that ever
# does not hold.
cdef Py_UCS4 _AK_LOWER1[256]
cdef uint8_t _AK_CLASS1[256]     # the lowered character's class; 1: dropped (punctuation)
cdef bint _AK_LATIN1_OK = False


cdef void _ak_init_latin1() noexcept:
    global _AK_LATIN1_OK
    cdef int c, lc
    cdef str low
    for c in range(256):
        low = chr(c).lower()
        if len(low) != 1 or ord(low) > 255:
            return
        lc = ord(low)
        _AK_LOWER1[c] = <Py_UCS4>lc
        _AK_CLASS1[c] = 1 if lc < 128 and _AK_CLASS[lc] == 1 else _ak_uclass(<Py_UCS4>lc)
    _AK_LATIN1_OK = True


_ak_init_latin1()


cdef Py_ssize_t _ak_squad_prepare_raw(int kind, const void* data, Py_ssize_t n,
                                      _AkWork* w) except -2 nogil:
    """Fill w.cp/w.cls with s.lower() minus string.punctuation for the str s of n code units
    of this kind at data (canonical: kind 2 and 4 only with a character that needs them),
    and return their count; -1 when that needs CPython's str.lower (a script with case
    other than Latin-1's, or a special casing): the caller then lowers s itself."""
    cdef Py_ssize_t i, m = 0
    cdef uint32_t c
    cdef const uint8_t* a
    cdef const uint16_t* u
    cdef uint8_t k
    _ak_work_reserve(w, n)
    if kind == 1:
        a = <const uint8_t*>data
        if not _AK_LATIN1_OK:
            for i in range(n):
                if a[i] >= 128:
                    return -1
        for i in range(n):
            c = a[i]
            if c < 128:
                k = _AK_CLASS[c]
                if k == 1:
                    continue
                if c >= 65 and c <= 90:
                    c += 32
                w.cp[m] = <Py_UCS4>c
                w.cls[m] = k
            else:
                k = _AK_CLASS1[c]
                if k == 1:
                    continue
                w.cp[m] = _AK_LOWER1[c]
                w.cls[m] = k
            m += 1
        return m
    if kind == 2:
        # CJK ideographs (U+4E00..U+9FFF, which have no case) with ASCII: s.lower() lowers
        # the ASCII capitals only. Anything else (another script) is lowered by CPython.
        u = <const uint16_t*>data
        for i in range(n):
            c = u[i]
            if 0x4E00 <= c <= 0x9FFF:
                w.cp[m] = <Py_UCS4>c
                w.cls[m] = 4
                m += 1
            elif c < 128:
                k = _AK_CLASS[c]
                if k == 1:
                    continue
                if c >= 65 and c <= 90:
                    c += 32
                w.cp[m] = <Py_UCS4>c
                w.cls[m] = k
                m += 1
            else:
                return -1
        return m
    return -1


cdef Py_ssize_t _ak_squad_prepare(str s, _AkWork* w) except -1:
    """Fill w.cp/w.cls with s.lower() minus string.punctuation; returns their count."""
    cdef Py_ssize_t i, n, m = 0
    cdef int kind
    cdef void* data
    cdef uint32_t c
    cdef str low
    m = _ak_squad_prepare_raw(PyUnicode_KIND(s), PyUnicode_DATA(s), PyUnicode_GET_LENGTH(s), w)
    if m >= 0:
        return m
    m = 0
    low = s.lower()
    n = PyUnicode_GET_LENGTH(low)
    _ak_work_reserve(w, n)
    kind = PyUnicode_KIND(low)
    data = PyUnicode_DATA(low)
    for i in range(n):
        c = <uint32_t>PyUnicode_READ(kind, data, i)
        if c < 128 and _AK_CLASS[c] == 1:
            continue
        w.cp[m] = <Py_UCS4>c
        w.cls[m] = _ak_uclass(<Py_UCS4>c)
        m += 1
    return m


cdef Py_ssize_t _ak_triviaqa_prepare(str s, _AkWork* w) except -1:
    """Fill w.cp/w.cls with TriviaQA's s.lower() with its punctuation (ASCII's and
    U+2018, U+2019, U+00B4) made spaces; returns their count."""
    cdef Py_ssize_t i, n
    cdef int kind
    cdef void* data
    cdef uint32_t c
    cdef str low = s.lower()
    n = PyUnicode_GET_LENGTH(low)
    _ak_work_reserve(w, n)
    kind = PyUnicode_KIND(low)
    data = PyUnicode_DATA(low)
    for i in range(n):
        c = <uint32_t>PyUnicode_READ(kind, data, i)
        if (c < 128 and _AK_CLASS[c] == 1) or c == 0x2018 or c == 0x2019 or c == 0xB4:
            w.cp[i] = 32
            w.cls[i] = 2
        else:
            w.cp[i] = <Py_UCS4>c
            w.cls[i] = _ak_uclass(<Py_UCS4>c)
    return n


cdef Py_ssize_t _ak_triviaqa_prepare_raw(int kind, const void* data, Py_ssize_t n,
                                         _AkWork* w) except -2 nogil:
    """_ak_triviaqa_prepare without CPython, for the str of n code units of this kind (1 or
    2) at data, where str.lower needs no table but Latin-1's: every character of kind 1 and,
    of kind 2, Latin-1, CJK ideographs (U+4E00..U+9FFF) and General Punctuation
    (U+2000..U+206F), which have no case. Returns their count, or -1 for any other str (the
    caller then lowers it with CPython, holding the GIL)."""
    cdef Py_ssize_t i
    cdef uint32_t c
    cdef const uint8_t* a = <const uint8_t*>data
    cdef const uint16_t* u = <const uint16_t*>data
    if kind != 1 and kind != 2:
        return -1
    _ak_work_reserve(w, n)
    for i in range(n):
        c = a[i] if kind == 1 else u[i]
        if c < 128:
            if c >= 65 and c <= 90:
                c += 32
        elif c < 256:
            if not _AK_LATIN1_OK:
                return -1
            c = <uint32_t>_AK_LOWER1[c]
        elif not (0x4E00 <= c <= 0x9FFF or 0x2000 <= c <= 0x206F):
            return -1
        if (c < 128 and _AK_CLASS[c] == 1) or c == 0x2018 or c == 0x2019 or c == 0xB4:
            w.cp[i] = 32
            w.cls[i] = 2
        else:
            w.cp[i] = <Py_UCS4>c
            w.cls[i] = _ak_uclass(<Py_UCS4>c)
    return n


cdef inline bint _ak_is_article_cp(const Py_UCS4* w, Py_ssize_t n) noexcept nogil:
    if n == 1:
        return w[0] == 97
    if n == 2:
        return w[0] == 97 and w[1] == 110
    if n == 3:
        return w[0] == 116 and w[1] == 104 and w[2] == 101
    return False


cdef Py_ssize_t _ak_squad_spans(_AkWork* w, Py_ssize_t m) noexcept nogil:
    """Token spans of " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split()) for the prepared
    text; returns the number of tokens."""
    cdef Py_ssize_t i = 0, j, start = -1, nt = 0
    cdef uint8_t k
    cdef uint8_t* cls = w.cls
    cdef Py_ssize_t* sp = w.spans
    while i < m:
        k = cls[i]
        if k == 2:
            if start >= 0:
                sp[2 * nt] = start
                sp[2 * nt + 1] = i
                nt += 1
                start = -1
            i += 1
        elif k == 4:
            j = i + 1
            while j < m and cls[j] == 4:
                j += 1
            if _ak_is_article_cp(w.cp + i, j - i):
                if start >= 0:
                    sp[2 * nt] = start
                    sp[2 * nt + 1] = i
                    nt += 1
                    start = -1
            elif start < 0:
                start = i
            i = j
        else:
            if start < 0:
                start = i
            i += 1
    if start >= 0:
        sp[2 * nt] = start
        sp[2 * nt + 1] = m
        nt += 1
    return nt


cdef inline Py_ssize_t _ak_utf8(const Py_UCS4* cp, Py_ssize_t n, char* out) noexcept nogil:
    # As str.encode("utf-8", "surrogatepass"): surrogates take the 3-byte form.
    cdef Py_ssize_t i, b = 0
    cdef uint32_t c
    for i in range(n):
        c = <uint32_t>cp[i]
        if c < 0x80:
            out[b] = <char>c
            b += 1
        elif c < 0x800:
            out[b] = <char>(0xC0 | (c >> 6))
            out[b + 1] = <char>(0x80 | (c & 0x3F))
            b += 2
        elif c < 0x10000:
            out[b] = <char>(0xE0 | (c >> 12))
            out[b + 1] = <char>(0x80 | ((c >> 6) & 0x3F))
            out[b + 2] = <char>(0x80 | (c & 0x3F))
            b += 3
        else:
            out[b] = <char>(0xF0 | (c >> 18))
            out[b + 1] = <char>(0x80 | ((c >> 12) & 0x3F))
            out[b + 2] = <char>(0x80 | ((c >> 6) & 0x3F))
            out[b + 3] = <char>(0x80 | (c & 0x3F))
            b += 4
    return b
