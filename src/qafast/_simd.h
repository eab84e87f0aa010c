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
#include <math.h>
/* QAFAST_CLONES, QAFAST_SSE2, QAFAST_BSWAP64, qafast_prefetch, qafast_ctz32 */
#include "_portable.h"

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

/* How many neighbours rise in score (s[i] < s[i + 1]): none when the entries are in
 * descending score order, as a run file written by rank is. No early exit, so that the loop
 * is a vector compare and add. */
QAFAST_CLONES static int64_t qafast_count_rises(const double *s, int64_t n)
{
    int64_t rises = 0;
    for (int64_t i = 0; i + 1 < n; i++)
        rises += s[i] < s[i + 1];
    return rises;
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

/* Factoid ranks from an id matrix: out[i] = 1 + the first j < K with pred[i][j] == gold[i],
 * or 0 (a negative gold matches nothing). A bit per slot and the lowest bit's position: with
 * K a constant the row is a few straight-line compares, and half-hit, half-miss data costs no
 * branch mispredictions (the loop with a break ran at 15 cycles a row). */
#define QAFAST_FIRST_MATCH_K(K)                                                              \
    static void qafast_first_match_##K(const int32_t *pred, int64_t pred_stride,            \
                                       const int32_t *gold, int64_t gold_stride, int64_t n, \
                                       int32_t *out)                                         \
    {                                                                                        \
        for (int64_t i = 0; i < n; i++) {                                                    \
            const int32_t *row = pred + i * pred_stride;                                     \
            int32_t g = gold[i * gold_stride];                                               \
            uint32_t hits = 0;                                                               \
            for (int j = 0; j < (K); j++)                                                    \
                hits |= (uint32_t)(row[j] == g) << j;                                        \
            hits &= (uint32_t)0 - (uint32_t)(g >= 0);                                        \
            int c = qafast_ctz32(hits | ((uint32_t)1 << (K)));                               \
            /* c == K: no match; a mask, since GCC turns "c < K ? c + 1 : 0" into a jump */  \
            out[i] = (c + 1) & -(int32_t)(c < (K));                                          \
        }                                                                                    \
    }
QAFAST_FIRST_MATCH_K(1)
QAFAST_FIRST_MATCH_K(2)
QAFAST_FIRST_MATCH_K(3)
QAFAST_FIRST_MATCH_K(4)
QAFAST_FIRST_MATCH_K(5)
QAFAST_FIRST_MATCH_K(6)
QAFAST_FIRST_MATCH_K(8)
QAFAST_FIRST_MATCH_K(10)
QAFAST_FIRST_MATCH_K(16)
QAFAST_FIRST_MATCH_K(20)
QAFAST_FIRST_MATCH_K(31)

/* Dispatch to the unrolled loop for the usual cut-offs. Returns 0 for any other k, and the
 * caller takes its general loop. */
static int qafast_first_match_rows(const int32_t *pred, int64_t pred_stride, const int32_t *gold,
                                   int64_t gold_stride, int64_t n, int k, int32_t *out)
{
    switch (k) {
    case 1: qafast_first_match_1(pred, pred_stride, gold, gold_stride, n, out); return 1;
    case 2: qafast_first_match_2(pred, pred_stride, gold, gold_stride, n, out); return 1;
    case 3: qafast_first_match_3(pred, pred_stride, gold, gold_stride, n, out); return 1;
    case 4: qafast_first_match_4(pred, pred_stride, gold, gold_stride, n, out); return 1;
    case 5: qafast_first_match_5(pred, pred_stride, gold, gold_stride, n, out); return 1;
    case 6: qafast_first_match_6(pred, pred_stride, gold, gold_stride, n, out); return 1;
    case 8: qafast_first_match_8(pred, pred_stride, gold, gold_stride, n, out); return 1;
    case 10: qafast_first_match_10(pred, pred_stride, gold, gold_stride, n, out); return 1;
    case 16: qafast_first_match_16(pred, pred_stride, gold, gold_stride, n, out); return 1;
    case 20: qafast_first_match_20(pred, pred_stride, gold, gold_stride, n, out); return 1;
    case 31: qafast_first_match_31(pred, pred_stride, gold, gold_stride, n, out); return 1;
    default: return 0;
    }
}

/* Set bits of a 16-bit word, without needing the POPCNT instruction. */
static inline int qafast_popcount16(uint32_t x)
{
    x = x - ((x >> 1) & 0x5555u);
    x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
    x = (x + (x >> 4)) & 0x0f0fu;
    return (int)((x + (x >> 8)) & 0x1fu);
}

/* DBQA, one question of n <= 16 candidates whose scores s[0..15] and labels y[0..15] are
 * all readable: bit r - 1 is set for each rank r (score descending, then input order) held
 * by a correct candidate. Scores past n become NaN, which is never ahead, and labels past n
 * are masked off, so the loops run 16 times whatever n is, and the ranks come out in order
 * without a sort: with 2 to 15 candidates a question, loops that end at n mispredicted their
 * exit a few times a question and cost more than the counting. */
QAFAST_CLONES static uint32_t qafast_dbqa_rank_mask16(const double *s, const int8_t *y, int n)
{
    double p[16];
    uint32_t correct = 0, ranks = 0;
    for (int j = 0; j < 16; j++) {
        double sj = s[j];  /* read unconditionally: a conditional read compiles to masked loads */
        p[j] = j < n ? sj : NAN;
    }
    for (int j = 0; j < 16; j++)
        correct |= (uint32_t)(y[j] != 0) << j;
    correct &= ((uint32_t)1 << n) - 1;
#if QAFAST_SSE2
    __m128d v[8];
    for (int j = 0; j < 8; j++)
        v[j] = _mm_loadu_pd(p + 2 * j);
#endif
    while (correct) {
        int i = qafast_ctz32(correct), ahead;
        double x = p[i];
        correct &= correct - 1;
#if QAFAST_SSE2
        {
            /* bit j of above / level: candidate j scores more than / as much as x */
            __m128d xv = _mm_set1_pd(x);
            uint32_t above = 0, level = 0;
            for (int j = 0; j < 8; j++) {
                above |= (uint32_t)_mm_movemask_pd(_mm_cmpgt_pd(v[j], xv)) << (2 * j);
                level |= (uint32_t)_mm_movemask_pd(_mm_cmpeq_pd(v[j], xv)) << (2 * j);
            }
            ahead = qafast_popcount16(above | (level & (((uint32_t)1 << i) - 1)));
        }
#else
        ahead = 0;
        for (int j = 0; j < 16; j++)
            ahead += (p[j] > x) | ((p[j] == x) & (j < i));
#endif
        ranks |= (uint32_t)1 << ahead;
    }
    return ranks;
}

#endif
