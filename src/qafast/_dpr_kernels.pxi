# DPR kernels part: the tokens of DPR's SimpleTokenizer (runs of letters, numbers and marks,
# or one character that is neither a separator nor "other"), interned as ids in a
# vocabulary kept from call to call, and the search of each question's answers, as token
# sequences, in its passages (qafast.dpr_eval; the specification is qafast.reference.dpr).

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc


cdef extern from "Python.h":
    Py_UCS4 _dpr_read "PyUnicode_READ"(int kind, const void* data, Py_ssize_t index) nogil
    Py_ssize_t _dpr_find_char "PyUnicode_FindChar"(object s, Py_UCS4 ch, Py_ssize_t start,
                                                   Py_ssize_t end, int direction) except -2
    bint _dpr_is_str "PyUnicode_Check"(object o)
    bint _dpr_is_exact_dict "PyDict_CheckExact"(object o)
    bint _dpr_is_dict "PyDict_Check"(object o)


cdef extern from *:
    """
    /* a hash over code points, the same for a word read from a str and for a lowercased
       token built in a buffer, so that both can be interned in one vocabulary */
    #define QAFAST_DPR_BASIS 1469598103934665603ULL
    #define QAFAST_DPR_PRIME 1099511628211ULL
    /* in the lowercase table: a character that sends its word to the Python path */
    #define QAFAST_DPR_COMPLEX 0xFFFFFFFFu
    """
    uint64_t _DPR_BASIS "QAFAST_DPR_BASIS"
    uint64_t _DPR_PRIME "QAFAST_DPR_PRIME"
    uint32_t _DPR_COMPLEX "QAFAST_DPR_COMPLEX"


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

    def chars_since(self, int64_t before):
        """The number of code points of the words from id ``before`` on."""
        if not 0 <= before <= self.count:
            raise IndexError(before)
        return self.arena_len - self.start[before]

    def tokenize(self, list texts, const int64_t[::1] begin, const int64_t[::1] end,
                 const uint8_t[::1] cls, int64_t[::1] tok_off, int32_t[::1] ids):
        """The tokens of each string of ``texts`` (code points ``begin[i]`` to ``end[i]`` of
        string i), as ids of this vocabulary.

        ``cls`` has an entry per code point: 0 for a character in no token, 1 for one of
        the characters whose runs are a token, 2 for a character that is a token of its
        own. (SimpleTokenizer's classes: 0 separators and "other", ``\\p{Z}\\p{C}``; 1
        letters, numbers, marks; 2 the rest. qafast.dpr_eval gives a table of 0 and 1 that
        cuts texts into words.) String i's ids are ``ids[tok_off[i]:tok_off[i + 1]]``;
        ``tok_off`` has one entry per string and one more, ``ids`` room for as many ids as
        the strings' parts have code points. Returns the number of tokens."""
        cdef int64_t nstr = len(texts), i, j, n, a, ntok = 0, tid, total = 0
        cdef int64_t ncls = cls.shape[0]
        cdef const void** data = NULL
        cdef const void* dp
        cdef int* kinds = NULL
        cdef int kd
        cdef uint32_t c
        cdef uint8_t kind
        cdef uint64_t h
        cdef bint oom = False
        cdef object t
        if (tok_off.shape[0] != nstr + 1 or begin.shape[0] < nstr or end.shape[0] < nstr
                or ncls < 0x110000):
            raise InputError("dpr tokenize: the outputs do not fit the texts")
        data = <const void**>malloc((nstr + 1) * sizeof(void*))
        kinds = <int*>malloc((nstr + 1) * sizeof(int))
        if data == NULL or kinds == NULL:
            free(data); free(kinds)
            raise MemoryError()
        try:
            for i in range(nstr):
                t = texts[i]
                if not _dpr_is_str(t):
                    raise InputTypeError(f"dpr tokenize: text {i} is not a str")
                if not 0 <= begin[i] <= end[i] <= PyUnicode_GET_LENGTH(t):
                    raise InputError(f"dpr tokenize: text {i}'s part is not in it")
                data[i] = PyUnicode_DATA(t)
                kinds[i] = PyUnicode_KIND(t)
                total += end[i] - begin[i]
            if ids.shape[0] < total:
                raise InputError("dpr tokenize: the outputs do not fit the texts")
            # the list holds the strings (immutable) while the GIL is released
            with nogil:
                tok_off[0] = 0
                for i in range(nstr):
                    n = end[i]
                    j = begin[i]
                    # in locals: the compiler cannot tell that the writes to ids leave
                    # kinds alone, and reading through one kind per string is the loop
                    kd = kinds[i]
                    dp = data[i]
                    while j < n:
                        c = _dpr_read(kd, dp, j)
                        kind = cls[c]
                        if kind == 0:
                            j += 1
                            continue
                        a = j
                        h = _DPR_BASIS ^ c
                        j += 1
                        if kind == 1:
                            while j < n:
                                c = _dpr_read(kd, dp, j)
                                if cls[c] != 1:
                                    break
                                h = (h * _DPR_PRIME) ^ c
                                j += 1
                        tid = self._intern(kd, dp, a, j - a, h)
                        if tid < 0:
                            oom = True
                            break
                        ids[ntok] = <int32_t>tid
                        ntok += 1
                    if oom:
                        break
                    tok_off[i + 1] = ntok
        finally:
            free(data); free(kinds)
        if oom:
            raise MemoryError()
        return ntok

    def word_tokens(self, int64_t before, const uint8_t[::1] cls, const uint32_t[::1] lower,
                    DprVocab lowered, int64_t[::1] lens, int32_t[::1] ids):
        """The lowercased tokens of the words from id ``before`` on, as ids of ``lowered``.

        A word's tokens are those of ``tokenize`` with the classes ``cls`` (0, 1, 2), each
        lowercased character by character through ``lower``. That is NFD, the tokenizer and
        ``str.lower`` exactly when each character of the word is its own NFD, has no
        combining class and has a lowercase of one character that needs no context: the
        caller marks every other character ``0xFFFFFFFF`` in ``lower`` and a word holding
        one gets ``lens[w - before] = -1``, for the caller to tokenize. Otherwise word w's
        n ids follow the previous word's in ``ids`` and ``lens[w - before] = n``. ``ids``
        needs room for ``chars_since(before)`` ids. Returns the number of ids written."""
        cdef int64_t nw, w, k, e, m, nids = 0, n0, tid, span
        cdef uint32_t c, lc
        cdef uint8_t kd
        cdef uint64_t h
        cdef uint32_t* buf = NULL
        cdef bint oom = False, simple
        if not 0 <= before <= self.count:
            raise IndexError(before)
        nw = self.count - before
        span = self.arena_len - self.start[before]
        if (cls.shape[0] < 0x110000 or lower.shape[0] < 0x110000 or lens.shape[0] < nw
                or ids.shape[0] < span):
            raise InputError("dpr word_tokens: the tables or outputs are too small")
        buf = <uint32_t*>malloc((span + 1) * sizeof(uint32_t))
        if buf == NULL:
            raise MemoryError()
        with nogil:
            for w in range(before, self.count):
                e = self.start[w + 1]
                simple = True
                for k in range(self.start[w], e):
                    if lower[self.arena[k]] == _DPR_COMPLEX:
                        simple = False
                        break
                if not simple:
                    lens[w - before] = -1
                    continue
                n0 = nids
                k = self.start[w]
                while k < e:
                    c = self.arena[k]
                    kd = cls[c]
                    k += 1
                    if kd == 0:
                        continue
                    lc = lower[c]
                    buf[0] = lc
                    h = _DPR_BASIS ^ lc
                    m = 1
                    if kd == 1:
                        while k < e and cls[self.arena[k]] == 1:
                            lc = lower[self.arena[k]]
                            buf[m] = lc
                            h = (h * _DPR_PRIME) ^ lc
                            m += 1
                            k += 1
                    tid = lowered._intern(4, buf, 0, m, h)
                    if tid < 0:
                        oom = True
                        break
                    ids[nids] = <int32_t>tid
                    nids += 1
                if oom:
                    break
                lens[w - before] = nids - n0
        free(buf)
        if oom:
            raise MemoryError()
        return nids


# stands for an absent "has_answer" (a context's values are any object, None included)
cdef object _dpr_missing = object()


def dpr_gather(list contexts_of, list answers_of, const int64_t[::1] questions, int64_t lo,
               int64_t hi, list texts, int64_t[::1] begin, int64_t[::1] end,
               int64_t[::1] rank, int64_t[::1] q_pas, list answers, int64_t[::1] q_ans,
               int64_t[::1] flag, int64_t[::1] bad):
    """The passages to search of ranks ``lo`` to ``hi`` of each question of ``questions``.

    For question i (``q = questions[i]``, contexts ``contexts_of[q]``, a list or tuple, and
    answers ``answers_of[q]``), the contexts are read in rank order as the script reads
    them: a context with ``has_answer`` is a hit when it is true (``flag[i]`` = its rank,
    and the reading stops) and is skipped otherwise; any other is searched: its text's
    second line (code points ``begin[p]`` to ``end[p]`` of ``texts[p]``, of rank
    ``rank[p]``). A context that is no dict, or has no text with a newline, stops the
    reading (``bad[i]`` = its rank, for the caller's error). Question i's passages are
    ``q_pas[i]`` to ``q_pas[i + 1]``, its answers ``answers[q_ans[i]:q_ans[i + 1]]`` (none
    unless it has passages). ``flag`` and ``bad`` are -1 when unset. The arrays need an
    entry per question (one more for the offsets) and per passage. Returns the number of
    passages, or ``-1 - i`` when question i has passages and its answers are not a list of
    strings (for the caller's error)."""
    cdef int64_t nq = questions.shape[0], i, q, r, top, np_ = 0, cap = begin.shape[0]
    cdef int64_t nl = len(contexts_of), first, second, n, fl, br, had
    cdef object ctxs, ctx, t, v, ans, a
    if (len(answers_of) != nl or end.shape[0] != cap or rank.shape[0] != cap
            or q_pas.shape[0] != nq + 1 or q_ans.shape[0] != nq + 1
            or flag.shape[0] != nq or bad.shape[0] != nq or lo < 0):
        raise InputError("dpr_gather: the outputs do not fit the questions")
    q_pas[0] = 0
    q_ans[0] = 0
    for i in range(nq):
        q = questions[i]
        if not 0 <= q < nl:
            raise InputError("dpr_gather: a question is out of range")
        ctxs = contexts_of[q]
        if not isinstance(ctxs, (list, tuple)):
            raise InputTypeError(f"dpr_gather: question {q}'s contexts are not a list")
        top = min(hi, len(ctxs))
        fl = br = -1
        had = np_
        for r in range(lo, top):
            ctx = ctxs[r]
            if _dpr_is_exact_dict(ctx):
                v = (<dict>ctx).get("has_answer", _dpr_missing)
                if v is not _dpr_missing:
                    if v:
                        fl = r
                        break
                    continue
                t = (<dict>ctx).get("text")
            elif _dpr_is_dict(ctx):
                # a dict subclass: its own "in" and "get", as the script's code would call
                if "has_answer" in ctx:
                    if ctx["has_answer"]:
                        fl = r
                        break
                    continue
                t = ctx.get("text")
            else:
                br = r
                break
            if not _dpr_is_str(t):
                br = r
                break
            n = PyUnicode_GET_LENGTH(t)
            first = _dpr_find_char(t, 10, 0, n, 1)
            if first < 0:
                br = r
                break
            second = _dpr_find_char(t, 10, first + 1, n, 1)
            if np_ >= cap:
                raise InputError("dpr_gather: the outputs do not fit the passages")
            texts.append(t)
            begin[np_] = first + 1
            end[np_] = second if second >= 0 else n
            rank[np_] = r
            np_ += 1
        flag[i] = fl
        bad[i] = br
        q_pas[i + 1] = np_
        if np_ > had:
            ans = answers_of[q]
            if not isinstance(ans, (list, tuple)):
                return -1 - i
            for a in ans:
                if not _dpr_is_str(a):
                    return -1 - i
                answers.append(a)
        q_ans[i + 1] = len(answers)
    return np_


def dpr_expand_count(const int32_t[::1] words, const int64_t[::1] tok_of):
    """The number of tokens of the words ``words`` (word w has ``tok_of[w + 1] -
    tok_of[w]``), or -1 when a word id is unknown."""
    cdef int64_t n = words.shape[0], nw = tok_of.shape[0] - 1, i, total = 0
    cdef int32_t w
    cdef bint bad = False
    with nogil:
        for i in range(n):
            w = words[i]
            if w < 0 or w >= nw:
                bad = True
                break
            total += tok_of[w + 1] - tok_of[w]
    return -1 if bad else total


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
