# gdeval.pl (the TREC Web track's nDCG@k and ERR@k): reading its qrels and runs, and the two
# measures. The rules are the specification's (qafast.reference.gdeval); gdeval_eval.py is the
# Python layer.

from libc.math cimport log, INFINITY, NAN
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcmp, memcpy
from libc.stdlib cimport malloc, free

cdef enum:
    GD_OK = 0
    GD_FORMAT = 1      # a line gdeval.pl rejects: info[1] is its number
    GD_SLOW = 2        # a line only the specification reads exactly (rare spellings)
    GD_TOKEN_MAX = 40  # longer score tokens are converted by Python's float()


cdef inline bint _gd_space(unsigned char c) noexcept nogil:
    # Perl's \s on bytes: space, \t, \n, \v, \f, \r
    return c == 32 or (9 <= c <= 13)


cdef inline bint _gd_digits(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    if n == 0:
        return False
    for i in range(n):
        if p[i] < 48 or p[i] > 57:
            return False
    return True


cdef inline Py_ssize_t _gd_lower_word(const unsigned char* p, Py_ssize_t n,
                                      const char* word) noexcept nogil:
    """The length of ``word`` when ``p`` starts with it in any case, else 0."""
    cdef Py_ssize_t i = 0
    while word[i] != 0:
        if i >= n or (p[i] | 32) != <unsigned char>word[i]:
            return 0
        i += 1
    return i


cdef inline Py_ssize_t _gd_number_token(const unsigned char* p, Py_ssize_t n,
                                        int* kind) noexcept nogil:
    """The length of the number Perl reads at the start of ``p`` (0: none). ``kind``: 0 a
    decimal, 1 infinity, 2 NaN."""
    cdef Py_ssize_t i = 0, start, digits = 0, w
    kind[0] = 0
    if i < n and (p[i] == 43 or p[i] == 45):
        i += 1
    start = i
    w = _gd_lower_word(p + i, n - i, b"infinity")
    if w == 0:
        w = _gd_lower_word(p + i, n - i, b"inf")
    if w:
        kind[0] = 1
        return i + w
    w = _gd_lower_word(p + i, n - i, b"nan")
    if w:
        kind[0] = 2
        return i + w
    while i < n and 48 <= p[i] <= 57:
        i += 1
        digits += 1
    if i < n and p[i] == 46:
        i += 1
        while i < n and 48 <= p[i] <= 57:
            i += 1
            digits += 1
    if digits == 0:
        return 0
    if i < n and (p[i] == 101 or p[i] == 69):
        w = i + 1
        if w < n and (p[w] == 43 or p[w] == 45):
            w += 1
        if w < n and 48 <= p[w] <= 57:
            while w < n and 48 <= p[w] <= 57:
                w += 1
            i = w
    return i


cdef inline uint64_t _gd_hash(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    # FNV-1a; equal hashes are confirmed byte for byte before a judgment is taken
    cdef uint64_t h = 14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ p[i]) * 1099511628211ULL
    return h


def gdeval_scan(const unsigned char[::1] data, bint is_run, int64_t[::1] topic,
                int64_t[::1] doc_start, int64_t[::1] doc_end, uint64_t[::1] doc_hash,
                double[::1] value, int64_t[::1] token_start, int64_t[::1] token_end,
                int64_t[::1] info):
    """Read a gdeval.pl qrels file (``is_run`` false) or run into rows; returns their count.

    Each row: the topic (digits after the last ``-``), the docno's span and hash, and the
    judgment (qrels) or the score (runs). A score whose token the kernel does not convert is
    NaN here, its token's span given for Python to convert. ``info``: the status (``GD_OK``;
    ``GD_FORMAT`` with the line number in ``info[1]``; ``GD_SLOW``: a spelling only the
    specification reads exactly, line number in ``info[1]``), then the last run id's span.
    Every output holds at least one entry per line.
    """
    cdef Py_ssize_t n = data.shape[0], pos = 0, end, i, f, rows = 0, line = 0
    cdef Py_ssize_t fs[6]
    cdef Py_ssize_t fe[6]
    cdef Py_ssize_t t0, tl, tok, cap = topic.shape[0]
    cdef const unsigned char* p
    cdef int kind
    cdef int64_t tv, tv2
    cdef double v
    cdef unsigned char buf[GD_TOKEN_MAX + 1]
    if (doc_start.shape[0] < cap or doc_end.shape[0] < cap or doc_hash.shape[0] < cap
            or value.shape[0] < cap or token_start.shape[0] < cap or token_end.shape[0] < cap
            or info.shape[0] < 4):
        raise ValueError("gdeval_scan: output arrays too short")
    info[0] = GD_OK
    info[1] = 0
    info[2] = 0
    info[3] = 0
    if n == 0:
        return 0
    p = &data[0]
    with nogil:
        while pos < n:
            line += 1
            # the fields, up to six, and the line's end; a \r that is not the line's last
            # byte joins what is around it: the specification's case
            f = 0
            i = pos
            while i < n and p[i] != 10:
                if _gd_space(p[i]):
                    if p[i] == 13 and i + 1 < n and p[i + 1] != 10:
                        info[0] = GD_SLOW
                        info[1] = line
                        break
                    i += 1
                    continue
                if f < 6:
                    fs[f] = i
                while i < n and p[i] != 10 and not _gd_space(p[i]):
                    i += 1
                if f < 6:
                    fe[f] = i
                    f += 1
            if info[0] != GD_OK:
                break
            end = i
            if rows >= cap:
                info[0] = GD_SLOW
                info[1] = line
                break
            # the topic: digits after its last '-'
            if f == 0:
                info[0] = GD_FORMAT
                info[1] = line
                break
            t0 = fe[0]
            while t0 > fs[0] and p[t0 - 1] != 45:
                t0 -= 1
            tl = fe[0] - t0
            if not _gd_digits(p + t0, tl):
                info[0] = GD_FORMAT
                info[1] = line
                break
            if tl > 18 or (tl > 1 and p[t0] == 48):
                info[0] = GD_SLOW
                info[1] = line
                break
            tv = 0
            for i in range(t0, fe[0]):
                tv = tv * 10 + (p[i] - 48)
            if not is_run:
                if f < 4:
                    info[0] = GD_FORMAT
                    info[1] = line
                    break
                # the second column must be 0 as a number
                tok = _gd_number_token(p + fs[1], fe[1] - fs[1], &kind)
                if tok and (kind != 0 or fe[1] - fs[1] > GD_TOKEN_MAX):
                    info[0] = GD_SLOW if kind == 0 else GD_FORMAT
                    info[1] = line
                    break
                if tok:
                    memcpy(buf, p + fs[1], tok)
                    buf[tok] = 32
                    if not _trec_fast_float(buf, tok, &v):
                        info[0] = GD_SLOW
                        info[1] = line
                        break
                    if v != 0.0:
                        info[0] = GD_FORMAT
                        info[1] = line
                        break
                # the judgment: [-]digits, at most 4
                i = fs[3] + (1 if p[fs[3]] == 45 else 0)
                if not _gd_digits(p + i, fe[3] - i):
                    info[0] = GD_FORMAT
                    info[1] = line
                    break
                if fe[3] - i > 18:
                    info[0] = GD_SLOW
                    info[1] = line
                    break
                v = 0.0
                tv2 = 0
                while i < fe[3]:
                    tv2 = tv2 * 10 + (p[i] - 48)
                    i += 1
                if p[fs[3]] == 45:
                    tv2 = -tv2
                if tv2 > 4:
                    info[0] = GD_FORMAT
                    info[1] = line
                    break
                value[rows] = <double>tv2
                token_start[rows] = 0
                token_end[rows] = 0
            else:
                if f < 6 or not _gd_digits(p + fs[3], fe[3] - fs[3]) or (
                        fe[5] - fs[5] == 1 and p[fs[5]] == 48):
                    info[0] = GD_FORMAT
                    info[1] = line
                    break
                tok = _gd_number_token(p + fs[4], fe[4] - fs[4], &kind)
                token_start[rows] = fs[4]
                token_end[rows] = fs[4] + tok
                if tok == 0:
                    value[rows] = 0.0
                elif kind == 1:
                    value[rows] = -INFINITY if p[fs[4]] == 45 else INFINITY
                elif kind == 2:
                    info[0] = GD_SLOW
                    info[1] = line
                    break
                elif tok <= GD_TOKEN_MAX:
                    memcpy(buf, p + fs[4], tok)
                    buf[tok] = 32
                    if not _trec_fast_float(buf, tok, &value[rows]):
                        value[rows] = NAN
                else:
                    value[rows] = NAN
                info[2] = fs[5]
                info[3] = fe[5]
            topic[rows] = tv
            doc_start[rows] = fs[2]
            doc_end[rows] = fe[2]
            doc_hash[rows] = _gd_hash(p + fs[2], fe[2] - fs[2])
            rows += 1
            pos = end + 1
    return rows


def gdeval_same_bytes(const unsigned char[::1] a, const int64_t[::1] a_start,
                      const int64_t[::1] a_end, const unsigned char[::1] b,
                      const int64_t[::1] b_start, const int64_t[::1] b_end,
                      const int64_t[::1] a_rows, const int64_t[::1] b_rows):
    """Whether each pair ``(a_rows[i], b_rows[i])`` holds the same docno bytes; returns the
    first pair that does not (-1: all do). The spans are the scan's, within ``a`` and ``b``."""
    cdef Py_ssize_t i, x, y, m = a_rows.shape[0]
    if b_rows.shape[0] != m:
        raise ValueError("gdeval_same_bytes: row lists differ in length")
    for i in range(m):
        x = a_rows[i]
        y = b_rows[i]
        if not (0 <= x < a_start.shape[0] and x < a_end.shape[0]
                and 0 <= y < b_start.shape[0] and y < b_end.shape[0]):
            raise ValueError("gdeval_same_bytes: row out of range")
        if not (0 <= a_start[x] <= a_end[x] <= a.shape[0]
                and 0 <= b_start[y] <= b_end[y] <= b.shape[0]):
            raise ValueError("gdeval_same_bytes: span out of range")
    cdef Py_ssize_t bad = -1
    with nogil:
        for i in range(m):
            x = a_rows[i]
            y = b_rows[i]
            if a_end[x] - a_start[x] != b_end[y] - b_start[y] or (
                    a_end[x] > a_start[x] and memcmp(&a[a_start[x]], &b[b_start[y]],
                                                     a_end[x] - a_start[x]) != 0):
                bad = i
                break
    return bad


def gdeval_topics(const int64_t[::1] offsets, const int64_t[::1] gains, int64_t k,
                  double[::1] dcg_out, double[::1] err_out):
    """gdeval.pl's DCG and ERR of each group ``gains[offsets[t]:offsets[t + 1]]`` (gains in
    rank order, 0 to 4), at depth ``k``."""
    cdef Py_ssize_t t, i, lo, hi, groups = offsets.shape[0] - 1
    cdef double dcg, err, decay, r, g
    cdef double log2 = log(2.0)
    if groups < 0 or dcg_out.shape[0] < groups or err_out.shape[0] < groups:
        raise ValueError("gdeval_topics: output arrays too short")
    for t in range(groups):
        if not (0 <= offsets[t] <= offsets[t + 1] <= gains.shape[0]):
            raise ValueError("gdeval_topics: offsets out of range")
    for i in range(gains.shape[0]):
        if not (0 <= gains[i] <= 4):
            raise ValueError("gdeval_topics: a gain outside 0-4")
    with nogil:
        for t in range(groups):
            lo = offsets[t]
            hi = offsets[t + 1]
            if k < hi - lo:
                hi = lo + k
            dcg = 0.0
            err = 0.0
            decay = 1.0
            for i in range(lo, hi):
                g = <double>((1 << gains[i]) - 1)
                dcg += g / (log(<double>(i - lo + 2)) / log2)
                r = g / 16.0
                err += r * decay / <double>(i - lo + 1)
                decay *= 1.0 - r
            dcg_out[t] = dcg
            err_out[t] = err


cdef inline int _gd_cmp_doc(const unsigned char* p, const int64_t* ds, const int64_t* de,
                            int64_t x, int64_t y) noexcept nogil:
    """memcmp order of two docnos (a shorter one first when one is the other's prefix)."""
    cdef int64_t lx = de[x] - ds[x], ly = de[y] - ds[y]
    cdef int c = memcmp(p + ds[x], p + ds[y], lx if lx < ly else ly) if (lx and ly) else 0
    if c != 0:
        return c
    return (lx > ly) - (lx < ly)


cdef void _gd_sift(int64_t* a, Py_ssize_t start, Py_ssize_t n, const unsigned char* p,
                   const int64_t* ds, const int64_t* de) noexcept nogil:
    # a min-heap on docno order: heap sort then leaves the greatest docno first
    cdef Py_ssize_t root = start, child
    cdef int64_t t
    while 2 * root + 1 < n:
        child = 2 * root + 1
        if child + 1 < n and _gd_cmp_doc(p, ds, de, a[child + 1], a[child]) < 0:
            child += 1
        if _gd_cmp_doc(p, ds, de, a[child], a[root]) < 0:
            t = a[root]
            a[root] = a[child]
            a[child] = t
            root = child
        else:
            return


def gdeval_sort_ties(const unsigned char[::1] data, const int64_t[::1] doc_start,
                     const int64_t[::1] doc_end, int64_t[::1] order,
                     const int64_t[::1] group_start, const int64_t[::1] group_end):
    """Sort each segment ``order[group_start[g]:group_end[g]]`` (rows of one topic and one
    score) by docno, the greatest (in byte order) first, as gdeval.pl breaks ties."""
    cdef Py_ssize_t g, i, n, rows = doc_start.shape[0]
    cdef int64_t* a
    cdef int64_t t
    if doc_end.shape[0] != rows or group_end.shape[0] != group_start.shape[0]:
        raise ValueError("gdeval_sort_ties: arrays differ in length")
    for i in range(rows):
        if not (0 <= doc_start[i] <= doc_end[i] <= data.shape[0]):
            raise ValueError("gdeval_sort_ties: span out of range")
    for i in range(order.shape[0]):
        if not (0 <= order[i] < rows):
            raise ValueError("gdeval_sort_ties: row out of range")
    for g in range(group_start.shape[0]):
        if not (0 <= group_start[g] <= group_end[g] <= order.shape[0]):
            raise ValueError("gdeval_sort_ties: group out of range")
    if rows == 0 or data.shape[0] == 0:
        return
    with nogil:
        for g in range(group_start.shape[0]):
            a = &order[group_start[g]]
            n = group_end[g] - group_start[g]
            i = n // 2
            while i > 0:
                i -= 1
                _gd_sift(a, i, n, &data[0], &doc_start[0], &doc_end[0])
            i = n
            while i > 1:
                i -= 1
                t = a[0]
                a[0] = a[i]
                a[i] = t
                _gd_sift(a, 0, i, &data[0], &doc_start[0], &doc_end[0])


def gdeval_lookup(const uint64_t[::1] keys, const uint64_t[::1] needles, int64_t[::1] found):
    """For each needle, the position of the equal key in ``keys`` (distinct), else -1: an
    open-addressing table over the keys, built and probed here."""
    cdef Py_ssize_t n = keys.shape[0], m = needles.shape[0], i
    cdef uint64_t size = 1, mask, slot, h
    cdef int64_t* table
    if found.shape[0] < m:
        raise ValueError("gdeval_lookup: output too short")
    while size < 2 * <uint64_t>n + 2:
        size *= 2
    mask = size - 1
    table = <int64_t*>malloc(size * sizeof(int64_t))
    if table == NULL:
        raise MemoryError()
    with nogil:
        for i in range(<Py_ssize_t>size):
            table[i] = -1
        for i in range(n):
            h = keys[i] * 0xff51afd7ed558ccdULL
            slot = (h ^ (h >> 29)) & mask
            while table[slot] != -1:
                slot = (slot + 1) & mask
            table[slot] = i
        for i in range(m):
            h = needles[i] * 0xff51afd7ed558ccdULL
            slot = (h ^ (h >> 29)) & mask
            found[i] = -1
            while table[slot] != -1:
                if keys[table[slot]] == needles[i]:
                    found[i] = table[slot]
                    break
                slot = (slot + 1) & mask
    free(table)
