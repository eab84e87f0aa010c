# ndeval's input files read in one pass: lines of space-separated tokens (as files are
# written), whole-number columns converted and one column's tokens (the docno) interned to
# integer ids in order of first appearance. Any other layout is left to the Python layer's
# line-by-line reader (ndeval_eval.py), which applies every parsing rule and names bad lines.

from libc.stdint cimport int32_t, int64_t, uint64_t
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


# Diversity qrels files (``topic subtopic docno grade``) as DiversityQrels reads them: ids as
# strings, the three id columns interned in order of first appearance, the grade an integer.
# Fields are split at spaces and tabs (bytes.split()'s other whitespace, \r \v \f, and any
# grade other than an optional minus and up to 18 digits, are left to the Python reader, which
# applies every rule and names a bad line).

cdef int64_t _dq_scan(const unsigned char[::1] data, int64_t[:, ::1] code_out,
                      int64_t[::1] grade_out, int64_t[:, ::1] token_out, int64_t* counts,
                      int32_t* table, uint64_t mask) noexcept nogil:
    cdef Py_ssize_t n = data.shape[0], lines = code_out.shape[0], cap = token_out.shape[0]
    cdef Py_ssize_t pos = 0, line = 0, start, col, j, k
    cdef uint64_t h
    cdef int64_t tokens = 0, v, slot
    cdef int digits
    cdef bint negative
    cdef unsigned char c
    # 0 in a token, 1 separates (space, tab), 2 ends a line, 3 is left to the Python reader
    cdef unsigned char kind[256]
    for j in range(256):
        kind[j] = 0
    kind[32] = 1
    kind[9] = 1
    kind[10] = 2
    kind[11] = 3
    kind[12] = 3
    kind[13] = 3
    while pos < n:
        while pos < n and kind[data[pos]] == 1:
            pos += 1
        if pos < n and kind[data[pos]] == 2:  # a blank line
            pos += 1
            continue
        if pos >= n:
            break
        if line >= lines:
            return -1
        for col in range(4):
            while pos < n and kind[data[pos]] == 1:
                pos += 1
            start = pos
            while pos < n and kind[data[pos]] == 0:
                pos += 1
            if pos == start or (pos < n and kind[data[pos]] == 3):
                return -1
            if col == 3:
                j = start
                negative = data[j] == 45
                if negative:
                    j += 1
                if pos - j < 1 or pos - j > 18:
                    return -1
                v = 0
                while j < pos:
                    c = data[j]
                    if c < 48 or c > 57:
                        return -1
                    v = v * 10 + (c - 48)
                    j += 1
                grade_out[line] = -v if negative else v
                break
            h = 1469598103934665603ULL ^ <uint64_t>col
            for j in range(start, pos):
                h = (h ^ data[j]) * 1099511628211ULL
            k = <Py_ssize_t>(h & mask)
            while True:
                slot = table[k]
                if slot == 0:
                    if tokens >= cap:
                        return -1
                    table[k] = <int32_t>(tokens + 1)
                    token_out[tokens, 0] = col
                    token_out[tokens, 1] = start
                    token_out[tokens, 2] = pos - start
                    code_out[line, col] = counts[col]
                    token_out[tokens, 3] = counts[col]
                    counts[col] += 1
                    tokens += 1
                    break
                slot -= 1
                if (token_out[slot, 0] == col and token_out[slot, 2] == pos - start
                        and memcmp(&data[token_out[slot, 1]], &data[start], pos - start) == 0):
                    code_out[line, col] = token_out[slot, 3]
                    break
                k = (k + 1) & mask
            if pos >= n or kind[data[pos]] != 1:
                return -1  # fewer than four fields
        # after the grade: spaces, then the end of the line
        while pos < n and kind[data[pos]] == 1:
            pos += 1
        if pos < n and kind[data[pos]] != 2:
            return -1  # more than four fields, or \r \v \f
        pos += 1
        line += 1
    return line


def diversity_qrels_scan(const unsigned char[::1] data, int64_t[:, ::1] code_out,
                         int64_t[::1] grade_out, int64_t[:, ::1] token_out,
                         int64_t[::1] counts_out):
    """Read a diversity qrels file: each non-blank line four fields split by spaces or tabs,
    the last an integer of up to 18 digits (an optional minus before it). Line ``i``'s topic,
    subtopic and docno are ``code_out[i, 0:3]``, each column's distinct tokens numbered in
    order of first appearance, and its grade ``grade_out[i]``; distinct token ``t`` (all
    columns, in order of first appearance) is column ``token_out[t, 0]``'s number
    ``token_out[t, 3]``, the bytes ``data[token_out[t, 1]:][:token_out[t, 2]]``;
    ``counts_out[c]`` is column c's number of distinct tokens. Returns the number of lines,
    or -1 for a file of any other layout (or more lines than ``code_out`` has rows)."""
    cdef Py_ssize_t lines = code_out.shape[0]
    cdef uint64_t cap = 16
    cdef int64_t read
    cdef int64_t counts[3]
    cdef int32_t* table
    if (code_out.shape[1] < 3 or grade_out.shape[0] < lines or token_out.shape[1] < 4
            or token_out.shape[0] < 3 * lines or counts_out.shape[0] < 3):
        raise ValueError("diversity_qrels_scan: arrays too small")
    if 3 * lines >= 2147483647:
        return -1  # (tokens are numbered in 32 bits in the table)
    while cap < 6 * <uint64_t>lines + 2:
        cap <<= 1
    table = <int32_t*>calloc(cap, sizeof(int32_t))
    if table == NULL:
        raise MemoryError()
    counts[0] = counts[1] = counts[2] = 0
    with nogil:
        read = _dq_scan(data, code_out, grade_out, token_out, counts, table, cap - 1)
    free(table)
    counts_out[0], counts_out[1], counts_out[2] = counts[0], counts[1], counts[2]
    return read
