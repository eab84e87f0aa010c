# TREC text writing (Run.to_trec, Qrels.to_trec), included by _kernels.pyx.
#
# ``trec_lines`` formats rows already chosen and ordered by qafast.io._trec_write (which also
# checks the ids) into a buffer the caller sized with ``trec_line_bound``. Scores are written
# by CPython's own repr (PyOS_double_to_string, mode 'r'), so the text reads back as the
# same doubles; it needs the GIL, the rest is plain byte copying.

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcpy, strlen
from cpython.mem cimport PyMem_Free

cdef extern from "Python.h":
    char* _tw_double_to_string "PyOS_double_to_string" (
        double val, char format_code, int precision, int flags, int* type) except NULL
    int _TW_ADD_DOT_0 "Py_DTSF_ADD_DOT_0"

cdef enum:
    _TW_SCORE_MAX = 24   # the longest repr of a double: "-2.2250738585072014e-308"
    _TW_INT_MAX = 20     # of a 64-bit integer


cdef inline Py_ssize_t _tw_put(uint8_t* out, Py_ssize_t at, const uint8_t* p,
                               Py_ssize_t n) noexcept nogil:
    if n > 0:
        memcpy(out + at, p, n)
    return at + n


cdef inline Py_ssize_t _tw_uint(uint8_t* out, Py_ssize_t at, uint64_t x) noexcept nogil:
    cdef uint8_t digits[24]
    cdef int n = 0, i
    while True:
        digits[n] = <uint8_t>(48 + x % 10)
        n += 1
        x //= 10
        if x == 0:
            break
    for i in range(n):
        out[at + i] = digits[n - 1 - i]
    return at + n


cdef inline Py_ssize_t _tw_int(uint8_t* out, Py_ssize_t at, int64_t x) noexcept nogil:
    if x < 0:
        out[at] = 45   # '-'
        return _tw_uint(out, at + 1, <uint64_t>0 - <uint64_t>x)
    return _tw_uint(out, at, <uint64_t>x)


def trec_line_bound(Py_ssize_t rows, Py_ssize_t text_bytes, Py_ssize_t tag_bytes):
    """Bytes enough for ``rows`` lines whose query and document ids take ``text_bytes`` in
    all (integer ids: 20 + 1 a row)."""
    return text_bytes + rows * (8 + _TW_INT_MAX + _TW_SCORE_MAX + tag_bytes + 1)


def trec_lines(const int64_t[::1] row_query, const int64_t[::1] qid_off,
               const uint8_t[::1] qid_blob, const int64_t[::1] doc_start,
               const int64_t[::1] doc_end, const uint8_t[::1] doc_blob,
               const int64_t[::1] int_ids, bint int_bias, const double[::1] scores,
               const int32_t[::1] grades, const uint8_t[::1] tag, uint8_t[::1] out):
    """Write one line per row into ``out`` and return the bytes written: a run line
    ``qid Q0 docno rank score tag`` when ``scores`` (one per row) is given, else a qrels line
    ``qid 0 docno grade`` (``grades``, one per row). Row i's query id is
    ``qid_blob[qid_off[q]:qid_off[q + 1]]`` with ``q = row_query[i]``; its document id is
    ``int_ids[i]`` when that array is given (``int_bias``: stored as id - 2**63), else
    ``doc_blob[doc_start[i]:doc_end[i]]``. Ranks count from 1 within each run of rows of one
    query. ``out`` must hold ``trec_line_bound`` bytes."""
    cdef Py_ssize_t n = row_query.shape[0], i, at = 0
    cdef int64_t q, prev = -1, rank = 0
    cdef bint run = scores.shape[0] != 0
    cdef char* text
    cdef Py_ssize_t tn
    cdef uint8_t* o = &out[0] if out.shape[0] else NULL
    for i in range(n):
        q = row_query[i]
        at = _tw_put(o, at, &qid_blob[0] + qid_off[q], qid_off[q + 1] - qid_off[q])
        if run:
            o[at] = 32; o[at + 1] = 81; o[at + 2] = 48; o[at + 3] = 32    # " Q0 "
            at += 4
        else:
            o[at] = 32; o[at + 1] = 48; o[at + 2] = 32                    # " 0 "
            at += 3
        if int_ids.shape[0]:
            if int_bias:
                at = _tw_uint(o, at, <uint64_t>int_ids[i] ^ (<uint64_t>1 << 63))
            else:
                at = _tw_int(o, at, int_ids[i])
        else:
            at = _tw_put(o, at, &doc_blob[0] + doc_start[i], doc_end[i] - doc_start[i])
        o[at] = 32
        at += 1
        if run:
            rank = rank + 1 if q == prev else 1
            prev = q
            at = _tw_int(o, at, rank)
            o[at] = 32
            at += 1
            text = _tw_double_to_string(scores[i], c'r', 0, _TW_ADD_DOT_0, NULL)
            tn = strlen(text)
            at = _tw_put(o, at, <const uint8_t*>text, tn)
            PyMem_Free(text)
            o[at] = 32
            at += 1
            at = _tw_put(o, at, &tag[0], tag.shape[0])
        else:
            at = _tw_int(o, at, grades[i])
        o[at] = 10
        at += 1
    return at
