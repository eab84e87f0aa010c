# Encoding of Python containers into the kernels' arrays, included by _kernels.pyx.
# These loops touch Python objects, so they hold the GIL; they still run at C speed because
# each string is interned once through a dict lookup on its cached hash.

from libc.stdint cimport int32_t, int64_t


def encode_nested_dict(dict data, dict vocab, list vocab_list, bint integer_values,
                       int64_t[::1] query_offsets, int64_t[::1] keys, double[::1] values,
                       list query_ids):
    """Flatten ``{qid: {doc: value}}`` into CSR arrays, interning doc ids in ``vocab``.

    New doc ids get the next id and are appended to ``vocab_list``. Returns None, or a tuple
    ``(qid, doc, value, reason)`` naming the first bad entry; the caller raises.
    """
    cdef Py_ssize_t pos = 0, q = 0
    cdef object qid, docs, doc, value, idx
    cdef double x
    query_offsets[0] = 0
    for qid, docs in data.items():
        if not isinstance(docs, dict):
            return (qid, None, docs, "dict")
        query_ids.append(qid)
        for doc, value in (<dict>docs).items():
            if type(doc) is not str:
                return (qid, doc, value, "docid")
            if integer_values:
                if type(value) is not int:
                    if isinstance(value, bool) or not isinstance(value, int):
                        return (qid, doc, value, "int")
                if value < -2147483648 or value > 2147483647:
                    return (qid, doc, value, "range")
                x = <double><long long>value
            else:
                if type(value) is float:
                    x = <double>value
                elif isinstance(value, (int, float)) and not isinstance(value, bool):
                    x = float(value)
                else:
                    try:
                        x = float(value)
                    except (TypeError, ValueError):
                        return (qid, doc, value, "float")
                if x != x:
                    return (qid, doc, value, "nan")
            idx = vocab.get(doc)
            if idx is None:
                idx = len(vocab_list)
                vocab[doc] = idx
                vocab_list.append(doc)
            keys[pos] = <int64_t>idx
            values[pos] = x
            pos += 1
        q += 1
        query_offsets[q] = pos
    return None


def utf8_blob(list strings, int64_t[::1] offsets):
    """Concatenate the UTF-8 encodings of ``strings``; offsets[i]..offsets[i+1] is string i."""
    cdef Py_ssize_t i, n = len(strings), total = 0
    cdef bytes b
    parts = [None] * n
    offsets[0] = 0
    for i in range(n):
        b = (<str>strings[i]).encode("utf-8")
        parts[i] = b
        total += len(b)
        offsets[i + 1] = total
    return b"".join(parts)
