# Kernels included by _kernels.pyx: KILT's downstream evaluation (qafast.kilt).
#
# kilt_rouge_l is the ROUGE-L F of the ``rouge`` package (1.0.1) that eval_downstream.py
# calls, for many (prediction, reference) pairs of texts given as interned word ids split
# into sentences. The package's LCS is summary-level: one LCS per pair of sentences, found
# by its backtracking, and the union of their words counted once per distinct word.

from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc, realloc


cdef int64_t _kl_distinct(const int32_t* toks, const int64_t* sent_off, int64_t s0,
                          int64_t s1, int64_t* mark, int64_t stamp) noexcept nogil:
    """Distinct word ids of sentences s0..s1 (marking them with stamp)."""
    cdef int64_t k, count = 0
    for k in range(sent_off[s0], sent_off[s1]):
        if mark[toks[k]] != stamp:
            mark[toks[k]] = stamp
            count += 1
    return count


cdef int64_t _kl_lcs_union(const int32_t* x, int64_t nx, const int32_t* y, int64_t ny,
                           int32_t* table, int64_t* mark, int64_t stamp) noexcept nogil:
    """Add to the words marked with stamp those of the LCS of x and y that the package's
    backtracking finds; returns how many were new. table has room for (nx+1)*(ny+1)."""
    cdef int64_t i, j, w = ny + 1, added = 0
    cdef int32_t up, left
    for j in range(w):
        table[j] = 0
    for i in range(1, nx + 1):
        table[i * w] = 0
        for j in range(1, ny + 1):
            if x[i - 1] == y[j - 1]:
                table[i * w + j] = table[(i - 1) * w + j - 1] + 1
            else:
                up = table[(i - 1) * w + j]
                left = table[i * w + j - 1]
                table[i * w + j] = up if up > left else left
    i = nx
    j = ny
    while i > 0 and j > 0:
        if x[i - 1] == y[j - 1]:
            if mark[x[i - 1]] != stamp:
                mark[x[i - 1]] = stamp
                added += 1
            i -= 1
            j -= 1
        elif table[(i - 1) * w + j] > table[i * w + j - 1]:
            i -= 1
        else:
            j -= 1
    return added


def kilt_rouge_l(const int32_t[::1] toks, const int64_t[::1] sent_off,
                 const int64_t[::1] text_sent, const int64_t[::1] hyp,
                 const int64_t[::1] ref, int64_t vocab, double[::1] out):
    """ROUGE-L F of text ``hyp[p]`` against text ``ref[p]`` into ``out[p]``, 0.0 where either
    has no sentence. Text t's sentences are ``text_sent[t]:text_sent[t + 1]``, sentence s's
    word ids (all below ``vocab``) ``toks[sent_off[s]:sent_off[s + 1]]``."""
    cdef Py_ssize_t npairs = hyp.shape[0], nt = text_sent.shape[0] - 1, p
    cdef int64_t k, h, r, hs, rs, m, n, u, stamp = 0, need, cap = 0, longest = 0
    cdef int64_t* mark = NULL
    cdef int32_t* table = NULL
    cdef void* grown
    cdef double r_lcs, p_lcs
    if ref.shape[0] != npairs or out.shape[0] != npairs or nt < 0:
        raise InputError("one reference and one output per prediction are expected")
    if sent_off.shape[0] == 0 or text_sent[nt] >= sent_off.shape[0] \
            or sent_off[sent_off.shape[0] - 1] > toks.shape[0]:
        raise InputError("sentence offsets out of range")
    if sent_off[0] < 0 or text_sent[0] < 0:
        raise InputError("sentence offsets out of range")
    for k in range(1, sent_off.shape[0]):
        if sent_off[k] < sent_off[k - 1]:
            raise InputError("sentence offsets must not decrease")
    for k in range(1, text_sent.shape[0]):
        if text_sent[k] < text_sent[k - 1]:
            raise InputError("sentence offsets must not decrease")
    for k in range(toks.shape[0]):
        if toks[k] < 0 or toks[k] >= vocab:
            raise InputError("word ids out of range")
    for p in range(npairs):
        if hyp[p] < 0 or hyp[p] >= nt or ref[p] < 0 or ref[p] >= nt:
            raise InputError("text index out of range")
    mark = <int64_t*>malloc((vocab + 1) * sizeof(int64_t))
    if mark == NULL:
        raise MemoryError()
    try:
        with nogil:
            for k in range(vocab + 1):
                mark[k] = 0
            for p in range(npairs):
                h = hyp[p]
                r = ref[p]
                if text_sent[h] == text_sent[h + 1] or text_sent[r] == text_sent[r + 1]:
                    out[p] = 0.0
                    continue
                stamp += 1
                m = _kl_distinct(&toks[0], &sent_off[0], text_sent[r], text_sent[r + 1],
                                 mark, stamp)
                stamp += 1
                n = _kl_distinct(&toks[0], &sent_off[0], text_sent[h], text_sent[h + 1],
                                 mark, stamp)
                stamp += 1
                u = 0
                for rs in range(text_sent[r], text_sent[r + 1]):
                    for hs in range(text_sent[h], text_sent[h + 1]):
                        need = (sent_off[rs + 1] - sent_off[rs] + 1) \
                            * (sent_off[hs + 1] - sent_off[hs] + 1)
                        if need > cap:
                            grown = realloc(table, need * sizeof(int32_t))
                            if grown == NULL:
                                with gil:
                                    raise MemoryError()
                            table = <int32_t*>grown
                            cap = need
                        u += _kl_lcs_union(&toks[sent_off[rs]], sent_off[rs + 1] - sent_off[rs],
                                           &toks[sent_off[hs]], sent_off[hs + 1] - sent_off[hs],
                                           table, mark, stamp)
                r_lcs = <double>u / <double>m
                p_lcs = <double>u / <double>n
                out[p] = 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8))
    finally:
        free(mark)
        free(table)
