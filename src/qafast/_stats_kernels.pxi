# Resampling kernels of the paired significance tests (qafast.compare).
#
# Every test of one call shares a matrix of per-query differences, shape (queries, tests),
# a row per query: a resample draws its random signs (randomization test) or query indices
# (bootstrap) once and updates every comparison and measure with them.
#
# The random numbers come from xoshiro256** (Blackman and Vigna), seeded by splitmix64,
# both written here from their published definitions, so the results depend on the seed
# alone: not on numpy's generators, nor on how the resamples are split among threads
# (resample r always starts its own stream from (seed, r)).

from libc.math cimport INFINITY, fabs, sqrt
from libc.stdint cimport int64_t, uint32_t, uint64_t

cdef extern from *:
    """
    #include "_portable.h"
    #define qafast_st_ctz64(x) qafast_ctz64(x)
    """
    int qafast_st_ctz64(unsigned long long x) nogil


cdef inline uint64_t _st_mix64(uint64_t z) noexcept nogil:
    # splitmix64's output function
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t _st_rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline void _st_seed(uint64_t* s, uint64_t seed, uint64_t stream) noexcept nogil:
    """xoshiro256** state for resample ``stream``: four splitmix64 outputs from a start
    that mixes the seed and the stream number."""
    cdef uint64_t sm = _st_mix64(seed + <uint64_t>0x9E3779B97F4A7C15ULL) ^ _st_mix64(
        stream * <uint64_t>0xD1B54A32D192ED03ULL + <uint64_t>0x8BB84B93962EACC9ULL)
    cdef int i
    for i in range(4):
        sm += <uint64_t>0x9E3779B97F4A7C15ULL
        s[i] = _st_mix64(sm)


cdef inline uint64_t _st_next(uint64_t* s) noexcept nogil:
    cdef uint64_t result = _st_rotl(s[1] * 5, 7) * 9
    cdef uint64_t t = s[1] << 17
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _st_rotl(s[3], 45)
    return result


def xoshiro_words(uint64_t seed, uint64_t stream, uint64_t[::1] out):
    """The first ``len(out)`` outputs of resample ``stream``'s generator (for tests)."""
    cdef uint64_t s[4]
    cdef Py_ssize_t i
    _st_seed(s, seed, stream)
    for i in range(out.shape[0]):
        out[i] = _st_next(s)


def paired_randomization(const double[:, ::1] diffs, const double[::1] totals,
                         const double[::1] thresholds, uint64_t seed, int64_t start,
                         int64_t stop, bint exact, int64_t[::1] counts, double[::1] work):
    """Count, for resamples ``start`` to ``stop``, how often the sum of randomly signed
    differences reaches the observed one: ``counts[k] += |sum_q s_q diffs[q, k]| >=
    thresholds[k]``.

    A sign vector keeps the queries whose bit is set and flips the others, so its sum is
    ``2 * (sum of the kept rows) - totals[k]``, where ``totals[k]`` is the plain column sum
    added in the same row order (all bits set gives exactly ``totals``). With ``exact``,
    resample r's bits are the bits of r (queries <= 62): enumerating r over 0..2**n - 1
    visits every sign vector once. Otherwise the bits come from the seeded generator.
    ``work`` is scratch space of one double per column.
    """
    cdef Py_ssize_t n = diffs.shape[0], m = diffs.shape[1]
    cdef Py_ssize_t nwords = (n + 63) // 64, w, k, q, base
    cdef uint64_t s[4]
    cdef uint64_t bits, last_mask
    cdef int64_t r
    cdef double v
    cdef const double* row
    cdef double* acc = &work[0] if m > 0 else NULL
    if m == 0 or n == 0:
        return
    last_mask = (~<uint64_t>0) if n % 64 == 0 else ((<uint64_t>1 << (n % 64)) - 1)
    for k in range(4):
        s[k] = 0    # read only when seeded (not exact), which GCC's -O3 cannot tell
    with nogil:
        for r in range(start, stop):
            for k in range(m):
                acc[k] = 0.0
            if not exact:
                _st_seed(s, seed, <uint64_t>r)
            for w in range(nwords):
                if exact:
                    bits = <uint64_t>r if w == 0 else 0
                else:
                    bits = _st_next(s)
                if w == nwords - 1:
                    bits &= last_mask
                base = w * 64
                while bits:
                    q = base + qafast_st_ctz64(bits)
                    bits &= bits - 1
                    row = &diffs[q, 0]
                    for k in range(m):
                        acc[k] += row[k]
            for k in range(m):
                v = 2.0 * acc[k] - totals[k]
                if fabs(v) >= thresholds[k]:
                    counts[k] += 1


def paired_bootstrap(const double[:, ::1] shifted, const double[::1] thresholds,
                     uint64_t seed, int64_t start, int64_t stop, int64_t[::1] counts,
                     double[:, ::1] means, double[:, ::1] work):
    """Sakai's paired bootstrap test for resamples ``start`` to ``stop``: each draws n
    queries with replacement from the differences ``shifted`` (each column shifted to mean
    0, so that the null hypothesis holds) and counts ``|t*| >= thresholds[k]``, where t* is
    the resample's t statistic, mean / (sd / sqrt(n)). Resample r's mean of column k goes to
    ``means[r - start, k]`` (for percentile intervals). ``work`` has shape (2, columns).

    A resample whose differences are all equal has sd 0: its t* is 0 if its mean is 0 and
    infinite otherwise.
    """
    cdef Py_ssize_t n = shifted.shape[0], m = shifted.shape[1], i, k
    cdef uint64_t s[4]
    cdef uint64_t x, threshold32
    cdef uint64_t prod
    cdef uint32_t low
    cdef int half
    cdef int64_t r
    cdef Py_ssize_t q
    cdef double sm, var, tstat, mean
    cdef const double* row
    cdef double* acc = &work[0, 0] if m > 0 else NULL
    cdef double* acc2 = &work[1, 0] if m > 0 else NULL
    if m == 0 or n < 2:
        return
    # Lemire's unbiased bounded integers from 32-bit halves: reject the low products below
    # 2**32 mod n
    threshold32 = ((<uint64_t>1 << 32) - <uint64_t>n) % <uint64_t>n
    with nogil:
        for r in range(start, stop):
            for k in range(m):
                acc[k] = 0.0
                acc2[k] = 0.0
            _st_seed(s, seed, <uint64_t>r)
            half = 0
            x = 0
            for i in range(n):
                while True:
                    if half == 0:
                        x = _st_next(s)
                        prod = (x >> 32) * <uint64_t>n
                        half = 1
                    else:
                        prod = (x & <uint64_t>0xFFFFFFFFULL) * <uint64_t>n
                        half = 0
                    low = <uint32_t>(prod & <uint64_t>0xFFFFFFFFULL)
                    if low >= threshold32:
                        break
                q = <Py_ssize_t>(prod >> 32)
                row = &shifted[q, 0]
                for k in range(m):
                    acc[k] += row[k]
                    acc2[k] += row[k] * row[k]
            for k in range(m):
                sm = acc[k]
                mean = sm / n
                means[r - start, k] = mean
                var = (acc2[k] - sm * mean) / (n - 1)
                if var > 0.0:
                    tstat = fabs(mean) / sqrt(var / n)
                elif mean == 0.0:
                    tstat = 0.0
                else:
                    tstat = INFINITY
                if tstat >= thresholds[k]:
                    counts[k] += 1
