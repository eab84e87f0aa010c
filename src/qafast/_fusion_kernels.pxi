# Fusion kernels, included by _kernels.pyx after the ranking part, whose byte comparison
# (qafast_bytes_cmp) they use.
#
# ``fuse_queries`` fuses several runs query by query. The caller lays the runs out as one
# table of entries, query-major and run-minor: the entries of run r for query q are
# ``seg_off[q * n_runs + r]`` to ``seg_off[q * n_runs + r + 1]``, each with its score, a
# 64-bit hash of its document id, an order-preserving tie key and (string ids) its bytes.
# For each query the kernel
#   1. gives each distinct document (hash, then bytes) a candidate number, in first-seen
#      order, with a small open-addressing table;
#   2. ranks each run's documents (score descending, ascending under min-max-inverted; ties by
#      document id descending), normalises their scores and notes their places;
#   3. computes every candidate's fused score, and writes the candidates out in the fused
#      run's order (fused score descending, ties by document id descending).
# The definitions are qafast.reference.fusion's; this follows its order of floating-point
# operations, so the two agree to the bit.

from libc.math cimport log, pow, sqrt
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcmp, memcpy

#: the methods and normalisations, in the order of their kernel codes (_FU_* below)
FUSION_METHODS = ("sum", "mnz", "anz", "max", "min", "med", "gmnz", "wsum", "wmnz", "mixed",
                  "rrf", "isr", "log_isr", "logn_isr", "rbc", "bordafuse", "w_bordafuse",
                  "condorcet", "w_condorcet")
FUSION_NORMS = (None, "min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda")

cdef enum:
    _FU_SUM = 0
    _FU_MNZ = 1
    _FU_ANZ = 2
    _FU_MAX = 3
    _FU_MIN = 4
    _FU_MED = 5
    _FU_GMNZ = 6
    _FU_WSUM = 7
    _FU_WMNZ = 8
    _FU_MIXED = 9
    _FU_RRF = 10
    _FU_ISR = 11
    _FU_LOG_ISR = 12
    _FU_LOGN_ISR = 13
    _FU_RBC = 14
    _FU_BORDA = 15
    _FU_WBORDA = 16
    _FU_CONDORCET = 17
    _FU_WCONDORCET = 18

cdef enum:
    _FN_NONE = 0
    _FN_MIN_MAX = 1
    _FN_MIN_MAX_INVERTED = 2
    _FN_MAX = 3
    _FN_SUM = 4
    _FN_ZMUV = 5
    _FN_RANK = 6
    _FN_BORDA = 7


ctypedef struct _FuCtx:
    const double* score       # per entry
    const int64_t* tie        # per entry: tie key (string ids) or the id (integer ids)
    const int64_t* bstart     # per entry: its bytes in blob; NULL for integer ids
    const int64_t* bend
    const uint8_t* blob
    const int64_t* rep        # per candidate: an entry naming it
    const double* fused       # per candidate
    const int64_t* pos        # per candidate and run: place in the run, -1 if missing
    const double* weights     # per run
    int64_t n_runs

ctypedef bint (*_fu_before_t)(const _FuCtx*, int64_t, int64_t) noexcept nogil


cdef inline int _fu_doc_cmp(const _FuCtx* c, int64_t a, int64_t b) noexcept nogil:
    """The order of two entries' document ids (strcmp order; integer ids as integers). The
    tie keys hold an id's first 8 bytes, so ids of up to 8 bytes need no look at the blob."""
    cdef int64_t la, lb
    if c.tie[a] != c.tie[b]:
        return -1 if c.tie[a] < c.tie[b] else 1
    if c.bstart == NULL:
        return 0
    la = c.bend[a] - c.bstart[a]
    lb = c.bend[b] - c.bstart[b]
    if la <= 8 and lb <= 8:   # one is the other and zero bytes ("a", "a\0"): shorter first
        return -1 if la < lb else (1 if la > lb else 0)
    return qafast_bytes_cmp(c.blob + c.bstart[a], la, c.blob + c.bstart[b], lb)


cdef bint _fu_doc_desc(const _FuCtx* c, int64_t x, int64_t y) noexcept nogil:
    """Candidate x's document id is larger than y's."""
    return _fu_doc_cmp(c, c.rep[x], c.rep[y]) > 0


cdef bint _fu_beats(const _FuCtx* c, int64_t x, int64_t y) noexcept nogil:
    """Condorcet: the runs ranking x above y outweigh those ranking y above x (a run
    ranks what it retrieved above what it did not, and does not vote between two misses)."""
    cdef double for_x = 0.0, for_y = 0.0
    cdef int64_t r, px, py
    for r in range(c.n_runs):
        px = c.pos[x * c.n_runs + r]
        py = c.pos[y * c.n_runs + r]
        if px < 0 and py < 0:
            continue
        if py < 0 or (px >= 0 and px < py):
            for_x += c.weights[r]
        else:
            for_y += c.weights[r]
    return for_x > for_y


cdef void _fu_merge_sort(const _FuCtx* c, _fu_before_t before, int64_t* idx, int64_t* tmp,
                         int64_t n, bint total_order) noexcept nogil:
    """Sort idx[:n] (bottom-up merge sort): a right-hand item moves ahead of a left-hand
    one only when ``before(right, left)``. When ``before`` is a total order, input already
    in order costs n - 1 calls (Condorcet's majorities need not be transitive: the merges
    are the definition there)."""
    cdef int64_t width = 1, lo, mid, hi, i, j, k
    cdef int64_t* src = idx
    cdef int64_t* dst = tmp
    cdef int64_t* swap
    if total_order:
        for i in range(1, n):
            if before(c, idx[i], idx[i - 1]):
                break
        else:
            return
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if before(c, src[j], src[i]):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
            lo = hi
        swap = src
        src = dst
        dst = swap
        width *= 2
    if src != idx:
        memcpy(idx, src, n * sizeof(int64_t))


cdef inline bint _fu_key_before(const _FuCtx* c, const uint64_t* key, const int64_t* idx,
                                int64_t a, int64_t b, bint cands) noexcept nogil:
    """Item a (a position in key/idx) goes before item b: a smaller key, or the same key
    and a larger document id (``cands``: idx holds candidates, else entries)."""
    if key[a] != key[b]:
        return key[a] < key[b]
    if cands:
        return _fu_doc_cmp(c, c.rep[idx[a]], c.rep[idx[b]]) > 0
    return _fu_doc_cmp(c, idx[a], idx[b]) > 0


cdef void _fu_sort_keyed(const _FuCtx* c, uint64_t* key, int64_t* idx, uint64_t* ktmp,
                         int64_t* itmp, int64_t n, bint cands) noexcept nogil:
    """Sort idx[:n] with key[:n] by key ascending, then document id descending: the merge
    sort above with its comparison inline, for the two sorts every query makes (each run's
    documents by score, the candidates by fused score). Sorted input costs one pass."""
    cdef int64_t width = 1, lo, mid, hi, i, j, k
    cdef uint64_t* ks = key
    cdef uint64_t* kd = ktmp
    cdef int64_t* src = idx
    cdef int64_t* dst = itmp
    cdef uint64_t* kswap
    cdef int64_t* swap
    for i in range(1, n):
        if _fu_key_before(c, key, idx, i, i - 1, cands):
            break
    else:
        return
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if _fu_key_before(c, ks, src, j, i, cands):
                    kd[k] = ks[j]
                    dst[k] = src[j]
                    j += 1
                else:
                    kd[k] = ks[i]
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                kd[k] = ks[i]
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                kd[k] = ks[j]
                dst[k] = src[j]
                j += 1
                k += 1
            lo = hi
        kswap = ks
        ks = kd
        kd = kswap
        swap = src
        src = dst
        dst = swap
        width *= 2
    if src != idx:
        memcpy(idx, src, n * sizeof(int64_t))


cdef inline bint _fu_same_doc(const _FuCtx* c, const int64_t* hashes, int64_t a,
                              int64_t b) noexcept nogil:
    cdef int64_t n
    if hashes[a] != hashes[b]:
        return False
    if c.bstart == NULL:
        return True
    n = c.bend[a] - c.bstart[a]
    if n != c.bend[b] - c.bstart[b] or c.tie[a] != c.tie[b]:
        return False
    # the tie keys hold the first 8 bytes: only longer ids need their bytes compared
    return n <= 8 or memcmp(c.blob + c.bstart[a] + 8, c.blob + c.bstart[b] + 8, n - 8) == 0


cdef double _fu_normalize(int norm, double s, int64_t p, int64_t n, int64_t m, double lo,
                          double hi, double total, double mean, double std) noexcept nogil:
    cdef double den
    if norm == _FN_MIN_MAX:
        den = hi - lo
        return (s - lo) / (den if den > 1e-9 else 1e-9)
    if norm == _FN_MIN_MAX_INVERTED:
        den = hi - lo
        return (hi - s) / (den if den > 1e-9 else 1e-9)
    if norm == _FN_MAX:
        return s / (hi if hi > 1e-9 else 1e-9)
    if norm == _FN_SUM:
        den = total - lo * <double>n
        return (s - lo) / (den if den > 1e-9 else 1e-9)
    if norm == _FN_ZMUV:
        return (s - mean) / (std if std > 1e-9 else 1e-9)
    if norm == _FN_RANK:
        return 1 - (<double>p / <double>n)
    if norm == _FN_BORDA:
        return 1 - (<double>p / <double>m)
    return s


cdef double _fu_median(double* v, int64_t n) noexcept nogil:
    cdef int64_t i, j
    cdef double x
    for i in range(1, n):         # insertion sort: one value per run
        x = v[i]
        j = i - 1
        while j >= 0 and v[j] > x:
            v[j + 1] = v[j]
            j -= 1
        v[j + 1] = x
    if n % 2:
        return v[n // 2]
    return (v[n // 2 - 1] + v[n // 2]) / 2


cdef double _fu_score(int method, const double* val, const int64_t* pos, const int64_t* sizes,
                      int64_t R, int64_t m, const double* w, double k, double gamma,
                      double phi, double sigma, double* buf) noexcept nogil:
    """One candidate's fused score from its row of normalised scores and places."""
    cdef double acc = 0.0, wacc = 0.0, x, best
    cdef int64_t r, count = 0, p
    if method == _FU_BORDA or method == _FU_WBORDA:
        for r in range(R):
            p = pos[r]
            x = <double>(m - p) if p >= 0 else (<double>(m - sizes[r] + 1)) / 2
            acc += x * w[r] if method == _FU_WBORDA else x
        return acc
    if method == _FU_MAX or method == _FU_MIN:
        best = 0.0
        for r in range(R):
            x = val[r] if pos[r] >= 0 else (-1e9 if method == _FU_MAX else 1e9)
            if r == 0 or (x > best if method == _FU_MAX else x < best):
                best = x
        return best
    for r in range(R):
        p = pos[r]
        if p < 0:
            continue
        x = val[r]
        buf[count] = x
        count += 1
        if method == _FU_WSUM:
            acc += w[r] * x
        elif method == _FU_WMNZ:
            acc += x
            wacc += w[r]
        elif method == _FU_MIXED:
            acc += x * w[r]
        elif method == _FU_RRF:
            acc += 1 / ((k + <double>p) + 1)
        elif method == _FU_ISR or method == _FU_LOG_ISR or method == _FU_LOGN_ISR:
            acc += 1 / ((<double>p + 1) * (<double>p + 1))
        elif method == _FU_RBC:
            acc += (1 - phi) * pow(phi, <double>p)
        else:
            acc += x
    if method == _FU_MNZ or method == _FU_ISR:
        return acc * <double>count
    if method == _FU_ANZ:
        return acc / <double>count
    if method == _FU_MED:
        return _fu_median(buf, count)
    if method == _FU_GMNZ:
        return acc * pow(<double>count, gamma)
    if method == _FU_WMNZ:
        return acc * wacc
    if method == _FU_MIXED:
        return acc * sqrt(<double>count)
    if method == _FU_LOG_ISR:
        return acc * log(<double>count)
    if method == _FU_LOGN_ISR:
        return acc * log(<double>count + sigma)
    return acc


def fuse_queries(
    const int64_t[::1] seg_off,
    const double[::1] scores,
    const int64_t[::1] hashes,
    const int64_t[::1] tiekeys,
    const int64_t[::1] bstart,
    const int64_t[::1] bend,
    const uint8_t[::1] blob,
    const double[::1] weights,
    int method,
    int norm,
    double k,
    double gamma,
    double phi,
    double sigma,
    Py_ssize_t q0,
    Py_ssize_t q1,
    int64_t[::1] out_count,
    int64_t[::1] out_entry,
    double[::1] out_score,
):
    """Fuse queries q0..q1-1 of ``len(weights)`` runs laid out as the part's comment says.

    ``method`` and ``norm`` index FUSION_METHODS and FUSION_NORMS. ``bstart``/``bend`` are
    empty for integer ids (then ``tiekeys`` are the ids). Query q's fused documents are
    written from row ``seg_off[q * n_runs]`` on: ``out_count[q]`` rows of the entry naming
    each document and its fused score, in the fused run's order. Returns 0, or -1 when out
    of memory.
    """
    cdef int64_t R = weights.shape[0]
    cdef _FuCtx c
    cdef int64_t q, r, n, n_max = 0, m, e, lo, hi, base, i, p, cand_i, h, n_r
    cdef int64_t cap = 16, mask, slot
    cdef int shift = 60
    cdef double mn, mx, total, mean, std, sq, s, missing
    cdef int64_t* cand = NULL
    cdef int64_t* rep = NULL
    cdef int64_t* slot_of = NULL
    cdef int64_t* slots = NULL
    cdef int64_t* order = NULL
    cdef int64_t* tmp = NULL
    cdef int64_t* pos = NULL
    cdef int64_t* sizes = NULL
    cdef double* val = NULL
    cdef double* fused = NULL
    cdef double* buf = NULL
    cdef uint64_t* ukey = NULL
    cdef uint64_t* ukey_tmp = NULL
    cdef uint64_t flip = 0 if norm == _FN_MIN_MAX_INVERTED else ~(<uint64_t>0)
    cdef int rc = 0
    cdef uint8_t no_bytes = 0
    if R == 0 or q1 <= q0:
        return 0
    for q in range(q0, q1):
        n = seg_off[(q + 1) * R] - seg_off[q * R]
        if n > n_max:
            n_max = n
    while cap < 2 * n_max:
        cap *= 2
        shift -= 1
    mask = cap - 1
    c.score = &scores[0] if scores.shape[0] else NULL
    c.tie = &tiekeys[0] if tiekeys.shape[0] else NULL
    c.bstart = &bstart[0] if bstart.shape[0] else NULL
    c.bend = &bend[0] if bend.shape[0] else NULL
    c.blob = &blob[0] if blob.shape[0] else &no_bytes   # every id empty: no byte is read
    c.weights = &weights[0]
    c.n_runs = R
    with nogil:
        cand = <int64_t*>malloc((n_max + 1) * sizeof(int64_t))
        rep = <int64_t*>malloc((n_max + 1) * sizeof(int64_t))
        slot_of = <int64_t*>malloc((n_max + 1) * sizeof(int64_t))
        slots = <int64_t*>malloc(cap * sizeof(int64_t))
        order = <int64_t*>malloc((n_max + 1) * sizeof(int64_t))
        tmp = <int64_t*>malloc((n_max + 1) * sizeof(int64_t))
        pos = <int64_t*>malloc((n_max * R + 1) * sizeof(int64_t))
        sizes = <int64_t*>malloc(R * sizeof(int64_t))
        val = <double*>malloc((n_max * R + 1) * sizeof(double))
        fused = <double*>malloc((n_max + 1) * sizeof(double))
        buf = <double*>malloc(R * sizeof(double))
        ukey = <uint64_t*>malloc((n_max + 1) * sizeof(uint64_t))
        ukey_tmp = <uint64_t*>malloc((n_max + 1) * sizeof(uint64_t))
        if (cand == NULL or rep == NULL or slot_of == NULL or slots == NULL or order == NULL
                or tmp == NULL or pos == NULL or sizes == NULL or val == NULL or fused == NULL
                or buf == NULL or ukey == NULL or ukey_tmp == NULL):
            rc = -1
        else:
            for i in range(cap):
                slots[i] = -1
            c.rep = rep
            c.fused = fused
            c.pos = pos
            for q in range(q0, q1):
                base = seg_off[q * R]
                # 1. candidates, in first-seen order
                m = 0
                for e in range(base, seg_off[(q + 1) * R]):
                    h = hashes[e]
                    slot = <int64_t>((<uint64_t>h * 0x9E3779B97F4A7C15ULL) >> shift)
                    while slots[slot] >= 0 and not _fu_same_doc(&c, &hashes[0], rep[slots[slot]], e):
                        slot = (slot + 1) & mask
                    if slots[slot] < 0:
                        slots[slot] = m
                        slot_of[m] = slot
                        rep[m] = e
                        for r in range(R):
                            pos[m * R + r] = -1
                        m += 1
                    cand[e - base] = slots[slot]
                for i in range(m):
                    slots[slot_of[i]] = -1
                # 2. each run's order, normalised scores and places
                for r in range(R):
                    lo = seg_off[q * R + r]
                    hi = seg_off[q * R + r + 1]
                    n_r = hi - lo
                    sizes[r] = n_r
                    for i in range(n_r):
                        order[i] = lo + i
                        ukey[i] = _sh_ascending_key(scores[lo + i]) ^ flip
                    _fu_sort_keyed(&c, ukey, order, ukey_tmp, tmp, n_r, False)
                    mn = mx = total = mean = std = 0.0
                    if n_r:
                        mn = mx = scores[order[0]]
                        for i in range(n_r):
                            s = scores[order[i]]
                            total += s
                            if s < mn:
                                mn = s
                            if s > mx:
                                mx = s
                        if norm == _FN_ZMUV:
                            mean = total / <double>n_r
                            sq = 0.0
                            for i in range(n_r):
                                s = scores[order[i]]
                                sq += (s - mean) * (s - mean)
                            std = sqrt(sq / <double>n_r)
                    for i in range(n_r):
                        e = order[i]
                        cand_i = cand[e - base]
                        pos[cand_i * R + r] = i
                        val[cand_i * R + r] = _fu_normalize(norm, scores[e], i, n_r, m, mn,
                                                            mx, total, mean, std)
                    if norm == _FN_BORDA and n_r < m:
                        # the run's missed candidates follow its own, by id descending
                        p = 0
                        for i in range(m):
                            if pos[i * R + r] < 0:
                                order[p] = i
                                p += 1
                        _fu_merge_sort(&c, _fu_doc_desc, order, tmp, p, True)
                        missing = 0.5 - ((<double>n_r - 1) / (2 * <double>m))
                        for i in range(p):
                            pos[order[i] * R + r] = n_r + i
                            val[order[i] * R + r] = missing
                # 3. fused scores, and the fused order
                for i in range(m):
                    order[i] = i
                if method == _FU_CONDORCET or method == _FU_WCONDORCET:
                    _fu_merge_sort(&c, _fu_doc_desc, order, tmp, m, True)
                    _fu_merge_sort(&c, _fu_beats, order, tmp, m, False)
                    for i in range(m):
                        fused[order[i]] = <double>(m - i)
                else:
                    for i in range(m):
                        fused[i] = _fu_score(method, val + i * R, pos + i * R, sizes, R, m,
                                             c.weights, k, gamma, phi, sigma, buf)
                        ukey[i] = ~_sh_ascending_key(fused[i])
                    _fu_sort_keyed(&c, ukey, order, ukey_tmp, tmp, m, True)
                for i in range(m):
                    out_entry[base + i] = rep[order[i]]
                    out_score[base + i] = fused[order[i]]
                out_count[q] = m
    free(cand); free(rep); free(slot_of); free(slots); free(order); free(tmp); free(pos)
    free(sizes); free(val); free(fused); free(buf); free(ukey); free(ukey_tmp)
    return rc


def gather_bytes(const int64_t[::1] start, const int64_t[::1] end, const uint8_t[::1] blob,
                 const int64_t[::1] out_off, uint8_t[::1] out_blob):
    """Copy ``blob[start[i]:end[i]]`` to ``out_blob[out_off[i]:out_off[i + 1]]`` for each i
    (``out_off``: the lengths' running sum, from 0)."""
    cdef Py_ssize_t i, n = start.shape[0]
    with nogil:
        for i in range(n):
            if end[i] > start[i]:
                memcpy(&out_blob[out_off[i]], &blob[start[i]], end[i] - start[i])
