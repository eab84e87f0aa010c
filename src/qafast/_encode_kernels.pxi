# Encoding of Python containers into the kernels' arrays, included by _kernels.pyx.
# These loops read Python objects, so they hold the GIL; each document id is hashed and its
# UTF-8 bytes copied once, with no dictionary of ids built on the way.

from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy


cdef struct _ByteBuffer:
    char* data
    Py_ssize_t size
    Py_ssize_t capacity


cdef int _buffer_append(_ByteBuffer* b, const char* s, Py_ssize_t n) except -1:
    cdef Py_ssize_t cap
    cdef char* grown
    if b.size + n > b.capacity:
        cap = b.capacity * 2 if b.capacity else 1 << 16
        while cap < b.size + n:
            cap *= 2
        grown = <char*>realloc(b.data, cap)
        if grown == NULL:
            raise MemoryError()
        b.data = grown
        b.capacity = cap
    memcpy(b.data + b.size, s, n)
    b.size += n
    return 0


def encode_nested_dict(dict data, bint integer_values, int64_t[::1] query_offsets,
                       double[::1] values, int64_t[::1] hashes, int64_t[::1] tiekeys,
                       int64_t[::1] byte_offsets, list query_ids):
    """Flatten ``{qid: {doc: value}}`` into CSR arrays: per entry its value, the hash of its
    document id and the id's UTF-8 bytes (returned as one ``bytes`` blob, entry i at
    ``byte_offsets[i]:byte_offsets[i + 1]``) and, when ``tiekeys`` is not empty, its tie key.

    The arrays are sized from the dicts' own lengths (``dict.__len__``), and every write is
    checked against them: a score's ``__float__`` (or a ``__class__``) may run Python code that
    adds or removes documents of a query not read yet, which gives the reason "changed".

    Returns ``(blob, None)``, or ``(None, (qid, doc, value, reason))`` naming the first bad
    entry for the caller to raise.
    """
    cdef Py_ssize_t pos = 0, q = 0, n
    cdef Py_ssize_t total = values.shape[0], n_queries = query_offsets.shape[0] - 1
    cdef object qid, docs, doc, value
    cdef const char* utf8
    cdef double x
    cdef long long iv
    cdef bint with_tiekeys = tiekeys.shape[0] > 0
    cdef _ByteBuffer buf
    buf.data = NULL
    buf.size = 0
    buf.capacity = 0
    cdef object first_kind = None, kind
    _enc_check_sizes(total, n_queries, query_offsets, hashes, tiekeys, byte_offsets)
    query_offsets[0] = 0
    byte_offsets[0] = 0
    try:
        for qid, docs in data.items():
            if q >= n_queries:
                return None, (qid, None, None, "changed")
            # query ids must be all str or all int (not bool): checked here, in the one pass
            kind = type(qid)
            if kind is not first_kind:
                if first_kind is None and (kind is str or kind is int):
                    first_kind = kind
                else:
                    query_ids.append(qid)
                    return None, (qid, None, None, "qid")
            if type(docs) is not dict:
                if not isinstance(docs, dict):
                    return None, (qid, None, docs, "dict")
            query_ids.append(qid)
            for doc, value in (<dict>docs).items():
                if type(doc) is not str:
                    return None, (qid, doc, value, "docid")
                if integer_values:
                    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, int)):
                        return None, (qid, doc, value, "int")
                    try:
                        iv = value
                    except OverflowError:
                        return None, (qid, doc, value, "range")
                    if iv < -2147483648 or iv > 2147483647:
                        return None, (qid, doc, value, "range")
                    x = <double>iv
                elif type(value) is float:
                    x = <double>value
                elif isinstance(value, (str, bytes, bool)) or value is None:
                    return None, (qid, doc, value, "float")
                else:
                    try:
                        x = float(value)
                    except (TypeError, ValueError):
                        return None, (qid, doc, value, "float")
                    except OverflowError:  # an int beyond the float range
                        return None, (qid, doc, value, "overflow")
                if x != x:
                    return None, (qid, doc, value, "nan")
                if pos >= total:
                    return None, (qid, doc, value, "changed")
                utf8 = PyUnicode_AsUTF8AndSize(doc, &n)
                _buffer_append(&buf, utf8, n)
                hashes[pos] = <int64_t>_trec_hash(<const unsigned char*>utf8, n)
                if with_tiekeys:
                    tiekeys[pos] = qafast_tie_key(<const uint8_t*>utf8, n)
                values[pos] = x
                pos += 1
                byte_offsets[pos] = buf.size
            q += 1
            query_offsets[q] = pos
        if pos != total or q != n_queries:
            return None, (qid if q else None, None, None, "changed")
        return (buf.data[:buf.size] if buf.size else b""), None
    finally:
        free(buf.data)


cdef int _enc_check_sizes(Py_ssize_t total, Py_ssize_t n_queries, int64_t[::1] query_offsets,
                          int64_t[::1] hashes, int64_t[::1] tiekeys,
                          int64_t[::1] byte_offsets) except -1:
    # the per-entry arrays agree with values' length, the offsets have one entry more
    if (n_queries < 0 or hashes.shape[0] != total or byte_offsets.shape[0] != total + 1
            or (tiekeys.shape[0] != 0 and tiekeys.shape[0] != total)):
        raise InputError("the output arrays do not have one entry per document")
    return 0


def encode_str_column(object column, int64_t[::1] hashes, int64_t[::1] tiekeys,
                      int64_t[::1] byte_offsets):
    """Hash each string of ``column`` (any iterable of str, bytes or str subclasses, which
    count as the text they hold) and concatenate its UTF-8 bytes, as encode_nested_dict does
    for dict keys. ``hashes`` has one entry per string: an iterable that gives more or fewer
    is refused. Returns ``(blob, None)`` or ``(None, (i, value))`` naming the first entry
    that is not a str."""
    cdef Py_ssize_t i = 0, n, total = hashes.shape[0]
    cdef const char* utf8
    cdef object item
    cdef bint with_tiekeys = tiekeys.shape[0] > 0
    cdef _ByteBuffer buf
    buf.data = NULL
    buf.size = 0
    buf.capacity = 0
    if byte_offsets.shape[0] != total + 1 or (tiekeys.shape[0] != 0
                                              and tiekeys.shape[0] != total):
        raise InputError("the output arrays do not have one entry per string")
    byte_offsets[0] = 0
    try:
        for item in column:
            if type(item) is not str:
                if isinstance(item, bytes):
                    item = (<bytes>item).decode("utf-8")
                elif isinstance(item, str):
                    item = str.__str__(item)   # numpy's str_ and other subclasses: the text
                else:
                    return None, (i, item)
            if i >= total:
                raise InputError(f"the column gave more than the {total} ids its length "
                                 "promised")
            utf8 = PyUnicode_AsUTF8AndSize(item, &n)
            _buffer_append(&buf, utf8, n)
            hashes[i] = <int64_t>_trec_hash(<const unsigned char*>utf8, n)
            if with_tiekeys:
                tiekeys[i] = qafast_tie_key(<const uint8_t*>utf8, n)
            i += 1
            byte_offsets[i] = buf.size
        if i != total:
            raise InputError(f"the column gave {i} ids where its length promised {total}")
        return (buf.data[:buf.size] if buf.size else b""), None
    finally:
        free(buf.data)


cdef extern from "Python.h":
    # borrowed-reference forms: the run loop reads 10M keys and values without writing to
    # them (an INCREF/DECREF pair dirties every object's cache line, doubling the traffic)
    int _enc_dict_next "PyDict_Next" (object d, Py_ssize_t *pos, PyObject **key,
                                      PyObject **value)
    bint _enc_is_dict "PyDict_CheckExact" (PyObject *o)
    Py_ssize_t _enc_dict_size "PyDict_GET_SIZE" (PyObject *o)
    bint _enc_is_str "PyUnicode_CheckExact" (PyObject *o)
    bint _enc_is_float "PyFloat_Check" (PyObject *o)
    bint _enc_is_ascii "PyUnicode_IS_COMPACT_ASCII" (PyObject *o)
    Py_ssize_t _enc_str_len "PyUnicode_GET_LENGTH" (PyObject *o)
    void *_enc_str_data "PyUnicode_DATA" (PyObject *o)
    const char *_enc_utf8 "PyUnicode_AsUTF8AndSize" (PyObject *o, Py_ssize_t *size) except? NULL
    double _enc_float "PyFloat_AS_DOUBLE" (PyObject *o)


cdef inline int _enc_run_entry(PyObject *k, PyObject *v, const char **utf8, Py_ssize_t *n,
                               double *x) except -1:
    """1 for what the run encoders take, a str document id and a float score that is not
    NaN, with the id's UTF-8 bytes and the score; 0 for anything else (the general encoder
    converts or names it)."""
    if not _enc_is_str(k) or not _enc_is_float(v):
        return 0
    x[0] = _enc_float(v)
    if x[0] != x[0]:
        return 0
    if _enc_is_ascii(k):
        utf8[0] = <const char *>_enc_str_data(k)
        n[0] = _enc_str_len(k)
    else:
        utf8[0] = _enc_utf8(k, n)
    return 1


cdef inline void _enc_run_store(const char *utf8, Py_ssize_t n, double x, unsigned char *dst,
                                int64_t *hash, int64_t *tiekey, double *value) noexcept:
    # hashed from the string itself: reading back the bytes just copied waits for the
    # copy's stores (70% of the loop's time)
    hash[0] = <int64_t>_trec_hash(<const unsigned char *>utf8, n)
    tiekey[0] = _trec_tie_key(<const unsigned char *>utf8, n,
                              <const unsigned char *>utf8 + n + 1)
    memcpy(dst, utf8, n)
    value[0] = x


cdef inline object _enc_query_kind(object qid, object first_kind):
    """The type all query ids share so far, with qid's: None when qid's breaks the rule
    (all str or all int, not bool)."""
    cdef object kind = type(qid)
    if kind is first_kind or first_kind is None and (kind is str or kind is int):
        return kind
    return None


cdef extern from "Python.h":
    bint _enc_is_any_dict "PyDict_Check" (PyObject *o)


def encode_dict_total(dict data):
    """The number of entries of the dicts ``data`` maps to, each counted by the dict itself
    (a subclass's ``__len__`` is not asked), or -1 if one of them is not a dict."""
    cdef Py_ssize_t pos = 0, total = 0
    cdef PyObject *k
    cdef PyObject *v
    while _enc_dict_next(data, &pos, &k, &v):
        if not _enc_is_any_dict(v):
            return -1
        total += _enc_dict_size(v)
    return total


def encode_run_dict(dict data, int64_t[::1] query_offsets, double[::1] values,
                    int64_t[::1] hashes, int64_t[::1] tiekeys, int64_t[::1] byte_offsets,
                    list query_ids):
    """encode_nested_dict for the usual run: str query ids (or int ones), dict values, str
    document ids and float scores (or a float subclass, such as numpy's float64).

    Returns the UTF-8 bytes as a uint8 array that owns them (no copy of the blob is made), or
    None at the first entry of any other kind, or a NaN score: the caller then runs
    encode_nested_dict, which converts what it can and names what it cannot.
    """
    cdef Py_ssize_t qpos = 0, dpos, n, pos = 0, q = 0, total = values.shape[0]
    cdef Py_ssize_t n_queries = query_offsets.shape[0] - 1
    cdef PyObject *qk
    cdef PyObject *qv
    cdef PyObject *k
    cdef PyObject *v
    cdef const char *utf8
    cdef unsigned char *blob
    cdef unsigned char *grown
    cdef size_t cap = <size_t>1 << 22, new_cap, size = 0
    cdef double x
    cdef object first_kind = None, result
    _enc_check_sizes(total, n_queries, query_offsets, hashes, tiekeys, byte_offsets)
    if tiekeys.shape[0] != total:
        raise InputError("the tie keys must have one entry per document")
    blob = <unsigned char *>_trec_mem_resize(NULL, 0, cap)
    if blob == NULL:
        raise MemoryError()
    query_offsets[0] = 0
    byte_offsets[0] = 0
    try:
        while _enc_dict_next(data, &qpos, &qk, &qv):
            first_kind = _enc_query_kind(<object>qk, first_kind)
            if first_kind is None or not _enc_is_dict(qv) or q >= n_queries:
                return None
            query_ids.append(<object>qk)
            dpos = 0
            while _enc_dict_next(<object>qv, &dpos, &k, &v):
                if pos >= total or not _enc_run_entry(k, v, &utf8, &n, &x):
                    return None
                if size + <size_t>n > cap:
                    new_cap = cap
                    while size + <size_t>n > new_cap:
                        new_cap *= 2
                    grown = <unsigned char *>_trec_mem_resize(blob, cap, new_cap)
                    if grown == NULL:
                        raise MemoryError()
                    blob = grown
                    cap = new_cap
                _enc_run_store(utf8, n, x, blob + size, &hashes[pos], &tiekeys[pos],
                               &values[pos])
                size += n
                pos += 1
                byte_offsets[pos] = <int64_t>size
            q += 1
            query_offsets[q] = pos
        if pos != total or q != n_queries:
            return None
        result = _trec_wrap(blob, cap, size, 1, b"B", "uint8")
        blob = NULL
        return result
    finally:
        if blob != NULL:
            _trec_mem_free(blob, cap)


def encode_run_dict_chunk(dict data, Py_ssize_t start, object first_kind,
                          int64_t[::1] query_offsets, double[::1] values, int64_t[::1] hashes,
                          int64_t[::1] tiekeys, int64_t[::1] byte_offsets, uint8_t[::1] blob,
                          list query_ids):
    """encode_run_dict for the queries of ``data`` from dict position ``start`` on, into
    buffers that are reused chunk after chunk (so they stay in cache and are never faulted
    in again): as many whole queries as fit in the buffers. ``first_kind`` is the type of the
    query ids so far (None at the start), which every query id must share.

    Returns ``(status, next_start, n_queries)``: status 0 when the dict is done, 1 when more
    queries follow, 2 when the next query does not fit in empty buffers (the caller grows
    them), and -1 at the first entry encode_run_dict would not take (the caller falls back
    to the general path)."""
    cdef Py_ssize_t qpos = start, before, dpos, n, pos = 0, q = 0
    cdef Py_ssize_t max_queries = query_offsets.shape[0] - 1, cap = blob.shape[0], size = 0
    cdef Py_ssize_t max_entries = values.shape[0]
    cdef PyObject *qk
    cdef PyObject *qv
    cdef PyObject *k
    cdef PyObject *v
    cdef const char *utf8
    cdef unsigned char *bytes_out
    cdef double x
    _enc_check_sizes(max_entries, max_queries, query_offsets, hashes, tiekeys, byte_offsets)
    if tiekeys.shape[0] != max_entries or cap == 0:
        raise InputError("the tie keys must have one entry per document, and the blob room")
    bytes_out = &blob[0]
    query_offsets[0] = 0
    byte_offsets[0] = 0
    while True:
        before = qpos
        if not _enc_dict_next(data, &qpos, &qk, &qv):
            return 0, qpos, q
        if not _enc_is_dict(qv):
            return -1, before, q
        if q == max_queries or pos + _enc_dict_size(qv) > max_entries:
            return (1 if q else 2), before, q
        first_kind = _enc_query_kind(<object>qk, first_kind)
        if first_kind is None:
            return -1, before, q
        dpos = 0
        # no Python code runs in this loop (exact str keys, float values read in C), so the
        # dict's size checked above is what it yields: no per-entry bound check is needed
        while _enc_dict_next(<object>qv, &dpos, &k, &v):
            if not _enc_run_entry(k, v, &utf8, &n, &x):
                return -1, before, q
            if size + n > cap:
                # this query's bytes do not fit: it starts the next chunk (or grows the blob)
                return (1 if q else 2), before, q
            _enc_run_store(utf8, n, x, bytes_out + size, &hashes[pos], &tiekeys[pos],
                           &values[pos])
            size += n
            pos += 1
            byte_offsets[pos] = <int64_t>size
        query_ids.append(<object>qk)
        q += 1
        query_offsets[q] = pos
