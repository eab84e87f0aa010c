# Ranking kernels, included by _kernels.pyx.
#
# Step 1, ``rank_judged``: for each evaluated query, find the retrieved documents that the
# qrels judge and give each its rank under trec_eval's order (score descending, then docno
# descending). Only those documents are written out, as (rank, grade) pairs sorted by rank;
# every other rank holds a document absent from the qrels (NONPOOL). A run written in score
# order, as retrieval systems write them, gives each judged document its position as its
# rank (corrected among equal scores). Otherwise finding a rank costs a count of the
# documents ahead, so a query with few judged documents needs no sort at all; a query with
# many judged documents is sorted.
#
# Step 2, ``ranking_measures``: expand each query's pairs into its ranked grade list (the
# ``results_rel_list`` of trec_eval's form_res_rels.c) and compute every requested measure
# on it, one output column per measure.

from libc.math cimport log, log2, lround, NAN
from libc.stdlib cimport malloc, free, calloc
from libc.string cimport memcmp, memset
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem

cdef extern from "_simd.h" nogil:
    int64_t qafast_last_equal(const int64_t* a, int64_t n, int64_t h)
    int qafast_bytes_cmp(const uint8_t* a, int64_t la, const uint8_t* b, int64_t lb)
    int64_t qafast_tie_key(const uint8_t* p, int64_t n)
    void qafast_prefetch(const void* p)
    int64_t qafast_count_same(const double* s, const int64_t* key, int64_t n, double x,
                              int64_t kx)
    int64_t qafast_count_ahead_int(const double* s, const int64_t* id, int64_t n, double x,
                                   int64_t hx)
    int64_t qafast_count_rises(const double* s, int64_t n)


cdef enum:
    NONPOOL = -1     # retrieved, absent from the query's qrels
    UNJUDGED = -2    # retrieved, in the qrels with a negative grade ("in pool, not judged")

# The measure codes (M_<FAMILY>), NO_CUTOFF, the DCG flags and ERR's grade scale come from the
# measure table (_measures.py): setup.py writes them to _measure_codes.pxi.
include "_measure_codes.pxi"

# trec_eval's INFAP_EPSILON (trec_eval.h)
cdef double INFAP_EPSILON = 0.00001


# ---------------------------------------------------------------------------------------------
# Step 1: rank lookup
#
# Each entry carries a 64-bit document hash: of the id's UTF-8 bytes for string ids, the id
# itself for integer ids. String ids also carry a key into a table of the bytes, to tell
# hash collisions apart and to break score ties in strcmp order. Two entries name the same
# document when their hashes match and (string ids) their bytes match.

cdef struct DocKeys:
    const int64_t* hashes     # per entry
    const int64_t* tiekeys    # per entry (run, string ids): see qafast_tie_key; else hashes
    const int64_t* keys       # per entry; NULL: the entry index is the key
    const int64_t* key_off    # per key + 1, into blob; NULL: no bytes (integer ids)
    const uint8_t* blob


cdef inline int64_t _key(const DocKeys* d, int64_t i) noexcept nogil:
    return d.keys[i] if d.keys != NULL else i


cdef inline int64_t _hash_of(const DocKeys* d, int64_t i) noexcept nogil:
    return d.hashes[i]


cdef inline int _cmp_bytes(const DocKeys* a, int64_t ka, const DocKeys* b, int64_t kb) noexcept nogil:
    """strcmp order of two documents' UTF-8 bytes."""
    return qafast_bytes_cmp(a.blob + a.key_off[ka], a.key_off[ka + 1] - a.key_off[ka],
                            b.blob + b.key_off[kb], b.key_off[kb + 1] - b.key_off[kb])


cdef inline bint _same_doc(const DocKeys* a, int64_t i, const DocKeys* b, int64_t j) noexcept nogil:
    if _hash_of(a, i) != _hash_of(b, j):
        return False
    if a.key_off == NULL:
        return True
    return _cmp_bytes(a, _key(a, i), b, _key(b, j)) == 0


cdef inline bint _ahead(const double* scores, const DocKeys* d, int64_t a, int64_t b) noexcept nogil:
    """True when entry a ranks before entry b: score descending, then docno descending
    (trec_eval's comp_sim_docno)."""
    if scores[a] != scores[b]:
        return scores[a] > scores[b]
    if d.tiekeys[a] != d.tiekeys[b] or d.key_off == NULL:
        return d.tiekeys[a] > d.tiekeys[b]
    return _cmp_bytes(d, _key(d, a), d, _key(d, b)) > 0


cdef bint _ranks_by_position(const double* scores, const DocKeys* d, int64_t r0, int64_t n,
                             const int64_t* judged, int64_t nj, int64_t* jrank) noexcept nogil:
    """The ranks of the judged entries ``judged[:nj]`` among entries r0..r0+n-1 when these
    are in descending score order, as a run file written by rank is: an entry's position,
    corrected within its group of equal scores by the docno order. False (ranks unset)
    when the scores are not in that order, or a judged entry's group of equal scores is
    too large for this to pay."""
    cdef int64_t i, j, pos, a, b, ahead
    cdef double s
    if qafast_count_rises(scores + r0, n):
        return False
    for j in range(nj):
        pos = judged[j]
        s = scores[pos]
        a = pos
        while a > r0 and scores[a - 1] == s:
            a -= 1
        b = pos + 1
        while b < r0 + n and scores[b] == s:
            b += 1
        if b - a > 32:
            return False
        ahead = 0
        for i in range(a, b):
            if i != pos and _ahead(scores, d, i, pos):
                ahead += 1
        jrank[j] = a - r0 + ahead + 1
    return True


cdef inline uint64_t _judged_slot(int64_t h, int shift) noexcept nogil:
    # a document's home slot in a query's table of judged hashes; integer ids are their own
    # "hashes", hence the multiplicative mix
    return (<uint64_t>h * 0x9E3779B97F4A7C15ULL) >> shift


cdef DocKeys _doc_keys(const int64_t[::1] hashes, const int64_t[::1] keys,
                       const int64_t[::1] key_off, const uint8_t[::1] blob):
    cdef DocKeys d
    d.hashes = &hashes[0] if hashes.shape[0] else NULL
    d.tiekeys = d.hashes
    d.keys = &keys[0] if keys.shape[0] else NULL
    d.key_off = &key_off[0] if key_off.shape[0] else NULL
    d.blob = &blob[0] if blob.shape[0] else NULL
    return d


cdef void _merge_sort(const double* scores, const DocKeys* d, int64_t* idx, int64_t* tmp,
                      Py_ssize_t n) noexcept nogil:
    """Sort entry indices into rank order (bottom-up merge sort, O(n log n))."""
    cdef Py_ssize_t width = 1, lo, mid, hi, i, j, k
    cdef int64_t* src = idx
    cdef int64_t* dst = tmp
    cdef int64_t* swap
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width
            if mid > n:
                mid = n
            hi = lo + 2 * width
            if hi > n:
                hi = n
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if _ahead(scores, d, src[j], src[i]):
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
        for i in range(n):
            idx[i] = src[i]


def rank_judged(
    const int64_t[::1] run_offsets,
    const int64_t[::1] run_hashes,
    const int64_t[::1] run_tiekeys,
    const int64_t[::1] run_keys,
    const int64_t[::1] run_key_off,
    const uint8_t[::1] run_blob,
    const double[::1] run_scores,
    const int64_t[::1] qrels_offsets,
    const int64_t[::1] qrels_hashes,
    const int64_t[::1] qrels_keys,
    const int64_t[::1] qrels_key_off,
    const uint8_t[::1] qrels_blob,
    const int32_t[::1] qrels_grades,
    const int64_t[::1] pair_run,
    const int64_t[::1] pair_qrels,
    int64_t max_docs,
    bint judged_only,
    const int64_t[::1] out_offsets,
    int32_t[::1] out_rank,
    int32_t[::1] out_grade,
    int64_t[::1] out_count,
    int64_t[::1] out_num_ret,
):
    """Rank the judged retrieved documents of each (run query, qrels query) pair.

    Run and qrels documents are given as keys with their tables (see ``DocKeys``; an empty
    array stands for NULL). Qrels entries may be in any order within a query.
    ``pair_run[p] < 0`` marks a qrels query missing from the run: trec_eval 10.0 ranks one
    document absent from the qrels for it, so its num_ret is 1 (0 under ``judged_only``).

    Pair p writes ``out_count[p]`` (rank, grade) rows from ``out_offsets[p]`` on, sorted by
    rank; ``out_offsets`` must leave room for min(run docs, qrels docs) rows per pair.
    ``out_num_ret[p]`` is trec_eval's num_ret after ``max_docs`` (<= 0: no limit) and
    ``judged_only``. Grades below 0 come out as UNJUDGED.
    """
    cdef Py_ssize_t n_pairs = pair_run.shape[0], p
    cdef int64_t max_n = 0, max_judged = 0, n
    for p in range(n_pairs):
        if pair_run[p] >= 0:
            n = run_offsets[pair_run[p] + 1] - run_offsets[pair_run[p]]
            if n > max_n:
                max_n = n
            n = qrels_offsets[pair_qrels[p] + 1] - qrels_offsets[pair_qrels[p]]
            if n > max_judged:
                max_judged = n
    # a query with many judgments looks each retrieved document up in a table of its judged
    # hashes, at most a quarter full; a slot belongs to the pair that stamped it, so the
    # table is never cleared
    cdef int shift = 64 - 6
    while (<int64_t>1 << (64 - shift)) < 4 * max_judged:
        shift -= 1
    cdef uint64_t slot, slot_mask = (<uint64_t>1 << (64 - shift)) - 1
    cdef int64_t* slot_entry = NULL
    cdef int64_t* slot_pair = NULL
    if max_judged > 32:
        slot_entry = <int64_t*>malloc((slot_mask + 1) * sizeof(int64_t))
        slot_pair = <int64_t*>malloc((slot_mask + 1) * sizeof(int64_t))
        if slot_entry == NULL or slot_pair == NULL:
            free(slot_entry); free(slot_pair)
            raise MemoryError()
        for slot in range(slot_mask + 1):
            slot_pair[slot] = -1
    cdef DocKeys rk = _doc_keys(run_hashes, run_keys, run_key_off, run_blob)
    if run_tiekeys.shape[0]:
        rk.tiekeys = &run_tiekeys[0]
    cdef DocKeys qk = _doc_keys(qrels_hashes, qrels_keys, qrels_key_off, qrels_blob)
    cdef const double* scores = &run_scores[0] if run_scores.shape[0] else NULL
    cdef int64_t* judged = <int64_t*>malloc((max_n + 1) * sizeof(int64_t))
    cdef int32_t* jgrade = <int32_t*>malloc((max_n + 1) * sizeof(int32_t))
    cdef int64_t* jrank = <int64_t*>malloc((max_n + 1) * sizeof(int64_t))
    cdef int64_t* order = <int64_t*>malloc((max_n + 1) * sizeof(int64_t))
    cdef int64_t* tmp = <int64_t*>malloc((max_n + 1) * sizeof(int64_t))
    cdef int32_t* grade_of = <int32_t*>malloc((max_n + 1) * sizeof(int32_t))
    if not (judged and jgrade and jrank and order and tmp and grade_of):
        free(judged); free(jgrade); free(jrank); free(order); free(tmp); free(grade_of)
        free(slot_entry); free(slot_pair)
        raise MemoryError()
    cdef int64_t r0, q0, q1, i, j, k, c, nj, rank, ahead, base, cnt, num_ret, h, lo, pos, tk
    cdef int64_t tkey
    cdef int32_t tg, g
    cdef double sj
    cdef bint presorted
    try:
        with nogil:
            for p in range(n_pairs):
                base = out_offsets[p]
                if pair_run[p] < 0:
                    out_count[p] = 0
                    out_num_ret[p] = 0 if judged_only else 1
                    continue
                r0 = run_offsets[pair_run[p]]
                n = run_offsets[pair_run[p] + 1] - r0
                q0 = qrels_offsets[pair_qrels[p]]
                q1 = qrels_offsets[pair_qrels[p] + 1]
                # judged retrieved documents of this query
                nj = 0
                if q1 - q0 <= 32:
                    # few judgments: one branch-free scan of the run's hashes per judged
                    # document (vectorised), then, for string ids, the bytes of every match
                    # are compared in a second pass, so their cache misses overlap
                    for j in range(q0, q1):
                        pos = qafast_last_equal(rk.hashes + r0, n, qk.hashes[j])
                        if pos >= 0:
                            judged[nj] = pos + r0
                            tmp[nj] = j
                            nj += 1
                            if rk.key_off != NULL:
                                qafast_prefetch(rk.key_off + _key(&rk, pos + r0))
                                qafast_prefetch(qk.key_off + _key(&qk, j))
                    if rk.key_off != NULL:
                        # the offsets are on their way; ask for the bytes before comparing any
                        for c in range(nj):
                            qafast_prefetch(rk.blob + rk.key_off[_key(&rk, judged[c])])
                            qafast_prefetch(qk.blob + qk.key_off[_key(&qk, tmp[c])])
                        k = 0
                        for c in range(nj):
                            pos = judged[c]
                            j = tmp[c]
                            if _cmp_bytes(&rk, _key(&rk, pos), &qk, _key(&qk, j)) != 0:
                                # a hash collision: look for the document by its bytes
                                pos = -1
                                for i in range(r0, r0 + n):
                                    if rk.hashes[i] == qk.hashes[j] and \
                                            _cmp_bytes(&rk, _key(&rk, i), &qk, _key(&qk, j)) == 0:
                                        pos = i
                                        break
                                if pos < 0:
                                    continue
                            judged[k] = pos
                            tmp[k] = j
                            k += 1
                        nj = k
                    for c in range(nj):
                        g = qrels_grades[tmp[c]]
                        jgrade[c] = g if g >= 0 else UNJUDGED
                else:
                    # many judgments: each retrieved document is one probe of a table of
                    # the judged hashes (a binary search per document mispredicted half of
                    # its branches); judged documents come out in run order
                    for j in range(q0, q1):
                        slot = _judged_slot(qk.hashes[j], shift)
                        while slot_pair[slot] == p:
                            slot = (slot + 1) & slot_mask
                        slot_pair[slot] = p
                        slot_entry[slot] = j
                    for i in range(r0, r0 + n):
                        h = rk.hashes[i]
                        slot = _judged_slot(h, shift)
                        while slot_pair[slot] == p:
                            lo = slot_entry[slot]
                            if qk.hashes[lo] == h and (
                                    rk.key_off == NULL
                                    or _cmp_bytes(&rk, _key(&rk, i), &qk, _key(&qk, lo)) == 0):
                                g = qrels_grades[lo]
                                judged[nj] = i
                                jgrade[nj] = g if g >= 0 else UNJUDGED
                                nj += 1
                                break
                            slot = (slot + 1) & slot_mask
                # a run written in score order (checked in one vector pass, less than one
                # count) gives each rank as a position; otherwise a query with few judged
                # documents counts the documents ahead of each, and one with many is sorted
                presorted = nj > 0 and _ranks_by_position(scores, &rk, r0, n, judged, nj,
                                                          jrank)
                if presorted or nj <= 24:
                    if not presorted:
                        # few judged documents: a rank is 1 + the number of documents ahead
                        for j in range(nj):
                            sj = scores[judged[j]]
                            tk = rk.tiekeys[judged[j]]
                            ahead = qafast_count_ahead_int(scores + r0, rk.tiekeys + r0, n, sj, tk)
                            if rk.key_off != NULL and \
                                    qafast_count_same(scores + r0, rk.tiekeys + r0, n, sj, tk) > 1:
                                # same score and same first 8 bytes: the rest of the bytes decide
                                for i in range(r0, r0 + n):
                                    if (scores[i] == sj and rk.tiekeys[i] == tk
                                            and i != judged[j]
                                            and _cmp_bytes(&rk, _key(&rk, i), &rk,
                                                           _key(&rk, judged[j])) > 0):
                                        ahead += 1
                            jrank[j] = ahead + 1
                    # insertion sort of the judged rows by rank
                    for j in range(1, nj):
                        rank = jrank[j]
                        tkey = judged[j]
                        tg = jgrade[j]
                        k = j - 1
                        while k >= 0 and jrank[k] > rank:
                            jrank[k + 1] = jrank[k]
                            judged[k + 1] = judged[k]
                            jgrade[k + 1] = jgrade[k]
                            k -= 1
                        jrank[k + 1] = rank
                        judged[k + 1] = tkey
                        jgrade[k + 1] = tg
                else:
                    # many judged documents: sort the whole query once
                    for i in range(n):
                        order[i] = r0 + i
                        grade_of[i] = NONPOOL
                    for j in range(nj):
                        grade_of[judged[j] - r0] = jgrade[j]
                    _merge_sort(scores, &rk, order, tmp, n)
                    k = 0
                    for i in range(n):
                        g = grade_of[order[i] - r0]
                        if g != NONPOOL:
                            jrank[k] = i + 1
                            jgrade[k] = g
                            k += 1
                num_ret = n
                if max_docs > 0 and num_ret > max_docs:
                    num_ret = max_docs
                cnt = 0
                if judged_only:
                    for j in range(nj):
                        if jrank[j] > num_ret:
                            break
                        if jgrade[j] >= 0:
                            out_rank[base + cnt] = <int32_t>(cnt + 1)
                            out_grade[base + cnt] = jgrade[j]
                            cnt += 1
                    num_ret = cnt
                else:
                    for j in range(nj):
                        if jrank[j] > num_ret:
                            break
                        out_rank[base + cnt] = <int32_t>jrank[j]
                        out_grade[base + cnt] = jgrade[j]
                        cnt += 1
                out_count[p] = cnt
                out_num_ret[p] = num_ret
    finally:
        free(judged); free(jgrade); free(jrank); free(order); free(tmp); free(grade_of)
        free(slot_entry); free(slot_pair)


cdef void _sort_group(const int64_t* hashes, int64_t* order, int64_t* tmp, int64_t lo,
                      int64_t hi) noexcept nogil:
    # order[lo:hi] = lo..hi-1 sorted by hash, stably
    cdef int64_t i, k, t
    for i in range(lo, hi):
        order[i] = i
    if hi - lo <= 32:
        for i in range(lo + 1, hi):
            t = order[i]
            k = i - 1
            while k >= lo and hashes[order[k]] > hashes[t]:
                order[k + 1] = order[k]
                k -= 1
            order[k + 1] = t
    else:
        _merge_sort_by_hash(hashes, &order[lo], tmp, hi - lo)


def group_offsets(const int32_t[::1] query_index, int64_t[::1] offsets):
    """Fill ``offsets`` (one entry more than there are queries) so that, once the rows are
    grouped by query, query q's rows are offsets[q]:offsets[q + 1]: the counts of each index,
    summed. Returns whether the rows are grouped already (no index below the one before
    it). Reads the reader's int32 column as it is, where ``np.bincount`` made an int64 copy
    of it: 48 MB of fresh memory for 6M qrels lines."""
    cdef Py_ssize_t n = query_index.shape[0], nq = offsets.shape[0] - 1, i, bad = -1
    cdef int32_t q, prev = 0
    cdef bint grouped = True
    if nq < 0:
        raise ValueError("offsets must have at least one entry")
    with nogil:
        for i in range(nq + 1):
            offsets[i] = 0
        for i in range(n):
            q = query_index[i]
            if q < 0 or q >= nq:
                bad = i
                break
            offsets[q + 1] += 1
            if q < prev:
                grouped = False
            prev = q
        if bad < 0:
            for i in range(nq):
                offsets[i + 1] += offsets[i]
    if bad >= 0:
        raise ValueError(f"query index {query_index[bad]} of row {bad} is outside "
                         f"0..{nq - 1}")
    return grouped


def group_order(const int32_t[::1] query_index, const int64_t[::1] offsets,
                int64_t[::1] order):
    """Fill ``order`` with the rows grouped by query, each query's rows in their order: the
    stable sort of ``query_index``, by counting (``offsets`` from :func:`group_offsets`).
    One pass without the GIL, where numpy's stable sort of 20M scattered rows took seconds
    that Ctrl-C could not interrupt. Offsets that do not match the index raise ValueError
    before anything is written past them."""
    cdef Py_ssize_t n = query_index.shape[0], nq = offsets.shape[0] - 1, i, bad = -1
    cdef int32_t q
    cdef int64_t* cursor
    if nq < 0:
        raise ValueError("offsets must have at least one entry")
    if order.shape[0] != n:
        raise ValueError(f"order has {order.shape[0]} entries for {n} rows")
    if offsets[0] != 0 or offsets[nq] != n:
        raise ValueError(f"offsets run from {offsets[0]} to {offsets[nq]}, not 0 to {n}")
    for i in range(nq):
        if offsets[i + 1] < offsets[i]:
            raise ValueError(f"offsets decrease at query {i}")
    cursor = <int64_t*>malloc((nq + 1) * sizeof(int64_t))
    if cursor == NULL:
        raise MemoryError()
    with nogil:
        for i in range(nq):
            cursor[i] = offsets[i]
        for i in range(n):
            q = query_index[i]
            if q < 0 or q >= nq or cursor[q] >= offsets[q + 1]:
                bad = i
                break
            order[cursor[q]] = i
            cursor[q] += 1
    free(cursor)
    if bad >= 0:
        raise ValueError(f"query index {query_index[bad]} of row {bad} does not fit the "
                         f"offsets")


def sort_groups(const int64_t[::1] offsets, const int64_t[::1] hashes, int64_t[::1] order):
    """order[lo:hi] = the indices lo..hi-1 of each group sorted by hash (stable)."""
    cdef Py_ssize_t ng = offsets.shape[0] - 1, g
    cdef int64_t max_n = 0
    if order.shape[0] == 0:
        return
    for g in range(ng):
        if offsets[g + 1] - offsets[g] > max_n:
            max_n = offsets[g + 1] - offsets[g]
    cdef int64_t* tmp = <int64_t*>malloc((max_n + 1) * sizeof(int64_t))
    if tmp == NULL:
        raise MemoryError()
    with nogil:
        for g in range(ng):
            _sort_group(&hashes[0], &order[0], tmp, offsets[g], offsets[g + 1])
    free(tmp)


cdef void _merge_sort_by_hash(const int64_t* hashes, int64_t* idx, int64_t* tmp,
                              Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t width = 1, lo, mid, hi, i, j, k
    cdef int64_t* src = idx
    cdef int64_t* dst = tmp
    cdef int64_t* swap
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if hashes[src[j]] < hashes[src[i]]:
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
        for i in range(n):
            idx[i] = src[i]


def hash_keys(const int64_t[::1] key_off, const uint8_t[::1] blob, int64_t[::1] out,
              int64_t[::1] tiekeys):
    """out[k] = the 64-bit hash of key k's bytes blob[key_off[k]:key_off[k + 1]], and
    tiekeys[k] their tie key (qafast_tie_key). Returns -1, or the first k whose offsets do
    not lie within blob in order, or whose bytes are not UTF-8: the offsets come from Arrow
    buffers, which an IPC stream or a Feather file may carry unchecked, and nothing outside
    blob is read."""
    cdef Py_ssize_t n = out.shape[0], k, bad = -1
    cdef int64_t lo, hi, size = blob.shape[0]
    if key_off.shape[0] != n + 1 or tiekeys.shape[0] != n:
        raise ValueError(f"hash_keys: {key_off.shape[0]} offsets and {tiekeys.shape[0]} tie "
                         f"keys for {n} keys")
    cdef const uint8_t* base = &blob[0] if size else NULL
    with nogil:
        for k in range(n):
            lo = key_off[k]
            hi = key_off[k + 1]
            if lo < 0 or hi < lo or hi > size or (hi > lo and not _trec_utf8_ok(base + lo,
                                                                                hi - lo)):
                bad = k
                break
            out[k] = <int64_t>_trec_hash(base + lo, hi - lo)
            tiekeys[k] = qafast_tie_key(base + lo, hi - lo)
    return bad


# ---------------------------------------------------------------------------------------------
# Step 2: measures over one query's ranked grade list

cdef struct Query:
    const int32_t* g        # grade at each rank, NONPOOL / UNJUDGED codes included
    const int32_t* sr       # the ranks (1-based, increasing) of the judged documents
    const int32_t* sg       # and their grades: what g holds where it is not NONPOOL
    int64_t ns
    int64_t n               # num_ret
    int64_t L               # relevance level
    int64_t num_rel         # R: qrels documents with grade >= L
    int64_t num_rel_ret
    int64_t num_nonrel      # qrels documents with 0 <= grade < L
    const int64_t* levels   # qrels documents at each grade 0..num_levels-1
    int64_t num_levels      # highest grade with a document, plus one (0: none)
    bint v9_rounding        # trec_eval 9.0.8's (long)(p * R + 0.9) recall cut points


cdef struct Gain:
    int64_t level
    double gain
    int64_t count


cdef struct Gains:
    Gain* items
    int64_t n


cdef void _gain_sort(Gain* a, Py_ssize_t n, Gain* tmp) noexcept nogil:
    """glibc qsort's merge sort (left half n // 2, ties keep the left element) with trec_eval's
    comparator (int)(gain1 - gain2): gains less than 1 apart compare equal, so the order
    depends on the algorithm, and this is the one trec_eval runs on Linux."""
    cdef Py_ssize_t h, i, j, k
    if n <= 1:
        return
    h = n // 2
    _gain_sort(a, h, tmp)
    _gain_sort(a + h, n - h, tmp)
    i = 0
    j = h
    k = 0
    while i < h and j < n:
        if <long>(a[i].gain - a[j].gain) <= 0:
            tmp[k] = a[i]
            i += 1
        else:
            tmp[k] = a[j]
            j += 1
        k += 1
    while i < h:
        tmp[k] = a[i]
        i += 1
        k += 1
    while j < n:
        tmp[k] = a[j]
        j += 1
        k += 1
    for i in range(n):
        a[i] = tmp[i]


cdef int64_t _setup_gains(const Query* q, const int64_t* keys, const double* values,
                          int64_t n_pairs, Gain* out, Gain* tmp) noexcept nogil:
    """trec_eval's setup_gains (gain_init.c): user pairs first, then the levels 0..max
    not named, gain = level; sorted by increasing gain."""
    cdef int64_t ng = 0, i, j
    for i in range(n_pairs):
        out[ng].level = keys[i]
        out[ng].gain = values[i]
        out[ng].count = 0
        ng += 1
    for i in range(q.num_levels):
        j = 0
        while j < n_pairs and out[j].level != i:
            j += 1
        if j < n_pairs:
            out[j].count = q.levels[i]
        else:
            out[ng].level = i
            out[ng].gain = <double>i
            out[ng].count = q.levels[i]
            ng += 1
    _gain_sort(out, ng, tmp)
    return ng


cdef inline double _gain_of(const Gain* gains, int64_t ng, int64_t level) noexcept nogil:
    cdef int64_t i
    for i in range(ng):
        if gains[i].level == level:
            return gains[i].gain
    return 0.0


cdef struct IdealWalk:
    # walks the ideal ranking: gains from the highest level down, count documents per level
    const Gain* gains
    int64_t cur
    int64_t at_level
    double gain


cdef inline void _ideal_start(IdealWalk* w, const Gain* gains, int64_t ng) noexcept nogil:
    w.gains = gains
    w.cur = ng - 1
    w.at_level = 0
    w.gain = gains[ng - 1].gain if ng > 0 else 0.0


cdef inline void _ideal_step(IdealWalk* w) noexcept nogil:
    w.at_level += 1
    while w.cur >= 0 and w.at_level > w.gains[w.cur].count:
        w.at_level = 1
        w.cur -= 1
        w.gain = w.gains[w.cur].gain if w.cur >= 0 else 0.0


cdef double _ndcg_family(const Query* q, const Gain* gains, int64_t ng, int code) noexcept nogil:
    """ndcg, dcg, ideal_dcg (m_ndcg.c), ndcg_rel (m_ndcg_rel.c), Rndcg (m_Rndcg.c)."""
    cdef double rdcg = 0.0, idcg = 0.0, rg, sum_ = 0.0, old_gain
    cdef int64_t i = 0, num_rel = 0, num_rel_ret = 0, changes = 0
    cdef IdealWalk w
    if code == M_RNDCG and q.num_rel == 0:
        return 0.0
    _ideal_start(&w, gains, ng)
    old_gain = w.gain
    while i < q.n and w.gain > 0.0:
        rg = _gain_of(gains, ng, q.g[i])
        if code != M_RNDCG and rg != 0:
            rdcg += rg / log2(<double>(i + 2))
        _ideal_step(&w)
        if code == M_RNDCG:
            if old_gain != w.gain:
                if idcg > 0.0:
                    sum_ += rdcg / idcg
                    changes += 1
                old_gain = w.gain
            if rg != 0:
                rdcg += rg / log2(<double>(i + 2))
        if w.gain > 0.0:
            num_rel += 1
            idcg += w.gain / log2(<double>(i + 2))
        if code == M_NDCG_REL and rg > 0:
            sum_ += rdcg / idcg
            num_rel_ret += 1
        i += 1
    if i < q.n:
        while i < q.n:
            rg = _gain_of(gains, ng, q.g[i])
            if rg != 0:
                rdcg += rg / log2(<double>(i + 2))
            if code == M_NDCG_REL and rg > 0:
                sum_ += rdcg / idcg
                num_rel_ret += 1
            i += 1
        if code == M_RNDCG and idcg > 0.0:
            sum_ += rdcg / idcg
            changes += 1
    while w.gain > 0.0:
        _ideal_step(&w)
        if code == M_RNDCG and old_gain != w.gain:
            if idcg > 0.0:
                sum_ += rdcg / idcg
                changes += 1
            old_gain = w.gain
        if w.gain > 0.0:
            num_rel += 1
            idcg += w.gain / log2(<double>(i + 2))
        i += 1
    if code == M_NDCG:
        return rdcg / idcg if idcg > 0.0 else 0.0
    if code == M_DCG:
        return rdcg
    if code == M_IDEAL_DCG:
        return idcg
    if code == M_NDCG_REL:
        sum_ += (<double>(num_rel - num_rel_ret)) * rdcg / idcg
        return sum_ / num_rel if sum_ > 0.0 else 0.0
    # Rndcg
    return sum_ / changes


cdef inline double _log2_x86(double x) noexcept nogil:
    """log2 as trec_eval's glibc (2.29 and later) computes it: below 0, the x86-64 NaN of an
    invalid operation, sign bit set. An extension module not linked with libm can bind the
    older log2 wrapper, whose NaN for x < 0 has the sign bit clear (trec_eval prints "-nan",
    that one would print "nan")."""
    return -NAN if x < 0.0 else log2(x)


cdef double _g_measure(const Query* q, const Gain* gains, int64_t ng) noexcept nogil:
    """G (m_G.c)."""
    cdef double results_g = 0.0, sum_results = 0.0, sum_ideal = 0.0, sum_cost = 0.0
    cdef double min_cost = 1.0, rg
    cdef int64_t i = 0
    cdef IdealWalk w
    _ideal_start(&w, gains, ng)
    while i < q.n and w.gain > 0.0:
        rg = _gain_of(gains, ng, q.g[i])
        sum_results += rg
        _ideal_step(&w)
        if w.gain > 0.0:
            sum_ideal += w.gain
        sum_cost += w.gain if w.gain >= min_cost else min_cost
        if rg != 0:
            results_g += rg / _log2_x86(<double>(2 + sum_cost - sum_results))
        i += 1
    while i < q.n:
        rg = _gain_of(gains, ng, q.g[i])
        sum_results += rg
        sum_cost += min_cost
        if rg != 0:
            results_g += rg / _log2_x86(<double>(2 + sum_cost - sum_results))
        i += 1
    while w.gain > 0.0:
        _ideal_step(&w)
        if w.gain > 0.0:
            sum_ideal += w.gain
        i += 1
    return results_g / sum_ideal if sum_ideal > 0.0 else 0.0


cdef double _rbp(const Query* q, const Gain* gains_in, int64_t ng, double p,
                 Gain* gains) noexcept nogil:
    """rbp (m_rbp.c). Gains outside [0, 1] are rescaled by (g - min) / (max - min); trec_eval
    starts min and max uninitialised, and its golden outputs match min = max = 0 there."""
    cdef double lo = 0.0, hi = 0.0, s = 0.0, cur_p = 1.0, gn
    cdef int64_t i
    for i in range(ng):
        gains[i] = gains_in[i]
        if gains[i].gain < lo:
            lo = gains[i].gain
        if gains[i].gain > hi:
            hi = gains[i].gain
    if lo < 0 or hi > 1:
        for i in range(ng):
            gains[i].gain = (gains[i].gain - lo) / (hi - lo)
    for i in range(q.n):
        gn = _gain_of(gains, ng, q.g[i])
        if gn != 0:
            s += gn * cur_p
        cur_p = cur_p * p
    return (1.0 - p) * s


cdef double _interpolated(const Query* q, const double* points, int64_t n_points,
                          double* out) noexcept nogil:
    """iprec_at_recall (m_iprec_at_recall.c) at each point into out, returning their mean
    (11pt_avg, m_11pt_avg.c)."""
    cdef int64_t i, j, cur, rel_so_far
    cdef double precis, int_precis, total = 0.0
    cdef int64_t* cuts = <int64_t*>malloc((n_points + 1) * sizeof(int64_t))
    for i in range(n_points):
        if q.v9_rounding:
            cuts[i] = <int64_t>(points[i] * q.num_rel + 0.9)
        else:
            cuts[i] = lround(points[i] * q.num_rel)
        out[i] = 0.0
    cur = n_points - 1
    while cur >= 0 and cuts[cur] > q.num_rel_ret:
        cur -= 1
    # an empty ranking gives 0 / 0 here: the NaN x86-64 makes of it, whose sign bit is set
    # (trec_eval prints it "-nan")
    precis = <double>q.num_rel_ret / <double>q.n if q.n > 0 else -NAN
    int_precis = precis
    rel_so_far = q.num_rel_ret
    # trec_eval takes the running maximum of rel_so_far / i at every rank i, from the last
    # up; between two relevant ranks rel_so_far is constant and the quotient largest at the
    # lower one, so the maximum is the same double taken at the relevant ranks alone, which
    # the judged ranks (sr, increasing) give without a walk over every rank
    j = q.ns - 1
    while j >= 0 and rel_so_far > 0:
        if q.sg[j] >= q.L:
            precis = <double>rel_so_far / <double>q.sr[j]
            if int_precis < precis:
                int_precis = precis
            while cur >= 0 and rel_so_far == cuts[cur]:
                out[cur] = int_precis
                cur -= 1
            rel_so_far -= 1
        j -= 1
    while cur >= 0:
        out[cur] = int_precis
        cur -= 1
    # trec_eval sums the points from the last to the first
    for i in range(n_points - 1, -1, -1):
        total += out[i]
    free(cuts)
    return total / <double>n_points


cdef double _rprec_mult(const Query* q, double mult) noexcept nogil:
    """Rprec_mult (m_Rprec_mult.c): precision at rank (long)(mult * R + 0.9)."""
    cdef int64_t cut = <int64_t>(mult * q.num_rel + 0.9)
    cdef int64_t i, rel_so_far
    if cut > q.n:
        return <double>q.num_rel_ret / <double>cut if cut > 0 else 0.0
    rel_so_far = q.num_rel_ret
    i = q.n
    while i > 0 and rel_so_far > 0:
        if i == cut:
            return <double>rel_so_far / <double>i
        if q.g[i - 1] >= q.L:
            rel_so_far -= 1
        i -= 1
    return 0.0


cdef inline int64_t _rel_in_top(const Query* q, int64_t k) noexcept nogil:
    cdef int64_t i, c = 0
    for i in range(q.ns):
        if q.sr[i] > k:
            break
        if q.sg[i] >= q.L:
            c += 1
    return c


cdef double _one_measure(const Query* q, int code, int64_t k, double x,
                         const int64_t* pkeys, const double* pvals, int64_t np_,
                         Gain* gains, Gain* gains2, double* fscratch) noexcept nogil:
    cdef int64_t i, c, ng, lvl, coll
    cdef double s, prec, cur_p
    if code == M_NUM_RET:
        return <double>q.n
    elif code == M_NUM_REL:
        return <double>q.num_rel
    elif code == M_NUM_REL_RET:
        return <double>q.num_rel_ret
    elif code == M_NUM_NONREL_JUDGED_RET:
        c = 0
        for i in range(q.ns):
            if q.sg[i] >= 0 and q.sg[i] < q.L:
                c += 1
        return <double>c
    elif code == M_MAP or code == M_MAP_CUT:
        if code == M_MAP:
            k = q.n
        s = 0.0
        c = 0
        for i in range(q.ns):
            if q.sr[i] > k:
                break
            if q.sg[i] >= q.L:
                c += 1
                s += <double>c / <double>q.sr[i]
        return s / <double>q.num_rel if q.num_rel > 0 else 0.0
    elif code == M_YAAP:
        # AP's sum, not divided by R (m_yaap.c)
        s = 0.0
        c = 0
        for i in range(q.ns):
            if q.sr[i] > q.n:
                break
            if q.sg[i] >= q.L:
                c += 1
                s += <double>c / <double>q.sr[i]
        return log((1.0 + s) / (1.0 + <double>q.num_rel - s))
    elif code == M_RPREC:
        if q.num_rel == 0:
            return 0.0
        return <double>_rel_in_top(q, q.num_rel) / <double>q.num_rel
    elif code == M_BPREF or code == M_INFAP:
        return _bpref_infap(q, code)
    elif code == M_RECIP_RANK or code == M_RECIP_RANK_CUT:
        if code == M_RECIP_RANK:
            k = q.n
        for i in range(q.ns):
            if q.sr[i] > k:
                break
            if q.sg[i] >= q.L:
                return 1.0 / <double>q.sr[i]
        return 0.0
    elif code == M_IPREC_AT_RECALL:
        _interpolated(q, &x, 1, fscratch)
        return fscratch[0]
    elif code == M_11PT_AVG:
        return _interpolated(q, pvals, np_, fscratch)
    elif code == M_P:
        return <double>_rel_in_top(q, k) / <double>k
    elif code == M_RECALL:
        return <double>_rel_in_top(q, k) / <double>q.num_rel if q.num_rel > 0 else 0.0
    elif code == M_RELATIVE_P:
        if q.num_rel == 0:
            return 0.0
        return <double>_rel_in_top(q, k) / <double>(q.num_rel if k > q.num_rel else k)
    elif code == M_SUCCESS:
        return 1.0 if _rel_in_top(q, k) > 0 else 0.0
    elif code == M_FALLOUT:
        c = q.n - q.num_rel_ret  # the non-relevant ranked documents
        if c <= 0:
            return 0.0
        return <double>((k if k < q.n else q.n) - _rel_in_top(q, k)) / <double>c
    elif code == M_AUROC:
        return _auroc(q, k)
    elif code == M_ACCURACY:
        return _accuracy(q, k)
    elif code == M_ADAPTIVE_P:
        c = k if k < q.n else q.n
        return <double>_rel_in_top(q, c) / <double>c if c > 0 else 0.0
    elif code == M_RPREC_MULT:
        return _rprec_mult(q, x)
    elif code == M_UTILITY:
        # a fifth value is the collection size (trec_eval -N, 0 without one), a whole number
        # the Python layer checked to be at most 2**53 in magnitude; the document counts are
        # summed as integers before the product, as m_utility.c sums them as longs
        coll = <int64_t>pvals[4] if np_ > 4 else 0
        return (pvals[0] * q.num_rel_ret + pvals[1] * (q.n - q.num_rel_ret)
                + pvals[2] * (q.num_rel - q.num_rel_ret)
                + pvals[3] * (coll + q.num_rel_ret - q.n - q.num_rel))
    elif code == M_BING:
        s = 0.0
        c = 0
        for i in range(q.ns):
            if q.sg[i] >= q.L:
                c += 1
                s += 1.0 / log2(<double>(3 + (q.sr[i] - 1) - c))
        return s / <double>q.num_rel if c > 0 else 0.0
    elif code == M_G:
        ng = _setup_gains(q, pkeys, pvals, np_, gains, gains2)
        return _g_measure(q, gains, ng)
    elif code == M_DCG or code == M_IDEAL_DCG or code == M_NDCG or code == M_NDCG_REL or code == M_RNDCG:
        ng = _setup_gains(q, pkeys, pvals, np_, gains, gains2)
        return _ndcg_family(q, gains, ng, code)
    elif code == M_NDCG_CUT and np_ > 0:
        ng = _setup_gains(q, pkeys, pvals, np_, gains, gains2)
        return _ndcg_cut_gains(q, k, gains, ng)
    elif code == M_NDCG_CUT or code == M_NDCG_CUT_EXP:
        return _ndcg_cut(q, k, code == M_NDCG_CUT_EXP)
    elif code == M_SET_P:
        return <double>q.num_rel_ret / <double>q.n if q.n > 0 else 0.0
    elif code == M_SET_RELATIVE_P:
        c = q.n if q.n < q.num_rel else q.num_rel
        return <double>q.num_rel_ret / <double>c if c > 0 else 0.0
    elif code == M_SET_RECALL:
        return <double>q.num_rel_ret / <double>q.num_rel if q.num_rel > 0 else 0.0
    elif code == M_SET_MAP:
        if q.n > 0 and q.num_rel > 0:
            return (<double>q.num_rel_ret * <double>q.num_rel_ret) / (<double>q.n * <double>q.num_rel)
        return 0.0
    elif code == M_SET_F:
        if q.num_rel_ret == 0:
            return 0.0
        prec = <double>q.num_rel_ret / <double>q.n
        s = <double>q.num_rel_ret / <double>q.num_rel
        return (x + 1.0) * prec * s / (x * prec + s)
    elif code == M_RBP:
        ng = _setup_gains(q, pkeys, pvals, np_, gains, gains2)
        return _rbp(q, gains, ng, x, gains2)
    elif code == M_RBP_RESID:
        s = 0.0
        cur_p = 1.0
        c = 0
        for i in range(q.n):
            if q.g[i] < 0:
                c += 1
                s += cur_p
            cur_p = cur_p * x
        return cur_p + (1 - x) * s if c > 0 else 0.0
    elif code == M_UNJ:
        # nonpool and unjudged documents in the top k: all ranks there but the judged ones
        c = k if k < q.n else q.n
        for i in range(q.ns):
            if q.sr[i] > k:
                break
            if q.sg[i] >= 0:
                c -= 1
        return <double>c / <double>k
    elif code == M_HITS:
        return <double>_rel_in_top(q, k)
    elif code == M_F1:
        return _f1_at(q, k)
    elif code == M_GRADED_DCG:
        return _graded_dcg(q, k, <int>x)
    elif code == M_RBP_GRADED:
        return _rbp_graded(q, x)
    elif code == M_JUDGED:
        # retrieved documents in the qrels (any grade) among the top k, over min(k, n)
        if k >= NO_CUTOFF or k > q.n:
            k = q.n
        if k == 0:
            return 0.0
        c = 0
        for i in range(q.ns):
            if q.sr[i] > k:
                break
            c += 1
        return <double>c / <double>k
    elif code == M_ERR:
        return _expected_reciprocal_rank(q, k)
    # the C/W/L user models of ir_measures' cwl_eval provider (_cwl_kernels.pxi)
    elif code == M_CWL_RBP:
        return _cwl_expected_utility(q, CWL_RBP, k, x, pkeys, np_)
    elif code == M_CWL_BPM:
        return _cwl_expected_utility(q, CWL_BPM, k, x, pkeys, np_)
    elif code == M_CWL_SDCG:
        return _cwl_expected_utility(q, CWL_NDCG, k, x, pkeys, np_)
    elif code == M_CWL_NERR8:
        return _cwl_expected_utility(q, CWL_NERR8, k, x, pkeys, np_)
    elif code == M_CWL_NERR9:
        return _cwl_expected_utility(q, CWL_NERR9, k, x, pkeys, np_)
    elif code == M_CWL_NERR10:
        return _cwl_expected_utility(q, CWL_NERR10, k, x, pkeys, np_)
    elif code == M_CWL_NERR11:
        return _cwl_expected_utility(q, CWL_NERR11, k, x, pkeys, np_)
    elif code == M_CWL_INST:
        return _cwl_expected_utility(q, CWL_INST, k, x, pkeys, np_)
    elif code == M_CWL_INSQ:
        return _cwl_expected_utility(q, CWL_INSQ, k, x, pkeys, np_)
    elif code == M_QUERY_COUNT:
        return 1.0
    elif code == M_COMPAT or code == M_COMPAT_RAW:
        return _compat(q, x, code == M_COMPAT)
    return 0.0


cdef double _compat(const Query* q, double p, bint normalize) noexcept nogil:
    """ir_measures' Compat: rank-biased overlap of the ranking with the ideal one (documents
    graded above 0 by grade, equal grades in ranking order, unranked ones last) to depth
    max(n, G); normalised by the ideal's overlap with itself. A ranked document graded g at
    rank r is in both top-d lists from d = max(r, its ideal position) on."""
    cdef int64_t n_good = 0, depth, d, i, lvl, above, seen, pos, overlap = 0, t
    cdef double score = 0.0, best = 0.0, total = 0.0, weight = 1.0
    cdef int64_t* starts
    for lvl in range(1, q.num_levels):
        n_good += q.levels[lvl]
    if n_good == 0:
        return 0.0
    depth = q.n if q.n > n_good else n_good
    starts = <int64_t*>calloc(depth + 2, sizeof(int64_t))
    if starts == NULL:
        return NAN
    above = 0  # documents graded above lvl
    lvl = q.num_levels - 1
    while lvl > 0:
        if q.levels[lvl] > 0:
            seen = 0
            for i in range(q.ns):
                if q.sg[i] == lvl:
                    seen += 1
                    pos = above + seen
                    t = q.sr[i] if q.sr[i] > pos else pos
                    starts[t] += 1
            above += q.levels[lvl]
        lvl -= 1
    for d in range(1, depth + 1):
        overlap += starts[d]
        score += weight * <double>overlap / <double>d
        best += weight * <double>(d if d < n_good else n_good) / <double>d
        total += weight
        weight *= p
    free(starts)
    score = score / total
    if normalize:
        best = best / total
        return score / best if best > 0.0 else score
    return score


cdef double _f1_at(const Query* q, int64_t k) noexcept nogil:
    """ranx's f1@k: 2 P R / (P + R) with P = hits@k / k (k = num_ret without a cut-off,
    as ranx's k = 0) and R = hits@k / num_rel; 0 when there is nothing relevant or nothing
    retrieved. Operations in ranx's order."""
    cdef double hits, prec, rec
    if q.num_rel == 0:
        return 0.0
    if k >= NO_CUTOFF:
        k = q.n
    if k == 0:
        return 0.0
    hits = <double>_rel_in_top(q, k)
    prec = hits / <double>k
    rec = hits / <double>q.num_rel
    if prec + rec == 0.0:
        return 0.0
    return 2.0 * ((prec * rec) / (prec + rec))


cdef inline double _graded_gain(int64_t grade, bint exp_gain) noexcept nogil:
    return 2.0 ** <double>grade - 1.0 if exp_gain else <double>grade


cdef double _graded_dcg(const Query* q, int64_t k, int flags) noexcept nogil:
    """ranx's dcg@k / dcg_burges@k (and, normalised, its ndcg@k / ndcg_burges@k): the gain of
    a document is its grade (or 2**grade - 1) when the grade is at least the relevance level
    (and 1), else 0; discount log2(rank + 1) over the top k; the ideal list is the qrels'
    gains, best first, cut at k. Normalised: 0 when the ideal is 0."""
    cdef bint exp_gain = (flags & DCG_EXP) != 0
    cdef int64_t t = q.L if q.L > 1 else 1
    cdef double dcg = 0.0, idcg = 0.0
    cdef int64_t i, lvl, cnt
    for i in range(q.ns):
        if q.sr[i] > k:
            break
        if q.sg[i] >= t:
            dcg += _graded_gain(q.sg[i], exp_gain) / log2(<double>(q.sr[i] + 1))
    if not (flags & DCG_NORMALISED):
        return dcg
    i = 0
    lvl = q.num_levels - 1
    while lvl >= t and i < k:
        cnt = q.levels[lvl]
        while cnt > 0 and i < k:
            idcg += _graded_gain(lvl, exp_gain) / log2(<double>(i + 2))
            i += 1
            cnt -= 1
        lvl -= 1
    return dcg / idcg if idcg > 0.0 else 0.0


cdef double _rbp_graded(const Query* q, double p) noexcept nogil:
    """ranx's rbp.p: (1 - p) * sum of grade * p**(rank - 1) over the ranked documents whose
    grade is at least the relevance level (and 1); raw grades, not rescaled as trec_eval's rbp."""
    cdef int64_t t = q.L if q.L > 1 else 1
    cdef double s = 0.0
    cdef int64_t i
    for i in range(q.ns):
        if q.sg[i] >= t:
            s += <double>q.sg[i] * p ** <double>(q.sr[i] - 1)
    return (1.0 - p) * s


cdef double _expected_reciprocal_rank(const Query* q, int64_t k) noexcept nogil:
    """Expected reciprocal rank at k as gdeval.pl (TREC Web track) computes it: a document of
    grade g > 0 stops the user with probability r = (2**g - 1) / 2**4; ERR sums
    r * (probability of reaching the rank) / rank over the top k."""
    cdef double score = 0.0, decay = 1.0, r
    cdef int64_t i
    for i in range(q.ns):
        if q.sr[i] > k:
            break
        if q.sg[i] > 0:
            r = (2.0 ** <double>q.sg[i] - 1.0) / (2.0 ** ERR_MAX_GRADE)
            score += r * decay / <double>q.sr[i]
            decay *= 1.0 - r
    return score


cdef double _bpref_infap(const Query* q, int code) noexcept nogil:
    """bpref (m_bpref.c) and infAP (m_infap.c)."""
    cdef int64_t i, j, nonrel = 0, rel = 0, unj = 0
    cdef double total = 0.0, fj
    cdef int32_t g
    for i in range(q.ns):
        g = q.sg[i]
        j = q.sr[i] - 1
        if g == UNJUDGED:
            unj += 1
            continue
        if g < q.L:
            nonrel += 1
            continue
        rel += 1
        if code == M_BPREF:
            if nonrel > 0:
                total += 1.0 - (<double>(nonrel if nonrel < q.num_rel else q.num_rel)
                                / <double>(q.num_nonrel if q.num_nonrel < q.num_rel else q.num_rel))
            else:
                total += 1.0
        else:
            if j == 0:
                total += 1.0
            else:
                fj = <double>j
                total += (1.0 / (fj + 1.0)
                          + (fj / (fj + 1.0)) * ((rel - 1 + nonrel + unj) / fj)
                          * ((rel - 1 + INFAP_EPSILON) / (rel - 1 + nonrel + 2 * INFAP_EPSILON)))
    if q.num_rel:
        total /= q.num_rel
    return total


cdef double _auroc(const Query* q, int64_t k) noexcept nogil:
    """torchmetrics' AUROC within the top k on the ranking: each relevant document at rank r
    is above the k' - r documents after it in the top k' = min(k, n), less the relevant ones
    among them (P(P - 1) / 2 pairs in all)."""
    cdef int64_t top = k if k < q.n else q.n
    cdef int64_t pos = 0, above = 0, i
    for i in range(q.ns):
        if q.sr[i] > top:
            break
        if q.sg[i] >= q.L:
            pos += 1
            above += top - q.sr[i]
    above -= pos * (pos - 1) // 2
    if pos == 0 or pos == top:
        return 0.0
    return <double>above / <double>(pos * (top - pos))


cdef double _accuracy(const Query* q, int64_t k) noexcept nogil:
    """ir_measures' Accuracy within the top k' = min(k, n): 1 - (pairs ranked non-relevant
    first) / (pos * neg), written as ir_measures' accuracy provider writes it so that the bits
    agree; 0 without a relevant document (the provider gives no value), 1 without a
    non-relevant one (it divides by zero). A document is relevant when its grade is at least
    L, an unjudged one counting as grade 0: at L <= 0 the non-relevant documents are the
    judged ones below L (negative grades, held as UNJUDGED), every other rank is relevant."""
    cdef int64_t top = k if k < q.n else q.n
    cdef int64_t pos = 0, neg = 0, first = 0, i
    if q.L > 0:
        # the relevant document at rank r has r - 1 documents above it, the relevant ones
        # among them being those already counted
        for i in range(q.ns):
            if q.sr[i] > top:
                break
            if q.sg[i] >= q.L:
                first += (q.sr[i] - 1) - pos
                pos += 1
        neg = top - pos
    else:
        # the non-relevant document at rank r is above the top - r documents after it, less
        # the non-relevant ones among them (neg(neg - 1) / 2 pairs in all)
        for i in range(q.ns):
            if q.sr[i] > top:
                break
            if q.sg[i] < q.L:
                first += top - q.sr[i]
                neg += 1
        first -= neg * (neg - 1) // 2
        pos = top - neg
    if pos == 0:
        return 0.0
    if neg == 0:
        return 1.0
    return 1.0 - <double>first / (<double>neg * <double>pos)


cdef double _ndcg_cut(const Query* q, int64_t k, bint exp_gain) noexcept nogil:
    """ndcg_cut (m_ndcg_cut.c): linear gain = grade, discount log2(rank + 1), both lists cut at
    k; the ideal list comes from the qrels grade counts. exp_gain uses 2**grade - 1 instead."""
    cdef double dcg = 0.0, idcg = 0.0, gain
    cdef int64_t i, lvl, cnt
    for i in range(q.ns):
        if q.sr[i] > k:
            break
        if q.sg[i] > 0:
            gain = <double>q.sg[i]
            if exp_gain:
                gain = 2.0 ** gain - 1.0
            dcg += gain / log2(<double>(q.sr[i] + 1))
    i = 0
    lvl = q.num_levels - 1
    while lvl > 0 and i < k:
        cnt = q.levels[lvl]
        while cnt > 0 and i < k:
            gain = <double>lvl
            if exp_gain:
                gain = 2.0 ** gain - 1.0
            idcg += gain / log2(<double>(i + 2))
            i += 1
            cnt -= 1
        lvl -= 1
    return dcg / idcg if idcg > 0.0 else 0.0


cdef double _ndcg_cut_gains(const Query* q, int64_t k, const Gain* gains, int64_t ng) noexcept nogil:
    """ndcg_cut on qrels whose grades a gain map has replaced (ir_measures' nDCG(gains=...)@k,
    which hands pytrec_eval the mapped qrels): a document's gain is its grade's gain when above
    0; the ideal list takes the mapped grades best first; both lists cut at k."""
    cdef double dcg = 0.0, idcg = 0.0, gain
    cdef int64_t i
    cdef IdealWalk w
    for i in range(q.ns):
        if q.sr[i] > k:
            break
        if q.sg[i] >= 0:
            gain = _gain_of(gains, ng, q.sg[i])
            if gain > 0.0:
                dcg += gain / log2(<double>(q.sr[i] + 1))
    _ideal_start(&w, gains, ng)
    _ideal_step(&w)
    i = 0
    while i < k and w.cur >= 0 and w.gain > 0.0:
        idcg += w.gain / log2(<double>(i + 2))
        i += 1
        _ideal_step(&w)
    return dcg / idcg if idcg > 0.0 else 0.0


cdef void _judged_view(const Query* q, Query* v, int32_t* sr, int32_t* sg, int32_t* row,
                       bint dense) noexcept nogil:
    """``v``: query ``q`` with its unjudged documents (not in the qrels, or graded below 0)
    dropped from the ranking and the others ranked 1, 2, ... in the same order, as
    ``judged_only`` (trec_eval -J) ranks it; ``sr``, ``sg`` (and ``row`` when ``dense``)
    hold q.ns entries."""
    cdef int64_t i, c = 0
    v[0] = q[0]
    for i in range(q.ns):
        if q.sg[i] >= 0:
            sr[c] = <int32_t>(c + 1)
            sg[c] = q.sg[i]
            if dense:
                row[c] = q.sg[i]
            c += 1
    v.sr = sr if c > 0 else NULL
    v.sg = sg if c > 0 else NULL
    v.ns = c
    v.n = c
    v.g = row


def ranking_measures(
    const int64_t[::1] ranked_offsets,
    const int32_t[::1] ranked_rank,
    const int32_t[::1] ranked_grade,
    const int64_t[::1] ranked_count,
    const int64_t[::1] num_ret,
    const int64_t[::1] pair_qrels,
    const int64_t[::1] qrels_offsets,
    const int32_t[::1] qrels_grades,
    int64_t relevance_level,
    int64_t max_grade,
    bint v9_rounding,
    const int32_t[::1] codes,
    const int64_t[::1] int_params,
    const double[::1] float_params,
    const int64_t[::1] list_offsets,
    const int64_t[::1] list_keys,
    const double[::1] list_values,
    bint need_dense,
    double[:, ::1] out,
    Py_ssize_t start=0,
    Py_ssize_t stop=-1,
):
    """Fill ``out[p, m]`` with measure m of pair p for pairs in [start, stop).

    ``codes[m]`` is the measure code with its cutoff ``int_params[m]`` and scalar
    ``float_params[m]``; list parameters (gain maps, recall points, utility coefficients)
    are ``list_keys/list_values[list_offsets[m]:list_offsets[m + 1]]``. ``depth`` bounds how
    ``need_dense`` asks for each query's full ranked grade list; most measures read only
    the judged documents' (rank, grade) rows.
    """
    cdef Py_ssize_t n_pairs = pair_qrels.shape[0], n_meas = codes.shape[0]
    if stop < 0 or stop > n_pairs:
        stop = n_pairs
    cdef int64_t max_ret = 0, max_list = 0, p, m, i, lo, hi, cap, max_cnt = 0
    cdef bint any_judged_only = False
    for p in range(start, stop):
        if num_ret[p] > max_ret:
            max_ret = num_ret[p]
        if ranked_count[p] > max_cnt:
            max_cnt = ranked_count[p]
    for m in range(n_meas):
        if codes[m] & JUDGED_ONLY_FLAG:
            any_judged_only = True
    if not any_judged_only:
        max_cnt = 0
    for m in range(n_meas):
        if list_offsets[m + 1] - list_offsets[m] > max_list:
            max_list = list_offsets[m + 1] - list_offsets[m]
    cap = max_ret if need_dense else 0
    cdef int32_t* row = <int32_t*>malloc((cap + 1) * sizeof(int32_t))
    cdef int64_t* levels = <int64_t*>calloc(max_grade + 2, sizeof(int64_t))
    cdef Gain* gains = <Gain*>malloc((max_grade + 2 + max_list) * sizeof(Gain))
    cdef Gain* gains2 = <Gain*>malloc((max_grade + 2 + max_list) * sizeof(Gain))
    cdef double* fscratch = <double*>malloc((max_list + 2) * sizeof(double))
    # the judged-only view of a query, for the columns that ask for it
    cdef int32_t* jsr = <int32_t*>malloc((max_cnt + 1) * sizeof(int32_t))
    cdef int32_t* jsg = <int32_t*>malloc((max_cnt + 1) * sizeof(int32_t))
    cdef int32_t* jrow = <int32_t*>malloc(((max_cnt if need_dense else 0) + 1) * sizeof(int32_t))
    if not (row and levels and gains and gains2 and fscratch and jsr and jsg and jrow):
        free(row); free(levels); free(gains); free(gains2); free(fscratch)
        free(jsr); free(jsg); free(jrow)
        raise MemoryError()
    cdef Query q, qj
    cdef const Query* qm
    cdef int code
    cdef bint have_view
    cdef int32_t g
    cdef int64_t nrr, base, cnt, n_here, r
    cdef bint stale = False
    q.L = relevance_level
    q.v9_rounding = v9_rounding
    q.levels = levels
    q.g = row
    try:
        with nogil:
            for p in range(start, stop):
                # qrels statistics of the query
                lo = qrels_offsets[pair_qrels[p]]
                hi = qrels_offsets[pair_qrels[p] + 1]
                for i in range(max_grade + 1):
                    levels[i] = 0
                q.num_levels = 0
                for i in range(lo, hi):
                    g = qrels_grades[i]
                    if g >= 0:
                        if g > max_grade:  # the table is sized by max_grade
                            stale = True
                            break
                        levels[g] += 1
                        if g + 1 > q.num_levels:
                            q.num_levels = g + 1
                if stale:
                    break
                q.num_rel = 0
                q.num_nonrel = 0
                for i in range(q.num_levels):
                    if i >= relevance_level:
                        q.num_rel += levels[i]
                    else:
                        q.num_nonrel += levels[i]
                # ranked grade list, read up to `cap`
                q.n = num_ret[p]
                n_here = q.n if q.n < cap else cap
                for i in range(n_here):
                    row[i] = NONPOOL
                base = ranked_offsets[p]
                cnt = ranked_count[p]
                nrr = 0
                for i in range(cnt):
                    g = ranked_grade[base + i]
                    if g >= relevance_level:
                        nrr += 1
                    r = ranked_rank[base + i] - 1
                    if r < n_here:
                        row[r] = g
                q.num_rel_ret = nrr
                q.sr = &ranked_rank[base] if cnt > 0 else NULL
                q.sg = &ranked_grade[base] if cnt > 0 else NULL
                q.ns = cnt
                have_view = False
                for m in range(n_meas):
                    code = codes[m]
                    qm = &q
                    if code & JUDGED_ONLY_FLAG:
                        code = code & ~JUDGED_ONLY_FLAG
                        if not have_view:
                            _judged_view(&q, &qj, jsr, jsg, jrow, need_dense)
                            have_view = True
                        qm = &qj
                    out[p, m] = _one_measure(
                        qm, code, int_params[m], float_params[m],
                        &list_keys[list_offsets[m]] if list_offsets[m + 1] > list_offsets[m] else NULL,
                        &list_values[list_offsets[m]] if list_offsets[m + 1] > list_offsets[m] else NULL,
                        list_offsets[m + 1] - list_offsets[m], gains, gains2, fscratch)
    finally:
        free(row); free(levels); free(gains); free(gains2); free(fscratch)
        free(jsr); free(jsg); free(jrow)
    if stale:
        raise ValueError(f"ranking_measures: a qrels grade above max_grade ({max_grade}): the "
                         "qrels' grades changed after their largest was taken")


def column_sums(const double[:, ::1] values, double[::1] out):
    """out[m] = values[0, m] + values[1, m] + ..., added in row order as trec_eval adds its
    per-query values, so a summary never depends on how the rows were computed."""
    cdef Py_ssize_t n = values.shape[0], m = values.shape[1], i, j
    with nogil:
        for j in range(m):
            out[j] = 0.0
        for i in range(n):
            for j in range(m):
                out[j] += values[i, j]


def grade_summary(const int32_t[::1] grades):
    """(the largest grade, 0 when there is none; how many grades are above 0): what a
    qrels' checks and trec_eval -c's num_rel need, in one pass without numpy."""
    cdef Py_ssize_t n = grades.shape[0], i
    cdef int32_t top = grades[0] if n > 0 else 0
    cdef int64_t positive = 0
    with nogil:
        for i in range(n):
            if grades[i] > top:
                top = grades[i]
            if grades[i] > 0:
                positive += 1
    return top, positive


def first_duplicate_hashed(const int64_t[::1] offsets, const int64_t[::1] hashes,
                           const int64_t[::1] keys, const int64_t[::1] key_off,
                           const uint8_t[::1] blob):
    """Index of the first entry naming the same document as an earlier entry of its group,
    or -1. Entries are in any order: each group fills a small open-addressing table of
    hashes (reused from group to group), and equal hashes are settled by the bytes."""
    cdef DocKeys d = _doc_keys(hashes, keys, key_off, blob)
    cdef Py_ssize_t ng = offsets.shape[0] - 1, g
    cdef int64_t max_n = 0, cap, mask, i, slot, found = -1, lo, hi, other
    cdef uint64_t h
    for g in range(ng):
        if offsets[g + 1] - offsets[g] > max_n:
            max_n = offsets[g + 1] - offsets[g]
    # at most 1/8 full (up to 64k slots), so that a probe rarely meets another entry: the
    # probing loop's exit was a mispredicted branch for a third of the entries
    cap = 16
    while cap < 8 * max_n and cap < 65536 or cap < 2 * max_n:
        cap *= 2
    mask = cap - 1
    cdef int64_t* table = <int64_t*>malloc(cap * sizeof(int64_t))   # entry index per slot
    cdef int64_t* stamp = <int64_t*>malloc(cap * sizeof(int64_t))   # group that filled it
    if table == NULL or stamp == NULL:
        free(table)
        free(stamp)
        raise MemoryError()
    with nogil:
        for i in range(cap):
            stamp[i] = -1
        for g in range(ng):
            lo = offsets[g]
            hi = offsets[g + 1]
            for i in range(lo, hi):
                h = <uint64_t>d.hashes[i]
                slot = <int64_t>((h ^ (h >> 29)) & <uint64_t>mask)
                while stamp[slot] == g:
                    other = table[slot]
                    if d.hashes[other] == d.hashes[i] and (
                            d.key_off == NULL or _cmp_bytes(&d, _key(&d, other), &d, _key(&d, i)) == 0):
                        found = i
                        break
                    slot = (slot + 1) & mask
                if found >= 0:
                    break
                stamp[slot] = g
                table[slot] = i
            if found >= 0:
                break
    free(table)
    free(stamp)
    return found


def nested_dict(object out, list query_ids, const int32_t[::1] query_index, list doc_ids,
                const int32_t[::1] doc_index, const double[::1] scores,
                const int32_t[::1] grades):
    """Add line i of a read TREC file as ``out[query][doc] = value`` for every line, in order:
    the score (a float) when ``scores`` has a value per line, else the grade (an int). The
    ids are the reader's interned ``str``, so equal ids share one object.

    Returns the first line whose document its query already holds (that line's value is
    then in ``out``), or -1.
    """
    cdef Py_ssize_t n = query_index.shape[0], i, size
    cdef int32_t current = -1, qi
    cdef bint is_run = scores.shape[0] == n
    cdef dict inner = None
    cdef object value
    cdef PyObject* found
    if not is_run and grades.shape[0] != n:
        raise InputError("nested_dict: one value per line is needed")
    if not isinstance(out, dict):
        raise InputTypeError("nested_dict: out must be a dict")
    for i in range(n):
        qi = query_index[i]
        if qi != current:
            current = qi
            query = query_ids[qi]
            # the C lookup: a defaultdict's factory must not run here
            found = PyDict_GetItem(out, query)
            if found == NULL:
                inner = {}
                PyDict_SetItem(out, query, inner)
            else:
                inner = <dict>found
        value = scores[i] if is_run else grades[i]
        size = len(inner)
        inner[doc_ids[doc_index[i]]] = value
        if len(inner) == size:
            return i
    return -1


def trec_order(const int64_t[::1] offsets, const double[::1] scores,
               const int64_t[::1] hashes, const int64_t[::1] tiekeys,
               const int64_t[::1] keys, const int64_t[::1] key_off, const uint8_t[::1] blob,
               int64_t[::1] order):
    """``order``: each query's entries in trec_eval's rank order (score descending, then
    document id descending), as entry indices. Returns 0, or -1 when out of memory."""
    cdef Py_ssize_t nq = offsets.shape[0] - 1, q
    cdef int64_t i, n, n_max = 0, lo
    cdef DocKeys d = _doc_keys(hashes, keys, key_off, blob)
    cdef int64_t* tmp
    if tiekeys.shape[0]:
        d.tiekeys = &tiekeys[0]
    for q in range(nq):
        if offsets[q + 1] - offsets[q] > n_max:
            n_max = offsets[q + 1] - offsets[q]
    with nogil:
        tmp = <int64_t*>malloc((n_max + 1) * sizeof(int64_t))
        if tmp != NULL:
            for q in range(nq):
                lo = offsets[q]
                n = offsets[q + 1] - lo
                for i in range(n):
                    order[lo + i] = lo + i
                for i in range(1, n):
                    if _ahead(&scores[0], &d, lo + i, lo + i - 1):
                        _merge_sort(&scores[0], &d, &order[lo], tmp, n)
                        break
    if tmp == NULL:
        return -1
    free(tmp)
    return 0
