# Answer kernels part: the tokenizers that read str objects with the GIL, answer_tokens (any
# normalizer's tokens to ids) and answer_squad_chars (SQuAD-normalized code points), with
# the side buffer that carries tokens found with the GIL to the pass without it. Apart from
# the normalizer, which they call, because they are the Python-facing calls on top of it.

cdef struct _AkSide:
    # tokens found with the GIL (non-ASCII text, a Python tokenizer's), for the pass without it
    char* bytes          # their UTF-8 bytes back to back, with 16 bytes of slack after the last
    int64_t size
    int64_t cap
    int64_t* off         # token k is bytes[off[k]:off[k + 1]]
    int64_t ntok
    int64_t off_cap


cdef int _ak_side_add(_AkSide* b, const char* p, Py_ssize_t n) except -1:
    cdef int64_t cap
    cdef void* grown
    if b.size + n + 16 > b.cap:
        cap = b.cap * 2 if b.cap else 1 << 12
        while cap < b.size + n + 16:
            cap *= 2
        grown = realloc(b.bytes, cap)
        if grown == NULL:
            raise MemoryError()
        b.bytes = <char*>grown
        b.cap = cap
    if b.ntok + 2 > b.off_cap:
        cap = b.off_cap * 2 if b.off_cap else 1 << 10
        grown = realloc(b.off, cap * sizeof(int64_t))
        if grown == NULL:
            raise MemoryError()
        b.off = <int64_t*>grown
        b.off_cap = cap
    memcpy(b.bytes + b.size, p, n)
    b.size += n
    b.ntok += 1
    b.off[b.ntok] = b.size
    return 0


cdef int _ak_grow_chars(char** w, Py_ssize_t* cap, Py_ssize_t n) except -1 nogil:
    """Room for n bytes (and 64 of slack) in the buffer *w of *cap bytes."""
    cdef void* grown
    if n <= cap[0]:
        return 0
    grown = realloc(w[0], n + 64)
    if grown == NULL:
        with gil:
            raise MemoryError()
    w[0] = <char*>grown
    cap[0] = n + 64
    return 0


cdef int _ak_triviaqa_string(uint8_t kind, const char* p, Py_ssize_t length, PyObject* s,
                             _AkWork* work, char** w, Py_ssize_t* wcap, _trec_Table* table,
                             _AkIds* out) except -1 nogil:
    """Append the ids of TriviaQA's normalized tokens of the str ``s`` to out: ``kind`` 0
    its ASCII bytes at p; 1 or 2 its code units at p, prepared here unless the raw routine
    leaves them to CPython; 4 prepared by CPython. CPython's lowering needs the GIL, taken
    only for such a string (the caller holds a reference to ``s``)."""
    cdef Py_ssize_t k, m, nt, nb
    if kind == 0:
        _ak_grow_chars(w, wcap, length)
        _ak_triviaqa_ascii(p, length, w[0], table, out)
        return 0
    m = -1
    if kind != 4:
        m = _ak_triviaqa_prepare_raw(kind, p, length, work)
    if m < 0:
        with gil:
            m = _ak_triviaqa_prepare(<str><object>s, work)
    nt = _ak_squad_spans(work, m)
    for k in range(nt):
        # (work.utf8 has 4 * work.cap >= 256 bytes: _ak_intern's 8 to read)
        nb = _ak_utf8(work.cp + work.spans[2 * k], work.spans[2 * k + 1] - work.spans[2 * k],
                      work.utf8)
        _ak_push(out, _ak_intern(table, work.utf8, nb))
    return 0


@cython.boundscheck(True)
def answer_tokens(list strings, object slow, int mode, int64_t[::1] tok_off):
    """Token ids of every string (each exactly a str), in one vocabulary keyed by the tokens'
    UTF-8 bytes.

    ``mode`` 1 or 2: the tokens of SQuAD's (1) or TriviaQA's (2) ``normalize_answer(s).split()``
    are found here for every string (``slow`` is not called); 0: ``slow(s)`` gives each
    string's tokens, as a list of ``bytes``. String i's ids end up at ``tok_off[i]:tok_off[i + 1]`` of the returned
    int32 buffer (format "i", not a numpy array: np.frombuffer reads it); ``tok_off`` has
    ``len(strings) + 1`` entries. Returns ``(ids, vocabulary_size)``.

    Two passes: the first, with the GIL, takes each ASCII string's bytes (SQuAD's and
    TriviaQA's normalizers), each Latin-1 or two-byte string's code units (TriviaQA's, for
    _ak_triviaqa_prepare_raw) and the tokens of every other string (which need str.lower or
    ``slow``); the second, without it, normalizes the strings whose bytes or code units it
    has (taking the GIL back only to lower one that the raw routine leaves to CPython) and
    gives every token its id, string by string in order, so ids follow first appearance as
    in one pass.
    """
    cdef Py_ssize_t i, k, n, length, wcap = 0, m, nt, nb
    cdef int64_t cursor = 0, count
    cdef int64_t* offp
    cdef const char** src_p = NULL
    cdef int64_t* src_n = NULL
    # the kind of str whose data src_p holds: 0 ASCII bytes, 1 or 2 code units to prepare
    cdef uint8_t* src_kind = NULL
    # each string itself, for CPython's lowering of one the raw routine leaves to it
    cdef PyObject** src_obj = NULL
    cdef const char* p
    cdef char* w = NULL
    cdef object s, tok, toks
    cdef tuple held
    cdef _trec_Table table
    cdef _AkIds out
    cdef _AkWork work
    cdef _AkSide side
    # the strings' references, held while their bytes are read without the GIL
    held = PyList_AsTuple(strings)
    n = len(held)
    if tok_off.shape[0] != n + 1:
        raise InputError("tok_off must have one entry per string, and one more")
    if mode < 0 or mode > 2:
        raise InputError(f"answer_tokens: mode {mode} is not 0, 1 or 2")
    offp = &tok_off[0]
    out.data = NULL
    out.size = 0
    out.cap = 0
    work.cp = NULL
    work.cls = NULL
    work.spans = NULL
    work.utf8 = NULL
    work.cap = 0
    side.bytes = NULL
    side.size = 0
    side.cap = 0
    side.off = NULL
    side.ntok = 0
    side.off_cap = 0
    _ak_table_init(&table)
    try:
        src_p = <const char**>malloc((n + 1) * sizeof(const char*))
        src_n = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        src_kind = <uint8_t*>malloc(n + 1)
        src_obj = <PyObject**>malloc((n + 1) * sizeof(PyObject*))
        if src_p == NULL or src_n == NULL or src_kind == NULL or src_obj == NULL:
            raise MemoryError()
        side.off = <int64_t*>malloc(1024 * sizeof(int64_t))
        if side.off == NULL:
            raise MemoryError()
        side.off_cap = 1024
        side.off[0] = 0
        for i in range(n):
            _ak_pause_gil(i)
            _ak_prefetch_str(strings, i + 8)
            s = held[i]
            if type(s) is not str:
                raise InputTypeError(f"answer string {i} is a {type(s).__name__}, not a str")
            src_obj[i] = <PyObject*>s
            if mode != 0 and PyUnicode_IS_ASCII(s):
                src_p[i] = PyUnicode_AsUTF8AndSize(s, &length)
                src_n[i] = length
                src_kind[i] = 0
                continue
            if mode == 2 and (PyUnicode_KIND(s) == 1 or PyUnicode_KIND(s) == 2):
                # normalized without the GIL (held keeps s, and so its data, alive)
                src_p[i] = <const char*>PyUnicode_DATA(s)
                src_n[i] = PyUnicode_GET_LENGTH(s)
                src_kind[i] = <uint8_t>PyUnicode_KIND(s)
                continue
            count = 0
            if mode != 0:
                if mode == 1:
                    m = _ak_squad_prepare(<str>s, &work)
                else:
                    m = _ak_triviaqa_prepare(<str>s, &work)
                nt = _ak_squad_spans(&work, m)
                for k in range(nt):
                    nb = _ak_utf8(work.cp + work.spans[2 * k],
                                  work.spans[2 * k + 1] - work.spans[2 * k], work.utf8)
                    _ak_side_add(&side, work.utf8, nb)
                    count += 1
            else:
                toks = slow(s)
                if type(toks) is not list:
                    raise InputTypeError("the tokenizer must return a list of bytes")
                for tok in toks:
                    _ak_side_add(&side, PyBytes_AS_STRING(<bytes?>tok), PyBytes_GET_SIZE(tok))
                    count += 1
            src_p[i] = NULL
            src_n[i] = count
        with nogil:
            offp[0] = 0
            for i in range(n):
                if i + 8 < n and src_p[i + 8] != NULL:
                    AK_PREFETCH(src_p[i + 8])
                p = src_p[i]
                if p != NULL and mode == 2:
                    _ak_triviaqa_string(src_kind[i], p, src_n[i], src_obj[i], &work, &w,
                                        &wcap, &table, &out)
                elif p != NULL:
                    _ak_grow_chars(&w, &wcap, src_n[i])
                    _ak_squad_ascii(p, src_n[i], w, &table, &out)
                else:
                    if cursor + src_n[i] > side.ntok:
                        with gil:
                            raise RuntimeError("token count mismatch")
                    for k in range(src_n[i]):
                        # 16 readable bytes past each token's start: the side buffer's slack
                        _ak_push(&out, _ak_intern(&table, side.bytes + side.off[cursor],
                                                  side.off[cursor + 1] - side.off[cursor]))
                        cursor += 1
                offp[i + 1] = out.size
        ids = _ak_ids_buffer(&out)
        return ids, table.h.count
    finally:
        free(w)
        free(src_p)
        free(src_n)
        free(src_kind)
        free(src_obj)
        free(side.bytes)
        free(side.off)
        _ak_ids_free(&out)
        _trec_table_free(&table)
        _ak_work_free(&work)


cdef struct _AkCharWork:
    char* w              # an ASCII string's bytes after the first pass
    Py_ssize_t wcap
    _AkWork work         # any other string's code points and token spans


cdef int _ak_squad_chars_into(object s, _AkCharWork* c, _AkIds* out) except -1:
    """Append the code points of SQuAD's ``normalize_answer(s)`` to out; s is exactly a str
    (so its methods are str's own, and no Python code of the caller's runs here)."""
    cdef Py_ssize_t k, j, m, nt, a, b, length
    cdef const char* utf8
    cdef void* grown
    if PyUnicode_IS_ASCII(s):
        # ASCII: one pass over the bytes, as the token path does
        utf8 = PyUnicode_AsUTF8AndSize(s, &length)
        if length > c.wcap:
            grown = realloc(c.w, length + 64)
            if grown == NULL:
                raise MemoryError()
            c.w = <char*>grown
            c.wcap = length + 64
        _ak_squad_ascii_chars(utf8, length, c.w, out)
        return 0
    m = _ak_squad_prepare(<str>s, &c.work)
    nt = _ak_squad_spans(&c.work, m)
    _ak_reserve(out, m)        # the tokens and the spaces between them fit in m
    for k in range(nt):
        if k:
            out.data[out.size] = 32
            out.size += 1
        a = c.work.spans[2 * k]
        b = c.work.spans[2 * k + 1]
        for j in range(a, b):
            out.data[out.size] = <int32_t>c.work.cp[j]
            out.size += 1
    return 0


cdef void _ak_char_work_init(_AkCharWork* c) noexcept:
    c.w = NULL
    c.wcap = 0
    c.work.cp = NULL
    c.work.cls = NULL
    c.work.spans = NULL
    c.work.utf8 = NULL
    c.work.cap = 0


cdef void _ak_char_work_free(_AkCharWork* c) noexcept:
    free(c.w)
    c.w = NULL
    _ak_work_free(&c.work)


@cython.boundscheck(True)
def answer_squad_chars(list strings, int64_t[::1] off):
    """The code points of SQuAD's ``normalize_answer(s)`` for every s of ``strings`` (each
    exactly a str): string i's are at ``off[i]:off[i + 1]`` of the returned int32 array
    (``off`` has ``len(strings) + 1`` entries)."""
    cdef Py_ssize_t i, n = len(strings)
    cdef _AkIds out
    cdef _AkCharWork c
    cdef object s
    if off.shape[0] != n + 1:
        raise InputError("off must have one entry per string, and one more")
    out.data = NULL
    out.size = 0
    out.cap = 0
    _ak_char_work_init(&c)
    try:
        off[0] = 0
        for i in range(n):
            if _ak_pause_gil(i) and PyList_GET_SIZE(strings) != n:
                _ak_lists_changed("answer strings")
            _ak_prefetch_str(strings, i + 8)
            s = strings[i]
            if type(s) is not str:
                raise InputTypeError(f"answer string {i} is a {type(s).__name__}, not a str")
            _ak_squad_chars_into(s, &c, &out)
            off[i + 1] = out.size
        return _ak_ids_array(&out)
    finally:
        _ak_ids_free(&out)
        _ak_char_work_free(&c)
