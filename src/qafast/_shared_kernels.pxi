# What more than one family's kernels need, written once: the stable argsort of doubles.

from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset


cdef inline uint64_t _sh_ascending_key(double x) noexcept nogil:
    """An unsigned key whose ascending order is x's (-0.0 equals 0.0; x is not NaN)."""
    cdef uint64_t u
    if x == 0.0:
        x = 0.0
    memcpy(&u, &x, 8)
    return ~u if u >> 63 else u | (<uint64_t>1 << 63)


cdef int _sh_argsort_f64(const double* x, Py_ssize_t n, bint descending,
                         int64_t* out) noexcept nogil:
    """out[:n] = the indices of x[:n] in ascending (or descending) order, equal values in
    input order: ``np.argsort(x, kind="stable")`` (descending: of -x). An LSD radix sort on
    the keys' six 11-bit digits, all six histograms taken in one pass, a digit every key
    shares skipped (probabilities share their top one). 11-bit digits keep a pass's 2048
    counters and write positions in the L1 cache: against the 16-bit digits (four passes, a
    histogram pass each) that argsort_stable_f64 had, 26 ms instead of 35 for 1M
    probabilities on a 0.01 grid, the same (55-58 ms) for continuous values (thread CPU
    time, medians of 7, shared 2-core machine). Returns -1 when out of memory, else 0."""
    cdef uint64_t* key = <uint64_t*>malloc(n * sizeof(uint64_t))
    cdef uint64_t* key2 = <uint64_t*>malloc(n * sizeof(uint64_t))
    cdef int64_t* spare = <int64_t*>malloc(n * sizeof(int64_t))
    cdef int64_t* hist = <int64_t*>malloc(6 * 2048 * sizeof(int64_t))
    cdef int64_t* pos = out
    cdef int64_t* pos2 = spare
    cdef uint64_t* tk
    cdef int64_t* tp
    cdef uint64_t flip = ~(<uint64_t>0) if descending else 0
    cdef int64_t total, c
    cdef Py_ssize_t i
    cdef unsigned d, shift, b
    if key == NULL or key2 == NULL or spare == NULL or hist == NULL:
        free(key); free(key2); free(spare); free(hist)
        return -1
    memset(hist, 0, 6 * 2048 * sizeof(int64_t))
    for i in range(n):
        key[i] = _sh_ascending_key(x[i]) ^ flip
        pos[i] = i
        for d in range(6):
            hist[d * 2048 + ((key[i] >> (11 * d)) & 2047)] += 1
    for d in range(6):
        shift = 11 * d
        if n == 0 or hist[d * 2048 + ((key[0] >> shift) & 2047)] == n:
            continue
        total = 0
        for b in range(2048):
            c = hist[d * 2048 + b]
            hist[d * 2048 + b] = total
            total += c
        for i in range(n):
            b = (key[i] >> shift) & 2047
            c = hist[d * 2048 + b]
            hist[d * 2048 + b] = c + 1
            key2[c] = key[i]
            pos2[c] = pos[i]
        tk = key; key = key2; key2 = tk
        tp = pos; pos = pos2; pos2 = tp
    if pos != out:
        memcpy(out, pos, n * sizeof(int64_t))
    free(key); free(key2); free(spare); free(hist)
    return 0
