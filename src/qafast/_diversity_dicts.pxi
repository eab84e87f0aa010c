# Diversity measures of a run dict {query: {doc: score}} against diversity qrels given as a
# dict {query: {subtopic: {doc: grade}}}, read straight into ndeval's layout, topic by topic.
#
# The general path (diversity.py) encodes both dicts in full (every document's UTF-8 bytes
# copied and hashed, a Run and engine qrels built) and joins them with the engine's hashed
# join; for a 100k-line run that was most of the call. Here each evaluated topic's judged
# documents go into a small table keyed by the str objects' own (cached) hashes, and the run's
# documents are looked up there as its dict is walked, so each id is touched once. Anything
# this path does not take (ids other than exact str, scores other than float, NaN, grades
# other than int within 32 bits, dicts other than dict) makes it return -1 and the caller
# takes the general path, which converts what it can and names what it cannot. These loops
# read Python objects, so they hold the GIL; none of them runs Python code.

cdef extern from "Python.h":
    # (declared nogil only so that qsort's comparators may call them: they run with the GIL)
    int _dd_compare "PyUnicode_Compare" (PyObject* a, PyObject* b) noexcept nogil
    int _dd_kind "PyUnicode_KIND" (PyObject* o) noexcept nogil
    Py_ssize_t _dd_len "PyUnicode_GET_LENGTH" (PyObject* o) noexcept nogil
    const void* _dd_data "PyUnicode_DATA" (PyObject* o) noexcept nogil
    PyObject** _dd_list_items "PySequence_Fast_ITEMS" (object o)


cdef struct _DdDoc:
    PyObject* s
    int64_t code   # the document's number in the topic (first appearance)


cdef struct _DdEntry:
    double score
    PyObject* s
    int64_t row    # the judged row, or -1


cdef inline int _dd_str_cmp(PyObject* a, PyObject* b) noexcept nogil:
    # code point order, which is the UTF-8 byte order the general path sorts ids by
    cdef Py_ssize_t n, m
    cdef int c
    if a == b:
        return 0
    if _dd_kind(a) == 1 and _dd_kind(b) == 1:
        n = _dd_len(a)
        m = _dd_len(b)
        c = memcmp(_dd_data(a), _dd_data(b), n if n < m else m)
        if c != 0:
            return c
        return -1 if n < m else (1 if n > m else 0)
    # (exact strs: the comparison cannot fail)
    return _dd_compare(a, b)


cdef int _dd_doc_cmp(const void* x, const void* y) noexcept nogil:
    cdef const _DdDoc* a = <const _DdDoc*>x
    cdef const _DdDoc* b = <const _DdDoc*>y
    return _dd_str_cmp(a.s, b.s)


cdef void _dd_insertion_sort(PyObject** docs, int64_t* order, Py_ssize_t n) noexcept:
    # a run of ids whose radix keys tie, put in id order (such runs are short)
    cdef Py_ssize_t i, j
    cdef int64_t x
    for i in range(1, n):
        x = order[i]
        j = i - 1
        while j >= 0 and _dd_str_cmp(docs[order[j]], docs[x]) > 0:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x


cdef int _dd_entry_cmp(const void* x, const void* y) noexcept nogil:
    # pyndeval's order: score descending, then document id ascending
    cdef const _DdEntry* a = <const _DdEntry*>x
    cdef const _DdEntry* b = <const _DdEntry*>y
    if a.score != b.score:
        return -1 if a.score > b.score else 1
    return _dd_str_cmp(a.s, b.s)


cdef inline Py_hash_t _dd_hash(PyObject* s) noexcept:
    cdef Py_hash_t h = _ak_cached_hash(s)
    if h == -1:
        h = PyObject_Hash(<object>s)  # (an exact str: cannot fail)
    return h


cdef inline int64_t _dd_find(const int32_t* table, uint64_t mask, PyObject** objs,
                             const Py_hash_t* hashes, PyObject* s, Py_hash_t h,
                             uint64_t* slot_out) noexcept:
    """The number of ``s`` among ``objs`` (exact strs where their hashes are ``h``), or -1
    (``slot_out``: the empty slot it would take)."""
    cdef uint64_t i = (<uint64_t>h * 0x9E3779B97F4A7C15ULL) >> 32
    cdef int32_t k
    i &= mask
    while True:
        k = table[i]
        if k == 0:
            slot_out[0] = i
            return -1
        k -= 1
        if hashes[k] == h and _enc_is_str(objs[k]) and _ak_same_str(objs[k], s):
            return k
        i = (i + 1) & mask


cdef int _dd_rank(object rt, Py_ssize_t size, const int32_t* table, uint64_t mask,
                  PyObject** objs, const Py_hash_t* hashes, const int64_t* row_of,
                  int64_t row_base, _DdEntry* entries, PyObject** values,
                  int64_t* out) except -2:
    """The ranking ``rt`` (a dict {doc: score} of ``size`` entries) as pyndeval ranks it
    (score descending, then document id ascending), each document as its row (``row_base``
    plus ``row_of[k]``, or k where ``row_of`` is NULL, for the document ``objs[k]`` found in
    ``table``; -1 if none) in ``out[:size]``. Returns 0, or -1 for a ranking this path does
    not take (an id other than an exact str, a score other than a float, NaN, another size)."""
    cdef Py_ssize_t nr = 0, j, k
    cdef PyObject *dk
    cdef PyObject *dv
    cdef double v, prev = 0.0
    cdef bint descending = True
    cdef uint64_t slot = 0
    if type(rt) is not dict:
        return -1
    # the entries gathered first, then read a few ahead of their use: each str and float is
    # a cache miss of its own, which the prefetches overlap
    j = 0
    while _enc_dict_next(rt, &j, &dk, &dv):
        if nr >= size:
            return -1
        entries[nr].s = dk
        values[nr] = dv
        nr += 1
    if nr != size:
        return -1
    for j in range(nr):
        if j + 8 < nr:
            AK_PREFETCH(entries[j + 8].s)
            AK_PREFETCH(values[j + 8])
        dk = entries[j].s
        dv = values[j]
        if not _enc_is_str(dk) or not _ak_is_exact_float(dv):
            return -1
        v = _ak_float_value(dv)
        if v != v:
            return -1
        if j and v > prev:
            descending = False
        prev = v
        k = _dd_find(table, mask, objs, hashes, dk, _dd_hash(dk), &slot)
        entries[j].score = v
        entries[j].row = -1 if k < 0 else row_base + (row_of[k] if row_of != NULL else k)
    if not descending:
        qsort(entries, nr, sizeof(_DdEntry), _dd_entry_cmp)
    else:
        # written in score order: only each group of tied scores is put in id order
        j = 0
        while j < nr:
            k = j + 1
            while k < nr and entries[k].score == entries[j].score:
                k += 1
            if k - j > 1:
                qsort(&entries[j], k - j, sizeof(_DdEntry), _dd_entry_cmp)
            j = k
    for j in range(nr):
        out[j] = entries[j].row
    return 0


def diversity_dicts_valid(list topics, bint run) -> bool:
    """Whether every topic of ``topics`` (qrels ``{subtopic: {doc: grade}}`` dicts, or with
    ``run`` run ``{doc: score}`` dicts) holds only what ``diversity_dict_rankings`` takes:
    the topics it does not rank are read no further than this."""
    cdef Py_ssize_t i, spos, dpos
    cdef PyObject *sk
    cdef PyObject *sv
    cdef PyObject *dk
    cdef PyObject *dv
    cdef object topic, docs
    cdef long long g
    cdef int overflow = 0
    cdef double v
    for i in range(len(topics)):
        topic = topics[i]
        if type(topic) is not dict:
            return False
        if run:
            dpos = 0
            while _enc_dict_next(topic, &dpos, &dk, &dv):
                if not _enc_is_str(dk) or not _ak_is_exact_float(dv):
                    return False
                v = _ak_float_value(dv)
                if v != v:
                    return False
            continue
        spos = 0
        while _enc_dict_next(topic, &spos, &sk, &sv):
            if not _enc_is_str(sk) or not _enc_is_dict(sv):
                return False
            docs = <object>sv
            dpos = 0
            while _enc_dict_next(docs, &dpos, &dk, &dv):
                if not _enc_is_str(dk) or not _div_is_int(dv):
                    return False
                g = _div_as_long(dv, &overflow)
                if overflow or g < -2147483648 or g > 2147483647:
                    return False
    return True


def diversity_dict_rankings(list qrels_topics, list run_topics, dict subtopic_code,
                            int64_t[::1] judgment_offsets, int64_t[::1] run_offsets,
                            int64_t[::1] t_out, int64_t[::1] local_out, int64_t[::1] row_out,
                            int64_t[::1] grade_out, int64_t[::1] doc_offsets_out,
                            int64_t[::1] subtopics_out, int64_t[::1] ranked_out) -> int:
    """Topic ``i``'s judgments ``qrels_topics[i]`` (``{subtopic: {doc: grade}}``) and ranking
    ``run_topics[i]`` (``{doc: score}``) in the layout of ``diversity_qrels_rows`` and
    ``ndeval_topics``: the judgments sorted by (topic, document id, subtopic) go to
    ``t_out``, ``local_out`` (the subtopic's number among the topic's, in the order of
    ``subtopic_code``'s codes), ``row_out`` (the row of the (topic, document), rows
    numbered in document id order, topic by topic) and ``grade_out``; ``doc_offsets_out[i]``
    is topic i's first row and ``subtopics_out[i]`` its number of subtopics; the run ranked
    as pyndeval ranks (score descending, then document id ascending) goes to
    ``ranked_out[run_offsets[i]:run_offsets[i + 1]]`` as rows (-1: not judged).

    ``judgment_offsets`` and ``run_offsets`` are where each topic's judgments and ranking
    start; the walk checks every topic against them. Returns the number of judgments, or -1
    for input this path does not take (see ``diversity_dicts_valid``) or dicts whose sizes
    are not the offsets': nothing is written outside the arrays, whatever is passed."""
    cdef Py_ssize_t n = len(qrels_topics), i, j, k, lo, nj, nd, rows = 0
    cdef Py_ssize_t spos, dpos, most_j = 0, most_r = 0, n_codes = len(subtopic_code)
    cdef Py_ssize_t total_j, total_r, common, m
    cdef PyObject *sk
    cdef PyObject *sv
    cdef PyObject *dk
    cdef PyObject *dv
    cdef PyObject *found
    cdef object qt, rt, docs
    cdef long long g
    cdef int overflow = 0
    cdef Py_hash_t h
    cdef uint64_t cap, mask, slot = 0
    cdef int64_t code, c, base
    cdef bint latin1
    cdef const unsigned char* p0
    cdef const unsigned char* p
    cdef int32_t* table = NULL
    cdef _DdDoc* sorted_docs = NULL
    cdef Py_hash_t* hashes = NULL
    cdef int64_t* row_of = NULL
    cdef int64_t* j_doc = NULL
    cdef int64_t* j_code = NULL
    cdef int64_t* j_grade = NULL
    cdef int64_t* key = NULL
    cdef int64_t* order_a = NULL
    cdef int64_t* order_b = NULL
    cdef int64_t* count = NULL
    cdef int64_t* stamp = NULL
    cdef int64_t* local_of = NULL
    cdef _DdEntry* entries = NULL
    cdef uint64_t head
    cdef PyObject** values = NULL
    cdef PyObject** j_key = NULL
    cdef PyObject** doc_obj = NULL
    cdef PyObject** j_value = NULL
    cdef uint64_t* heads = NULL
    cdef uint64_t* heads_tmp = NULL
    if (len(run_topics) != n or judgment_offsets.shape[0] != n + 1
            or run_offsets.shape[0] != n + 1 or doc_offsets_out.shape[0] != n + 1
            or subtopics_out.shape[0] != n):
        raise InputError("diversity_dict_rankings: arrays of mismatched sizes")
    if judgment_offsets[0] != 0 or run_offsets[0] != 0:
        raise InputError("diversity_dict_rankings: offsets must start at 0")
    for i in range(n):
        if judgment_offsets[i + 1] < judgment_offsets[i] or run_offsets[i + 1] < run_offsets[i]:
            raise InputError("diversity_dict_rankings: offsets must not decrease")
        most_j = max(most_j, judgment_offsets[i + 1] - judgment_offsets[i])
        most_r = max(most_r, run_offsets[i + 1] - run_offsets[i])
    total_j, total_r = judgment_offsets[n], run_offsets[n]
    if (t_out.shape[0] != total_j or local_out.shape[0] != total_j
            or row_out.shape[0] != total_j or grade_out.shape[0] != total_j
            or ranked_out.shape[0] != total_r):
        raise InputError("diversity_dict_rankings: arrays of mismatched sizes")
    if most_j >= 2147483647:
        return -1  # (rows are numbered in 32 bits in the table)
    cap = 16
    while cap < 2 * <uint64_t>most_j + 2:
        cap <<= 1
    mask = cap - 1
    try:
        table = <int32_t*>malloc(cap * sizeof(int32_t))
        sorted_docs = <_DdDoc*>malloc((most_j + 1) * sizeof(_DdDoc))
        hashes = <Py_hash_t*>malloc((most_j + 1) * sizeof(Py_hash_t))
        row_of = <int64_t*>malloc((most_j + 1) * sizeof(int64_t))
        j_doc = <int64_t*>malloc((most_j + 1) * sizeof(int64_t))
        j_code = <int64_t*>malloc((most_j + 1) * sizeof(int64_t))
        j_grade = <int64_t*>malloc((most_j + 1) * sizeof(int64_t))
        key = <int64_t*>malloc((most_j + 1) * sizeof(int64_t))
        order_a = <int64_t*>malloc((most_j + 1) * sizeof(int64_t))
        order_b = <int64_t*>malloc((most_j + 1) * sizeof(int64_t))
        count = <int64_t*>malloc((max(most_j, n_codes) + 1) * sizeof(int64_t))
        stamp = <int64_t*>malloc((n_codes + 1) * sizeof(int64_t))
        local_of = <int64_t*>malloc((n_codes + 1) * sizeof(int64_t))
        entries = <_DdEntry*>malloc((most_r + 1) * sizeof(_DdEntry))
        heads = <uint64_t*>malloc((most_j + 1) * sizeof(uint64_t))
        values = <PyObject**>malloc((most_r + 1) * sizeof(PyObject*))
        j_key = <PyObject**>malloc((most_j + 1) * sizeof(PyObject*))
        doc_obj = <PyObject**>malloc((most_j + 1) * sizeof(PyObject*))
        j_value = <PyObject**>malloc((most_j + 1) * sizeof(PyObject*))
        heads_tmp = <uint64_t*>malloc((most_j + 1) * sizeof(uint64_t))
        if (table == NULL or sorted_docs == NULL or hashes == NULL
                or row_of == NULL or j_doc == NULL or j_code == NULL or j_grade == NULL
                or key == NULL or order_a == NULL or order_b == NULL or count == NULL
                or stamp == NULL or local_of == NULL or entries == NULL or heads == NULL
                or heads_tmp == NULL or values == NULL or j_key == NULL
                or j_value == NULL or doc_obj == NULL):
            raise MemoryError()
        for k in range(n_codes):
            stamp[k] = -1
        for i in range(n):
            qt = qrels_topics[i]
            rt = run_topics[i]
            if type(qt) is not dict or type(rt) is not dict:
                return -1
            # the topic's judgments, each document numbered at its first appearance
            memset(table, 0, cap * sizeof(int32_t))
            nj = 0
            nd = 0
            lo = judgment_offsets[i]
            spos = 0
            while _enc_dict_next(qt, &spos, &sk, &sv):
                if not _enc_is_str(sk) or not _enc_is_dict(sv):
                    return -1
                docs = <object>sv
                if _enc_dict_size(sv) == 0:
                    continue
                found = _div_dict_get(subtopic_code, sk)
                if found == NULL or not _div_is_int(found):
                    return -1
                code = _div_as_ssize(found)
                if not 0 <= code < n_codes:
                    return -1
                dpos = 0
                while _enc_dict_next(docs, &dpos, &dk, &dv):
                    if nj >= judgment_offsets[i + 1] - lo:
                        return -1
                    j_key[nj] = dk
                    j_value[nj] = dv
                    j_code[nj] = code
                    nj += 1
            if nj != judgment_offsets[i + 1] - lo:
                return -1
            # (read a few ahead, as the run's entries are below)
            for j in range(nj):
                if j + 8 < nj:
                    AK_PREFETCH(j_key[j + 8])
                dk = j_key[j]
                dv = j_value[j]
                if not _enc_is_str(dk) or not _div_is_int(dv):
                    return -1
                g = _div_as_long(dv, &overflow)
                if overflow or g < -2147483648 or g > 2147483647:
                    return -1
                h = _dd_hash(dk)
                k = _dd_find(table, mask, doc_obj, hashes, dk, h, &slot)
                if k < 0:
                    k = nd
                    table[slot] = <int32_t>(nd + 1)
                    doc_obj[nd] = dk
                    hashes[nd] = h
                    nd += 1
                j_doc[j] = k
                j_grade[j] = g
            # the topic's subtopics, numbered in code order
            m = 0
            for j in range(nj):
                code = j_code[j]
                if stamp[code] != i:
                    stamp[code] = i
                    order_a[m] = code
                    m += 1
            if m > 1:
                qsort(order_a, m, sizeof(int64_t), _div_i64_cmp)
            for j in range(m):
                local_of[order_a[j]] = j
            subtopics_out[i] = m
            # the documents in id order: a row each
            latin1 = True
            for j in range(nd):
                if PyUnicode_KIND(<object>doc_obj[j]) != 1:
                    latin1 = False
                    break
            common = 0
            if latin1 and nd:
                p0 = <const unsigned char*>PyUnicode_DATA(<object>doc_obj[0])
                common = PyUnicode_GET_LENGTH(<object>doc_obj[0])
                for j in range(1, nd):
                    p = <const unsigned char*>PyUnicode_DATA(<object>doc_obj[j])
                    k = 0
                    while (k < common and k < PyUnicode_GET_LENGTH(<object>doc_obj[j])
                           and p[k] == p0[k]):
                        k += 1
                    common = k
            if latin1:
                # radix-sorted by the 8 bytes after the shared prefix, ties by the whole id
                for j in range(nd):
                    p = <const unsigned char*>PyUnicode_DATA(<object>doc_obj[j])
                    m = PyUnicode_GET_LENGTH(<object>doc_obj[j])
                    head = 0
                    for k in range(common, common + 8):
                        head <<= 8
                        if k < m:
                            head |= p[k]
                    heads[j] = head
                    order_b[j] = j
                _ty_radix_sort(heads, order_b, heads_tmp, key, nd)
                j = 0
                while j < nd:
                    k = j + 1
                    while k < nd and heads[k] == heads[j]:
                        k += 1
                    if k - j > 1:
                        _dd_insertion_sort(doc_obj, &order_b[j], k - j)
                    j = k
            else:
                for j in range(nd):
                    sorted_docs[j].s = doc_obj[j]
                    sorted_docs[j].code = j
                if nd > 1:
                    qsort(sorted_docs, nd, sizeof(_DdDoc), _dd_doc_cmp)
                for j in range(nd):
                    order_b[j] = sorted_docs[j].code
            for j in range(nd):
                row_of[order_b[j]] = j
            # the judgments by (row, subtopic): two stable counting passes
            for j in range(nj):
                order_a[j] = j
                key[j] = local_of[j_code[j]]
            _div_counting_pass(key, subtopics_out[i], order_a, order_b, count, nj)
            for j in range(nj):
                key[j] = row_of[j_doc[j]]
            _div_counting_pass(key, nd, order_b, order_a, count, nj)
            doc_offsets_out[i] = rows
            for j in range(nj):
                c = order_a[j]
                t_out[lo + j] = i
                local_out[lo + j] = local_of[j_code[c]]
                row_out[lo + j] = rows + key[c]
                grade_out[lo + j] = j_grade[c]
            # the ranking: each run document looked up among the judged ones
            base = run_offsets[i]
            if _dd_rank(rt, run_offsets[i + 1] - base, table, mask, doc_obj, hashes, row_of,
                        rows, entries, values,
                        (&ranked_out[0] + base) if total_r else NULL) < 0:
                return -1
            rows += nd
        doc_offsets_out[n] = rows
        return total_j
    finally:
        free(table)
        free(sorted_docs)
        free(hashes)
        free(row_of)
        free(j_doc)
        free(j_code)
        free(j_grade)
        free(key)
        free(order_a)
        free(order_b)
        free(count)
        free(stamp)
        free(local_of)
        free(entries)
        free(heads)
        free(heads_tmp)
        free(values)
        free(j_key)
        free(doc_obj)
        free(j_value)


def diversity_rank_dicts(list row_docs, const int64_t[::1] row_hash,
                         const int64_t[::1] doc_offsets, list run_topics,
                         const int64_t[::1] topic_of, const int64_t[::1] run_offsets,
                         int64_t[::1] ranked_out) -> bool:
    """Run dicts ranked against encoded diversity qrels (a DiversityQrels evaluated against
    many runs): query ``i``'s ranking ``run_topics[i]`` (``{doc: score}``) as pyndeval ranks
    it, each document as the row of topic ``topic_of[i]`` (rows ``doc_offsets[t]`` to
    ``doc_offsets[t + 1]``; row r's id is the str ``row_docs[r]``, whose Python hash is
    ``row_hash[r]``) it is, or -1, to ``ranked_out[run_offsets[i]:run_offsets[i + 1]]``.
    False (the caller takes the general path) for a ranking ``_dd_rank`` does not take."""
    cdef Py_ssize_t n = len(run_topics), rows = len(row_docs), topics = doc_offsets.shape[0] - 1
    cdef Py_ssize_t i, r, most_rows = 0, most_r = 0
    cdef int64_t t, lo, count
    cdef uint64_t cap, mask, slot = 0
    cdef int32_t* table = NULL
    cdef _DdEntry* entries = NULL
    cdef PyObject** values = NULL
    cdef PyObject** objs
    if (topics < 0 or row_hash.shape[0] != rows or topic_of.shape[0] != n
            or run_offsets.shape[0] != n + 1 or doc_offsets[0] != 0
            or doc_offsets[topics] != rows or run_offsets[0] != 0
            or ranked_out.shape[0] != run_offsets[n]):
        raise InputError("diversity_rank_dicts: arrays of mismatched sizes")
    for t in range(topics):
        if doc_offsets[t + 1] < doc_offsets[t]:
            raise InputError("diversity_rank_dicts: offsets must not decrease")
        most_rows = max(most_rows, doc_offsets[t + 1] - doc_offsets[t])
    for i in range(n):
        if run_offsets[i + 1] < run_offsets[i] or not 0 <= topic_of[i] < topics:
            raise InputError("diversity_rank_dicts: offsets or topics out of range")
        most_r = max(most_r, run_offsets[i + 1] - run_offsets[i])
    if most_rows >= 2147483647 or sizeof(Py_hash_t) != sizeof(int64_t):
        return False  # (rows numbered in 32 bits; hashes read as the int64 they were stored as)
    cap = 16
    while cap < 2 * <uint64_t>most_rows + 2:
        cap <<= 1
    mask = cap - 1
    objs = _dd_list_items(row_docs)
    try:
        table = <int32_t*>malloc(cap * sizeof(int32_t))
        entries = <_DdEntry*>malloc((most_r + 1) * sizeof(_DdEntry))
        values = <PyObject**>malloc((most_r + 1) * sizeof(PyObject*))
        if table == NULL or entries == NULL or values == NULL:
            raise MemoryError()
        for i in range(n):
            t = topic_of[i]
            lo = doc_offsets[t]
            count = doc_offsets[t + 1] - lo
            memset(table, 0, cap * sizeof(int32_t))
            for r in range(count):
                slot = ((<uint64_t>row_hash[lo + r] * 0x9E3779B97F4A7C15ULL) >> 32) & mask
                while table[slot] != 0:
                    slot = (slot + 1) & mask
                table[slot] = <int32_t>(r + 1)
            if _dd_rank(run_topics[i], run_offsets[i + 1] - run_offsets[i], table, mask,
                        objs + lo, <const Py_hash_t*>&row_hash[lo] if count else NULL, NULL,
                        lo, entries, values,
                        (&ranked_out[0] + run_offsets[i]) if run_offsets[n] else NULL) < 0:
                return False
        return True
    finally:
        free(table)
        free(entries)
        free(values)
