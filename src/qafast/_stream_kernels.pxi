# Exact sums and streaming ranking kernels, included by _kernels.pyx after the ranking part,
# whose measure code (``Query``, ``_one_measure``, ``_merge_sort``) they reuse.
#
# Exact sums. A mean is the exactly rounded sum of the per-query values, divided by the
# count, so that any split of the work (batches, workers, ranks, merges in any order) gives
# the bits of one call. The accumulator is a fixed-point integer wide enough for every
# finite double: 68 limbs of 32 bits held in int64, bit 0 worth 2**-1074. Adding a double
# adds its 53-bit significand, shifted, into three limbs; limbs absorb 2**31 such additions
# before their carries must move up, which ``_exact_normalize`` does. Two accumulators merge
# by adding limbs. Python rounds the final integer once (int / int is correctly rounded).
# Infinities and NaNs are summed apart, as floats.
#
# Streaming ranking. ``stream_ranking_dense`` measures a batch of whole queries given as a
# (queries, candidates) score matrix with a grade per candidate; ``stream_ranking_csr`` the
# same for queries given as CSR rows. Every candidate is judged (its grade is its qrels
# entry); ties go to the larger tie key, as trec_eval's go to the larger docno.
#
# torchmetrics 1.9's rule for relevant candidates scored 0 or less (flags 8 and 16, for the
# families the measure table marks): its MAP, MRR and precision count them as not relevant
# (STREAM_NONPOS_NOT_RELEVANT: ranked, and counted in R, as grade 0), its recall as not
# retrieved (STREAM_NONPOS_NOT_RETRIEVED: ranked as grade 0 but still counted in R). Which
# queries are empty is decided on the grades as given.

from libc.math cimport isnan, INFINITY
from libc.string cimport memcpy
from libc.stdint cimport uint64_t

cdef enum:
    EXACT_LIMBS = 68
    EXACT_FLUSH = 1 << 28        # additions between two normalizations (limbs stay < 2**62)
    STREAM_FEW_JUDGED = 24       # up to this many judged documents: ranks by counting
    STREAM_NONPOS_NOT_RELEVANT = 1
    STREAM_NONPOS_NOT_RETRIEVED = 2

# error codes of the streaming kernels, decoded in qafast.stream
cdef enum:
    SE_OK = 0
    SE_NAN = 1
    SE_NEG_GRADE = 2
    SE_BIG_GRADE = 3
    SE_NUM_RELEVANT = 4
    SE_EMPTY = 5


cdef inline void _exact_add(int64_t* acc, double* special, double x) noexcept nogil:
    cdef uint64_t bits, mant, lo, mid, hi
    cdef int64_t e, p, c, s
    memcpy(&bits, &x, 8)
    e = <int64_t>((bits >> 52) & 0x7ff)
    mant = bits & <uint64_t>0xFFFFFFFFFFFFF
    if e == 0x7ff:
        special[0] += x
        return
    if e == 0:
        if mant == 0:
            return
        p = 0
    else:
        mant |= (<uint64_t>1) << 52
        p = e - 1
    c = p >> 5
    s = p & 31
    lo = (mant << s) & <uint64_t>0xFFFFFFFF
    mid = (mant >> (32 - s)) & <uint64_t>0xFFFFFFFF
    hi = (mant >> 32) >> (32 - s)
    if bits >> 63:
        acc[c] -= <int64_t>lo
        acc[c + 1] -= <int64_t>mid
        acc[c + 2] -= <int64_t>hi
    else:
        acc[c] += <int64_t>lo
        acc[c + 1] += <int64_t>mid
        acc[c + 2] += <int64_t>hi


cdef inline void _exact_normalize(int64_t* acc) noexcept nogil:
    """Carry each limb's excess up: limbs 0..66 end in [0, 2**32), the top one signed."""
    cdef Py_ssize_t i
    cdef int64_t carry
    for i in range(EXACT_LIMBS - 1):
        carry = acc[i] >> 32
        acc[i] -= carry * <int64_t>4294967296
        acc[i + 1] += carry


def exact_accumulate(const double[:, ::1] values, int64_t[:, ::1] acc, double[::1] special):
    """Add column j of ``values`` into accumulator row ``acc[j]`` (and its non-finite values
    into ``special[j]``), then normalize the rows."""
    cdef Py_ssize_t n = values.shape[0], m = values.shape[1], i, j
    if acc.shape[0] != m or acc.shape[1] != EXACT_LIMBS or special.shape[0] != m:
        raise InputError("accumulator shape does not match the values")
    with nogil:
        # row by row: the values are read in memory order, the m accumulators stay in cache
        for i in range(n):
            for j in range(m):
                _exact_add(&acc[j, 0], &special[j], values[i, j])
            if (i & (EXACT_FLUSH - 1)) == EXACT_FLUSH - 1:
                for j in range(m):
                    _exact_normalize(&acc[j, 0])
        for j in range(m):
            _exact_normalize(&acc[j, 0])


def exact_normalize(int64_t[:, ::1] acc):
    """Normalize every accumulator row (after rows were added limb by limb)."""
    cdef Py_ssize_t j
    if acc.shape[1] != EXACT_LIMBS:
        raise InputError("accumulator rows must have 68 limbs")
    with nogil:
        for j in range(acc.shape[0]):
            _exact_normalize(&acc[j, 0])


cdef struct _StreamWork:
    # scratch for one query of at most `cap` candidates
    double* cs          # compacted scores
    int64_t* ck         # compacted tie keys
    int32_t* cg         # compacted grades
    int64_t* judged     # indices of the judged candidates
    int64_t* jrank
    int32_t* jgrade
    int64_t* order
    int64_t* tmp
    int32_t* flag       # grade if judged, else NONPOOL (sort path)
    int32_t* sr
    int32_t* sg
    int32_t* row        # dense ranked grades
    int64_t* levels
    Gain* gains
    Gain* gains2
    double* fscratch


cdef struct _StreamSpec:
    int64_t L               # the measures' relevance level
    int64_t extra_grade     # grade of the relevant documents that were not candidates
    bint v9
    int64_t max_docs
    int64_t max_grade
    bint all_judged
    bint need_dense
    int nonpositive         # 0, or torchmetrics' rule: STREAM_NONPOS_*
    const int32_t* codes
    const int64_t* int_params
    const double* float_params
    const int64_t* list_offsets
    const int64_t* list_keys
    const double* list_values
    Py_ssize_t n_meas


cdef int _stream_alloc(_StreamWork* w, int64_t cap, int64_t max_grade, int64_t max_list) noexcept:
    cap += 1
    w.cs = <double*>malloc(cap * sizeof(double))
    w.ck = <int64_t*>malloc(cap * sizeof(int64_t))
    w.cg = <int32_t*>malloc(cap * sizeof(int32_t))
    w.judged = <int64_t*>malloc(cap * sizeof(int64_t))
    w.jrank = <int64_t*>malloc(cap * sizeof(int64_t))
    w.jgrade = <int32_t*>malloc(cap * sizeof(int32_t))
    w.order = <int64_t*>malloc(cap * sizeof(int64_t))
    w.tmp = <int64_t*>malloc(cap * sizeof(int64_t))
    w.flag = <int32_t*>malloc(cap * sizeof(int32_t))
    w.sr = <int32_t*>malloc(cap * sizeof(int32_t))
    w.sg = <int32_t*>malloc(cap * sizeof(int32_t))
    w.row = <int32_t*>malloc(cap * sizeof(int32_t))
    w.levels = <int64_t*>calloc(max_grade + 2, sizeof(int64_t))
    w.gains = <Gain*>malloc((max_grade + 2 + max_list) * sizeof(Gain))
    w.gains2 = <Gain*>malloc((max_grade + 2 + max_list) * sizeof(Gain))
    w.fscratch = <double*>malloc((max_list + 2) * sizeof(double))
    if not (w.cs and w.ck and w.cg and w.judged and w.jrank and w.jgrade and w.order and w.tmp
            and w.flag and w.sr and w.sg and w.row and w.levels and w.gains and w.gains2
            and w.fscratch):
        return -1
    return 0


cdef void _stream_free(_StreamWork* w) noexcept:
    free(w.cs); free(w.ck); free(w.cg); free(w.judged); free(w.jrank); free(w.jgrade)
    free(w.order); free(w.tmp); free(w.flag); free(w.sr); free(w.sg); free(w.row)
    free(w.levels); free(w.gains); free(w.gains2); free(w.fscratch)


cdef void _stream_query(_StreamWork* w, const _StreamSpec* sp, int64_t n, int64_t extras,
                        double* out) noexcept nogil:
    """Measure one query: its n candidates are w.cs/ck/cg; ``extras`` relevant documents
    (grade ``sp.extra_grade``) were not retrieved. Mirrors ranking_measures' per-query
    set-up, with the candidates as the qrels and the run at once."""
    cdef int64_t i, j, k, nj = 0, rank, tkey, num_ret, cnt, nrr, lvl
    cdef int32_t g, tg, rg
    cdef Query q
    cdef DocKeys dk
    for i in range(sp.max_grade + 1):
        w.levels[i] = 0
    q.num_levels = 0
    for i in range(n):
        g = w.cg[i]
        rg = g  # the grade it is ranked with
        if sp.nonpositive and g >= sp.L and not (w.cs[i] > 0):
            rg = 0
            if sp.nonpositive == STREAM_NONPOS_NOT_RELEVANT:
                g = 0
        w.levels[g] += 1
        if g + 1 > q.num_levels:
            q.num_levels = g + 1
        if sp.all_judged or rg > 0:
            w.judged[nj] = i
            w.jgrade[nj] = rg
            nj += 1
    if extras > 0:
        w.levels[sp.extra_grade] += extras
        if sp.extra_grade + 1 > q.num_levels:
            q.num_levels = sp.extra_grade + 1
    q.num_rel = 0
    q.num_nonrel = 0
    for lvl in range(q.num_levels):
        if lvl >= sp.L:
            q.num_rel += w.levels[lvl]
        else:
            q.num_nonrel += w.levels[lvl]
    # ranks of the judged candidates
    if nj <= STREAM_FEW_JUDGED:
        for j in range(nj):
            i = w.judged[j]
            w.jrank[j] = 1 + qafast_count_ahead_int(w.cs, w.ck, n, w.cs[i], w.ck[i])
        for j in range(1, nj):
            rank = w.jrank[j]
            tkey = w.judged[j]
            tg = w.jgrade[j]
            k = j - 1
            while k >= 0 and w.jrank[k] > rank:
                w.jrank[k + 1] = w.jrank[k]
                w.judged[k + 1] = w.judged[k]
                w.jgrade[k + 1] = w.jgrade[k]
                k -= 1
            w.jrank[k + 1] = rank
            w.judged[k + 1] = tkey
            w.jgrade[k + 1] = tg
    else:
        dk.hashes = w.ck
        dk.tiekeys = w.ck
        dk.keys = NULL
        dk.key_off = NULL
        dk.blob = NULL
        for i in range(n):
            w.order[i] = i
            w.flag[i] = NONPOOL
        for j in range(nj):
            w.flag[w.judged[j]] = w.jgrade[j]
        _merge_sort(w.cs, &dk, w.order, w.tmp, n)
        k = 0
        for i in range(n):
            g = w.flag[w.order[i]]
            if g != NONPOOL:
                w.jrank[k] = i + 1
                w.jgrade[k] = g
                k += 1
    num_ret = n
    if sp.max_docs > 0 and num_ret > sp.max_docs:
        num_ret = sp.max_docs
    cnt = 0
    nrr = 0
    for j in range(nj):
        if w.jrank[j] > num_ret:
            break
        w.sr[cnt] = <int32_t>w.jrank[j]
        w.sg[cnt] = w.jgrade[j]
        if w.jgrade[j] >= sp.L:
            nrr += 1
        cnt += 1
    if sp.need_dense:
        for i in range(num_ret):
            w.row[i] = NONPOOL
        for j in range(cnt):
            w.row[w.sr[j] - 1] = w.sg[j]
    q.L = sp.L
    q.v9_rounding = sp.v9
    q.levels = w.levels
    q.g = w.row
    q.n = num_ret
    q.num_rel_ret = nrr
    q.sr = w.sr if cnt > 0 else NULL
    q.sg = w.sg if cnt > 0 else NULL
    q.ns = cnt
    for k in range(sp.n_meas):
        out[k] = _one_measure(
            &q, sp.codes[k], sp.int_params[k], sp.float_params[k],
            &sp.list_keys[sp.list_offsets[k]] if sp.list_offsets[k + 1] > sp.list_offsets[k] else NULL,
            &sp.list_values[sp.list_offsets[k]] if sp.list_offsets[k + 1] > sp.list_offsets[k] else NULL,
            sp.list_offsets[k + 1] - sp.list_offsets[k], w.gains, w.gains2, w.fscratch)


cdef _StreamSpec _stream_spec(int64_t relevance_level, int64_t measure_level,
                              int64_t max_docs, int64_t flags,
                              const int32_t[::1] codes, const int64_t[::1] int_params,
                              const double[::1] float_params, const int64_t[::1] list_offsets,
                              const int64_t[::1] list_keys, const double[::1] list_values):
    cdef _StreamSpec sp
    sp.L = measure_level
    sp.extra_grade = relevance_level
    sp.max_docs = max_docs
    sp.all_judged = (flags & 1) != 0
    sp.need_dense = (flags & 2) != 0
    sp.v9 = (flags & 4) != 0
    sp.nonpositive = (STREAM_NONPOS_NOT_RELEVANT if flags & 8 else
                      STREAM_NONPOS_NOT_RETRIEVED if flags & 16 else 0)
    sp.codes = &codes[0]
    sp.int_params = &int_params[0]
    sp.float_params = &float_params[0]
    sp.list_offsets = &list_offsets[0]
    sp.list_keys = &list_keys[0] if list_keys.shape[0] else NULL
    sp.list_values = &list_values[0] if list_values.shape[0] else NULL
    sp.n_meas = codes.shape[0]
    return sp


cdef int64_t _max_list(const int64_t[::1] list_offsets) noexcept:
    cdef int64_t m, best = 0
    for m in range(list_offsets.shape[0] - 1):
        if list_offsets[m + 1] - list_offsets[m] > best:
            best = list_offsets[m + 1] - list_offsets[m]
    return best


cdef int _stream_grow_grades(_StreamWork* w, _StreamSpec* sp, int64_t max_grade,
                             int64_t max_list) noexcept nogil:
    """Make the per-grade tables hold grades up to ``max_grade``."""
    cdef int64_t* levels
    cdef Gain* gains
    cdef Gain* gains2
    if max_grade <= sp.max_grade:
        return 0
    levels = <int64_t*>calloc(max_grade + 2, sizeof(int64_t))
    gains = <Gain*>malloc((max_grade + 2 + max_list) * sizeof(Gain))
    gains2 = <Gain*>malloc((max_grade + 2 + max_list) * sizeof(Gain))
    if not (levels and gains and gains2):
        free(levels); free(gains); free(gains2)
        return -1
    free(w.levels); free(w.gains); free(w.gains2)
    w.levels = levels
    w.gains = gains
    w.gains2 = gains2
    sp.max_grade = max_grade
    return 0


def stream_ranking_dense(
    const double[:, ::1] scores,
    const float[:, ::1] scores32,
    const int64_t[:, ::1] grades,
    const uint8_t[:, ::1] mask,
    const int64_t[::1] num_relevant,
    int64_t relevance_level,
    int64_t measure_level,
    int64_t max_docs,
    int empty_mode,
    int64_t flags,
    const int32_t[::1] codes,
    const int64_t[::1] int_params,
    const double[::1] float_params,
    const int64_t[::1] list_offsets,
    const int64_t[::1] list_keys,
    const double[::1] list_values,
    double[:, ::1] out,
    int64_t[:, ::1] acc,
    double[::1] special,
    int64_t[::1] info,
):
    """Measure a batch of whole queries: row i of the scores (``scores``, or ``scores32``
    when ``scores`` is empty) and ``grades`` is a query, column j a candidate whose tie key
    is ``C - 1 - j`` (earlier columns win ties). ``mask`` (or, when it is empty, a score of
    -inf) marks padding; a row without candidates is padding. ``num_relevant`` (optional) is
    each query's number of relevant documents, candidates or not; the ones that are not
    candidates count at grade ``relevance_level``. ``empty_mode``: 0 skips a query without a
    document graded ``relevance_level`` or above, 1 measures it, 2 makes it an error. The
    measures see ``measure_level`` as their relevance level (a column may set its own, as
    ranx's ``-lN``), so that every call on the same batch measures the same queries.
    ``flags``: 1 ranks the candidates graded 0 too, 2 the measures need the dense ranking,
    4 trec_eval 9.0.8's recall cut points, 8 and 16 torchmetrics' rule for relevant
    candidates scored 0 or less (8: not relevant, 16: not retrieved; see above).

    On bad input returns an error code, with ``info[1:4]`` = row, column, detail, and
    nothing added to ``acc``. Else writes the measured queries' values to ``out[:info[0]]``,
    adds them into ``acc`` if it has rows, and returns 0.
    """
    cdef bint f32 = scores.shape[0] == 0 and scores.shape[1] == 0
    cdef Py_ssize_t nq = scores32.shape[0] if f32 else scores.shape[0]
    cdef Py_ssize_t nc = scores32.shape[1] if f32 else scores.shape[1]
    cdef Py_ssize_t i, j, m = codes.shape[0]
    cdef bint has_mask = mask.shape[0] > 0, has_nr = num_relevant.shape[0] > 0
    cdef bint accumulate = acc.shape[0] > 0
    cdef int64_t n, rel, done = 0, extras, err = SE_OK, gmax, max_list, g, err_col = -1, detail = 0
    cdef int bad, valid
    cdef double s
    cdef const double* srow = NULL
    cdef const float* frow = NULL
    cdef const int64_t* grow
    cdef const uint8_t* mrow
    if grades.shape[0] != nq or grades.shape[1] != nc:
        raise InputError("grades shape differs from scores shape")
    if has_mask and (mask.shape[0] != nq or mask.shape[1] != nc):
        raise InputError("mask shape differs from scores shape")
    if has_nr and num_relevant.shape[0] != nq:
        raise InputError("num_relevant length differs from the number of queries")
    if out.shape[0] < nq or out.shape[1] != m or info.shape[0] < 4:
        raise InputError("output arrays too small")
    if accumulate and (acc.shape[0] != m or acc.shape[1] != EXACT_LIMBS or special.shape[0] != m):
        raise InputError("accumulator shape does not match the measures")
    cdef _StreamSpec sp = _stream_spec(relevance_level, measure_level, max_docs, flags, codes,
                                       int_params, float_params, list_offsets, list_keys,
                                       list_values)
    max_list = _max_list(list_offsets)
    sp.max_grade = relevance_level if relevance_level > measure_level else measure_level
    cdef _StreamWork w
    if _stream_alloc(&w, nc, sp.max_grade, max_list) != 0:
        _stream_free(&w)
        raise MemoryError()
    try:
        with nogil:
            for i in range(nq):
                # compact the row's candidates, checking them on the way (branch-free)
                n = 0
                rel = 0
                bad = 0
                gmax = 0
                grow = &grades[i, 0] if nc else NULL
                mrow = &mask[i, 0] if has_mask and nc else NULL
                if f32:
                    frow = &scores32[i, 0] if nc else NULL
                else:
                    srow = &scores[i, 0] if nc else NULL
                for j in range(nc):
                    s = <double>frow[j] if f32 else srow[j]
                    g = grow[j]
                    valid = (mrow[j] != 0) if has_mask else (s != -INFINITY)
                    w.cs[n] = s
                    w.ck[n] = nc - 1 - j
                    w.cg[n] = <int32_t>g
                    n += valid
                    bad |= valid & (isnan(s) | (g < 0) | (g > 1000000))
                    rel += valid & (g >= relevance_level)
                    if valid and g > gmax:
                        gmax = g
                if bad:
                    for j in range(nc):
                        s = <double>frow[j] if f32 else srow[j]
                        g = grow[j]
                        if has_mask and not mrow[j] or not has_mask and s == -INFINITY:
                            continue
                        if isnan(s):
                            err = SE_NAN
                        elif g < 0:
                            err = SE_NEG_GRADE
                        elif g > 1000000:
                            err = SE_BIG_GRADE
                        if err != SE_OK:
                            err_col = j
                            detail = g
                            break
                    break
                if n == 0:
                    continue
                extras = 0
                if has_nr:
                    if num_relevant[i] < rel:
                        err = SE_NUM_RELEVANT
                        detail = rel
                        break
                    extras = num_relevant[i] - rel
                if rel + extras == 0:
                    if empty_mode == 0:
                        continue
                    if empty_mode == 2:
                        err = SE_EMPTY
                        break
                if gmax > sp.max_grade and _stream_grow_grades(&w, &sp, gmax, max_list) != 0:
                    err = -1
                    break
                _stream_query(&w, &sp, n, extras, &out[done, 0])
                done += 1
            if err == SE_OK and accumulate:
                for i in range(done):
                    for j in range(m):
                        _exact_add(&acc[j, 0], &special[j], out[i, j])
                    if (i & (EXACT_FLUSH - 1)) == EXACT_FLUSH - 1:
                        for j in range(m):
                            _exact_normalize(&acc[j, 0])
                for j in range(m):
                    _exact_normalize(&acc[j, 0])
    finally:
        _stream_free(&w)
    if err == -1:
        raise MemoryError()
    info[0] = done if err == SE_OK else 0
    info[1] = i if err != SE_OK else -1
    info[2] = err_col
    info[3] = detail
    return err


def stream_ranking_csr(
    const int64_t[::1] offsets,
    const double[::1] scores,
    const int64_t[::1] keys,
    const int32_t[::1] grades,
    int64_t relevance_level,
    int64_t measure_level,
    int64_t max_docs,
    int empty_mode,
    int64_t flags,
    const int32_t[::1] codes,
    const int64_t[::1] int_params,
    const double[::1] float_params,
    const int64_t[::1] list_offsets,
    const int64_t[::1] list_keys,
    const double[::1] list_values,
    double[:, ::1] out,
    int64_t[::1] measured,
):
    """Measure queries given as CSR rows: query p's candidates are entries
    ``offsets[p]:offsets[p + 1]`` with their scores, tie keys (unique within the query;
    larger first on equal scores) and grades, already validated (finite or infinite scores,
    grades in [0, 10**6]). ``empty_mode`` as for ``stream_ranking_dense`` (2 is checked by
    the caller). ``relevance_level`` decides which queries are empty, ``measure_level`` and
    ``flags`` are the measures' (as for ``stream_ranking_dense``). Writes the measured
    queries' values to ``out[:k]`` and their indices to ``measured[:k]``; returns k."""
    cdef Py_ssize_t nq = offsets.shape[0] - 1, p, i, m = codes.shape[0]
    cdef int64_t lo, hi, n, cap = 0, rel, done = 0
    cdef int64_t max_grade = relevance_level if relevance_level > measure_level else measure_level
    if out.shape[0] < nq or out.shape[1] != m or measured.shape[0] < nq:
        raise InputError("output arrays too small")
    for p in range(nq):
        if offsets[p + 1] - offsets[p] > cap:
            cap = offsets[p + 1] - offsets[p]
    for i in range(grades.shape[0]):
        if grades[i] > max_grade:
            max_grade = grades[i]
    cdef _StreamSpec sp = _stream_spec(relevance_level, measure_level, max_docs, flags, codes,
                                       int_params, float_params, list_offsets, list_keys,
                                       list_values)
    sp.max_grade = max_grade
    cdef _StreamWork w
    if _stream_alloc(&w, cap, max_grade, _max_list(list_offsets)) != 0:
        _stream_free(&w)
        raise MemoryError()
    try:
        with nogil:
            for p in range(nq):
                lo = offsets[p]
                hi = offsets[p + 1]
                n = hi - lo
                if n == 0:
                    continue
                rel = 0
                for i in range(n):
                    w.cs[i] = scores[lo + i]
                    w.ck[i] = keys[lo + i]
                    w.cg[i] = grades[lo + i]
                    if w.cg[i] >= relevance_level:
                        rel += 1
                if rel == 0 and empty_mode == 0:
                    continue
                _stream_query(&w, &sp, n, 0, &out[done, 0])
                measured[done] = p
                done += 1
    finally:
        _stream_free(&w)
    return done
