# TREC run / qrels text parsing, included by _kernels.pyx (one compiled module).
#
# qafast.io.trec reads the text in blocks of whole lines and runs two stages per block, each
# without the GIL except to make Python objects:
#   1. scan (`_trec_Parser.scan`): split lines into fields (from bit masks of the text's
#      spaces and newlines, 64 bytes at a time), convert scores or grades, hash the document
#      ids, and append scores/grades and line numbers to growing arrays;
#   2. intern (`_trec_Parser.intern`): map query and document ids to int32 indexes in
#      first-seen order, with hash tables over the ids' bytes, then make one Python `str`
#      per new distinct id.
# The stages own disjoint state, so one thread can scan block k + 1 while another interns
# block k. Stage 2 is bound by memory latency (a run's document table outgrows the caches),
# so it prefetches table slots well ahead of each lookup.
#
# Without interning documents (`intern_docs=False`) stage 1 keeps each line's document hash
# in a column, and stage 2 interns only the query ids, checks each document id's UTF-8,
# computes its tie key and appends its bytes to one blob: no table, no Python object.
#
# Scores: a decimal with at most 19 significant digits, a mantissa up to 2**53 and a power of
# ten within +-22 is converted exactly (Clinger's fast path: one correctly rounded multiply or
# divide of two exact doubles). Every other score token is queued and converted after the
# block by CPython's `PyOS_string_to_double` (David Gay's correctly rounded strtod, which
# needs the GIL). Either way the result is the double `float(token)`.
#
# Every module-level name starts with `_trec` (the file is textually included).

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy, memmove
from cpython.buffer cimport PyBUF_FORMAT
from cpython.exc cimport PyErr_Clear, PyErr_ExceptionMatches, PyErr_Occurred
from cpython.ref cimport PyObject
from cpython.unicode cimport PyUnicode_DecodeUTF8

import numpy as _trec_np

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

    /* Line splitting without a branch per byte. The scan first indexes a segment of text
       (up to _trec_SEG bytes from a line start, plus a window's worth more): bit j of
       ws[j / 64] says whether byte j is C isspace (space \t \n \v \f \r), bit j of nl[j / 64]
       whether it is '\n'; bytes past the text count as neither. Then the 64-bit windows of
       both masks at a line's start give its fields: token starts are non-spaces after a space
       (the line start counts as one), token ends spaces after a non-space, all before the
       first newline. Consecutive lines then depend on each other only through a few loads
       and shifts of the masks, not through the text. With SSE2 (every x86-64) 16 bytes are
       indexed per step, elsewhere 8 (SWAR; byte by byte on a big-endian machine). */
    #define _trec_SEG 16384
    #define _trec_SEG_WORDS ((_trec_SEG + 128) / 64 + 2)

    #define _trec_ALWAYS_INLINE QAFAST_ALWAYS_INLINE
    #define _trec_ctz64(x) qafast_ctz64(x)

    #if QAFAST_SSE2 && !defined(_trec_NO_SSE2)
    static inline void _trec_mask64(const unsigned char *p, uint64_t *ws_out, uint64_t *nl_out) {
        const __m128i nine = _mm_set1_epi8(9), four = _mm_set1_epi8(4);
        const __m128i space = _mm_set1_epi8(32), newline = _mm_set1_epi8(10);
        const __m128i zero = _mm_setzero_si128();
        uint64_t ws = 0, nl = 0;
        int i;
        for (i = 0; i < 4; i++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * i));
            /* c == 32 or (unsigned char)(c - 9) <= 4 */
            __m128i w = _mm_or_si128(
                _mm_cmpeq_epi8(_mm_subs_epu8(_mm_sub_epi8(v, nine), four), zero),
                _mm_cmpeq_epi8(v, space));
            ws |= (uint64_t)(uint32_t)_mm_movemask_epi8(w) << (16 * i);
            nl |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)) << (16 * i);
        }
        *ws_out = ws;
        *nl_out = nl;
    }
    #elif _trec_LITTLE_ENDIAN
    /* SWAR: 8 bytes per step, each byte's flag in its high bit, the 8 flags then gathered
       into 8 bits by one multiply */
    static inline uint64_t _trec_gather8(uint64_t high) {
        return (((high >> 7) & 0x0101010101010101ULL) * 0x0102040810204080ULL) >> 56;
    }
    static inline uint64_t _trec_eq8(uint64_t x, uint64_t c) {    /* high bit: byte == c */
        const uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL;
        uint64_t t = x ^ (c * 0x0101010101010101ULL);
        return ~(((t & low7) + low7) | t) & 0x8080808080808080ULL;
    }
    static inline void _trec_mask64(const unsigned char *p, uint64_t *ws_out, uint64_t *nl_out) {
        const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
        uint64_t ws = 0, nl = 0, x, a, ctl;
        int i;
        for (i = 0; i < 8; i++) {
            memcpy(&x, p + 8 * i, 8);
            a = x | high;                      /* per byte 128 + (c & 127): no borrows */
            ctl = ((a - 9 * ones) & ~(a - 14 * ones) & ~x) & high;    /* 9 <= c <= 13 */
            ws |= _trec_gather8(ctl | _trec_eq8(x, 32)) << (8 * i);
            nl |= _trec_gather8(_trec_eq8(x, 10)) << (8 * i);
        }
        *ws_out = ws;
        *nl_out = nl;
    }
    #else
    static inline void _trec_mask64(const unsigned char *p, uint64_t *ws_out, uint64_t *nl_out) {
        uint64_t ws = 0, nl = 0;
        int i;
        for (i = 0; i < 64; i++) {
            unsigned char c = p[i];
            ws |= (uint64_t)(c == 32 || (unsigned char)(c - 9) <= 4) << i;
            nl |= (uint64_t)(c == 10) << i;
        }
        *ws_out = ws;
        *nl_out = nl;
    }
    #endif

    #if QAFAST_HAVE_CLONES && QAFAST_SSE2 && !defined(_trec_NO_SSE2)
    #define _trec_AVX2_INDEX 1
    /* _trec_mask64 over whole 64-byte words with AVX2, 32 bytes at a time. The six C isspace
       bytes (9-13 and 32) have six different low nibbles, so a byte is one of them exactly
       when the table entry of its low nibble equals it. The other entries are 0, which no
       byte with such a low nibble is, and pshufb gives 0 for the bytes of 128 and above. */
    QAFAST_TARGET_AVX2
    static void _trec_index64_avx2(const unsigned char *p, Py_ssize_t words, uint64_t *ws,
                                   uint64_t *nl) {
        const __m256i table = _mm256_setr_epi8(
            32, 0, 0, 0, 0, 0, 0, 0, 0, 9, 10, 11, 12, 13, 0, 0,
            32, 0, 0, 0, 0, 0, 0, 0, 0, 9, 10, 11, 12, 13, 0, 0);
        const __m256i newline = _mm256_set1_epi8(10);
        Py_ssize_t k;
        for (k = 0; k < words; k++) {
            __m256i lo = _mm256_loadu_si256((const __m256i *)(p + 64 * k));
            __m256i hi = _mm256_loadu_si256((const __m256i *)(p + 64 * k + 32));
            __m256i lo_ws = _mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, lo), lo);
            __m256i hi_ws = _mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, hi), hi);
            ws[k] = (uint64_t)(uint32_t)_mm256_movemask_epi8(lo_ws)
                    | ((uint64_t)(uint32_t)_mm256_movemask_epi8(hi_ws) << 32);
            nl[k] = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, newline))
                    | ((uint64_t)(uint32_t)_mm256_movemask_epi8(
                           _mm256_cmpeq_epi8(hi, newline)) << 32);
        }
    }
    #else
    #define _trec_AVX2_INDEX 0
    #endif

    /* Index p[0:n] (n <= _trec_SEG + 128) into ws and nl, with a zero guard word after. */
    static void _trec_index(const unsigned char *p, Py_ssize_t n, uint64_t *ws, uint64_t *nl) {
        unsigned char tail[64];
        Py_ssize_t i = 0, k = 0;
    #if _trec_AVX2_INDEX
        if (qafast_cpu_has_avx2()) {
            k = n / 64;
            i = 64 * k;
            _trec_index64_avx2(p, k, ws, nl);
        }
    #endif
        for (; i + 64 <= n; i += 64, k++)
            _trec_mask64(p + i, &ws[k], &nl[k]);
        if (i < n) {
            memset(tail, 0, 64);               /* NUL: neither space nor newline */
            memcpy(tail, p + i, (size_t)(n - i));
            _trec_mask64(tail, &ws[k], &nl[k]);
            k++;
        }
        ws[k] = 0;
        nl[k] = 0;
        ws[k + 1] = 0;
        nl[k + 1] = 0;
    }

    /* The first `need` fields of the line at byte `pos` of an indexed segment starting at
       base, if they end within 64 bytes (before the newline, if there is one there). Sets
       *eol to the newline, or NULL when there is none within the 64 bytes. Returns 0 when
       the line is left to the byte-wise loop (fewer fields in reach: blank, short, long).
       Fields whose bit is set in `unused` are counted but not located (tok and tlen keep
       what they held): a run's "Q0" and rank, a qrels' iteration, which nothing reads.
       Called with constant `need` and `unused`, so that the loop over the fields unrolls
       and the skipped fields cost two instructions each. */
    static _trec_ALWAYS_INLINE int _trec_fields_at(
            const uint64_t *wsm, const uint64_t *nlm, Py_ssize_t pos,
            const unsigned char *base, int need, unsigned unused, const unsigned char **tok,
            Py_ssize_t *tlen, const unsigned char **eol) {
        Py_ssize_t k = pos >> 6, s, e;
        unsigned sh = (unsigned)(pos & 63);
        const unsigned char *p = base + pos;
        /* the 64 bits from bit pos on; (x << 1) << (63 - sh) is x << (64 - sh), 0 for sh 0 */
        uint64_t ws = (wsm[k] >> sh) | ((wsm[k + 1] << 1) << (63 - sh));
        uint64_t nl = (nlm[k] >> sh) | ((nlm[k + 1] << 1) << (63 - sh));
        uint64_t word = ~ws, starts, ends;
        int i;
        starts = word & ~(word << 1);
        ends = ws & (word << 1);
        if (nl != 0) {
            uint64_t first = nl & (0 - nl);
            starts &= first - 1;               /* before the newline */
            ends &= first | (first - 1);       /* up to and including it */
            *eol = p + _trec_ctz64(nl);
        } else {
            *eol = NULL;
        }
        for (i = 0; i < need; i++) {
            if (ends == 0)
                return 0;
            if (!((unused >> i) & 1u)) {
                s = _trec_ctz64(starts);
                e = _trec_ctz64(ends);
                tok[i] = p + s;
                tlen[i] = e - s;
            }
            starts &= starts - 1;
            ends &= ends - 1;
        }
        return 1;
    }

    /* A run lane's state (_trec_run_lane), in plain C types. */
    typedef struct {
        const unsigned char *seg, *seg_end;    /* the indexed segment; in and out */
        uint64_t *ws_mask, *nl_mask;
        const unsigned char *qref;             /* the query id of the rows before */
        Py_ssize_t qn;
        int32_t qi;
        double *scores;
        int64_t *hashes, *tiekeys, *offsets;   /* tiekeys may be NULL */
        int32_t *qidx;
        unsigned char *blob;
        uint64_t row, stop, blob_len;          /* row and blob_len: in and out */
        const unsigned char *tag;              /* out: the last row's run tag */
        Py_ssize_t tag_len;
    } _trec_LaneState;


    /* The rows of the lane from p on (see _trec_run_lane): stores each exactly as the
       general loop would and returns where it stopped. Lines starting in the last 80 bytes
       of the text are left to the general loop: a line of the lane ends within 64 bytes of
       its start, and its widest loads (the score's 8 bytes, the document id's 16, from
       within the line) then end within 79, inside the text without a check of their own.
       Built for x86-64-v3 as well, where clones are built: on the 100M-line benchmark's run,
       callgrind counted 321 instructions a line for the lane instead of 361. */
    QAFAST_CLONES_V3
    static const unsigned char *_trec_lane_rows(_trec_LaneState *st, const unsigned char *p,
                                                const unsigned char *end) {
        const unsigned char *seg = st->seg, *seg_end = st->seg_end, *safe, *lim;
        uint64_t *wsm = st->ws_mask, *nlm = st->nl_mask;
        const unsigned char *qref = st->qref;
        Py_ssize_t qn = st->qn, left;
        int32_t qi = st->qi;
        double *scores = st->scores;
        int64_t *hashes = st->hashes, *tiekeys = st->tiekeys, *offsets = st->offsets;
        int32_t *qidx = st->qidx;
        unsigned char *blob = st->blob;
        uint64_t row = st->row, stop = st->stop, blen = st->blob_len, m;
        const unsigned char *tok[6], *eol, *tag = st->tag;
        Py_ssize_t tlen[6], tag_len = st->tag_len;
        int frac;
        double v;
        if (end - p <= 80 || tiekeys == NULL)
            return p;
        safe = end - 80;
        while (p < safe) {
            if (p >= seg_end) {
                left = end - p;
                seg = p;
                seg_end = p + (left < _trec_SEG ? left : _trec_SEG);
                _trec_index(p, left < _trec_SEG + 128 ? left : _trec_SEG + 128, wsm, nlm);
            }
            lim = seg_end < safe ? seg_end : safe;
            while (p < lim) {
                if (row >= stop)
                    goto done;
                /* a comment's first token starts with '#', which no query id of the run
                   can */
                if (!_trec_fields_at(wsm, nlm, p - seg, seg, 6, 0xAu, tok, tlen, &eol)
                        || eol == NULL || tlen[0] != qn || !_trec_equal(tok[0], qref, qn))
                    goto done;
                if (_trec_lane_digits(tok[4], tlen[4], &m, &frac))
                    /* as _trec_fast_float converts these digits: one exact division at most */
                    v = frac ? (double)m / _trec_POW10[frac] : (double)m;
                else if (!_trec_fast_float(tok[4], tlen[4], &v))
                    goto done;
                if (!_trec_is_ascii(tok[5], tlen[5]))
                    goto done;
                /* tok[2] + 16 for the text's end: those bytes are in it (see above) */
                if (_trec_take_doc(tok[2], tlen[2], tok[2] + 16, blob + blen,
                                   tiekeys + row) != 1
                        && !_trec_utf8_ok(tok[2], tlen[2]))
                    goto done;
                hashes[row] = (int64_t)_trec_hash(tok[2], tlen[2]);
                scores[row] = v;
                blen += (uint64_t)tlen[2];
                offsets[row + 1] = (int64_t)blen;
                qidx[row] = qi;
                tag = tok[5];
                tag_len = tlen[5];
                row++;
                p = eol + 1;
            }
        }
    done:
        st->seg = seg;
        st->seg_end = seg_end;
        st->row = row;
        st->blob_len = blen;
        st->tag = tag;
        st->tag_len = tag_len;
        return p;
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
    enum: _trec_SEG
    enum: _trec_SEG_WORDS
    void _trec_index(const unsigned char *p, Py_ssize_t n, uint64_t *ws,
                     uint64_t *nl) noexcept nogil
    int _trec_fields_at(const uint64_t *wsm, const uint64_t *nlm, Py_ssize_t pos,
                        const unsigned char *base, int need, unsigned unused,
                        const unsigned char **tok, Py_ssize_t *tlen,
                        const unsigned char **eol) noexcept nogil
    uint64_t _trec_load64(const unsigned char *p) noexcept nogil
    uint32_t _trec_load32(const unsigned char *p) noexcept nogil
    uint64_t _trec_hash(const unsigned char *p, Py_ssize_t n) noexcept nogil
    bint _trec_equal(const unsigned char *a, const unsigned char *b, Py_ssize_t n) noexcept nogil
    bint _trec_is_ascii(const unsigned char *p, Py_ssize_t n) noexcept nogil
    bint _trec_utf8_valid(const unsigned char *p, Py_ssize_t n) noexcept nogil
    bint _trec_utf8_ok(const unsigned char *p, Py_ssize_t n) noexcept nogil
    const double _trec_POW10[23]
    bint _trec_fast_float(const unsigned char *p, Py_ssize_t n, double *out) noexcept nogil
    ctypedef struct _trec_LaneState:
        const unsigned char *seg
        const unsigned char *seg_end
        uint64_t *ws_mask
        uint64_t *nl_mask
        const unsigned char *qref
        Py_ssize_t qn
        int32_t qi
        double *scores
        int64_t *hashes
        int64_t *tiekeys
        int64_t *offsets
        int32_t *qidx
        unsigned char *blob
        uint64_t row
        uint64_t stop
        uint64_t blob_len
        const unsigned char *tag
        Py_ssize_t tag_len
    const unsigned char *_trec_lane_rows(_trec_LaneState *st, const unsigned char *p,
                                         const unsigned char *end) noexcept nogil

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

# an id longer than this (16 MiB) is refused; the hash slots pack (arena offset << 24 | length)
cdef enum:
    _trec_LEN_BITS = 24
cdef uint64_t _trec_LEN_MASK = (<uint64_t>1 << _trec_LEN_BITS) - 1
cdef int64_t _trec_MAX_IDS = 2147483647


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


# ---------------------------------------------------------------------------------------
# byte-string table: ids' UTF-8 bytes (and the answer kernels' tokens) to first-seen ids, on
# the shared hash table (_shared_kernels.pxi); the keys' bytes kept in one arena
#
# A slot's `meta` is the high 32 bits of the key's hash with the low 4 bits replaced by the
# key length (0..8) or 15 for a longer key; its `key` is the key itself for up to 8 bytes
# (zero padded), else (arena offset << 24 | length), the length capped at 2**24 - 1 (a key
# that long is measured through the id's offsets). A short key is thus compared without
# touching the arena, a long one without touching the per-id offsets.

ctypedef struct _trec_Table:
    _sh_Slots h
    uint64_t made       # ids already turned into Python str
    unsigned char *arena
    uint64_t arena_len
    uint64_t arena_cap
    uint64_t *id_off    # count + 1 entries: id i's bytes are arena[id_off[i]:id_off[i + 1]]
    uint64_t id_cap
    # ids given without a slot, after the h.count that have one (_trec_query_id)
    uint64_t unslotted
    # the orders the ids have come in so far, increasing (then a new id is known new
    # without a look-up): 1, (length, then bytes), the order of numbers; 2, bytes alone;
    # 0 for a table whose every id has a slot
    int ascending


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
    # the slots grow past 70% full: against 50%, fewer cache misses on a big run's table
    t.made = 0
    t.unslotted = 0
    t.ascending = 0
    t.arena_cap = 1 << 16
    t.arena_len = 0
    t.arena = <unsigned char *>_trec_mem_resize(NULL, 0, t.arena_cap)
    t.id_cap = 1 << 12
    t.id_off = <uint64_t *>_trec_mem_resize(NULL, 0, t.id_cap * sizeof(uint64_t))
    if _sh_slots_init(&t.h, log2cap, 7) != 0 or t.arena == NULL or t.id_off == NULL:
        return -1
    t.id_off[0] = 0
    return 0


cdef void _trec_table_free(_trec_Table *t) noexcept nogil:
    _sh_slots_free(&t.h)
    _trec_mem_free(t.arena, t.arena_cap)
    _trec_mem_free(t.id_off, t.id_cap * sizeof(uint64_t))
    t.arena = NULL
    t.id_off = NULL


cdef inline uint64_t _trec_slot_key(uint64_t key8, uint64_t off, Py_ssize_t n) noexcept nogil:
    # a slot's key (see above): the key itself up to 8 bytes, else its arena offset and
    # length, the length capped
    if n <= 8:
        return key8
    return (off << _trec_LEN_BITS) | min(<uint64_t>n, _trec_LEN_MASK)


cdef inline int64_t _trec_table_intern(_trec_Table *t, const unsigned char *p, Py_ssize_t n,
                                       uint32_t meta, uint64_t key8,
                                       bint check_utf8) noexcept nogil:
    # Id of the byte string p[:n] (meta = _trec_meta(_trec_hash(p, n), n),
    # key8 = _trec_key8(p, n, ...)), inserting it if new. Returns -1 out of memory,
    # -2 invalid UTF-8 (a new key, when check_utf8), -4 more than 2**31 - 1 ids.
    cdef _sh_Slots *h = &t.h
    cdef uint64_t i = _sh_probe(h, _sh_home(h, meta), meta)
    cdef uint64_t lenkey = <uint64_t>n if <uint64_t>n < _trec_LEN_MASK else _trec_LEN_MASK
    cdef _sh_Slot *s
    cdef uint64_t off
    cdef int code
    while h.slots[i].idp1 != 0:
        s = &h.slots[i]
        if n <= 8:
            if s.key == key8:
                return <int64_t>s.idp1 - 1
        elif ((s.key & _trec_LEN_MASK) == lenkey
                and (lenkey < _trec_LEN_MASK
                     or t.id_off[s.idp1] - t.id_off[s.idp1 - 1] == <uint64_t>n)
                and _trec_equal(t.arena + (s.key >> _trec_LEN_BITS), p, n)):
            return <int64_t>s.idp1 - 1
        i = _sh_probe(h, _sh_next(h, i), meta)
    # new id
    if check_utf8 and not _trec_utf8_ok(p, n):
        return -2
    off = t.arena_len
    code = _trec_table_append(t, p, n)
    if code < 0:
        return code
    return _sh_fill(h, i, _trec_slot_key(key8, off, n), meta)


cdef int _trec_table_append(_trec_Table *t, const unsigned char *p, Py_ssize_t n) noexcept nogil:
    # The bytes of id number h.count + unslotted (a new one) to the arena. -1: no memory,
    # -4: more than 2**31 - 1 ids.
    cdef uint64_t count = t.h.count + t.unslotted
    cdef uint64_t need = t.arena_len + <uint64_t>n, newcap
    cdef void *tmp
    if count >= <uint64_t>_trec_MAX_IDS:
        return -4
    if need > t.arena_cap:
        if need >> (64 - _trec_LEN_BITS):        # an offset the slot cannot hold
            return -1
        newcap = t.arena_cap
        while need > newcap:
            newcap *= 2
        tmp = _trec_mem_resize(t.arena, t.arena_cap, newcap)
        if tmp == NULL:
            return -1
        t.arena = <unsigned char *>tmp
        t.arena_cap = newcap
    if count + 1 == t.id_cap:
        tmp = _trec_mem_resize(t.id_off, t.id_cap * sizeof(uint64_t),
                               2 * t.id_cap * sizeof(uint64_t))
        if tmp == NULL:
            return -1
        t.id_off = <uint64_t *>tmp
        t.id_cap *= 2
    memcpy(t.arena + t.arena_len, p, <size_t>n)
    t.arena_len = need
    t.id_off[count + 1] = need
    return 0


cdef int64_t _trec_intern(_trec_Table *t, const unsigned char *p, Py_ssize_t n, uint32_t meta,
                          uint64_t key8) noexcept nogil:
    # an id of a TREC file: a new one must be UTF-8 (-2 otherwise)
    return _trec_table_intern(t, p, n, meta, key8, True)


cdef int _trec_give_slots(_trec_Table *t) noexcept nogil:
    # Slots for the ids given without one, in id order (so _sh_fill numbers them as they
    # were numbered); from then on every id is looked up. -1: no memory.
    cdef _sh_Slots *h = &t.h
    cdef const unsigned char *end = t.arena + t.arena_len
    cdef const unsigned char *p
    cdef uint64_t off, i
    cdef Py_ssize_t n
    cdef uint32_t meta
    t.ascending = 0
    while t.unslotted:
        off = t.id_off[h.count]
        p = t.arena + off
        n = <Py_ssize_t>(t.id_off[h.count + 1] - off)
        meta = _trec_meta(_trec_hash(p, n), n)
        i = _sh_home(h, meta)
        while h.slots[i].idp1 != 0:               # the ids are distinct: no key to compare
            i = _sh_next(h, i)
        t.unslotted -= 1
        if _sh_fill(h, i, _trec_slot_key(_trec_key8(p, n, end), off, n), meta) < 0:
            return -1
    return 0


cdef inline int64_t _trec_query_id(_trec_Table *t, const unsigned char *p, Py_ssize_t n,
                                   const unsigned char *end) noexcept nogil:
    # _trec_intern for the query ids of a file, which mostly come sorted: while each new id
    # sorts after the one before (as numbers, or as bytes), it cannot have come before, and
    # it is given its id without the table's look-up, a cache miss per query (a fifth of
    # reading a million-query qrels). The first id out of order gives the earlier ones
    # their slots, and is looked up.
    cdef uint64_t count = t.h.count + t.unslotted, off, last_n
    cdef int c, ascending = t.ascending
    cdef int64_t code
    if ascending:
        if count:
            off = t.id_off[count - 1]
            last_n = t.id_off[count] - off
            c = memcmp(t.arena + off, p, <size_t>min(last_n, <uint64_t>n))
            if not (last_n < <uint64_t>n or (last_n == <uint64_t>n and c < 0)):
                ascending &= ~1
            if not (c < 0 or (c == 0 and last_n < <uint64_t>n)):
                ascending &= ~2
        t.ascending = ascending
        if ascending:
            if not _trec_utf8_ok(p, n):
                return -2
            code = _trec_table_append(t, p, n)
            if code < 0:
                return code
            t.unslotted += 1
            return <int64_t>count
        if _trec_give_slots(t) != 0:
            return -1
    return _trec_intern(t, p, n, _trec_meta(_trec_hash(p, n), n), _trec_key8(p, n, end))


cdef inline bint _trec_same_id(_trec_Table *t, int64_t idx, const unsigned char *p,
                               Py_ssize_t n) noexcept nogil:
    cdef uint64_t off = t.id_off[idx]
    return (t.id_off[idx + 1] - off == <uint64_t>n
            and _trec_equal(t.arena + off, p, n))


# ---------------------------------------------------------------------------------------
# stage 1, scan: split lines into fields, convert values, hash ids

ctypedef struct _trec_Pending:       # a score left for the exact slow path
    uint64_t row
    int64_t line
    Py_ssize_t off
    Py_ssize_t len

ctypedef struct _trec_ScanState:
    bint is_run
    bint intern_docs                 # False: each line's document hash goes to `hashes`
    int need                         # fields per line: 6 (run) or 4 (qrels)
    int64_t line_no                  # lines scanned so far
    uint64_t rows                    # data lines scanned so far
    uint64_t cap
    double *scores                   # run
    int32_t *grades                  # qrels
    # line numbers: the rows whose line is not the previous row's + 1 (row 0 among them),
    # row r's line being jump_line[k] + r - jump_row[k] for the last jump k at or before r
    # (a column of them was 8 bytes a row, 48 MB for 6M qrels lines)
    int64_t *jump_row
    int64_t *jump_line
    uint64_t njump
    uint64_t jump_cap
    int64_t next_line                # the line of a row without a jump; -1: a jump is due
    int64_t *hashes                  # without interning: _trec_hash of each document id
    _trec_Pending *pend              # per block
    uint64_t npend
    uint64_t pend_cap
    Py_ssize_t runid_off             # per block; -1: no data line
    Py_ssize_t runid_len
    int err                          # first error of the block
    int64_t err_line
    Py_ssize_t err_off
    Py_ssize_t err_len
    int err_nfields

ctypedef struct _trec_InternState:
    bint intern_docs
    _trec_Table qtab
    _trec_Table dtab                 # document ids, when interned
    int32_t *qidx
    int32_t *didx                    # when interned
    bint keep_tiekeys                # a qrels reader has no use for them
    int64_t *tiekeys                 # otherwise: each line's document tie key,
    int64_t *offsets                 # the document's bytes blob[offsets[i]:offsets[i + 1]]
    unsigned char *blob              # (cap + 1 offsets, offsets[0] = 0)
    uint64_t blob_len
    uint64_t blob_cap
    uint64_t rows                    # rows interned so far
    uint64_t cap
    int64_t prev_q                   # query index of the previous row, -1 if none
    # a run without interning documents (what complete_rows() reads):
    bint scattered                   # a row's query was neither the previous row's nor the
                                     # next new one: the queries' lines are not together
    bint keep_starts                 # a run's parser; a qrels reader never hands them over
    int64_t *qstart                  # the rows held where a query starts (qstart[0] = 0
    uint64_t nqstart                 # while rows are held)
    uint64_t qstart_cap
    int err
    uint64_t err_k                   # row within the batch
    Py_ssize_t err_off
    Py_ssize_t err_len

# One block's data lines as stage 2 needs them: where each query id is, and each document
# id's offset, length, hash-derived meta word and first 8 bytes.
ctypedef struct _trec_BatchData:
    uint64_t row_start
    uint64_t n                       # rows scanned
    uint64_t n_ok                    # rows before the block's first error (all if none)
    uint64_t cap
    int64_t *q_off
    uint32_t *q_len
    int64_t *d_off
    uint32_t *d_len
    uint32_t *d_meta
    uint64_t *d_key8


cdef int _trec_scan_grow(_trec_ScanState *sc) noexcept nogil:
    cdef uint64_t cap = sc.cap * 2 if sc.cap else 1 << 16
    cdef void *a
    if sc.is_run:
        a = _trec_mem_resize(sc.scores, sc.cap * sizeof(double), cap * sizeof(double))
        if a == NULL:
            return -1
        sc.scores = <double *>a
    else:
        a = _trec_mem_resize(sc.grades, sc.cap * sizeof(int32_t), cap * sizeof(int32_t))
        if a == NULL:
            return -1
        sc.grades = <int32_t *>a
    if not sc.intern_docs:
        a = _trec_mem_resize(sc.hashes, sc.cap * sizeof(int64_t), cap * sizeof(int64_t))
        if a == NULL:
            return -1
        sc.hashes = <int64_t *>a
    sc.cap = cap
    return 0


cdef int _trec_jump_grow(_trec_ScanState *sc) noexcept nogil:
    cdef uint64_t cap = sc.jump_cap * 2 if sc.jump_cap else 64
    cdef void *a = realloc(sc.jump_row, cap * sizeof(int64_t))
    if a == NULL:
        return -1
    sc.jump_row = <int64_t *>a
    a = realloc(sc.jump_line, cap * sizeof(int64_t))
    if a == NULL:
        return -1
    sc.jump_line = <int64_t *>a
    sc.jump_cap = cap
    return 0


cdef int _trec_qstart_push(_trec_InternState *it, uint64_t row) noexcept nogil:
    # Notes that a query starts at `row`
    cdef uint64_t cap
    cdef void *a
    if it.nqstart == it.qstart_cap:
        cap = it.qstart_cap * 2 if it.qstart_cap else 1024
        a = realloc(it.qstart, cap * sizeof(int64_t))
        if a == NULL:
            return -1
        it.qstart = <int64_t *>a
        it.qstart_cap = cap
    it.qstart[it.nqstart] = <int64_t>row
    it.nqstart += 1
    return 0


cdef inline int _trec_new_query(_trec_InternState *it, int64_t qi, uint64_t row) noexcept nogil:
    # Row `row` starts query `qi` (it.prev_q still the previous row's): the queries' lines
    # are together only if it is the next new one, and complete_rows() hands a run's starts
    # over, so that no pass over the rows looks for either. -1 when out of memory.
    if qi != it.prev_q + 1:
        it.scattered = True
    return _trec_qstart_push(it, row) if it.keep_starts else 0


cdef uint64_t _trec_last_jump(const _trec_ScanState *sc, uint64_t row) noexcept nogil:
    # the last jump at or before a scanned row (njump > 0: row 0 has a jump)
    cdef uint64_t lo = 0, hi = sc.njump, mid
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if <uint64_t>sc.jump_row[mid] <= row:
            lo = mid
        else:
            hi = mid
    return lo


cdef int64_t _trec_line_of(const _trec_ScanState *sc, uint64_t row) noexcept nogil:
    cdef uint64_t k = _trec_last_jump(sc, row)
    return sc.jump_line[k] + <int64_t>row - sc.jump_row[k]


cdef int _trec_batch_grow(_trec_BatchData *b) noexcept nogil:
    cdef uint64_t cap = b.cap * 2 if b.cap else 1 << 14
    cdef void *a
    a = realloc(b.q_off, cap * sizeof(int64_t))
    if a == NULL:
        return -1
    b.q_off = <int64_t *>a
    a = realloc(b.q_len, cap * sizeof(uint32_t))
    if a == NULL:
        return -1
    b.q_len = <uint32_t *>a
    a = realloc(b.d_off, cap * sizeof(int64_t))
    if a == NULL:
        return -1
    b.d_off = <int64_t *>a
    a = realloc(b.d_len, cap * sizeof(uint32_t))
    if a == NULL:
        return -1
    b.d_len = <uint32_t *>a
    a = realloc(b.d_meta, cap * sizeof(uint32_t))
    if a == NULL:
        return -1
    b.d_meta = <uint32_t *>a
    a = realloc(b.d_key8, cap * sizeof(uint64_t))
    if a == NULL:
        return -1
    b.d_key8 = <uint64_t *>a
    b.cap = cap
    return 0


cdef inline int _trec_scan_fail(_trec_ScanState *sc, int code, int64_t line,
                                const unsigned char *buf, const unsigned char *tok,
                                Py_ssize_t tok_len) noexcept nogil:
    sc.err = code
    sc.err_line = line
    sc.err_off = tok - buf if tok != NULL else -1
    sc.err_len = tok_len
    return code


cdef const unsigned char *_trec_run_lane(
        _trec_ScanState *sc, _trec_BatchData *b, _trec_InternState *it,
        const unsigned char *buf, const unsigned char *p, const unsigned char *end,
        uint64_t *ws_mask, uint64_t *nl_mask, const unsigned char **seg_io,
        const unsigned char **seg_end_io, uint64_t *blob_len_io) noexcept nogil:
    # The run lines that _trec_scan_lines sees most, taken by a loop of their own
    # (_trec_lane_rows, in C) whose state is all in locals: a data line whose six fields and
    # newline lie within its 64-byte window, of the previous row's query, right after that
    # row's line, with a score of the fast path, an ASCII run tag and a valid document id.
    # Each row is stored exactly as the general loop would store it. Returns where it
    # stopped: the line there (a new query, a comment, a long line, anything that may be an
    # error) is the general loop's.
    # In the general loop the row's state lives in structs, which every store into the blob
    # (char *, which may alias anything) makes the compiler load again. On the 100M-line
    # benchmark's run callgrind counted 440 instructions a line for the scan without the
    # lane, 365 with it (its score's digits converted eight at a time), 330 with the lane
    # built for x86-64-v3 as well.
    cdef _trec_LaneState st
    cdef int64_t qi = it.prev_q
    cdef uint64_t taken
    if qi < 0 or sc.next_line != sc.line_no + 1:
        return p
    st.seg = seg_io[0]
    st.seg_end = seg_end_io[0]
    st.ws_mask = ws_mask
    st.nl_mask = nl_mask
    st.qref = it.qtab.arena + it.qtab.id_off[qi]
    st.qn = <Py_ssize_t>(it.qtab.id_off[qi + 1] - it.qtab.id_off[qi])
    st.qi = <int32_t>qi
    st.scores = sc.scores
    st.hashes = sc.hashes
    st.tiekeys = it.tiekeys
    st.offsets = it.offsets
    st.qidx = it.qidx
    st.blob = it.blob
    st.row = sc.rows
    st.stop = min(sc.cap, it.cap)
    st.blob_len = blob_len_io[0]
    st.tag = NULL
    st.tag_len = 0
    p = _trec_lane_rows(&st, p, end)
    seg_io[0] = st.seg
    seg_end_io[0] = st.seg_end
    taken = st.row - sc.rows
    if taken:
        b.n += taken
        sc.rows = st.row
        it.rows = st.row
        sc.line_no += <int64_t>taken
        sc.next_line = sc.line_no + 1
        sc.runid_off = st.tag - buf
        sc.runid_len = st.tag_len
        it.blob_len = st.blob_len
        blob_len_io[0] = st.blob_len
    return p


# called through a pointer, which keeps the compiler from inlining the lane into the general
# loop, where its set-up would compete with that loop's locals for registers
ctypedef const unsigned char *(*_trec_lane_fn)(
    _trec_ScanState *, _trec_BatchData *, _trec_InternState *, const unsigned char *,
    const unsigned char *, const unsigned char *, uint64_t *, uint64_t *,
    const unsigned char **, const unsigned char **, uint64_t *) noexcept nogil
cdef _trec_lane_fn _trec_lane = _trec_run_lane


cdef int _trec_scan_lines(_trec_ScanState *sc, _trec_BatchData *b, const unsigned char *buf,
                          Py_ssize_t nbuf, _trec_InternState *it) noexcept nogil:
    # Scan every line of buf[:nbuf] (the last one may lack its newline). Stops at the first
    # malformed line and returns its code, with sc.err_* set. With `it` (a run or qrels
    # without document interning), each line also goes through stage 2 at once, while its
    # fields are at hand, instead of being recorded in `b` for a second pass: an invalid id
    # is then that line's error.
    cdef const unsigned char *p = buf
    cdef const unsigned char *end = buf + nbuf
    cdef const unsigned char *eol
    cdef const unsigned char *nxt
    cdef const unsigned char *q
    cdef const unsigned char *tok[6]
    cdef Py_ssize_t tlen[6]
    cdef uint64_t ws_mask[_trec_SEG_WORDS]
    cdef uint64_t nl_mask[_trec_SEG_WORDS]
    cdef const unsigned char *seg = buf
    cdef const unsigned char *seg_end = buf      # lines starting before it are indexed
    cdef int nf, need = sc.need, code
    cdef int64_t line
    cdef uint64_t row, k, h
    cdef double v
    cdef void *tmp
    cdef uint64_t blob_len = it.blob_len if it != NULL else 0
    cdef int64_t prev_q = it.prev_q if it != NULL else -1
    # the lane (_trec_run_lane) for a run's lines; off from a call that took none of them
    # (a query's first line, a line too long for it) until a new query starts, so that a
    # file of lines it never takes pays for one try per query, not one per line
    cdef bint lane = it != NULL and need == 6
    cdef bint lane_on = True
    cdef uint64_t rows_before
    cdef int64_t q_before
    b.row_start = sc.rows
    b.n = 0
    # the block's ids are at most its text
    if (it != NULL and it.blob_len + <uint64_t>nbuf + 16 > it.blob_cap
            and _trec_blob_grow(it, it.blob_len + <uint64_t>nbuf + 16) != 0):
        return _trec_scan_fail(sc, _trec_E_NOMEM, sc.line_no + 1, buf, NULL, 0)
    while p < end:
        if lane and lane_on:
            rows_before = sc.rows
            p = _trec_lane(sc, b, it, buf, p, end, ws_mask, nl_mask, &seg, &seg_end,
                           &blob_len)
            if p >= end:
                break
            lane_on = sc.rows != rows_before
        line = sc.line_no + 1
        # the common line (not a comment, its fields within 64 bytes) from the segment's
        # index; the rest byte by byte
        if p >= seg_end:                          # index the next segment
            seg = p
            seg_end = p + min(end - p, <Py_ssize_t>_trec_SEG)
            _trec_index(p, min(end - p, <Py_ssize_t>_trec_SEG + 128), ws_mask, nl_mask)
        if (p[0] != 35
                and (_trec_fields_at(ws_mask, nl_mask, p - seg, seg, 6, 0b1010, tok, tlen,
                                     &eol)
                     if need == 6 else
                     _trec_fields_at(ws_mask, nl_mask, p - seg, seg, 4, 0b10, tok, tlen,
                                     &eol))):
            if eol == NULL:                       # no newline within the window
                q = tok[need - 1] + tlen[need - 1]
                eol = <const unsigned char *>memchr(q, 10, <size_t>(end - q))
            nxt = end if eol == NULL else eol + 1
            if need == 6 and tok[0][0] == 35:     # blanks, then '#': a run comment
                sc.line_no = line
                p = nxt
                continue
        else:
            eol = <const unsigned char *>memchr(p, 10, <size_t>(end - p))
            if eol == NULL:
                eol = end
                nxt = end
            else:
                nxt = eol + 1
            if p[0] == 35:                        # '#' in column 0: a comment
                sc.line_no = line
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
            # a blank line; in a run, also blanks then '#': trec_eval's run reader skips
            # leading blanks before it looks for a comment (its qrels reader does not)
            if nf == 0 or (need == 6 and tok[0][0] == 35):
                sc.line_no = line
                p = nxt
                continue
            if nf < need:
                sc.err_nfields = nf
                return _trec_scan_fail(sc, _trec_E_FIELDS, line, buf, NULL, 0)
        if <uint64_t>tlen[0] > _trec_LEN_MASK:
            return _trec_scan_fail(sc, _trec_E_ID_TOO_LONG, line, buf, tok[0], tlen[0])
        if <uint64_t>tlen[2] > _trec_LEN_MASK:
            return _trec_scan_fail(sc, _trec_E_ID_TOO_LONG, line, buf, tok[2], tlen[2])
        if sc.rows == sc.cap and _trec_scan_grow(sc) != 0:
            return _trec_scan_fail(sc, _trec_E_NOMEM, line, buf, NULL, 0)
        row = sc.rows
        k = b.n
        if it != NULL:
            if row == it.cap and _trec_intern_grow(it, row + 1) != 0:
                return _trec_scan_fail(sc, _trec_E_NOMEM, line, buf, NULL, 0)
        else:
            if k == b.cap and _trec_batch_grow(b) != 0:
                return _trec_scan_fail(sc, _trec_E_NOMEM, line, buf, NULL, 0)
            b.q_off[k] = tok[0] - buf
            b.q_len[k] = <uint32_t>tlen[0]
            b.d_off[k] = tok[2] - buf
            b.d_len[k] = <uint32_t>tlen[2]
        h = _trec_hash(tok[2], tlen[2])
        if sc.intern_docs:
            b.d_meta[k] = _trec_meta(h, tlen[2])
            b.d_key8[k] = _trec_key8(tok[2], tlen[2], end)
        else:
            sc.hashes[row] = <int64_t>h
        if need == 6:
            if _trec_fast_float(tok[4], tlen[4], &v):
                sc.scores[row] = v
            else:
                if sc.npend == sc.pend_cap:
                    tmp = realloc(sc.pend, (2 * sc.pend_cap + 256) * sizeof(_trec_Pending))
                    if tmp == NULL:
                        return _trec_scan_fail(sc, _trec_E_NOMEM, line, buf, NULL, 0)
                    sc.pend = <_trec_Pending *>tmp
                    sc.pend_cap = 2 * sc.pend_cap + 256
                sc.pend[sc.npend].row = row
                sc.pend[sc.npend].line = line
                sc.pend[sc.npend].off = tok[4] - buf
                sc.pend[sc.npend].len = tlen[4]
                sc.npend += 1
                sc.scores[row] = 0.0
            if not _trec_utf8_ok(tok[5], tlen[5]):
                return _trec_scan_fail(sc, _trec_E_UTF8_RUNID, line, buf, tok[5], tlen[5])
            sc.runid_off = tok[5] - buf
            sc.runid_len = tlen[5]
        else:
            code = _trec_parse_grade(tok[3], tlen[3], &sc.grades[row])
            if code != _trec_OK:
                return _trec_scan_fail(sc, code, line, buf, tok[3], tlen[3])
        if it != NULL:                            # after the line's own checks, as stage 2
            q_before = prev_q
            code = _trec_take_row(it, row, tok[0], tlen[0], tok[2], tlen[2], end,
                                  &blob_len, &prev_q)
            lane_on = lane_on or prev_q != q_before
            if code == _trec_E_UTF8_DOCNO:
                return _trec_scan_fail(sc, code, line, buf, tok[2], tlen[2])
            if code != _trec_OK:
                return _trec_scan_fail(sc, code, line, buf, tok[0], tlen[0])
        if line != sc.next_line:
            if sc.njump == sc.jump_cap and _trec_jump_grow(sc) != 0:
                return _trec_scan_fail(sc, _trec_E_NOMEM, line, buf, NULL, 0)
            sc.jump_row[sc.njump] = <int64_t>row
            sc.jump_line[sc.njump] = line
            sc.njump += 1
        sc.next_line = line + 1
        sc.rows = row + 1
        b.n = k + 1
        sc.line_no = line
        p = nxt
    return _trec_OK


# ---------------------------------------------------------------------------------------
# stage 2, intern: query and document ids to int32 indexes, in first-seen order

cdef enum:
    _trec_AHEAD = 16    # rows between prefetching a document's slot and looking it up


cdef int _trec_intern_grow(_trec_InternState *it, uint64_t need) noexcept nogil:
    cdef uint64_t cap = it.cap if it.cap else 1 << 16
    cdef void *a
    while cap < need:
        cap *= 2
    a = _trec_mem_resize(it.qidx, it.cap * sizeof(int32_t), cap * sizeof(int32_t))
    if a == NULL:
        return -1
    it.qidx = <int32_t *>a
    if it.intern_docs:
        a = _trec_mem_resize(it.didx, it.cap * sizeof(int32_t), cap * sizeof(int32_t))
        if a == NULL:
            return -1
        it.didx = <int32_t *>a
    else:
        if it.keep_tiekeys:
            a = _trec_mem_resize(it.tiekeys, it.cap * sizeof(int64_t), cap * sizeof(int64_t))
            if a == NULL:
                return -1
            it.tiekeys = <int64_t *>a
        a = _trec_mem_resize(it.offsets, (it.cap + 1) * sizeof(int64_t),
                             (cap + 1) * sizeof(int64_t))
        if a == NULL:
            return -1
        it.offsets = <int64_t *>a
        if it.cap == 0:
            it.offsets[0] = 0
    it.cap = cap
    return 0


cdef int _trec_blob_grow(_trec_InternState *it, uint64_t need) noexcept nogil:
    # Room for `need` bytes (the caller asks for some slack, for whole-word copies).
    cdef uint64_t cap = it.blob_cap if it.blob_cap else 1 << 20
    cdef void *a
    while cap < need:
        cap *= 2
    a = _trec_mem_resize(it.blob, it.blob_cap, cap)
    if a == NULL:
        return -1
    it.blob = <unsigned char *>a
    it.blob_cap = cap
    return 0


cdef inline int _trec_intern_code(int64_t r, int utf8_code) noexcept nogil:
    return (_trec_E_NOMEM if r == -1 else utf8_code if r == -2
            else _trec_E_ID_TOO_LONG if r == -3 else _trec_E_TOO_MANY_IDS)


cdef int _trec_intern_rows(_trec_InternState *it, _trec_BatchData *b, const unsigned char *buf,
                           Py_ssize_t nbuf) noexcept nogil:
    # Intern the first b.n_ok rows of a scanned block. The document table of a big run does
    # not fit in cache, so each row's home slot is prefetched _trec_AHEAD rows before its
    # lookup, and a long key's arena bytes half as far ahead: many loads stay in flight.
    cdef const unsigned char *end = buf + nbuf
    cdef _trec_Table *dt = &it.dtab
    cdef _sh_Slot *slot
    cdef uint64_t n = b.n_ok, k, j, row
    cdef const unsigned char *qp
    cdef Py_ssize_t qn
    cdef int64_t qi, di
    if b.row_start != it.rows:
        return _trec_E_NOMEM                      # batches out of order: a caller bug
    if b.row_start + n > it.cap and _trec_intern_grow(it, b.row_start + n) != 0:
        it.err = _trec_E_NOMEM
        return _trec_E_NOMEM
    for k in range(min(n, <uint64_t>_trec_AHEAD)):
        _sh_prefetch_home(&dt.h, b.d_meta[k])
    for k in range(n):
        j = k + _trec_AHEAD
        if j < n:
            _sh_prefetch_home(&dt.h, b.d_meta[j])
        j = k + _trec_AHEAD // 2
        if j < n and b.d_len[j] > 8:
            slot = _sh_home_slot(&dt.h, b.d_meta[j])
            if slot.idp1 != 0 and slot.meta == b.d_meta[j]:
                _trec_prefetch(dt.arena + (slot.key >> _trec_LEN_BITS))
        row = b.row_start + k
        # query id: runs come grouped by query, so first compare with the previous row's
        qp = buf + b.q_off[k]
        qn = b.q_len[k]
        if it.prev_q >= 0 and _trec_same_id(&it.qtab, it.prev_q, qp, qn):
            qi = it.prev_q
        else:
            qi = _trec_query_id(&it.qtab, qp, qn, end)
            if qi < 0:
                it.err = _trec_intern_code(qi, _trec_E_UTF8_QID)
                it.err_k = k
                it.err_off = b.q_off[k]
                it.err_len = qn
                return it.err
            it.prev_q = qi
        di = _trec_intern(dt, buf + b.d_off[k], b.d_len[k], b.d_meta[k], b.d_key8[k])
        if di < 0:
            it.err = _trec_intern_code(di, _trec_E_UTF8_DOCNO)
            it.err_k = k
            it.err_off = b.d_off[k]
            it.err_len = b.d_len[k]
            return it.err
        it.qidx[row] = <int32_t>qi
        it.didx[row] = <int32_t>di
        it.rows = row + 1
    return _trec_OK


cdef inline int _trec_take_row(_trec_InternState *it, uint64_t row, const unsigned char *qp,
                               Py_ssize_t qn, const unsigned char *dp, Py_ssize_t dn,
                               const unsigned char *end, uint64_t *blob_len,
                               int64_t *prev_q) noexcept nogil:
    # What _trec_doc_rows does for one row, for the scan that does both stages at once
    # (_trec_scan_lines with an InternState). Called from that loop alone: the compiler
    # inlines a function with one caller into the large scan loop, but kept this out of line
    # when _trec_doc_rows called it too, and a call per row cost more (4 ns of 38) than the
    # fusion saved. The blob's length and the previous query are the caller's locals, stored
    # back here but never read back.
    cdef int64_t qi = prev_q[0]
    cdef int ascii
    if not (qi >= 0 and _trec_same_id(&it.qtab, qi, qp, qn)):
        qi = _trec_query_id(&it.qtab, qp, qn, end)
        if qi < 0:
            return _trec_intern_code(qi, _trec_E_UTF8_QID)
        if _trec_new_query(it, qi, row) != 0:
            return _trec_E_NOMEM
        prev_q[0] = qi
        it.prev_q = qi
    cdef int64_t unkept
    ascii = _trec_take_doc(dp, dn, end, it.blob + blob_len[0],
                           it.tiekeys + row if it.tiekeys != NULL else &unkept)
    if ascii != 1 and not _trec_utf8_ok(dp, dn):
        return _trec_E_UTF8_DOCNO
    blob_len[0] += <uint64_t>dn
    it.blob_len = blob_len[0]
    it.offsets[row + 1] = <int64_t>blob_len[0]
    it.qidx[row] = <int32_t>qi
    it.rows = row + 1
    return _trec_OK


cdef int _trec_doc_rows(_trec_InternState *it, _trec_BatchData *b, const unsigned char *buf,
                        Py_ssize_t nbuf) noexcept nogil:
    # Stage 2 without interning documents: the first b.n_ok rows' query ids as above, and
    # each document id checked for UTF-8, its tie key computed and its bytes appended to the
    # blob (the hash came from the scan). No table, so no random access at all.
    cdef const unsigned char *end = buf + nbuf
    cdef uint64_t n = b.n_ok, k, row, blen
    cdef const unsigned char *qp
    cdef const unsigned char *dp
    cdef Py_ssize_t qn, dn
    cdef int64_t qi
    cdef int ascii
    cdef int32_t *qidx
    cdef int64_t *tiekeys
    cdef int64_t *offsets
    cdef int64_t unkept
    if b.row_start != it.rows:
        return _trec_E_NOMEM                      # batches out of order: a caller bug
    if b.row_start + n > it.cap and _trec_intern_grow(it, b.row_start + n) != 0:
        it.err = _trec_E_NOMEM
        return _trec_E_NOMEM
    # the batch's ids are at most its text: room for all of them, plus 16 bytes of slack
    # for the whole-word copies below, so the loop never checks
    if (it.blob_len + <uint64_t>nbuf + 16 > it.blob_cap
            and _trec_blob_grow(it, it.blob_len + <uint64_t>nbuf + 16) != 0):
        it.err = _trec_E_NOMEM
        return _trec_E_NOMEM
    qidx = it.qidx
    tiekeys = it.tiekeys
    offsets = it.offsets
    blen = it.blob_len
    for k in range(n):
        row = b.row_start + k
        qp = buf + b.q_off[k]
        qn = b.q_len[k]
        if it.prev_q >= 0 and _trec_same_id(&it.qtab, it.prev_q, qp, qn):
            qi = it.prev_q
        else:
            qi = _trec_query_id(&it.qtab, qp, qn, end)
            if qi < 0:
                it.err = _trec_intern_code(qi, _trec_E_UTF8_QID)
                it.err_k = k
                it.err_off = b.q_off[k]
                it.err_len = qn
                it.blob_len = blen
                return it.err
            if _trec_new_query(it, qi, row) != 0:
                it.err = _trec_E_NOMEM
                it.err_k = k
                it.err_off = b.q_off[k]
                it.err_len = qn
                it.blob_len = blen
                return it.err
            it.prev_q = qi
        dp = buf + b.d_off[k]
        dn = b.d_len[k]
        ascii = _trec_take_doc(dp, dn, end, it.blob + blen,
                               tiekeys + row if tiekeys != NULL else &unkept)
        if ascii != 1 and not _trec_utf8_ok(dp, dn):
            it.err = _trec_E_UTF8_DOCNO
            it.err_k = k
            it.err_off = b.d_off[k]
            it.err_len = dn
            it.blob_len = blen
            return it.err
        blen += <uint64_t>dn
        offsets[row + 1] = <int64_t>blen
        qidx[row] = <int32_t>qi
        it.rows = row + 1
    it.blob_len = blen
    return _trec_OK


# ---------------------------------------------------------------------------------------
# zero-copy owner of a malloc'd result array (numpy wraps it with np.frombuffer)

cdef class _trec_Array:
    cdef void *ptr
    cdef size_t mapsize              # what _trec_mem_resize allocated
    cdef Py_ssize_t nbytes
    cdef Py_ssize_t itemsize
    cdef bytes fmt
    cdef Py_ssize_t shape[1]
    cdef Py_ssize_t strides[1]

    def __dealloc__(self):
        _trec_mem_free(self.ptr, self.mapsize)

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


cdef object _trec_wrap(void *ptr, uint64_t cap, uint64_t n, Py_ssize_t itemsize, bytes fmt,
                       object dtype):
    # Hand an array from _trec_mem_resize (cap items) to numpy without copying. The pages
    # past n items were never written, so they take no memory.
    cdef _trec_Array a = _trec_Array.__new__(_trec_Array)
    a.ptr = ptr
    a.mapsize = cap * itemsize
    a.nbytes = <Py_ssize_t>(n * itemsize)
    a.itemsize = itemsize
    a.fmt = fmt
    return _trec_np.frombuffer(a, dtype=dtype)


# ---------------------------------------------------------------------------------------
# the objects used by qafast.io.trec

_trec_FIELDS_RUN = "qid iter docno rank score run_id"
_trec_FIELDS_QRELS = "qid iter docno rel"


cdef str _trec_message(int code, bint is_run, int nfields, const unsigned char *buf,
                       Py_ssize_t off, Py_ssize_t tlen):
    cdef bytes raw = b""
    cdef str tok
    if off >= 0:
        raw = (<const char *>buf)[off:off + min(tlen, 200)]
    tok = repr(raw.decode("utf-8", "backslashreplace"))
    if tlen > 200:
        tok += "..."
    if code == _trec_E_FIELDS:
        return (f"expected at least {6 if is_run else 4} whitespace-separated fields "
                f"({_trec_FIELDS_RUN if is_run else _trec_FIELDS_QRELS}), found {nfields}")
    if code == _trec_E_SCORE:
        return f"score (5th field) {tok} is not a number"
    if code == _trec_E_NAN:
        return f"score (5th field) {tok} is NaN; expected a number that can be ranked"
    if code == _trec_E_GRADE:
        return f"relevance grade (4th field) {tok} is not an integer"
    if code == _trec_E_GRADE_RANGE:
        return (f"relevance grade (4th field) {tok} is out of range; "
                f"expected an integer from -2147483648 to 2147483647")
    if code == _trec_E_UTF8_QID:
        return f"query id (1st field) is not valid UTF-8: {raw!r}"
    if code == _trec_E_UTF8_DOCNO:
        return f"document id (3rd field) is not valid UTF-8: {raw!r}"
    if code == _trec_E_UTF8_RUNID:
        return f"run id (6th field) is not valid UTF-8: {raw!r}"
    if code == _trec_E_ID_TOO_LONG:
        return f"id of {tlen} bytes is longer than the 16 MiB limit"
    return f"more than {_trec_MAX_IDS} distinct ids"


cdef class _trec_Batch:
    """One scanned block of text, waiting to have its ids interned."""

    cdef _trec_BatchData b
    cdef object block                # a memoryview keeping the text alive and unresized
    cdef const unsigned char *base
    cdef Py_ssize_t nbytes
    cdef readonly int64_t error_line   # 0, or the line of the block's first scan error
    cdef readonly str error_message

    def __cinit__(self):
        self.b.cap = 0
        self.b.n = 0
        self.b.n_ok = 0
        self.b.q_off = NULL
        self.b.q_len = NULL
        self.b.d_off = NULL
        self.b.d_len = NULL
        self.b.d_meta = NULL
        self.b.d_key8 = NULL

    def __dealloc__(self):
        free(self.b.q_off)
        free(self.b.q_len)
        free(self.b.d_off)
        free(self.b.d_len)
        free(self.b.d_meta)
        free(self.b.d_key8)

    def release(self):
        """Drop the reference to the text (the arrays stay for reuse)."""
        self.block = None
        self.base = NULL
        self.nbytes = 0


cdef class _trec_Parser:
    """Two-stage TREC run (``is_run=True``) or qrels parser; see qafast.io.trec.

    ``scan(block)`` reads the complete lines of one block of text; ``intern(batch)`` then
    maps the block's ids to indexes. The stages touch disjoint state, so one thread may scan
    block k + 1 while another interns block k; each stage must see blocks in file order.

    With ``intern_docs=False`` document ids are not interned: the scan keeps each line's
    document hash, and ``intern`` (query ids only) copies the document's bytes to one blob
    and computes its tie key, kept unless ``tie_keys=False`` (then ``finish()`` gives None
    for them: qrels are never ranked by document id).
    """

    cdef _trec_ScanState sc
    cdef _trec_InternState it
    cdef readonly list query_ids      # every query id so far, in order of first appearance
    cdef list doc_ids
    cdef readonly object run_id
    cdef readonly str error_message     # set when intern() returns False
    cdef uint64_t error_row
    cdef bint finished

    def __cinit__(self, bint is_run, bint intern_docs=True, bint tie_keys=True):
        self.sc.is_run = is_run
        self.sc.intern_docs = intern_docs
        self.sc.hashes = NULL
        self.it.intern_docs = intern_docs
        self.it.keep_tiekeys = tie_keys and not intern_docs
        self.it.tiekeys = NULL
        self.it.offsets = NULL
        self.it.blob = NULL
        self.it.blob_len = 0
        self.it.blob_cap = 0
        self.sc.need = 6 if is_run else 4
        self.sc.cap = 0
        self.sc.scores = NULL
        self.sc.grades = NULL
        self.sc.jump_row = NULL
        self.sc.jump_line = NULL
        self.sc.jump_cap = 0
        self.sc.pend = NULL
        self.sc.pend_cap = 0
        self.it.qtab.h.slots = NULL
        self.it.qtab.arena = NULL
        self.it.qtab.id_off = NULL
        self.it.dtab.h.slots = NULL
        self.it.dtab.arena = NULL
        self.it.dtab.id_off = NULL
        self.it.qidx = NULL
        self.it.didx = NULL
        self.it.cap = 0
        self.it.keep_starts = is_run and not intern_docs
        self.it.qstart = NULL
        self.it.qstart_cap = 0
        if (_trec_scan_grow(&self.sc) != 0 or _trec_intern_grow(&self.it, 1) != 0
                or (not intern_docs and _trec_blob_grow(&self.it, 1) != 0)):
            raise MemoryError()
        self.finished = False
        self._start_text()

    cdef int _start_text(self) except -1:
        # the state of a parser that has read nothing (new tables; the arrays are kept)
        _trec_table_free(&self.it.qtab)
        _trec_table_free(&self.it.dtab)
        if (_trec_table_init(&self.it.qtab, 10) != 0
                or _trec_table_init(&self.it.dtab, 16 if self.it.intern_docs else 4) != 0):
            raise MemoryError()
        self.it.qtab.ascending = 3
        self.sc.line_no = 0
        self.sc.rows = 0
        self.sc.njump = 0
        self.sc.next_line = -1
        self.sc.npend = 0
        self.sc.err = _trec_OK
        self.it.rows = 0
        self.it.prev_q = -1
        self.it.scattered = False
        self.it.nqstart = 0
        self.it.err = _trec_OK
        self.it.blob_len = 0
        if self.it.offsets != NULL:
            self.it.offsets[0] = 0
        self.query_ids = []
        self.doc_ids = []
        self.run_id = None
        self.error_message = None
        return 0

    def __dealloc__(self):
        _trec_table_free(&self.it.qtab)
        _trec_table_free(&self.it.dtab)
        _trec_mem_free(self.it.qidx, self.it.cap * sizeof(int32_t))
        _trec_mem_free(self.it.didx, self.it.cap * sizeof(int32_t))
        _trec_mem_free(self.it.tiekeys, self.it.cap * sizeof(int64_t))
        _trec_mem_free(self.it.offsets, (self.it.cap + 1) * sizeof(int64_t))
        _trec_mem_free(self.it.blob, self.it.blob_cap)
        _trec_mem_free(self.sc.scores, self.sc.cap * sizeof(double))
        _trec_mem_free(self.sc.grades, self.sc.cap * sizeof(int32_t))
        free(self.sc.jump_row)
        free(self.sc.jump_line)
        _trec_mem_free(self.sc.hashes, self.sc.cap * sizeof(int64_t))
        free(self.sc.pend)
        free(self.it.qstart)

    def scan(self, block, _trec_Batch batch=None):
        """Stage 1 on ``block`` (bytes-like, complete lines; the last may lack its newline).

        Fills and returns ``batch`` (a new one if None). If a line is malformed, the batch
        keeps the rows before it and names it in ``error_line`` / ``error_message``.
        """
        return self._scan(block, batch, False)

    def scan_intern(self, block, _trec_Batch batch=None):
        """Both stages on ``block`` in one pass over its text, for a caller that would run
        them one after the other on one thread; only without document interning. Returns
        ``batch`` with nothing left to intern; ``error_line`` / ``error_message`` name the
        block's first malformed line, an invalid id included."""
        if self.it.intern_docs:
            raise RuntimeError("scan_intern() needs a parser without document interning")
        if self.sc.rows != self.it.rows:
            raise RuntimeError("scan_intern() while a scanned batch waits for intern()")
        return self._scan(block, batch, True)

    cdef _trec_Batch _scan(self, block, _trec_Batch batch, bint fused):
        cdef _trec_ScanState *sc = &self.sc
        cdef _trec_InternState *it = &self.it if fused else NULL
        cdef object view = memoryview(block)
        cdef const unsigned char[::1] data = view.cast("B") if view.format != "B" else view
        cdef Py_ssize_t n = data.shape[0]
        cdef const unsigned char *buf = &data[0] if n > 0 else NULL
        cdef int rc = _trec_OK
        cdef uint64_t k
        if self.finished:
            raise RuntimeError("scan() after finish()")
        if batch is None:
            batch = _trec_Batch.__new__(_trec_Batch)
        batch.block = view
        batch.base = buf
        batch.nbytes = n
        batch.error_line = 0
        batch.error_message = None
        batch.b.row_start = sc.rows
        batch.b.n = 0
        sc.npend = 0
        sc.runid_off = -1
        sc.err = _trec_OK
        if n > 0:
            with nogil:
                rc = _trec_scan_lines(sc, &batch.b, buf, n, it)
        if fused:
            self._make_strings(&self.it.qtab, self.query_ids)
        if rc == _trec_E_NOMEM:
            raise MemoryError()
        batch.b.n_ok = batch.b.n
        if rc != _trec_OK:
            batch.error_line = sc.err_line
            batch.error_message = _trec_message(rc, sc.is_run, sc.err_nfields, buf, sc.err_off,
                                                sc.err_len)
        # scores for the exact slow path; a failure there comes before any error above
        k = self._resolve_pending(buf, batch)
        if k < sc.npend:
            batch.b.n_ok = sc.pend[k].row - batch.b.row_start
        if sc.runid_off >= 0 and batch.error_line == 0:
            self.run_id = PyUnicode_DecodeUTF8(<const char *>buf + sc.runid_off,
                                               sc.runid_len, NULL)
        return batch

    cdef uint64_t _resolve_pending(self, const unsigned char *buf, _trec_Batch batch) except? 0:
        # Convert the queued score tokens; returns the index of the first bad one, or
        # npend when all are numbers.
        cdef _trec_ScanState *sc = &self.sc
        cdef uint64_t k
        cdef _trec_Pending *pe
        cdef char small[64]
        cdef char *tmp
        cdef char *endp
        cdef double v
        cdef int code
        for k in range(sc.npend):
            pe = &sc.pend[k]
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
            code = _trec_OK
            if endp != tmp + pe.len:
                code = _trec_E_SCORE
            elif v != v:
                code = _trec_E_NAN
            if code != _trec_OK:
                batch.error_line = pe.line
                batch.error_message = _trec_message(code, True, 0, buf, pe.off, pe.len)
                return k
            sc.scores[pe.row] = v
        return sc.npend

    def intern(self, _trec_Batch batch not None):
        """Stage 2 on a scanned batch. Returns False after an invalid id (described by
        ``error_message`` and ``error_line()``), else True; the batch's own scan error, if
        any, is the caller's to raise."""
        cdef _trec_InternState *it = &self.it
        cdef int rc
        if self.finished:
            raise RuntimeError("intern() after finish()")
        if batch.b.row_start != it.rows:
            raise RuntimeError("batches must be interned in the order they were scanned")
        with nogil:
            if it.intern_docs:
                rc = _trec_intern_rows(it, &batch.b, batch.base, batch.nbytes)
            else:
                rc = _trec_doc_rows(it, &batch.b, batch.base, batch.nbytes)
        self._make_strings(&it.qtab, self.query_ids)
        if it.intern_docs:
            self._make_strings(&it.dtab, self.doc_ids)
        if rc == _trec_E_NOMEM:
            raise MemoryError()
        if rc != _trec_OK:
            self.error_row = batch.b.row_start + it.err_k
            self.error_message = _trec_message(rc, self.sc.is_run, 0, batch.base, it.err_off,
                                               it.err_len)
            return False
        return True

    @property
    def rows(self):
        """Rows scanned and not yet handed over."""
        return self.it.rows

    @property
    def lines(self):
        """Lines scanned so far (comments and blank lines included)."""
        return self.sc.line_no

    @property
    def interns_docs(self):
        """Whether document ids are interned (else only hashed, and scan_intern() works)."""
        return self.it.intern_docs

    def complete_rows(self, bint everything, int64_t first_query):
        """For evaluating a run file as it is read: the rows of the queries that are
        complete (all but the last query's rows; every row with ``everything``), as numpy
        views of the parser's own arrays (qidx, scores, hashes, tiekeys, lines, byte
        offsets, blob), and each query's first row (q_off, a new array, with the number of
        rows last). The views are valid until the next scan() or drop_rows(); the caller
        then drops the rows with drop_rows(), so the arrays stay small and in cache. For a
        run parser without document interning, between batches.

        The rows read since the text's start must hold each query's lines together,
        queries in order of first appearance, and the rows held must start with query
        ``first_query``; otherwise returns None (the caller reads the file whole).
        """
        cdef _trec_ScanState *sc = &self.sc
        cdef _trec_InternState *it = &self.it
        cdef uint64_t n = it.rows, cut, nq
        if not sc.is_run or it.intern_docs or sc.rows != n:
            raise RuntimeError("complete_rows() needs a run parser without document "
                               "interning, between batches")
        if n == 0:
            return 0, None
        # every row since the text's start was checked as stage 2 took it (a pass over the
        # rows here was 1.7% of a 100M-line run's time)
        if it.scattered or it.qidx[0] != first_query:
            return None
        nq = it.nqstart
        cut = n
        if not everything:
            nq -= 1
            cut = <uint64_t>it.qstart[nq]       # the last query's lines may go on
        if cut == 0:
            return 0, None
        q_off = _trec_np.empty(nq + 1, dtype=_trec_np.int64)
        cdef int64_t[::1] qo = q_off
        memcpy(&qo[0], it.qstart, nq * sizeof(int64_t))
        qo[nq] = <int64_t>cut
        return cut, (
            _trec_np.asarray(<int32_t[:cut]> it.qidx),
            _trec_np.asarray(<double[:cut]> sc.scores),
            _trec_np.asarray(<int64_t[:cut]> sc.hashes),
            _trec_np.asarray(<int64_t[:cut]> it.tiekeys),
            self._line_numbers(cut),
            _trec_np.asarray(<int64_t[:cut + 1]> it.offsets),
            _trec_np.asarray(<uint8_t[:max(it.offsets[cut], 1)]> it.blob),
            q_off)

    def drop_rows(self, uint64_t cut):
        """Forget the first ``cut`` rows (those complete_rows() showed), moving the rest to
        the front."""
        cdef _trec_ScanState *sc = &self.sc
        cdef _trec_InternState *it = &self.it
        cdef uint64_t n = it.rows, i, rest, nbytes, k, kept
        if cut > n or sc.rows != n:
            raise RuntimeError("drop_rows() past the rows, or during a batch")
        rest = n - cut
        nbytes = <uint64_t>it.offsets[cut]
        if rest:
            memmove(it.qidx, it.qidx + cut, rest * sizeof(int32_t))
            memmove(sc.scores, sc.scores + cut, rest * sizeof(double))
            memmove(sc.hashes, sc.hashes + cut, rest * sizeof(int64_t))
            if it.tiekeys != NULL:
                memmove(it.tiekeys, it.tiekeys + cut, rest * sizeof(int64_t))
            memmove(it.blob, it.blob + nbytes, it.blob_len - nbytes)
            # the kept rows' jumps, renumbered, row `cut` (now 0) among them
            k = _trec_last_jump(sc, cut)
            sc.jump_line[k] += <int64_t>cut - sc.jump_row[k]
            sc.jump_row[k] = <int64_t>cut
            kept = sc.njump - k
            for i in range(kept):
                sc.jump_row[i] = sc.jump_row[k + i] - <int64_t>cut
                sc.jump_line[i] = sc.jump_line[k + i]
            sc.njump = kept
        else:
            sc.njump = 0
            sc.next_line = -1                 # the next row starts the jumps again
        for i in range(rest + 1):
            it.offsets[i] = it.offsets[cut + i] - <int64_t>nbytes
        it.blob_len -= nbytes
        it.rows = rest
        sc.rows = rest
        # the starts of the queries kept, renumbered; row 0 starts one, even if the cut was
        # within a query
        k = 0
        while k < it.nqstart and <uint64_t>it.qstart[k] < cut:
            k += 1
        kept = it.nqstart - k
        for i in range(kept):
            it.qstart[i] = it.qstart[k + i] - <int64_t>cut
        it.nqstart = kept
        if it.keep_starts and rest and (kept == 0 or it.qstart[0] != 0):
            if _trec_qstart_push(&self.it, 0) != 0:
                raise MemoryError()
            memmove(it.qstart + 1, it.qstart, kept * sizeof(int64_t))
            it.qstart[0] = 0

    def restart(self):
        """Forget every line read, to read another text from its start, keeping the
        arrays' memory: a thread that reads several byte ranges of a file (see
        qafast._runfile) otherwise has every range page-fault its arrays in afresh, which
        cost 7 ms a range."""
        if self.finished:
            raise RuntimeError("restart() after finish()")
        self._start_text()

    def error_line(self):
        """The line of the row intern() failed on. Only while no scan() is running."""
        return _trec_line_of(&self.sc, self.error_row)

    cdef object _line_numbers(self, uint64_t n):
        # the lines of rows [0, n) (qafast._lines.LineNumbers), from the jumps before row n
        from qafast._lines import LineNumbers
        cdef uint64_t k = _trec_last_jump(&self.sc, n - 1) + 1 if n else 0
        rows = _trec_np.empty(k, dtype=_trec_np.int64)
        lines = _trec_np.empty(k, dtype=_trec_np.int64)
        cdef int64_t[::1] r = rows
        cdef int64_t[::1] v = lines
        cdef uint64_t i
        for i in range(k):
            r[i] = self.sc.jump_row[i]
            v[i] = self.sc.jump_line[i]
        return LineNumbers(rows, lines, n)

    cdef int _make_strings(self, _trec_Table *t, list out) except -1:
        cdef uint64_t i
        cdef uint64_t count = t.h.count + t.unslotted
        for i in range(t.made, count):
            out.append(PyUnicode_DecodeUTF8(<const char *>t.arena + t.id_off[i],
                                            <Py_ssize_t>(t.id_off[i + 1] - t.id_off[i]), NULL))
        t.made = count
        return 0

    def finish(self):
        """Hand over the columns: (query_ids, query_index, doc_ids, doc_index, values,
        line_numbers, run_id, doc_hashes, doc_tiekeys, doc_offsets, doc_blob); the first
        two document columns are None without interning, the last four with it. The parser
        cannot be used afterwards."""
        cdef uint64_t n = self.it.rows
        if self.finished:
            raise RuntimeError("finish() called twice")
        if self.sc.rows != n:
            raise RuntimeError("finish() before every scanned batch was interned")
        self.finished = True
        _trec_table_free(&self.it.qtab)
        _trec_table_free(&self.it.dtab)
        free(self.sc.pend)
        self.sc.pend = NULL
        qidx = _trec_wrap(self.it.qidx, self.it.cap, n, 4, b"i", _trec_np.int32)
        self.it.qidx = NULL
        doc_ids = didx = hashes = tiekeys = offsets = blob = None
        if self.it.intern_docs:
            doc_ids = self.doc_ids
            didx = _trec_wrap(self.it.didx, self.it.cap, n, 4, b"i", _trec_np.int32)
            self.it.didx = NULL
        else:
            hashes = _trec_wrap(self.sc.hashes, self.sc.cap, n, 8, b"q", _trec_np.int64)
            self.sc.hashes = NULL
            if self.it.keep_tiekeys:
                tiekeys = _trec_wrap(self.it.tiekeys, self.it.cap, n, 8, b"q",
                                     _trec_np.int64)
                self.it.tiekeys = NULL
            offsets = _trec_wrap(self.it.offsets, self.it.cap + 1, n + 1, 8, b"q",
                                 _trec_np.int64)
            self.it.offsets = NULL
            blob = _trec_wrap(self.it.blob, self.it.blob_cap, self.it.blob_len, 1, b"B",
                              _trec_np.uint8)
            self.it.blob = NULL
        if self.sc.is_run:
            values = _trec_wrap(self.sc.scores, self.sc.cap, n, 8, b"d", _trec_np.float64)
            self.sc.scores = NULL
        else:
            values = _trec_wrap(self.sc.grades, self.sc.cap, n, 4, b"i", _trec_np.int32)
            self.sc.grades = NULL
        lines = self._line_numbers(n)
        return (self.query_ids, qidx, doc_ids, didx, values, lines, self.run_id,
                hashes, tiekeys, offsets, blob)


def _trec_hash_bytes(const unsigned char[::1] data not None):
    """The 64-bit hash (as a signed int64) that ``intern_docs=False`` reports for a document
    id with these UTF-8 bytes: ``_trec_hash``, as other qafast code hashes ids."""
    cdef Py_ssize_t n = data.shape[0]
    return <int64_t>_trec_hash(&data[0] if n > 0 else NULL, n)


def _trec_last_newline(const unsigned char[::1] data not None):
    """Index of the last b"\\n" in data, or -1."""
    cdef Py_ssize_t i = data.shape[0] - 1
    with nogil:
        while i >= 0 and data[i] != 10:
            i -= 1
    return i
