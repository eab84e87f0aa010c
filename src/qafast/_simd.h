/* The innermost loops of the rank lookup, and the byte comparisons that break ties.
 *
 * Comparing 64-bit integers or doubles a vector at a time needs SSE4.2 or AVX2, which the
 * x86-64 baseline lacks. Where the compiler supports it (GCC or clang on x86-64 Linux),
 * target_clones builds each loop for AVX2, SSE4.2 and the baseline and picks one when the
 * module loads; elsewhere the loops compile once for the default target.
 */
#ifndef QAFAST_SIMD_H
#define QAFAST_SIMD_H

#include <stdint.h>
#include <string.h>

#if defined(_MSC_VER)
#include <stdlib.h>
#define QAFAST_BSWAP64(x) _byteswap_uint64(x)
#else
#define QAFAST_BSWAP64(x) __builtin_bswap64(x)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define qafast_prefetch(p) __builtin_prefetch((const void *)(p))
#else
#define qafast_prefetch(p) ((void)0)
#endif

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__)) \
    && !defined(QAFAST_NO_CLONES)
#define QAFAST_CLONES __attribute__((target_clones("avx2", "sse4.2", "default")))
#else
#define QAFAST_CLONES
#endif

/* strcmp order of two byte strings (shorter first on a common prefix), eight bytes a step:
 * document ids are short, and a call to memcmp per comparison costs more than the compare. */
static inline int qafast_bytes_cmp(const uint8_t *a, int64_t la, const uint8_t *b, int64_t lb)
{
    int64_t m = la < lb ? la : lb, i = 0;
    for (; i + 8 <= m; i += 8) {
        uint64_t wa, wb;
        memcpy(&wa, a + i, 8);
        memcpy(&wb, b + i, 8);
        if (wa != wb) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            return wa < wb ? -1 : 1;
#else
            wa = QAFAST_BSWAP64(wa);
            wb = QAFAST_BSWAP64(wb);
            return wa < wb ? -1 : 1;
#endif
        }
    }
    for (; i < m; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return (la > lb) - (la < lb);
}

/* A document's tie key: its first 8 UTF-8 bytes read big-endian (zero-padded), with the top
 * bit flipped so that signed comparison follows byte order. Distinct tie keys order two ids
 * as strcmp does; equal ones leave the order to the remaining bytes. */
static inline int64_t qafast_tie_key(const uint8_t *p, int64_t n)
{
    uint64_t w = 0;
    int64_t m = n < 8 ? n : 8;
    for (int64_t i = 0; i < m; i++)
        w |= (uint64_t)p[i] << (56 - 8 * i);
    return (int64_t)(w ^ 0x8000000000000000ULL);
}

/* Index of the last a[i] == h, or -1. */
QAFAST_CLONES static int64_t qafast_last_equal(const int64_t *a, int64_t n, int64_t h)
{
    int64_t pos = -1;
    for (int64_t i = 0; i < n; i++)
        pos = a[i] == h ? i : pos;
    return pos;
}

/* How many entries rank ahead of one with score x and tie key kx: a higher score, or the
 * same score and a larger key (for integer ids the key is the id itself). */
QAFAST_CLONES static int64_t qafast_count_ahead_int(const double *s, const int64_t *key,
                                                    int64_t n, double x, int64_t kx)
{
    int64_t ahead = 0;
    for (int64_t i = 0; i < n; i++)
        ahead += (s[i] > x) | ((s[i] == x) & (key[i] > kx));
    return ahead;
}

/* How many entries have score x and tie key kx (the entry itself included). */
QAFAST_CLONES static int64_t qafast_count_same(const double *s, const int64_t *key, int64_t n,
                                               double x, int64_t kx)
{
    int64_t same = 0;
    for (int64_t i = 0; i < n; i++)
        same += (s[i] == x) & (key[i] == kx);
    return same;
}

#endif
