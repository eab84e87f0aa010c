# Kernels included by _kernels.pyx: factoid QA (BioASQ), answer-sentence selection
# (NLPCC-DBQA) and average precision from precision-recall curves.
#
# Factoid and list questions run in two steps, like the ranking kernels: a lookup step gives
# each submitted answer, rank by rank, the gold answer it matches (or -1 for none), and a
# measure step reads those codes. For lists of Python strings the lookup compares the
# strings directly (``fq_first_match_objects``, with the GIL: no vocabulary is built, since
# an answer only ever meets its own question's gold synonyms); integer ids skip it.
#
# Curves sort once, stably, by score descending (the shared LSD radix argsort on the scores'
# bits, so equal scores keep their input order), then sweep. Each AP definition then groups ties as
# its reference does: one point per distinct score (scikit-learn) or one point per sample in
# that stable order (PASCAL VOC, COCO).
#
# Sums that the references take with numpy (``np.sum``, ``np.mean``) use numpy's pairwise
# summation (``_fq_pairwise_sum``) so that results agree to the last bit.

from cpython.ref cimport PyObject
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject_RichCompareBool, Py_EQ
from cpython.unicode cimport PyUnicode_Check
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.math cimport NAN
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcmp, memcpy, memset


cdef extern from "_simd.h":
    void _fq_prefetch "qafast_prefetch" (const void* p)

cdef extern from *:
    # with the TREC reader's C helpers: a compiler builtin, or MSVC's bit scan
    int _trec_ctz64(uint64_t x) nogil

cdef extern from "_simd.h" nogil:
    int qafast_first_match_rows(const int32_t* pred, int64_t pred_stride, const int32_t* gold,
                                int64_t gold_stride, int64_t n, int k, int32_t* out)
    uint32_t qafast_dbqa_rank_mask16(const double* s, const int8_t* y, int n)
    int qafast_popcount16(uint32_t x)


# ---------------------------------------------------------------------------------------------
# numpy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src, pairwise_sum), so
# that a sum the reference takes with np.sum over a contiguous float64 array is reproduced
# bit for bit: below 8 terms a plain loop, up to 128 eight interleaved accumulators, above
# that two halves (the first a multiple of 8 long).

cdef double _fq_pairwise_sum(const double* a, Py_ssize_t n) noexcept nogil:
    cdef double res, r0, r1, r2, r3, r4, r5, r6, r7
    cdef Py_ssize_t i, n2
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
    n2 = n // 2
    n2 -= n2 % 8
    return _fq_pairwise_sum(a, n2) + _fq_pairwise_sum(a + n2, n - n2)


def fq_pairwise_sum(const double[::1] a):
    """numpy's ``np.sum`` of a contiguous float64 array, to the last bit (for tests)."""
    if a.shape[0] == 0:
        return 0.0
    return _fq_pairwise_sum(&a[0], a.shape[0])


# ---------------------------------------------------------------------------------------------
# Factoid and list questions

cdef inline object _fq_item(list lst, Py_ssize_t i):
    # a str subclass's __eq__ or lower() may change the lists while they are read: every
    # item read after such a call is checked against the list's length at that moment
    if i >= PyList_GET_SIZE(lst):
        raise InputError("the answer lists changed while they were read")
    return <object>PyList_GET_ITEM(lst, i)


def fq_first_match_objects(list predicted, list gold, Py_ssize_t k, bint lower,
                           int32_t[::1] out_rank):
    """out_rank[i] = 1-based rank of the first of ``predicted[i][:k]`` (k < 0: all) equal to
    one of ``gold[i]``, or 0. Both are lists of lists of str; with ``lower`` both sides are
    compared after ``str.lower()``. A gold that is a str is its one synonym. Returns -1, or
    (i, what) for the first question whose data is not a list of str (``what``: "predicted"
    or "target") or whose gold list is empty ("empty"). Raises ValueError if a str
    subclass's methods change the lists while they are read."""
    cdef Py_ssize_t n = PyList_GET_SIZE(predicted), i, j, g, np_, ng, total
    cdef object preds, golds, p, t
    cdef PyObject* pp
    cdef PyObject* one
    cdef PyObject** gitems
    cdef list glow
    cdef int32_t found
    if out_rank.shape[0] != n or PyList_GET_SIZE(gold) != n:
        raise InputError("one gold entry and one output rank per question are expected")
    for i in range(n):
        # the questions' lists a few steps ahead, then their answers' objects: the answers
        # are scattered strings, and the loop otherwise waits on each one
        if i + 8 < PyList_GET_SIZE(predicted):
            _fq_prefetch(<PyObject*>PyList_GET_ITEM(predicted, i + 8))
        if i + 4 < PyList_GET_SIZE(predicted) and i + 4 < PyList_GET_SIZE(gold):
            _fq_prefetch(<PyObject*>PyList_GET_ITEM(gold, i + 4))
            pp = <PyObject*>PyList_GET_ITEM(predicted, i + 4)
            if type(<object>pp) is list:
                for j in range(min(PyList_GET_SIZE(<list>pp), 6)):
                    _fq_prefetch(<PyObject*>PyList_GET_ITEM(<list>pp, j))
        preds = _fq_item(predicted, i)
        golds = _fq_item(gold, i)
        if type(preds) is not list:
            return (i, "predicted")
        total = PyList_GET_SIZE(preds)
        np_ = total
        if k >= 0 and np_ > k:
            np_ = k
        found = 0
        if not lower and _ak_is_exact_str(<PyObject*>golds):
            # the usual case, one gold string: compared in C, no list made
            one = <PyObject*>golds
            for j in range(np_):
                if j >= PyList_GET_SIZE(preds):
                    _fq_item(<list>preds, j)  # raises
                pp = <PyObject*>PyList_GET_ITEM(preds, j)
                if not _ak_is_exact_str(pp):
                    p = <object>pp  # held: its __eq__ may take it out of the list
                    if not PyUnicode_Check(p):
                        return (i, "predicted")
                    if PyObject_RichCompareBool(p, <object>one, Py_EQ):
                        found = <int32_t>(j + 1)
                        break
                elif _ak_same_str(pp, one):
                    found = <int32_t>(j + 1)
                    break
        else:
            if PyUnicode_Check(golds):
                golds = [golds]
            elif type(golds) is not list:
                return (i, "target")
            ng = PyList_GET_SIZE(golds)
            if ng == 0:
                return (i, "empty")
            if lower:
                glow = []
                for g in range(ng):
                    t = _fq_item(<list>golds, g)
                    if not PyUnicode_Check(t):
                        return (i, "target")
                    glow.append(t.lower())
                golds = glow
            else:
                for g in range(ng):
                    if not PyUnicode_Check(_fq_item(<list>golds, g)):
                        return (i, "target")
            for j in range(np_):
                p = _fq_item(<list>preds, j)
                if not PyUnicode_Check(p):
                    return (i, "predicted")
                if lower:
                    p = p.lower()
                for g in range(ng):
                    if PyObject_RichCompareBool(p, _fq_item(<list>golds, g), Py_EQ):
                        found = <int32_t>(j + 1)
                        break
                if found:
                    break
        # the answers not compared are still checked to be strings
        for j in range(found if found else np_, total):
            if not PyUnicode_Check(_fq_item(<list>preds, j)):
                return (i, "predicted")
        out_rank[i] = found
    return -1


def fq_first_match_ids(const int64_t[::1] pred_off, const int32_t[::1] pred_ids,
                       const int64_t[::1] gold_off, const int32_t[::1] gold_ids, int64_t k,
                       int32_t[::1] out_rank):
    """The same on integer ids in CSR form; a negative id never matches."""
    cdef Py_ssize_t n = out_rank.shape[0], i
    cdef int64_t j, g, hi
    cdef int32_t p, found
    with nogil:
        for i in range(n):
            hi = pred_off[i + 1]
            if k >= 0 and hi - pred_off[i] > k:
                hi = pred_off[i] + k
            found = 0
            j = pred_off[i]
            while j < hi and not found:
                p = pred_ids[j]
                if p >= 0:
                    for g in range(gold_off[i], gold_off[i + 1]):
                        if gold_ids[g] == p:
                            found = <int32_t>(j - pred_off[i] + 1)
                            break
                j += 1
            out_rank[i] = found


def fq_first_match_dense(const int32_t[:, ::1] pred_ids, const int32_t[:, ::1] gold_ids,
                         int64_t k, int32_t[::1] out_rank):
    """fq_first_match_ids for rectangular id arrays (questions x answers, questions x
    synonyms), with no offsets to read; a negative id never matches."""
    cdef Py_ssize_t n = out_rank.shape[0], m = pred_ids.shape[1], s = gold_ids.shape[1]
    cdef Py_ssize_t i, j, g, top = m if k < 0 or k > m else k
    cdef int32_t p, found, g0
    with nogil:
        if s == 1 and n > 0 and 0 < top <= 31 and qafast_first_match_rows(
                &pred_ids[0, 0], pred_ids.strides[0] // sizeof(int32_t), &gold_ids[0, 0],
                gold_ids.strides[0] // sizeof(int32_t), n, <int>top, &out_rank[0]):
            pass
        elif s == 1:
            for i in range(n):
                g0 = gold_ids[i, 0]
                found = 0
                if g0 >= 0:
                    for j in range(top - 1, -1, -1):
                        found = <int32_t>(j + 1) if pred_ids[i, j] == g0 else found
                out_rank[i] = found
        else:
            for i in range(n):
                found = 0
                for j in range(top):
                    p = pred_ids[i, j]
                    if p >= 0:
                        for g in range(s):
                            if gold_ids[i, g] == p:
                                found = <int32_t>(j + 1)
                                break
                    if found:
                        break
                out_rank[i] = found


def fq_factoid_measures(const int32_t[::1] rank, double[:, ::1] per_question, double[::1] sums):
    """From first-match ranks: per question strict, lenient, reciprocal rank (columns 0-2),
    and their sums in question order (sums[0:3])."""
    cdef Py_ssize_t n = rank.shape[0], i
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, rr
    cdef bint keep = per_question.shape[0] == n
    cdef double reciprocal[64]
    cdef int32_t r
    # 1/r from a table for the usual small ranks: a division and a branch on a hit cost more
    # than the whole rest of the loop (the values are the same divisions, done once)
    reciprocal[0] = 0.0
    for r in range(1, 64):
        reciprocal[r] = 1.0 / r
    cdef int64_t c0 = 0, c1 = 0
    with nogil:
        for i in range(n):
            r = rank[i]
            rr = reciprocal[r] if <uint32_t>r < 64 else (1.0 / r if r > 0 else 0.0)
            c0 += r == 1
            c1 += r > 0
            s2 += rr
            if keep:
                per_question[i, 0] = rank[i] == 1
                per_question[i, 1] = rank[i] > 0
                per_question[i, 2] = rr
        # counts of 0/1 are exact in a double, so integer counting changes no bit
        sums[0] = <double>c0
        sums[1] = <double>c1
        sums[2] = s2


def fq_list_prf(const int64_t[::1] item_off, const int32_t[::1] item_ids,
                const int64_t[::1] qgroup_off, const int64_t[::1] group_off,
                const int32_t[::1] group_ids, double[:, ::1] out):
    """BioASQ list questions (QuestionAnswerEvaluator.calculatePRFforListQuestions).

    Question q's submitted items are ``item_ids[item_off[q]:item_off[q + 1]]`` (one id each,
    -1: matches no gold string); its gold groups are ``g`` in ``qgroup_off[q]:qgroup_off[q+1]``,
    group g holding ``group_ids[group_off[g]:group_off[g + 1]]``. Items in order: the first
    remaining group holding the item's id is removed and the item is a TP, else an FP. Then
    each remaining group removes the first remaining item it holds, or is an FN. Writes
    precision, recall, F1 per row of ``out``; no items: all 0."""
    cdef Py_ssize_t nq = out.shape[0], q
    cdef int64_t i, g, j, ni, ng, maxi = 0, maxg = 0, i0, g0
    cdef double tp, fp, fn, p, r
    cdef char* gone_g
    cdef char* gone_i
    for q in range(nq):
        maxi = max(maxi, item_off[q + 1] - item_off[q])
        maxg = max(maxg, qgroup_off[q + 1] - qgroup_off[q])
    gone_g = <char*>malloc(maxg + 1)
    gone_i = <char*>malloc(maxi + 1)
    if gone_g == NULL or gone_i == NULL:
        free(gone_g)
        free(gone_i)
        raise MemoryError()
    with nogil:
        for q in range(nq):
            i0 = item_off[q]
            ni = item_off[q + 1] - i0
            g0 = qgroup_off[q]
            ng = qgroup_off[q + 1] - g0
            out[q, 0] = 0.0
            out[q, 1] = 0.0
            out[q, 2] = 0.0
            if ni == 0:
                continue
            memset(gone_g, 0, ng)
            memset(gone_i, 0, ni)
            tp = 0.0
            fp = 0.0
            fn = 0.0
            for i in range(ni):
                if _fq_take_group(item_ids[i0 + i], g0, ng, group_off, group_ids, gone_g):
                    tp += 1.0
                else:
                    fp += 1.0
            for g in range(ng):
                if gone_g[g]:
                    continue
                for i in range(ni + 1):
                    if i == ni:
                        fn += 1.0
                        break
                    if not gone_i[i] and _fq_in_group(item_ids[i0 + i], g0 + g, group_off,
                                                      group_ids):
                        gone_i[i] = 1
                        break
            p = tp / (tp + fp)
            r = tp / (tp + fn) if tp + fn != 0.0 else 0.0
            out[q, 0] = p
            out[q, 1] = r
            if p != 0.0 and r != 0.0:
                out[q, 2] = 2.0 * p * r / (p + r)
    free(gone_g)
    free(gone_i)


cdef inline bint _fq_in_group(int32_t x, int64_t g, const int64_t[::1] group_off,
                              const int32_t[::1] group_ids) noexcept nogil:
    cdef int64_t j
    if x < 0:
        return False
    for j in range(group_off[g], group_off[g + 1]):
        if group_ids[j] == x:
            return True
    return False


cdef inline bint _fq_take_group(int32_t x, int64_t g0, int64_t ng, const int64_t[::1] group_off,
                                const int32_t[::1] group_ids, char* gone) noexcept nogil:
    cdef int64_t g
    for g in range(ng):
        if not gone[g] and _fq_in_group(x, g0 + g, group_off, group_ids):
            gone[g] = 1
            return True
    return False


def fq_yesno(const int8_t[::1] gold, const int8_t[::1] pred, double[::1] out):
    """BioASQ yes/no questions: gold and pred 1 (yes), 0 (no) or 2 (a string with neither);
    pred -1 is no answer, never right. Gold 1 is the "yes" class, any other the "no" class.
    out = accuracy sum, F1(yes), F1(no), from the tool's accuracy-based confusion counts."""
    cdef Py_ssize_t n = gold.shape[0], i
    cdef double acc = 0.0, tp_y = 0.0, e_y = 0.0, tp_n = 0.0, e_n = 0.0
    cdef bint ok
    with nogil:
        for i in range(n):
            ok = pred[i] == gold[i]
            acc += ok
            # BioASQ: a correct answer is a TP of its gold label and a TN of the other; a
            # wrong one an error of both labels
            if gold[i] == 1:
                if ok:
                    tp_y += 1.0
                else:
                    e_y += 1.0
                    e_n += 1.0
            else:
                if ok:
                    tp_n += 1.0
                else:
                    e_n += 1.0
                    e_y += 1.0
        out[0] = acc
        out[1] = 2.0 * tp_y / (2.0 * tp_y + e_y) if 2.0 * tp_y + e_y != 0.0 else 0.0
        out[2] = 2.0 * tp_n / (2.0 * tp_n + e_n) if 2.0 * tp_n + e_n != 0.0 else 0.0


# ---------------------------------------------------------------------------------------------
# Answer-sentence selection (NLPCC-DBQA)

cdef void _fq_stable_desc(const double* s, int64_t* idx, int64_t* tmp, int64_t n) noexcept nogil:
    """Sort idx[0:n] (local positions) by s descending, equal scores in position order."""
    cdef int64_t i, j, x, width, lo, mid, hi, a, b, k
    cdef int64_t* src
    cdef int64_t* dst
    cdef int64_t* t
    if n <= 32:
        for i in range(1, n):
            x = idx[i]
            j = i
            while j > 0 and s[idx[j - 1]] < s[x]:
                idx[j] = idx[j - 1]
                j -= 1
            idx[j] = x
        return
    src = idx
    dst = tmp
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a = lo
            b = mid
            k = lo
            while a < mid and b < hi:
                if s[src[b]] > s[src[a]]:
                    dst[k] = src[b]
                    b += 1
                else:
                    dst[k] = src[a]
                    a += 1
                k += 1
            while a < mid:
                dst[k] = src[a]
                a += 1
                k += 1
            while b < hi:
                dst[k] = src[b]
                b += 1
                k += 1
            lo += 2 * width
        t = src
        src = dst
        dst = t
        width *= 2
    if src != idx:
        memcpy(idx, src, n * sizeof(int64_t))


cdef inline int64_t _fq_rank_of(const double* s, int64_t n, int64_t p) noexcept nogil:
    """1-based rank of candidate p: those scoring more, or as much and earlier, come first."""
    cdef int64_t j, ahead = 0
    cdef double x = s[p]
    for j in range(n):
        ahead += (s[j] > x) | ((s[j] == x) & (j < p))
    return ahead + 1


cdef inline int64_t _fq_first_bad_candidate(const double* s, const int8_t* y,
                                            int64_t n) noexcept nogil:
    cdef int64_t i
    for i in range(n):
        if s[i] != s[i] or <uint8_t>y[i] > 1:
            return i
    return -1


def fq_dbqa(const int64_t[::1] offsets, const double[::1] scores, const int8_t[::1] labels,
            bint top1, double threshold, const int64_t[::1] accuracy_at,
            double[:, ::1] per_question, double[::1] sums, int64_t[::1] accuracy_counts):
    """DBQA measures of every question, checking its candidates on the way.

    Per question: reciprocal rank, average precision, rank of the first correct sentence
    (0: none), F1 of the selected sentences against the correct ones; written to the rows of
    ``per_question`` when it has one per question, and added in question order to
    ``sums[0]``, ``sums[1]``, ``sums[3]`` (``sums[2]`` is 0). ``accuracy_counts[a]`` counts
    the questions whose first correct rank is in 1..``accuracy_at[a]``.

    Candidates are ranked by score descending, equal scores in input order. AP is the sum of
    P(k) at each correct rank k over m (m correct), 0 when m is 0. Selected: the top-ranked
    sentence (``top1``) or every sentence scoring >= threshold.

    Only the correct sentences' ranks matter, so with few of them (m <= 16) each one's rank
    is a count of the candidates ahead of it and nothing is sorted (the ranking kernels'
    rank lookup); otherwise the question is sorted.

    Returns -1, or, having computed nothing, the index of the first candidate whose score is
    NaN or whose label is not 0 or 1."""
    cdef Py_ssize_t nq = offsets.shape[0] - 1, q
    cdef int64_t total = scores.shape[0]
    cdef int64_t lo, n, i, j, x, maxn = 0, m, hits, first, sel, sel_hit
    cdef int64_t n_at = accuracy_at.shape[0]
    cdef double ap, p, r, rr, apq, f1, sum_rr = 0.0, sum_ap = 0.0, sum_f1 = 0.0
    cdef bint keep = per_question.shape[0] == nq
    cdef const double* s
    cdef const int8_t* y
    cdef int64_t* idx
    cdef int64_t* tmp
    cdef double reciprocal[17]
    cdef double quotient[17][17]
    cdef uint32_t invalid, ranks
    reciprocal[0] = 0.0
    for i in range(1, 17):
        reciprocal[i] = 1.0 / <double>i
        for j in range(1, 17):
            quotient[i][j] = <double>i / <double>j
    if offsets.shape[0] == 0 or labels.shape[0] != total or offsets[0] != 0 or \
            offsets[nq] != total:
        raise ValueError("fq_dbqa: the offsets must run from 0 to the number of candidates, "
                         "with a label beside each score")
    for q in range(nq):
        if offsets[q + 1] < offsets[q]:
            raise ValueError("fq_dbqa: the offsets must not decrease")
        maxn = max(maxn, offsets[q + 1] - offsets[q])
    idx = <int64_t*>malloc((maxn + 1) * sizeof(int64_t))
    tmp = <int64_t*>malloc((maxn + 1) * sizeof(int64_t))
    if idx == NULL or tmp == NULL:
        free(idx)
        free(tmp)
        raise MemoryError()
    for i in range(n_at):
        accuracy_counts[i] = 0
    with nogil:
        # one vectorised pass finds whether anything is wrong; only then is it located
        invalid = 0
        for i in range(total):
            invalid |= (scores[i] != scores[i]) | (<uint8_t>labels[i] > 1)
    if invalid:
        free(idx)
        free(tmp)
        return _fq_first_bad_candidate(&scores[0], &labels[0], total)
    with nogil:
        for q in range(nq):
            lo = offsets[q]
            n = offsets[q + 1] - lo
            s = &scores[lo]
            y = &labels[lo]
            sel = 0
            sel_hit = 0
            ap = 0.0
            if top1 and n <= 16 and lo + 16 <= total:
                # ranks as bits, in order; i / r and 1 / r from tables: the divisions
                # were the loop's critical path
                ranks = qafast_dbqa_rank_mask16(s, y, <int>n)
                m = qafast_popcount16(ranks)
                first = (_trec_ctz64(ranks | 0x10000) + 1) & -(<int64_t>(ranks != 0))
                i = 0
                while ranks:
                    i += 1
                    ap += quotient[i][_trec_ctz64(ranks) + 1]
                    ranks &= ranks - 1
                sel_hit = first == 1
                rr = reciprocal[first]
                p = <double>sel_hit
                r = reciprocal[m * sel_hit]
            else:
                m = 0
                for i in range(n):
                    idx[m] = i  # branch-free: kept only when the label is 1
                    m += y[i] != 0
                if not top1:
                    for i in range(n):
                        sel += s[i] >= threshold
                    for i in range(m):
                        sel_hit += s[idx[i]] >= threshold
                if m <= 16:
                    for i in range(m):
                        x = _fq_rank_of(s, n, idx[i])
                        j = i
                        while j > 0 and tmp[j - 1] > x:
                            tmp[j] = tmp[j - 1]
                            j -= 1
                        tmp[j] = x
                else:
                    for i in range(n):
                        idx[i] = i
                    _fq_stable_desc(s, idx, tmp, n)
                    hits = 0
                    for i in range(n):
                        if y[idx[i]]:
                            tmp[hits] = i + 1
                            hits += 1
                first = tmp[0] if m else 0
                for i in range(m):
                    ap += <double>(i + 1) / <double>tmp[i]
                if top1:
                    sel = 1
                    sel_hit = first == 1
                rr = reciprocal[first] if first <= 16 else 1.0 / <double>first
                p = <double>sel_hit / <double>(sel if sel else 1)
                r = <double>sel_hit / <double>(m if m else 1)
            apq = ap / <double>(m if m else 1)
            # with no hit p = r = 0 and f1 = 0 / 1: no branch on the (unpredictable) hit
            f1 = 2.0 * p * r / (p + r if sel_hit else 1.0)
            sum_rr += rr
            sum_ap += apq
            sum_f1 += f1
            for i in range(n_at):
                accuracy_counts[i] += (first > 0) & (first <= accuracy_at[i])
            if keep:
                per_question[q, 0] = rr
                per_question[q, 1] = apq
                per_question[q, 2] = first
                per_question[q, 3] = f1
    free(idx)
    free(tmp)
    sums[0] = sum_rr
    sums[1] = sum_ap
    sums[2] = 0.0
    sums[3] = sum_f1
    return -1


# ---------------------------------------------------------------------------------------------
# Curves: one stable sort by score descending

def fq_sort_desc(const double[::1] scores, const int8_t[::1] labels, double[::1] out_scores,
                 int8_t[::1] out_labels):
    """Scores and labels in score-descending order, ties in input order (the shared radix
    argsort)."""
    cdef Py_ssize_t n = scores.shape[0], i
    cdef int64_t* pos
    cdef int r
    if n == 0:
        return
    pos = <int64_t*>malloc(n * sizeof(int64_t))
    if pos == NULL:
        raise MemoryError()
    with nogil:
        r = _sh_argsort_f64(&scores[0], n, True, pos)
        if r == 0:
            for i in range(n):
                out_scores[i] = scores[pos[i]]
                out_labels[i] = labels[pos[i]]
    free(pos)
    if r != 0:
        raise MemoryError()


def fq_binary_curve(const double[::1] s, const int8_t[::1] y, int64_t[::1] tps,
                    int64_t[::1] fps, double[::1] thresholds):
    """On score-descending data: per distinct score (in descending order) the counts of
    positives and negatives scoring at least that much. Returns the number of points."""
    cdef Py_ssize_t n = s.shape[0], i
    cdef int64_t tp = 0, fp = 0, m = 0
    with nogil:
        for i in range(n):
            tp += y[i]
            fp += 1 - y[i]
            if i == n - 1 or s[i + 1] != s[i]:
                tps[m] = tp
                fps[m] = fp
                thresholds[m] = s[i]
                m += 1
    return m


def fq_step_ap(const int64_t[::1] tps, const int64_t[::1] fps, double[::1] work):
    """scikit-learn's average_precision_score from the curve's counts (points in descending
    score order): -sum(diff(recall) * precision[:-1]) over its reversed arrays, the sum
    pairwise as numpy's. ``work`` holds len(tps) doubles."""
    cdef Py_ssize_t m = tps.shape[0], i
    cdef double total = <double>tps[m - 1], prec, rec, rec_next, ap
    with nogil:
        # sklearn's arrays run from the lowest threshold up, then (precision 1, recall 0):
        # term j = (recall_r[j + 1] - recall_r[j]) * precision_r[j] is point i = m - 1 - j
        for i in range(m):
            prec = <double>tps[i] / <double>(tps[i] + fps[i])
            rec = <double>tps[i] / total
            rec_next = <double>tps[i - 1] / total if i > 0 else 0.0
            work[m - 1 - i] = (rec_next - rec) * prec
        ap = -_fq_pairwise_sum(&work[0], m)
    return ap


def fq_threshold_counts(const double[::1] s, const int8_t[::1] y, const double[::1] thresholds,
                        const int64_t[::1] order, int64_t[::1] tp, int64_t[::1] fp):
    """For each threshold t, the positives and negatives scoring >= t (any sample order).
    ``order`` lists the thresholds' indices from the largest to the smallest: each sample
    is counted in the bin of the largest threshold it reaches, and the bins are summed."""
    cdef Py_ssize_t n = s.shape[0], nt = order.shape[0], j, i, lo, hi, mid
    cdef int64_t* bins
    cdef double* td
    cdef double x
    if y.shape[0] != n or tp.shape[0] != thresholds.shape[0] or fp.shape[0] != tp.shape[0]:
        raise ValueError("fq_threshold_counts: y, tp and fp must match s and thresholds")
    for j in range(nt):
        if order[j] < 0 or order[j] >= thresholds.shape[0]:
            raise ValueError("fq_threshold_counts: order indexes outside the thresholds")
    bins = <int64_t*>calloc(2 * (nt + 1), sizeof(int64_t))
    td = <double*>malloc((nt + 1) * sizeof(double))
    if bins == NULL or td == NULL:
        free(bins)
        free(td)
        raise MemoryError()
    with nogil:
        for j in range(nt):
            td[j] = thresholds[order[j]]
        for i in range(n):
            # lo = number of thresholds (largest first) above x: bin of the first reached;
            # a branch-free count for a few thresholds, a binary search for many
            x = s[i]
            lo = 0
            if nt <= 64:
                for j in range(nt):
                    lo += td[j] > x
            else:
                hi = nt
                while lo < hi:
                    mid = (lo + hi) // 2
                    if td[mid] > x:
                        lo = mid + 1
                    else:
                        hi = mid
            bins[2 * lo + (y[i] == 0)] += 1
        for j in range(1, nt):
            bins[2 * j] += bins[2 * (j - 1)]
            bins[2 * j + 1] += bins[2 * (j - 1) + 1]
        for j in range(nt):
            tp[order[j]] = bins[2 * j]
            fp[order[j]] = bins[2 * j + 1]
    free(bins)
    free(td)


def fq_interpolated_ap(const int8_t[::1] y, int64_t n_pos, int mode, double[::1] work):
    """Interpolated AP over score-descending labels, one point per sample.

    mode 0: PASCAL VOC all-point (VOC2010+ devkit: precision envelope, sum over recall
    changes, numpy's pairwise sum); mode 1: VOC 11-point (t = 0, 0.1, ..., 1.0: max
    precision at recall >= t, each /11 summed in order); mode 2: COCO 101-point (precision
    tp / (tp + fp + eps), envelope, precision at the first recall >= i * 0.01, mean of the
    101 values as np.mean). ``work`` holds 2 * len(y) + 2 doubles."""
    cdef double ap = 0.0
    if y.shape[0] == 0:
        return ap
    with nogil:
        ap = _fq_interpolated(&y[0], y.shape[0], n_pos, mode, &work[0])
    return ap


cdef double _fq_interpolated(const int8_t* y, Py_ssize_t n, int64_t n_pos, int mode,
                             double* work) noexcept nogil:
    cdef Py_ssize_t i, j, nt
    cdef double* rec = work
    cdef double* pre = work + n + 1
    cdef double tp = 0.0, fp = 0.0, ap, p, t, prev, eps = 2.220446049250313e-16
    cdef double q[101]
    for i in range(n):
        tp += y[i]
        fp += 1 - y[i]
        rec[i] = tp / <double>n_pos
        if mode == 2:
            pre[i] = tp / (fp + tp + eps)
        else:
            pre[i] = tp / (tp + fp)
    if mode == 0:
        # mrec = [0, rec, 1], mpre = [0, pre, 0]; envelope from the right
        p = 0.0
        for i in range(n - 1, -1, -1):
            if pre[i] < p:
                pre[i] = p
            else:
                p = pre[i]
        # terms (mrec[i+1] - mrec[i]) * mpre[i+1] where mrec[i+1] != mrec[i]
        j = 0
        prev = 0.0
        for i in range(n + 1):
            t = rec[i] if i < n else 1.0
            if t != prev:
                rec[j] = (t - prev) * (pre[i] if i < n else 0.0)
                j += 1
            prev = t
        return _fq_pairwise_sum(rec, j)
    if mode == 1:
        ap = 0.0
        for j in range(11):
            t = j * 0.1
            p = 0.0
            nt = 0
            for i in range(n):
                if rec[i] >= t:
                    if nt == 0 or pre[i] > p:
                        p = pre[i]
                    nt += 1
            ap = ap + p / 11.0
        return ap
    for i in range(n - 1, 0, -1):
        if pre[i] > pre[i - 1]:
            pre[i - 1] = pre[i]
    i = 0
    for j in range(101):
        t = j * 0.01 if j < 100 else 1.0
        while i < n and rec[i] < t:
            i += 1
        q[j] = pre[i] if i < n else 0.0
    return _fq_pairwise_sum(q, 101) / 101.0
