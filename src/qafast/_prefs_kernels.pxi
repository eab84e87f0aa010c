# trec_eval's preference measures (-R prefs, -R qrels_prefs): the prefs_* values of each
# query, over judgments encoded by qafast._trec_prefs and a run encoded as a Run. The
# specification is qafast.reference.prefs; its docstring gives the rules (document numbers,
# judge groups of one sub-group kept as levels, several sub-groups joined into a closed
# preference matrix).

from libc.math cimport NAN, INFINITY
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memset
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

cdef inline int _prefs_run_cmp(const double* scores, const DocKeys* d, int64_t a,
                               int64_t b) noexcept nogil:
    """< 0 when run entry a ranks before b: score descending, then docno ascending in
    strcmp order (form_prefs_counts.c's comp_sim_docno, unlike form_res_rels.c's)."""
    if scores[a] != scores[b]:
        return -1 if scores[a] > scores[b] else 1
    return _cmp_bytes(d, _key(d, a), d, _key(d, b))


cdef void _prefs_sort(const double* scores, const DocKeys* d, int64_t* idx, int64_t* tmp,
                      int64_t n) noexcept nogil:
    """Stable bottom-up merge sort of run entries idx[:n] in _prefs_run_cmp order."""
    cdef int64_t width = 1, lo, mid, hi, i, j, k
    cdef int64_t* src = idx
    cdef int64_t* dst = tmp
    cdef int64_t* swap
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _prefs_run_cmp(scores, d, src[j], src[i]) < 0:
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
            lo += 2 * width
        swap = src
        src = dst
        dst = swap
        width *= 2
    if src != idx:
        for i in range(n):
            idx[i] = src[i]


cdef int _prefs_int_cmp(const void* a, const void* b) noexcept nogil:
    cdef int32_t x = (<const int32_t*>a)[0], y = (<const int32_t*>b)[0]
    return (x > y) - (x < y)


cdef inline double _prefs_ratio(int64_t ful, int64_t poss) noexcept nogil:
    """C's ful / poss in double: 0 / 0 is NaN, x / 0 infinite."""
    if poss == 0:
        return NAN if ful == 0 else INFINITY
    return <double>ful / <double>poss


cdef inline double _prefs_simp(int64_t ful, int64_t poss) noexcept nogil:
    return <double>ful / <double>poss if poss else 0.0


cdef inline double _prefs_avg(double s, int64_t count) noexcept nogil:
    return s / <double>count if s > 0.0 else 0.0


cdef struct PrefsGroup:
    int64_t ful_ret, poss_ret, ful_imp, poss_imp, notoccur
    int64_t num_rel, num_rel_ret, num_nonrel, num_nonrel_ret


def prefs_measures(
    const int64_t[::1] run_offsets,
    const int64_t[::1] run_hashes,
    const int64_t[::1] run_keys,
    const int64_t[::1] run_key_off,
    const uint8_t[::1] run_blob,
    const double[::1] run_scores,
    const int64_t[::1] pair_run,
    const int64_t[::1] pair_judged,
    const int64_t[::1] missing_doc,
    const int64_t[::1] doc_off,
    const int64_t[::1] doc_ids,
    const int64_t[::1] name_off,
    const uint8_t[::1] name_blob,
    const int64_t[::1] line_off,
    const int32_t[::1] line_jg,
    const int32_t[::1] line_jsg,
    const double[::1] line_level,
    const int32_t[::1] line_doc,
    int64_t max_docs,
    double[:, ::1] out,
    int64_t[::1] error,
):
    """The prefs_* values (PREFS_MEASURES order) of each evaluated query p: the run's
    query ``pair_run[p]`` (-1: missing from the run; ``missing_doc[p]`` is then the
    judged document ranked alone, trec_eval -c's placeholder, or -1) against the
    judgments' query ``pair_judged[p]``.

    Judgments: query j's documents are ``doc_ids[doc_off[j]:doc_off[j + 1]]`` (indices of
    names, ``name_blob[name_off[k]:name_off[k + 1]]``, in byte order); its lines
    ``line_off[j]:line_off[j + 1]``, sorted by judge group, sub-group (both numbered in
    byte order), level descending, each naming a document by its position among the
    query's. ``max_docs`` <= 0: no cutoff. Run documents must not repeat within a query.

    Returns -1, or the first query whose judgments trec_eval cannot evaluate, with
    ``error`` = (code, document position in the query or -1, judge group): 1, a document
    with two levels in one sub-group; 2, level 0 and a level above 0 in one group; 3,
    preferences of a group that contradict each other.
    """
    cdef Py_ssize_t n_pairs = pair_run.shape[0], p
    if n_pairs == 0:
        return -1
    cdef int64_t max_n = 1, max_lines = 1, max_run = 1, n, jq, rq
    for p in range(n_pairs):
        jq = pair_judged[p]
        n = doc_off[jq + 1] - doc_off[jq]
        if n > max_n:
            max_n = n
        n = line_off[jq + 1] - line_off[jq]
        if n > max_lines:
            max_lines = n
        rq = pair_run[p]
        if rq >= 0:
            n = run_offsets[rq + 1] - run_offsets[rq]
            if n > max_run:
                max_run = n
    cdef DocKeys rk = _doc_keys(run_hashes, run_keys, run_key_off, run_blob)
    cdef const double* scores = &run_scores[0] if run_scores.shape[0] else NULL
    cdef const int64_t* dids = &doc_ids[0] if doc_ids.shape[0] else NULL
    cdef const uint8_t* nblob = &name_blob[0] if name_blob.shape[0] else NULL
    cdef int32_t* number = <int32_t*>malloc(max_n * sizeof(int32_t))
    cdef int32_t* doc_of = <int32_t*>malloc(max_n * sizeof(int32_t))
    cdef int32_t* num = <int32_t*>malloc(max_lines * sizeof(int32_t))
    cdef int32_t* pool = <int32_t*>malloc(max_lines * sizeof(int32_t))
    cdef int64_t* group_pool = <int64_t*>malloc((max_lines + 1) * sizeof(int64_t))
    cdef int64_t* cstart = <int64_t*>malloc((max_lines + 1) * sizeof(int64_t))
    cdef int64_t* idx = <int64_t*>malloc(max_run * sizeof(int64_t))
    cdef int64_t* tmp = <int64_t*>malloc(max_run * sizeof(int64_t))
    cdef int32_t* ent_doc = <int32_t*>malloc(max_run * sizeof(int32_t))
    cdef int32_t* counts = <int32_t*>malloc(max_n * max_n * sizeof(int32_t))
    cdef uint8_t* pa = <uint8_t*>malloc(max_n * max_n * sizeof(uint8_t))
    cdef double* levels = <double*>malloc(max_n * sizeof(double))
    cdef int64_t slots = 16
    while slots < 2 * max_n:
        slots *= 2
    cdef int32_t* slot_doc = <int32_t*>malloc(slots * sizeof(int32_t))
    cdef int64_t* slot_hash = <int64_t*>malloc(slots * sizeof(int64_t))
    if not (number and doc_of and num and pool and group_pool and cstart and idx and tmp
            and ent_doc and counts and pa and levels and slot_doc and slot_hash):
        free(number); free(doc_of); free(num); free(pool); free(group_pool); free(cstart)
        free(idx); free(tmp); free(ent_doc); free(counts); free(pa); free(levels)
        free(slot_doc); free(slot_hash)
        raise MemoryError()
    cdef int64_t failed = -1
    try:
        with nogil:
            for p in range(n_pairs):
                if _prefs_query(&rk, scores, &run_offsets[0], pair_run[p], missing_doc[p],
                                dids, &name_off[0], nblob, doc_off[pair_judged[p]],
                                doc_off[pair_judged[p] + 1], &line_jg[0], &line_jsg[0],
                                &line_level[0], &line_doc[0], line_off[pair_judged[p]],
                                line_off[pair_judged[p] + 1], max_docs, &out[p, 0],
                                &error[0], number, doc_of, num, pool, group_pool, cstart,
                                idx, tmp, ent_doc, counts, pa, levels, slot_doc,
                                slot_hash) != 0:
                    failed = p
                    break
    finally:
        free(number); free(doc_of); free(num); free(pool); free(group_pool); free(cstart)
        free(idx); free(tmp); free(ent_doc); free(counts); free(pa); free(levels)
        free(slot_doc); free(slot_hash)
    return failed


cdef int _prefs_query(const DocKeys* rk, const double* scores, const int64_t* run_offsets,
                      int64_t rq, int64_t missing, const int64_t* dids,
                      const int64_t* name_off, const uint8_t* nblob, int64_t d0, int64_t d1,
                      const int32_t* ljg, const int32_t* ljsg, const double* llevel,
                      const int32_t* ldoc, int64_t l0, int64_t l1, int64_t max_docs,
                      double* row, int64_t* error, int32_t* number, int32_t* doc_of,
                      int32_t* num, int32_t* pool, int64_t* group_pool, int64_t* cstart,
                      int64_t* idx, int64_t* tmp, int32_t* ent_doc, int32_t* counts,
                      uint8_t* pa, double* levels, int32_t* slot_doc,
                      int64_t* slot_hash) noexcept nogil:
    cdef int64_t n = d1 - d0, nl = l1 - l0, i, j, k, e, r0, nr, m, njr = 0, t, g0, g1
    cdef int64_t key, pool_len = 0, ngr = 0, gi, a, b, x, y, d, last_start
    cdef bint cut, multi
    cdef double lvl
    cdef int64_t h, size = 16, g
    cdef uint64_t slot, mask
    # document numbers: the judged documents the run retrieved, in rank order, then the
    # other judged documents in byte order
    for i in range(n):
        number[i] = -1
    if rq < 0:
        if missing >= 0:
            number[missing] = 0
            njr = 1
    else:
        r0 = run_offsets[rq]
        nr = run_offsets[rq + 1] - r0
        cut = 0 < max_docs < nr
        # the query's judged documents in a table by hash, at most half full
        while size < 2 * n:
            size *= 2
        mask = <uint64_t>(size - 1)
        for i in range(size):
            slot_doc[i] = -1
        for i in range(n):
            g = dids[d0 + i]
            h = <int64_t>_trec_hash(<const unsigned char*>(nblob + name_off[g]),
                                    name_off[g + 1] - name_off[g])
            slot = <uint64_t>h & mask
            while slot_doc[slot] >= 0:
                slot = (slot + 1) & mask
            slot_doc[slot] = <int32_t>i
            slot_hash[slot] = h
        m = 0
        for i in range(nr):
            h = rk.hashes[r0 + i]
            slot = <uint64_t>h & mask
            k = -1
            while slot_doc[slot] >= 0:
                if slot_hash[slot] == h:
                    g = dids[d0 + slot_doc[slot]]
                    key = _key(rk, r0 + i)
                    if qafast_bytes_cmp(nblob + name_off[g], name_off[g + 1] - name_off[g],
                                        rk.blob + rk.key_off[key],
                                        rk.key_off[key + 1] - rk.key_off[key]) == 0:
                        k = slot_doc[slot]
                        break
                slot = (slot + 1) & mask
            ent_doc[i] = <int32_t>k
            if cut or k >= 0:
                idx[m] = r0 + i
                m += 1
        _prefs_sort(scores, rk, idx, tmp, m)
        if cut:
            m = max_docs
        for t in range(m):
            k = ent_doc[idx[t] - r0]
            if k >= 0:
                number[k] = <int32_t>njr
                njr += 1
    t = njr
    for i in range(n):
        if number[i] < 0:
            number[i] = <int32_t>t
            t += 1
        doc_of[number[i]] = <int32_t>i
    # each line's document number, in ascending order within a (group, sub-group, level)
    for i in range(nl):
        num[i] = number[ldoc[l0 + i]]
    i = 0
    while i < nl:
        e = i + 1
        while e < nl and ljg[l0 + e] == ljg[l0 + i] and ljsg[l0 + e] == ljsg[l0 + i] \
                and llevel[l0 + e] == llevel[l0 + i]:
            e += 1
        if e - i > 1:
            qsort(num + i, e - i, sizeof(int32_t), _prefs_int_cmp)
        i = e
    # the pool: the documents of every one-sub-group judge group, in turn
    i = 0
    while i < nl:
        e = i + 1
        multi = False
        while e < nl and ljg[l0 + e] == ljg[l0 + i]:
            if ljsg[l0 + e] != ljsg[l0 + i]:
                multi = True
            e += 1
        group_pool[ngr] = -1 if multi else pool_len
        if not multi:
            for j in range(i, e):
                pool[pool_len] = num[j]
                pool_len += 1
        ngr += 1
        i = e
    memset(counts, 0, n * n * sizeof(int32_t))
    cdef PrefsGroup gr
    cdef PrefsGroup tot
    memset(&tot, 0, sizeof(PrefsGroup))
    cdef double s_avgjg = 0.0, s_ret = 0.0, s_imp = 0.0, s_rn = 0.0, s_rn_ret = 0.0
    cdef int64_t ful, poss, big_r, big_n, ret, fr, pr
    cdef int32_t d1n, d2n
    cdef int ret_only
    g0 = 0
    gi = 0
    while g0 < nl:
        g1 = g0 + 1
        while g1 < nl and ljg[l0 + g1] == ljg[l0 + g0]:
            g1 += 1
        memset(&gr, 0, sizeof(PrefsGroup))
        if group_pool[gi] >= 0:
            # one sub-group: its levels are classes, in descending order
            m = 0
            for i in range(g0, g1):
                if i == g0 or llevel[l0 + i] != llevel[l0 + i - 1]:
                    cstart[m] = i
                    m += 1
            cstart[m] = g1
            for a in range(m):
                ret = 0
                for i in range(cstart[a], cstart[a + 1]):
                    if num[i] < njr:
                        ret += 1
                if llevel[l0 + cstart[a]] > 0.0:
                    gr.num_rel_ret += ret
                    gr.num_rel += cstart[a + 1] - cstart[a]
                else:
                    gr.num_nonrel_ret += ret
                    gr.num_nonrel += cstart[a + 1] - cstart[a]
                for x in range(cstart[a], cstart[a + 1]):
                    d1n = num[x]
                    for y in range(cstart[a + 1], g1):
                        d2n = num[y]
                        if d1n == d2n:
                            error[0] = 1
                            error[1] = doc_of[d1n]
                            error[2] = ljg[l0 + g0]
                            return 1
                        counts[d1n * n + d2n] += 1
                        if d1n < d2n:
                            if d2n < njr:
                                gr.ful_ret += 1
                            elif d1n < njr:
                                gr.ful_imp += 1
                            else:
                                gr.notoccur += 1
                        elif d1n < njr:
                            gr.poss_ret += 1
                        elif d2n < njr:
                            gr.poss_imp += 1
                        else:
                            gr.notoccur += 1
            gr.poss_ret += gr.ful_ret
            gr.poss_imp += gr.ful_imp
            last_start = group_pool[gi] + cstart[m - 1] - g0
        else:
            # several sub-groups: their preferences, closed transitively
            for i in range(n):
                levels[i] = -1.0
            memset(pa, 0, n * n)
            for i in range(g0, g1):
                d = num[i]
                lvl = llevel[l0 + i]
                if (levels[d] > 0.0 and lvl == 0.0) or (levels[d] == 0.0 and lvl > 0.0):
                    error[0] = 2
                    error[1] = doc_of[d]
                    error[2] = ljg[l0 + g0]
                    return 1
                levels[d] = lvl
                j = i + 1
                while j < g1 and ljsg[l0 + j] == ljsg[l0 + i] and llevel[l0 + j] == lvl:
                    j += 1
                while j < g1 and ljsg[l0 + j] == ljsg[l0 + i]:
                    pa[d * n + num[j]] = 1
                    j += 1
            for i in range(n):
                pa[i * n + i] = 1
            for k in range(n):
                for i in range(n):
                    if pa[i * n + k]:
                        for j in range(n):
                            if pa[k * n + j]:
                                pa[i * n + j] = 1
            for i in range(n):
                pa[i * n + i] = 0
            for i in range(n):
                for j in range(i + 1, n):
                    if pa[i * n + j] and pa[j * n + i]:
                        error[0] = 3
                        error[1] = -1
                        error[2] = ljg[l0 + g0]
                        return 1
            for i in range(n):
                if levels[i] > 0.0:
                    gr.num_rel += 1
                    gr.num_rel_ret += i < njr
                elif levels[i] == 0.0:
                    gr.num_nonrel += 1
                    gr.num_nonrel_ret += i < njr
            for i in range(n):
                for j in range(n):
                    if not pa[i * n + j]:
                        continue
                    counts[i * n + j] += 1
                    if i < njr:
                        if j < i:
                            gr.poss_ret += 1
                        elif j < njr:
                            gr.ful_ret += 1
                        else:
                            gr.ful_imp += 1
                    elif j < njr:
                        gr.poss_imp += 1
                    else:
                        gr.notoccur += 1
            gr.poss_ret += gr.ful_ret
            gr.poss_imp += gr.ful_imp
            last_start = 0
        # the averages over judge groups, added in the groups' order
        poss = gr.poss_ret + gr.poss_imp + gr.notoccur
        if poss:
            s_avgjg += <double>(gr.ful_ret + gr.ful_imp) / <double>poss
        if gr.poss_ret:
            s_ret += <double>gr.ful_ret / <double>gr.poss_ret
        if gr.poss_ret + gr.poss_imp:
            s_imp += <double>(gr.ful_ret + gr.ful_imp) / <double>(gr.poss_ret + gr.poss_imp)
        for ret_only in range(2):
            big_r = gr.num_rel_ret if ret_only else gr.num_rel
            big_n = gr.num_nonrel_ret if ret_only else gr.num_nonrel
            if big_r >= big_n:
                if ret_only:
                    ful, poss = gr.ful_ret, gr.poss_ret
                else:
                    ful = gr.ful_ret + gr.ful_imp
                    poss = gr.poss_ret + gr.poss_imp + gr.notoccur
                ful += gr.num_rel_ret * (big_r - big_n)
                poss += gr.num_rel * (big_r - big_n)
            elif group_pool[gi] >= 0:
                _prefs_recalc_classes(num, g0, cstart, m, pool, pool_len, last_start,
                                      gr.num_rel_ret if ret_only else gr.num_rel, njr,
                                      ret_only, &ful, &poss)
            else:
                _prefs_recalc_matrix(pa, levels, n, njr, gr.num_rel, ret_only, &ful, &poss)
            if ret_only:
                s_rn_ret += _prefs_ratio(ful, poss)
            else:
                s_rn += _prefs_ratio(ful, poss)
        tot.ful_ret += gr.ful_ret
        tot.ful_imp += gr.ful_imp
        tot.poss_ret += gr.poss_ret
        tot.poss_imp += gr.poss_imp
        tot.notoccur += gr.notoccur
        g0 = g1
        gi += 1
    # pairs of documents some group has a preference on, and the share of the groups
    # preferring the one ranked first: retrieved pairs, then retrieved and not, then
    # neither (counted, never added)
    cdef double s_pair = 0.0, share_ret, share_imp
    cdef int64_t pairs_ret = 0, pairs_imp = 0, pairs_not = 0
    cdef int32_t ca, cb
    for i in range(njr):
        for j in range(i + 1, njr):
            ca = counts[i * n + j]
            cb = counts[j * n + i]
            if ca or cb:
                pairs_ret += 1
                s_pair += <double>ca / <double>(ca + cb)
    share_ret = s_pair
    for i in range(njr):
        for j in range(njr, n):
            ca = counts[i * n + j]
            cb = counts[j * n + i]
            if ca or cb:
                pairs_imp += 1
                s_pair += <double>ca / <double>(ca + cb)
    share_imp = s_pair
    for i in range(njr, n):
        for j in range(i + 1, n):
            if counts[i * n + j] or counts[j * n + i]:
                pairs_not += 1
    row[0] = <double>(tot.poss_ret + tot.poss_imp + tot.notoccur)
    row[1] = <double>(tot.ful_ret + tot.ful_imp)
    row[2] = <double>tot.ful_ret
    row[3] = _prefs_simp(tot.ful_ret + tot.ful_imp, tot.poss_ret + tot.poss_imp + tot.notoccur)
    pr = pairs_ret + pairs_imp + pairs_not
    row[4] = share_imp / <double>pr if pr else 0.0
    row[5] = _prefs_avg(s_avgjg, ngr)
    row[6] = _prefs_avg(s_rn, ngr)
    row[7] = _prefs_simp(tot.ful_ret, tot.poss_ret)
    row[8] = share_ret / <double>pairs_ret if pairs_ret else 0.0
    row[9] = _prefs_avg(s_ret, ngr)
    row[10] = _prefs_avg(s_rn_ret, ngr)
    row[11] = _prefs_simp(tot.ful_ret + tot.ful_imp, tot.poss_ret + tot.poss_imp)
    pr = pairs_ret + pairs_imp
    row[12] = share_imp / <double>pr if pr else 0.0
    row[13] = _prefs_avg(s_imp, ngr)
    return 0


cdef inline void _prefs_pairs(const int32_t* num, int64_t a0, int64_t a1, const int32_t* other,
                              int64_t b0, int64_t b1, int64_t njr, int ret_only,
                              int64_t* ful, int64_t* poss) noexcept nogil:
    cdef int64_t x, y
    cdef int32_t d1n, d2n
    for x in range(a0, a1):
        d1n = num[x]
        if ret_only and d1n >= njr:
            break
        for y in range(b0, b1):
            d2n = other[y]
            if ret_only and d2n >= njr:
                break
            if d1n < d2n and (ret_only or d1n < njr):
                ful[0] += 1
            else:
                poss[0] += 1


cdef void _prefs_recalc_classes(const int32_t* num, int64_t g0, const int64_t* cstart,
                                int64_t m, const int32_t* pool, int64_t pool_len,
                                int64_t last_start, int64_t keep, int64_t njr, int ret_only,
                                int64_t* ful_out, int64_t* poss_out) noexcept nogil:
    """A one-sub-group judge group's counts with only R non-relevant documents: those
    from the start of its last class on, in the pool (m_prefs_avgjg_Rnonrel(_ret).c);
    past the query's pool, none."""
    cdef int64_t ful = 0, poss = 0, a, b, end
    end = last_start + keep
    if end > pool_len:
        end = pool_len
    for a in range(m):
        for b in range(a + 1, m - 1):
            _prefs_pairs(num, cstart[a], cstart[a + 1], num, cstart[b], cstart[b + 1], njr,
                         ret_only, &ful, &poss)
    for a in range(m):
        _prefs_pairs(num, cstart[a], cstart[a + 1], pool, last_start, end, njr, ret_only,
                     &ful, &poss)
    ful_out[0] = ful
    poss_out[0] = poss + ful


cdef void _prefs_recalc_matrix(const uint8_t* pa, const double* levels, int64_t n,
                               int64_t njr, int64_t num_rel, int ret_only,
                               int64_t* ful_out, int64_t* poss_out) noexcept nogil:
    """A several-sub-group judge group's counts with the non-relevant documents past the
    first R (of those retrieved, with ``ret_only``) left out."""
    cdef int64_t ful = 0, poss = 0, i, j, seen = 0, limit, first, jend
    limit = njr if ret_only else n
    first = limit
    for i in range(limit):
        if levels[i] == 0.0:
            seen += 1
            if seen == num_rel + 1:
                first = i
                break
    jend = njr if ret_only else n
    for i in range(njr):
        if i >= first and levels[i] == 0.0:
            continue
        for j in range(jend):
            if j == i or (j >= first and levels[j] == 0.0) or not pa[i * n + j]:
                continue
            if j < i:
                poss += 1
            else:
                ful += 1
    if not ret_only:
        for i in range(njr, n):
            if i >= first and levels[i] == 0.0:
                continue
            for j in range(n):
                if not (j >= first and levels[j] == 0.0) and pa[i * n + j]:
                    poss += 1
    ful_out[0] = ful
    poss_out[0] = poss + ful
