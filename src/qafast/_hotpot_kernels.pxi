# Kernels included by _kernels.pyx: HotpotQA's evaluation (qafast.hotpot).
#
# hotpot_scores walks the gold list once, looking up each question's predictions and scoring
# them as it meets them: the answer pair normalized as SQuAD normalizes (the shared
# _ak_squad_prepare/_ak_squad_spans) and compared token by token, the yes/no rule on top;
# the supporting facts counted pairwise when they are [title, sentence id] pairs of a str and
# an int. The predictions are read in their own order beside the gold's where the two agree
# (as files written by walking the gold do), with no hashing. hotpot_finish turns the counts
# into the script's values, adds the joint ones and sums them in the script's order. What
# the walk does not take (objects of other types, very long answers, facts of other forms) it
# says, and the caller scores with the general pieces: hotpot_answer_scores over the ids the
# shared SQuAD encoder made, and hotpot_sp_counts, which leaves facts of other forms to
# Python's own sets.

from cpython.long cimport PyLong_AsLongLongAndOverflow
from libc.math cimport NAN


cdef extern from *:
    """
    static inline const void* qafast_hp_list_items(PyObject* o) {
        return (const void*)((PyListObject*)o)->ob_item;
    }
    """
    const void* _hp_list_items "qafast_hp_list_items"(PyObject* o) noexcept


cdef inline void _hp_prefetch_fields(list gold, Py_ssize_t i) noexcept:
    """Fetch the keys and values of gold entry i's fields (a lookup compares the key it
    finds, and the id is read next), walking its table: the first 16 (a question has a
    handful)."""
    cdef PyObject* o
    cdef PyObject* k
    cdef PyObject* v
    cdef Py_ssize_t pos = 0
    cdef int m = 0
    if i < PyList_GET_SIZE(gold):
        o = _ak_list_item(gold, i)
        if _enc_is_dict(o):
            while m < 16 and _enc_dict_next(<object>o, &pos, &k, &v):
                m += 1
                AK_PREFETCH(k)
                AK_PREFETCH(v)


cdef inline PyObject* _hp_lookup(dict d, PyObject* qid, Py_ssize_t* pos,
                                 Py_ssize_t* ahead) except? NULL:
    """d.get(qid), borrowed (NULL where absent), reading d in its own order first: when the
    key at pos[0] is qid (predictions written in the gold's order), it is the one and the
    walk moves on, with no hashing and the next keys fetched ahead (ahead[0]: the position
    of the walk that fetches); else an ordinary lookup, the walk staying where it is."""
    cdef PyObject* k
    cdef PyObject* v
    cdef PyObject* ka
    cdef PyObject* va
    cdef Py_ssize_t at = pos[0]
    if _enc_dict_next(d, &at, &k, &v) and _ak_same_key(k, qid):
        pos[0] = at
        if ahead[0] < at:
            ahead[0] = at
        while ahead[0] < at + 8 and _enc_dict_next(d, ahead, &ka, &va):
            AK_PREFETCH(ka)
            AK_PREFETCH(va)
        return v
    return PyDict_GetItemWithError(d, <object>qid)


# facts a question may have on a side and still be counted here (pairwise, with no hashing)
cdef enum:
    _HP_MAX_FACTS = 64


cdef int _hp_facts(object side, PyObject** titles, int64_t* sids) except -2:
    """The distinct [title, sentence id] pairs of one side into titles/sids: their number,
    or -1 when the side is not a list or tuple of such pairs (a str title and an int sid
    within int64) of at most _HP_MAX_FACTS items."""
    cdef Py_ssize_t k, m, j
    cdef int count = 0, overflow = 0
    cdef object fact, title, sid
    cdef int64_t v
    cdef bint seen
    if type(side) is list:
        m = PyList_GET_SIZE(side)
    elif type(side) is tuple:
        m = len(<tuple>side)
    else:
        return -1
    if m > _HP_MAX_FACTS:
        return -1
    for k in range(m):
        fact = (<list>side)[k] if type(side) is list else (<tuple>side)[k]
        if type(fact) is list:
            if PyList_GET_SIZE(fact) != 2:
                return -1
            title = (<list>fact)[0]
            sid = (<list>fact)[1]
        elif type(fact) is tuple:
            if len(<tuple>fact) != 2:
                return -1
            title = (<tuple>fact)[0]
            sid = (<tuple>fact)[1]
        else:
            return -1
        if type(title) is not str or type(sid) is not int:
            return -1
        v = PyLong_AsLongLongAndOverflow(sid, &overflow)
        if overflow:
            return -1
        seen = False
        for j in range(count):
            if sids[j] == v and _ak_same_str(titles[j], <PyObject*>title):
                seen = True
                break
        if not seen:
            titles[count] = <PyObject*>title
            sids[count] = v
            count += 1
    return count


# a question's answer pair with more token pairs than this is scored by the caller (over
# interned ids, where the bag overlap is a merge of sorted lists)
cdef enum:
    _HP_PAIRWISE = 4096


def hotpot_scores(list gold, dict answers, dict facts, uint8_t[::1] state,
                  double[:, ::1] out):
    """Walk the gold entries in order, scoring each as the walk meets it.

    ``state[i]`` gets bit 1 when question i's answer is predicted, bit 2 when its facts are,
    bit 4 when its answer is left to the caller (more than _HP_PAIRWISE token pairs), bit 8
    when its facts are (not all [str, int] pairs); ``out[i, 0:4]`` gets the answer's exact
    match, F1, precision and recall, ``out[i, 4:7]`` the facts' true positives, false
    positives and false negatives (as floats), where scored here.

    Returns -1, or the position of the first entry this walk does not take (an entry that
    is not a dict, an id that is not a str, a field missing or None, an answer that is not
    a str): the caller's general walk then reads the gold list and says what is wrong."""
    cdef Py_ssize_t n = len(gold), i, j, k
    cdef object entry, qid, a, g, f, gf
    cdef uint8_t s
    cdef _AkWork wp, wg
    cdef PyObject* pt[_HP_MAX_FACTS]
    cdef PyObject* gt[_HP_MAX_FACTS]
    cdef int64_t ps[_HP_MAX_FACTS]
    cdef int64_t gs[_HP_MAX_FACTS]
    cdef int np_, ng, tp, x, y
    # the objects met, borrowed from the caller's containers (no code of the caller's runs
    # while they are read): first every lookup, then the answers, then the facts, each pass
    # fetching the memory of the questions ahead (the objects lie scattered in memory, and
    # one pass doing everything waited on each of them in turn)
    cdef PyObject** objs = NULL
    cdef Py_ssize_t apos = 0, aahead = 0, fpos = 0, fahead = 0
    cdef PyObject** ans_p
    cdef PyObject** ans_g
    cdef PyObject** sp_p
    cdef PyObject** sp_g
    cdef PyObject* o
    if state.shape[0] != n or out.shape[0] != n or out.shape[1] < 7:
        raise InputError("one state and one row of seven outputs per gold entry are expected")
    memset(&wp, 0, sizeof(_AkWork))
    memset(&wg, 0, sizeof(_AkWork))
    objs = <PyObject**>calloc(4 * n + 4, sizeof(PyObject*))
    if objs == NULL:
        raise MemoryError()
    ans_p, ans_g, sp_p, sp_g = objs, objs + n, objs + 2 * n, objs + 3 * n
    try:
        for i in range(n):
            # each entry's memory fetched in steps ahead of its turn: its object, then its
            # keys and values (the lookups below then wait on none). Fetching its table of
            # keys too (PyDictObject.ma_keys, a private read) was measured and gave nothing.
            if i + 8 < n:
                AK_PREFETCH(PyList_GET_ITEM(gold, i + 8))
            _hp_prefetch_fields(gold, i + 4)
            entry = gold[i]
            if type(entry) is not dict:
                return i
            o = PyDict_GetItemWithError(entry, "_id")
            if o == NULL or not _ak_is_exact_str(o):
                return i
            qid = <object>o
            s = 0
            o = _hp_lookup(answers, o, &apos, &aahead)
            if o != NULL:
                if o == <PyObject*>None:
                    return i
                a = <object>o
                g = (<dict>entry).get("answer")
                if type(a) is not str or type(g) is not str:
                    return i
                s |= 1
                ans_p[i] = <PyObject*>a
                ans_g[i] = <PyObject*>g
            o = _hp_lookup(facts, <PyObject*>qid, &fpos, &fahead)
            if o != NULL:
                if o == <PyObject*>None:
                    return i
                f = <object>o
                gf = (<dict>entry).get("supporting_facts")
                if gf is None:
                    return i
                s |= 2
                sp_p[i] = <PyObject*>f
                sp_g[i] = <PyObject*>gf
            state[i] = s
        entry = qid = a = g = f = gf = None
        for i in range(n):
            if i + 6 < n and ans_p[i + 6] != NULL:
                AK_PREFETCH(ans_p[i + 6])
                AK_PREFETCH(<char*>ans_p[i + 6] + 64)
                AK_PREFETCH(ans_g[i + 6])
                AK_PREFETCH(<char*>ans_g[i + 6] + 64)
            if ans_p[i] != NULL and _hp_answer(<str>ans_p[i], <str>ans_g[i], &wp, &wg,
                                               &out[i, 0]):
                state[i] |= 4
        for i in range(n):
            if i + 8 < n and sp_p[i + 8] != NULL:
                AK_PREFETCH(sp_p[i + 8])
                AK_PREFETCH(sp_g[i + 8])
            # then down the chain, a level a step: each side's item array, its facts (lists),
            # their item arrays, their titles
            if i + 5 < n and sp_p[i + 5] != NULL:
                _hp_prefetch_items(sp_p[i + 5], 0)
                _hp_prefetch_items(sp_g[i + 5], 0)
            if i + 3 < n and sp_p[i + 3] != NULL:
                _hp_prefetch_items(sp_p[i + 3], 1)
                _hp_prefetch_items(sp_g[i + 3], 1)
            if i + 2 < n and sp_p[i + 2] != NULL:
                _hp_prefetch_items(sp_p[i + 2], 2)
                _hp_prefetch_items(sp_g[i + 2], 2)
            if i + 1 < n and sp_p[i + 1] != NULL:
                _hp_prefetch_items(sp_p[i + 1], 3)
                _hp_prefetch_items(sp_g[i + 1], 3)
            if sp_p[i] == NULL:
                continue
            np_ = _hp_facts(<object>sp_p[i], pt, ps)
            ng = _hp_facts(<object>sp_g[i], gt, gs) if np_ >= 0 else -1
            if ng < 0:
                state[i] |= 8
                continue
            tp = 0
            for x in range(np_):
                for y in range(ng):
                    if ps[x] == gs[y] and _ak_same_str(pt[x], gt[y]):
                        tp += 1
                        break
            out[i, 4] = tp
            out[i, 5] = np_ - tp
            out[i, 6] = ng - tp
    finally:
        free(objs)
        _ak_work_free(&wp)
        _ak_work_free(&wg)
    return -1


cdef inline void _hp_prefetch_items(PyObject* side, int level) noexcept:
    """Fetch, for a list of facts: its item array (level 0), its first four facts (1),
    their item arrays (2) or their titles (3), each level read from memory the level
    before fetched."""
    cdef Py_ssize_t k, m
    cdef PyObject* fact
    if not _ak_is_list(side):
        return
    m = _ak_list_len(side)
    if m == 0:
        return
    if level == 0:
        AK_PREFETCH(_hp_list_items(side))
        return
    for k in range(min(m, 4)):
        fact = _ak_list_at(side, k)
        if level == 1:
            AK_PREFETCH(fact)
        elif _ak_is_list(fact) and _ak_list_len(fact) > 0:
            if level == 2:
                AK_PREFETCH(_hp_list_items(fact))
            else:
                AK_PREFETCH(_ak_list_at(fact, 0))


cdef inline bint _hp_token_eq(const _AkWork* wa, Py_ssize_t a, const _AkWork* wb,
                              Py_ssize_t b) noexcept nogil:
    """Token a of wa equals token b of wb."""
    cdef Py_ssize_t a0 = wa.spans[2 * a], a1 = wa.spans[2 * a + 1]
    cdef Py_ssize_t b0 = wb.spans[2 * b], b1 = wb.spans[2 * b + 1]
    return a1 - a0 == b1 - b0 and memcmp(wa.cp + a0, wb.cp + b0,
                                         (a1 - a0) * sizeof(Py_UCS4)) == 0


cdef inline bint _hp_is(const _AkWork* w, const char* word, Py_ssize_t n) noexcept nogil:
    """The one token of w is the ASCII word of n letters."""
    cdef Py_ssize_t j, a0 = w.spans[0]
    if w.spans[1] - a0 != n:
        return False
    for j in range(n):
        if w.cp[a0 + j] != <Py_UCS4>word[j]:
            return False
    return True


cdef inline bint _hp_special_tokens(const _AkWork* w, Py_ssize_t nt) noexcept nogil:
    return nt == 1 and (_hp_is(w, "yes", 3) or _hp_is(w, "no", 2) or _hp_is(w, "noanswer", 8))


cdef int _hp_answer(str p, str g, _AkWork* wp, _AkWork* wg, double* row) except -1:
    """Exact match, F1, precision and recall of answer p against gold g into row[0:4];
    returns 1 (row untouched) when the pair has more than _HP_PAIRWISE token pairs."""
    cdef Py_ssize_t ntp, ntg
    ntp = _ak_squad_spans(wp, _ak_squad_prepare(p, wp))
    if _ak_same_str(<PyObject*>p, <PyObject*>g):   # (exact strs: the walk checked)
        _hp_same_answer(ntp, row)
        return 0
    ntg = _ak_squad_spans(wg, _ak_squad_prepare(g, wg))
    return _hp_token_scores(wp, ntp, wg, ntg, row)


cdef inline void _hp_same_answer(Py_ssize_t ntp, double* row) noexcept nogil:
    """row[0:4] of an answer given as the gold's very text (of ntp normalized tokens)."""
    # the same text: the same tokens, all shared (1.0 * n / n is 1.0, and so is F1)
    row[0] = 1.0
    row[1] = row[2] = row[3] = 1.0 if ntp else 0.0


cdef int _hp_token_scores(const _AkWork* wp, Py_ssize_t ntp, const _AkWork* wg,
                          Py_ssize_t ntg, double* row) noexcept nogil:
    """Exact match, F1, precision and recall of the normalized tokens of wp (ntp of them)
    against those of wg into row[0:4]; returns 1 (row untouched) when there are more than
    _HP_PAIRWISE token pairs."""
    cdef Py_ssize_t a, b, same = 0
    cdef bint equal
    cdef uint8_t used[_HP_PAIRWISE + 1]
    cdef double pr, rc
    if ntp * ntg > _HP_PAIRWISE:
        return 1
    equal = ntp == ntg
    a = 0
    while equal and a < ntp:
        equal = _hp_token_eq(wp, a, wg, a)
        a += 1
    row[0] = 1.0 if equal else 0.0
    if ntp and ntg and (equal or not (_hp_special_tokens(wp, ntp)
                                      or _hp_special_tokens(wg, ntg))):
        # the multiset overlap: each predicted token takes the first unused equal gold one
        memset(used, 0, ntg)
        for a in range(ntp):
            for b in range(ntg):
                if not used[b] and _hp_token_eq(wp, a, wg, b):
                    used[b] = 1
                    same += 1
                    break
    if same == 0:
        row[1] = 0.0
        row[2] = 0.0
        row[3] = 0.0
    else:
        pr = 1.0 * same / ntp
        rc = 1.0 * same / ntg
        row[1] = (2 * pr * rc) / (pr + rc)
        row[2] = pr
        row[3] = rc
    return 0


def hotpot_finish(const uint8_t[::1] state, double[:, ::1] out, double[::1] sums):
    """From each row's answer scores ``out[i, 0:4]`` and fact counts ``out[i, 4:7]``, the
    twelve per-question values in place (facts: exact match, F1, precision, recall; then
    the joint four), NaN where nothing is predicted, each added to its column's running
    sum in ``sums`` row by row, NaN skipped: the script's ``+=`` loop, continued from the
    sums given (zeros for one call)."""
    cdef Py_ssize_t n = state.shape[0], i, k
    cdef uint8_t s
    cdef double tp, fp, fn, pr, rc, jp, jr
    if out.shape[0] != n or out.shape[1] != 12 or sums.shape[0] != 12:
        raise InputError("one row of twelve outputs per state and twelve sums are expected")
    with nogil:
        for i in range(n):
            s = state[i]
            if s & 1:
                for k in range(4):
                    sums[k] += out[i, k]
            else:
                for k in range(4):
                    out[i, k] = NAN
            if s & 2:
                tp = out[i, 4]
                fp = out[i, 5]
                fn = out[i, 6]
                pr = 1.0 * tp / (tp + fp) if tp + fp > 0 else 0.0
                rc = 1.0 * tp / (tp + fn) if tp + fn > 0 else 0.0
                out[i, 4] = 1.0 if fp + fn == 0 else 0.0
                out[i, 5] = 2 * pr * rc / (pr + rc) if pr + rc > 0 else 0.0
                out[i, 6] = pr
                out[i, 7] = rc
                for k in range(4, 8):
                    sums[k] += out[i, k]
            else:
                for k in range(4, 8):
                    out[i, k] = NAN
            if (s & 3) == 3:
                jp = out[i, 2] * out[i, 6]
                jr = out[i, 3] * out[i, 7]
                out[i, 8] = out[i, 0] * out[i, 4]
                out[i, 9] = 2 * jp * jr / (jp + jr) if jp + jr > 0 else 0.0
                out[i, 10] = jp
                out[i, 11] = jr
                for k in range(8, 12):
                    sums[k] += out[i, k]
            else:
                for k in range(8, 12):
                    out[i, k] = NAN
    return None


def hotpot_answer_scores(const int32_t[::1] pred, const int32_t[::1] ref,
                         const int64_t[::1] tok_off, const int32_t[::1] toks,
                         const int64_t[::1] key_off, const int32_t[::1] keys,
                         const int32_t[::1] special, double[::1] em, double[::1] f1,
                         double[::1] prec, double[::1] rec):
    """Exact match, F1, precision and recall of answer ``pred[r]`` against answer ``ref[r]``.

    A string s has its sorted token ids ``toks[tok_off[s]:tok_off[s + 1]]`` and its
    normalized form as ids ``keys[key_off[s]:key_off[s + 1]]`` (SQuAD's encoding).
    ``special`` holds the token ids of "yes", "no" and "noanswer": a string of that one
    token scores 0 against any other string (exact match aside)."""
    cdef Py_ssize_t n = pred.shape[0], r
    cdef int64_t p, g, np_, ng, same
    cdef const int32_t* key_base = &keys[0] if keys.shape[0] else NULL
    cdef const int32_t* tok_base = &toks[0] if toks.shape[0] else NULL
    cdef bint equal
    cdef double pr, rc
    if (ref.shape[0] != n or em.shape[0] != n or f1.shape[0] != n or prec.shape[0] != n
            or rec.shape[0] != n):
        raise InputError("one reference and one output slot per prediction are expected")
    if special.shape[0] != 3:
        raise InputError("three special token ids are expected")
    with nogil:
        for r in range(n):
            p = pred[r]
            g = ref[r]
            equal = _ak_equal(key_base + key_off[p], key_off[p + 1] - key_off[p],
                              key_base + key_off[g], key_off[g + 1] - key_off[g])
            em[r] = 1.0 if equal else 0.0
            np_ = tok_off[p + 1] - tok_off[p]
            ng = tok_off[g + 1] - tok_off[g]
            same = 0
            if equal or not (_hp_special(tok_base, tok_off[p], np_, special)
                             or _hp_special(tok_base, tok_off[g], ng, special)):
                same = _ak_bag_same(tok_base + tok_off[p], np_, tok_base + tok_off[g], ng)
            if same == 0:
                f1[r] = 0.0
                prec[r] = 0.0
                rec[r] = 0.0
            else:
                pr = 1.0 * same / np_
                rc = 1.0 * same / ng
                prec[r] = pr
                rec[r] = rc
                f1[r] = (2 * pr * rc) / (pr + rc)
    return None


cdef inline bint _hp_special(const int32_t* toks, int64_t at, int64_t n,
                             const int32_t[::1] special) noexcept nogil:
    return n == 1 and (toks[at] == special[0] or toks[at] == special[1]
                       or toks[at] == special[2])


def hotpot_sp_counts(list pred, list gold, int64_t[:, ::1] counts):
    """``counts[i] = (tp, fp, fn)`` of question i's predicted facts ``pred[i]`` against its
    gold facts ``gold[i]``, each side taken as a set of (title, sentence id) pairs; tp is -1
    for a question whose facts are not all [str, int] pairs (the caller counts those with
    Python's sets). Returns how many questions were left to the caller."""
    cdef Py_ssize_t n = len(pred), i, a, b
    cdef PyObject* pt[_HP_MAX_FACTS]
    cdef PyObject* gt[_HP_MAX_FACTS]
    cdef int64_t ps[_HP_MAX_FACTS]
    cdef int64_t gs[_HP_MAX_FACTS]
    cdef int np_, ng, tp
    cdef Py_ssize_t left = 0
    if len(gold) != n or counts.shape[0] != n or counts.shape[1] != 3:
        raise InputError("one gold side and one row of three counts per question are expected")
    for i in range(n):
        np_ = _hp_facts(pred[i], pt, ps)
        ng = _hp_facts(gold[i], gt, gs) if np_ >= 0 else -1
        if ng < 0:
            counts[i, 0] = -1
            left += 1
            continue
        tp = 0
        for a in range(np_):
            for b in range(ng):
                if ps[a] == gs[b] and _ak_same_str(pt[a], gt[b]):
                    tp += 1
                    break
        counts[i, 0] = tp
        counts[i, 1] = np_ - tp
        counts[i, 2] = ng - tp
    return left
