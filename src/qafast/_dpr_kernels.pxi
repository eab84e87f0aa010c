# DPR kernels part: the tokens of DPR's SimpleTokenizer (runs of letters, numbers and marks,
# or one character that is neither a separator nor "other"), interned as ids in a
# vocabulary kept from call to call, and the search of each question's answers, as token
# sequences, in its passages (qafast.dpr_eval; the specification is qafast.reference.dpr).

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc


cdef extern from "Python.h":
    Py_UCS4 _dpr_read "PyUnicode_READ"(int kind, const void* data, Py_ssize_t index) nogil


ctypedef struct _dpr_Slot:
    int64_t off          # the word's start in the arena
    int64_t len          # its length in code points
    uint32_t meta        # 32 bits of its hash
    int32_t idp1         # its id + 1; 0: an empty slot


cdef inline uint64_t _dpr_mix(uint64_t h) noexcept nogil:
    h ^= h >> 31
    h *= 0x9E3779B97F4A7C15ULL
    return h ^ (h >> 29)


cdef class DprVocab:
    """The distinct words seen so far, as code-point strings, each with an id in order of
    first appearance (``token(i)`` gives one back as a str). One slot holds a word's place,
    length, hash bits and id, so that a lookup mostly reads one slot and the arena."""

    cdef _dpr_Slot* slots
    cdef int64_t cap             # a power of two, at least twice the ids
    cdef uint32_t* arena         # the words' code points, one after another
    cdef int64_t arena_len, arena_cap
    cdef int64_t* start          # per id: where it starts in the arena; count + 1 entries
    cdef int64_t count, ids_cap

    def __cinit__(self):
        self.cap = 1024
        self.arena_cap = 4096
        self.ids_cap = 512
        self.slots = <_dpr_Slot*>calloc(self.cap, sizeof(_dpr_Slot))
        self.arena = <uint32_t*>malloc(self.arena_cap * sizeof(uint32_t))
        self.start = <int64_t*>malloc((self.ids_cap + 1) * sizeof(int64_t))
        if self.slots == NULL or self.arena == NULL or self.start == NULL:
            raise MemoryError()
        self.start[0] = 0
        self.count = 0
        self.arena_len = 0

    def __dealloc__(self):
        free(self.slots)
        free(self.arena)
        free(self.start)

    def __len__(self):
        return self.count

    def token(self, int64_t i):
        """The code points of word ``i`` as a str."""
        cdef int64_t k
        if not 0 <= i < self.count:
            raise IndexError(i)
        return "".join([chr(self.arena[k]) for k in range(self.start[i], self.start[i + 1])])

    cdef int _grow_table(self) noexcept nogil:
        cdef int64_t newcap = self.cap * 2, i, s
        cdef _dpr_Slot* ns = <_dpr_Slot*>calloc(newcap, sizeof(_dpr_Slot))
        if ns == NULL:
            return -1
        for i in range(self.cap):
            if self.slots[i].idp1 != 0:
                s = <int64_t>(self.slots[i].meta * <uint64_t>newcap >> 32)
                while ns[s].idp1 != 0:
                    s = (s + 1) & (newcap - 1)
                ns[s] = self.slots[i]
        free(self.slots)
        self.slots = ns
        self.cap = newcap
        return 0

    cdef int64_t _intern(self, int kind, const void* data, int64_t a, int64_t n,
                         uint64_t h) noexcept nogil:
        """The id of the word of code points ``a`` to ``a + n`` of the string, of hash h,
        given one if new; -1 when out of memory."""
        cdef uint32_t meta = <uint32_t>(_dpr_mix(h) >> 32)
        cdef int64_t s = <int64_t>(meta * <uint64_t>self.cap >> 32), i, k, o
        cdef void* q
        cdef _dpr_Slot* slot
        cdef bint same
        while True:
            slot = &self.slots[s]
            if slot.idp1 == 0:
                break
            if slot.meta == meta and slot.len == n:
                o = slot.off
                same = True
                for k in range(n):
                    if self.arena[o + k] != _dpr_read(kind, data, a + k):
                        same = False
                        break
                if same:
                    return slot.idp1 - 1
            s = (s + 1) & (self.cap - 1)
        if self.arena_len + n > self.arena_cap:
            while self.arena_len + n > self.arena_cap:
                self.arena_cap *= 2
            q = realloc(self.arena, self.arena_cap * sizeof(uint32_t))
            if q == NULL:
                return -1
            self.arena = <uint32_t*>q
        if self.count == self.ids_cap:
            self.ids_cap *= 2
            q = realloc(self.start, (self.ids_cap + 1) * sizeof(int64_t))
            if q == NULL:
                return -1
            self.start = <int64_t*>q
        i = self.count
        for k in range(n):
            self.arena[self.arena_len + k] = _dpr_read(kind, data, a + k)
        slot.off = self.arena_len
        slot.len = n
        slot.meta = meta
        slot.idp1 = <int32_t>(i + 1)
        self.arena_len += n
        self.start[i + 1] = self.arena_len
        self.count += 1
        if 2 * self.count > self.cap and self._grow_table() != 0:
            return -1
        return i

    def tokenize(self, list texts, const uint8_t[::1] cls, int64_t[::1] tok_off,
                 int32_t[::1] ids):
        """The tokens of each string of ``texts``, as ids of this vocabulary.

        ``cls`` has an entry per code point: 0 for a character in no token, 1 for one of
        the characters whose runs are a token, 2 for a character that is a token of its
        own. (SimpleTokenizer's classes: 0 separators and "other", ``\\p{Z}\\p{C}``; 1
        letters, numbers, marks; 2 the rest. qafast.dpr_eval gives a table of 0 and 1 that
        cuts texts into words.) String i's ids are ``ids[tok_off[i]:tok_off[i + 1]]``;
        ``tok_off`` has one entry per string and one more, ``ids`` room for as many ids as
        the strings have code points. Returns the number of tokens."""
        cdef int64_t nstr = len(texts), i, j, n, a, ntok = 0, tid, total = 0
        cdef int64_t ncls = cls.shape[0]
        cdef const void** data = NULL
        cdef int* kinds = NULL
        cdef int64_t* lens = NULL
        cdef uint32_t c
        cdef uint8_t kind
        cdef uint64_t h
        cdef bint oom = False
        cdef object t
        if tok_off.shape[0] != nstr + 1 or ncls < 0x110000:
            raise InputError("dpr tokenize: the outputs do not fit the texts")
        data = <const void**>malloc((nstr + 1) * sizeof(void*))
        kinds = <int*>malloc((nstr + 1) * sizeof(int))
        lens = <int64_t*>malloc((nstr + 1) * sizeof(int64_t))
        if data == NULL or kinds == NULL or lens == NULL:
            free(data); free(kinds); free(lens)
            raise MemoryError()
        try:
            for i in range(nstr):
                t = texts[i]
                if type(t) is not str:
                    raise InputTypeError(f"dpr tokenize: text {i} is not a str")
                data[i] = PyUnicode_DATA(t)
                kinds[i] = PyUnicode_KIND(t)
                lens[i] = PyUnicode_GET_LENGTH(t)
                total += lens[i]
            if ids.shape[0] < total:
                raise InputError("dpr tokenize: the outputs do not fit the texts")
            # the list holds the strings (immutable) while the GIL is released
            with nogil:
                tok_off[0] = 0
                for i in range(nstr):
                    n = lens[i]
                    j = 0
                    while j < n:
                        c = _dpr_read(kinds[i], data[i], j)
                        kind = cls[c]
                        if kind == 0:
                            j += 1
                            continue
                        a = j
                        h = 1469598103934665603ULL ^ c
                        j += 1
                        if kind == 1:
                            while j < n:
                                c = _dpr_read(kinds[i], data[i], j)
                                if cls[c] != 1:
                                    break
                                h = (h * 1099511628211ULL) ^ c
                                j += 1
                        tid = self._intern(kinds[i], data[i], a, j - a, h)
                        if tid < 0:
                            oom = True
                            break
                        ids[ntok] = <int32_t>tid
                        ntok += 1
                    if oom:
                        break
                    tok_off[i + 1] = ntok
        finally:
            free(data); free(kinds); free(lens)
        if oom:
            raise MemoryError()
        return ntok


def dpr_first_hit(const int32_t[::1] ids, const int64_t[::1] tok_off,
                  const int64_t[::1] q_pas, const int64_t[::1] q_ans, int64_t[::1] out):
    """For each question q, the first of its passages (strings ``q_pas[q]`` to
    ``q_pas[q + 1]``, in rank order) in which one of its answers (strings ``q_ans[q]`` to
    ``q_ans[q + 1]``) occurs as a run of consecutive tokens: ``out[q]`` = that passage's
    place among the question's passages, or -1. An answer of no tokens occurs in every
    passage. String s's tokens are ``ids[tok_off[s]:tok_off[s + 1]]`` (ids that compare
    equal exactly when the tokens match)."""
    cdef int64_t nq = out.shape[0], q, p, a, i, j, ps, pe, as_, ae, m, found
    cdef int64_t ntext = tok_off.shape[0] - 1
    cdef int32_t first
    if q_pas.shape[0] != nq + 1 or q_ans.shape[0] != nq + 1:
        raise InputError("dpr_first_hit: the offsets do not fit the questions")
    for q in range(nq):
        if (q_pas[q] < 0 or q_pas[q] > q_pas[q + 1] or q_pas[q + 1] > ntext
                or q_ans[q] < 0 or q_ans[q] > q_ans[q + 1] or q_ans[q + 1] > ntext):
            raise InputError("dpr_first_hit: the offsets do not fit the strings")
    if ntext >= 0 and (tok_off[0] < 0 or tok_off[ntext] > ids.shape[0]):
        raise InputError("dpr_first_hit: the offsets do not fit the tokens")
    for i in range(ntext):
        if tok_off[i] > tok_off[i + 1]:
            raise InputError("dpr_first_hit: the offsets do not fit the tokens")
    with nogil:
        for q in range(nq):
            found = -1
            for p in range(q_pas[q], q_pas[q + 1]):
                ps = tok_off[p]
                pe = tok_off[p + 1]
                for a in range(q_ans[q], q_ans[q + 1]):
                    as_ = tok_off[a]
                    ae = tok_off[a + 1]
                    m = ae - as_
                    if m == 0:
                        found = p - q_pas[q]
                        break
                    first = ids[as_]
                    for i in range(ps, pe - m + 1):
                        if ids[i] != first:
                            continue
                        j = 1
                        while j < m and ids[i + j] == ids[as_ + j]:
                            j += 1
                        if j == m:
                            found = p - q_pas[q]
                            break
                    if found >= 0:
                        break
                if found >= 0:
                    break
            out[q] = found


def dpr_expand(const int32_t[::1] words, const int64_t[::1] word_off,
               const int64_t[::1] tok_of, const int32_t[::1] toks, int64_t[::1] tok_off,
               int32_t[::1] out):
    """Each word id w replaced by its tokens ``toks[tok_of[w]:tok_of[w + 1]]``: string i's
    words ``words[word_off[i]:word_off[i + 1]]`` become its tokens
    ``out[tok_off[i]:tok_off[i + 1]]``. Returns the number of tokens, or -1 when ``out`` is
    too small or a word id is unknown."""
    cdef int64_t nstr = word_off.shape[0] - 1, nw = tok_of.shape[0] - 1, i, j, k, n = 0
    cdef int64_t cap = out.shape[0], a, b
    cdef int32_t w
    cdef bint bad = False
    if tok_off.shape[0] != nstr + 1 or nw < 0 or tok_of[nw] > toks.shape[0]:
        raise InputError("dpr_expand: the offsets do not fit")
    if nstr >= 0 and (word_off[0] < 0 or word_off[nstr] > words.shape[0]):
        raise InputError("dpr_expand: the offsets do not fit")
    with nogil:
        tok_off[0] = 0
        for i in range(nstr):
            for j in range(word_off[i], word_off[i + 1]):
                w = words[j]
                if w < 0 or w >= nw:
                    bad = True
                    break
                a = tok_of[w]
                b = tok_of[w + 1]
                if a < 0 or a > b or n + (b - a) > cap:
                    bad = True
                    break
                for k in range(a, b):
                    out[n] = toks[k]
                    n += 1
            if bad:
                break
            tok_off[i + 1] = n
    return -1 if bad else n
