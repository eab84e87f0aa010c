# Answer kernels part: the scores. answer_char_f1_direct normalizes each answer from its
# snapshot and scores its characters while they are in cache, with no interning;
# answer_scores (with answer_sort_segments) gives exact match and F1 over interned ids.
# Apart from the encoders: answer_scores reads only the ids they made, and
# answer_char_f1_direct needs none.

cdef int _ak_snap_chars(const char* arena, int64_t off, _AkWork* work, char** w,
                        Py_ssize_t* wcap, _AkIds* out) except -2 nogil:
    """Append the code points of SQuAD's normalize_answer of the copied string at
    arena + off to out; -1 (nothing appended) when its text needs CPython's str.lower."""
    cdef uint64_t head = _ak_head(arena + off), nb = head >> 4, kind = head & 7
    cdef const char* data = arena + off + 8
    cdef Py_ssize_t m, nt, k, j, a, b
    if head & 8:
        _ak_grow_chars(w, wcap, <Py_ssize_t>nb)
        _ak_squad_ascii_chars(data, <Py_ssize_t>nb, w[0], out)
        return 0
    m = _ak_squad_prepare_raw(<int>kind, data, <Py_ssize_t>(nb // kind), work)
    if m < 0:
        return -1
    nt = _ak_squad_spans(work, m)
    _ak_reserve(out, m)        # the tokens and the spaces between them fit in m
    for k in range(nt):
        if k:
            out.data[out.size] = 32
            out.size += 1
        a = work.spans[2 * k]
        b = work.spans[2 * k + 1]
        for j in range(a, b):
            out.data[out.size] = <int32_t>work.cp[j]
            out.size += 1
    return 0


cdef int _ak_hard_chars(const int64_t* hard, const int64_t* hard_a, int64_t nhard, int64_t* h,
                        int64_t k, const _AkIds* side, _AkIds* out) except -1 nogil:
    """Append answer k's code points, lowered by CPython (it is the next of ``hard``)."""
    cdef int64_t a, b
    if h[0] >= nhard or hard[h[0]] != k:
        with gil:
            raise RuntimeError("an answer to lower was not lowered")
    a = hard_a[h[0]]
    b = hard_a[h[0] + 1]
    h[0] += 1
    if a < 0 or b < a or b > side.size:
        with gil:
            raise RuntimeError("a normalized answer lies outside its buffer")
    _ak_reserve(out, b - a)
    memcpy(out.data + out.size, side.data + a, (b - a) * sizeof(int32_t))
    out.size += b - a
    return 0


@cython.boundscheck(True)
def answer_char_f1_direct(list predictions, list references, bint v2, double[::1] out,
                          double[::1] sums, Py_ssize_t slice_questions=4096):
    """Character F1 with SQuAD's normalizer, question by question, with no interning: each
    answer is normalized as it is met and compared while its code points are in cache.

    The same numbers as answer_scores in mode 3 on interned strings (``v2``: an empty side
    scores ``float(pred == gold)``, references that normalize to nothing are skipped and a
    question left with none is scored against ""). Writes each question's best F1 to ``out``
    (when it has one per question) and their sequential sum to ``sums[1]``. Returns -1, or
    ``(question, what)`` for the first value that is not a str, or ``(question, "none")``
    for a question without references (the caller then takes its general path, which
    names it). Only values that are exactly str, and references that are exactly a str, a
    list or a tuple, are taken: any other, a str subclass included, is returned as not a
    str (the general path converts it), so no Python code of the caller's runs here.

    As answer_encode_squad, ``slice_questions`` questions at a time: the GIL is held to
    check every value and copy the strings out (and to lower, answer by answer, text that
    needs CPython's str.lower); normalizing and scoring read the copies without it."""
    cdef Py_ssize_t n = len(predictions), i = 0, i0, g, ng_refs
    cdef PyObject* p
    cdef PyObject* r
    cdef PyObject* x
    cdef _AkSnap snap
    cdef int64_t* q_off = NULL         # the slice's questions: strings q_off[i]:q_off[i + 1]
    cdef int64_t q_cap = 0
    cdef int64_t* hard = NULL          # the slice's answers str.lower normalizes, ascending
    cdef int64_t* hard_a = NULL        # their code points: side.data[hard_a[h]:hard_a[h + 1]]
    cdef int64_t hard_cap = 0, hard_a_cap = 0
    cdef int64_t nt = 0, nhard = 0, h = 0, off
    cdef uint64_t head
    cdef const char* arena
    cdef _AkIds pu, gu, side
    cdef _AkWork work
    cdef _AkCharWork c
    cdef char* w = NULL
    cdef Py_ssize_t wcap = 0
    cdef int32_t* cnt = NULL
    cdef int32_t* used = NULL
    cdef int64_t np_, ng, k, same, kept, qi
    cdef int32_t t, take
    cdef double best_f, f, prec, rec, total = 0.0
    cdef bint keep_rows = out.shape[0] == n
    cdef double* outp = &out[0] if keep_rows and n else NULL
    cdef object text
    cdef Py_ssize_t asked = 0
    if len(references) != n:
        raise InputError("one reference entry per prediction is expected")
    if sums.shape[0] < 2:
        raise InputError("sums must have two entries")
    if slice_questions < 1:
        raise InputError("slice_questions must be at least 1")
    pu.data = NULL
    pu.size = 0
    pu.cap = 0
    gu.data = NULL
    gu.size = 0
    gu.cap = 0
    side.data = NULL
    side.size = 0
    side.cap = 0
    work.cp = NULL
    work.cls = NULL
    work.spans = NULL
    work.utf8 = NULL
    work.cap = 0
    snap.rec = NULL
    snap.arena = NULL
    snap.cap = 0
    _ak_char_work_init(&c)
    try:
        # a prediction and three references a question; each slice reuses the copies' room
        _ak_snap_init(&snap, 4 * <int64_t>min(n, slice_questions) + 16)
        # one count per code point: only the pages of the scripts met are ever touched
        cnt = <int32_t*>calloc(0x110000, sizeof(int32_t))
        used = <int32_t*>calloc(0x110000, sizeof(int32_t))
        if cnt == NULL or used == NULL:
            raise MemoryError()
        while i < n:
            # with the GIL: the slice's strings checked and copied, and the text that
            # CPython lowers lowered
            if PyList_GET_SIZE(predictions) != n or PyList_GET_SIZE(references) != n:
                _ak_lists_changed("predictions or references")
            i0 = i
            nt = 0
            snap.size = 0
            _ak_grow_i64(&q_off, &q_cap, 1)
            q_off[0] = 0
            while not (i >= n or i - i0 >= slice_questions
                       or snap.size >= <uint64_t>slice_questions * 256):
                _ak_prefetch_walk(predictions, references, i, n, &asked)
                p = _ak_list_at(<PyObject*>predictions, i)
                if not _ak_is_exact_str(p):
                    return i, "prediction"
                r = _ak_list_at(<PyObject*>references, i)
                if _ak_is_exact_str(r):
                    ng_refs = 1
                elif _ak_is_list(r):
                    ng_refs = _ak_list_len(r)
                elif _ak_is_tuple(r):
                    ng_refs = _ak_tuple_len(r)
                else:
                    return i, "reference"
                if ng_refs == 0:
                    return i, "none"
                _ak_snap_reserve(&snap, nt + 1 + ng_refs)
                _ak_snap_add(&snap, nt, p)
                nt += 1
                for g in range(ng_refs):
                    if _ak_is_exact_str(r):
                        x = r
                    elif _ak_is_list(r):
                        x = _ak_list_at(r, g)
                    else:
                        x = _ak_tuple_at(r, g)
                    if not _ak_is_exact_str(x):
                        return i, "reference"
                    _ak_snap_add(&snap, nt, x)
                    nt += 1
                i += 1
                _ak_grow_i64(&q_off, &q_cap, i - i0 + 1)
                q_off[i - i0] = nt
            arena = snap.arena
            nhard = 0
            side.size = 0
            for k in range(nt):
                off = snap.rec[k]
                if _ak_needs_lower(_ak_head(arena + off), arena + off + 8):
                    _ak_grow_i64(&hard, &hard_cap, nhard + 1)
                    hard[nhard] = k
                    nhard += 1
            # (a str made anew from the copy: an equal str, so the same code points)
            _ak_grow_i64(&hard_a, &hard_a_cap, nhard + 1)
            hard_a[0] = 0
            for h in range(nhard):
                _ak_pause_gil(<Py_ssize_t>h)
                off = snap.rec[hard[h]]
                head = _ak_head(arena + off)
                text = PyUnicode_FromKindAndData(<int>(head & 7), arena + off + 8,
                                                 <Py_ssize_t>((head >> 4) // (head & 7)))
                _ak_squad_chars_into(text, &c, &side)
                hard_a[h + 1] = side.size
            text = None
            # without it: the slice's questions normalized and scored
            with nogil:
                h = 0
                for qi in range(i0, i):
                    pu.size = 0
                    k = q_off[qi - i0]
                    if _ak_snap_chars(arena, snap.rec[k], &work, &w, &wcap, &pu) < 0:
                        _ak_hard_chars(hard, hard_a, nhard, &h, k, &side, &pu)
                    np_ = pu.size
                    for k in range(np_):
                        cnt[pu.data[k]] += 1
                    best_f = 0.0
                    kept = 0
                    for g in range(q_off[qi - i0] + 1, q_off[qi - i0 + 1]):
                        gu.size = 0
                        if _ak_snap_chars(arena, snap.rec[g], &work, &w, &wcap, &gu) < 0:
                            _ak_hard_chars(hard, hard_a, nhard, &h, g, &side, &gu)
                        ng = gu.size
                        if v2 and ng == 0:
                            continue
                        if v2 and np_ == 0:
                            f = 1.0 if np_ == ng else 0.0
                        else:
                            same = 0
                            for k in range(ng):
                                t = gu.data[k]
                                take = used[t] < cnt[t]
                                used[t] += take
                                same += take
                            for k in range(ng):
                                used[gu.data[k]] = 0
                            if same == 0:
                                f = 0.0
                            else:
                                prec = 1.0 * same / np_
                                rec = 1.0 * same / ng
                                f = (2 * prec * rec) / (prec + rec)
                        if kept == 0 or f > best_f:
                            best_f = f
                        kept += 1
                    for k in range(np_):
                        cnt[pu.data[k]] = 0
                    if kept == 0 and v2:
                        best_f = 1.0 if np_ == 0 else 0.0
                    if keep_rows:
                        outp[qi] = best_f
                    total += best_f
        sums[1] = total
        return -1
    finally:
        free(cnt)
        free(used)
        free(q_off)
        free(hard)
        free(hard_a)
        free(w)
        _ak_snap_free(&snap)
        _ak_ids_free(&pu)
        _ak_ids_free(&gu)
        _ak_ids_free(&side)
        _ak_work_free(&work)
        _ak_char_work_free(&c)


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------

cdef int _ak_cmp_int32(const void* a, const void* b) noexcept nogil:
    cdef int32_t x = (<const int32_t*>a)[0], y = (<const int32_t*>b)[0]
    return (x > y) - (x < y)


def answer_sort_segments(const int64_t[::1] off, const int32_t[::1] ids, int32_t[::1] out):
    """Copy ``ids`` into ``out`` with every CSR segment sorted ascending."""
    cdef Py_ssize_t n = off.shape[0] - 1, s, i, j, lo, hi
    cdef int32_t v
    with nogil:
        for s in range(n):
            lo = off[s]
            hi = off[s + 1]
            for i in range(lo, hi):
                out[i] = ids[i]
            if hi - lo > 24:
                qsort(&out[lo], hi - lo, sizeof(int32_t), _ak_cmp_int32)
                continue
            for i in range(lo + 1, hi):
                v = out[i]
                j = i - 1
                while j >= lo and out[j] > v:
                    out[j + 1] = out[j]
                    j -= 1
                out[j + 1] = v


cdef inline int64_t _ak_bag_same(const int32_t* a, int64_t na, const int32_t* b,
                                 int64_t nb) noexcept nogil:
    """Size of the multiset intersection of two sorted id lists."""
    cdef int64_t i = 0, j = 0, same = 0
    while i < na and j < nb:
        if a[i] < b[j]:
            i += 1
        elif a[i] > b[j]:
            j += 1
        else:
            same += 1
            i += 1
            j += 1
    return same


cdef inline int64_t _ak_lcs(const int32_t* a, int64_t na, const int32_t* b, int64_t nb,
                            int64_t* row) noexcept nogil:
    """Longest common contiguous run; row has room for nb + 1 values."""
    cdef int64_t i, j, best = 0, diag, up
    for j in range(nb + 1):
        row[j] = 0
    for i in range(na):
        diag = 0
        for j in range(nb):
            up = row[j + 1]
            if a[i] == b[j]:
                row[j + 1] = diag + 1
                if row[j + 1] > best:
                    best = row[j + 1]
            else:
                row[j + 1] = 0
            diag = up
    return best


cdef inline bint _ak_equal(const int32_t* a, int64_t na, const int32_t* b,
                           int64_t nb) noexcept nogil:
    cdef int64_t i
    if na != nb:
        return False
    for i in range(na):
        if a[i] != b[i]:
            return False
    return True


def answer_scores(const int32_t[::1] pred, const int64_t[::1] row_q,
                  const int64_t[::1] ref_off, const int32_t[::1] ref,
                  const int64_t[::1] tok_off, const int32_t[::1] toks,
                  const int64_t[::1] key_off, const int32_t[::1] keys,
                  int f1_mode, bint v2_f1, bint drop_empty,
                  double[::1] em_out, double[::1] f1_out, double[::1] sums):
    """Exact match and F1 of each row's prediction, max over its question's references.

    Row r scores string ``pred[r]`` against the strings ``ref[ref_off[q]:ref_off[q + 1]]`` of
    question ``q = row_q[r]`` (``row_q`` empty: q = r). A string s has F1 units
    ``toks[tok_off[s]:tok_off[s + 1]]`` (sorted for the bag F1, in order for the LCS F1) and
    exact-match key ``keys[key_off[s]:key_off[s + 1]]`` (its normalized form, as ids; empty iff
    the normalized string is empty).

    ``f1_mode``: 0 no F1, 1 bag (multiset) F1 of sorted units, 2 longest-common-substring
    F1, 3 bag F1 of units in any order, counted in tables indexed by unit id (for ids below a
    few million, such as code points). ``v2_f1``: an
    empty side scores ``float(pred_units == gold_units)``. ``drop_empty``: references with an
    empty key are skipped, and a question left with none is scored against "" (SQuAD v2.0).
    A question with no reference and no ``drop_empty`` scores 0 (the caller rejects it
    first). ``em_out``/``f1_out`` may be empty to skip that score; ``sums`` gets their
    sequential sums.
    """
    cdef Py_ssize_t n = pred.shape[0], r, q, g
    cdef int64_t p, gs, np_, ng, same, kept, maxlen = 0, s
    cdef bint want_em = em_out.shape[0] > 0, want_f1 = f1_mode != 0 and f1_out.shape[0] > 0
    # base pointers: an empty answer's slice may start one past the end of its buffer, which
    # is a valid pointer but not a valid memoryview index under the debug build's checks
    cdef const int32_t* key_base = &keys[0] if keys.shape[0] else NULL
    cdef const int32_t* tok_base = &toks[0] if toks.shape[0] else NULL
    cdef bint mapped = row_q.shape[0] > 0
    cdef double em, f, best_em, best_f, prec, rec, sum_em = 0.0, sum_f = 0.0
    cdef int64_t* row = NULL
    cdef int32_t* cnt = NULL
    cdef int32_t* used = NULL
    cdef int32_t t, take, vmax = -1
    cdef int64_t k
    if f1_mode == 3 and want_f1:
        for k in range(toks.shape[0]):
            if toks[k] > vmax:
                vmax = toks[k]
            elif toks[k] < 0:
                raise InputError("negative unit id")
        cnt = <int32_t*>calloc(vmax + 2, sizeof(int32_t))
        used = <int32_t*>calloc(vmax + 2, sizeof(int32_t))
        if cnt == NULL or used == NULL:
            free(cnt)
            free(used)
            raise MemoryError()
    if f1_mode == 2:
        for s in range(tok_off.shape[0] - 1):
            if tok_off[s + 1] - tok_off[s] > maxlen:
                maxlen = tok_off[s + 1] - tok_off[s]
        row = <int64_t*>malloc((maxlen + 1) * sizeof(int64_t))
        if row == NULL:
            raise MemoryError()
    try:
        with nogil:
            for r in range(n):
                # the strings' units are scattered by string id: fetch the offsets of the
                # question 8 ahead, then the units of the one 4 ahead (the loop otherwise
                # waits on the memory of each prediction and reference it reads)
                if r + 8 < n:
                    q = row_q[r + 8] if mapped else r + 8
                    AK_PREFETCH(&tok_off[pred[r + 8]])
                    for g in range(ref_off[q], ref_off[q + 1]):
                        AK_PREFETCH(&tok_off[ref[g]])
                if r + 4 < n and tok_base != NULL:
                    q = row_q[r + 4] if mapped else r + 4
                    AK_PREFETCH(tok_base + tok_off[pred[r + 4]])
                    for g in range(ref_off[q], ref_off[q + 1]):
                        AK_PREFETCH(tok_base + tok_off[ref[g]])
                q = row_q[r] if mapped else r
                p = pred[r]
                np_ = tok_off[p + 1] - tok_off[p]
                best_em = 0.0
                best_f = 0.0
                kept = 0
                if cnt != NULL:
                    for k in range(tok_off[p], tok_off[p + 1]):
                        cnt[toks[k]] += 1
                for g in range(ref_off[q], ref_off[q + 1]):
                    gs = ref[g]
                    if drop_empty and key_off[gs + 1] == key_off[gs]:
                        continue
                    if want_em:
                        em = 1.0 if _ak_equal(key_base + key_off[p], key_off[p + 1] - key_off[p],
                                              key_base + key_off[gs],
                                              key_off[gs + 1] - key_off[gs]) else 0.0
                        if kept == 0 or em > best_em:
                            best_em = em
                    if want_f1:
                        ng = tok_off[gs + 1] - tok_off[gs]
                        if v2_f1 and (np_ == 0 or ng == 0):
                            f = 1.0 if np_ == ng else 0.0
                        else:
                            if f1_mode == 3:
                                same = 0
                                for k in range(tok_off[gs], tok_off[gs + 1]):
                                    # no branch on whether the character is shared: it
                                    # was mispredicted about half the time
                                    t = toks[k]
                                    take = used[t] < cnt[t]
                                    used[t] += take
                                    same += take
                                for k in range(tok_off[gs], tok_off[gs + 1]):
                                    used[toks[k]] = 0
                            elif f1_mode == 1:
                                same = _ak_bag_same(tok_base + tok_off[p], np_,
                                                    tok_base + tok_off[gs], ng)
                            else:
                                same = _ak_lcs(tok_base + tok_off[gs], ng,
                                               tok_base + tok_off[p], np_, row)
                            if same == 0:
                                f = 0.0
                            else:
                                prec = 1.0 * same / np_
                                rec = 1.0 * same / ng
                                f = (2 * prec * rec) / (prec + rec)
                        if kept == 0 or f > best_f:
                            best_f = f
                    kept += 1
                if cnt != NULL:
                    for k in range(tok_off[p], tok_off[p + 1]):
                        cnt[toks[k]] = 0
                if kept == 0 and drop_empty:
                    # SQuAD v2.0: no reference left, so the gold is [""].
                    best_em = 1.0 if key_off[p + 1] == key_off[p] else 0.0
                    best_f = 1.0 if v2_f1 and np_ == 0 else 0.0
                if want_em:
                    em_out[r] = best_em
                    sum_em += best_em
                if want_f1:
                    f1_out[r] = best_f
                    sum_f += best_f
        sums[0] = sum_em
        sums[1] = sum_f
    finally:
        free(row)
        free(cnt)
        free(used)
