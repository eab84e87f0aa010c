# ndeval's input files read in one pass: lines of space-separated tokens (as files are
# written), whole-number columns converted and one column's tokens (the docno) interned to
# integer ids in order of first appearance. Any other layout is left to the Python layer's
# line-by-line reader (ndeval_eval.py), which applies every parsing rule and names bad lines.

from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcmp


cdef int64_t _nd_scan(const unsigned char[::1] data, int fields, int doc_col,
                      uint64_t int_cols, int64_t[:, ::1] ints_out, int64_t[::1] doc_out,
                      int64_t[::1] first_out, int64_t[::1] length_out, int64_t* table,
                      uint64_t mask) noexcept nogil:
    cdef Py_ssize_t n = data.shape[0], lines = ints_out.shape[0]
    cdef Py_ssize_t pos = 0, line = 0, start, col, k, j
    cdef uint64_t h
    cdef int64_t ids = 0, v, slot
    cdef unsigned char c
    # each byte's class, so that a token's bytes cost one look-up each: 0 in a token,
    # 1 ends it (space, newline), 2 is a layout this reader leaves to the line reader
    cdef unsigned char kind[256]
    for j in range(256):
        kind[j] = 0
    kind[32] = 1
    kind[10] = 1
    kind[0] = 2
    kind[9] = 2
    kind[11] = 2
    kind[12] = 2
    kind[13] = 2
    while pos < n:
        if line >= lines:
            return -1
        for col in range(fields):
            start = pos
            while pos < n and kind[data[pos]] == 0:
                pos += 1
            if pos == start or pos >= n or kind[data[pos]] == 2:
                return -1
            if (data[pos] == 10) != (col == fields - 1):
                return -1
            if (int_cols >> col) & 1:
                if pos - start > 6:
                    return -1
                v = 0
                for j in range(start, pos):
                    c = data[j]
                    if c < 48 or c > 57:
                        return -1
                    v = v * 10 + (c - 48)
                ints_out[line, col] = v
            if col == doc_col:
                h = 1469598103934665603ULL
                for j in range(start, pos):
                    h = (h ^ data[j]) * 1099511628211ULL
                k = <Py_ssize_t>(h & mask)
                while True:
                    slot = table[k]
                    if slot == 0:
                        table[k] = ids + 1
                        first_out[ids] = start
                        length_out[ids] = pos - start
                        doc_out[line] = ids
                        ids += 1
                        break
                    slot -= 1
                    if (length_out[slot] == pos - start and memcmp(
                            &data[first_out[slot]], &data[start], pos - start) == 0):
                        doc_out[line] = slot
                        break
                    k = (k + 1) & mask
            pos += 1
        line += 1
    if line != lines:
        return -1
    return ids


def ndeval_scan(const unsigned char[::1] data, int fields, int doc_col, uint64_t int_cols,
                int64_t[:, ::1] ints_out, int64_t[::1] doc_out, int64_t[::1] first_out,
                int64_t[::1] length_out):
    """Read ``data``, ``ints_out.shape[0]`` lines of exactly ``fields`` tokens split by single
    spaces, each line ending in a newline, no other whitespace and no NUL. Column ``c`` with
    bit ``c`` set in ``int_cols`` must be 1 to 6 ASCII digits: its value goes to
    ``ints_out[line, c]``. Column ``doc_col`` is interned: ``doc_out[line]`` is its id, and
    id ``k``'s first token is ``data[first_out[k]:first_out[k] + length_out[k]]``.
    Returns the number of ids, or -1 if ``data`` has any other layout."""
    cdef Py_ssize_t lines = ints_out.shape[0]
    cdef uint64_t cap = 1
    cdef int64_t ids
    cdef int64_t* table
    if fields < 1 or fields > 64 or not 0 <= doc_col < fields or ints_out.shape[1] < fields:
        raise ValueError("ndeval_scan: bad columns")
    if doc_out.shape[0] < lines or first_out.shape[0] < lines or length_out.shape[0] < lines:
        raise ValueError("ndeval_scan: arrays too short")
    while cap < 2 * <uint64_t>lines + 2:
        cap <<= 1
    table = <int64_t*>calloc(cap, sizeof(int64_t))   # id + 1; 0: empty
    if table == NULL:
        raise MemoryError()
    with nogil:
        ids = _nd_scan(data, fields, doc_col, int_cols, ints_out, doc_out, first_out,
                       length_out, table, cap - 1)
    free(table)
    return ids
