# Answer kernels part: the answer strings, as str objects, to first-seen indices
# (answer_count_refs, answer_intern), on a table keyed by the str and its cached hash: the
# path of the normalizers other than SQuAD's. Apart from the snapshot encoder, which does
# the same on copies of the strings without the GIL.

# ---------------------------------------------------------------------------------------------
# Interning of the answer strings
# ---------------------------------------------------------------------------------------------

cdef int _ak_refs_changed() except -1:
    raise InputError("the references changed while they were read: more or fewer strings "
                     "than counted")


@cython.boundscheck(True)
def answer_count_refs(list references, int64_t[::1] ref_off):
    """``ref_off[i + 1] - ref_off[i]`` = the number of references of question i (a str is one,
    a list or tuple its length); ``ref_off`` has ``len(references) + 1`` entries. Returns -1,
    or the index of the first question whose references are not exactly a str, a list or a
    tuple (a subclass of one included: the caller converts it)."""
    cdef Py_ssize_t i, n = len(references)
    cdef object r
    if ref_off.shape[0] != n + 1:
        raise InputError("ref_off must have one entry per question, and one more")
    ref_off[0] = 0
    for i in range(n):
        r = references[i]
        if type(r) is str:
            ref_off[i + 1] = ref_off[i] + 1
        elif type(r) is list or type(r) is tuple:
            ref_off[i + 1] = ref_off[i] + len(r)
        else:
            return i
    return -1


# The answer-string table: exact str objects -> first-seen ids, on the shared hash table
# (_shared_kernels.pxi). A slot's key is the address of the str (a borrowed reference: the
# ``strings`` list the ids index holds each one), its meta 32 bits of the str's cached
# Python hash, so most probes that meet another string never read it.

cdef inline uint32_t _ak_str_meta(Py_hash_t h) noexcept nogil:
    # the top 32 bits of h times a 64-bit odd constant: every bit of h mixes into them,
    # 32-bit hashes (32-bit builds) as well
    return <uint32_t>((<uint64_t>h * 0x9E3779B97F4A7C15ULL) >> 32)


cdef int _ak_str_table_init(_sh_Slots* t, int64_t want) except -1:
    """Room for ``want`` strings at load 1/2 (the table grows past that)."""
    cdef int log2cap = 10
    while (<int64_t>1 << log2cap) < want and log2cap < 32:
        log2cap += 1
    if _sh_slots_init(t, log2cap, 5) != 0:
        raise MemoryError()
    return 0


cdef inline bint _ak_same_str(PyObject* a, PyObject* b) noexcept:
    # str == str without a call: the same object, or the same length, kind and code units
    # (canonical PEP 393 strings with equal contents agree on all three); 8 to 16 bytes are
    # compared with two overlapping loads inside both strings, as short ids are
    cdef Py_ssize_t n
    cdef const unsigned char* x
    cdef const unsigned char* y
    cdef uint64_t u, v, u2, v2
    if a == b:
        return True
    n = PyUnicode_GET_LENGTH(<object>a)
    if n != PyUnicode_GET_LENGTH(<object>b) or PyUnicode_KIND(<object>a) != PyUnicode_KIND(
            <object>b):
        return False
    n *= PyUnicode_KIND(<object>a)
    x = <const unsigned char*>PyUnicode_DATA(<object>a)
    y = <const unsigned char*>PyUnicode_DATA(<object>b)
    if 8 <= n <= 16:
        memcpy(&u, x, 8)
        memcpy(&v, y, 8)
        memcpy(&u2, x + n - 8, 8)
        memcpy(&v2, y + n - 8, 8)
        return ((u ^ v) | (u2 ^ v2)) == 0
    return memcmp(x, y, n) == 0


cdef inline bint _ak_same_key(PyObject* k, PyObject* q) noexcept:
    # a dict key that is the id beside it: the same object, or two equal exact strs
    return k == q or (_ak_is_exact_str(k) and _ak_is_exact_str(q) and _ak_same_str(k, q))


cdef inline void _ak_prefetch_items(list lst, Py_ssize_t i) noexcept:
    cdef PyObject* r
    cdef Py_ssize_t k
    if i >= _ak_list_len(<PyObject*>lst):
        return
    r = _ak_list_item(lst, i)
    if _ak_is_list(r):
        for k in range(min(_ak_list_len(r), 4)):
            AK_PREFETCH(_ak_list_item(<object>r, k))


cdef inline void _ak_prefetch_one(_sh_Slots* t, PyObject* s, bint held) noexcept:
    # held: prefetch the string the slot holds (the one compared with on a hit), else the
    # slot itself, computing the hash (which the string caches) if need be
    cdef Py_hash_t h
    cdef _sh_Slot* slot
    if not _ak_is_exact_str(s):
        return
    h = _ak_cached_hash(s)
    if h == -1:
        # not cached yet, or not readable without a call (public C API): ask, which caches it
        h = PyObject_Hash(<object>s)
        if h == -1:
            PyErr_Clear()
            return
    slot = _sh_home_slot(t, _ak_str_meta(h))
    if not held:
        AK_PREFETCH(slot)
    elif slot.idp1 != 0 and slot.key != <uint64_t><uintptr_t>s:
        AK_PREFETCH(<PyObject*><uintptr_t>slot.key)


cdef inline void _ak_prefetch_slots(_sh_Slots* t, list predictions, list references,
                                    Py_ssize_t i, bint held) noexcept:
    cdef PyObject* r
    cdef Py_ssize_t k
    if i >= _ak_list_len(<PyObject*>predictions) or i >= _ak_list_len(<PyObject*>references):
        return
    r = _ak_list_item(references, i)
    _ak_prefetch_one(t, _ak_list_item(predictions, i), held)
    if _ak_is_list(r):
        for k in range(min(_ak_list_len(r), 4)):
            _ak_prefetch_one(t, _ak_list_item(<object>r, k), held)
    else:
        _ak_prefetch_one(t, r, held)


cdef int32_t _ak_str_index(_sh_Slots* t, list strings, object s) except -1:
    """The id of the exact str s, given one (and appended to ``strings``) if new."""
    cdef uint32_t meta = _ak_str_meta(hash(s))
    cdef uint64_t i = _sh_probe(t, _sh_home(t, meta), meta)
    cdef int64_t sid
    while t.slots[i].idp1 != 0:
        if _ak_same_str(<PyObject*><uintptr_t>t.slots[i].key, <PyObject*>s):
            return <int32_t>(t.slots[i].idp1 - 1)
        i = _sh_probe(t, _sh_next(t, i), meta)
    if t.count >= 2147483646:
        raise OverflowError("more than 2**31 - 2 distinct answer strings")
    strings.append(s)  # keeps s alive while the table refers to it
    sid = _sh_fill(t, i, <uint64_t><uintptr_t><PyObject*>s, meta)
    if sid < 0:
        raise MemoryError()
    return <int32_t>sid


@cython.boundscheck(True)
def answer_intern(list predictions, list references, list strings,
                  int32_t[::1] pred_sid, int32_t[::1] ref_sid):
    """Give every distinct answer string an index (its position in ``strings``, which this
    fills) and write the predictions' and references' indices. ``references`` holds str, lists
    or tuples only, and ``ref_sid`` has room for exactly their strings (see
    ``answer_count_refs``). Returns None, or ``(question, what)`` for the first value that is
    not exactly a str (``what`` is "prediction" or "reference"): a str subclass is returned
    too, since its hash and comparisons could run Python code that changes the lists while
    they are read; the caller converts it to a str."""
    cdef Py_ssize_t i, k, n = len(predictions), pos = 0, nref = ref_sid.shape[0]
    cdef object p, r, g
    cdef _sh_Slots t
    cdef int64_t cap = 1 << 10
    if pred_sid.shape[0] != n or len(references) != n:
        raise InputError("one prediction index and one reference entry per question are "
                         "expected")
    # room for every string at load 1/2 if about half of them are distinct (the table grows
    # past that): a smaller table has fewer cache misses per probe
    while cap < n + ref_sid.shape[0] and cap < (1 << 22):
        cap *= 2
    t.slots = NULL
    try:
        _ak_str_table_init(&t, cap)
        for i in range(n):
            if _ak_pause_gil(i) and (PyList_GET_SIZE(predictions) != n
                                     or PyList_GET_SIZE(references) != n):
                _ak_lists_changed("predictions or references")
            # A pipeline of prefetches, as the strings and the table are both far bigger
            # than the cache: the objects of question i + 8 (its reference list's items),
            # the table slots of question i + 4 (their hashes are computed now, and cached
            # in the strings), the interned strings those slots hold for question i + 2.
            _ak_prefetch_str(predictions, i + 12)
            _ak_prefetch_str(references, i + 12)
            if i + 8 < n:
                _ak_prefetch_str(predictions, i + 8)
                _ak_prefetch_items(references, i + 8)
            if i + 4 < n:
                _ak_prefetch_slots(&t, predictions, references, i + 4, False)
            if i + 2 < n:
                _ak_prefetch_slots(&t, predictions, references, i + 2, True)
            p = predictions[i]
            if type(p) is not str:
                return i, "prediction"
            pred_sid[i] = _ak_str_index(&t, strings, p)
            r = references[i]
            if type(r) is str:
                if pos >= nref:
                    _ak_refs_changed()
                ref_sid[pos] = _ak_str_index(&t, strings, r)
                pos += 1
            elif type(r) is list or type(r) is tuple:
                for g in r:
                    if type(g) is not str:
                        return i, "reference"
                    if pos >= nref:
                        _ak_refs_changed()
                    ref_sid[pos] = _ak_str_index(&t, strings, g)
                    pos += 1
            else:
                return i, "reference"
        if pos != nref:
            _ak_refs_changed()
        return None
    finally:
        _sh_slots_free(&t)
