# TREC reader part: the id tables, which give byte strings (query and document ids) int32
# ids in first-seen order. Apart from the stages because both use them, and so do the
# answer kernels, whose token table is one of these.

# an id longer than this (16 MiB) is refused; the hash slots pack (arena offset << 24 | length)
cdef enum:
    _trec_LEN_BITS = 24
cdef uint64_t _trec_LEN_MASK = (<uint64_t>1 << _trec_LEN_BITS) - 1
cdef int64_t _trec_MAX_IDS = 2147483647


# ---------------------------------------------------------------------------------------
# byte-string table: ids' UTF-8 bytes (and the answer kernels' tokens) to first-seen ids, on
# the shared hash table (_shared_kernels.pxi); the keys' bytes kept in one arena
#
# A slot's `meta` is the high 32 bits of the key's hash with the low 4 bits replaced by the
# key length (0..8) or 15 for a longer key; its `key` is the key itself for up to 8 bytes
# (zero padded), else (arena offset << 24 | length), the length capped at 2**24 - 1 (a key
# that long is measured through the id's offsets). A short key is thus compared without
# touching the arena, a long one without touching the per-id offsets.

ctypedef struct _trec_Table:
    _sh_Slots h
    uint64_t made       # ids already turned into Python str
    unsigned char *arena
    uint64_t arena_len
    uint64_t arena_cap
    uint64_t *id_off    # count + 1 entries: id i's bytes are arena[id_off[i]:id_off[i + 1]]
    uint64_t id_cap
    # ids given without a slot, after the h.count that have one (_trec_query_id)
    uint64_t unslotted
    # the orders the ids have come in so far, increasing (then a new id is known new
    # without a look-up): 1, (length, then bytes), the order of numbers; 2, bytes alone;
    # 0 for a table whose every id has a slot
    int ascending


cdef inline uint32_t _trec_meta(uint64_t h, Py_ssize_t n) noexcept nogil:
    return (<uint32_t>(h >> 32) & 0xFFFFFFF0U) | <uint32_t>(n if n <= 8 else 15)


cdef inline uint64_t _trec_key8(const unsigned char *p, Py_ssize_t n,
                                const unsigned char *end) noexcept nogil:
    # The first min(n, 8) bytes of p, zero padded, as one word (only used when n <= 8).
    # A single load when 8 bytes are readable (little endian); the same value either way.
    cdef uint64_t w = 0
    if n > 8:
        return 0
    if _trec_LITTLE_ENDIAN and end - p >= 8:
        w = _trec_load64(p)
        if n < 8:
            w &= (<uint64_t>1 << (8 * n)) - 1
        return w
    memcpy(&w, p, <size_t>n)
    return w


cdef int _trec_table_init(_trec_Table *t, int log2cap) noexcept nogil:
    # the slots grow past 70% full: against 50%, fewer cache misses on a big run's table
    t.made = 0
    t.unslotted = 0
    t.ascending = 0
    t.arena_cap = 1 << 16
    t.arena_len = 0
    t.arena = <unsigned char *>_trec_mem_resize(NULL, 0, t.arena_cap)
    t.id_cap = 1 << 12
    t.id_off = <uint64_t *>_trec_mem_resize(NULL, 0, t.id_cap * sizeof(uint64_t))
    if _sh_slots_init(&t.h, log2cap, 7) != 0 or t.arena == NULL or t.id_off == NULL:
        return -1
    t.id_off[0] = 0
    return 0


cdef void _trec_table_free(_trec_Table *t) noexcept nogil:
    _sh_slots_free(&t.h)
    _trec_mem_free(t.arena, t.arena_cap)
    _trec_mem_free(t.id_off, t.id_cap * sizeof(uint64_t))
    t.arena = NULL
    t.id_off = NULL


cdef inline uint64_t _trec_slot_key(uint64_t key8, uint64_t off, Py_ssize_t n) noexcept nogil:
    # a slot's key (see above): the key itself up to 8 bytes, else its arena offset and
    # length, the length capped
    if n <= 8:
        return key8
    return (off << _trec_LEN_BITS) | min(<uint64_t>n, _trec_LEN_MASK)


cdef inline int64_t _trec_table_intern(_trec_Table *t, const unsigned char *p, Py_ssize_t n,
                                       uint32_t meta, uint64_t key8,
                                       bint check_utf8) noexcept nogil:
    # Id of the byte string p[:n] (meta = _trec_meta(_trec_hash(p, n), n),
    # key8 = _trec_key8(p, n, ...)), inserting it if new. Returns -1 out of memory,
    # -2 invalid UTF-8 (a new key, when check_utf8), -4 more than 2**31 - 1 ids.
    cdef _sh_Slots *h = &t.h
    cdef uint64_t i = _sh_probe(h, _sh_home(h, meta), meta)
    cdef uint64_t lenkey = <uint64_t>n if <uint64_t>n < _trec_LEN_MASK else _trec_LEN_MASK
    cdef _sh_Slot *s
    cdef uint64_t off
    cdef int code
    while h.slots[i].idp1 != 0:
        s = &h.slots[i]
        if n <= 8:
            if s.key == key8:
                return <int64_t>s.idp1 - 1
        elif ((s.key & _trec_LEN_MASK) == lenkey
                and (lenkey < _trec_LEN_MASK
                     or t.id_off[s.idp1] - t.id_off[s.idp1 - 1] == <uint64_t>n)
                and _trec_equal(t.arena + (s.key >> _trec_LEN_BITS), p, n)):
            return <int64_t>s.idp1 - 1
        i = _sh_probe(h, _sh_next(h, i), meta)
    # new id
    if check_utf8 and not _trec_utf8_ok(p, n):
        return -2
    off = t.arena_len
    code = _trec_table_append(t, p, n)
    if code < 0:
        return code
    return _sh_fill(h, i, _trec_slot_key(key8, off, n), meta)


cdef int _trec_table_append(_trec_Table *t, const unsigned char *p, Py_ssize_t n) noexcept nogil:
    # The bytes of id number h.count + unslotted (a new one) to the arena. -1: no memory,
    # -4: more than 2**31 - 1 ids.
    cdef uint64_t count = t.h.count + t.unslotted
    cdef uint64_t need = t.arena_len + <uint64_t>n, newcap
    cdef void *tmp
    if count >= <uint64_t>_trec_MAX_IDS:
        return -4
    if need > t.arena_cap:
        if need >> (64 - _trec_LEN_BITS):        # an offset the slot cannot hold
            return -1
        newcap = t.arena_cap
        while need > newcap:
            newcap *= 2
        tmp = _trec_mem_resize(t.arena, t.arena_cap, newcap)
        if tmp == NULL:
            return -1
        t.arena = <unsigned char *>tmp
        t.arena_cap = newcap
    if count + 1 == t.id_cap:
        tmp = _trec_mem_resize(t.id_off, t.id_cap * sizeof(uint64_t),
                               2 * t.id_cap * sizeof(uint64_t))
        if tmp == NULL:
            return -1
        t.id_off = <uint64_t *>tmp
        t.id_cap *= 2
    memcpy(t.arena + t.arena_len, p, <size_t>n)
    t.arena_len = need
    t.id_off[count + 1] = need
    return 0


cdef int64_t _trec_intern(_trec_Table *t, const unsigned char *p, Py_ssize_t n, uint32_t meta,
                          uint64_t key8) noexcept nogil:
    # an id of a TREC file: a new one must be UTF-8 (-2 otherwise)
    return _trec_table_intern(t, p, n, meta, key8, True)


cdef int _trec_give_slots(_trec_Table *t) noexcept nogil:
    # Slots for the ids given without one, in id order (so _sh_fill numbers them as they
    # were numbered); from then on every id is looked up. -1: no memory.
    cdef _sh_Slots *h = &t.h
    cdef const unsigned char *end = t.arena + t.arena_len
    cdef const unsigned char *p
    cdef uint64_t off, i
    cdef Py_ssize_t n
    cdef uint32_t meta
    t.ascending = 0
    while t.unslotted:
        off = t.id_off[h.count]
        p = t.arena + off
        n = <Py_ssize_t>(t.id_off[h.count + 1] - off)
        meta = _trec_meta(_trec_hash(p, n), n)
        i = _sh_home(h, meta)
        while h.slots[i].idp1 != 0:               # the ids are distinct: no key to compare
            i = _sh_next(h, i)
        t.unslotted -= 1
        if _sh_fill(h, i, _trec_slot_key(_trec_key8(p, n, end), off, n), meta) < 0:
            return -1
    return 0


cdef inline int64_t _trec_query_id(_trec_Table *t, const unsigned char *p, Py_ssize_t n,
                                   const unsigned char *end) noexcept nogil:
    # _trec_intern for the query ids of a file, which mostly come sorted: while each new id
    # sorts after the one before (as numbers, or as bytes), it cannot have come before, and
    # it is given its id without the table's look-up, a cache miss per query (a fifth of
    # reading a million-query qrels). The first id out of order gives the earlier ones
    # their slots, and is looked up.
    cdef uint64_t count = t.h.count + t.unslotted, off, last_n
    cdef int c, ascending = t.ascending
    cdef int64_t code
    if ascending:
        if count:
            off = t.id_off[count - 1]
            last_n = t.id_off[count] - off
            c = memcmp(t.arena + off, p, <size_t>min(last_n, <uint64_t>n))
            if not (last_n < <uint64_t>n or (last_n == <uint64_t>n and c < 0)):
                ascending &= ~1
            if not (c < 0 or (c == 0 and last_n < <uint64_t>n)):
                ascending &= ~2
        t.ascending = ascending
        if ascending:
            if not _trec_utf8_ok(p, n):
                return -2
            code = _trec_table_append(t, p, n)
            if code < 0:
                return code
            t.unslotted += 1
            return <int64_t>count
        if _trec_give_slots(t) != 0:
            return -1
    return _trec_intern(t, p, n, _trec_meta(_trec_hash(p, n), n), _trec_key8(p, n, end))


cdef inline bint _trec_same_id(_trec_Table *t, int64_t idx, const unsigned char *p,
                               Py_ssize_t n) noexcept nogil:
    cdef uint64_t off = t.id_off[idx]
    return (t.id_off[idx + 1] - off == <uint64_t>n
            and _trec_equal(t.arena + off, p, n))
