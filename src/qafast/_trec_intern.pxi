# TREC reader part: stage 2, the interning of a scanned block's ids (see _trec_io.pxi), and
# the row-at-a-time form of it that the scan calls when it runs both stages at once.

# ---------------------------------------------------------------------------------------
# stage 2, intern: query and document ids to int32 indexes, in first-seen order

cdef enum:
    _trec_AHEAD = 16    # rows between prefetching a document's slot and looking it up


cdef int _trec_intern_grow(_trec_InternState *it, uint64_t need) noexcept nogil:
    cdef uint64_t cap = it.cap if it.cap else 1 << 16
    cdef void *a
    while cap < need:
        cap *= 2
    a = _trec_mem_resize(it.qidx, it.cap * sizeof(int32_t), cap * sizeof(int32_t))
    if a == NULL:
        return -1
    it.qidx = <int32_t *>a
    if it.intern_docs:
        a = _trec_mem_resize(it.didx, it.cap * sizeof(int32_t), cap * sizeof(int32_t))
        if a == NULL:
            return -1
        it.didx = <int32_t *>a
    else:
        if it.keep_tiekeys:
            a = _trec_mem_resize(it.tiekeys, it.cap * sizeof(int64_t), cap * sizeof(int64_t))
            if a == NULL:
                return -1
            it.tiekeys = <int64_t *>a
        a = _trec_mem_resize(it.offsets, (it.cap + 1) * sizeof(int64_t),
                             (cap + 1) * sizeof(int64_t))
        if a == NULL:
            return -1
        it.offsets = <int64_t *>a
        if it.cap == 0:
            it.offsets[0] = 0
    it.cap = cap
    return 0


cdef int _trec_blob_grow(_trec_InternState *it, uint64_t need) noexcept nogil:
    # Room for `need` bytes (the caller asks for some slack, for whole-word copies).
    cdef uint64_t cap = it.blob_cap if it.blob_cap else 1 << 20
    cdef void *a
    while cap < need:
        cap *= 2
    a = _trec_mem_resize(it.blob, it.blob_cap, cap)
    if a == NULL:
        return -1
    it.blob = <unsigned char *>a
    it.blob_cap = cap
    return 0


cdef inline int _trec_intern_code(int64_t r, int utf8_code) noexcept nogil:
    return (_trec_E_NOMEM if r == -1 else utf8_code if r == -2
            else _trec_E_ID_TOO_LONG if r == -3 else _trec_E_TOO_MANY_IDS)


cdef int _trec_intern_rows(_trec_InternState *it, _trec_BatchData *b, const unsigned char *buf,
                           Py_ssize_t nbuf) noexcept nogil:
    # Intern the first b.n_ok rows of a scanned block. The document table of a big run does
    # not fit in cache, so each row's home slot is prefetched _trec_AHEAD rows before its
    # lookup, and a long key's arena bytes half as far ahead: many loads stay in flight.
    cdef const unsigned char *end = buf + nbuf
    cdef _trec_Table *dt = &it.dtab
    cdef _sh_Slot *slot
    cdef uint64_t n = b.n_ok, k, j, row
    cdef const unsigned char *qp
    cdef Py_ssize_t qn
    cdef int64_t qi, di
    if b.row_start != it.rows:
        return _trec_E_NOMEM                      # batches out of order: a caller bug
    if b.row_start + n > it.cap and _trec_intern_grow(it, b.row_start + n) != 0:
        it.err = _trec_E_NOMEM
        return _trec_E_NOMEM
    for k in range(min(n, <uint64_t>_trec_AHEAD)):
        _sh_prefetch_home(&dt.h, b.d_meta[k])
    for k in range(n):
        j = k + _trec_AHEAD
        if j < n:
            _sh_prefetch_home(&dt.h, b.d_meta[j])
        j = k + _trec_AHEAD // 2
        if j < n and b.d_len[j] > 8:
            slot = _sh_home_slot(&dt.h, b.d_meta[j])
            if slot.idp1 != 0 and slot.meta == b.d_meta[j]:
                _trec_prefetch(dt.arena + (slot.key >> _trec_LEN_BITS))
        row = b.row_start + k
        # query id: runs come grouped by query, so first compare with the previous row's
        qp = buf + b.q_off[k]
        qn = b.q_len[k]
        if it.prev_q >= 0 and _trec_same_id(&it.qtab, it.prev_q, qp, qn):
            qi = it.prev_q
        else:
            qi = _trec_query_id(&it.qtab, qp, qn, end)
            if qi < 0:
                it.err = _trec_intern_code(qi, _trec_E_UTF8_QID)
                it.err_k = k
                it.err_off = b.q_off[k]
                it.err_len = qn
                return it.err
            it.prev_q = qi
        di = _trec_intern(dt, buf + b.d_off[k], b.d_len[k], b.d_meta[k], b.d_key8[k])
        if di < 0:
            it.err = _trec_intern_code(di, _trec_E_UTF8_DOCNO)
            it.err_k = k
            it.err_off = b.d_off[k]
            it.err_len = b.d_len[k]
            return it.err
        it.qidx[row] = <int32_t>qi
        it.didx[row] = <int32_t>di
        it.rows = row + 1
    return _trec_OK


cdef inline int _trec_take_row(_trec_InternState *it, uint64_t row, const unsigned char *qp,
                               Py_ssize_t qn, const unsigned char *dp, Py_ssize_t dn,
                               const unsigned char *end, uint64_t *blob_len,
                               int64_t *prev_q) noexcept nogil:
    # What _trec_doc_rows does for one row, for the scan that does both stages at once
    # (_trec_scan_lines with an InternState). Called from that loop alone: the compiler
    # inlines a function with one caller into the large scan loop, but kept this out of line
    # when _trec_doc_rows called it too, and a call per row cost more (4 ns of 38) than the
    # fusion saved. The blob's length and the previous query are the caller's locals, stored
    # back here but never read back.
    cdef int64_t qi = prev_q[0]
    cdef int ascii
    if not (qi >= 0 and _trec_same_id(&it.qtab, qi, qp, qn)):
        qi = _trec_query_id(&it.qtab, qp, qn, end)
        if qi < 0:
            return _trec_intern_code(qi, _trec_E_UTF8_QID)
        if _trec_new_query(it, qi, row) != 0:
            return _trec_E_NOMEM
        prev_q[0] = qi
        it.prev_q = qi
    cdef int64_t unkept
    ascii = _trec_take_doc(dp, dn, end, it.blob + blob_len[0],
                           it.tiekeys + row if it.tiekeys != NULL else &unkept)
    if ascii != 1 and not _trec_utf8_ok(dp, dn):
        return _trec_E_UTF8_DOCNO
    blob_len[0] += <uint64_t>dn
    it.blob_len = blob_len[0]
    it.offsets[row + 1] = <int64_t>blob_len[0]
    it.qidx[row] = <int32_t>qi
    it.rows = row + 1
    return _trec_OK


cdef int _trec_doc_rows(_trec_InternState *it, _trec_BatchData *b, const unsigned char *buf,
                        Py_ssize_t nbuf) noexcept nogil:
    # Stage 2 without interning documents: the first b.n_ok rows' query ids as above, and
    # each document id checked for UTF-8, its tie key computed and its bytes appended to the
    # blob (the hash came from the scan). No table, so no random access at all.
    cdef const unsigned char *end = buf + nbuf
    cdef uint64_t n = b.n_ok, k, row, blen
    cdef const unsigned char *qp
    cdef const unsigned char *dp
    cdef Py_ssize_t qn, dn
    cdef int64_t qi
    cdef int ascii
    cdef int32_t *qidx
    cdef int64_t *tiekeys
    cdef int64_t *offsets
    cdef int64_t unkept
    if b.row_start != it.rows:
        return _trec_E_NOMEM                      # batches out of order: a caller bug
    if b.row_start + n > it.cap and _trec_intern_grow(it, b.row_start + n) != 0:
        it.err = _trec_E_NOMEM
        return _trec_E_NOMEM
    # the batch's ids are at most its text: room for all of them, plus 16 bytes of slack
    # for the whole-word copies below, so the loop never checks
    if (it.blob_len + <uint64_t>nbuf + 16 > it.blob_cap
            and _trec_blob_grow(it, it.blob_len + <uint64_t>nbuf + 16) != 0):
        it.err = _trec_E_NOMEM
        return _trec_E_NOMEM
    qidx = it.qidx
    tiekeys = it.tiekeys
    offsets = it.offsets
    blen = it.blob_len
    for k in range(n):
        row = b.row_start + k
        qp = buf + b.q_off[k]
        qn = b.q_len[k]
        if it.prev_q >= 0 and _trec_same_id(&it.qtab, it.prev_q, qp, qn):
            qi = it.prev_q
        else:
            qi = _trec_query_id(&it.qtab, qp, qn, end)
            if qi < 0:
                it.err = _trec_intern_code(qi, _trec_E_UTF8_QID)
                it.err_k = k
                it.err_off = b.q_off[k]
                it.err_len = qn
                it.blob_len = blen
                return it.err
            if _trec_new_query(it, qi, row) != 0:
                it.err = _trec_E_NOMEM
                it.err_k = k
                it.err_off = b.q_off[k]
                it.err_len = qn
                it.blob_len = blen
                return it.err
            it.prev_q = qi
        dp = buf + b.d_off[k]
        dn = b.d_len[k]
        ascii = _trec_take_doc(dp, dn, end, it.blob + blen,
                               tiekeys + row if tiekeys != NULL else &unkept)
        if ascii != 1 and not _trec_utf8_ok(dp, dn):
            it.err = _trec_E_UTF8_DOCNO
            it.err_k = k
            it.err_off = b.d_off[k]
            it.err_len = dn
            it.blob_len = blen
            return it.err
        blen += <uint64_t>dn
        offsets[row + 1] = <int64_t>blen
        qidx[row] = <int32_t>qi
        it.rows = row + 1
    it.blob_len = blen
    return _trec_OK
