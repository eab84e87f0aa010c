# ndeval's diversity measures (TREC Web track): ERR-IA, alpha-DCG, NRBP, MAP-IA, P-IA and
# subtopic recall per topic, and its greedy ideal ranking. The rules are the specification's
# (qafast.reference.diversity); ndeval_eval.py is the Python layer.
#
# A judged document is a row of a CSR table: rel_sub[rel_offsets[d]:rel_offsets[d + 1]] are
# the subtopics (ascending) it is relevant to. A ranking is a list of such rows (-1: not
# judged), grouped by topic with offsets; topic_of[t] picks the topic's subtopic count and its
# relevant-judgment counts nrel_sub[nrel_offsets[q]:nrel_offsets[q + 1]].

from libc.math cimport log
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy


cdef inline double _nd_discount(int64_t i) noexcept nogil:
    if i <= 0:
        return 1.0
    return log(2.0) / log(<double>i + 2.0)


cdef inline double _nd_row_score(const int64_t[::1] rel_offsets, const int64_t[::1] rel_sub,
                                 int64_t row, int64_t s, const double* gain) noexcept nogil:
    cdef double score = 0.0
    cdef Py_ssize_t p
    for p in range(rel_offsets[row], rel_offsets[row + 1]):
        if rel_sub[p] < s:
            score += gain[rel_sub[p]]
    return score


cdef inline bint _nd_same_subtopics(const int64_t[::1] rel_offsets,
                                    const int64_t[::1] rel_sub, int64_t a, int64_t b,
                                    int64_t s) noexcept nogil:
    """Whether rows a and b list the same subtopics below s, in the same order."""
    cdef Py_ssize_t p = rel_offsets[a], q = rel_offsets[b]
    cdef Py_ssize_t p_end = rel_offsets[a + 1], q_end = rel_offsets[b + 1]
    while True:
        while p < p_end and rel_sub[p] >= s:
            p += 1
        while q < q_end and rel_sub[q] >= s:
            q += 1
        if p == p_end or q == q_end:
            return p == p_end and q == q_end
        if rel_sub[p] != rel_sub[q]:
            return False
        p += 1
        q += 1


cdef void _nd_ideal_classes(const int64_t[::1] rel_offsets, const int64_t[::1] rel_sub,
                            int64_t s, double alpha, double* gain, const int64_t* rel_rows,
                            Py_ssize_t n_rel, const int64_t* zero_rows, Py_ssize_t n_zero,
                            int64_t* table, uint64_t mask, int64_t* class_top,
                            int64_t* class_slot, int64_t* below, int64_t[::1] order_out,
                            Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """ndeval_ideal's greedy ranking of one topic (ranks lo..hi-1), for an alpha in [0, 1]:
    ``rel_rows[:n_rel]`` (ascending) its rows relevant to a subtopic below ``s``,
    ``zero_rows[:n_zero]`` (ascending) the others, ``gain`` all 1.

    Rows listing the same subtopics always score the same (the same gains summed in the
    same order), so the rows are grouped into such classes and each rank scores one row per
    class: the class of the highest score wins, ties to the class whose greatest unused row
    is greatest, and that row is taken. The full scan takes the greatest row of the highest
    score, the same row. (Documents usually share their few subtopics: the scan was
    quadratic in a topic's relevant documents, this is linear in them times its classes.)
    ``table`` (all 0, ``mask + 1`` slots, more than twice ``n_rel``) finds a row's class
    and is left all 0; ``class_top[c]`` is class c's greatest unused row, and ``below[r]``
    the class's row before row r (-1: none)."""
    cdef Py_ssize_t i, r, p, k, classes = 0, c, best_class
    cdef uint64_t h
    cdef int64_t row, best
    cdef double score, best_score
    for i in range(n_rel):
        row = rel_rows[i]
        h = 1469598103934665603ULL
        for p in range(rel_offsets[row], rel_offsets[row + 1]):
            if rel_sub[p] < s:
                h = (h ^ <uint64_t>rel_sub[p]) * 1099511628211ULL
        h ^= h >> 29
        k = <Py_ssize_t>(h & mask)
        while True:
            if table[k] == 0:
                table[k] = classes + 1
                class_slot[classes] = k
                class_top[classes] = row
                below[row] = -1
                classes += 1
                break
            c = table[k] - 1
            if _nd_same_subtopics(rel_offsets, rel_sub, class_top[c], row, s):
                below[row] = class_top[c]
                class_top[c] = row
                break
            k = (k + 1) & mask
    for c in range(classes):
        table[class_slot[c]] = 0
    for r in range(lo, hi):
        best = -1
        best_class = -1
        best_score = 0.0
        for c in range(classes):
            if class_top[c] < 0:
                continue
            score = _nd_row_score(rel_offsets, rel_sub, class_top[c], s, gain)
            if best == -1 or score > best_score or (score == best_score
                                                    and class_top[c] > best):
                best = class_top[c]
                best_class = c
                best_score = score
        # a row relevant to nothing scores 0: the greatest unused one wins over relevant
        # rows that all score 0 and are smaller, as in the full scan
        if n_zero > 0 and (best == -1 or (best_score <= 0.0
                                          and zero_rows[n_zero - 1] > best)):
            n_zero -= 1
            order_out[r] = zero_rows[n_zero]
            continue
        order_out[r] = best
        class_top[best_class] = below[best]
        for p in range(rel_offsets[best], rel_offsets[best + 1]):
            if rel_sub[p] < s:
                gain[rel_sub[p]] *= 1.0 - alpha


def ndeval_ideal(const int64_t[::1] offsets, const int64_t[::1] rel_offsets,
                 const int64_t[::1] rel_sub, const int64_t[::1] subtopics, double alpha,
                 int64_t[::1] order_out):
    """ndeval's greedy ideal ranking of each topic's judged documents: the rows
    ``offsets[t]:offsets[t + 1]`` (in docno order) rearranged into ``order_out`` so that each
    rank holds the document of highest gain, ties to the later row (the greater docno)."""
    cdef Py_ssize_t t, i, r, p, best, lo, hi, groups = offsets.shape[0] - 1
    cdef Py_ssize_t n_rel, n_zero, c
    cdef int64_t s, most = 0
    cdef double score, best_score
    cdef double* gain
    cdef int64_t* rel_rows
    cdef int64_t* zero_rows
    cdef int64_t* table
    cdef int64_t* class_top
    cdef int64_t* class_slot
    cdef int64_t* below
    cdef uint64_t cap = 1
    cdef Py_ssize_t widest = 0
    # rows grouped by the subtopics they list (_nd_ideal_classes) where every score is a
    # number: with alpha in [0, 1] gains stay in [0, 1] (elsewhere they can overflow to inf
    # and give NaN scores, which the full scan's comparisons treat in their own way)
    cdef bint grouped = 0.0 <= alpha <= 1.0
    if groups < 0 or subtopics.shape[0] < groups or order_out.shape[0] < rel_offsets.shape[0] - 1:
        raise ValueError("ndeval_ideal: arrays too short")
    for t in range(groups):
        if not (0 <= offsets[t] <= offsets[t + 1] <= rel_offsets.shape[0] - 1):
            raise ValueError("ndeval_ideal: offsets out of range")
        if subtopics[t] > most:
            most = subtopics[t]
        if offsets[t + 1] - offsets[t] > widest:
            widest = offsets[t + 1] - offsets[t]
    for i in range(rel_offsets.shape[0] - 1):
        if not (0 <= rel_offsets[i] <= rel_offsets[i + 1] <= rel_sub.shape[0]):
            raise ValueError("ndeval_ideal: rel_offsets out of range")
    for i in range(rel_sub.shape[0]):
        if rel_sub[i] < 0:
            raise ValueError("ndeval_ideal: a negative subtopic")
    gain = <double*>malloc((most + 1) * sizeof(double))
    rel_rows = <int64_t*>malloc((rel_offsets.shape[0] + 1) * sizeof(int64_t))
    zero_rows = <int64_t*>malloc((rel_offsets.shape[0] + 1) * sizeof(int64_t))
    while cap < 2 * <uint64_t>widest + 2:
        cap <<= 1
    table = <int64_t*>calloc(cap, sizeof(int64_t))
    class_top = <int64_t*>malloc((widest + 1) * sizeof(int64_t))
    class_slot = <int64_t*>malloc((widest + 1) * sizeof(int64_t))
    below = <int64_t*>malloc((rel_offsets.shape[0] + 1) * sizeof(int64_t))
    if (gain == NULL or rel_rows == NULL or zero_rows == NULL or table == NULL
            or class_top == NULL or class_slot == NULL or below == NULL):
        free(gain)
        free(rel_rows)
        free(zero_rows)
        free(table)
        free(class_top)
        free(class_slot)
        free(below)
        raise MemoryError()
    try:
        with nogil:
            for t in range(groups):
                lo = offsets[t]
                hi = offsets[t + 1]
                s = subtopics[t]
                for i in range(s):
                    gain[i] = 1.0
                # A document relevant to none of the topic's subtopics scores 0 at every
                # rank, so of those only the greatest unused row can win (at score 0, ties
                # going to the later row); the others need not be scored at each rank.
                n_rel = 0
                n_zero = 0
                for i in range(lo, hi):
                    for p in range(rel_offsets[i], rel_offsets[i + 1]):
                        if rel_sub[p] < s:
                            rel_rows[n_rel] = i
                            n_rel += 1
                            break
                    else:
                        zero_rows[n_zero] = i
                        n_zero += 1
                if grouped:
                    _nd_ideal_classes(rel_offsets, rel_sub, s, alpha, gain, rel_rows, n_rel,
                                      zero_rows, n_zero, table, cap - 1, class_top,
                                      class_slot, below, order_out, lo, hi)
                    continue
                for r in range(lo, hi):
                    # the unused relevant rows in ascending order: the last of the highest
                    # score wins, as when every row is scored
                    best = -1
                    c = -1
                    best_score = 0.0
                    for i in range(n_rel):
                        score = 0.0
                        for p in range(rel_offsets[rel_rows[i]], rel_offsets[rel_rows[i] + 1]):
                            if rel_sub[p] < s:
                                score += gain[rel_sub[p]]
                        if best == -1 or score >= best_score:
                            best = rel_rows[i]
                            c = i
                            best_score = score
                    if n_zero > 0 and (best == -1 or (best_score <= 0.0
                                                      and zero_rows[n_zero - 1] > best)):
                        n_zero -= 1
                        order_out[r] = zero_rows[n_zero]
                        continue
                    # drop the chosen row, keeping the others in ascending order
                    for i in range(c, n_rel - 1):
                        rel_rows[i] = rel_rows[i + 1]
                    n_rel -= 1
                    order_out[r] = best
                    for p in range(rel_offsets[best], rel_offsets[best + 1]):
                        if rel_sub[p] < s:
                            gain[rel_sub[p]] *= 1.0 - alpha
    finally:
        free(gain)
        free(rel_rows)
        free(zero_rows)
        free(table)
        free(class_top)
        free(class_slot)
        free(below)


def ndeval_topics(const int64_t[::1] offsets, const int64_t[::1] ranked,
                  const int64_t[::1] topic_of, const int64_t[::1] rel_offsets,
                  const int64_t[::1] rel_sub, const int64_t[::1] subtopics,
                  const int64_t[::1] nrel_offsets, const int64_t[::1] nrel_sub,
                  double alpha, double beta, double[:, ::1] curves_out,
                  double[:, ::1] scalars_out):
    """ndeval's values of each ranking ``ranked[offsets[t]:offsets[t + 1]]`` before the
    ideal's normalisation: ``curves_out[t]`` holds ERR-IA, alpha-DCG, P-IA and subtopic
    recall at depths 1..k (k = its width / 4), ``scalars_out[t]`` NRBP and MAP-IA. A topic
    with no relevant subtopic scores 0."""
    cdef Py_ssize_t t, i, n, p, q, lo, hi, groups = offsets.shape[0] - 1
    cdef Py_ssize_t k = curves_out.shape[1] // 4
    cdef int64_t s, actual, most = 0, count, pairs, d, j, rows = rel_offsets.shape[0] - 1
    cdef double score, decay, nrbp, ideal_gain, map_ia
    cdef double* gain
    cdef double* ideal
    cdef double* total
    cdef int64_t* seen
    if (groups < 0 or topic_of.shape[0] < groups or curves_out.shape[0] < groups
            or scalars_out.shape[0] < groups or scalars_out.shape[1] < 2 or k < 1
            or curves_out.shape[1] != 4 * k):
        raise ValueError("ndeval_topics: output arrays of the wrong shape")
    for t in range(groups):
        if not (0 <= offsets[t] <= offsets[t + 1] <= ranked.shape[0]):
            raise ValueError("ndeval_topics: offsets out of range")
        q = topic_of[t]
        if not (0 <= q < subtopics.shape[0] and q < nrel_offsets.shape[0] - 1):
            raise ValueError("ndeval_topics: topic_of out of range")
        if not (0 <= nrel_offsets[q] and nrel_offsets[q] + subtopics[q] <= nrel_offsets[q + 1]
                <= nrel_sub.shape[0]):
            raise ValueError("ndeval_topics: nrel_offsets out of range")
        if subtopics[q] > most:
            most = subtopics[q]
    for i in range(ranked.shape[0]):
        if not (-1 <= ranked[i] < rows):
            raise ValueError("ndeval_topics: a ranked row out of range")
    for i in range(rows):
        if not (0 <= rel_offsets[i] <= rel_offsets[i + 1] <= rel_sub.shape[0]):
            raise ValueError("ndeval_topics: rel_offsets out of range")
    for i in range(rel_sub.shape[0]):
        if rel_sub[i] < 0:
            raise ValueError("ndeval_topics: a negative subtopic")
    gain = <double*>malloc((most + 1) * sizeof(double))
    total = <double*>malloc((most + 1) * sizeof(double))
    seen = <int64_t*>malloc((most + 1) * sizeof(int64_t))
    ideal = <double*>malloc(k * sizeof(double))
    if gain == NULL or total == NULL or seen == NULL or ideal == NULL:
        free(gain)
        free(total)
        free(seen)
        free(ideal)
        raise MemoryError()
    try:
        with nogil:
            for t in range(groups):
                lo = offsets[t]
                hi = offsets[t + 1]
                n = hi - lo
                q = topic_of[t]
                s = subtopics[q]
                actual = 0
                for j in range(s):
                    if nrel_sub[nrel_offsets[q] + j] != 0:
                        actual += 1
                for i in range(4 * k):
                    curves_out[t, i] = 0.0
                scalars_out[t, 0] = 0.0
                scalars_out[t, 1] = 0.0
                if actual == 0:
                    continue
                # ERR-IA (block 0) and alpha-DCG (block 1): gains with redundancy decay
                for p in range(2):
                    for j in range(s):
                        gain[j] = 1.0
                    for i in range(min(k, n)):
                        score = 0.0
                        d = ranked[lo + i]
                        if d >= 0:
                            for j in range(rel_offsets[d], rel_offsets[d + 1]):
                                if rel_sub[j] < s:
                                    score += gain[rel_sub[j]]
                                    gain[rel_sub[j]] *= 1.0 - alpha
                        if p == 0:
                            curves_out[t, i] = score / <double>(i + 1)
                        else:
                            curves_out[t, k + i] = score * _nd_discount(i)
                    ideal_gain = <double>actual
                    for i in range(k):
                        if p == 0:
                            ideal[i] = ideal_gain / <double>(i + 1)
                        else:
                            ideal[i] = ideal_gain * _nd_discount(i)
                        ideal_gain *= 1.0 - alpha
                    for i in range(1, k):
                        curves_out[t, p * k + i] += curves_out[t, p * k + i - 1]
                        ideal[i] += ideal[i - 1]
                    for i in range(1, k):
                        curves_out[t, p * k + i] /= ideal[i]
                # NRBP over the whole ranking
                for j in range(s):
                    gain[j] = 1.0
                decay = 1.0
                nrbp = 0.0
                for i in range(n):
                    score = 0.0
                    d = ranked[lo + i]
                    if d >= 0:
                        for j in range(rel_offsets[d], rel_offsets[d + 1]):
                            if rel_sub[j] < s:
                                score += gain[rel_sub[j]]
                                gain[rel_sub[j]] *= 1.0 - alpha
                    nrbp += score * decay
                    decay *= beta
                scalars_out[t, 0] = nrbp * ((1 - (1 - alpha) * beta) / <double>actual)
                # P-IA (block 2) and subtopic recall (block 3)
                for j in range(s):
                    seen[j] = 0
                count = 0
                pairs = 0
                for i in range(k):
                    if i < n:
                        d = ranked[lo + i]
                        if d >= 0:
                            for j in range(rel_offsets[d], rel_offsets[d + 1]):
                                if rel_sub[j] < s:
                                    pairs += 1
                                    if seen[rel_sub[j]] == 0:
                                        seen[rel_sub[j]] = 1
                                        count += 1
                    curves_out[t, 3 * k + i] = <double>count / <double>actual
                    curves_out[t, 2 * k + i] = <double>pairs / <double>((i + 1) * actual)
                # MAP-IA over the whole ranking
                for j in range(s):
                    seen[j] = 0
                    total[j] = 0.0
                for i in range(n):
                    d = ranked[lo + i]
                    if d >= 0:
                        for j in range(rel_offsets[d], rel_offsets[d + 1]):
                            if rel_sub[j] < s:
                                seen[rel_sub[j]] += 1
                                total[rel_sub[j]] += <double>seen[rel_sub[j]] / <double>(i + 1)
                map_ia = 0.0
                for j in range(s):
                    if nrel_sub[nrel_offsets[q] + j] != 0:
                        map_ia += total[j] / <double>nrel_sub[nrel_offsets[q] + j]
                scalars_out[t, 1] = map_ia / <double>actual
    finally:
        free(gain)
        free(total)
        free(seen)
        free(ideal)


def ndeval_judged_rows(const int64_t[::1] offsets, const int64_t[::1] code,
                       const int64_t[::1] topic_of, const int64_t[::1] doc_offsets,
                       const int64_t[::1] doc_code, int64_t ncodes, int64_t[::1] rows_out):
    """The judged row of each ranked document: for each ranking ``t`` (rows
    ``offsets[t]:offsets[t + 1]`` of ``code``, docno codes below ``ncodes``), the topic
    ``topic_of[t]``'s judged documents are rows ``doc_offsets[q]:doc_offsets[q + 1]`` of
    ``doc_code``; ``rows_out[i]`` is the row whose code is ``code[i]``, or -1 (not judged)."""
    cdef Py_ssize_t t, i, groups = offsets.shape[0] - 1, topics = doc_offsets.shape[0] - 1
    cdef int64_t q
    cdef int64_t* row_of
    cdef int64_t* stamp
    if groups < 0 or topics < 0 or topic_of.shape[0] < groups or ncodes < 0:
        raise ValueError("ndeval_judged_rows: arrays too short")
    if offsets[0] != 0 or offsets[groups] > code.shape[0] or rows_out.shape[0] < offsets[groups]:
        raise ValueError("ndeval_judged_rows: offsets out of range")
    for t in range(groups):
        if not offsets[t] <= offsets[t + 1]:
            raise ValueError("ndeval_judged_rows: offsets out of range")
        if not 0 <= topic_of[t] < topics:
            raise ValueError("ndeval_judged_rows: topic_of out of range")
    if doc_offsets[0] != 0 or doc_offsets[topics] > doc_code.shape[0]:
        raise ValueError("ndeval_judged_rows: doc_offsets out of range")
    for t in range(topics):
        if not doc_offsets[t] <= doc_offsets[t + 1]:
            raise ValueError("ndeval_judged_rows: doc_offsets out of range")
    for i in range(offsets[groups]):
        if not 0 <= code[i] < ncodes:
            raise ValueError("ndeval_judged_rows: a docno code out of range")
    for i in range(doc_offsets[topics]):
        if not 0 <= doc_code[i] < ncodes:
            raise ValueError("ndeval_judged_rows: a docno code out of range")
    row_of = <int64_t*>malloc((ncodes + 1) * sizeof(int64_t))
    stamp = <int64_t*>malloc((ncodes + 1) * sizeof(int64_t))
    if row_of == NULL or stamp == NULL:
        free(row_of)
        free(stamp)
        raise MemoryError()
    with nogil:
        # stamp[c] is the ranking (+ 1) whose topic's judgments last set row_of[c]
        for i in range(ncodes):
            stamp[i] = 0
        for t in range(groups):
            q = topic_of[t]
            for i in range(doc_offsets[q], doc_offsets[q + 1]):
                row_of[doc_code[i]] = i
                stamp[doc_code[i]] = t + 1
            for i in range(offsets[t], offsets[t + 1]):
                rows_out[i] = row_of[code[i]] if stamp[code[i]] == t + 1 else -1
    free(row_of)
    free(stamp)


def ndeval_has_duplicate(const int64_t[::1] topic, const int64_t[::1] code,
                         int64_t ncodes) -> bool:
    """Whether a docno code repeats within a run of equal ``topic`` values (the rows grouped
    by topic; codes below ``ncodes``)."""
    cdef Py_ssize_t i, n = topic.shape[0], group = 0
    cdef bint found = False
    cdef int64_t* stamp
    if code.shape[0] < n or ncodes < 0:
        raise ValueError("ndeval_has_duplicate: arrays too short")
    for i in range(n):
        if not 0 <= code[i] < ncodes:
            raise ValueError("ndeval_has_duplicate: a docno code out of range")
    stamp = <int64_t*>malloc((ncodes + 1) * sizeof(int64_t))
    if stamp == NULL:
        raise MemoryError()
    with nogil:
        for i in range(ncodes):
            stamp[i] = 0
        for i in range(n):
            if i == 0 or topic[i] != topic[i - 1]:
                group += 1
            if stamp[code[i]] == group:
                found = True
                break
            stamp[code[i]] = group
    free(stamp)
    return found


def ndeval_place_judged(const int64_t[::1] run_offsets, const double[::1] scores,
                        const int64_t[::1] qpos, const int64_t[::1] found_offsets,
                        const int32_t[::1] found_rank, const int32_t[::1] found_row,
                        const int64_t[::1] found_count, const int64_t[::1] offsets,
                        int64_t[::1] ranked_out) -> bool:
    """Each evaluated query's ranking in pyndeval's order (score descending, then document
    id ascending), cut at ``offsets``' lengths: ``ranked_out[offsets[i]:offsets[i + 1]]`` the
    judged row at each position, -1 where the document is not judged.

    Query i's run entries are ``scores[run_offsets[qpos[i]]:run_offsets[qpos[i] + 1]]``
    (none if ``qpos[i]`` is -1); its judged documents found by ``rank_judged`` are
    ``found_count[i]`` pairs from ``found_offsets[i]``: the 1-based rank in trec_eval's
    order (score descending, document id descending) and the row. Within a run of equal
    scores spanning positions lo..hi-1, trec_eval's rank position g is pyndeval's
    lo + hi - 1 - g. Returns False, writing nothing, unless every query's scores are
    written in descending order (the caller sorts them)."""
    cdef Py_ssize_t i, j, k, n = qpos.shape[0], nq = run_offsets.shape[0] - 1
    cdef Py_ssize_t most = 0, lo, length, g, position
    cdef int64_t start, end
    cdef int64_t* group_lo
    cdef int64_t* group_hi
    if (nq < 0 or found_offsets.shape[0] != n + 1 or found_count.shape[0] != n
            or offsets.shape[0] != n + 1 or found_row.shape[0] != found_rank.shape[0]):
        raise ValueError("ndeval_place_judged: arrays of the wrong size")
    for i in range(nq):
        if not 0 <= run_offsets[i] <= run_offsets[i + 1] <= scores.shape[0]:
            raise ValueError("ndeval_place_judged: run offsets out of range")
    if offsets[0] != 0 or offsets[n] != ranked_out.shape[0]:
        raise ValueError("ndeval_place_judged: offsets out of range")
    for i in range(n):
        if not -1 <= qpos[i] < nq:
            raise ValueError("ndeval_place_judged: a run query out of range")
        length = 0 if qpos[i] < 0 else run_offsets[qpos[i] + 1] - run_offsets[qpos[i]]
        if length > most:
            most = length
        if not 0 <= offsets[i + 1] - offsets[i] <= length:
            raise ValueError("ndeval_place_judged: a ranking longer than its query's run")
        if not (0 <= found_count[i] and 0 <= found_offsets[i]
                and found_offsets[i] + found_count[i] <= found_rank.shape[0]):
            raise ValueError("ndeval_place_judged: found offsets out of range")
        for j in range(found_offsets[i], found_offsets[i] + found_count[i]):
            if not 1 <= found_rank[j] <= length:
                raise ValueError("ndeval_place_judged: a rank out of range")
        if length > 0:
            start = run_offsets[qpos[i]]
            end = run_offsets[qpos[i] + 1]
            for j in range(start + 1, end):
                if not scores[j] <= scores[j - 1]:  # (NaN included)
                    return False
    group_lo = <int64_t*>malloc((most + 1) * sizeof(int64_t))
    group_hi = <int64_t*>malloc((most + 1) * sizeof(int64_t))
    if group_lo == NULL or group_hi == NULL:
        free(group_lo)
        free(group_hi)
        raise MemoryError()
    with nogil:
        for i in range(n):
            for j in range(offsets[i], offsets[i + 1]):
                ranked_out[j] = -1
            if qpos[i] < 0 or found_count[i] == 0:
                continue
            start = run_offsets[qpos[i]]
            length = run_offsets[qpos[i] + 1] - start
            # where each position's group of equal scores starts (lo) and ends (hi, past it)
            lo = 0
            for j in range(length):
                if j > 0 and scores[start + j] != scores[start + j - 1]:
                    lo = j
                group_lo[j] = lo
            k = length
            j = length
            while j > 0:
                j -= 1
                group_hi[j] = k
                if j > 0 and scores[start + j] != scores[start + j - 1]:
                    k = j
            for j in range(found_offsets[i], found_offsets[i] + found_count[i]):
                g = found_rank[j] - 1
                position = group_lo[g] + group_hi[g] - 1 - g
                if position < offsets[i + 1] - offsets[i]:
                    ranked_out[offsets[i] + position] = found_row[j]
    free(group_lo)
    free(group_hi)
    return True


def stable_key_order(const int64_t[::1] key, int64_t[::1] order_out):
    """``order_out`` = ``np.argsort(key, kind="stable")`` for keys that are all >= 0: an LSD
    radix sort on 11-bit digits (those every key shares skipped), O(n) where numpy's stable
    sort of int64 compares."""
    cdef Py_ssize_t i, n = key.shape[0]
    cdef int64_t most = 0, total, c
    cdef int64_t* pos
    cdef int64_t* pos2
    cdef int64_t* tp
    cdef int64_t* hist
    cdef unsigned d, digits = 0, shift, b
    if order_out.shape[0] != n:
        raise ValueError("stable_key_order: order_out must have one entry per key")
    for i in range(n):
        if key[i] < 0:
            raise ValueError("stable_key_order: a negative key")
        if key[i] > most:
            most = key[i]
    while (most >> (11 * digits)) != 0:
        digits += 1
    pos2 = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    hist = <int64_t*>calloc(2048 * (digits + 1), sizeof(int64_t))
    if pos2 == NULL or hist == NULL:
        free(pos2)
        free(hist)
        raise MemoryError()
    pos = &order_out[0] if n else pos2
    with nogil:
        for i in range(n):
            pos[i] = i
            for d in range(digits):
                hist[d * 2048 + ((key[i] >> (11 * d)) & 2047)] += 1
        for d in range(digits):
            shift = 11 * d
            if hist[d * 2048 + ((key[0] >> shift) & 2047)] == n:
                continue  # every key has this digit
            total = 0
            for b in range(2048):
                c = hist[d * 2048 + b]
                hist[d * 2048 + b] = total
                total += c
            for i in range(n):
                b = (key[pos[i]] >> shift) & 2047
                c = hist[d * 2048 + b]
                hist[d * 2048 + b] = c + 1
                pos2[c] = pos[i]
            tp = pos
            pos = pos2
            pos2 = tp
        if n and pos != &order_out[0]:
            memcpy(&order_out[0], pos, n * sizeof(int64_t))
    if n and pos == &order_out[0]:
        free(pos2)
    else:
        free(pos)
    free(hist)



def diversity_relevant(const int64_t[::1] grade, const int64_t[::1] local,
                       const int64_t[::1] doc_row, const int64_t[::1] topic,
                       const int64_t[::1] nrel_offsets, int64_t level,
                       int64_t[::1] rel_offsets_out, int64_t[::1] rel_sub_out,
                       int64_t[::1] nrel_sub_out) -> int:
    """The judgments of at least ``level`` as ndeval's kernels read them, in one pass where
    numpy took a mask, two gathers and two bincounts: ``rel_sub_out[:m]`` = ``local[grade >=
    level]`` (m returned), ``rel_offsets_out`` = 0 then the running count of those judgments
    per row (``doc_row``, below ``len(rel_offsets_out) - 1``), and ``nrel_sub_out`` the count
    per (topic, subtopic) slot ``nrel_offsets[topic] + local``."""
    cdef Py_ssize_t i, n = grade.shape[0], rows = rel_offsets_out.shape[0] - 1
    cdef Py_ssize_t topics = nrel_offsets.shape[0], slots = nrel_sub_out.shape[0]
    cdef int64_t m = 0, slot, r
    cdef bint bad = False
    if (rows < 0 or local.shape[0] < n or doc_row.shape[0] < n or topic.shape[0] < n
            or rel_sub_out.shape[0] < n):
        raise ValueError("diversity_relevant: arrays too short")
    with nogil:
        for i in range(n):
            if grade[i] >= level:
                if not (0 <= doc_row[i] < rows and 0 <= topic[i] < topics):
                    bad = True
                    break
                slot = nrel_offsets[topic[i]] + local[i]
                if not 0 <= slot < slots:
                    bad = True
                    break
    if bad:
        raise ValueError("diversity_relevant: a row, topic or subtopic out of range")
    with nogil:
        for i in range(rows + 1):
            rel_offsets_out[i] = 0
        for i in range(slots):
            nrel_sub_out[i] = 0
        for i in range(n):
            if grade[i] >= level:
                rel_sub_out[m] = local[i]
                m += 1
                rel_offsets_out[doc_row[i] + 1] += 1
                nrel_sub_out[nrel_offsets[topic[i]] + local[i]] += 1
        for r in range(rows):
            rel_offsets_out[r + 1] += rel_offsets_out[r]
    return m


def diversity_relevant_rows(const int64_t[::1] doc_offsets, const int64_t[::1] rel_offsets,
                            int64_t[::1] doc_offsets_out, int64_t[::1] rel_offsets_out) -> int:
    """The rows (CSR ``rel_offsets``) with at least one relevant subtopic, the others
    dropped: ``rel_offsets_out[:k + 1]`` their offsets from 0 (k returned) and ``doc_offsets_out``
    each ``doc_offsets`` entry (a row number, at most the row count) as the number of kept
    rows before it."""
    cdef Py_ssize_t i, rows = rel_offsets.shape[0] - 1, topics = doc_offsets.shape[0]
    cdef int64_t k = 0
    cdef int64_t* before
    cdef bint bad = False
    if rows < 0 or doc_offsets_out.shape[0] < topics or rel_offsets_out.shape[0] < rows + 1:
        raise ValueError("diversity_relevant_rows: arrays too short")
    for i in range(topics):
        if not 0 <= doc_offsets[i] <= rows:
            raise ValueError("diversity_relevant_rows: doc_offsets out of range")
    before = <int64_t*>malloc((rows + 1) * sizeof(int64_t))
    if before == NULL:
        raise MemoryError()
    with nogil:
        rel_offsets_out[0] = 0
        for i in range(rows):
            before[i] = k
            if rel_offsets[i + 1] > rel_offsets[i]:
                rel_offsets_out[k + 1] = rel_offsets_out[k] + (rel_offsets[i + 1] - rel_offsets[i])
                k += 1
        before[rows] = k
        for i in range(topics):
            doc_offsets_out[i] = before[doc_offsets[i]]
    free(before)
    return k


# ---------------------------------------------------------------------------------------
# Diversity qrels given as a dict {query: {subtopic: {doc: grade}}}, read in one walk of the
# dicts: per judgment the codes of its query, subtopic and document (each numbered in order of
# first appearance) and its grade. These loops read Python objects, so they hold the GIL.

cdef extern from "Python.h":
    PyObject *_div_dict_get "PyDict_GetItemWithError" (object d, PyObject *key) except? NULL
    bint _div_is_int "PyLong_CheckExact" (PyObject *o)
    long long _div_as_long "PyLong_AsLongLongAndOverflow" (PyObject *o, int *overflow) except? -1
    Py_ssize_t _div_as_ssize "PyLong_AsSsize_t" (PyObject *o) except? -1


def diversity_dict_total(dict data):
    """The number of judgments of ``{query: {subtopic: {doc: grade}}}``, each dict counted
    by itself, or -1 unless every query and subtopic id is a ``str`` and every level a
    ``dict`` (the other inputs take the general path)."""
    cdef Py_ssize_t qpos = 0, spos, total = 0
    cdef PyObject *qk
    cdef PyObject *qv
    cdef PyObject *sk
    cdef PyObject *sv
    cdef object subtopics
    while _enc_dict_next(data, &qpos, &qk, &qv):
        if not _enc_is_str(qk) or not _enc_is_dict(qv):
            return -1
        subtopics = <object>qv
        spos = 0
        while _enc_dict_next(subtopics, &spos, &sk, &sv):
            if not _enc_is_str(sk) or not _enc_is_dict(sv):
                return -1
            total += _enc_dict_size(sv)
    return total


cdef inline Py_ssize_t _div_code(dict index, list names, PyObject *key) except -2:
    """The code of ``key`` (a str) in ``index``, a new one (appended to ``names``) if it has
    none yet."""
    cdef PyObject *found = _div_dict_get(index, key)
    cdef Py_ssize_t code
    if found != NULL:
        return _div_as_ssize(found)
    code = len(names)
    index[<object>key] = code
    names.append(<object>key)
    return code


def encode_diversity_dict(dict data, list query_ids, list subtopic_ids, list doc_ids,
                          int64_t[::1] query, int64_t[::1] subtopic, int64_t[::1] doc,
                          int64_t[::1] grade):
    """Each judgment of ``{query: {subtopic: {doc: grade}}}`` as the codes of its query,
    subtopic and document (indexes into ``query_ids``, ``subtopic_ids`` and ``doc_ids``,
    which are appended to in order of first appearance; a query or subtopic without a
    judgment gets none) and its grade, in the dicts' order.

    Takes str ids, dicts and ``int`` grades within int64 only: returns the number of
    judgments written, or -1 at the first entry of any other kind (the caller then reads the
    dict the general way, which converts what it can and names what it cannot). Every write
    is checked against the arrays' size (``diversity_dict_total``'s count): a dict that
    changed since it was counted gives -1 or a count other than that size, never a write past
    the arrays.
    """
    cdef Py_ssize_t total = grade.shape[0]
    cdef dict subtopic_index = {}
    # documents interned by the str's cached hash in a private table, not a dict: most of
    # the walk's time was the dict lookups, one per judgment
    cdef _sh_Slots doc_table
    if query.shape[0] != total or subtopic.shape[0] != total or doc.shape[0] != total:
        raise InputError("the columns must have one entry per judgment")
    if len(doc_ids) != 0:
        raise InputError("encode_diversity_dict: doc_ids must start empty")
    _ak_str_table_init(&doc_table, 1024)
    try:
        return _div_walk(data, query_ids, subtopic_ids, doc_ids, query, subtopic, doc, grade,
                         subtopic_index, &doc_table)
    finally:
        _sh_slots_free(&doc_table)


cdef Py_ssize_t _div_walk(dict data, list query_ids, list subtopic_ids, list doc_ids,
                          int64_t[::1] query, int64_t[::1] subtopic, int64_t[::1] doc,
                          int64_t[::1] grade, dict subtopic_index,
                          _sh_Slots* doc_table) except -2:
    """encode_diversity_dict's walk, the documents interned in ``doc_table``."""
    cdef Py_ssize_t qpos = 0, spos, dpos, pos = 0, total = grade.shape[0]
    cdef Py_ssize_t q_code, s_code
    cdef PyObject *qk
    cdef PyObject *qv
    cdef PyObject *sk
    cdef PyObject *sv
    cdef PyObject *dk
    cdef PyObject *dv
    cdef long long g
    cdef int overflow = 0
    cdef object subtopics, docs
    while _enc_dict_next(data, &qpos, &qk, &qv):
        if not _enc_is_str(qk) or not _enc_is_dict(qv):
            return -1
        subtopics = <object>qv  # held: the loops below may allocate
        q_code = -1
        spos = 0
        while _enc_dict_next(subtopics, &spos, &sk, &sv):
            if not _enc_is_str(sk) or not _enc_is_dict(sv):
                return -1
            docs = <object>sv
            s_code = -1
            dpos = 0
            while _enc_dict_next(docs, &dpos, &dk, &dv):
                if pos >= total or not _enc_is_str(dk) or not _div_is_int(dv):
                    return -1
                g = _div_as_long(dv, &overflow)
                if overflow:
                    return -1
                if q_code < 0:
                    q_code = len(query_ids)
                    query_ids.append(<object>qk)
                if s_code < 0:
                    s_code = _div_code(subtopic_index, subtopic_ids, sk)
                query[pos] = q_code
                subtopic[pos] = s_code
                doc[pos] = _ak_str_index(doc_table, doc_ids, <object>dk)
                grade[pos] = g
                pos += 1
    return pos


# ---------------------------------------------------------------------------------------
# Diversity qrels in the layout ndeval's kernels read: the judgments sorted by (query,
# document id, subtopic), a row per (query, document), each query's subtopics numbered from
# 0. Done here rather than with numpy sorts and a second hashing of each judgment's document
# string: each distinct document is read (and hashed) once, the documents sorted once by
# their UTF-8 bytes (code point order), and the judgments by three counting passes.

from libc.stdlib cimport qsort

cdef struct _DivDoc:
    uint64_t head  # the 8 bytes after the prefix every id shares, big-endian, zero-padded
    const unsigned char* p
    int64_t n
    int64_t code


cdef int _div_doc_cmp(const void* a, const void* b) noexcept nogil:
    # ids that differ in their heads compare as their heads do (the common prefix aside, a
    # shorter id's padding is below any byte the other holds there, or they tie); a memcmp
    # call per comparison was most of the sort's time on ids of one collection's prefix
    cdef const _DivDoc* x = <const _DivDoc*>a
    cdef const _DivDoc* y = <const _DivDoc*>b
    if x.head != y.head:
        return -1 if x.head < y.head else 1
    cdef int64_t n = x.n if x.n < y.n else y.n
    cdef int c = memcmp(x.p, y.p, <size_t>n) if n > 0 else 0
    if c != 0:
        return c
    if x.n != y.n:
        return -1 if x.n < y.n else 1
    return -1 if x.code < y.code else (1 if x.code > y.code else 0)


cdef int _div_i64_cmp(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0]
    cdef int64_t y = (<const int64_t*>b)[0]
    return -1 if x < y else (1 if x > y else 0)


cdef void _div_counting_pass(const int64_t* key, int64_t bound, const int64_t* order_in,
                             int64_t* order_out, int64_t* count, Py_ssize_t n) noexcept nogil:
    """``order_in`` stably sorted by ``key`` (values in 0..bound - 1) into ``order_out``."""
    cdef Py_ssize_t i
    cdef int64_t c, total = 0
    memset(count, 0, (bound + 1) * sizeof(int64_t))
    for i in range(n):
        count[key[order_in[i]]] += 1
    for i in range(bound):
        c = count[i]
        count[i] = total
        total += c
    for i in range(n):
        c = key[order_in[i]]
        order_out[count[c]] = order_in[i]
        count[c] += 1


def diversity_qrels_rows(const int64_t[::1] query, const int64_t[::1] subtopic,
                         const int64_t[::1] doc, const int64_t[::1] grade, list doc_ids,
                         int64_t n_queries, int64_t n_subtopics,
                         int64_t[::1] t_out, int64_t[::1] local_out, int64_t[::1] row_out,
                         int64_t[::1] grade_out, int64_t[::1] doc_offsets_out,
                         int64_t[::1] subtopics_out, int64_t[::1] row_doc_out,
                         int64_t[::1] best_out, int64_t[::1] hash_out,
                         int64_t[::1] key_off_out):
    """Judgments ``(query, subtopic, doc, grade)`` (codes: queries in ``0..n_queries - 1``,
    subtopics in ``0..n_subtopics - 1`` in the order their sums take, documents indexing
    ``doc_ids``, a list of str) in ndeval's layout.

    The judgments sorted by (query, document id in code point order, subtopic), a document
    judged twice for one subtopic keeping its last judgment, are written to ``t_out``
    (query), ``local_out`` (the subtopic's number among its query's, from 0 in subtopic
    order), ``row_out`` (the row of its (query, document)) and ``grade_out``; the rows (in
    the same order) to ``row_doc_out`` (document code), ``best_out`` (highest grade over all
    the row's judgments), ``hash_out`` (its id's hash, as the engine's qrels hash ids) and
    ``key_off_out`` (where its id's UTF-8 bytes start in the returned blob);
    ``doc_offsets_out[q]`` is query q's first row, ``subtopics_out[q]`` its number of
    subtopics. Every output of per-judgment or per-row size has one entry per judgment (and
    ``key_off_out`` one more); returns ``(judgments kept, rows, blob)``.

    Every code is checked against its bound and ``doc_ids`` is measured here (its entries
    must be str, whose bytes are copied before any other work): nothing is read or written
    outside the arrays, whatever is passed."""
    cdef Py_ssize_t n = grade.shape[0], i, j, a, b, k, m = 0, rows = 0, nd
    cdef Py_ssize_t blob_size = 0, size, common
    cdef int64_t q, s, r, g, c, most
    cdef const char* utf8
    cdef object item
    cdef unsigned char* doc_bytes = NULL
    cdef int64_t* doc_start = NULL
    cdef _DivDoc* docs = NULL
    cdef int64_t* rank = NULL
    cdef uint64_t* doc_hash = NULL
    cdef int64_t* order_a = NULL
    cdef int64_t* order_b = NULL
    cdef int64_t* key = NULL
    cdef int64_t* count = NULL
    cdef int64_t* stamp = NULL
    cdef int64_t* local_of = NULL
    cdef int64_t* subs = NULL
    cdef unsigned char* blob = NULL
    if (subtopic.shape[0] != n or doc.shape[0] != n or query.shape[0] != n
            or t_out.shape[0] != n or local_out.shape[0] != n or row_out.shape[0] != n
            or grade_out.shape[0] != n or row_doc_out.shape[0] != n or best_out.shape[0] != n
            or hash_out.shape[0] != n or key_off_out.shape[0] != n + 1
            or n_queries < 0 or n_subtopics < 0 or doc_offsets_out.shape[0] != n_queries + 1
            or subtopics_out.shape[0] != n_queries):
        raise InputError("diversity_qrels_rows: arrays of mismatched sizes")
    nd = len(doc_ids)
    for i in range(n):
        if not (0 <= query[i] < n_queries and 0 <= subtopic[i] < n_subtopics
                and 0 <= doc[i] < nd):
            raise InputError("diversity_qrels_rows: a code out of range")
    most = n_queries
    if n_subtopics > most:
        most = n_subtopics
    if nd > most:
        most = nd
    try:
        # each distinct document's UTF-8 bytes, copied: the list is not read without the GIL
        doc_start = <int64_t*>malloc((nd + 1) * sizeof(int64_t))
        if doc_start == NULL:
            raise MemoryError()
        doc_start[0] = 0
        for i in range(nd):
            item = doc_ids[i]
            if not isinstance(item, str):
                raise InputTypeError(f"diversity_qrels_rows: document {item!r} is not a str")
            _enc_utf8(<PyObject*>item, &size)
            blob_size += size
            doc_start[i + 1] = blob_size
        if len(doc_ids) != nd:
            raise InputError("diversity_qrels_rows: the document list changed while read")
        doc_bytes = <unsigned char*>malloc(blob_size + 1)
        docs = <_DivDoc*>malloc((nd + 1) * sizeof(_DivDoc))
        rank = <int64_t*>malloc((nd + 1) * sizeof(int64_t))
        doc_hash = <uint64_t*>malloc((nd + 1) * sizeof(uint64_t))
        order_a = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        order_b = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        key = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        count = <int64_t*>malloc((most + 1) * sizeof(int64_t))
        stamp = <int64_t*>malloc((n_subtopics + 1) * sizeof(int64_t))
        local_of = <int64_t*>malloc((n_subtopics + 1) * sizeof(int64_t))
        subs = <int64_t*>malloc((n_subtopics + 1) * sizeof(int64_t))
        if (doc_bytes == NULL or docs == NULL or rank == NULL or doc_hash == NULL
                or order_a == NULL or order_b == NULL or key == NULL or count == NULL
                or stamp == NULL or local_of == NULL or subs == NULL):
            raise MemoryError()
        for i in range(nd):
            item = doc_ids[i]
            utf8 = _enc_utf8(<PyObject*>item, &size)
            if size != doc_start[i + 1] - doc_start[i]:
                raise InputError("diversity_qrels_rows: the document list changed while read")
            memcpy(doc_bytes + doc_start[i], utf8, size)
        with nogil:
            # the length of the prefix every id shares
            common = doc_start[1] if nd else 0
            for i in range(1, nd):
                k = 0
                while (k < common and k < doc_start[i + 1] - doc_start[i]
                       and doc_bytes[k] == doc_bytes[doc_start[i] + k]):
                    k += 1
                common = k
            for i in range(nd):
                docs[i].p = doc_bytes + doc_start[i]
                docs[i].n = doc_start[i + 1] - doc_start[i]
                docs[i].code = i
                docs[i].head = 0
                for k in range(common, common + 8):
                    docs[i].head <<= 8
                    if k < docs[i].n:
                        docs[i].head |= docs[i].p[k]
                doc_hash[i] = _trec_hash(docs[i].p, docs[i].n)
            if nd > 1:
                qsort(docs, nd, sizeof(_DivDoc), _div_doc_cmp)
            for i in range(nd):
                rank[docs[i].code] = i
            # (query, document rank, subtopic, position): least significant key first
            for i in range(n):
                order_a[i] = i
            _div_counting_pass(&subtopic[0] if n else NULL, n_subtopics, order_a, order_b,
                               count, n)
            for i in range(n):
                key[i] = rank[doc[i]]
            _div_counting_pass(key, nd, order_b, order_a, count, n)
            _div_counting_pass(&query[0] if n else NULL, n_queries, order_a, order_b,
                               count, n)
            for i in range(n_subtopics):
                stamp[i] = -1
            a = 0
            for q in range(n_queries):
                doc_offsets_out[q] = rows
                # this query's judgments: order_b[a:b]
                b = a
                while b < n and query[order_b[b]] == q:
                    b += 1
                # its subtopics, numbered in subtopic order
                k = 0
                for i in range(a, b):
                    s = subtopic[order_b[i]]
                    if stamp[s] != q:
                        stamp[s] = q
                        subs[k] = s
                        k += 1
                if k > 1:
                    qsort(subs, k, sizeof(int64_t), _div_i64_cmp)
                for i in range(k):
                    local_of[subs[i]] = i
                subtopics_out[q] = k
                i = a
                while i < b:
                    # a row: the judgments of one document
                    r = key[order_b[i]]
                    j = i
                    g = grade[order_b[i]]
                    while j < b and key[order_b[j]] == r:
                        if grade[order_b[j]] > g:
                            g = grade[order_b[j]]
                        # the last judgment of a (document, subtopic) is the one kept
                        if j + 1 == b or key[order_b[j + 1]] != r or (
                                subtopic[order_b[j + 1]] != subtopic[order_b[j]]):
                            c = order_b[j]
                            t_out[m] = q
                            local_out[m] = local_of[subtopic[c]]
                            row_out[m] = rows
                            grade_out[m] = grade[c]
                            m += 1
                        j += 1
                    c = docs[r].code
                    row_doc_out[rows] = c
                    best_out[rows] = g
                    hash_out[rows] = <int64_t>doc_hash[c]
                    rows += 1
                    i = j
                a = b
            doc_offsets_out[n_queries] = rows
            key_off_out[0] = 0
            for i in range(rows):
                c = row_doc_out[i]
                key_off_out[i + 1] = key_off_out[i] + doc_start[c + 1] - doc_start[c]
            blob = <unsigned char*>malloc(key_off_out[rows] + 1)
            if blob != NULL:
                for i in range(rows):
                    c = row_doc_out[i]
                    memcpy(blob + key_off_out[i], doc_bytes + doc_start[c],
                           doc_start[c + 1] - doc_start[c])
        if blob == NULL:
            raise MemoryError()
        return m, rows, (<char*>blob)[:key_off_out[rows]]
    finally:
        free(doc_bytes)
        free(doc_start)
        free(docs)
        free(rank)
        free(doc_hash)
        free(order_a)
        free(order_b)
        free(key)
        free(count)
        free(stamp)
        free(local_of)
        free(subs)
        free(blob)
