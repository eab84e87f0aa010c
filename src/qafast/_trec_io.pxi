# TREC run / qrels text parsing, included by _kernels.pyx (one compiled module).
#
# A `_trec_Parser` is fed the text in chunks that the Python layer (qafast.io.trec) reads;
# each `feed` parses every complete line of its chunk without the GIL and returns how many
# bytes it consumed, so a line never spans two calls. Per data line it appends the query
# index, the document index, the score (run) or grade (qrels) and the 1-based line number to
# arrays that grow with realloc; ids are interned in C by hash tables over their bytes, and
# one Python `str` is made per distinct id, after the chunk, with the GIL held.
#
# Scores: a decimal with at most 19 significant digits and a mantissa up to 2**53 whose
# power of ten is within +-22 is converted exactly (Clinger's fast path: one correctly
# rounded multiply or divide of two exact doubles). Every other score token is queued and
# converted after the chunk by CPython's `PyOS_string_to_double` (David Gay's correctly
# rounded strtod, which needs the GIL). Either way the result is the double `float(token)`.
#
# Every module-level name starts with `_trec` (the file is textually included).

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy
from cpython.buffer cimport PyBUF_FORMAT, PyBUF_WRITABLE
from cpython.exc cimport PyErr_Clear, PyErr_ExceptionMatches, PyErr_Occurred
from cpython.ref cimport PyObject
from cpython.unicode cimport PyUnicode_DecodeUTF8

import numpy as _trec_np

cdef extern from *:
    """
    #if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \\
        __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    #define _trec_LITTLE_ENDIAN 0
    #else
    #define _trec_LITTLE_ENDIAN 1
    #endif

    #if defined(__GNUC__) || defined(__clang__)
    #define _trec_prefetch(p) __builtin_prefetch((const void *)(p))
    #elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
    #include <xmmintrin.h>
    #define _trec_prefetch(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
    #else
    #define _trec_prefetch(p) ((void)0)
    #endif

    /* Ask Linux for transparent huge pages on a large table: its accesses are random, and
       with 4 KiB pages nearly every one also misses the TLB. A hint only. */
    #if defined(__linux__)
    #include <sys/mman.h>
    #include <stdint.h>
    static void _trec_advise_huge(void *p, size_t n) {
    #ifdef MADV_HUGEPAGE
        const uintptr_t huge = (uintptr_t)1 << 21;
        uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
        uintptr_t b = ((uintptr_t)p + n) & ~(huge - 1);
        if (b > a) madvise((void *)a, (size_t)(b - a), MADV_HUGEPAGE);
    #endif
    }
    #else
    static void _trec_advise_huge(void *p, size_t n) { (void)p; (void)n; }
    #endif
    """
    void _trec_prefetch(const void *p) noexcept nogil
    bint _trec_LITTLE_ENDIAN
    void _trec_advise_huge(void *p, size_t n) noexcept nogil

cdef extern from "Python.h":
    double _trec_PyOS_string_to_double "PyOS_string_to_double" (
        const char *s, char **endptr, PyObject *overflow_exception) noexcept


# ---------------------------------------------------------------------------------------
# error codes of the nogil loop

cdef enum:
    _trec_OK = 0
    _trec_E_NOMEM = 1
    _trec_E_FIELDS = 2
    _trec_E_SCORE = 3
    _trec_E_NAN = 4
    _trec_E_GRADE = 5
    _trec_E_GRADE_RANGE = 6
    _trec_E_UTF8_QID = 7
    _trec_E_UTF8_DOCNO = 8
    _trec_E_UTF8_RUNID = 9
    _trec_E_ID_TOO_LONG = 10
    _trec_E_TOO_MANY_IDS = 11

# an id longer than this (16 MiB) is refused: the hash slot packs (arena offset << 24 | length)
cdef enum:
    _trec_LEN_BITS = 24
cdef uint64_t _trec_LEN_MASK = (<uint64_t>1 << _trec_LEN_BITS) - 1
cdef int64_t _trec_MAX_IDS = 2147483647


# ---------------------------------------------------------------------------------------
# byte-level helpers

cdef inline bint _trec_isspace(unsigned char c) noexcept nogil:
    # C isspace() in the "C" locale, as trec_eval and bytes.split() use: space \t \n \v \f \r
    return c == 32 or <unsigned char>(c - 9) <= 4


cdef inline uint64_t _trec_load64(const unsigned char *p) noexcept nogil:
    cdef uint64_t w
    memcpy(&w, p, 8)
    return w


cdef inline uint32_t _trec_load32(const unsigned char *p) noexcept nogil:
    cdef uint32_t w
    memcpy(&w, p, 4)
    return w


cdef inline uint64_t _trec_hash(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    # 8-byte words, then the tail read as whole (possibly overlapping) loads so no byte-wise
    # copy stalls the final multiply. Equal byte strings always hash equal; n is mixed in.
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ (<uint64_t>n * 0xC2B2AE3D27D4EB4FULL)
    cdef uint64_t w
    cdef Py_ssize_t total = n
    while n > 8:
        h = (h ^ _trec_load64(p)) * 0x9FB21C651E98DF25ULL
        h ^= h >> 28
        p += 8
        n -= 8
    if total >= 8:
        w = _trec_load64(p + n - 8)          # the last 8 bytes of the string
    elif n >= 4:
        w = (<uint64_t>_trec_load32(p) << 32) | _trec_load32(p + n - 4)
    elif n > 0:
        w = (<uint64_t>p[0] << 16) | (<uint64_t>p[n >> 1] << 8) | p[n - 1]
    else:
        w = 0
    h = (h ^ w) * 0x9FB21C651E98DF25ULL
    # murmur3 fmix64
    h ^= h >> 33
    h *= 0xFF51AFD7ED558CCDULL
    h ^= h >> 33
    h *= 0xC4CEB9FE1A85EC53ULL
    h ^= h >> 33
    return h


cdef inline bint _trec_equal(const unsigned char *a, const unsigned char *b,
                             Py_ssize_t n) noexcept nogil:
    # a[:n] == b[:n]; short ids compared with two (overlapping) loads instead of a call
    if n >= 8:
        if n > 16:
            return memcmp(a, b, <size_t>n) == 0
        return (_trec_load64(a) == _trec_load64(b)
                and _trec_load64(a + n - 8) == _trec_load64(b + n - 8))
    if n >= 4:
        return (_trec_load32(a) == _trec_load32(b)
                and _trec_load32(a + n - 4) == _trec_load32(b + n - 4))
    if n > 0:
        return a[0] == b[0] and a[n >> 1] == b[n >> 1] and a[n - 1] == b[n - 1]
    return True


cdef inline bint _trec_is_ascii(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    cdef uint64_t w, acc = 0
    while n >= 8:
        memcpy(&w, p, 8)
        acc |= w
        p += 8
        n -= 8
    while n > 0:
        acc |= p[0]
        p += 1
        n -= 1
    return (acc & 0x8080808080808080ULL) == 0


cdef bint _trec_utf8_valid(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    # Well-formed UTF-8 (Unicode table 3-7), which is what bytes.decode("utf-8") accepts:
    # no overlong forms, no surrogates, nothing above U+10FFFF.
    cdef Py_ssize_t i = 0
    cdef unsigned char c, c1
    while i < n:
        c = p[i]
        if c < 0x80:
            i += 1
        elif c < 0xC2:
            return False
        elif c < 0xE0:
            if n - i < 2 or (p[i + 1] & 0xC0) != 0x80:
                return False
            i += 2
        elif c < 0xF0:
            if n - i < 3:
                return False
            c1 = p[i + 1]
            if c == 0xE0:
                if c1 < 0xA0 or c1 > 0xBF:
                    return False
            elif c == 0xED:
                if c1 < 0x80 or c1 > 0x9F:
                    return False
            elif (c1 & 0xC0) != 0x80:
                return False
            if (p[i + 2] & 0xC0) != 0x80:
                return False
            i += 3
        elif c < 0xF5:
            if n - i < 4:
                return False
            c1 = p[i + 1]
            if c == 0xF0:
                if c1 < 0x90 or c1 > 0xBF:
                    return False
            elif c == 0xF4:
                if c1 < 0x80 or c1 > 0x8F:
                    return False
            elif (c1 & 0xC0) != 0x80:
                return False
            if (p[i + 2] & 0xC0) != 0x80 or (p[i + 3] & 0xC0) != 0x80:
                return False
            i += 4
        else:
            return False
    return True


cdef inline bint _trec_utf8_ok(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    return _trec_is_ascii(p, n) or _trec_utf8_valid(p, n)


cdef double _trec_POW10[23]
_trec_POW10[:] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]


cdef inline bint _trec_fast_float(const unsigned char *p, Py_ssize_t n,
                                  double *out) noexcept nogil:
    # [+-] digits [. digits] [(e|E) [+-] digits], with at least one mantissa digit.
    # Returns False (caller falls back to the exact slow path) for anything else, for
    # more than 19 significant digits, a mantissa above 2**53 or a power of ten beyond 22.
    cdef const unsigned char *e = p + n
    cdef bint neg = False, eneg = False
    cdef uint64_t m = 0
    cdef int sig = 0, ndig = 0, frac = 0, ex = 0, d
    cdef double v
    if p < e and (p[0] == 43 or p[0] == 45):        # '+' '-'
        neg = p[0] == 45
        p += 1
    while p < e and <unsigned>(p[0] - 48) < 10:
        d = p[0] - 48
        ndig += 1
        if m != 0 or d != 0:
            sig += 1
            if sig > 19:
                return False
            m = m * 10 + <uint64_t>d
        p += 1
    if p < e and p[0] == 46:                          # '.'
        p += 1
        while p < e and <unsigned>(p[0] - 48) < 10:
            d = p[0] - 48
            ndig += 1
            frac += 1
            if m != 0 or d != 0:
                sig += 1
                if sig > 19:
                    return False
                m = m * 10 + <uint64_t>d
            p += 1
    if ndig == 0:
        return False
    if p < e and (p[0] == 101 or p[0] == 69):        # 'e' 'E'
        p += 1
        if p < e and (p[0] == 43 or p[0] == 45):
            eneg = p[0] == 45
            p += 1
        if p == e:
            return False
        while p < e and <unsigned>(p[0] - 48) < 10:
            if ex < 100000:
                ex = ex * 10 + (p[0] - 48)
            p += 1
        if eneg:
            ex = -ex
    if p != e:
        return False
    if m == 0:
        out[0] = -0.0 if neg else 0.0
        return True
    if m > (<uint64_t>1 << 53):
        return False
    ex -= frac
    if ex < -22 or ex > 22:
        return False
    if ex >= 0:
        v = <double>m * _trec_POW10[ex]
    else:
        v = <double>m / _trec_POW10[-ex]
    out[0] = -v if neg else v
    return True


cdef inline int _trec_parse_grade(const unsigned char *p, Py_ssize_t n,
                                  int32_t *out) noexcept nogil:
    # [+-] digits, within int32. Returns _trec_OK, _trec_E_GRADE or _trec_E_GRADE_RANGE.
    cdef const unsigned char *e = p + n
    cdef bint neg = False
    cdef int64_t v = 0
    if p < e and (p[0] == 43 or p[0] == 45):
        neg = p[0] == 45
        p += 1
    if p == e:
        return _trec_E_GRADE
    while p < e:
        if <unsigned>(p[0] - 48) >= 10:
            return _trec_E_GRADE
        if v <= 2147483648LL:
            v = v * 10 + (p[0] - 48)
        p += 1
    if neg:
        v = -v
    if v < -2147483648LL or v > 2147483647:
        return _trec_E_GRADE_RANGE
    out[0] = <int32_t>v
    return _trec_OK


# ---------------------------------------------------------------------------------------
# interning table: open addressing with linear probing; key bytes kept in one arena
#
# A slot is 16 bytes: `meta` is the high 32 bits of the key's hash with the low 4 bits
# replaced by the key length (0..8) or 15 for a longer key; `key` is the key itself for up to
# 8 bytes (zero padded), else (arena offset << 24 | length). A short key is thus compared
# without touching the arena. The home slot is the top bits of `meta`, so growing the
# table walks the old slots in order and writes the new ones almost in order too.

ctypedef struct _trec_Slot:
    uint64_t key
    uint32_t meta
    uint32_t idp1       # id + 1; 0 marks an empty slot

ctypedef struct _trec_Table:
    _trec_Slot *slots
    int shift           # home slot = meta >> shift
    uint64_t cap
    uint64_t limit      # grow when count exceeds this
    uint64_t count      # distinct ids
    uint64_t made       # ids already turned into Python str
    unsigned char *arena
    uint64_t arena_len
    uint64_t arena_cap
    uint64_t *id_offlen # per id, in first-seen order: arena offset << 24 | length
    uint64_t id_cap


cdef inline uint32_t _trec_meta(uint64_t h, Py_ssize_t n) noexcept nogil:
    return (<uint32_t>(h >> 32) & 0xFFFFFFF0U) | <uint32_t>(n if n <= 8 else 15)


cdef inline uint64_t _trec_key8(const unsigned char *p, Py_ssize_t n,
                                const unsigned char *end) noexcept nogil:
    # The first min(n, 8) bytes of p, zero padded, as one word (only used when n <= 8).
    # A single load when 8 bytes are readable (little endian); the same value either way.
    cdef uint64_t w = 0
    if n > 8:
        return 0
    if _trec_LITTLE_ENDIAN and end - p >= 8:
        w = _trec_load64(p)
        if n < 8:
            w &= (<uint64_t>1 << (8 * n)) - 1
        return w
    memcpy(&w, p, <size_t>n)
    return w


cdef int _trec_table_init(_trec_Table *t, int log2cap) noexcept nogil:
    t.cap = <uint64_t>1 << log2cap
    t.shift = 32 - log2cap
    t.limit = t.cap // 10 * 7
    t.count = 0
    t.made = 0
    t.slots = <_trec_Slot *>calloc(t.cap, sizeof(_trec_Slot))     # all empty
    if t.slots != NULL:
        _trec_advise_huge(t.slots, t.cap * sizeof(_trec_Slot))
    t.arena_cap = 1 << 16
    t.arena_len = 0
    t.arena = <unsigned char *>malloc(t.arena_cap)
    t.id_cap = 1 << 12
    t.id_offlen = <uint64_t *>malloc(t.id_cap * sizeof(uint64_t))
    if t.slots == NULL or t.arena == NULL or t.id_offlen == NULL:
        return -1
    return 0


cdef void _trec_table_free(_trec_Table *t) noexcept nogil:
    free(t.slots)
    free(t.arena)
    free(t.id_offlen)
    t.slots = NULL
    t.arena = NULL
    t.id_offlen = NULL


cdef int _trec_table_grow(_trec_Table *t) noexcept nogil:
    # Double the slot array. Old slots are walked in order and their new home slots
    # (meta >> shift) come in nearly the same order, so this streams through memory.
    cdef uint64_t newcap = t.cap * 2, i, j
    cdef int newshift = t.shift - 1
    cdef _trec_Slot *ns
    if newshift < 0:                 # 2**32 slots: more ids than int32 indexes anyway
        return -1
    ns = <_trec_Slot *>calloc(newcap, sizeof(_trec_Slot))     # all empty
    if ns == NULL:
        return -1
    _trec_advise_huge(ns, newcap * sizeof(_trec_Slot))
    for i in range(t.cap):
        if t.slots[i].idp1 != 0:
            j = t.slots[i].meta >> newshift
            while ns[j].idp1 != 0:
                j = (j + 1) & (newcap - 1)
            ns[j] = t.slots[i]
    free(t.slots)
    t.slots = ns
    t.cap = newcap
    t.shift = newshift
    t.limit = newcap // 10 * 7
    return 0


cdef int64_t _trec_intern(_trec_Table *t, const unsigned char *p, Py_ssize_t n, uint64_t h,
                          uint64_t key8) noexcept nogil:
    # Id of the byte string p[:n] (h = _trec_hash(p, n), key8 = _trec_key8(p, n, ...)),
    # inserting it if new. Returns -1 out of memory, -2 invalid UTF-8, -3 longer than
    # 16 MiB, -4 more than 2**31 - 1 ids.
    cdef uint32_t meta = _trec_meta(h, n)
    cdef uint64_t mask = t.cap - 1
    cdef uint64_t i = meta >> t.shift
    cdef _trec_Slot *s
    cdef uint64_t off, need
    cdef void *tmp
    while True:
        s = &t.slots[i]
        if s.idp1 == 0:
            break
        if s.meta == meta:
            if n <= 8:
                if s.key == key8:
                    return <int64_t>s.idp1 - 1
            elif ((s.key & _trec_LEN_MASK) == <uint64_t>n
                    and _trec_equal(t.arena + (s.key >> _trec_LEN_BITS), p, n)):
                return <int64_t>s.idp1 - 1
        i = (i + 1) & mask
    # new id
    if <uint64_t>n > _trec_LEN_MASK:
        return -3
    if not _trec_utf8_ok(p, n):
        return -2
    if t.count >= <uint64_t>_trec_MAX_IDS:
        return -4
    need = t.arena_len + <uint64_t>n
    if need > t.arena_cap:
        while need > t.arena_cap:
            t.arena_cap *= 2
        tmp = realloc(t.arena, t.arena_cap)
        if tmp == NULL:
            return -1
        t.arena = <unsigned char *>tmp
        _trec_advise_huge(t.arena, t.arena_cap)
    if t.count == t.id_cap:
        tmp = realloc(t.id_offlen, 2 * t.id_cap * sizeof(uint64_t))
        if tmp == NULL:
            return -1
        t.id_offlen = <uint64_t *>tmp
        t.id_cap *= 2
    off = t.arena_len
    memcpy(t.arena + off, p, <size_t>n)
    t.arena_len = need
    t.id_offlen[t.count] = (off << _trec_LEN_BITS) | <uint64_t>n
    s.key = key8 if n <= 8 else t.id_offlen[t.count]
    s.meta = meta
    s.idp1 = <uint32_t>(t.count + 1)
    t.count += 1
    if t.count > t.limit:
        if _trec_table_grow(t) != 0:
            return -1
    return <int64_t>t.count - 1


cdef inline bint _trec_same_id(_trec_Table *t, int64_t idx, const unsigned char *p,
                               Py_ssize_t n) noexcept nogil:
    cdef uint64_t ol = t.id_offlen[idx]
    return ((ol & _trec_LEN_MASK) == <uint64_t>n
            and _trec_equal(t.arena + (ol >> _trec_LEN_BITS), p, n))


# ---------------------------------------------------------------------------------------
# parser state

ctypedef struct _trec_Pending:       # a score left for the exact slow path
    uint64_t row
    int64_t line
    Py_ssize_t off
    Py_ssize_t len

ctypedef struct _trec_State:
    bint is_run
    int need                         # fields needed per line: 6 (run) or 4 (qrels)
    _trec_Table qtab
    _trec_Table dtab
    int32_t *qidx
    int32_t *didx
    double *scores                   # run
    int32_t *grades                  # qrels
    int64_t *lines
    uint64_t n
    uint64_t cap
    int64_t line_no                  # lines consumed so far
    int64_t prev_q                   # query id of the previous data line, -1 if none
    # per feed
    _trec_Pending *pend
    uint64_t npend
    uint64_t pend_cap
    Py_ssize_t runid_off             # -1: no data line in this feed
    Py_ssize_t runid_len
    int64_t runid_line
    # first error of this feed
    int err
    int64_t err_line
    Py_ssize_t err_off
    Py_ssize_t err_len
    int err_nfields


cdef int _trec_grow_rows(_trec_State *st) noexcept nogil:
    cdef uint64_t cap = st.cap * 2 if st.cap else 1 << 16
    cdef void *a
    a = realloc(st.qidx, cap * sizeof(int32_t))
    if a == NULL:
        return -1
    st.qidx = <int32_t *>a
    a = realloc(st.didx, cap * sizeof(int32_t))
    if a == NULL:
        return -1
    st.didx = <int32_t *>a
    if st.is_run:
        a = realloc(st.scores, cap * sizeof(double))
        if a == NULL:
            return -1
        st.scores = <double *>a
    else:
        a = realloc(st.grades, cap * sizeof(int32_t))
        if a == NULL:
            return -1
        st.grades = <int32_t *>a
    a = realloc(st.lines, cap * sizeof(int64_t))
    if a == NULL:
        return -1
    st.lines = <int64_t *>a
    # fewer page faults while the arrays fill (realloc moves big blocks with mremap)
    _trec_advise_huge(st.qidx, cap * sizeof(int32_t))
    _trec_advise_huge(st.didx, cap * sizeof(int32_t))
    if st.is_run:
        _trec_advise_huge(st.scores, cap * sizeof(double))
    else:
        _trec_advise_huge(st.grades, cap * sizeof(int32_t))
    _trec_advise_huge(st.lines, cap * sizeof(int64_t))
    st.cap = cap
    return 0


cdef inline int _trec_fail(_trec_State *st, int code, int64_t line, const unsigned char *buf,
                           const unsigned char *tok, Py_ssize_t tok_len) noexcept nogil:
    st.err = code
    st.err_line = line
    st.err_off = tok - buf if tok != NULL else -1
    st.err_len = tok_len
    return code


cdef enum:
    _trec_BATCH = 32    # lines gathered (and their hash slots prefetched) before interning


cdef int _trec_parse_lines(_trec_State *st, const unsigned char *buf, Py_ssize_t nbuf,
                           bint final, Py_ssize_t *consumed) noexcept nogil:
    # Parse every complete line of buf[:nbuf] (and the unterminated last one if final).
    # Sets *consumed to the bytes used; on error returns its code with st.err_* set.
    #
    # Lines go in batches: the first pass splits up to _trec_BATCH data lines into fields
    # and prefetches the hash slot of each document id, the second prefetches the key bytes
    # a slot points to, the third interns and stores. A document table of millions of ids
    # does not fit in cache, so this keeps many memory loads in flight instead of one.
    cdef const unsigned char *p = buf
    cdef const unsigned char *end = buf + nbuf
    cdef const unsigned char *eol
    cdef const unsigned char *nxt
    cdef const unsigned char *q
    cdef const unsigned char *tok[6]
    cdef Py_ssize_t tlen[6]
    # per batch line: qid, docno, value (score or grade) and run id fields
    cdef const unsigned char *bq[_trec_BATCH]
    cdef const unsigned char *bd[_trec_BATCH]
    cdef const unsigned char *bv[_trec_BATCH]
    cdef const unsigned char *br[_trec_BATCH]
    cdef Py_ssize_t bql[_trec_BATCH]
    cdef Py_ssize_t bdl[_trec_BATCH]
    cdef Py_ssize_t bvl[_trec_BATCH]
    cdef Py_ssize_t brl[_trec_BATCH]
    cdef uint64_t bh[_trec_BATCH]
    cdef uint64_t bk[_trec_BATCH]
    cdef int64_t bline[_trec_BATCH]
    cdef int nf, need = st.need, code, nb, i, fields_error
    cdef int vi = 4 if need == 6 else 3       # the score or grade field
    cdef int64_t line = st.line_no, qi, di
    cdef uint64_t row
    cdef double v
    cdef void *tmp
    cdef _trec_Table *dt = &st.dtab
    cdef _trec_Slot *slot
    cdef uint32_t meta
    consumed[0] = 0
    while True:
        # pass 1: split lines into fields, hash the document ids, prefetch their slots
        nb = 0
        fields_error = 0
        while nb < _trec_BATCH and p < end:
            eol = <const unsigned char *>memchr(p, 10, <size_t>(end - p))
            if eol == NULL:
                if not final:
                    break
                eol = end
                nxt = end
            else:
                nxt = eol + 1
            if p[0] == 35:                            # '#' in column 0: comment
                line += 1
                p = nxt
                continue
            q = p
            nf = 0
            while nf < need:
                while q < eol and _trec_isspace(q[0]):
                    q += 1
                if q == eol:
                    break
                tok[nf] = q
                while q < eol and not _trec_isspace(q[0]):
                    q += 1
                tlen[nf] = q - tok[nf]
                nf += 1
            if nf == 0:                               # blank line
                line += 1
                p = nxt
                continue
            if nf < need:                             # reported after the batch's lines
                fields_error = 1
                st.err_nfields = nf
                break
            line += 1
            bline[nb] = line
            bq[nb] = tok[0]
            bql[nb] = tlen[0]
            bd[nb] = tok[2]
            bdl[nb] = tlen[2]
            bv[nb] = tok[vi]
            bvl[nb] = tlen[vi]
            if need == 6:
                br[nb] = tok[5]
                brl[nb] = tlen[5]
            bh[nb] = _trec_hash(tok[2], tlen[2])
            bk[nb] = _trec_key8(tok[2], tlen[2], end)
            _trec_prefetch(&dt.slots[_trec_meta(bh[nb], tlen[2]) >> dt.shift])
            nb += 1
            p = nxt
        # pass 2: prefetch the arena bytes of a long key whose home slot looks like a match
        for i in range(nb):
            if bdl[i] > 8:
                meta = _trec_meta(bh[i], bdl[i])
                slot = &dt.slots[meta >> dt.shift]
                if slot.idp1 != 0 and slot.meta == meta:
                    _trec_prefetch(dt.arena + (slot.key >> _trec_LEN_BITS))
        # pass 3: intern and store, in line order
        if st.n + <uint64_t>nb > st.cap:
            if _trec_grow_rows(st) != 0:
                return _trec_fail(st, _trec_E_NOMEM, line, buf, NULL, 0)
        for i in range(nb):
            row = st.n
            # query id: runs are grouped by query, so first compare with the previous line's
            if st.prev_q >= 0 and _trec_same_id(&st.qtab, st.prev_q, bq[i], bql[i]):
                qi = st.prev_q
            else:
                qi = _trec_intern(&st.qtab, bq[i], bql[i], _trec_hash(bq[i], bql[i]),
                                  _trec_key8(bq[i], bql[i], end))
                if qi < 0:
                    code = (_trec_E_NOMEM if qi == -1 else _trec_E_UTF8_QID if qi == -2
                            else _trec_E_ID_TOO_LONG if qi == -3 else _trec_E_TOO_MANY_IDS)
                    return _trec_fail(st, code, bline[i], buf, bq[i], bql[i])
                st.prev_q = qi
            di = _trec_intern(dt, bd[i], bdl[i], bh[i], bk[i])
            if di < 0:
                code = (_trec_E_NOMEM if di == -1 else _trec_E_UTF8_DOCNO if di == -2
                        else _trec_E_ID_TOO_LONG if di == -3 else _trec_E_TOO_MANY_IDS)
                return _trec_fail(st, code, bline[i], buf, bd[i], bdl[i])
            if need == 6:
                if _trec_fast_float(bv[i], bvl[i], &v):
                    st.scores[row] = v
                else:
                    if st.npend == st.pend_cap:
                        tmp = realloc(st.pend, (2 * st.pend_cap + 256) * sizeof(_trec_Pending))
                        if tmp == NULL:
                            return _trec_fail(st, _trec_E_NOMEM, bline[i], buf, NULL, 0)
                        st.pend = <_trec_Pending *>tmp
                        st.pend_cap = 2 * st.pend_cap + 256
                    st.pend[st.npend].row = row
                    st.pend[st.npend].line = bline[i]
                    st.pend[st.npend].off = bv[i] - buf
                    st.pend[st.npend].len = bvl[i]
                    st.npend += 1
                    st.scores[row] = 0.0
                if not _trec_utf8_ok(br[i], brl[i]):
                    return _trec_fail(st, _trec_E_UTF8_RUNID, bline[i], buf, br[i], brl[i])
                st.runid_off = br[i] - buf
                st.runid_len = brl[i]
                st.runid_line = bline[i]
            else:
                code = _trec_parse_grade(bv[i], bvl[i], &st.grades[row])
                if code != _trec_OK:
                    return _trec_fail(st, code, bline[i], buf, bv[i], bvl[i])
            st.qidx[row] = <int32_t>qi
            st.didx[row] = <int32_t>di
            st.lines[row] = bline[i]
            st.n = row + 1
        if fields_error:
            return _trec_fail(st, _trec_E_FIELDS, line + 1, buf, NULL, 0)
        st.line_no = line
        consumed[0] = p - buf
        if nb < _trec_BATCH:
            return _trec_OK


# ---------------------------------------------------------------------------------------
# zero-copy owner of a malloc'd result array (numpy wraps it with np.frombuffer)

cdef class _trec_Array:
    cdef void *ptr
    cdef Py_ssize_t nbytes
    cdef Py_ssize_t itemsize
    cdef bytes fmt
    cdef Py_ssize_t shape[1]
    cdef Py_ssize_t strides[1]

    def __dealloc__(self):
        free(self.ptr)

    def __getbuffer__(self, Py_buffer *view, int flags):
        self.shape[0] = self.nbytes // self.itemsize
        self.strides[0] = self.itemsize
        view.buf = self.ptr
        view.obj = self
        view.len = self.nbytes
        view.readonly = 0
        view.itemsize = self.itemsize
        view.format = NULL
        if flags & PyBUF_FORMAT:
            view.format = <char *>self.fmt
        view.ndim = 1
        view.shape = self.shape
        view.strides = self.strides
        view.suboffsets = NULL
        view.internal = NULL

    def __releasebuffer__(self, Py_buffer *view):
        pass


cdef object _trec_wrap(void *ptr, uint64_t n, Py_ssize_t itemsize, bytes fmt, object dtype):
    # Hand a malloc'd array to numpy without copying; shrinks it to n items first.
    cdef _trec_Array a = _trec_Array.__new__(_trec_Array)
    cdef void *p = realloc(ptr, n * itemsize if n else 1)
    a.ptr = p if p != NULL else ptr
    a.nbytes = <Py_ssize_t>(n * itemsize)
    a.itemsize = itemsize
    a.fmt = fmt
    return _trec_np.frombuffer(a, dtype=dtype)


# ---------------------------------------------------------------------------------------
# the parser object used by qafast.io.trec

_trec_FIELDS_RUN = "qid iter docno rank score run_id"
_trec_FIELDS_QRELS = "qid iter docno rel"


cdef class _trec_Parser:
    """Incremental TREC run (``is_run=True``) or qrels parser; see qafast.io.trec."""

    cdef _trec_State st
    cdef list query_ids
    cdef list doc_ids
    cdef readonly object run_id
    cdef readonly int64_t error_line
    cdef readonly str error_message
    cdef bint finished

    def __cinit__(self, bint is_run):
        cdef _trec_State *st = &self.st
        st.is_run = is_run
        st.need = 6 if is_run else 4
        st.qidx = NULL
        st.didx = NULL
        st.scores = NULL
        st.grades = NULL
        st.lines = NULL
        st.n = 0
        st.cap = 0
        st.line_no = 0
        st.prev_q = -1
        st.pend = NULL
        st.npend = 0
        st.pend_cap = 0
        st.err = _trec_OK
        st.qtab.slots = NULL
        st.qtab.arena = NULL
        st.qtab.id_offlen = NULL
        st.dtab.slots = NULL
        st.dtab.arena = NULL
        st.dtab.id_offlen = NULL
        if (_trec_table_init(&st.qtab, 10) != 0 or _trec_table_init(&st.dtab, 16) != 0
                or _trec_grow_rows(st) != 0):
            raise MemoryError()
        self.query_ids = []
        self.doc_ids = []
        self.run_id = None
        self.error_line = 0
        self.error_message = None
        self.finished = False

    def __dealloc__(self):
        _trec_table_free(&self.st.qtab)
        _trec_table_free(&self.st.dtab)
        free(self.st.qidx)
        free(self.st.didx)
        free(self.st.scores)
        free(self.st.grades)
        free(self.st.lines)
        free(self.st.pend)

    @property
    def lines_read(self):
        """Lines consumed so far (data, comment and blank)."""
        return self.st.line_no

    def feed(self, const unsigned char[::1] data not None, bint final=False):
        """Parse the complete lines of ``data`` (all of it if ``final``).

        Returns the number of bytes consumed (the caller keeps the rest for the next call),
        or -1 after a format error, described by ``error_line`` and ``error_message``.
        """
        cdef _trec_State *st = &self.st
        cdef Py_ssize_t n = data.shape[0], consumed = 0
        cdef const unsigned char *buf = &data[0] if n > 0 else NULL
        cdef int rc
        if self.finished:
            raise RuntimeError("feed() after finish()")
        if n == 0:
            return 0
        st.npend = 0
        st.runid_off = -1
        st.err = _trec_OK
        with nogil:
            rc = _trec_parse_lines(st, buf, n, final, &consumed)
        if rc == _trec_E_NOMEM:
            raise MemoryError()
        # scores left for the slow path: the first failure is on an earlier line than rc's
        if self._resolve_pending(buf) != 0:
            return -1
        self._make_strings(&st.qtab, self.query_ids)
        self._make_strings(&st.dtab, self.doc_ids)
        if st.runid_off >= 0:
            self.run_id = PyUnicode_DecodeUTF8(<const char *>buf + st.runid_off,
                                               st.runid_len, NULL)
        if rc != _trec_OK:
            self._set_error(rc, st.err_line, buf, st.err_off, st.err_len)
            return -1
        return consumed

    cdef int _resolve_pending(self, const unsigned char *buf) except -1:
        # 0 when every queued score converted, 1 after a format error (error_* set)
        cdef _trec_State *st = &self.st
        cdef uint64_t k
        cdef _trec_Pending *pe
        cdef char small[64]
        cdef char *tmp
        cdef char *endp
        cdef double v
        for k in range(st.npend):
            pe = &st.pend[k]
            if pe.len < 64:
                tmp = small
            else:
                tmp = <char *>malloc(pe.len + 1)
                if tmp == NULL:
                    raise MemoryError()
            memcpy(tmp, buf + pe.off, pe.len)
            tmp[pe.len] = 0
            v = _trec_PyOS_string_to_double(tmp, &endp, NULL)
            if tmp != small:
                free(tmp)
            if PyErr_Occurred() != NULL:
                if PyErr_ExceptionMatches(ValueError):
                    PyErr_Clear()
                else:
                    raise MemoryError()
            if endp != tmp + pe.len:
                self._set_error(_trec_E_SCORE, pe.line, buf, pe.off, pe.len)
                return 1
            if v != v:
                self._set_error(_trec_E_NAN, pe.line, buf, pe.off, pe.len)
                return 1
            st.scores[pe.row] = v
        st.npend = 0
        return 0

    cdef int _make_strings(self, _trec_Table *t, list out) except -1:
        cdef uint64_t i, ol
        for i in range(t.made, t.count):
            ol = t.id_offlen[i]
            out.append(PyUnicode_DecodeUTF8(<const char *>t.arena + (ol >> _trec_LEN_BITS),
                                            <Py_ssize_t>(ol & _trec_LEN_MASK), NULL))
        t.made = t.count
        return 0

    cdef int _set_error(self, int code, int64_t line, const unsigned char *buf,
                        Py_ssize_t off, Py_ssize_t tlen) except -1:
        cdef bytes raw = b""
        cdef str tok
        cdef str fields = _trec_FIELDS_RUN if self.st.is_run else _trec_FIELDS_QRELS
        if off >= 0:
            raw = (<const char *>buf)[off:off + min(tlen, 200)]
        tok = repr(raw.decode("utf-8", "backslashreplace"))
        if tlen > 200:
            tok += "..."
        if code == _trec_E_FIELDS:
            msg = (f"expected at least {self.st.need} whitespace-separated fields "
                   f"({fields}), found {self.st.err_nfields}")
        elif code == _trec_E_SCORE:
            msg = f"score (5th field) {tok} is not a number"
        elif code == _trec_E_NAN:
            msg = f"score (5th field) {tok} is NaN; expected a number that can be ranked"
        elif code == _trec_E_GRADE:
            msg = f"relevance grade (4th field) {tok} is not an integer"
        elif code == _trec_E_GRADE_RANGE:
            msg = (f"relevance grade (4th field) {tok} is out of range; "
                   f"expected an integer from -2147483648 to 2147483647")
        elif code == _trec_E_UTF8_QID:
            msg = f"query id (1st field) is not valid UTF-8: {raw!r}"
        elif code == _trec_E_UTF8_DOCNO:
            msg = f"document id (3rd field) is not valid UTF-8: {raw!r}"
        elif code == _trec_E_UTF8_RUNID:
            msg = f"run id (6th field) is not valid UTF-8: {raw!r}"
        elif code == _trec_E_ID_TOO_LONG:
            msg = f"id of {tlen} bytes is longer than the 16 MiB limit"
        else:
            msg = f"more than {_trec_MAX_IDS} distinct ids"
        self.error_line = line
        self.error_message = msg
        return 0

    def finish(self):
        """Hand over the columns: (query_ids, query_index, doc_ids, doc_index, values,
        line_numbers, run_id). The parser cannot be fed afterwards."""
        cdef _trec_State *st = &self.st
        cdef uint64_t n = st.n
        if self.finished:
            raise RuntimeError("finish() called twice")
        self.finished = True
        _trec_table_free(&st.qtab)
        _trec_table_free(&st.dtab)
        free(st.pend)
        st.pend = NULL
        qidx = _trec_wrap(st.qidx, n, 4, b"i", _trec_np.int32)
        st.qidx = NULL
        didx = _trec_wrap(st.didx, n, 4, b"i", _trec_np.int32)
        st.didx = NULL
        if st.is_run:
            values = _trec_wrap(st.scores, n, 8, b"d", _trec_np.float64)
            st.scores = NULL
        else:
            values = _trec_wrap(st.grades, n, 4, b"i", _trec_np.int32)
            st.grades = NULL
        lines = _trec_wrap(st.lines, n, 8, b"q", _trec_np.int64)
        st.lines = NULL
        return (self.query_ids, qidx, self.doc_ids, didx, values, lines, self.run_id)
