# ---------------------------------------------------------------------------------------------
# HotpotQA scored straight from the bytes of its two files (qafast.hotpot)
#
# hotpot_scan_spans runs the scans of _hotpot_scan.pxi over both files (GIL released; the
# steps hotpot_spans_scan_gold and hotpot_spans_scan_predictions let two threads run them at
# once, the prediction ids' hash table built on the prediction file's thread) and,
# instead of building the Python objects from their events, joins them in C: each gold
# question's last "_id", "answer" and "supporting_facts" (a key given twice keeps its last
# value, as json.loads does), and its predictions, found in a hash table of the prediction
# ids' bytes (the last "answer" and "sp" objects, the last value of an id). hotpot_span_scores
# then scores every question from the spans with the GIL released: the answers normalized
# from their UTF-8 as SQuAD normalizes (_kl_prepare_utf8 and _ak_squad_spans, as
# kilt_squad_spans does) and compared as hotpot_scores compares them (_hp_token_scores), the
# facts deduplicated and matched as (title bytes, sentence id) pairs. Python objects are made
# only for what is printed (the ids of missing predictions) and for what the spans do not
# settle, which HotpotSpans.question() builds for the caller's general pieces: an answer
# with a capital sigma (str.lower() then needs context) or a lone surrogate escape, an answer
# pair of more than _HP_PAIRWISE token pairs, facts with a title of a lone surrogate escape
# or more than _HP_MAX_FACTS distinct facts on a side.
#
# Unescaped valid UTF-8 (the scans check it) is one text's only spelling, so equal bytes are
# equal strs. Files the join does not take (an id written with an escape, a question without
# "_id", a predicted question whose gold lacks the field it reads) give None: the caller then
# takes the path that builds the objects, and says what is wrong where something is.
# ---------------------------------------------------------------------------------------------

cdef struct _HsId:
    int64_t start      # a predicted id's contents in the prediction file
    int64_t size
    int64_t answer     # its predicted answer's event (-1: none)
    int64_t facts      # its predicted facts' _HS_FACTS event (-1: none)


# a question's row of events in HotpotSpans.rows: gold id, gold answer, gold facts (gold
# events), predicted answer, predicted facts (prediction events); -1 where absent
cdef enum:
    _HSR_ID = 0
    _HSR_ANSWER = 1
    _HSR_FACTS = 2
    _HSR_PANSWER = 3
    _HSR_PFACTS = 4
    _HSR_WIDTH = 5


cdef inline uint64_t _hs_hash(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """FNV-1a of the bytes."""
    cdef uint64_t h = 14695981039346656037ULL
    cdef Py_ssize_t k
    for k in range(n):
        h = (h ^ s[k]) * 1099511628211ULL
    return h


cdef extern from *:
    """
    #include "_portable.h"
    """
    void _hs_prefetch "qafast_prefetch" (const void* p) noexcept nogil


# (how many ids ahead the table's slot is fetched: a probe's cache miss is then under way
# while the ids before it are looked up)
cdef enum:
    _HS_AHEAD = 8


cdef inline uint64_t _hs_at(uint64_t h, uint64_t mask) noexcept nogil:
    """The first slot an id of hash h probes (FNV-1a's low bits depend on the low bits of
    the bytes only: mixed first)."""
    return ((h * 0x9E3779B97F4A7C15ULL) >> 24) & mask


cdef inline int64_t _hs_find(const uint64_t* table, uint64_t mask, const _HsId* ids,
                             const unsigned char* base, const unsigned char* key,
                             Py_ssize_t size, uint64_t h, uint64_t* free_at) noexcept nogil:
    """The index in ids of the id key[0:size] (hash h), or -1 with free_at[0] the slot where
    it would go. A slot is 0 (free) or the id's index + 1 under the hash's top 32 bits, so
    that a probe reads the 8-byte slots only (the whole table of a 100,000-question file
    stays in the cache) and the id's bytes only where the 32 bits agree."""
    cdef uint64_t at = _hs_at(h, mask), slot
    cdef uint64_t tag = h >> 32
    cdef const _HsId* known
    while True:
        slot = table[at]
        if slot == 0:
            free_at[0] = at
            return -1
        if slot >> 32 == tag:
            known = ids + ((slot & 0xFFFFFFFFULL) - 1)
            if known.size == size and memcmp(base + known.start, key, size) == 0:
                return <int64_t>(slot & 0xFFFFFFFFULL) - 1
        at = (at + 1) & mask


cdef int _hs_pred_table(const unsigned char* ps, const _HsEvents* pe, uint64_t** table_out,
                        _HsId** ids_out, uint64_t* mask_out) noexcept nogil:
    """The table of the ids of the prediction events (the last "answer" and "sp" objects,
    each id's last value): 0, -1 where the join declines the file, -2 where memory runs
    out. The table and the ids are the caller's to free, whatever is returned."""
    cdef Py_ssize_t k, j, cap = 16, last_answers = -1, last_sps = -1, keys = 0, nids = 0
    cdef Py_ssize_t nkeys = 0
    cdef int64_t kind, key_start, key_size, found
    cdef const int64_t* ev
    cdef uint64_t* table
    cdef _HsId* ids
    cdef _HsId* cur
    cdef int64_t* key_events = NULL
    cdef uint64_t* hashes = NULL
    cdef uint64_t mask, h, free_at = 0
    cdef int section = 0     # 1: in the last "answer" object, 2: in the last "sp" object
    cdef int r = 0
    for k in range(pe.n):
        kind = pe.ev[4 * k]
        if kind == _HS_ANSWERS:
            last_answers = k
        elif kind == _HS_SPS:
            last_sps = k
        elif kind == _HS_KEY:
            keys += 1
    if last_answers < 0 or last_sps < 0 or <uint64_t>keys >= 0xFFFFFFF0ULL:
        return -1
    # (three quarters full at most, were every id distinct; the ids of "answer" and "sp"
    # are mostly the same, so half that)
    while cap < keys + keys // 3 + 2:
        cap *= 2
    table = <uint64_t*>calloc(cap, sizeof(uint64_t))
    ids = <_HsId*>malloc((keys + 1) * sizeof(_HsId))
    table_out[0], ids_out[0] = table, ids
    key_events = <int64_t*>malloc((keys + 1) * sizeof(int64_t))
    hashes = <uint64_t*>malloc((keys + 1) * sizeof(uint64_t))
    if table == NULL or ids == NULL or key_events == NULL or hashes == NULL:
        free(key_events)
        free(hashes)
        return -2
    mask = <uint64_t>(cap - 1)
    mask_out[0] = mask
    # the ids of the last two objects and their hashes, in file order; each id's value is
    # the event after it (a _HS_TEXT in "answer", a _HS_FACTS in "sp")
    for k in range(pe.n):
        ev = pe.ev + 4 * k
        kind = ev[0]
        if kind == _HS_ANSWERS:
            section = 1 if k == last_answers else 0
        elif kind == _HS_SPS:
            section = 2 if k == last_sps else 0
        elif section and kind == _HS_KEY:
            if ev[3] & 1 or k + 1 >= pe.n or pe.ev[4 * (k + 1)] != (
                    _HS_TEXT if section == 1 else _HS_FACTS):
                r = -1   # (an escaped id: its bytes are not its only spelling)
                break
            key_events[nkeys] = k
            hashes[nkeys] = _hs_hash(ps + ev[1] + 1, ev[2] - ev[1] - 2)
            nkeys += 1
    if r == 0:
        for j in range(nkeys):
            if j + _HS_AHEAD < nkeys:
                _hs_prefetch(table + _hs_at(hashes[j + _HS_AHEAD], mask))
            ev = pe.ev + 4 * key_events[j]
            key_start = ev[1] + 1
            key_size = ev[2] - ev[1] - 2
            h = hashes[j]
            found = _hs_find(table, mask, ids, ps, ps + key_start, key_size, h, &free_at)
            if found < 0:
                cur = ids + nids
                cur.start, cur.size, cur.answer, cur.facts = key_start, key_size, -1, -1
                nids += 1
                table[free_at] = ((h >> 32) << 32) | <uint64_t>nids
            else:
                cur = ids + found
            if ev[4] == _HS_TEXT:   # (the kind of the next event, the id's value)
                cur.answer = key_events[j] + 1
            else:
                cur.facts = key_events[j] + 1
    free(key_events)
    free(hashes)
    return r


cdef int _hs_rows(const _HsEvents* ge, int64_t* rows, Py_ssize_t nq) noexcept nogil:
    """Fill the gold columns of rows (nq questions) from the gold events, the predicted ones
    -1 (nothing predicted, until _hs_lookup joins them): 0, or -1 where the join declines
    the file (a question without "_id", or an id written with an escape)."""
    cdef Py_ssize_t k, i = -1
    cdef int64_t kind
    for k in range(ge.n):
        kind = ge.ev[4 * k]
        if kind == _HS_ENTRY:
            i += 1
            rows[_HSR_WIDTH * i + _HSR_ID] = -1
            rows[_HSR_WIDTH * i + _HSR_ANSWER] = -1
            rows[_HSR_WIDTH * i + _HSR_FACTS] = -1
            rows[_HSR_WIDTH * i + _HSR_PANSWER] = -1
            rows[_HSR_WIDTH * i + _HSR_PFACTS] = -1
        elif kind == _HS_ID:
            rows[_HSR_WIDTH * i + _HSR_ID] = k
        elif kind == _HS_ANSWER:
            rows[_HSR_WIDTH * i + _HSR_ANSWER] = k
        elif kind == _HS_FACTS:
            rows[_HSR_WIDTH * i + _HSR_FACTS] = k
    for i in range(nq):
        k = rows[_HSR_WIDTH * i + _HSR_ID]
        if k < 0 or ge.ev[4 * k + 3] & 1:
            return -1
    return 0


# (how many questions ahead the lookup fetches, in three stages: the table's slot, then the
# id's entry the slot names, then that id's bytes in the prediction file; each fetch reads
# what the stage before brought into the cache, so that the three misses of a probe are
# under way while the questions before it are looked up)
cdef enum:
    _HS_AHEAD_SLOT = 12
    _HS_AHEAD_ENTRY = 6
    _HS_AHEAD_BYTES = 3


cdef inline int64_t _hs_guess(const uint64_t* table, uint64_t mask, uint64_t h) noexcept nogil:
    """The index of the first id whose slot agrees with hash h in its top 32 bits, or -1:
    the id _hs_find will most likely compare (a guess, for prefetching only)."""
    cdef uint64_t at = _hs_at(h, mask), slot
    cdef uint64_t tag = h >> 32
    while True:
        slot = table[at]
        if slot == 0:
            return -1
        if slot >> 32 == tag:
            return <int64_t>(slot & 0xFFFFFFFFULL) - 1
        at = (at + 1) & mask


cdef int _hs_lookup(const unsigned char* gs, const _HsEvents* ge, const unsigned char* ps,
                    const uint64_t* table, uint64_t mask, const _HsId* ids, int64_t* rows,
                    Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """Fill the predicted columns of rows start to stop (their gold columns filled by
    _hs_rows) from the prediction ids' table: 0, -1 where the join declines the files, -2
    where memory runs out. Writes those rows only: two threads may look up apart ranges."""
    cdef Py_ssize_t i, m = stop - start
    cdef int64_t key_size, found, guess
    cdef const int64_t* ev
    cdef const _HsId* known
    cdef uint64_t* hashes
    cdef uint64_t free_at = 0
    hashes = <uint64_t*>malloc((m + 1) * sizeof(uint64_t))
    if hashes == NULL:
        return -2
    for i in range(m):
        ev = ge.ev + 4 * rows[_HSR_WIDTH * (start + i) + _HSR_ID]
        hashes[i] = _hs_hash(gs + ev[1] + 1, ev[2] - ev[1] - 2)
    for i in range(m):
        if i + _HS_AHEAD_SLOT < m:
            _hs_prefetch(table + _hs_at(hashes[i + _HS_AHEAD_SLOT], mask))
        if i + _HS_AHEAD_ENTRY < m:
            guess = _hs_guess(table, mask, hashes[i + _HS_AHEAD_ENTRY])
            if guess >= 0:
                _hs_prefetch(ids + guess)
        if i + _HS_AHEAD_BYTES < m:
            guess = _hs_guess(table, mask, hashes[i + _HS_AHEAD_BYTES])
            if guess >= 0:
                _hs_prefetch(ps + ids[guess].start)
        ev = ge.ev + 4 * rows[_HSR_WIDTH * (start + i) + _HSR_ID]
        key_size = ev[2] - ev[1] - 2
        found = _hs_find(table, mask, ids, ps, gs + ev[1] + 1, key_size, hashes[i], &free_at)
        if found < 0:
            continue
        known = ids + found
        if (known.answer >= 0 and rows[_HSR_WIDTH * (start + i) + _HSR_ANSWER] < 0) or (
                known.facts >= 0 and rows[_HSR_WIDTH * (start + i) + _HSR_FACTS] < 0):
            free(hashes)
            return -1   # (the script fails there: the caller's general path says where)
        rows[_HSR_WIDTH * (start + i) + _HSR_PANSWER] = known.answer
        rows[_HSR_WIDTH * (start + i) + _HSR_PFACTS] = known.facts
    free(hashes)
    return 0


cdef class HotpotSpans:
    """The events of a HotpotQA gold file and prediction file, joined question by question;
    ``questions``: the number of gold questions. hotpot_scan_spans makes it in one call;
    hotpot_spans_new, hotpot_spans_scan_gold and hotpot_spans_scan_predictions (each once,
    the two possibly at the same time on two threads), then hotpot_spans_join, in steps;
    or, instead of hotpot_spans_join, hotpot_spans_rows, then hotpot_spans_lookup of
    apart ranges of questions (possibly on two threads at once)."""
    cdef bytes gold_raw
    cdef bytes pred_raw
    cdef object scanstring
    cdef _HsEvents ge
    cdef _HsEvents pe
    cdef int64_t* rows
    cdef uint64_t* table    # the prediction ids' hash table (_hs_find)
    cdef _HsId* pred_ids
    cdef uint64_t mask
    # each file's scan: 0 not begun, 1 under way, 2 done, -1 declined, -2 out of memory
    cdef int gold_scan
    cdef int pred_scan
    cdef bint joined       # the gold columns of rows filled (hotpot_spans_rows)
    cdef readonly Py_ssize_t questions

    def __cinit__(self):
        memset(&self.ge, 0, sizeof(_HsEvents))
        memset(&self.pe, 0, sizeof(_HsEvents))
        self.rows = NULL
        self.table = NULL
        self.pred_ids = NULL
        self.mask = 0
        self.gold_scan = self.pred_scan = 0
        self.joined = False
        self.questions = 0

    def __dealloc__(self):
        free(self.ge.ev)
        free(self.pe.ev)
        free(self.rows)
        free(self.table)
        free(self.pred_ids)

    cdef object _text(self, int which, int64_t k):
        """The string of event k of the gold (which 0) or prediction events, None for -1."""
        if k < 0:
            return None
        if which == 0:
            return _hs_string(<const unsigned char*>PyBytes_AS_STRING(self.gold_raw),
                              self.ge.ev + 4 * k, self.scanstring)
        return _hs_string(<const unsigned char*>PyBytes_AS_STRING(self.pred_raw),
                          self.pe.ev + 4 * k, self.scanstring)

    cdef object _facts(self, int which, int64_t k):
        """The facts list of _HS_FACTS event k, None for -1."""
        cdef Py_ssize_t at = k
        if k < 0:
            return None
        if which == 0:
            return _hs_fact_list(<const unsigned char*>PyBytes_AS_STRING(self.gold_raw),
                                 self.ge.ev, &at, self.ge.n, self.scanstring)
        return _hs_fact_list(<const unsigned char*>PyBytes_AS_STRING(self.pred_raw),
                             self.pe.ev, &at, self.pe.n, self.scanstring)

    def question(self, Py_ssize_t i):
        """Question i as json.loads would give it: ``(id, gold answer, gold facts, predicted
        answer, predicted facts)``, None where absent."""
        cdef int64_t* row
        if not 0 <= i < self.questions:
            raise IndexError("no such question")
        row = self.rows + _HSR_WIDTH * i
        return (self._text(0, row[_HSR_ID]), self._text(0, row[_HSR_ANSWER]),
                self._facts(0, row[_HSR_FACTS]), self._text(1, row[_HSR_PANSWER]),
                self._facts(1, row[_HSR_PFACTS]))

    def qid(self, Py_ssize_t i):
        """Question i's id."""
        if not 0 <= i < self.questions:
            raise IndexError("no such question")
        return self._text(0, self.rows[_HSR_WIDTH * i + _HSR_ID])

    def ids(self):
        """Every question's id, in gold order."""
        cdef Py_ssize_t i
        return [self._text(0, self.rows[_HSR_WIDTH * i + _HSR_ID])
                for i in range(self.questions)]

    def missing(self, const uint8_t[::1] state):
        """The script's notes of the questions whose state (hotpot_span_scores') lacks bit
        1 (answer predicted) or 2 (facts predicted), in gold order: ``("answer", id)``
        then ``("sp", id)`` for each (one pass over the states, where Python's took
        milliseconds for the ids alone)."""
        cdef Py_ssize_t i
        cdef uint8_t s
        cdef list notes = []
        if state.shape[0] != self.questions:
            raise InputError("one state per question is expected")
        for i in range(self.questions):
            s = state[i]
            if (s & 3) == 3:
                continue
            qid = self._text(0, self.rows[_HSR_WIDTH * i + _HSR_ID])
            if not s & 1:
                notes.append(("answer", qid))
            if not s & 2:
                notes.append(("sp", qid))
        return notes


def hotpot_spans_new(bytes pred, object scanstring):
    """A HotpotSpans of a prediction file's bytes, nothing scanned yet (the gold file's bytes
    come with hotpot_spans_scan_gold). ``scanstring``: json.decoder.scanstring, for the long
    escaped strings HotpotSpans.question builds."""
    cdef HotpotSpans spans = HotpotSpans()
    spans.pred_raw, spans.scanstring = pred, scanstring
    return spans


def hotpot_spans_scan_predictions(HotpotSpans spans):
    """Scan the prediction file of ``spans`` and build the table of its ids, with the GIL
    released. This and hotpot_spans_scan_gold touch apart parts of spans, so that two
    threads may run them at once; each runs once (a second call raises). Returns whether
    the scan took the file (False: it is not of the plain form the scans read)."""
    cdef const unsigned char* s
    cdef Py_ssize_t n
    cdef int r
    if spans.pred_raw is None:
        raise InputError("a HotpotSpans of hotpot_spans_new is expected")
    # (the state checked and set under the GIL: one scan of the file, ever)
    if spans.pred_scan != 0:
        raise InputError("the prediction file of this HotpotSpans is already scanned")
    spans.pred_scan = 1
    s = <const unsigned char*>PyBytes_AS_STRING(spans.pred_raw)
    n = PyBytes_GET_SIZE(spans.pred_raw)
    with nogil:
        if n == 0 or _hs_pred_events(s, n, &spans.pe) < 0:
            r = -1
        else:
            r = _hs_pred_table(s, &spans.pe, &spans.table, &spans.pred_ids, &spans.mask)
    spans.pred_scan = 2 if r == 0 else r
    if r == -2:
        raise MemoryError()
    return r == 0


def hotpot_spans_scan_gold(HotpotSpans spans, bytes gold):
    """Scan the gold file's bytes ``gold`` into ``spans``, with the GIL released (see
    hotpot_spans_scan_predictions). Returns whether the scan took the file."""
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(gold)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(gold)
    cdef int r
    if spans.pred_raw is None:
        raise InputError("a HotpotSpans of hotpot_spans_new is expected")
    if spans.gold_scan != 0:
        raise InputError("the gold file of this HotpotSpans is already scanned")
    spans.gold_scan = 1
    spans.gold_raw = gold
    with nogil:
        r = -1 if n == 0 or _hs_gold_events(s, n, &spans.ge) < 0 else 0
    spans.gold_scan = 2 if r == 0 else r
    return r == 0


def hotpot_spans_rows(HotpotSpans spans):
    """The first step of the join of the two scanned files of ``spans`` (GIL released): each
    gold question's row of gold events, nothing predicted until hotpot_spans_lookup. Whether
    the join takes the files (False where either scan declined its file, or a gold question
    has no plain "_id"; see the notes at the top of _hotpot_spans.pxi); ``spans.questions``
    is set where it does. Once per HotpotSpans."""
    cdef Py_ssize_t k, nq = 0
    cdef int r = 0
    if spans.gold_scan == -2 or spans.pred_scan == -2:
        raise MemoryError()
    if spans.gold_scan < 0 or spans.pred_scan < 0:
        return False
    if spans.gold_scan != 2 or spans.pred_scan != 2 or spans.joined:
        raise InputError("the join takes a HotpotSpans of two scanned files, once")
    spans.joined = True
    with nogil:
        for k in range(spans.ge.n):
            if spans.ge.ev[4 * k] == _HS_ENTRY:
                nq += 1
        spans.rows = <int64_t*>malloc((nq * _HSR_WIDTH + 1) * sizeof(int64_t))
        r = -2 if spans.rows == NULL else _hs_rows(&spans.ge, spans.rows, nq)
    if r == -2:
        raise MemoryError()
    if r < 0 or nq == 0:
        return False
    spans.questions = nq
    return True


def hotpot_spans_lookup(HotpotSpans spans, Py_ssize_t start=0, Py_ssize_t stop=-1):
    """The second step of the join (GIL released): the predictions of the questions start
    to stop (-1: the last) found among the prediction file's ids. Writes those questions'
    rows only, so that two threads may look up apart ranges at once. Whether the join
    takes them (False: a predicted question's gold lacks the field the script reads; the
    caller then takes the general path, which says where)."""
    cdef Py_ssize_t n = spans.questions
    cdef const unsigned char* gs
    cdef const unsigned char* ps
    cdef int r
    if not spans.joined or n == 0:
        raise InputError("hotpot_spans_lookup takes a HotpotSpans that hotpot_spans_rows "
                         "took")
    if stop < 0:
        stop = n
    if not 0 <= start <= stop <= n:
        raise InputError(f"no questions {start} to {stop} among {n}")
    gs = <const unsigned char*>PyBytes_AS_STRING(spans.gold_raw)
    ps = <const unsigned char*>PyBytes_AS_STRING(spans.pred_raw)
    with nogil:
        r = _hs_lookup(gs, &spans.ge, ps, spans.table, spans.mask, spans.pred_ids, spans.rows,
                       start, stop)
    if r == -2:
        raise MemoryError()
    return r == 0


def hotpot_spans_join(HotpotSpans spans):
    """Join the questions of the two scanned files of ``spans`` (GIL released):
    hotpot_spans_rows, then hotpot_spans_lookup of every question. Whether the join takes
    them (False where either scan declined its file, or the join declines them; see the
    notes at the top of _hotpot_spans.pxi)."""
    return hotpot_spans_rows(spans) and hotpot_spans_lookup(spans)


def hotpot_scan_spans(bytes gold, bytes pred, object scanstring):
    """The HotpotSpans of a gold file's and a prediction file's bytes, or None where either
    is not of the plain form the scans read or the join declines them (see the notes at
    the top of _hotpot_spans.pxi): hotpot_spans_new, both scans and the join on this
    thread. ``scanstring``: json.decoder.scanstring, for the long escaped strings
    HotpotSpans.question builds."""
    spans = hotpot_spans_new(pred, scanstring)
    if not hotpot_spans_scan_gold(spans, gold) or not hotpot_spans_scan_predictions(spans):
        return None
    return spans if hotpot_spans_join(spans) else None


cdef int _hs_span_facts(const unsigned char* s, const _HsEvents* e, int64_t k,
                        unsigned char* arena, const unsigned char** titles, int64_t* sizes,
                        int64_t* sids) noexcept nogil:
    """The distinct (title, sentence id) facts after _HS_FACTS event k into titles/sizes
    (each title's UTF-8: in s, or unescaped into arena, which has room for the bytes of
    every title of the list) and sids: their number, or -1 where a title has a lone
    surrogate escape or there are more than _HP_MAX_FACTS."""
    cdef int count = 0, j
    cdef int64_t* ev
    cdef const unsigned char* title
    cdef int64_t size, sid
    cdef bint seen
    k += 1
    while k < e.n and e.ev[4 * k] == _HS_FACT:
        ev = e.ev + 4 * k
        k += 1
        if ev[3] & 1:
            size = _kj_unescape(s, ev[1] + 1, ev[2] - 1, arena)
            if size < 0:
                return -1
            title = arena
            arena += size
        else:
            title = s + ev[1] + 1
            size = ev[2] - ev[1] - 2
        sid = (ev[3] - (ev[3] & 1)) // 2
        seen = False
        for j in range(count):
            if sids[j] == sid and sizes[j] == size and memcmp(titles[j], title, size) == 0:
                seen = True
                break
        if seen:
            continue
        if count == _HP_MAX_FACTS:
            return -1
        titles[count], sizes[count], sids[count] = title, size, sid
        count += 1
    return count


cdef int64_t _hs_facts_bytes(const _HsEvents* e, int64_t k) noexcept nogil:
    """The bytes of the titles of the facts after _HS_FACTS event k (quotes included)."""
    cdef int64_t total = 0
    k += 1
    while k < e.n and e.ev[4 * k] == _HS_FACT:
        total += e.ev[4 * k + 2] - e.ev[4 * k + 1]
        k += 1
    return total


cdef const unsigned char* _hs_contents(const unsigned char* s, const int64_t* ev,
                                       unsigned char* buf, Py_ssize_t* size) noexcept nogil:
    """The UTF-8 of a string event's text (buf: room for its bytes, where it is escaped);
    NULL for a lone surrogate escape."""
    if ev[3] & 1:
        size[0] = _kj_unescape(s, ev[1] + 1, ev[2] - 1, buf)
        return buf if size[0] >= 0 else NULL
    size[0] = ev[2] - ev[1] - 2
    return s + ev[1] + 1


def hotpot_span_scores(HotpotSpans spans, uint8_t[::1] state, double[:, ::1] out,
                       Py_ssize_t start=0, Py_ssize_t stop=-1):
    """Score every question of ``spans`` from the files' bytes, as hotpot_scores does from
    objects: ``state[i]`` bit 1 (answer predicted), 2 (facts predicted), 4 (its answer left
    to the caller), 8 (its facts left to the caller); ``out[i, 0:4]`` the answer's exact
    match, F1, precision and recall, ``out[i, 4:7]`` the facts' true positives, false
    positives and false negatives, where scored here. Only the questions start to stop
    (-1: the last) are scored and their rows written: two threads may score apart ranges at
    once. Returns how many questions have something left to the caller
    (HotpotSpans.question gives their objects)."""
    cdef Py_ssize_t n = spans.questions, i, most = 0, k, sp, sg
    cdef const unsigned char* gs = <const unsigned char*>PyBytes_AS_STRING(spans.gold_raw)
    cdef const unsigned char* ps = <const unsigned char*>PyBytes_AS_STRING(spans.pred_raw)
    cdef const unsigned char* up
    cdef const unsigned char* ug
    cdef unsigned char* bp = NULL
    cdef unsigned char* bg = NULL
    cdef const int64_t* row
    cdef const int64_t* evp
    cdef const int64_t* evg
    cdef const unsigned char* pst[_HP_MAX_FACTS]
    cdef int64_t psz[_HP_MAX_FACTS]
    cdef int64_t psid[_HP_MAX_FACTS]
    cdef const unsigned char* gst[_HP_MAX_FACTS]
    cdef int64_t gsz[_HP_MAX_FACTS]
    cdef int64_t gsid[_HP_MAX_FACTS]
    cdef int64_t most_facts = 0
    cdef int np_, ng, x, y, tp
    cdef Py_ssize_t mp, mg, ntp, ntg, left = 0
    cdef bint blank
    cdef uint8_t s
    cdef _AkWork wp
    cdef _AkWork wg
    if state.shape[0] != n or out.shape[0] != n or out.shape[1] < 7:
        raise InputError("one state and one row of seven outputs per question are expected")
    if stop < 0:
        stop = n
    if not 0 <= start <= stop <= n:
        raise InputError(f"no questions {start} to {stop} among {n}")
    # the longest answer's bytes: the room the normalization and the unescaping need
    for i in range(start, stop):
        row = spans.rows + _HSR_WIDTH * i
        if row[_HSR_PANSWER] >= 0:
            evp = spans.pe.ev + 4 * row[_HSR_PANSWER]
            evg = spans.ge.ev + 4 * row[_HSR_ANSWER]
            most = max(most, evp[2] - evp[1], evg[2] - evg[1])
        if row[_HSR_PFACTS] >= 0:
            most_facts = max(most_facts, _hs_facts_bytes(&spans.pe, row[_HSR_PFACTS]),
                             _hs_facts_bytes(&spans.ge, row[_HSR_FACTS]))
    # (the buffers unescape an answer each, or a list of titles each)
    most = max(most, most_facts)
    memset(&wp, 0, sizeof(_AkWork))
    memset(&wg, 0, sizeof(_AkWork))
    bp = <unsigned char*>malloc(most + 1)
    bg = <unsigned char*>malloc(most + 1)
    try:
        if bp == NULL or bg == NULL:
            raise MemoryError()
        _ak_work_reserve(&wp, most + 1)
        _ak_work_reserve(&wg, most + 1)
        with nogil:
            for i in range(start, stop):
                row = spans.rows + _HSR_WIDTH * i
                s = 0
                if row[_HSR_PANSWER] >= 0:
                    s |= 1
                    evp = spans.pe.ev + 4 * row[_HSR_PANSWER]
                    evg = spans.ge.ev + 4 * row[_HSR_ANSWER]
                    up = _hs_contents(ps, evp, bp, &sp)
                    ug = _hs_contents(gs, evg, bg, &sg)
                    mp = _kl_prepare_utf8(up, sp, &wp, &blank) if up != NULL else -1
                    if mp < 0:
                        s |= 4
                    else:
                        ntp = _ak_squad_spans(&wp, mp)
                        if ug != NULL and sp == sg and memcmp(up, ug, sp) == 0:
                            _hp_same_answer(ntp, &out[i, 0])
                        else:
                            mg = _kl_prepare_utf8(ug, sg, &wg, &blank) if ug != NULL else -1
                            if mg < 0:
                                s |= 4
                            else:
                                ntg = _ak_squad_spans(&wg, mg)
                                if _hp_token_scores(&wp, ntp, &wg, ntg, &out[i, 0]):
                                    s |= 4
                if row[_HSR_PFACTS] >= 0:
                    s |= 2
                    np_ = _hs_span_facts(ps, &spans.pe, row[_HSR_PFACTS], bp, pst, psz,
                                         psid)
                    ng = _hs_span_facts(gs, &spans.ge, row[_HSR_FACTS], bg, gst, gsz,
                                        gsid) if np_ >= 0 else -1
                    if ng < 0:
                        s |= 8
                    else:
                        tp = 0
                        for x in range(np_):
                            for y in range(ng):
                                if psid[x] == gsid[y] and psz[x] == gsz[y] and memcmp(
                                        pst[x], gst[y], psz[x]) == 0:
                                    tp += 1
                                    break
                        out[i, 4] = tp
                        out[i, 5] = np_ - tp
                        out[i, 6] = ng - tp
                state[i] = s
                if s & 12:
                    left += 1
    finally:
        free(bp)
        free(bg)
        _ak_work_free(&wp)
        _ak_work_free(&wg)
    return left
