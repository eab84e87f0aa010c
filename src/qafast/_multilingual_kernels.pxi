# MLQA kernels part: the tokens of MLQA's normalize_answer for a batch of distinct answers,
# interned as ids (qafast.multilingual_eval; the specification is
# qafast.reference.answers.normalize_mlqa).

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

cdef extern from "Python.h":
    bint _ml_isalnum "Py_UNICODE_ISALNUM"(Py_UCS4 ch) nogil
    bint _ml_isspace "Py_UNICODE_ISSPACE"(Py_UCS4 ch) nogil
    bint _ml_is_ascii "PyUnicode_IS_ASCII"(object o)
    int _ml_kind "PyUnicode_KIND"(object o)
    void* _ml_data "PyUnicode_DATA"(object o)
    Py_ssize_t _ml_length "PyUnicode_GET_LENGTH"(object o)


cdef enum:
    # between two strings in ml_tokens' buffers: above every code point, so no text holds it
    _ML_SEP = 0x110000


cdef inline bint _ml_word(uint32_t c) noexcept nogil:
    # what \w matches in a str pattern of the re module (ASCII decided without a lookup)
    if c < 128:
        return c == 95 or 48 <= c <= 57 or 97 <= (c | 32) <= 122
    return c < _ML_SEP and _ml_isalnum(<Py_UCS4>c)


cdef inline bint _ml_space(uint32_t c) noexcept nogil:
    # str.split's whitespace (ASCII: \t \n \v \f \r, \x1c-\x1f and the space)
    if c < 128:
        return c == 32 or 9 <= c <= 13 or 28 <= c <= 31
    return c < _ML_SEP and _ml_isspace(<Py_UCS4>c)


cdef inline bint _ml_cjk(uint32_t c) noexcept nogil:
    return 0x4E00 <= c <= 0x9FA5


cdef inline uint64_t _ml_hash(const uint32_t* p, int64_t n) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL
    cdef int64_t i
    for i in range(n):
        h = (h ^ p[i]) * 1099511628211ULL
    return h ^ (h >> 29)


def ml_lower(list strings):
    """``(lowered, wide, length)``: each of ``strings`` lowercased for :func:`ml_tokens`,
    the distinct code points above ASCII of the lowered strings in increasing order, and
    their total length. An ASCII string is kept as it is (ml_tokens folds its capitals
    itself), any other lowered by ``str.lower``, so the result is ``s.lower()`` up to ASCII
    case. Raises TypeError for a value that is not exactly a str."""
    cdef Py_ssize_t n = len(strings), i, j, m, nwide = 0, total = 0
    cdef list lowered = [None] * n
    cdef object s
    cdef uint8_t* seen = NULL
    cdef const void** data = NULL
    cdef int* kinds = NULL
    cdef Py_ssize_t* lens = NULL
    cdef int kind
    cdef uint32_t c, top = 0
    cdef list wide = []
    try:
        data = <const void**>malloc((n + 1) * sizeof(void*))
        kinds = <int*>malloc((n + 1) * sizeof(int))
        lens = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        if data == NULL or kinds == NULL or lens == NULL:
            raise MemoryError()
        for i in range(n):
            s = strings[i]
            if type(s) is not str:
                raise TypeError(f"ml_lower: strings[{i}] is not a str")
            if not _ml_is_ascii(s):
                s = s.lower()
                # (lowered holds the new string: its data stays valid below)
                data[nwide] = _ml_data(s)
                kinds[nwide] = _ml_kind(s)
                lens[nwide] = _ml_length(s)
                nwide += 1
            lowered[i] = s
            total += _ml_length(s)
        if nwide:
            seen = <uint8_t*>calloc(_ML_SEP, 1)
            if seen == NULL:
                raise MemoryError()
            with nogil:
                for i in range(nwide):
                    kind = kinds[i]
                    m = lens[i]
                    for j in range(m):
                        if kind == 1:
                            c = (<const uint8_t*>data[i])[j]
                        elif kind == 2:
                            c = (<const uint16_t*>data[i])[j]
                        else:
                            c = (<const uint32_t*>data[i])[j]
                        if c >= 128:
                            seen[c] = 1
                            if c > top:
                                top = c
            for c in range(128, top + 1):
                if seen[c]:
                    wide.append(c)
        return lowered, wide, total
    finally:
        free(seen)
        free(data)
        free(kinds)
        free(lens)


def ml_tokens(list strings, const uint8_t[::1] drop, const int64_t[::1] word_off,
              const uint32_t[::1] words, int mode, int64_t[::1] tok_off, int32_t[::1] ids):
    """The tokens of MLQA's ``normalize_answer`` of each string, as ids.

    ``strings``: lowercased but for ASCII capitals, which are folded here (what
    :func:`ml_lower` gives); ``tok_off`` has one entry per string and one more. Code points
    ``c < len(drop)`` with ``drop[c]`` are removed (the punctuation); then every maximal run
    of word characters (as ``\\w`` of ``re``) equal to one of the ``words``
    (``words[word_off[k]:word_off[k + 1]]``) becomes a space, as ``re.sub(r"\\b(w1|w2|...)\\b",
    " ", s)`` does; ``mode`` 2 instead replaces every "ال" (U+0627 U+0644), left to right, by
    a space (MLQA's Arabic rule). Tokens are the runs of non-whitespace; ``mode`` 1
    (Chinese) makes each basic-CJK character a token of its own. Ids follow first
    appearance; string i's are ``ids[tok_off[i]:tok_off[i + 1]]``. ``ids`` needs room for
    as many ids as the strings have code points. Returns the number of tokens."""
    cdef tuple held = tuple(strings)    # the strings stay alive while the GIL is released
    cdef int64_t nstr = len(held), nwords = word_off.shape[0] - 1
    cdef int64_t total = 0, longest = 0, i, j, k, q, m, r, s, ntok = 0, cap, slot, a, b, wl
    cdef int64_t nd = drop.shape[0], length, nvocab = 0
    cdef uint32_t c
    cdef uint32_t* buf = NULL      # one string without its punctuation
    cdef uint32_t* out = NULL      # and without its articles
    cdef uint32_t* vocab = NULL    # the text of every distinct token, one after the other
    cdef const void** data = NULL
    cdef int* kinds = NULL
    cdef int64_t* lens = NULL
    cdef const uint8_t* dropped = &drop[0] if nd else NULL
    cdef const uint8_t* p1
    cdef const uint16_t* p2
    cdef const uint32_t* p4
    cdef int32_t* tab = NULL       # per slot: a token id, or -1
    cdef int64_t* id_start = NULL  # per token id: where its text starts in vocab
    cdef int32_t* id_len = NULL
    cdef uint64_t* id_hash = NULL
    cdef int32_t next_id = 0, t
    cdef uint64_t h
    cdef bint same, failed = False
    cdef object o
    if nstr < 1 or tok_off.shape[0] != nstr + 1 or nwords < 0 \
            or word_off[nwords] != words.shape[0]:
        raise InputError("ml_tokens: the offsets or the words do not fit the strings")
    for k in range(nwords):
        if not 0 <= word_off[k] <= word_off[k + 1] <= words.shape[0]:
            raise InputError("ml_tokens: the word offsets are out of order")
    try:
        data = <const void**>malloc(nstr * sizeof(void*))
        kinds = <int*>malloc(nstr * sizeof(int))
        lens = <int64_t*>malloc(nstr * sizeof(int64_t))
        if data == NULL or kinds == NULL or lens == NULL:
            raise MemoryError()
        for k in range(nstr):
            o = held[k]
            if type(o) is not str:
                raise InputTypeError(f"ml_tokens: strings[{k}] is not a str")
            data[k] = _ml_data(o)
            kinds[k] = _ml_kind(o)
            lens[k] = _ml_length(o)
            total += lens[k]
            if lens[k] > longest:
                longest = lens[k]
        if ids.shape[0] < total:
            raise InputError("ml_tokens: no room for the ids")
        # one string at a time through small buffers, which stay in the cache
        cap = 1024
        buf = <uint32_t*>malloc((longest + 1) * sizeof(uint32_t))
        out = <uint32_t*>malloc((longest + 1) * sizeof(uint32_t))
        # room for as many distinct tokens as there are code points: pages never written
        # take no memory
        vocab = <uint32_t*>malloc((total + 1) * sizeof(uint32_t))
        tab = <int32_t*>malloc(cap * sizeof(int32_t))
        id_start = <int64_t*>malloc((total + 1) * sizeof(int64_t))
        id_len = <int32_t*>malloc((total + 1) * sizeof(int32_t))
        id_hash = <uint64_t*>malloc((total + 1) * sizeof(uint64_t))
        if buf == NULL or out == NULL or vocab == NULL or tab == NULL or id_start == NULL \
                or id_len == NULL or id_hash == NULL:
            raise MemoryError()
        with nogil:
            for i in range(cap):
                tab[i] = -1
            for k in range(nstr):
                tok_off[k] = ntok
                # 1. the punctuation removed, ASCII capitals folded
                m = 0
                length = lens[k]
                if kinds[k] == 1:
                    p1 = <const uint8_t*>data[k]
                    for i in range(length):
                        c = p1[i]
                        if c < nd and dropped[c]:
                            continue
                        if 65 <= c <= 90:
                            c += 32
                        buf[m] = c
                        m += 1
                elif kinds[k] == 2:
                    p2 = <const uint16_t*>data[k]
                    for i in range(length):
                        c = p2[i]
                        if c < nd and dropped[c]:
                            continue
                        if 65 <= c <= 90:
                            c += 32
                        buf[m] = c
                        m += 1
                else:
                    p4 = <const uint32_t*>data[k]
                    for i in range(length):
                        c = p4[i]
                        if c < nd and dropped[c]:
                            continue
                        if 65 <= c <= 90:
                            c += 32
                        buf[m] = c
                        m += 1
                # 2. the articles (or every "ال") replaced by a space
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
                            for s in range(wl):
                                if words[word_off[q] + s] != buf[i + s]:
                                    same = False
                                    break
                            if same:
                                break
                    if same:
                        out[r] = 32
                        r += 1
                    else:
                        for s in range(i, j):
                            out[r] = buf[s]
                            r += 1
                    i = j
                # 3. the tokens interned in a table grown as ids are made (the distinct
                # tokens are few beside the tokens: a small table stays in the cache)
                i = 0
                while i < r:
                    c = out[i]
                    if _ml_space(c):
                        i += 1
                        continue
                    a = i
                    if mode == 1 and _ml_cjk(c):
                        i += 1
                    else:
                        while i < r and not _ml_space(out[i]) and not (
                                mode == 1 and _ml_cjk(out[i])):
                            i += 1
                    b = i
                    h = _ml_hash(out + a, b - a)
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
                            for s in range(b - a):
                                vocab[nvocab + s] = out[a + s]
                            nvocab += b - a
                            break
                        if id_hash[t] == h and id_len[t] == b - a:
                            same = True
                            for s in range(b - a):
                                if vocab[id_start[t] + s] != out[a + s]:
                                    same = False
                                    break
                            if same:
                                break
                        slot = (slot + 1) & (cap - 1)
                    ids[ntok] = t
                    ntok += 1
                    if 2 * next_id > cap:          # keep the table at most half full
                        free(tab)
                        cap *= 2
                        tab = <int32_t*>malloc(cap * sizeof(int32_t))
                        if tab == NULL:
                            failed = True
                            break
                        for s in range(cap):
                            tab[s] = -1
                        for t in range(next_id):
                            slot = <int64_t>(id_hash[t] & <uint64_t>(cap - 1))
                            while tab[slot] >= 0:
                                slot = (slot + 1) & (cap - 1)
                            tab[slot] = t
                if failed:
                    break
            tok_off[nstr] = ntok
        if failed:
            raise MemoryError()
        return ntok
    finally:
        free(data)
        free(kinds)
        free(lens)
        free(buf)
        free(out)
        free(vocab)
        free(tab)
        free(id_start)
        free(id_len)
        free(id_hash)


def ml_predicted_rows(const int32_t[::1] pred_sid, const int64_t[::1] ref_off,
                      int64_t[::1] rows, int32_t[::1] row_sid):
    """The questions with a prediction (``pred_sid[q] >= 0``) in order, into ``rows``, and
    their predictions' string ids into ``row_sid`` (both with room for every question).
    Returns their number, or ``-1 - q`` for the first predicted question q without a gold
    answer (``ref_off[q + 1] == ref_off[q]``)."""
    cdef Py_ssize_t n = pred_sid.shape[0], q, k = 0
    if ref_off.shape[0] != n + 1 or rows.shape[0] < n or row_sid.shape[0] < n:
        raise InputError("ml_predicted_rows: the outputs or the offsets do not fit")
    with nogil:
        for q in range(n):
            if pred_sid[q] >= 0:
                if ref_off[q + 1] <= ref_off[q]:
                    k = -1 - q
                    break
                rows[k] = q
                row_sid[k] = pred_sid[q]
                k += 1
    return k



# CMRC 2018 kernels: each string's normalized form (the exact-match key) and its F1 units,
# each basic-CJK character a unit and each run of other text interned for nltk to split once
# (qafast.answers; the specification is qafast.reference.answers.normalize_cmrc/cmrc_split).

cdef inline int32_t _cmrc_run(const int32_t* keys, int64_t ra, int64_t rb, int64_t* tab,
                              int64_t cap, int64_t* run_off, int64_t* nruns) noexcept nogil:
    # the id of run keys[ra:rb], a new one if it was not seen
    cdef uint64_t h = _ml_hash(<const uint32_t*>(keys + ra), rb - ra)
    cdef int64_t slot = <int64_t>(h & <uint64_t>(cap - 1)), r, s
    cdef bint same
    while True:
        r = tab[slot]
        if r < 0:
            r = nruns[0]
            nruns[0] += 1
            tab[slot] = r
            run_off[2 * r] = ra
            run_off[2 * r + 1] = rb
            return <int32_t>r
        if run_off[2 * r + 1] - run_off[2 * r] == rb - ra:
            same = True
            for s in range(rb - ra):
                if keys[run_off[2 * r] + s] != keys[ra + s]:
                    same = False
                    break
            if same:
                return <int32_t>r
        slot = (slot + 1) & (cap - 1)


def cmrc_units(const uint32_t[::1] text, const uint8_t[::1] drop, int64_t[::1] key_off,
               int32_t[::1] keys, int64_t[::1] unit_off, int32_t[::1] units,
               int64_t[::1] run_off):
    """The normalized form and the units of CMRC 2018's ``remove_punctuation`` and
    ``mixed_segmentation`` of each string, the runs of non-Chinese text interned.

    ``text``: the code points of the lowercased strings joined by U+0000 (which none holds);
    ``key_off`` and ``unit_off`` have one entry per string and one more. Each string is
    stripped of whitespace (``str.strip``), then code points ``c < len(drop)`` with
    ``drop[c]`` are removed: string i's result is ``keys[key_off[i]:key_off[i + 1]]``. Its
    units ``units[unit_off[i]:unit_off[i + 1]]`` are, left to right, ``-1 - (c - 0x4E00)``
    for each basic-CJK character c and, for each maximal run of other code points, the run's
    id ``r >= 0``: ids follow first appearance and run r is ``keys[run_off[2 * r]:run_off[2 *
    r + 1]]``. ``keys``, ``units`` and ``run_off`` need room for ``len(text)``, ``len(text)``
    and ``2 * len(text) + 2`` entries. Returns the number of runs, or -1 if ``text`` holds
    another number of strings."""
    cdef int64_t n = text.shape[0], nstr = key_off.shape[0] - 1, nd = drop.shape[0]
    cdef int64_t i, a = 0, b, e, k = 0, m = 0, u = 0, nruns = 0, cap, ra
    cdef uint32_t c
    cdef int64_t* tab = NULL      # per slot: run id, or -1
    cdef int32_t* kp
    cdef int64_t* rp
    if nstr < 1 or unit_off.shape[0] != nstr + 1 or keys.shape[0] < n or units.shape[0] < n \
            or run_off.shape[0] < 2 * n + 2:
        raise InputError("cmrc_units: the outputs do not fit the text")
    cap = 64
    while cap < n + 2:     # a run is followed by a Chinese character or a string's end
        cap *= 2
    tab = <int64_t*>malloc(cap * sizeof(int64_t))
    if tab == NULL:
        raise MemoryError()
    kp = &keys[0] if keys.shape[0] else NULL
    rp = &run_off[0]
    try:
        with nogil:
            for i in range(cap):
                tab[i] = -1
            key_off[0] = 0
            unit_off[0] = 0
            while True:
                b = a
                while b < n and text[b] != 0:
                    b += 1
                if k == nstr:
                    k += 1     # more strings than offsets
                    break
                e = b          # the string is text[a:b], stripped to text[a:e]
                while a < e and _ml_space(text[a]):
                    a += 1
                while e > a and _ml_space(text[e - 1]):
                    e -= 1
                ra = -1        # where the run being read starts in keys
                while a < e:
                    c = text[a]
                    a += 1
                    if c < nd and drop[c]:
                        continue
                    if _ml_cjk(c):
                        if ra >= 0:
                            units[u] = _cmrc_run(kp, ra, m, tab, cap, rp, &nruns)
                            u += 1
                            ra = -1
                        units[u] = -1 - <int32_t>(c - 0x4E00)
                        u += 1
                    elif ra < 0:
                        ra = m
                    keys[m] = <int32_t>c
                    m += 1
                if ra >= 0:
                    units[u] = _cmrc_run(kp, ra, m, tab, cap, rp, &nruns)
                    u += 1
                k += 1
                key_off[k] = m
                unit_off[k] = u
                if b >= n:
                    break
                a = b + 1
        if k != nstr:
            return -1
        return nruns
    finally:
        free(tab)


def cmrc_expand(const int64_t[::1] unit_off, const int32_t[::1] units,
                const int64_t[::1] run_tok_off, const int32_t[::1] run_toks, int32_t cjk_base,
                int64_t[::1] tok_off, int32_t[::1] toks):
    """The F1 units of :func:`cmrc_units` as token ids: a Chinese character's unit ``-1 - j``
    becomes ``cjk_base + j`` and run r its tokens ``run_toks[run_tok_off[r]:run_tok_off[r +
    1]]``. ``tok_off`` has as many entries as ``unit_off``; ``toks`` needs room for every
    token. Returns the number of tokens."""
    cdef int64_t nstr = unit_off.shape[0] - 1, i, j, m = 0, need = 0
    cdef int64_t nr = run_tok_off.shape[0] - 1
    cdef int32_t v
    if nstr < 0 or tok_off.shape[0] != nstr + 1 or unit_off[nstr] > units.shape[0] \
            or nr < 0 or run_tok_off[nr] > run_toks.shape[0]:
        raise InputError("cmrc_expand: the offsets do not fit")
    for j in range(unit_off[nstr]):
        v = units[j]
        if v >= nr:
            raise InputError("cmrc_expand: a run without tokens")
        need += 1 if v < 0 else run_tok_off[v + 1] - run_tok_off[v]
    if need > toks.shape[0]:
        raise InputError("cmrc_expand: no room for the tokens")
    with nogil:
        tok_off[0] = 0
        for i in range(nstr):
            for j in range(unit_off[i], unit_off[i + 1]):
                v = units[j]
                if v < 0:
                    toks[m] = cjk_base - 1 - v
                    m += 1
                else:
                    for need in range(run_tok_off[v], run_tok_off[v + 1]):
                        toks[m] = run_toks[need]
                        m += 1
            tok_off[i + 1] = m
    return m
