# Answer kernels part: snapshots, the answer strings' code units copied into one arena with
# the GIL so that everything after reads the copies without it. Apart because two parts build
# on them: the encoder (_answer_encode.pxi) and the character F1 (_answer_scores.pxi).

# ---------------------------------------------------------------------------------------------
# Snapshots: the answer strings copied out with the GIL, interned and tokenized without it
# ---------------------------------------------------------------------------------------------
#
# answer_intern and answer_tokens read str objects, and so held the GIL for half of an f1
# call (Python's cached hash, str comparisons, the tokenizer's first pass): four threads
# took about four times one call. Here a walk with the GIL copies each string's code units
# into an arena (the walk reads each object's header anyway, and short text lies beside it),
# and everything else reads the arena only: hashing (our own hash of the code units, not
# Python's, which would need the GIL to be computed), interning, normalizing, tokenizing. No
# reference to a str is kept past the walk, so another thread may change the lists as soon
# as it gives up the GIL, and nothing is released afterwards. Only text that needs CPython's
# str.lower (a cased script other than Latin-1's, such as Greek or Turkish capitals) goes
# back to it, with the GIL, once per distinct string. The walk goes a slice of questions at
# a time, the work without the GIL following each slice (see _AkEnc), and the lists'
# lengths are checked again before each slice.

cdef extern from "Python.h":
    Py_ssize_t _ak_str_len "PyUnicode_GET_LENGTH"(PyObject* o)
    int _ak_str_kind "PyUnicode_KIND"(PyObject* o)
    void* _ak_str_data "PyUnicode_DATA"(PyObject* o)
    bint _ak_str_ascii "PyUnicode_IS_ASCII"(PyObject* o)
    Py_ssize_t _ak_str_get_length "PyUnicode_GetLength"(PyObject* o) except? -1
    PyObject* _ak_list_at "PyList_GET_ITEM"(PyObject* o, Py_ssize_t i)
    PyObject* _ak_tuple_at "PyTuple_GET_ITEM"(PyObject* o, Py_ssize_t i)
    Py_ssize_t _ak_tuple_len "PyTuple_GET_SIZE"(PyObject* o)
    bint _ak_is_tuple "PyTuple_CheckExact"(PyObject* o)
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)


cdef extern from "Python.h":
    PyObject** _ak_seq_items "PySequence_Fast_ITEMS"(PyObject* o)


cdef inline void _ak_prefetch_text(PyObject* o) noexcept:
    # a str's header and the line after it: where short text lies
    AK_PREFETCH(o)
    AK_PREFETCH(<char*>o + 64)


cdef inline void _ak_prefetch_walk(list predictions, list references, Py_ssize_t i,
                                   Py_ssize_t n, Py_ssize_t* asked) noexcept:
    """Prefetches for a walk over question i of lists of n questions, whose objects are
    scattered in memory and each read once: question i + 16's objects (its prediction and
    its reference list), i + 12's reference item array (a list keeps its items apart), i + 8's
    strings. ``asked`` counts the questions prefetched: a function that only loads and
    prefetches has no effect a C compiler must keep, and GCC removed every call of this one
    before it had one (the walk then waited on each string's header)."""
    cdef PyObject* r
    cdef PyObject** items
    cdef Py_ssize_t k, m
    asked[0] += 1
    if i + 16 < n:
        AK_PREFETCH(_ak_list_at(<PyObject*>predictions, i + 16))
        AK_PREFETCH(_ak_list_at(<PyObject*>references, i + 16))
    if i + 12 < n:
        r = _ak_list_at(<PyObject*>references, i + 12)
        if _ak_is_list(r) and _ak_list_len(r) > 0:
            AK_PREFETCH(_ak_seq_items(r))
    if i + 8 < n:
        _ak_prefetch_text(_ak_list_at(<PyObject*>predictions, i + 8))
        r = _ak_list_at(<PyObject*>references, i + 8)
        if _ak_is_exact_str(r):
            _ak_prefetch_text(r)
        elif _ak_is_list(r) or _ak_is_tuple(r):
            m = _ak_list_len(r) if _ak_is_list(r) else _ak_tuple_len(r)
            items = _ak_seq_items(r)
            for k in range(min(m, 4)):
                _ak_prefetch_text(items[k])


cdef struct _AkSnap:
    # string j: an 8-byte head (its code units' byte count << 4 | its kind 1, 2 or 4, | 8 if
    # ASCII) at arena + rec[j], then the code units, padded to 8 bytes; rec[j] == -1: no
    # string (a missing prediction). 16 readable bytes follow the last one.
    char* arena
    uint64_t size
    uint64_t cap
    int64_t* rec
    int64_t nrec


cdef int _ak_snap_grow(_AkSnap* s, uint64_t more) except -1:
    cdef uint64_t cap = s.cap * 2 if s.cap else <uint64_t>1 << 16
    cdef void* grown
    while cap < s.size + more:
        cap *= 2
    # the TREC reader's allocator: mremap on Linux, so growing copies no pages
    grown = _trec_mem_resize(s.arena, s.cap, cap)
    if grown == NULL:
        raise MemoryError()
    s.arena = <char*>grown
    s.cap = cap
    return 0


cdef int _ak_snap_init(_AkSnap* s, int64_t nrec) except -1:
    s.arena = NULL
    s.size = 0
    s.cap = 0
    s.nrec = nrec
    s.rec = <int64_t*>malloc((nrec + 1) * sizeof(int64_t))
    if s.rec == NULL:
        raise MemoryError()
    _ak_snap_grow(s, <uint64_t>nrec * 40 + 32)   # about SQuAD's answer lengths
    return 0


cdef void _ak_snap_free(_AkSnap* s) noexcept:
    _trec_mem_free(s.arena, s.cap)
    free(s.rec)
    s.arena = NULL
    s.rec = NULL
    s.cap = 0


cdef inline uint64_t _ak_head(const char* p) noexcept nogil:
    cdef uint64_t h
    memcpy(&h, p, 8)
    return h


cdef inline int _ak_snap_add(_AkSnap* s, int64_t j, PyObject* o) except -1:
    """String j = a copy of o's code units; o is exactly a str, read with the GIL (no Python
    code runs here)."""
    cdef uint64_t kind = <uint64_t>_ak_str_kind(o)
    cdef uint64_t nb, head, room
    if kind != 1 and kind != 2 and kind != 4:
        # before 3.12, a str made through the deprecated C API may not have its code units
        # yet: PyUnicode_GetLength makes them
        if _ak_str_get_length(o) < 0:
            return -1
        kind = <uint64_t>_ak_str_kind(o)
        if kind != 1 and kind != 2 and kind != 4:
            raise RuntimeError("a str without code units")
    nb = <uint64_t>_ak_str_len(o) * kind
    head = (nb << 4) | kind | (8 if _ak_str_ascii(o) else 0)
    room = (8 + nb + 7) & ~(<uint64_t>7)
    if j >= s.nrec:
        raise RuntimeError("more answer strings than counted")
    if s.size + room + 16 > s.cap:
        _ak_snap_grow(s, room + 16)
    memcpy(s.arena + s.size, &head, 8)
    memcpy(s.arena + s.size + 8, _ak_str_data(o), nb)
    s.rec[j] = <int64_t>s.size
    s.size += room
    return 0


cdef inline int64_t _ak_snap_index(_sh_Slots* t, const char* arena, int64_t off,
                                   uint32_t meta) noexcept nogil:
    """The id of the string at arena + off among those seen (a slot's key: the arena place
    of the string's first copy), given one if new; -1 out of memory, -2 too many strings."""
    cdef uint64_t head = _ak_head(arena + off), k
    cdef uint64_t i = _sh_probe(t, _sh_home(t, meta), meta)
    while t.slots[i].idp1 != 0:
        k = t.slots[i].key
        # equal str objects have equal kinds and code units (PEP 393's canonical form)
        if _ak_head(arena + k) == head and memcmp(arena + k + 8, arena + off + 8,
                                                  head >> 4) == 0:
            return t.slots[i].idp1 - 1
        i = _sh_probe(t, _sh_next(t, i), meta)
    if t.count >= 2147483646:
        return -2
    return _sh_fill(t, i, <uint64_t>off, meta)


cdef inline bint _ak_needs_lower(uint64_t head, const char* data) noexcept nogil:
    """Whether _ak_squad_prepare_raw would give up on this text (so CPython lowers it)."""
    cdef uint64_t kind = head & 7, n, i
    cdef uint32_t c
    if head & 8:
        return False
    if kind == 1:
        return not _AK_LATIN1_OK
    if kind == 2:
        n = (head >> 4) // 2
        for i in range(n):
            c = (<const uint16_t*>data)[i]
            if c >= 128 and not (0x4E00 <= c <= 0x9FFF):
                return True
        return False
    return True


cdef int _ak_snap_reserve(_AkSnap* s, int64_t want) except -1:
    """Room for ``want`` strings' places (a walk that learns the count as it goes)."""
    cdef int64_t cap = s.nrec
    cdef void* grown
    if want <= cap:
        return 0
    while cap < want:
        cap = 2 * cap + 16
    grown = realloc(s.rec, (cap + 1) * sizeof(int64_t))
    if grown == NULL:
        raise MemoryError()
    s.rec = <int64_t*>grown
    s.nrec = cap
    return 0
