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

    Returns ``(blob, None)``, or ``(None, (qid, doc, value, reason))`` naming the first bad
    entry for the caller to raise.
    """
    cdef Py_ssize_t pos = 0, q = 0, n
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
    query_offsets[0] = 0
    byte_offsets[0] = 0
    try:
        for qid, docs in data.items():
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
                if x != x:
                    return None, (qid, doc, value, "nan")
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
        return (buf.data[:buf.size] if buf.size else b""), None
    finally:
        free(buf.data)


def encode_str_column(object column, int64_t[::1] hashes, int64_t[::1] tiekeys,
                      int64_t[::1] byte_offsets):
    """Hash each string of ``column`` (any sequence of str) and concatenate its UTF-8 bytes,
    as encode_nested_dict does for dict keys. Returns ``(blob, None)`` or ``(None, (i,
    value))`` naming the first entry that is not a str."""
    cdef Py_ssize_t i = 0, n
    cdef const char* utf8
    cdef object item
    cdef bint with_tiekeys = tiekeys.shape[0] > 0
    cdef _ByteBuffer buf
    buf.data = NULL
    buf.size = 0
    buf.capacity = 0
    byte_offsets[0] = 0
    try:
        for item in column:
            if type(item) is not str:
                if isinstance(item, bytes):
                    item = (<bytes>item).decode("utf-8")
                else:
                    return None, (i, item)
            utf8 = PyUnicode_AsUTF8AndSize(item, &n)
            _buffer_append(&buf, utf8, n)
            hashes[i] = <int64_t>_trec_hash(<const unsigned char*>utf8, n)
            if with_tiekeys:
                tiekeys[i] = qafast_tie_key(<const uint8_t*>utf8, n)
            i += 1
            byte_offsets[i] = buf.size
        return (buf.data[:buf.size] if buf.size else b""), None
    finally:
        free(buf.data)
