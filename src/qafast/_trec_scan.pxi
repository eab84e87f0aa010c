# TREC reader part: stage 1, the scan (see _trec_io.pxi): the parser's state, the general
# loop over a block's lines and the run lane it hands the common run line to. With a
# parser that does not intern documents, the scan runs stage 2 on each line as it goes
# (_trec_take_row, in _trec_intern.pxi).

# ---------------------------------------------------------------------------------------
# stage 1, scan: split lines into fields, convert values, hash ids

ctypedef struct _trec_Pending:       # a score left for the exact slow path
    uint64_t row
    int64_t line
    Py_ssize_t off
    Py_ssize_t len

ctypedef struct _trec_ScanState:
    bint is_run
    bint intern_docs                 # False: each line's document hash goes to `hashes`
    int need                         # fields per line: 6 (run) or 4 (qrels)
    int64_t line_no                  # lines scanned so far
    uint64_t rows                    # data lines scanned so far
    uint64_t cap
    double *scores                   # run
    int32_t *grades                  # qrels
    # line numbers: the rows whose line is not the previous row's + 1 (row 0 among them),
    # row r's line being jump_line[k] + r - jump_row[k] for the last jump k at or before r
    # (a column of them was 8 bytes a row, 48 MB for 6M qrels lines)
    int64_t *jump_row
    int64_t *jump_line
    uint64_t njump
    uint64_t jump_cap
    int64_t next_line                # the line of a row without a jump; -1: a jump is due
    int64_t *hashes                  # without interning: _trec_hash of each document id
    _trec_Pending *pend              # per block
    uint64_t npend
    uint64_t pend_cap
    Py_ssize_t runid_off             # per block; -1: no data line
    Py_ssize_t runid_len
    int err                          # first error of the block
    int64_t err_line
    Py_ssize_t err_off
    Py_ssize_t err_len
    int err_nfields

ctypedef struct _trec_InternState:
    bint intern_docs
    _trec_Table qtab
    _trec_Table dtab                 # document ids, when interned
    int32_t *qidx
    int32_t *didx                    # when interned
    bint keep_tiekeys                # a qrels reader has no use for them
    int64_t *tiekeys                 # otherwise: each line's document tie key,
    int64_t *offsets                 # the document's bytes blob[offsets[i]:offsets[i + 1]]
    unsigned char *blob              # (cap + 1 offsets, offsets[0] = 0)
    uint64_t blob_len
    uint64_t blob_cap
    uint64_t rows                    # rows interned so far
    uint64_t cap
    int64_t prev_q                   # query index of the previous row, -1 if none
    # a run without interning documents (what complete_rows() reads):
    bint scattered                   # a row's query was neither the previous row's nor the
                                     # next new one: the queries' lines are not together
    bint keep_starts                 # a run's parser; a qrels reader never hands them over
    int64_t *qstart                  # the rows held where a query starts (qstart[0] = 0
    uint64_t nqstart                 # while rows are held)
    uint64_t qstart_cap
    int err
    uint64_t err_k                   # row within the batch
    Py_ssize_t err_off
    Py_ssize_t err_len

# One block's data lines as stage 2 needs them: where each query id is, and each document
# id's offset, length, hash-derived meta word and first 8 bytes.
ctypedef struct _trec_BatchData:
    uint64_t row_start
    uint64_t n                       # rows scanned
    uint64_t n_ok                    # rows before the block's first error (all if none)
    uint64_t cap
    int64_t *q_off
    uint32_t *q_len
    int64_t *d_off
    uint32_t *d_len
    uint32_t *d_meta
    uint64_t *d_key8


cdef int _trec_scan_grow(_trec_ScanState *sc) noexcept nogil:
    cdef uint64_t cap = sc.cap * 2 if sc.cap else 1 << 16
    cdef void *a
    if sc.is_run:
        a = _trec_mem_resize(sc.scores, sc.cap * sizeof(double), cap * sizeof(double))
        if a == NULL:
            return -1
        sc.scores = <double *>a
    else:
        a = _trec_mem_resize(sc.grades, sc.cap * sizeof(int32_t), cap * sizeof(int32_t))
        if a == NULL:
            return -1
        sc.grades = <int32_t *>a
    if not sc.intern_docs:
        a = _trec_mem_resize(sc.hashes, sc.cap * sizeof(int64_t), cap * sizeof(int64_t))
        if a == NULL:
            return -1
        sc.hashes = <int64_t *>a
    sc.cap = cap
    return 0


cdef int _trec_jump_grow(_trec_ScanState *sc) noexcept nogil:
    cdef uint64_t cap = sc.jump_cap * 2 if sc.jump_cap else 64
    cdef void *a = realloc(sc.jump_row, cap * sizeof(int64_t))
    if a == NULL:
        return -1
    sc.jump_row = <int64_t *>a
    a = realloc(sc.jump_line, cap * sizeof(int64_t))
    if a == NULL:
        return -1
    sc.jump_line = <int64_t *>a
    sc.jump_cap = cap
    return 0


cdef int _trec_qstart_push(_trec_InternState *it, uint64_t row) noexcept nogil:
    # Notes that a query starts at `row`
    cdef uint64_t cap
    cdef void *a
    if it.nqstart == it.qstart_cap:
        cap = it.qstart_cap * 2 if it.qstart_cap else 1024
        a = realloc(it.qstart, cap * sizeof(int64_t))
        if a == NULL:
            return -1
        it.qstart = <int64_t *>a
        it.qstart_cap = cap
    it.qstart[it.nqstart] = <int64_t>row
    it.nqstart += 1
    return 0


cdef inline int _trec_new_query(_trec_InternState *it, int64_t qi, uint64_t row) noexcept nogil:
    # Row `row` starts query `qi` (it.prev_q still the previous row's): the queries' lines
    # are together only if it is the next new one, and complete_rows() hands a run's starts
    # over, so that no pass over the rows looks for either. -1 when out of memory.
    if qi != it.prev_q + 1:
        it.scattered = True
    return _trec_qstart_push(it, row) if it.keep_starts else 0


cdef uint64_t _trec_last_jump(const _trec_ScanState *sc, uint64_t row) noexcept nogil:
    # the last jump at or before a scanned row (njump > 0: row 0 has a jump)
    cdef uint64_t lo = 0, hi = sc.njump, mid
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if <uint64_t>sc.jump_row[mid] <= row:
            lo = mid
        else:
            hi = mid
    return lo


cdef int64_t _trec_line_of(const _trec_ScanState *sc, uint64_t row) noexcept nogil:
    cdef uint64_t k = _trec_last_jump(sc, row)
    return sc.jump_line[k] + <int64_t>row - sc.jump_row[k]


cdef int _trec_batch_grow(_trec_BatchData *b) noexcept nogil:
    cdef uint64_t cap = b.cap * 2 if b.cap else 1 << 14
    cdef void *a
    a = realloc(b.q_off, cap * sizeof(int64_t))
    if a == NULL:
        return -1
    b.q_off = <int64_t *>a
    a = realloc(b.q_len, cap * sizeof(uint32_t))
    if a == NULL:
        return -1
    b.q_len = <uint32_t *>a
    a = realloc(b.d_off, cap * sizeof(int64_t))
    if a == NULL:
        return -1
    b.d_off = <int64_t *>a
    a = realloc(b.d_len, cap * sizeof(uint32_t))
    if a == NULL:
        return -1
    b.d_len = <uint32_t *>a
    a = realloc(b.d_meta, cap * sizeof(uint32_t))
    if a == NULL:
        return -1
    b.d_meta = <uint32_t *>a
    a = realloc(b.d_key8, cap * sizeof(uint64_t))
    if a == NULL:
        return -1
    b.d_key8 = <uint64_t *>a
    b.cap = cap
    return 0


cdef inline int _trec_scan_fail(_trec_ScanState *sc, int code, int64_t line,
                                const unsigned char *buf, const unsigned char *tok,
                                Py_ssize_t tok_len) noexcept nogil:
    sc.err = code
    sc.err_line = line
    sc.err_off = tok - buf if tok != NULL else -1
    sc.err_len = tok_len
    return code


cdef const unsigned char *_trec_run_lane(
        _trec_ScanState *sc, _trec_BatchData *b, _trec_InternState *it,
        const unsigned char *buf, const unsigned char *p, const unsigned char *end,
        uint64_t *ws_mask, uint64_t *nl_mask, const unsigned char **seg_io,
        const unsigned char **seg_end_io, uint64_t *blob_len_io) noexcept nogil:
    # The run lines that _trec_scan_lines sees most, taken by a loop of their own
    # (_trec_lane_rows, in C) whose state is all in locals: a data line whose six fields and
    # newline lie within its 64-byte window, of the previous row's query, right after that
    # row's line, with a score of the fast path, an ASCII run tag and a valid document id.
    # Each row is stored exactly as the general loop would store it. Returns where it
    # stopped: the line there (a new query, a comment, a long line, anything that may be an
    # error) is the general loop's.
    # In the general loop the row's state lives in structs, which every store into the blob
    # (char *, which may alias anything) makes the compiler load again. On the 100M-line
    # benchmark's run callgrind counted 440 instructions a line for the scan without the
    # lane, 365 with it (its score's digits converted eight at a time), 330 with the lane
    # built for x86-64-v3 as well.
    cdef _trec_LaneState st
    cdef int64_t qi = it.prev_q
    cdef uint64_t taken
    if qi < 0 or sc.next_line != sc.line_no + 1:
        return p
    st.seg = seg_io[0]
    st.seg_end = seg_end_io[0]
    st.ws_mask = ws_mask
    st.nl_mask = nl_mask
    st.qref = it.qtab.arena + it.qtab.id_off[qi]
    st.qn = <Py_ssize_t>(it.qtab.id_off[qi + 1] - it.qtab.id_off[qi])
    st.qi = <int32_t>qi
    st.scores = sc.scores
    st.hashes = sc.hashes
    st.tiekeys = it.tiekeys
    st.offsets = it.offsets
    st.qidx = it.qidx
    st.blob = it.blob
    st.row = sc.rows
    st.stop = min(sc.cap, it.cap)
    st.blob_len = blob_len_io[0]
    st.tag = NULL
    st.tag_len = 0
    p = _trec_lane_rows(&st, p, end)
    seg_io[0] = st.seg
    seg_end_io[0] = st.seg_end
    taken = st.row - sc.rows
    if taken:
        b.n += taken
        sc.rows = st.row
        it.rows = st.row
        sc.line_no += <int64_t>taken
        sc.next_line = sc.line_no + 1
        sc.runid_off = st.tag - buf
        sc.runid_len = st.tag_len
        it.blob_len = st.blob_len
        blob_len_io[0] = st.blob_len
    return p


# called through a pointer, which keeps the compiler from inlining the lane into the general
# loop, where its set-up would compete with that loop's locals for registers
ctypedef const unsigned char *(*_trec_lane_fn)(
    _trec_ScanState *, _trec_BatchData *, _trec_InternState *, const unsigned char *,
    const unsigned char *, const unsigned char *, uint64_t *, uint64_t *,
    const unsigned char **, const unsigned char **, uint64_t *) noexcept nogil
cdef _trec_lane_fn _trec_lane = _trec_run_lane


cdef int _trec_scan_lines(_trec_ScanState *sc, _trec_BatchData *b, const unsigned char *buf,
                          Py_ssize_t nbuf, _trec_InternState *it) noexcept nogil:
    # Scan every line of buf[:nbuf] (the last one may lack its newline). Stops at the first
    # malformed line and returns its code, with sc.err_* set. With `it` (a run or qrels
    # without document interning), each line also goes through stage 2 at once, while its
    # fields are at hand, instead of being recorded in `b` for a second pass: an invalid id
    # is then that line's error.
    cdef const unsigned char *p = buf
    cdef const unsigned char *end = buf + nbuf
    cdef const unsigned char *eol
    cdef const unsigned char *nxt
    cdef const unsigned char *q
    cdef const unsigned char *tok[6]
    cdef Py_ssize_t tlen[6]
    cdef uint64_t ws_mask[_trec_SEG_WORDS]
    cdef uint64_t nl_mask[_trec_SEG_WORDS]
    cdef const unsigned char *seg = buf
    cdef const unsigned char *seg_end = buf      # lines starting before it are indexed
    cdef int nf, need = sc.need, code
    cdef int64_t line
    cdef uint64_t row, k, h
    cdef double v
    cdef void *tmp
    cdef uint64_t blob_len = it.blob_len if it != NULL else 0
    cdef int64_t prev_q = it.prev_q if it != NULL else -1
    # the lane (_trec_run_lane) for a run's lines; off from a call that took none of them
    # (a query's first line, a line too long for it) until a new query starts, so that a
    # file of lines it never takes pays for one try per query, not one per line
    cdef bint lane = it != NULL and need == 6
    cdef bint lane_on = True
    cdef uint64_t rows_before
    cdef int64_t q_before
    b.row_start = sc.rows
    b.n = 0
    # the block's ids are at most its text
    if (it != NULL and it.blob_len + <uint64_t>nbuf + 16 > it.blob_cap
            and _trec_blob_grow(it, it.blob_len + <uint64_t>nbuf + 16) != 0):
        return _trec_scan_fail(sc, _trec_E_NOMEM, sc.line_no + 1, buf, NULL, 0)
    while p < end:
        if lane and lane_on:
            rows_before = sc.rows
            p = _trec_lane(sc, b, it, buf, p, end, ws_mask, nl_mask, &seg, &seg_end,
                           &blob_len)
            if p >= end:
                break
            lane_on = sc.rows != rows_before
        line = sc.line_no + 1
        # the common line (not a comment, its fields within 64 bytes) from the segment's
        # index; the rest byte by byte
        if p >= seg_end:                          # index the next segment
            seg = p
            seg_end = p + min(end - p, <Py_ssize_t>_trec_SEG)
            _trec_index(p, min(end - p, <Py_ssize_t>_trec_SEG + 128), ws_mask, nl_mask)
        if (p[0] != 35
                and (_trec_fields_at(ws_mask, nl_mask, p - seg, seg, 6, 0b1010, tok, tlen,
                                     &eol)
                     if need == 6 else
                     _trec_fields_at(ws_mask, nl_mask, p - seg, seg, 4, 0b10, tok, tlen,
                                     &eol))):
            if eol == NULL:                       # no newline within the window
                q = tok[need - 1] + tlen[need - 1]
                eol = <const unsigned char *>memchr(q, 10, <size_t>(end - q))
            nxt = end if eol == NULL else eol + 1
            if (end if eol == NULL else eol) - p > _trec_MAX_LINE:
                return _trec_scan_fail(sc, _trec_E_LINE_TOO_LONG, line, buf, p,
                                       (end if eol == NULL else eol) - p)
            if need == 6 and tok[0][0] == 35:     # blanks, then '#': a run comment
                sc.line_no = line
                p = nxt
                continue
        else:
            eol = <const unsigned char *>memchr(p, 10, <size_t>(end - p))
            if eol == NULL:
                eol = end
                nxt = end
            else:
                nxt = eol + 1
            if eol - p > _trec_MAX_LINE:           # comments too: nothing is that long
                return _trec_scan_fail(sc, _trec_E_LINE_TOO_LONG, line, buf, p, eol - p)
            if p[0] == 35:                        # '#' in column 0: a comment
                sc.line_no = line
                p = nxt
                continue
            q = p
            nf = 0
            while nf < need:
                while q < eol and _trec_isspace(q[0]):
                    q += 1
                if q == eol:
                    break
                tok[nf] = q
                while q < eol and not _trec_isspace(q[0]):
                    q += 1
                tlen[nf] = q - tok[nf]
                nf += 1
            # a blank line; in a run, also blanks then '#': trec_eval's run reader skips
            # leading blanks before it looks for a comment (its qrels reader does not)
            if nf == 0 or (need == 6 and tok[0][0] == 35):
                sc.line_no = line
                p = nxt
                continue
            if nf < need:
                sc.err_nfields = nf
                return _trec_scan_fail(sc, _trec_E_FIELDS, line, buf, NULL, 0)
        if <uint64_t>tlen[0] > _trec_LEN_MASK:
            return _trec_scan_fail(sc, _trec_E_ID_TOO_LONG, line, buf, tok[0], tlen[0])
        if <uint64_t>tlen[2] > _trec_LEN_MASK:
            return _trec_scan_fail(sc, _trec_E_ID_TOO_LONG, line, buf, tok[2], tlen[2])
        if sc.rows == sc.cap and _trec_scan_grow(sc) != 0:
            return _trec_scan_fail(sc, _trec_E_NOMEM, line, buf, NULL, 0)
        row = sc.rows
        k = b.n
        if it != NULL:
            if row == it.cap and _trec_intern_grow(it, row + 1) != 0:
                return _trec_scan_fail(sc, _trec_E_NOMEM, line, buf, NULL, 0)
        else:
            if k == b.cap and _trec_batch_grow(b) != 0:
                return _trec_scan_fail(sc, _trec_E_NOMEM, line, buf, NULL, 0)
            b.q_off[k] = tok[0] - buf
            b.q_len[k] = <uint32_t>tlen[0]
            b.d_off[k] = tok[2] - buf
            b.d_len[k] = <uint32_t>tlen[2]
        h = _trec_hash(tok[2], tlen[2])
        if sc.intern_docs:
            b.d_meta[k] = _trec_meta(h, tlen[2])
            b.d_key8[k] = _trec_key8(tok[2], tlen[2], end)
        else:
            sc.hashes[row] = <int64_t>h
        if need == 6:
            if _trec_fast_float(tok[4], tlen[4], &v):
                sc.scores[row] = v
            else:
                if sc.npend == sc.pend_cap:
                    tmp = realloc(sc.pend, (2 * sc.pend_cap + 256) * sizeof(_trec_Pending))
                    if tmp == NULL:
                        return _trec_scan_fail(sc, _trec_E_NOMEM, line, buf, NULL, 0)
                    sc.pend = <_trec_Pending *>tmp
                    sc.pend_cap = 2 * sc.pend_cap + 256
                sc.pend[sc.npend].row = row
                sc.pend[sc.npend].line = line
                sc.pend[sc.npend].off = tok[4] - buf
                sc.pend[sc.npend].len = tlen[4]
                sc.npend += 1
                sc.scores[row] = 0.0
            if not _trec_utf8_ok(tok[5], tlen[5]):
                return _trec_scan_fail(sc, _trec_E_UTF8_RUNID, line, buf, tok[5], tlen[5])
            sc.runid_off = tok[5] - buf
            sc.runid_len = tlen[5]
        else:
            code = _trec_parse_grade(tok[3], tlen[3], &sc.grades[row])
            if code != _trec_OK:
                return _trec_scan_fail(sc, code, line, buf, tok[3], tlen[3])
        if it != NULL:                            # after the line's own checks, as stage 2
            q_before = prev_q
            code = _trec_take_row(it, row, tok[0], tlen[0], tok[2], tlen[2], end,
                                  &blob_len, &prev_q)
            lane_on = lane_on or prev_q != q_before
            if code == _trec_E_UTF8_DOCNO:
                return _trec_scan_fail(sc, code, line, buf, tok[2], tlen[2])
            if code != _trec_OK:
                return _trec_scan_fail(sc, code, line, buf, tok[0], tlen[0])
        if line != sc.next_line:
            if sc.njump == sc.jump_cap and _trec_jump_grow(sc) != 0:
                return _trec_scan_fail(sc, _trec_E_NOMEM, line, buf, NULL, 0)
            sc.jump_row[sc.njump] = <int64_t>row
            sc.jump_line[sc.njump] = line
            sc.njump += 1
        sc.next_line = line + 1
        sc.rows = row + 1
        b.n = k + 1
        sc.line_no = line
        p = nxt
    return _trec_OK
