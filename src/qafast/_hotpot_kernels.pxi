# Kernels included by _kernels.pyx: HotpotQA's evaluation (qafast.hotpot).
#
# Three steps, each a fast path the Python layer falls back from: hotpot_walk reads the gold
# list and looks up each question's predictions (exactly-typed JSON objects only);
# hotpot_answer_scores scores the answers over the ids the shared SQuAD encoder made (the
# yes/no rule on top of the bag F1, with precision and recall kept); hotpot_sp_counts counts
# the true/false positives and false negatives of each question's supporting facts when they
# are [title, sentence id] pairs of a str and an int. What these do not take, they say, and
# the caller computes it with Python's own sets.

from cpython.long cimport PyLong_AsLongLongAndOverflow


def hotpot_walk(list gold, dict answers, dict facts, list pred_texts, list gold_texts,
                list pred_sp, list gold_sp, uint8_t[::1] state):
    """Walk the gold entries in order: ``state[i]`` gets bit 1 when question i's answer is
    predicted and bit 2 when its facts are; the predicted answer and the gold one are
    appended to ``pred_texts``/``gold_texts``, the predicted and gold facts to
    ``pred_sp``/``gold_sp`` (each in gold order, for the questions that have them).

    Returns -1, or the position of the first entry this walk does not take (an entry that
    is not a dict, an id that is not a str, a field missing, an answer that is not a str):
    the caller's general walk then reads the gold list and says what is wrong."""
    cdef Py_ssize_t n = len(gold), i
    cdef object entry, qid, a, g, f, gf
    cdef uint8_t s
    if state.shape[0] != n:
        raise InputError("one state per gold entry is expected")
    for i in range(n):
        entry = gold[i]
        if type(entry) is not dict:
            return i
        qid = (<dict>entry).get("_id")
        if type(qid) is not str:
            return i
        s = 0
        a = answers.get(qid)
        if a is not None:
            g = (<dict>entry).get("answer")
            if type(a) is not str or type(g) is not str:
                return i
            pred_texts.append(a)
            gold_texts.append(g)
            s |= 1
        elif qid in answers:
            return i
        f = facts.get(qid)
        if f is not None:
            gf = (<dict>entry).get("supporting_facts")
            if gf is None:
                return i
            pred_sp.append(f)
            gold_sp.append(gf)
            s |= 2
        elif qid in facts:
            return i
        state[i] = s
    return -1


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
            if sids[j] == v and (titles[j] == <PyObject*>title
                                 or <str>titles[j] == <str>title):
                seen = True
                break
        if not seen:
            titles[count] = <PyObject*>title
            sids[count] = v
            count += 1
    return count


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
                if ps[a] == gs[b] and (pt[a] == gt[b] or <str>pt[a] == <str>gt[b]):
                    tp += 1
                    break
        counts[i, 0] = tp
        counts[i, 1] = np_ - tp
        counts[i, 2] = ng - tp
    return left
