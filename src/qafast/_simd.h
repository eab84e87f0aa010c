/* The two innermost loops of the rank lookup, compiled for several instruction sets.
 *
 * Comparing 64-bit integers or doubles a vector at a time needs SSE4.2 or AVX2, which the
 * x86-64 baseline lacks. Where the compiler supports it (GCC or clang on x86-64 Linux),
 * target_clones builds each function for AVX2, SSE4.2 and the baseline and picks one when the
 * module loads; elsewhere the functions compile once for the default target.
 */
#ifndef QAFAST_SIMD_H
#define QAFAST_SIMD_H

#include <stdint.h>

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__)) \
    && !defined(QAFAST_NO_CLONES)
#define QAFAST_CLONES __attribute__((target_clones("avx2", "sse4.2", "default")))
#else
#define QAFAST_CLONES
/* For integer document ids, where the id itself breaks ties: how many entries rank ahead of
 * one with score x and id hx (a higher score, or the same score and a larger id). */
QAFAST_CLONES static int64_t qafast_count_ahead_int(const double *s, const int64_t *id, int64_t n,
                                                    double x, int64_t hx)
{
    int64_t ahead = 0;
    for (int64_t i = 0; i < n; i++)
        ahead += (s[i] > x) | ((s[i] == x) & (id[i] > hx));
    return ahead;
}

#endif

/* Index of the last a[i] == h, or -1. */
QAFAST_CLONES static int64_t qafast_last_equal(const int64_t *a, int64_t n, int64_t h)
{
    int64_t pos = -1;
    for (int64_t i = 0; i < n; i++)
        pos = a[i] == h ? i : pos;
    return pos;
}

/* How many s[i] > x; how many s[i] == x goes to *equal. */
QAFAST_CLONES static int64_t qafast_count_greater(const double *s, int64_t n, double x,
                                                  int64_t *equal)
{
    int64_t gt = 0, eq = 0;
    for (int64_t i = 0; i < n; i++) {
        gt += s[i] > x;
        eq += s[i] == x;
    }
    *equal = eq;
    return gt;
}

/* For integer document ids, where the id itself breaks ties: how many entries rank ahead of
 * one with score x and id hx (a higher score, or the same score and a larger id). */
QAFAST_CLONES static int64_t qafast_count_ahead_int(const double *s, const int64_t *id, int64_t n,
                                                    double x, int64_t hx)
{
    int64_t ahead = 0;
    for (int64_t i = 0; i < n; i++)
        ahead += (s[i] > x) | ((s[i] == x) & (id[i] > hx));
    return ahead;
}

#endif
