# Answer kernels part: the encoder that interns and tokenizes SQuAD answers from snapshots a
# slice at a time, and the calls made of it: answer_encode_squad, answer_encode_squad_flat and
# SquadEncoder. Apart from the snapshots, which the character F1 uses without it.

# The encoder behind answer_encode_squad, answer_encode_squad_flat and squad()'s walk: the
# strings are given slice by slice (a few thousand questions'), and each step is
#
#   with the GIL:    _ak_enc_lower (the text of the last step's new distinct strings that
#                    needs CPython's str.lower) and _ak_enc_copy of the next slice's strings;
#   without it:      _ak_enc_step: tokenize the last step's new distinct strings, then intern
#                    the slice's strings (the new distinct ones wait for the next step).
#
# so that a call's work with the GIL alternates with its work without it. Four threads
# making such calls on two cores then keep both busy: had each call copied all its strings
# first, their copies (which the GIL lets run one at a time) would all come before any
# work without the GIL, and one core would wait through them. The string table and the
# token table live across steps, and distinct strings are tokenized in the order of their
# first appearance, so every index and token id is what one pass over all the strings gives.

cdef struct _AkEnc:
    _AkSnap snap            # the copies: string j at snap.arena + snap.rec[j] (-1: none)
    int64_t nstr            # strings copied
    int64_t ndone           # strings interned (ndone..nstr: the slice copied last)
    int64_t nq              # questions interned
    int64_t nref            # references interned (their indices: the caller's offsets)
    _sh_Slots strs          # distinct strings, keyed by the place of their first copy
    uint32_t* meta          # the hash bits of the slice's strings
    int64_t meta_cap
    int64_t* first          # distinct string s: the place of its first copy
    int64_t first_cap
    int64_t nd              # distinct strings
    int64_t ntok            # distinct strings tokenized (ntok..nd wait for the next step)
    int64_t* hard           # the waiting ones CPython lowers, ascending
    int64_t hard_cap
    int64_t* hard_ntok      # their token counts in side, once lowered
    int64_t hard_ntok_cap
    int64_t nhard
    bint lowered            # the waiting hard strings' tokens are in side
    bint table_ok
    _trec_Table table       # token bytes -> token id
    _AkIds out              # the distinct strings' token ids, one after the other
    int64_t* tok_off        # distinct string s's are out[tok_off[s]:tok_off[s + 1]]
    uint64_t tok_cap
    _AkWork work
    _AkSide side
    char* w
    Py_ssize_t wcap


cdef int _ak_grow_i64(int64_t** p, int64_t* cap, int64_t want) except -1 nogil:
    """Room for ``want`` entries in the array *p of *cap."""
    cdef int64_t c = cap[0]
    cdef void* grown
    if want <= c:
        return 0
    c = 2 * c if c else 1024
    while c < want:
        c *= 2
    grown = realloc(p[0], c * sizeof(int64_t))
    if grown == NULL:
        with gil:
            raise MemoryError()
    p[0] = <int64_t*>grown
    cap[0] = c
    return 0


cdef int _ak_enc_init(_AkEnc* e, int64_t expect) except -1:
    """An empty encoder with room for about ``expect`` strings (it grows past that). ``e``
    must be zeroed first, so that _ak_enc_free frees what was made if this raises."""
    cdef int64_t k = 1 << 10
    _ak_table_init(&e.table)
    e.table_ok = True
    # room for every string at load 1/2 if about half of them are distinct (as
    # answer_intern: a smaller table has fewer cache misses per probe)
    while k < expect and k < (1 << 22):
        k *= 2
    _ak_str_table_init(&e.strs, k)
    _ak_snap_init(&e.snap, expect if expect > 16 else 16)
    # room for every string to be distinct: pages not written take no memory (grown
    # little by little, the arrays were copied and faulted in again, 3% of a squad() call)
    e.tok_cap = <uint64_t>(expect if expect > 1024 else 1024) + 1
    e.tok_off = <int64_t*>_trec_mem_resize(NULL, 0, e.tok_cap * sizeof(int64_t))
    _ak_grow_i64(&e.first, &e.first_cap, expect + 1)
    e.side.off = <int64_t*>malloc(1024 * sizeof(int64_t))
    if e.tok_off == NULL or e.side.off == NULL:
        raise MemoryError()
    e.tok_off[0] = 0
    e.side.off_cap = 1024
    e.side.off[0] = 0
    e.lowered = True
    return 0


cdef void _ak_enc_free(_AkEnc* e) noexcept:
    _ak_snap_free(&e.snap)
    _sh_slots_free(&e.strs)
    free(e.meta)
    free(e.first)
    free(e.hard)
    free(e.hard_ntok)
    free(e.side.bytes)
    free(e.side.off)
    free(e.w)
    e.meta = NULL
    e.first = NULL
    e.hard = NULL
    e.hard_ntok = NULL
    e.side.bytes = NULL
    e.side.off = NULL
    e.w = NULL
    if e.table_ok:
        _trec_table_free(&e.table)
        e.table_ok = False
    _ak_ids_free(&e.out)
    if e.tok_off != NULL:
        _trec_mem_free(e.tok_off, e.tok_cap * sizeof(int64_t))
        e.tok_off = NULL
    _ak_work_free(&e.work)


cdef inline int _ak_enc_copy(_AkEnc* e, PyObject* o) except -1:
    """Copy the next string, o (exactly a str; NULL: none, a missing prediction), with the
    GIL (no Python code runs here)."""
    if e.nstr >= e.snap.nrec:
        _ak_snap_reserve(&e.snap, e.nstr + 1)
    if o == NULL:
        e.snap.rec[e.nstr] = -1
    else:
        _ak_snap_add(&e.snap, e.nstr, o)
    e.nstr += 1
    return 0


cdef int _ak_enc_lower(_AkEnc* e) except -1:
    """With the GIL: the tokens of the waiting distinct strings that need CPython's str.lower,
    into side (a str made anew from the copy: an equal str, so the same tokens)."""
    cdef int64_t h, off
    cdef uint64_t head
    cdef Py_ssize_t m, nt, k, nbt
    cdef object text
    if e.lowered:
        return 0
    _ak_grow_i64(&e.hard_ntok, &e.hard_ntok_cap, e.nhard + 1)
    for h in range(e.nhard):
        _ak_pause_gil(<Py_ssize_t>h)
        off = e.first[e.hard[h]]
        head = _ak_head(e.snap.arena + off)
        text = PyUnicode_FromKindAndData(<int>(head & 7), e.snap.arena + off + 8,
                                         <Py_ssize_t>((head >> 4) // (head & 7)))
        m = _ak_squad_prepare(<str>text, &e.work)
        nt = _ak_squad_spans(&e.work, m)
        for k in range(nt):
            nbt = _ak_utf8(e.work.cp + e.work.spans[2 * k],
                           e.work.spans[2 * k + 1] - e.work.spans[2 * k], e.work.utf8)
            _ak_side_add(&e.side, e.work.utf8, nbt)
        e.hard_ntok[h] = nt
    e.lowered = True
    return 0


cdef int _ak_enc_tokenize(_AkEnc* e) except -1 nogil:
    """Token ids of the waiting distinct strings, in order (their hard ones lowered)."""
    cdef int64_t sid, off, h = 0, cursor = 0, k
    cdef uint64_t head, nb, cap
    cdef const char* arena = e.snap.arena
    cdef const char* data
    cdef Py_ssize_t m, nt, nbt
    cdef void* grown
    if <uint64_t>e.nd + 1 > e.tok_cap:
        cap = 2 * e.tok_cap
        while cap < <uint64_t>e.nd + 1:
            cap *= 2
        grown = _trec_mem_resize(e.tok_off, e.tok_cap * sizeof(int64_t), cap * sizeof(int64_t))
        if grown == NULL:
            with gil:
                raise MemoryError()
        e.tok_off = <int64_t*>grown
        e.tok_cap = cap
    for sid in range(e.ntok, e.nd):
        off = e.first[sid]
        head = _ak_head(arena + off)
        nb = head >> 4
        data = arena + off + 8
        if head & 8:
            _ak_grow_chars(&e.w, &e.wcap, <Py_ssize_t>nb)
            _ak_squad_ascii(data, <Py_ssize_t>nb, e.w, &e.table, &e.out)
        elif h < e.nhard and e.hard[h] == sid:
            if cursor + e.hard_ntok[h] > e.side.ntok:
                with gil:
                    raise RuntimeError("token count mismatch")
            for k in range(e.hard_ntok[h]):
                # 16 readable bytes past each token's start: the side buffer's slack
                _ak_push(&e.out, _ak_intern(&e.table, e.side.bytes + e.side.off[cursor],
                                            e.side.off[cursor + 1] - e.side.off[cursor]))
                cursor += 1
            h += 1
        else:
            m = _ak_squad_prepare_raw(<int>(head & 7), data, <Py_ssize_t>(nb // (head & 7)),
                                      &e.work)
            if m < 0:
                with gil:
                    raise RuntimeError("text to lower was not lowered")
            nt = _ak_squad_spans(&e.work, m)
            for k in range(nt):
                # work.utf8 holds 4 bytes per code point and 256 more: 8 readable bytes
                # past the token's start
                nbt = _ak_utf8(e.work.cp + e.work.spans[2 * k],
                               e.work.spans[2 * k + 1] - e.work.spans[2 * k], e.work.utf8)
                _ak_push(&e.out, _ak_intern(&e.table, e.work.utf8, nbt))
        e.tok_off[sid + 1] = e.out.size
    if h != e.nhard:
        with gil:
            raise RuntimeError("text to lower was not tokenized")
    e.ntok = e.nd
    e.nhard = 0
    e.side.size = 0
    e.side.ntok = 0
    return 0


cdef int _ak_enc_intern(_AkEnc* e, Py_ssize_t m, const int64_t* roff, int32_t* pred_sid,
                        int32_t* ref_sid, int64_t ref_cap) except -1 nogil:
    """Index the strings of the slice copied last among the distinct strings: m questions,
    question i's prediction, then its references roff[i]:roff[i + 1] (indices into
    ref_sid, of ref_cap entries, following on from the last slice's), as copied."""
    cdef int64_t j0 = e.ndone, j1 = e.nstr, j, off, sid, lo, hi
    cdef uint64_t head, hh
    cdef const char* arena = e.snap.arena
    cdef const int64_t* rec = e.snap.rec
    cdef Py_ssize_t i
    cdef int64_t g
    cdef uint32_t* meta
    cdef void* grown
    cdef _sh_Slot* slot
    if j1 - j0 > e.meta_cap:
        grown = realloc(e.meta, (j1 - j0) * sizeof(uint32_t))
        if grown == NULL:
            with gil:
                raise MemoryError()
        e.meta = <uint32_t*>grown
        e.meta_cap = j1 - j0
    meta = e.meta
    for j in range(j0, j1):
        off = rec[j]
        if off >= 0:
            head = _ak_head(arena + off)
            hh = _trec_hash(<const unsigned char*>arena + off + 8, <Py_ssize_t>(head >> 4))
            meta[j - j0] = <uint32_t>(hh >> 32) ^ <uint32_t>(head & 7)
    j = j0
    for i in range(m):
        lo = roff[i]
        hi = roff[i + 1]
        if lo != e.nref or hi < lo or hi > ref_cap or j + 1 + (hi - lo) > j1:
            with gil:
                raise InputError("the reference offsets changed while the strings were read")
        for g in range(-1, hi - lo):
            # as answer_intern: the table slot of the string 8 ahead, the first copy of the
            # one held by the slot of the string 4 ahead
            if j + 8 < j1 and rec[j + 8] >= 0:
                _sh_prefetch_home(&e.strs, meta[j + 8 - j0])
            if j + 4 < j1 and rec[j + 4] >= 0:
                slot = _sh_home_slot(&e.strs, meta[j + 4 - j0])
                if slot.idp1 != 0:
                    AK_PREFETCH(arena + slot.key)
            off = rec[j]
            if off < 0:
                sid = -1
            else:
                sid = _ak_snap_index(&e.strs, arena, off, meta[j - j0])
                if sid == -2:
                    with gil:
                        raise OverflowError("more than 2**31 - 2 distinct answer strings")
                if sid < 0:
                    with gil:
                        raise MemoryError()
                if sid == e.nd:
                    _ak_grow_i64(&e.first, &e.first_cap, e.nd + 1)
                    e.first[e.nd] = off
                    e.nd += 1
                    if _ak_needs_lower(_ak_head(arena + off), arena + off + 8):
                        _ak_grow_i64(&e.hard, &e.hard_cap, e.nhard + 1)
                        e.hard[e.nhard] = sid
                        e.nhard += 1
            if g < 0:
                pred_sid[i] = <int32_t>sid
            else:
                ref_sid[lo + g] = <int32_t>sid
            j += 1
        e.nref = hi
    if j != j1:
        with gil:
            raise InputError("more strings were copied than the offsets count")
    e.ndone = j1
    e.nq += m
    return 0


cdef int _ak_enc_step(_AkEnc* e, Py_ssize_t m, const int64_t* roff, int32_t* pred_sid,
                      int32_t* ref_sid, int64_t ref_cap) except -1:
    """Without the GIL: tokenize the waiting distinct strings (_ak_enc_lower first), then
    intern the slice copied last (see _ak_enc_intern); its new distinct strings wait."""
    if not e.lowered:
        raise RuntimeError("text to lower was not lowered")
    with nogil:
        _ak_enc_tokenize(e)
        _ak_enc_intern(e, m, roff, pred_sid, ref_sid, ref_cap)
    e.lowered = e.nhard == 0
    return 0


cdef object _ak_enc_tokens(_AkEnc* e):
    """``(tok_off, ids)`` of the distinct strings, as answer_tokens; the encoder gives up
    the arrays (every string must have been tokenized)."""
    cdef object offsets
    if e.ntok != e.nd or e.ndone != e.nstr:
        raise RuntimeError("strings left to encode")
    offsets = _trec_wrap(e.tok_off, e.tok_cap, <uint64_t>e.nd + 1, 8, b"q", "int64")
    e.tok_off = NULL
    return offsets, _ak_ids_array(&e.out)


cdef inline Py_ssize_t _ak_slice_end(_AkEnc* e, Py_ssize_t i, Py_ssize_t i0, Py_ssize_t n,
                                     Py_ssize_t slice_questions, uint64_t size0) noexcept:
    # a slice ends after slice_questions questions, or once it copied 256 bytes a question
    # on average (long answers: the GIL is held about as long per slice)
    return (i >= n or i - i0 >= slice_questions
            or e.snap.size - size0 >= <uint64_t>slice_questions * 256)


@cython.boundscheck(True)
def answer_encode_squad(list predictions, list references, const int64_t[::1] ref_off,
                        int32_t[::1] pred_sid, int32_t[::1] ref_sid,
                        Py_ssize_t slice_questions=4096):
    """answer_intern, then answer_tokens with SQuAD's normalizer, in one call that holds the
    GIL only to copy the strings out (and to lower text that needs CPython's str.lower),
    ``slice_questions`` questions at a time (see _AkEnc).

    ``references`` holds str, lists or tuples, question i's ``ref_off[i + 1] - ref_off[i]``
    strings (answer_count_refs' ``ref_off``). Writes each string's index among the distinct
    strings (in order of first appearance, as answer_intern) to ``pred_sid``/``ref_sid``, and
    returns ``(tok_off, ids)``: distinct string s's token ids are ``ids[tok_off[s]:tok_off[s
    + 1]]`` (as answer_tokens). Returns None when some value is not exactly a str (or some
    references not exactly a str, a list or a tuple; a subclass of one included): the caller
    converts it, as for answer_intern."""
    cdef Py_ssize_t i = 0, i0, k, n = len(predictions), nr
    cdef int64_t pos = 0, hi, nref = ref_sid.shape[0]
    cdef uint64_t size0
    cdef PyObject* o
    cdef PyObject* r
    cdef _AkEnc e
    cdef Py_ssize_t asked = 0
    if (pred_sid.shape[0] != n or len(references) != n or ref_off.shape[0] != n + 1
            or ref_off[0] != 0 or ref_off[n] != nref):
        raise InputError("one prediction index and one reference entry per question, and "
                         "offsets of the references, are expected")
    if slice_questions < 1:
        raise InputError("slice_questions must be at least 1")
    memset(&e, 0, sizeof(_AkEnc))
    try:
        _ak_enc_init(&e, n + nref)
        while True:
            # with the GIL: the last slice's text for str.lower, and this slice's copies
            _ak_enc_lower(&e)
            if PyList_GET_SIZE(predictions) != n or PyList_GET_SIZE(references) != n:
                _ak_lists_changed("predictions or references")
            i0 = i
            size0 = e.snap.size
            while not _ak_slice_end(&e, i, i0, n, slice_questions, size0):
                _ak_prefetch_walk(predictions, references, i, n, &asked)
                hi = ref_off[i + 1]
                if hi < pos or hi > nref:
                    raise InputError("the reference offsets must ascend to the number of "
                                     "references")
                o = _ak_list_at(<PyObject*>predictions, i)
                if not _ak_is_exact_str(o):
                    return None
                _ak_enc_copy(&e, o)
                r = _ak_list_at(<PyObject*>references, i)
                if _ak_is_exact_str(r):
                    if pos >= hi:
                        _ak_refs_changed()
                    _ak_enc_copy(&e, r)
                    pos += 1
                elif _ak_is_list(r) or _ak_is_tuple(r):
                    nr = _ak_list_len(r) if _ak_is_list(r) else _ak_tuple_len(r)
                    for k in range(nr):
                        o = _ak_list_at(r, k) if _ak_is_list(r) else _ak_tuple_at(r, k)
                        if not _ak_is_exact_str(o):
                            return None
                        if pos >= hi:
                            _ak_refs_changed()
                        _ak_enc_copy(&e, o)
                        pos += 1
                else:
                    return None
                if pos != hi:
                    _ak_refs_changed()
                i += 1
            # without it: the last slice's new strings tokenized, this slice's interned
            _ak_enc_step(&e, i - i0, &ref_off[i0], &pred_sid[i0] if i > i0 else NULL,
                         &ref_sid[0] if nref else NULL, nref)
            if i == i0:
                break           # an empty slice: every string is tokenized
        return _ak_enc_tokens(&e)
    finally:
        _ak_enc_free(&e)


cdef inline int _ak_enc_copy_flat(_AkEnc* e, list predictions, Py_ssize_t p, Py_ssize_t i,
                                  list ref_texts, const int64_t* ref_off) except -1:
    """Copy a question's prediction ``predictions[p]`` (None: no prediction) and its answers
    ``ref_texts[ref_off[i]:ref_off[i + 1]]``, checking the offsets against the texts'
    count; 0 when a value is not exactly a str, else 1. The caller has checked that
    ``predictions`` holds p."""
    cdef int64_t lo = ref_off[i], hi = ref_off[i + 1], k
    cdef Py_ssize_t nref = PyList_GET_SIZE(ref_texts)
    cdef PyObject* o
    if hi < lo or lo < 0 or hi > nref:
        raise InputError("the offsets of the answer texts must ascend to their number")
    # the objects of the strings 8 ahead (they are scattered in memory)
    _ak_prefetch_str(predictions, p + 8)
    for k in range(lo + 8, min(hi + 8, nref)):
        _ak_prefetch_str(ref_texts, k)
    o = _ak_list_at(<PyObject*>predictions, p)
    if <object>o is None:
        _ak_enc_copy(e, NULL)
    elif not _ak_is_exact_str(o):
        return 0
    else:
        _ak_enc_copy(e, o)
    for k in range(lo, hi):
        o = _ak_list_at(<PyObject*>ref_texts, k)
        if not _ak_is_exact_str(o):
            return 0
        _ak_enc_copy(e, o)
    return 1


@cython.boundscheck(True)
def answer_encode_squad_flat(list predictions, list ref_texts, const int64_t[::1] ref_off,
                             int32_t[::1] pred_sid, int32_t[::1] ref_sid,
                             Py_ssize_t slice_questions=4096):
    """answer_encode_squad with each question's references as a slice of one flat list,
    ``ref_texts[ref_off[i]:ref_off[i + 1]]``, and predictions that may be None (no
    prediction: index -1), as answer_intern_flat. Returns ``(tok_off, ids)``, or None when
    some value is not exactly a str."""
    cdef Py_ssize_t i = 0, i0, n = len(predictions)
    cdef Py_ssize_t nref = len(ref_texts)
    cdef uint64_t size0
    cdef _AkEnc e
    if (pred_sid.shape[0] != n or ref_off.shape[0] != n + 1 or ref_sid.shape[0] != nref
            or ref_off[0] != 0 or ref_off[n] != nref):
        raise InputError("the offsets and indices do not match the predictions and texts")
    if slice_questions < 1:
        raise InputError("slice_questions must be at least 1")
    memset(&e, 0, sizeof(_AkEnc))
    try:
        _ak_enc_init(&e, n + nref)
        while True:
            _ak_enc_lower(&e)
            if PyList_GET_SIZE(predictions) != n or PyList_GET_SIZE(ref_texts) != nref:
                _ak_lists_changed("predictions or answer texts")
            i0 = i
            size0 = e.snap.size
            while not _ak_slice_end(&e, i, i0, n, slice_questions, size0):
                if not _ak_enc_copy_flat(&e, predictions, i, i, ref_texts, &ref_off[0]):
                    return None
                i += 1
            _ak_enc_step(&e, i - i0, &ref_off[i0], &pred_sid[i0] if i > i0 else NULL,
                         &ref_sid[0] if nref else NULL, nref)
            if i == i0:
                break
        return _ak_enc_tokens(&e)
    finally:
        _ak_enc_free(&e)


cdef class SquadEncoder:
    """answer_encode_squad_flat fed slice by slice, for a caller that learns the questions
    as it goes (squad()'s walk over a dataset): each ``add`` copies its questions' strings
    with the GIL and interns them without it; ``finish`` gives what one
    answer_encode_squad_flat call over every question added gives. One thread at a time."""

    cdef _AkEnc e
    cdef _AkIds pred
    cdef _AkIds ref
    cdef bint usable
    cdef bint busy

    def __cinit__(self, int64_t expect=0):
        memset(&self.e, 0, sizeof(_AkEnc))
        memset(&self.pred, 0, sizeof(_AkIds))
        memset(&self.ref, 0, sizeof(_AkIds))
        _ak_enc_init(&self.e, expect)
        self.usable = True

    def __dealloc__(self):
        _ak_enc_free(&self.e)
        _ak_ids_free(&self.pred)
        _ak_ids_free(&self.ref)

    cdef int _enter(self) except -1:
        if not self.usable or self.busy:
            raise RuntimeError("this encoder is finished, or in use by another thread")
        self.busy = True
        return 0

    @cython.boundscheck(True)
    def add(self, list predictions, Py_ssize_t first, list ref_texts,
            const int64_t[::1] ref_off):
        """Encode the next ``len(ref_off) - 1`` questions: question i's prediction
        ``predictions[first + i]`` (a str, or None for none) and its answers
        ``ref_texts[ref_off[i]:ref_off[i + 1]]``, where ``ref_off[0]`` is the number of
        answers added before. Returns True, or False when some value is not exactly a str
        (the encoder is then of no further use)."""
        cdef Py_ssize_t i, m = ref_off.shape[0] - 1
        cdef Py_ssize_t n = len(predictions), nref = len(ref_texts)
        self._enter()
        try:
            if m < 0 or ref_off[0] != self.e.nref:
                raise InputError("the offsets must follow on from the answers added before")
            if first < 0 or first + m > n:
                raise InputError("the predictions do not hold the questions to add")
            _ak_enc_lower(&self.e)
            # no Python code runs from here to the step: the lists keep their lengths
            if PyList_GET_SIZE(predictions) != n or PyList_GET_SIZE(ref_texts) != nref:
                _ak_lists_changed("predictions or answer texts")
            for i in range(m):
                if not _ak_enc_copy_flat(&self.e, predictions, first + i, i, ref_texts,
                                         &ref_off[0]):
                    self.usable = False
                    return False
            _ak_reserve(&self.pred, m)
            _ak_reserve(&self.ref, ref_off[m] - self.ref.size)
            _ak_enc_step(&self.e, m, &ref_off[0], self.pred.data + self.pred.size,
                         self.ref.data, ref_off[m])
            self.pred.size += m
            self.ref.size = ref_off[m]
            return True
        except BaseException:
            self.usable = False
            raise
        finally:
            self.busy = False

    def finish(self):
        """``(tok_off, ids, pred_sid, ref_sid)`` of every question added, as
        answer_encode_squad_flat gives them (the indices as int32 arrays)."""
        cdef int64_t zero_off = self.e.nref
        self._enter()
        try:
            _ak_enc_lower(&self.e)
            _ak_enc_step(&self.e, 0, &zero_off, NULL, NULL, 0)
            tok_off, ids = _ak_enc_tokens(&self.e)
            return tok_off, ids, _ak_ids_array(&self.pred), _ak_ids_array(&self.ref)
        finally:
            self.usable = False
            self.busy = False
