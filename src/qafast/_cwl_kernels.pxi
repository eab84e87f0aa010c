# cwl_eval's C/W/L user models (included from _kernels.pyx).
#
# For each topic's gain vector (one row, padded to the depth) the kernel builds the
# continuation vector C of one measure and from it the weights W and the stopping
# probabilities L, with numpy's arithmetic as cwl_eval uses it: sums are numpy's pairwise
# sums, products left to right. The dot products with the gains and costs are left to the
# Python layer (numpy's dot), so every number is the bits cwl_eval computes.

from libc.math cimport log
from libc.stdlib cimport malloc, free

# measure kinds, as qafast.reference.cwl.KINDS orders them
cdef enum:
    CWL_P = 0
    CWL_RBP = 1
    CWL_NDCG = 2
    CWL_RR = 3
    CWL_AP = 4
    CWL_INST = 5
    CWL_INSQ = 6


cdef extern from *:
    """
    #include <math.h>
    /* libm's pow(x, 2.0), which cwl_eval's ** 2.0 calls: a volatile exponent keeps the
       compiler from turning it into x * x, which differs in the last bit now and then */
    static double qafast_cwl_square(double x) { volatile double two = 2.0; return pow(x, two); }
    """
    double _cwl_square "qafast_cwl_square" (double x) noexcept nogil


cdef double _cwl_pairwise(const double* a, Py_ssize_t n) noexcept nogil:
    """numpy's pairwise sum of a contiguous float64 vector (np.sum's order)."""
    cdef double res, r0, r1, r2, r3, r4, r5, r6, r7
    cdef Py_ssize_t i, half
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    if n <= 128:
        r0 = a[0]; r1 = a[1]; r2 = a[2]; r3 = a[3]
        r4 = a[4]; r5 = a[5]; r6 = a[6]; r7 = a[7]
        i = 8
        while i < n - (n % 8):
            r0 += a[i]; r1 += a[i + 1]; r2 += a[i + 2]; r3 += a[i + 3]
            r4 += a[i + 4]; r5 += a[i + 5]; r6 += a[i + 6]; r7 += a[i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return _cwl_pairwise(a, half) + _cwl_pairwise(a + half, n - half)


cdef void _cwl_continue(const double* g, Py_ssize_t n, int kind, double p, double* c,
                        double* scratch) noexcept nogil:
    """The continuation probabilities C of one measure over gains ``g``."""
    cdef Py_ssize_t i
    cdef double total, wanted, top, r
    if kind == CWL_P:
        for i in range(n):
            c[i] = 1.0 if i + 1 < p else 0.0
    elif kind == CWL_RBP:
        for i in range(n):
            c[i] = p
    elif kind == CWL_NDCG:
        for i in range(n):
            if i + 1 < p:
                c[i] = (log(<double>(i + 2)) / log(2.0)) / (log(<double>(i + 3)) / log(2.0))
            else:
                c[i] = 0.0
    elif kind == CWL_RR:
        i = 0
        while i < n and not g[i] > 0:
            c[i] = 1.0
            i += 1
        while i < n:
            c[i] = 0.0
            i += 1
    elif kind == CWL_AP:
        for i in range(n):
            scratch[i] = g[i] / <double>(i + 1)
        for i in range(n - 1):
            top = _cwl_pairwise(scratch + i + 1, n - i - 1)
            c[i] = top / _cwl_pairwise(scratch + i, n - i) if top > 0.0 else 0.0
        c[n - 1] = 0.0
    elif kind == CWL_INST:
        total = 0.0
        for i in range(n):
            total = total + g[i] if i else g[0]
            wanted = p - total
            r = i + 1.0
            c[i] = _cwl_square(((r + p) + wanted - 1.0) / ((r + p) + wanted))
    else:  # CWL_INSQ
        for i in range(n):
            r = i + 1.0
            c[i] = _cwl_square((r + 2.0 * p - 1.0) / (r + 2.0 * p))


def cwl_weights(const double[:, ::1] gains, int kind, double param, double[:, ::1] weights,
                double[:, ::1] stops, double[::1] depth) -> None:
    """For each row of ``gains``: the weights W, the stopping probabilities L (rows of
    ``weights`` and ``stops``) and the expected depth 1 / W[0] (``depth``) of measure
    ``kind`` with parameter ``param``, as cwl_eval computes them."""
    cdef Py_ssize_t q, i, n = gains.shape[1], topics = gains.shape[0]
    cdef double first
    cdef double* c
    cdef double* scratch
    if n < 1:
        raise InputError("the depth must be at least 1")
    c = <double*>malloc(2 * n * sizeof(double))
    if c == NULL:
        raise MemoryError()
    scratch = c + n
    with nogil:
        for q in range(topics):
            _cwl_continue(&gains[q, 0], n, kind, param, c, scratch)
            # reach (the chance of seeing each rank) goes in the weights' row first
            weights[q, 0] = 1.0
            for i in range(1, n):
                weights[q, i] = weights[q, i - 1] * c[i - 1] if i > 1 else c[0]
            for i in range(n):
                stops[q, i] = weights[q, i] * (1.0 - c[i])
            first = 1.0 / _cwl_pairwise(&weights[q, 0], n)
            weights[q, 0] = first
            for i in range(1, n):
                weights[q, i] = weights[q, i] * first
            depth[q] = 1.0 / first
    free(c)


# ---------------------------------------------------------------------------------------------
# The C/W/L rows of the measure table: ir_measures' cwl_eval provider, one query at a time.
# Its rankings are cwl_eval's: CWL_DEPTH ranks (cut, or padded with gain 0), every cost 1, so
# the expected utility per document is W . gains. W is computed as above; the dot product
# is summed in rank order (cwl_eval's numpy dot goes through BLAS: within 1e-12 of it).

# the models cwl_eval has beyond its command line's (qafast.reference.cwl.IR_KINDS)
cdef enum:
    CWL_BPM = 7
    CWL_NERR8 = 8
    CWL_NERR9 = 9
    CWL_NERR10 = 10
    CWL_NERR11 = 11


cdef double _cwl_expected_utility(const Query* q, int kind, int64_t k, double x,
                                  const int64_t* pkeys, int64_t nkeys) noexcept nogil:
    """One query's expected utility per document under model ``kind``: ``x`` is p or T,
    ``k`` the cut-off (K of BPM); the gains are 1 at a grade >= the level (CWL_RBP) or the
    grades clipped to ``pkeys[0]..pkeys[1]`` and scaled to [0, 1]. A negative grade counts 0,
    an unjudged document has gain 0."""
    cdef double g[CWL_DEPTH]
    cdef double c[CWL_DEPTH]
    cdef double reach[CWL_DEPTH]
    cdef Py_ssize_t i, n = CWL_DEPTH
    cdef int64_t grade, low = 0, high = 1
    cdef double total, first, s, r
    cdef bint going
    if kind != CWL_RBP:
        if nkeys < 2:
            return 0.0
        low = pkeys[0]
        high = pkeys[1]
    for i in range(n):
        g[i] = 0.0
    for i in range(q.ns):
        if q.sr[i] > n:
            break
        grade = q.sg[i] if q.sg[i] > 0 else 0
        if kind == CWL_RBP:
            g[q.sr[i] - 1] = 1.0 if grade >= q.L else 0.0
        else:
            if grade < low:
                grade = low
            if grade > high:
                grade = high
            g[q.sr[i] - 1] = <double>(grade - low) / <double>(high - low)
    if kind == CWL_BPM:
        total = 0.0
        going = True
        for i in range(n):
            total = total + g[i] if i else g[0]
            going = going and total < x and i + 1 < k
            c[i] = 1.0 if going else 0.0
    elif kind == CWL_NERR8:
        for i in range(n):
            c[i] = 1.0 - g[i] if i + 1 < k else 0.0
    elif kind == CWL_NERR9:
        for i in range(n):
            r = i + 1.0
            c[i] = (r / (r + 1.0)) * (1.0 - g[i]) if i + 1 < k else 0.0
    elif kind == CWL_NERR10:
        for i in range(n):
            c[i] = x * (1.0 - g[i])
    elif kind == CWL_NERR11:
        for i in range(n):
            r = i + 1.0
            c[i] = _cwl_square((r + 2.0 * x - 1.0) / (r + 2.0 * x)) * (1.0 - g[i])
    elif kind == CWL_INST:
        total = 0.0
        for i in range(n):
            total = total + g[i] if i else g[0]
            r = i + 1.0
            c[i] = _cwl_square(((r + x) + (x - total) - 1.0) / ((r + x) + (x - total)))
    elif kind == CWL_INSQ:
        for i in range(n):
            r = i + 1.0
            c[i] = _cwl_square((r + 2.0 * x - 1.0) / (r + 2.0 * x))
    elif kind == CWL_NDCG:
        _cwl_continue(g, n, kind, <double>k if k < CWL_DEPTH + 1 else CWL_DEPTH + 1.0, c,
                      reach)
    else:  # CWL_RBP
        _cwl_continue(g, n, kind, x, c, reach)
    reach[0] = 1.0
    for i in range(1, n):
        reach[i] = reach[i - 1] * c[i - 1] if i > 1 else c[0]
    first = 1.0 / _cwl_pairwise(reach, n)
    s = first * g[0]
    for i in range(1, n):
        s += (reach[i] * first) * g[i]
    return s
