# TyDi QA kernels part: the per-example passage and minimal-answer scores of the primary tasks
# and the score-threshold sweep (optimal F1, recall at precision) over examples sorted by score.

from libc.stdint cimport int64_t, uint8_t


cdef inline bint _ty_null(double start, double end) noexcept nogil:
    return start < 0 and end < 0


cdef inline double _ty_ratio(double x, double y) noexcept nogil:
    return 0.0 if y == 0 else x / y


def tydi_examples(const int64_t[::1] gold_row, const int64_t[::1] pred_row,
                  const int64_t[::1] ann_ptr, const double[::1] ann_index,
                  const double[::1] ann_start, const double[::1] ann_end,
                  const uint8_t[::1] ann_yes_no, const double[::1] pred_index,
                  const double[::1] pred_start, const double[::1] pred_end,
                  const uint8_t[::1] pred_yes_no, int64_t passage_threshold,
                  int64_t minimal_threshold, uint8_t[:, ::1] flags, double[:, ::1] prf):
    """Score example ``i`` (gold row ``gold_row[i]``, prediction row ``pred_row[i]`` or -1).

    ``flags[i]`` gets (passage has gold, has prediction, correct, minimal has gold, has
    prediction); ``prf[i]`` the minimal answer's best precision, recall and F1 over annotators.
    Yes/no codes: 0 none, 1 yes, 2 no, 3 anything else. Returns -1, or the first ``i`` whose
    prediction span is compared with an annotator's span that overlaps it in no byte although
    neither ends where the other starts (an empty span strictly inside the other).
    """
    cdef Py_ssize_t n = gold_row.shape[0], i
    cdef int64_t g, q, a, lo, hi, n_pass, n_min
    cdef double idx, ps, pe, gs, ge, shared, gold_only, pred_only, p, r, f, bp, br, bf
    cdef uint8_t yn
    cdef bint p_gold, m_gold, p_pred, m_pred, correct
    cdef int64_t failed = -1
    with nogil:
        for i in range(n):
            g = gold_row[i]
            q = pred_row[i]
            lo = ann_ptr[g]
            hi = ann_ptr[g + 1]
            n_pass = 0
            n_min = 0
            for a in range(lo, hi):
                if ann_index[a] >= 0:
                    n_pass += 1
                if (not _ty_null(ann_start[a], ann_end[a])) or ann_yes_no[a] != 0:
                    n_min += 1
            p_gold = n_pass >= passage_threshold
            m_gold = n_min >= minimal_threshold
            bp = br = bf = 0.0
            correct = False
            if q < 0:
                p_pred = not p_gold
                m_pred = not m_gold
            else:
                idx = pred_index[q]
                p_pred = idx >= 0
                if p_gold and p_pred:
                    for a in range(lo, hi):
                        if ann_index[a] >= 0 and ann_index[a] == idx:
                            correct = True
                            break
                ps = pred_start[q]
                pe = pred_end[q]
                yn = pred_yes_no[q]
                m_pred = (not _ty_null(ps, pe)) or yn != 0
                if m_gold and m_pred:
                    if yn != 0:
                        for a in range(lo, hi):
                            if ann_yes_no[a] == yn:
                                bp = br = bf = 1.0
                                break
                    else:
                        for a in range(lo, hi):
                            gs = ann_start[a]
                            ge = ann_end[a]
                            if _ty_null(gs, ge):
                                continue
                            if ge <= ps or pe <= gs:
                                p = r = 0.0
                            else:
                                shared = (ge if ge < pe else pe) - (gs if gs > ps else ps)
                                if not shared > 0:
                                    if failed < 0:
                                        failed = i
                                    continue
                                if gs <= ps:
                                    gold_only = (ps - gs) + (ge - pe if ge - pe > 0 else 0.0)
                                    pred_only = pe - ge if pe - ge > 0 else 0.0
                                else:
                                    pred_only = (gs - ps) + (pe - ge if pe - ge > 0 else 0.0)
                                    gold_only = ge - pe if ge - pe > 0 else 0.0
                                p = _ty_ratio(shared, shared + pred_only)
                                r = _ty_ratio(shared, shared + gold_only)
                            f = _ty_ratio(2 * p * r, p + r)
                            if f > bf:
                                bp = p
                                br = r
                                bf = f
            flags[i, 0] = p_gold
            flags[i, 1] = p_pred
            flags[i, 2] = correct
            flags[i, 3] = m_gold
            flags[i, 4] = m_pred
            prf[i, 0] = bp
            prf[i, 1] = br
            prf[i, 2] = bf
    return failed


def tydi_curve(const uint8_t[::1] has_gold, const uint8_t[::1] has_pred,
               const double[::1] value, const double[::1] score, const int64_t[::1] order,
               const double[::1] targets, double[::1] best, int64_t[::1] best_at,
               double[:, ::1] rows, int64_t[::1] row_at):
    """Sweep the thresholds of examples visited in ``order`` (by score, descending; no NaN).

    Equal consecutive scores form one threshold, scored after its last example. ``best`` gets
    the first strictly best (F1, precision, recall) and ``best_at[0]`` the position in ``order``
    where its threshold starts (-1: none beat 0). For target ``k``, ``rows[k]`` gets the
    (recall, precision) of the first point of largest recall with precision >= target and
    ``row_at[k]`` its threshold's start (-1: none).
    """
    cdef Py_ssize_t n = order.shape[0], nt = targets.shape[0], i, k
    cdef int64_t o, start = 0
    cdef double total_gold = 0.0, total_value = 0.0, total_pred = 0.0, p, r, f
    with nogil:
        best[0] = best[1] = best[2] = 0.0
        best_at[0] = -1
        for k in range(nt):
            rows[k, 0] = rows[k, 1] = 0.0
            row_at[k] = -1
        for i in range(n):
            total_gold += has_gold[i]
        for i in range(n):
            o = order[i]
            total_value += value[o]
            total_pred += has_pred[o]
            if i + 1 < n and score[order[i + 1]] == score[o]:
                continue
            p = _ty_ratio(total_value, total_pred)
            r = _ty_ratio(total_value, total_gold)
            for k in range(nt):
                if p >= targets[k] and r > rows[k, 0]:
                    rows[k, 0] = r
                    rows[k, 1] = p
                    row_at[k] = start
            f = _ty_ratio(2 * p * r, p + r)
            if f > best[0]:
                best[0] = f
                best[1] = p
                best[2] = r
                best_at[0] = start
            start = i + 1
