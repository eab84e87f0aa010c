# ---------------------------------------------------------------------------------------------
# `qafast mlqa DATA PRED LANG` straight from the two files' bytes (qafast.multilingual_eval)
#
# The command needs, of the files, only which answer strings each predicted question compares
# and the ids of the questions without a prediction. MlqaFiles scans both files with the
# scans of _squad_scan.pxi (the same plain form accepted, anything else declined), decodes the
# kept strings into one array of code points, finds each question's prediction, and interns
# the answer strings of the predicted questions by their code points: no str object is made
# for an answer or an id (making them, and the dict of the predictions, took most of the
# command's time). Each distinct string is then normalized as MLQA's normalize_answer does,
# in one pass: lowered through a table of code points the Python layer made with str.lower
# (the one context-dependent case, U+03A3, is left to the general path), its punctuation
# dropped, its articles removed, its tokens interned. The specification is
# qafast.reference.answers.normalize_mlqa; the scoring then is answer_scores'.
# ---------------------------------------------------------------------------------------------


cdef enum:
    # MlqaFiles.tokens' fold table: above _ML_SEP (no code point), for what one lookup cannot say
    _ML_MULTI = 0x110001   # lowers to several code points (or to what is no code point)
    _ML_NOLOW = 0x110002   # has no lowering: the caller's tables lack it


cdef inline uint64_t _mf_hash(const uint32_t* p, int64_t n) noexcept nogil:
    # _ml_hash, with the length mixed in (no string is a prefix of another in one probe)
    return _ml_hash(p, n) ^ (<uint64_t>n * 0x9E3779B97F4A7C15ULL)


cdef inline bint _mf_same(const uint32_t* a, const uint32_t* b, int64_t n) noexcept nogil:
    return memcmp(a, b, n * sizeof(uint32_t)) == 0


cdef class MlqaFiles:
    """The questions of an MLQA dataset file and the predictions of a predictions file, read
    from their bytes without making a str per id or answer.

    ``MlqaFiles(data, preds, scanstring)``: ``plain`` is False where either file is not of
    the plain form the SQuAD scans read (then nothing else may be used: the caller reads
    the files with json.loads). Otherwise ``nquestions`` (in file order, a repeated id
    counted each time), ``ngold`` (their answer texts), ``has_version`` and ``version``
    (the dataset's "version" string, None where null or absent) are set, and each
    question's prediction (the last text the predictions give its id) is found.
    """

    cdef readonly bint plain
    cdef readonly Py_ssize_t nquestions, ngold, nstrings, string_cps
    cdef readonly bint has_version
    cdef readonly object version
    cdef uint32_t* cps         # every kept string's code points, one after the other
    cdef int64_t* q_id         # per question: (start, length) of its id in cps
    cdef int64_t* q_pred       # per question: (start, length) of its prediction, length -1: none
    cdef int64_t* q_gold_off   # per question: its answers are gold[q_gold_off[q]:...[q + 1]]
    cdef int64_t* gold         # per answer: (start, length)
    cdef int64_t* str_span     # per interned string: (start, length)

    def __cinit__(self, *args, **kwargs):
        self.cps = NULL
        self.q_id = NULL
        self.q_pred = NULL
        self.q_gold_off = NULL
        self.gold = NULL
        self.str_span = NULL
        self.plain = False

    def __dealloc__(self):
        free(self.cps)
        free(self.q_id)
        free(self.q_pred)
        free(self.q_gold_off)
        free(self.gold)
        free(self.str_span)

    def __init__(self, const unsigned char[::1] data, const unsigned char[::1] preds,
                 object scanstring):
        cdef const unsigned char* ds = &data[0] if data.shape[0] else NULL
        cdef const unsigned char* ps = &preds[0] if preds.shape[0] else NULL
        cdef Py_ssize_t nd = data.shape[0], npb = preds.shape[0], r1 = -1, r2 = -1, k
        cdef _HsEvents de, pe
        cdef int64_t kind, room = 0, m = 0, nq = 0, ng = 0, npred = 0, cap, slot, j, qi, gi
        cdef int64_t* tab = NULL       # per slot: a prediction's index, or -1
        cdef uint64_t* ph = NULL       # per prediction: the hash of its id
        cdef uint64_t* qh = NULL       # per question: the hash of its id
        cdef int64_t v, tag
        cdef int64_t* pid = NULL       # per prediction: (start, length) of its id
        cdef int64_t* ptext = NULL     # per prediction: (start, length) of its text
        cdef uint64_t h
        cdef int64_t a, ln
        if self.cps != NULL:
            raise InputError("MlqaFiles is read once")
        memset(&de, 0, sizeof(_HsEvents))
        memset(&pe, 0, sizeof(_HsEvents))
        try:
            if nd == 0 or npb == 0:
                return
            with nogil:
                r1 = _sq_dataset_events(ds, nd, &de)
                if r1 >= 0:
                    r2 = _sq_prediction_events(ps, npb, &pe)
            if r1 < 0 or r2 < 0:
                return
            for k in range(de.n):
                kind = de.ev[4 * k]
                if kind == _SQ_VERSION:
                    self.has_version = True
                    self.version = _hs_string(ds, de.ev + 4 * k, scanstring)
                elif kind == _SQ_VERSION_NULL:
                    self.has_version = True
                    self.version = None
                elif kind == _SQ_QUESTION:
                    nq += 1
                    room += de.ev[4 * k + 2] - de.ev[4 * k + 1]
                elif kind == _SQ_TEXT:
                    ng += 1
                    room += de.ev[4 * k + 2] - de.ev[4 * k + 1]
            for k in range(pe.n):
                room += pe.ev[4 * k + 2] - pe.ev[4 * k + 1]
            npred = pe.n // 2
            if npred >= 0x7FFFFFFF:
                return   # (more than a slot's 31 bits of index: the general path reads it)
            # a string has at most as many code points as bytes
            self.cps = <uint32_t*>malloc((room + 1) * sizeof(uint32_t))
            self.q_id = <int64_t*>malloc((2 * nq + 1) * sizeof(int64_t))
            self.q_pred = <int64_t*>malloc((2 * nq + 1) * sizeof(int64_t))
            self.q_gold_off = <int64_t*>malloc((nq + 1) * sizeof(int64_t))
            self.gold = <int64_t*>malloc((2 * ng + 1) * sizeof(int64_t))
            cap = 64
            while cap < 2 * npred + 2:
                cap *= 2
            tab = <int64_t*>malloc(cap * sizeof(int64_t))
            ph = <uint64_t*>malloc((npred + 1) * sizeof(uint64_t))
            qh = <uint64_t*>malloc((nq + 1) * sizeof(uint64_t))
            pid = <int64_t*>malloc((2 * npred + 1) * sizeof(int64_t))
            ptext = <int64_t*>malloc((2 * npred + 1) * sizeof(int64_t))
            if self.cps == NULL or self.q_id == NULL or self.q_pred == NULL \
                    or self.q_gold_off == NULL or self.gold == NULL or tab == NULL \
                    or ph == NULL or qh == NULL or pid == NULL or ptext == NULL:
                raise MemoryError()
            with nogil:
                # the dataset's ids and answer texts, decoded as json.loads decodes them
                qi = 0
                gi = 0
                for k in range(de.n):
                    kind = de.ev[4 * k]
                    if kind == _SQ_QUESTION:
                        ln = _json_unescape(ds, de.ev[4 * k + 1] + 1, de.ev[4 * k + 2] - 1,
                                          <Py_UCS4*>(self.cps + m))
                        self.q_id[2 * qi] = m
                        self.q_id[2 * qi + 1] = ln
                        self.q_gold_off[qi] = gi
                        m += ln
                        qi += 1
                    elif kind == _SQ_TEXT:
                        ln = _json_unescape(ds, de.ev[4 * k + 1] + 1, de.ev[4 * k + 2] - 1,
                                          <Py_UCS4*>(self.cps + m))
                        self.gold[2 * gi] = m
                        self.gold[2 * gi + 1] = ln
                        m += ln
                        gi += 1
                self.q_gold_off[nq] = ng
                # the predictions: each id's last text, as json.loads keeps it. The ids are
                # decoded and hashed first, in one sequential pass, so that the probes below
                # can fetch their slots ahead (the table is far larger than the cache); a slot
                # holds the hash's top bits beside the index, so that a probe reads no other
                # array unless they agree
                for slot in range(cap):
                    tab[slot] = -1
                for j in range(npred):
                    ln = _json_unescape(ps, pe.ev[8 * j + 1] + 1, pe.ev[8 * j + 2] - 1,
                                      <Py_UCS4*>(self.cps + m))
                    pid[2 * j] = m
                    pid[2 * j + 1] = ln
                    m += ln
                    ln = _json_unescape(ps, pe.ev[8 * j + 5] + 1, pe.ev[8 * j + 6] - 1,
                                      <Py_UCS4*>(self.cps + m))
                    ptext[2 * j] = m
                    ptext[2 * j + 1] = ln
                    m += ln
                    ph[j] = _mf_hash(self.cps + pid[2 * j], pid[2 * j + 1])
                for j in range(npred):
                    if j + 8 < npred:
                        AK_PREFETCH(&tab[ph[j + 8] & <uint64_t>(cap - 1)])
                    h = ph[j]
                    tag = <int64_t>(h >> 33)     # (31 bits: a slot in use is >= 0)
                    slot = <int64_t>(h & <uint64_t>(cap - 1))
                    while True:
                        v = tab[slot]
                        if v < 0:
                            tab[slot] = (tag << 32) | j
                            break
                        if (v >> 32) == tag:
                            a = v & 0x7FFFFFFF
                            if pid[2 * a + 1] == pid[2 * j + 1] and _mf_same(
                                    self.cps + pid[2 * a], self.cps + pid[2 * j], pid[2 * j + 1]):
                                ptext[2 * a] = ptext[2 * j]        # the last text counts
                                ptext[2 * a + 1] = ptext[2 * j + 1]
                                break
                        slot = (slot + 1) & (cap - 1)
                # each question's prediction (the hashes first, as above)
                for qi in range(nq):
                    qh[qi] = _mf_hash(self.cps + self.q_id[2 * qi], self.q_id[2 * qi + 1])
                for qi in range(nq):
                    if qi + 8 < nq:
                        AK_PREFETCH(&tab[qh[qi + 8] & <uint64_t>(cap - 1)])
                    a = self.q_id[2 * qi]
                    ln = self.q_id[2 * qi + 1]
                    h = qh[qi]
                    tag = <int64_t>(h >> 33)
                    slot = <int64_t>(h & <uint64_t>(cap - 1))
                    self.q_pred[2 * qi] = 0
                    self.q_pred[2 * qi + 1] = -1
                    while True:
                        v = tab[slot]
                        if v < 0:
                            break
                        if (v >> 32) == tag:
                            j = v & 0x7FFFFFFF
                            if pid[2 * j + 1] == ln and _mf_same(self.cps + pid[2 * j],
                                                                 self.cps + a, ln):
                                self.q_pred[2 * qi] = ptext[2 * j]
                                self.q_pred[2 * qi + 1] = ptext[2 * j + 1]
                                break
                        slot = (slot + 1) & (cap - 1)
            self.nquestions = nq
            self.ngold = ng
            self.plain = True
        finally:
            free(de.ev)
            free(pe.ev)
            free(tab)
            free(ph)
            free(qh)
            free(pid)
            free(ptext)

    def intern(self, int32_t[::1] pred_sid, int64_t[::1] ref_off, int32_t[::1] ref_sid):
        """Intern the prediction and the answer texts of every predicted question: question
        q's prediction is string ``pred_sid[q]`` (-1: no prediction) and its answers strings
        ``ref_sid[ref_off[q]:ref_off[q + 1]]`` (-1 where q has no prediction). Ids follow
        first appearance. Sets ``nstrings`` and ``string_cps`` (their total length) and
        returns the distinct code points above ASCII of those strings, in increasing
        order."""
        cdef int64_t nq = self.nquestions, ng = self.ngold, q, g, cap, slot, a, ln, ns = 0
        cdef int64_t total = 0, i, e = 0, nvis, v, tag
        cdef int64_t* tab = NULL       # per slot: -1, or the hash's top bits << 32 | string id
        cdef uint64_t* hs = NULL       # per string looked up, in order: its hash
        cdef uint8_t* seen = NULL
        cdef uint32_t c, top = 0
        cdef int32_t sid
        cdef uint64_t h
        cdef list wide = []
        if not self.plain or self.str_span != NULL:
            raise InputError("MlqaFiles.intern: the files were not read, or were interned")
        if pred_sid.shape[0] != nq or ref_off.shape[0] != nq + 1 or ref_sid.shape[0] != ng:
            raise InputError("MlqaFiles.intern: the outputs do not fit the questions")
        if nq + ng >= 0x7FFFFFFF:
            raise InputError("MlqaFiles.intern: more answer strings than string ids")
        cap = 64
        while cap < 2 * (nq + ng) + 2:
            cap *= 2
        self.str_span = <int64_t*>malloc((2 * (nq + ng) + 1) * sizeof(int64_t))
        tab = <int64_t*>malloc(cap * sizeof(int64_t))
        hs = <uint64_t*>malloc((nq + ng + 1) * sizeof(uint64_t))
        seen = <uint8_t*>calloc(_ML_SEP, 1)
        if self.str_span == NULL or tab == NULL or hs == NULL or seen == NULL:
            free(tab)
            free(hs)
            free(seen)
            raise MemoryError()
        try:
            with nogil:
                for slot in range(cap):
                    tab[slot] = -1
                # the hashes first, in one sequential pass over the code points, so that the
                # probes below can fetch their slots ahead (the table is far larger than the
                # cache: each probe otherwise waits on memory)
                for q in range(nq):
                    if self.q_pred[2 * q + 1] < 0:
                        continue
                    hs[e] = _mf_hash(self.cps + self.q_pred[2 * q], self.q_pred[2 * q + 1])
                    e += 1
                    for g in range(self.q_gold_off[q], self.q_gold_off[q + 1]):
                        hs[e] = _mf_hash(self.cps + self.gold[2 * g], self.gold[2 * g + 1])
                        e += 1
                nvis = e
                e = 0
                for q in range(nq):
                    ref_off[q] = self.q_gold_off[q]
                    if self.q_pred[2 * q + 1] < 0:
                        pred_sid[q] = -1
                        for g in range(self.q_gold_off[q], self.q_gold_off[q + 1]):
                            ref_sid[g] = -1
                        continue
                    # the prediction (g below the answers' first), then the answers
                    for g in range(self.q_gold_off[q] - 1, self.q_gold_off[q + 1]):
                        if g < self.q_gold_off[q]:
                            a = self.q_pred[2 * q]
                            ln = self.q_pred[2 * q + 1]
                        else:
                            a = self.gold[2 * g]
                            ln = self.gold[2 * g + 1]
                        if e + 8 < nvis:
                            AK_PREFETCH(&tab[hs[e + 8] & <uint64_t>(cap - 1)])
                        h = hs[e]
                        e += 1
                        tag = <int64_t>(h >> 33)     # (31 bits: a slot in use is >= 0)
                        slot = <int64_t>(h & <uint64_t>(cap - 1))
                        while True:
                            v = tab[slot]
                            if v < 0:
                                sid = <int32_t>ns
                                tab[slot] = (tag << 32) | ns
                                self.str_span[2 * ns] = a
                                self.str_span[2 * ns + 1] = ln
                                ns += 1
                                total += ln
                                # (ASCII marked too, and never read: no branch on it)
                                for i in range(ln):
                                    c = self.cps[a + i]
                                    if c < _ML_SEP:     # (always: the files' are code points)
                                        seen[c] = 1
                                        top = c if c > top else top
                                break
                            if (v >> 32) == tag:
                                sid = <int32_t>(v & 0x7FFFFFFF)
                                if self.str_span[2 * sid + 1] == ln and _mf_same(
                                        self.cps + self.str_span[2 * sid], self.cps + a, ln):
                                    break
                            slot = (slot + 1) & (cap - 1)
                        if g < self.q_gold_off[q]:
                            pred_sid[q] = sid
                        else:
                            ref_sid[g] = sid
                ref_off[nq] = ng
            for c in range(128, top + 1):
                if seen[c]:
                    wide.append(c)
            self.nstrings = ns
            self.string_cps = total
            return wide
        finally:
            free(tab)
            free(hs)
            free(seen)

    def tokens(self, const int32_t[::1] low_at, const int64_t[::1] low_off,
               const uint32_t[::1] low_cp, const uint8_t[::1] drop,
               const int64_t[::1] word_off, const uint32_t[::1] words, int mode,
               int64_t[::1] tok_off, int32_t[::1] ids):
        """The tokens of MLQA's ``normalize_answer`` of each interned string, as ids
        (:func:`ml_tokens`' rules), string s's being ``ids[tok_off[s]:tok_off[s + 1]]``.

        A code point ``c >= 128`` is lowered to ``low_cp[low_off[j]:low_off[j + 1]]`` with
        ``j = low_at[c]`` (``str.lower`` of it; every such code point of the strings needs
        an entry), an ASCII capital folded; then the lowered code points ``c < len(drop)``
        with ``drop[c]`` are dropped. ``tok_off`` has ``nstrings + 1`` entries. Returns the
        number of tokens, or -1 where ``ids`` has no room for them."""
        cdef int64_t ns = self.nstrings, nwords = word_off.shape[0] - 1, nlow = low_off.shape[0] - 1
        cdef int64_t nat = low_at.shape[0], nd = drop.shape[0], room = ids.shape[0]
        cdef int64_t longest = 0, grow = 1, i, j, k, q, s, r, m, a, b, wl, cap, slot, ln
        cdef int64_t ntok = 0, nvocab = 0, vroom
        cdef uint32_t c
        cdef uint32_t* buf = NULL
        cdef uint32_t* out = NULL
        cdef uint32_t* vocab = NULL
        cdef int32_t* tab = NULL
        cdef int64_t* id_start = NULL
        cdef int32_t* id_len = NULL
        cdef uint64_t* id_hash = NULL
        cdef const uint8_t* dropped = &drop[0] if nd else NULL
        cdef const uint32_t* src
        cdef int32_t next_id = 0, t
        cdef uint64_t h
        cdef int failed = 0    # 1: no memory, 2: a code point without its lowering, 3: room
        # per code point below nfold: what step 1 writes for it (one lookup, no branch on
        # ASCII or not: the scripts mix them at random, and the branch was mispredicted)
        cdef uint32_t* fold = NULL
        cdef int64_t nfold = nat if nat > 128 else 128
        cdef const uint32_t* o
        cdef bint same
        if self.str_span == NULL:
            raise InputError("MlqaFiles.tokens: the strings were not interned")
        if tok_off.shape[0] != ns + 1 or nwords < 0 or word_off[nwords] != words.shape[0] \
                or nlow < 0:
            raise InputError("MlqaFiles.tokens: the offsets or the words do not fit")
        for k in range(nwords):
            if not 0 <= word_off[k] <= word_off[k + 1] <= words.shape[0]:
                raise InputError("MlqaFiles.tokens: the word offsets are out of order")
        if low_off[0] != 0 or low_off[nlow] > low_cp.shape[0]:
            raise InputError("MlqaFiles.tokens: the lowering offsets do not fit")
        for k in range(nlow):
            if low_off[k + 1] < low_off[k]:
                raise InputError("MlqaFiles.tokens: the lowering offsets are out of order")
            if low_off[k + 1] - low_off[k] > grow:
                grow = low_off[k + 1] - low_off[k]
        for k in range(nat):
            if not -1 <= low_at[k] < nlow:
                raise InputError("MlqaFiles.tokens: a lowering index is out of range")
        for s in range(ns):
            if self.str_span[2 * s + 1] > longest:
                longest = self.str_span[2 * s + 1]
        # a string lowered is at most `grow` times as long; so are its tokens and their text
        vroom = self.string_cps * grow + 1
        cap = 1024
        buf = <uint32_t*>malloc((longest * grow + 1) * sizeof(uint32_t))
        out = <uint32_t*>malloc((longest * grow + 1) * sizeof(uint32_t))
        vocab = <uint32_t*>malloc(vroom * sizeof(uint32_t))
        tab = <int32_t*>malloc(cap * sizeof(int32_t))
        id_start = <int64_t*>malloc(vroom * sizeof(int64_t))
        id_len = <int32_t*>malloc(vroom * sizeof(int32_t))
        id_hash = <uint64_t*>malloc(vroom * sizeof(uint64_t))
        fold = <uint32_t*>malloc(nfold * sizeof(uint32_t))
        try:
            if buf == NULL or out == NULL or vocab == NULL or tab == NULL or id_start == NULL \
                    or id_len == NULL or id_hash == NULL or fold == NULL:
                raise MemoryError()
            with nogil:
                for i in range(cap):
                    tab[i] = -1
                # fold[c]: c lowered when that is one code point, _ML_SEP where that one is
                # dropped, 32 where it is whitespace (str.split's: no token holds it, so
                # step 3 need only test for 32), _ML_MULTI where c lowers to several (or to
                # what is no code point) and _ML_NOLOW where it has no lowering
                for k in range(nfold):
                    if k < 128:
                        c = <uint32_t>(k + 32 if 65 <= k <= 90 else k)
                    elif low_at[k] < 0:
                        fold[k] = _ML_NOLOW
                        continue
                    elif low_off[low_at[k] + 1] - low_off[low_at[k]] != 1 \
                            or low_cp[low_off[low_at[k]]] >= _ML_SEP:
                        fold[k] = _ML_MULTI
                        continue
                    else:
                        c = low_cp[low_off[low_at[k]]]
                    fold[k] = _ML_SEP if c < nd and dropped[c] else 32 if _ml_space(c) else c
                for s in range(ns):
                    tok_off[s] = ntok
                    src = self.cps + self.str_span[2 * s]
                    ln = self.str_span[2 * s + 1]
                    # 1. lowered, the punctuation removed, whitespace made 32
                    m = 0
                    for i in range(ln):
                        c = src[i]
                        if c >= nfold:
                            failed = 2
                            break
                        c = fold[c]
                        if c >= _ML_MULTI:
                            if c == _ML_NOLOW:
                                failed = 2
                                break
                            for j in range(low_off[low_at[src[i]]], low_off[low_at[src[i]] + 1]):
                                c = low_cp[j]
                                if c < nd and dropped[c]:
                                    continue
                                buf[m] = 32 if _ml_space(c) else c
                                m += 1
                            continue
                        # (no branch on whether it is dropped: punctuation comes at random)
                        buf[m] = c
                        m += c != _ML_SEP
                    if failed:
                        break
                    # 2. the articles (or every "ال") replaced by a space; nothing to do for a
                    # language without either
                    o = buf
                    r = m
                    if mode == 2 or nwords:
                        o = out
                        r = 0
                        i = 0
                        while i < m:
                            c = buf[i]
                            if mode == 2:
                                if c == 0x627 and i + 1 < m and buf[i + 1] == 0x644:
                                    out[r] = 32
                                    r += 1
                                    i += 2
                                    continue
                                out[r] = c
                                r += 1
                                i += 1
                                continue
                            if nwords == 0 or not _ml_word(c):
                                out[r] = c
                                r += 1
                                i += 1
                                continue
                            j = i
                            while j < m and _ml_word(buf[j]):
                                j += 1
                            same = False
                            for q in range(nwords):
                                wl = word_off[q + 1] - word_off[q]
                                if wl == j - i:
                                    same = True
                                    for k in range(wl):
                                        if words[word_off[q] + k] != buf[i + k]:
                                            same = False
                                            break
                                    if same:
                                        break
                            if same:
                                out[r] = 32
                                r += 1
                            else:
                                for k in range(i, j):
                                    out[r] = buf[k]
                                    r += 1
                            i = j
                    # 3. the tokens interned (each hashed as _ml_hash does, while it is found)
                    i = 0
                    while i < r:
                        c = o[i]
                        if c == 32:
                            i += 1
                            continue
                        a = i
                        h = 1469598103934665603ULL
                        if mode == 1 and _ml_cjk(c):
                            h = (h ^ c) * 1099511628211ULL
                            i += 1
                        elif mode == 1:
                            while i < r and o[i] != 32 and not _ml_cjk(o[i]):
                                h = (h ^ o[i]) * 1099511628211ULL
                                i += 1
                        else:
                            while i < r and o[i] != 32:
                                h = (h ^ o[i]) * 1099511628211ULL
                                i += 1
                        b = i
                        h = h ^ (h >> 29)
                        slot = <int64_t>(h & <uint64_t>(cap - 1))
                        while True:
                            t = tab[slot]
                            if t < 0:
                                t = next_id
                                next_id += 1
                                tab[slot] = t
                                id_start[t] = nvocab
                                id_len[t] = <int32_t>(b - a)
                                id_hash[t] = h
                                memcpy(vocab + nvocab, o + a, (b - a) * sizeof(uint32_t))
                                nvocab += b - a
                                break
                            if id_hash[t] == h and id_len[t] == b - a and memcmp(
                                    vocab + id_start[t], o + a, (b - a) * sizeof(uint32_t)) == 0:
                                break
                            slot = (slot + 1) & (cap - 1)
                        if ntok >= room:
                            failed = 3
                            break
                        ids[ntok] = t
                        ntok += 1
                        if 2 * next_id > cap:          # keep the table at most half full
                            free(tab)
                            cap *= 2
                            tab = <int32_t*>malloc(cap * sizeof(int32_t))
                            if tab == NULL:
                                failed = 1
                                break
                            for k in range(cap):
                                tab[k] = -1
                            for t in range(next_id):
                                slot = <int64_t>(id_hash[t] & <uint64_t>(cap - 1))
                                while tab[slot] >= 0:
                                    slot = (slot + 1) & (cap - 1)
                                tab[slot] = t
                    if failed:
                        break
                tok_off[ns] = ntok
            if failed == 1:
                raise MemoryError()
            if failed == 2:
                raise InputError("MlqaFiles.tokens: a code point has no lowering")
            if failed == 3:
                return -1
            return ntok
        finally:
            free(buf)
            free(out)
            free(vocab)
            free(tab)
            free(id_start)
            free(id_len)
            free(id_hash)
            free(fold)

    def missing_ids(self):
        """The ids of the questions without a prediction, in file order (as json.loads makes
        them)."""
        cdef int64_t q
        cdef list missing = []
        if not self.plain:
            raise InputError("MlqaFiles.missing_ids: the files were not read")
        for q in range(self.nquestions):
            if self.q_pred[2 * q + 1] < 0:
                missing.append(PyUnicode_FromKindAndData(
                    PyUnicode_4BYTE_KIND, self.cps + self.q_id[2 * q], self.q_id[2 * q + 1]))
        return missing
