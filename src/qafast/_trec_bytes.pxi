# TREC reader, first part (_trec_io.pxi includes the parts in order): the byte helpers every
# later part calls, and the error codes of the nogil loops. The helpers are C, so that the
# run lane (_trec_lines.pxi, built for more than one instruction set) and the Cython code
# share them: growing arrays (mremap on Linux), word loads, the id hash and comparison,
# ASCII and UTF-8 checks, the exact fast path for scores, a document's tie key and copy;
# then, in Cython, the scan's isspace() and grade parser. Apart from the line splitter
# because more than the scan uses them: the id tables, and the answer kernels (allocator,
# hash).

cdef extern from *:
    """
    /* compiler, CPU and CPython differences: QAFAST_GNU_BUILTINS, QAFAST_SSE2, ... */
    #include "_portable.h"

    /* -D_trec_LITTLE_ENDIAN=0 (and -D_trec_NO_SSE2) build the portable paths, for tests */
    #ifndef _trec_LITTLE_ENDIAN
    #if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \\
        __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    #define _trec_LITTLE_ENDIAN 0
    #else
    #define _trec_LITTLE_ENDIAN 1
    #endif
    #endif

    #define _trec_prefetch(p) qafast_prefetch(p)

    /* transparent huge pages for a large table (a hint; Linux only) */
    #define _trec_advise_huge(p, n) qafast_advise_huge(p, n)

    /* Growing arrays (the output columns, the id arenas). On Linux they are their own
       mappings, grown with mremap: no copy, and no pages touched until written. Elsewhere
       realloc. The caller keeps the size, for freeing. The huge-page advice covers the
       whole mapping: advising only part of it would split it, and mremap refuses a range
       that spans two mappings (EFAULT). */
    static void *_trec_mem_resize(void *p, size_t old, size_t n) {
    #if QAFAST_LINUX_MEMORY && defined(MREMAP_MAYMOVE)
        void *q;
        if (p == NULL)
            q = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        else
            q = mremap(p, old, n, MREMAP_MAYMOVE);
        if (q == MAP_FAILED)
            return NULL;
    #ifdef MADV_HUGEPAGE
        if (n >= ((size_t)1 << 21))
            madvise(q, n, MADV_HUGEPAGE);
    #endif
        return q;
    #else
        (void)old;
        return realloc(p, n);
    #endif
    }

    static void _trec_mem_free(void *p, size_t n) {
    #if QAFAST_LINUX_MEMORY && defined(MREMAP_MAYMOVE)
        if (p != NULL) munmap(p, n);
    #else
        (void)n;
        free(p);
    #endif
    }

    /* Byte helpers of the scan, in C so that the run lane below (built for more than one
       instruction set) and the Cython code share them. */
    static inline uint64_t _trec_load64(const unsigned char *p) {
        uint64_t w;
        memcpy(&w, p, 8);
        return w;
    }

    static inline uint32_t _trec_load32(const unsigned char *p) {
        uint32_t w;
        memcpy(&w, p, 4);
        return w;
    }

    /* 8-byte words, then the tail read as whole (possibly overlapping) loads so no byte-wise
       copy stalls the final multiply. Equal byte strings always hash equal; n is mixed in. */
    static inline uint64_t _trec_hash(const unsigned char *p, Py_ssize_t n) {
        uint64_t h = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)n * 0xC2B2AE3D27D4EB4FULL), w;
        Py_ssize_t total = n;
        while (n > 8) {
            h = (h ^ _trec_load64(p)) * 0x9FB21C651E98DF25ULL;
            h ^= h >> 28;
            p += 8;
            n -= 8;
        }
        if (total >= 8)
            w = _trec_load64(p + n - 8);           /* the last 8 bytes of the string */
        else if (n >= 4)
            w = ((uint64_t)_trec_load32(p) << 32) | _trec_load32(p + n - 4);
        else if (n > 0)
            w = ((uint64_t)p[0] << 16) | ((uint64_t)p[n >> 1] << 8) | p[n - 1];
        else
            w = 0;
        h = (h ^ w) * 0x9FB21C651E98DF25ULL;
        /* murmur3 fmix64 */
        h ^= h >> 33;
        h *= 0xFF51AFD7ED558CCDULL;
        h ^= h >> 33;
        h *= 0xC4CEB9FE1A85EC53ULL;
        h ^= h >> 33;
        return h;
    }

    /* a[:n] == b[:n]; short ids compared with two (overlapping) loads instead of a call */
    static inline int _trec_equal(const unsigned char *a, const unsigned char *b,
                                  Py_ssize_t n) {
        if (n >= 8) {
            if (n > 16)
                return memcmp(a, b, (size_t)n) == 0;
            return (_trec_load64(a) == _trec_load64(b)
                    && _trec_load64(a + n - 8) == _trec_load64(b + n - 8));
        }
        if (n >= 4)
            return (_trec_load32(a) == _trec_load32(b)
                    && _trec_load32(a + n - 4) == _trec_load32(b + n - 4));
        if (n > 0)
            return a[0] == b[0] && a[n >> 1] == b[n >> 1] && a[n - 1] == b[n - 1];
        return 1;
    }

    /* whole (possibly overlapping) words, as a run tag or an id is a few bytes long */
    static inline int _trec_is_ascii(const unsigned char *p, Py_ssize_t n) {
        uint64_t acc = 0;
        Py_ssize_t i = 0;
        if (n >= 8) {
            for (; i + 8 <= n; i += 8)
                acc |= _trec_load64(p + i);
            if (i < n)
                acc |= _trec_load64(p + n - 8);
            return (acc & 0x8080808080808080ULL) == 0;
        }
        if (n >= 4)
            return ((_trec_load32(p) | _trec_load32(p + n - 4)) & 0x80808080U) == 0;
        for (; i < n; i++)
            acc |= p[i];
        return acc < 0x80;
    }

    /* Well-formed UTF-8 (Unicode table 3-7), which is what bytes.decode("utf-8") accepts:
       no overlong forms, no surrogates, nothing above U+10FFFF. */
    static int _trec_utf8_valid(const unsigned char *p, Py_ssize_t n) {
        Py_ssize_t i = 0;
        unsigned char c, c1;
        while (i < n) {
            c = p[i];
            if (c < 0x80) {
                i += 1;
            } else if (c < 0xC2) {
                return 0;
            } else if (c < 0xE0) {
                if (n - i < 2 || (p[i + 1] & 0xC0) != 0x80)
                    return 0;
                i += 2;
            } else if (c < 0xF0) {
                if (n - i < 3)
                    return 0;
                c1 = p[i + 1];
                if (c == 0xE0) {
                    if (c1 < 0xA0 || c1 > 0xBF)
                        return 0;
                } else if (c == 0xED) {
                    if (c1 < 0x80 || c1 > 0x9F)
                        return 0;
                } else if ((c1 & 0xC0) != 0x80) {
                    return 0;
                }
                if ((p[i + 2] & 0xC0) != 0x80)
                    return 0;
                i += 3;
            } else if (c < 0xF5) {
                if (n - i < 4)
                    return 0;
                c1 = p[i + 1];
                if (c == 0xF0) {
                    if (c1 < 0x90 || c1 > 0xBF)
                        return 0;
                } else if (c == 0xF4) {
                    if (c1 < 0x80 || c1 > 0x8F)
                        return 0;
                } else if ((c1 & 0xC0) != 0x80) {
                    return 0;
                }
                if ((p[i + 2] & 0xC0) != 0x80 || (p[i + 3] & 0xC0) != 0x80)
                    return 0;
                i += 4;
            } else {
                return 0;
            }
        }
        return 1;
    }

    static inline int _trec_utf8_ok(const unsigned char *p, Py_ssize_t n) {
        return _trec_is_ascii(p, n) || _trec_utf8_valid(p, n);
    }

    static const double _trec_POW10[23] = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

    /* [+-] digits [. digits] [(e|E) [+-] digits], with at least one mantissa digit.
       Returns 0 (the caller falls back to the exact slow path) for anything else, for
       more than 19 mantissa digits (leading zeros included: then no digit count can
       overflow the 64-bit mantissa, and the loops need no test but the digit's), a mantissa
       above 2**53 or a power of ten beyond 22.
       p[n] must be readable and whitespace, as after a run's score (its tag follows): the
       loops then stop there without a bound check of their own, a third of their work. */
    static inline int _trec_fast_float(const unsigned char *p, Py_ssize_t n, double *out) {
        const unsigned char *e = p + n, *first;
        int neg = 0, eneg = 0, ndig, frac = 0, ex = 0;
        uint64_t m = 0;
        unsigned d;
        double v;
        if (p[0] == '+' || p[0] == '-') {
            neg = p[0] == '-';
            p++;
        }
        first = p;
        while ((d = (unsigned)(p[0] - '0')) < 10) {
            m = m * 10 + d;
            p++;
        }
        ndig = (int)(p - first);
        if (p[0] == '.') {
            p++;
            first = p;
            while ((d = (unsigned)(p[0] - '0')) < 10) {
                m = m * 10 + d;
                p++;
            }
            frac = (int)(p - first);
            ndig += frac;
        }
        if (ndig == 0 || ndig > 19)
            return 0;
        if (p[0] == 'e' || p[0] == 'E') {
            p++;
            if (p[0] == '+' || p[0] == '-') {
                eneg = p[0] == '-';
                p++;
            }
            if (p >= e)
                return 0;
            while ((unsigned)(p[0] - '0') < 10) {
                if (ex < 100000)
                    ex = ex * 10 + (p[0] - '0');
                p++;
            }
            if (eneg)
                ex = -ex;
        }
        if (p != e)
            return 0;
        if (m == 0) {
            *out = neg ? -0.0 : 0.0;
            return 1;
        }
        if (m > ((uint64_t)1 << 53))
            return 0;
        ex -= frac;
        if (ex < -22 || ex > 22)
            return 0;
        v = ex >= 0 ? (double)m * _trec_POW10[ex] : (double)m / _trec_POW10[-ex];
        *out = neg ? -v : v;
        return 1;
    }

    /* A document's tie key, as qafast_tie_key in _simd.h: its first 8 bytes read big-endian
       (zero padded), top bit flipped. One load and a byte swap when 8 bytes are readable. */
    static inline int64_t _trec_tie_key(const unsigned char *p, Py_ssize_t n,
                                        const unsigned char *end) {
        uint64_t w = 0;
        Py_ssize_t i, m;
    #if _trec_LITTLE_ENDIAN && QAFAST_GNU_BUILTINS
        if (end - p >= 8) {
            memcpy(&w, p, 8);
            if (n < 8)
                w &= ((uint64_t)1 << (8 * n)) - 1;
            return (int64_t)(QAFAST_BSWAP64(w) ^ 0x8000000000000000ULL);
        }
    #else
        (void)end;
    #endif
        m = n < 8 ? n : 8;
        for (i = 0; i < m; i++)
            w |= (uint64_t)p[i] << (56 - 8 * i);
        return (int64_t)(w ^ 0x8000000000000000ULL);
    }

    /* Without interning, per line: copy the document id p[:n] to dst (which has 16 bytes of
       slack), store its tie key and return whether it is all ASCII. An id of up to 16 bytes
       (with 16 readable) is two loads, two stores and no loop. */
    #if _trec_LITTLE_ENDIAN && QAFAST_GNU_BUILTINS
    static const uint64_t _trec_BYTEMASK[9] = {
        0, 0xFFULL, 0xFFFFULL, 0xFFFFFFULL, 0xFFFFFFFFULL, 0xFFFFFFFFFFULL,
        0xFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFFFULL};
    #endif
    static inline int _trec_take_doc(const unsigned char *p, Py_ssize_t n,
                                     const unsigned char *end, unsigned char *dst,
                                     int64_t *tiekey) {
    #if _trec_LITTLE_ENDIAN && QAFAST_GNU_BUILTINS
        if (n <= 16 && end - p >= 16) {
            uint64_t lo, hi;
            Py_ssize_t nlo = n < 8 ? n : 8;
            memcpy(&lo, p, 8);
            memcpy(&hi, p + 8, 8);
            memcpy(dst, &lo, 8);
            memcpy(dst + 8, &hi, 8);
            lo &= _trec_BYTEMASK[nlo];
            hi &= _trec_BYTEMASK[n - nlo];
            *tiekey = (int64_t)(QAFAST_BSWAP64(lo) ^ 0x8000000000000000ULL);
            return ((lo | hi) & 0x8080808080808080ULL) == 0;
        }
    #endif
        memcpy(dst, p, (size_t)n);
        *tiekey = _trec_tie_key(p, n, end);
        return -1;                             /* not known: the caller checks */
    }

    /* A run lane's score (_trec_run_lane): 1 to 8 bytes, digits with at most one '.' and at
       least one digit, read by one 8-byte load (8 bytes readable at p). Sets *m to the digits
       as one integer and *frac to how many follow the '.'; 0 for any other token, which
       _trec_fast_float then takes. The digits are converted eight at a time (SWAR: pairs,
       then fours, then all eight, by three multiplies) instead of a loop whose exit, after
       a varying number of digits, the processor cannot predict. */
    static inline int _trec_lane_digits(const unsigned char *p, Py_ssize_t n, uint64_t *m,
                                        int *frac) {
    #if _trec_LITTLE_ENDIAN
        const uint64_t ones = 0x0101010101010101ULL, zeros = 0x30 * ones;
        uint64_t w, keep, t, dot, s, below;
        int at, k = (int)n;
        if (n < 1 || n > 8)
            return 0;
        /* byte masks by shifts, not loads from _trec_BYTEMASK: a load would add its latency
           to the chain of dependent steps that each line's conversion is */
        keep = ~(uint64_t)0 >> (64 - 8 * n);
        memcpy(&w, p, 8);
        w &= keep;
        t = w ^ (0x2E * ones);                           /* a '.' becomes a zero byte */
        dot = ~(((t & (0x7F * ones)) + 0x7F * ones) | t) & (0x80 * ones) & keep;
        *frac = 0;
        if (dot != 0) {                                  /* the first '.' taken out */
            at = qafast_ctz64(dot) >> 3;
            below = ((uint64_t)1 << (8 * at)) - 1;
            w = (w & below) | ((w >> 8) & ~below);
            k -= 1;
            *frac = k - at;
            if (k == 0)
                return 0;
        }
        /* '0's before the k digits, to eight; then every byte must be '0'..'9', 0x30-0x39:
           high nibble 3, still 3 when 6 is added (no byte is above 0x3F, so no carry
           crosses bytes) */
        s = (w << (8 * (8 - k))) | (zeros & (((uint64_t)1 << (8 * (8 - k))) - 1));
        if ((s & (0xF0 * ones)) != zeros || ((s + 6 * ones) & (0xF0 * ones)) != zeros)
            return 0;
        s -= zeros;
        s = s * 10 + (s >> 8);
        s = (((s & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32)))
             + (((s >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
        *m = s & 0xFFFFFFFFULL;
        return 1;
    #else
        (void)p; (void)n; (void)m; (void)frac;
        return 0;
    #endif
    }
    """
    void _trec_prefetch(const void *p) noexcept nogil
    bint _trec_LITTLE_ENDIAN
    void *_trec_mem_resize(void *p, size_t old, size_t n) noexcept nogil
    void _trec_mem_free(void *p, size_t n) noexcept nogil
    void _trec_advise_huge(void *p, size_t n) noexcept nogil
    int64_t _trec_tie_key(const unsigned char *p, Py_ssize_t n,
                          const unsigned char *end) noexcept nogil
    int _trec_take_doc(const unsigned char *p, Py_ssize_t n, const unsigned char *end,
                       unsigned char *dst, int64_t *tiekey) noexcept nogil
    int _trec_lane_digits(const unsigned char *p, Py_ssize_t n, uint64_t *m,
                          int *frac) noexcept nogil
    uint64_t _trec_load64(const unsigned char *p) noexcept nogil
    uint32_t _trec_load32(const unsigned char *p) noexcept nogil
    uint64_t _trec_hash(const unsigned char *p, Py_ssize_t n) noexcept nogil
    bint _trec_equal(const unsigned char *a, const unsigned char *b, Py_ssize_t n) noexcept nogil
    bint _trec_is_ascii(const unsigned char *p, Py_ssize_t n) noexcept nogil
    bint _trec_utf8_valid(const unsigned char *p, Py_ssize_t n) noexcept nogil
    bint _trec_utf8_ok(const unsigned char *p, Py_ssize_t n) noexcept nogil
    const double _trec_POW10[23]
    bint _trec_fast_float(const unsigned char *p, Py_ssize_t n, double *out) noexcept nogil


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
    _trec_E_LINE_TOO_LONG = 12

# the longest line the scan takes, in bytes before its '\n' (1 MiB; qafast.io.trec's
# MAX_LINE_BYTES): a run or qrels line is a few dozen bytes, and the readers' blocks hold a
# longer line only until it is refused, so that a file of one endless line takes neither
# unbounded memory nor a rescan per block
cdef enum:
    _trec_MAX_LINE = 1048576
_trec_MAX_LINE_BYTES = _trec_MAX_LINE


# ---------------------------------------------------------------------------------------
# byte-level helpers

cdef inline bint _trec_isspace(unsigned char c) noexcept nogil:
    # C isspace() in the "C" locale, as trec_eval and bytes.split() use: space \t \n \v \f \r
    return c == 32 or <unsigned char>(c - 9) <= 4


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
