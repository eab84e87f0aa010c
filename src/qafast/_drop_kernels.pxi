# DROP kernels (exact match, bag-aligned F1, the question maxima), included by _kernels.pyx.
# The definitions they implement are in qafast/reference/drop.py.
#
# Every distinct normalized span is a *bag*: its sorted distinct token ids in a CSR array. A
# pair (one prediction against one gold answer) is two lists of bag ids; pairs come grouped
# by question. Number tokens are flagged per token id.

from libc.math cimport rint, INFINITY
from libc.stdint cimport int8_t, int64_t, uint8_t
from libc.stdlib cimport malloc, free


cdef inline void _dk_bag_f1_numbers(const int32_t[::1] tok, const int64_t[::1] bag_off,
                                    const uint8_t[::1] tok_num, int64_t p, int64_t g,
                                    double* out) noexcept nogil:
    # the F1 of bag p (predicted) against bag g (gold), or 0.0 when g holds a number token
    # and shares none with p
    cdef int64_t a = bag_off[p], a_end = bag_off[p + 1]
    cdef int64_t b = bag_off[g], b_end = bag_off[g + 1]
    cdef int64_t np_ = a_end - a, ng = b_end - b, shared = 0
    cdef bint gold_numbers = False, shared_number = False
    cdef int64_t k
    cdef double precision, recall
    for k in range(b, b_end):
        if tok_num[tok[k]]:
            gold_numbers = True
            break
    while a < a_end and b < b_end:
        if tok[a] == tok[b]:
            shared += 1
            if tok_num[tok[a]]:
                shared_number = True
            a += 1
            b += 1
        elif tok[a] < tok[b]:
            a += 1
        else:
            b += 1
    if gold_numbers and not shared_number:
        out[0] = 0.0
        return
    precision = 1.0 if np_ == 0 else <double>shared / <double>np_
    recall = 1.0 if ng == 0 else <double>shared / <double>ng
    if precision == 0.0 and recall == 0.0:
        out[0] = 0.0
    else:
        out[0] = (2 * precision * recall) / (precision + recall)


cdef int _dk_assign(int64_t rows, int64_t cols, const double* cost, int64_t* col_of,
                    double* work, int64_t* iwork) noexcept nogil:
    # Minimum-cost pairing of a rows x cols matrix (rows <= cols), every row paired:
    # Crouse's shortest augmenting path, with the tie rules and arithmetic of SciPy's
    # linear_sum_assignment (see reference/drop.py, assign). ``work`` holds rows + 2 * cols
    # doubles, ``iwork`` rows + 4 * cols ints.
    cdef double* u = work
    cdef double* v = work + rows
    cdef double* dist = work + rows + cols
    cdef int64_t* row_of = iwork
    cdef int64_t* path = iwork + cols
    cdef int64_t* todo = iwork + 2 * cols
    cdef int64_t* seen_cols = iwork + 3 * cols
    cdef int64_t* seen_rows = iwork + 4 * cols
    cdef int64_t start, i, j, k, at, left, sink, r, c, tmp
    cdef double reach, best, x
    for r in range(rows):
        u[r] = 0.0
        col_of[r] = -1
    for c in range(cols):
        v[c] = 0.0
        row_of[c] = -1
        path[c] = -1
    for start in range(rows):
        for c in range(cols):
            dist[c] = INFINITY
            seen_cols[c] = 0
            todo[c] = cols - c - 1
        for r in range(rows):
            seen_rows[r] = 0
        left = cols
        reach = 0.0
        i = start
        sink = -1
        while sink == -1:
            seen_rows[i] = 1
            best = INFINITY
            at = -1
            for k in range(left):
                j = todo[k]
                x = reach + cost[i * cols + j] - u[i] - v[j]
                if x < dist[j]:
                    path[j] = i
                    dist[j] = x
                if dist[j] < best or (dist[j] == best and row_of[j] == -1):
                    best = dist[j]
                    at = k
            reach = best
            if at < 0 or reach == INFINITY:
                return -1
            j = todo[at]
            if row_of[j] == -1:
                sink = j
            else:
                i = row_of[j]
            seen_cols[j] = 1
            left -= 1
            todo[at] = todo[left]
        u[start] += reach
        for r in range(rows):
            if seen_rows[r] and r != start:
                u[r] += reach - dist[col_of[r]]
        for c in range(cols):
            if seen_cols[c]:
                v[c] -= reach - dist[c]
        j = sink
        while True:
            i = path[j]
            row_of[j] = i
            tmp = col_of[i]
            col_of[i] = j
            j = tmp
            if i == start:
                break
    return 0


cdef double _dk_pairwise(const double* a, int64_t n) noexcept nogil:
    # numpy's pairwise summation of float64 (what numpy.mean sums with)
    cdef double r0, r1, r2, r3, r4, r5, r6, r7, res
    cdef int64_t i, half
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    if n <= 128:
        r0 = a[0]; r1 = a[1]; r2 = a[2]; r3 = a[3]
        r4 = a[4]; r5 = a[5]; r6 = a[6]; r7 = a[7]
        i = 8
        while i < n - (n % 8):
            r0 += a[i]; r1 += a[i + 1]; r2 += a[i + 2]; r3 += a[i + 3]
            r4 += a[i + 4]; r5 += a[i + 5]; r6 += a[i + 6]; r7 += a[i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return _dk_pairwise(a, half) + _dk_pairwise(a + half, n - half)


def drop_pairwise_mean(const double[::1] values):
    """numpy.mean of a float64 array, computed by the kernels' pairwise sum (NaN for none)."""
    if values.shape[0] == 0:
        return float("nan")
    return _dk_pairwise(&values[0], values.shape[0]) / <double>values.shape[0]


def drop_type_means(const double[::1] em, const double[::1] f1, const int8_t[::1] codes,
                    int64_t[::1] counts, double[::1] em_mean, double[::1] f1_mean):
    """For each type code c from -1 to 3 (at index c + 1 of the outputs): how many questions
    have it, and numpy.mean of their exact match and of their F1, in their order (0.0 where
    none has it). ``codes`` must hold codes from -1 to 3 only."""
    cdef Py_ssize_t n = codes.shape[0], i, m
    cdef int slot
    cdef double* picked
    if em.shape[0] != n or f1.shape[0] != n:
        raise ValueError("drop_type_means: em, f1 and codes differ in length")
    if counts.shape[0] < 5 or em_mean.shape[0] < 5 or f1_mean.shape[0] < 5:
        raise ValueError("drop_type_means: the outputs need 5 slots")
    for i in range(n):
        if codes[i] < -1 or codes[i] > 3:
            raise ValueError(f"drop_type_means: code {codes[i]} at {i} is not from -1 to 3")
    picked = <double*>malloc(sizeof(double) * (n if n else 1))
    if picked == NULL:
        raise MemoryError()
    with nogil:
        for slot in range(5):
            m = 0
            for i in range(n):
                if codes[i] + 1 == slot:
                    picked[m] = em[i]
                    m += 1
            counts[slot] = m
            em_mean[slot] = _dk_pairwise(picked, m) / <double>m if m else 0.0
            m = 0
            for i in range(n):
                if codes[i] + 1 == slot:
                    picked[m] = f1[i]
                    m += 1
            f1_mean[slot] = _dk_pairwise(picked, m) / <double>m if m else 0.0
    free(picked)
    return None


def drop_assign(const double[:, ::1] cost, int64_t[::1] col_of):
    """The kernels' pairing of a rows x cols cost matrix with rows <= cols: ``col_of[r]`` is
    row r's column. Returns 0, or -1 for a matrix with no finite pairing."""
    cdef int64_t rows = cost.shape[0], cols = cost.shape[1]
    cdef double* work
    cdef int64_t* iwork
    cdef int rc
    if rows == 0:
        return 0
    if rows > cols or col_of.shape[0] < rows:
        raise ValueError("drop_assign needs rows <= cols and room for every row")
    work = <double*>malloc(sizeof(double) * (rows + 2 * cols))
    iwork = <int64_t*>malloc(sizeof(int64_t) * (rows + 4 * cols))
    if work == NULL or iwork == NULL:
        free(work)
        free(iwork)
        raise MemoryError()
    with nogil:
        rc = _dk_assign(rows, cols, &cost[0, 0], &col_of[0], work, iwork)
    free(work)
    free(iwork)
    return rc


def drop_score(const int32_t[::1] tok, const int64_t[::1] bag_off, const uint8_t[::1] tok_num,
               const int64_t[::1] pred_off, const int64_t[::1] pred_bags,
               const int64_t[::1] pair_pred, const int64_t[::1] gold_off,
               const int64_t[::1] gold_bags, const uint8_t[::1] gold_blank,
               const int8_t[::1] gold_kind, const int64_t[::1] q_off,
               double[::1] pair_em, double[::1] pair_f1, double[::1] q_em, double[::1] q_f1,
               int8_t[::1] q_kind):
    """Score every pair and every question.

    Prediction k's bags are ``pred_bags[pred_off[k]:pred_off[k + 1]]``; pair p compares
    prediction ``pair_pred[p]`` with the gold answer whose bags are
    ``gold_bags[gold_off[p]:gold_off[p + 1]]``, of type ``gold_kind[p]``, skipped in the
    maxima when ``gold_blank[p]``. Question q's pairs are ``q_off[q]:q_off[q + 1]``. Writes
    each pair's EM and F1, and each question's maxima and type (-1: none kept)."""
    cdef int64_t n_pairs = pair_pred.shape[0], n_q = q_off.shape[0] - 1
    cdef int64_t p, q, k, a, b, P, G, big = 1, area = 1, i, j
    cdef int64_t n_distinct_p, n_distinct_g
    cdef double* scores = NULL
    cdef double* cost = NULL
    cdef double* kept = NULL
    cdef double* work = NULL
    cdef int64_t* iwork = NULL
    cdef int64_t* col_of = NULL
    cdef int64_t* sorted_p = NULL
    cdef int64_t* sorted_g = NULL
    cdef double s, best_em, best_f1, em, f1
    cdef int8_t kind
    cdef bint same
    cdef int rc = 0
    if (pair_em.shape[0] < n_pairs or pair_f1.shape[0] < n_pairs
            or gold_off.shape[0] < n_pairs + 1 or gold_blank.shape[0] < n_pairs
            or gold_kind.shape[0] < n_pairs
            or q_em.shape[0] < n_q or q_f1.shape[0] < n_q or q_kind.shape[0] < n_q):
        raise ValueError("drop_score: output or input arrays too short")
    # every offset and id is checked before anything is read without the GIL
    _dk_check_csr(bag_off, tok.shape[0], "bag_off")
    _dk_check_ids(tok, tok_num.shape[0], "tok")
    _dk_check_csr(pred_off, pred_bags.shape[0], "pred_off")
    _dk_check_ids64(pred_bags, bag_off.shape[0] - 1, "pred_bags")
    _dk_check_ids64(pair_pred, pred_off.shape[0] - 1, "pair_pred")
    _dk_check_csr(gold_off[:n_pairs + 1], gold_bags.shape[0], "gold_off")
    _dk_check_ids64(gold_bags, bag_off.shape[0] - 1, "gold_bags")
    _dk_check_csr(q_off, n_pairs, "q_off")
    # the largest matrix side and area, to size the work space once
    for p in range(n_pairs):
        k = pair_pred[p]
        P = pred_off[k + 1] - pred_off[k]
        G = gold_off[p + 1] - gold_off[p]
        if P > big:
            big = P
        if G > big:
            big = G
        if P * G > area:
            area = P * G
    scores = <double*>malloc(sizeof(double) * area)
    cost = <double*>malloc(sizeof(double) * area)
    kept = <double*>malloc(sizeof(double) * big)
    work = <double*>malloc(sizeof(double) * 3 * big)
    iwork = <int64_t*>malloc(sizeof(int64_t) * 6 * big)
    col_of = <int64_t*>malloc(sizeof(int64_t) * big)
    sorted_p = <int64_t*>malloc(sizeof(int64_t) * big)
    sorted_g = <int64_t*>malloc(sizeof(int64_t) * big)
    try:
        if (scores == NULL or cost == NULL or kept == NULL or work == NULL or iwork == NULL
                or col_of == NULL or sorted_p == NULL or sorted_g == NULL):
            raise MemoryError()
        with nogil:
            for p in range(n_pairs):
                k = pair_pred[p]
                a = pred_off[k]
                P = pred_off[k + 1] - a
                b = gold_off[p]
                G = gold_off[p + 1] - b
                # exact match: equal sets of normalized spans, equally many
                em = 0.0
                if P == G:
                    for i in range(P):
                        sorted_p[i] = pred_bags[a + i]
                        sorted_g[i] = gold_bags[b + i]
                    _dk_sort(sorted_p, P)
                    _dk_sort(sorted_g, G)
                    n_distinct_p = _dk_unique(sorted_p, P)
                    n_distinct_g = _dk_unique(sorted_g, G)
                    same = n_distinct_p == n_distinct_g
                    if same:
                        for i in range(n_distinct_p):
                            if sorted_p[i] != sorted_g[i]:
                                same = False
                                break
                    if same:
                        em = 1.0
                pair_em[p] = em
                # F1: the best one-to-one pairing of bags
                for i in range(G if G > P else P):
                    kept[i] = 0.0
                if P > 0 and G > 0:
                    for i in range(G):
                        for j in range(P):
                            _dk_bag_f1_numbers(tok, bag_off, tok_num, pred_bags[a + j],
                                               gold_bags[b + i], &scores[i * P + j])
                    if P == 1 and G == 1:
                        kept[0] = scores[0]
                    elif G <= P:
                        for i in range(G * P):
                            cost[i] = -scores[i]
                        rc = _dk_assign(G, P, cost, col_of, work, iwork)
                        if rc != 0:
                            break
                        for i in range(G):
                            s = scores[i * P + col_of[i]]
                            if s > kept[i]:
                                kept[i] = s
                    else:
                        for j in range(P):
                            for i in range(G):
                                cost[j * G + i] = -scores[i * P + j]
                        rc = _dk_assign(P, G, cost, col_of, work, iwork)
                        if rc != 0:
                            break
                        for j in range(P):
                            i = col_of[j]
                            s = scores[i * P + j]
                            if s > kept[i]:
                                kept[i] = s
                if G > P:
                    f1 = _dk_pairwise(kept, G) / <double>G
                else:
                    f1 = _dk_pairwise(kept, P) / <double>P
                pair_f1[p] = rint(f1 * 100.0) / 100.0
            if rc == 0:
                for q in range(n_q):
                    best_em = 0.0
                    best_f1 = 0.0
                    kind = -1
                    for p in range(q_off[q], q_off[q + 1]):
                        if gold_blank[p]:
                            continue
                        em = pair_em[p]
                        f1 = pair_f1[p]
                        if em > best_em:
                            best_em = em
                        if f1 > best_f1:
                            best_f1 = f1
                        if best_em == em and best_f1 == f1:
                            kind = gold_kind[p]
                    q_em[q] = best_em
                    q_f1[q] = best_f1
                    q_kind[q] = kind
    finally:
        free(scores)
        free(cost)
        free(kept)
        free(work)
        free(iwork)
        free(col_of)
        free(sorted_p)
        free(sorted_g)
    if rc != 0:
        raise ValueError("drop_score: no pairing found")


cdef int _dk_check_csr(const int64_t[::1] off, Py_ssize_t limit, str name) except -1:
    # offsets that start at 0, never go back and end within ``limit``
    cdef Py_ssize_t i, n = off.shape[0]
    if n == 0 or off[0] != 0 or off[n - 1] > limit:
        raise ValueError(f"drop kernels: {name} must run from 0 to at most {limit}")
    for i in range(1, n):
        if off[i] < off[i - 1]:
            raise ValueError(f"drop kernels: {name} goes back at {i}")
    return 0


cdef int _dk_check_ids(const int32_t[::1] ids, Py_ssize_t limit, str name) except -1:
    cdef Py_ssize_t i
    for i in range(ids.shape[0]):
        if ids[i] < 0 or ids[i] >= limit:
            raise ValueError(f"drop kernels: {name}[{i}] is not below {limit}")
    return 0


cdef int _dk_check_ids64(const int64_t[::1] ids, Py_ssize_t limit, str name) except -1:
    cdef Py_ssize_t i
    for i in range(ids.shape[0]):
        if ids[i] < 0 or ids[i] >= limit:
            raise ValueError(f"drop kernels: {name}[{i}] is not below {limit}")
    return 0


cdef void _dk_sort(int64_t* a, int64_t n) noexcept nogil:
    # insertion sort: the span lists are short
    cdef int64_t i, j, x
    for i in range(1, n):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


cdef int64_t _dk_unique(int64_t* a, int64_t n) noexcept nogil:
    cdef int64_t i, m = 0
    for i in range(n):
        if m == 0 or a[m - 1] != a[i]:
            a[m] = a[i]
            m += 1
    return m


# -- normalizing an ASCII span ------------------------------------------------------------------

cdef bint _dk_is_punct[128]
for _dk_c in range(128):
    _dk_is_punct[_dk_c] = chr(_dk_c) in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


cdef bint _dk_may_be_number(const char* t, Py_ssize_t n) noexcept:
    # False only where float() surely fails on these printable ASCII characters: a number
    # has a digit, or is nan, inf or infinity (any case) after an optional sign
    cdef Py_ssize_t i
    for i in range(n):
        if b'0' <= t[i] <= b'9':
            return True
    if n and (t[0] == b'+' or t[0] == b'-'):
        t += 1
        n -= 1
    return ((n == 3 and (memcmp(t, b"nan", 3) == 0 or memcmp(t, b"inf", 3) == 0))
            or (n == 8 and memcmp(t, b"infinity", 8) == 0))


cdef object _dk_number_piece(const char* t, Py_ssize_t n):
    # str(float(token)) when float() parses the token, else None
    cdef str token
    cdef Py_ssize_t i, lead = 0
    cdef char digits[20]
    if not _dk_may_be_number(t, n):
        return None
    if n <= 15:
        # plain digits below 10**15: float() is exact and str() writes the integer and ".0"
        for i in range(n):
            if not (b'0' <= t[i] <= b'9'):
                break
        else:
            while lead < n - 1 and t[lead] == b'0':
                lead += 1
            memcpy(digits, t + lead, n - lead)
            digits[n - lead] = b'.'
            digits[n - lead + 1] = b'0'
            return digits[:n - lead + 2].decode("ascii")
    token = t[:n].decode("ascii")
    try:
        return repr(float(token))
    except ValueError:
        return None


def drop_tokens(str span):
    """The pieces DROP's normalization keeps of ``span`` (its normalized string is them
    joined by spaces, its bag their set), or None when the span has a character other than
    printable ASCII, which the Python definition handles."""
    cdef bytearray numbers = bytearray()
    return _dk_tokens(span, numbers)


cdef object _dk_tokens(str span, bytearray numbers):
    # drop_tokens, appending to ``numbers`` whether each piece is a number (a piece is one
    # exactly when it was made by str(float(...)): the others are what float() refused)
    cdef Py_ssize_t n, i, start, end, m, k
    cdef const char* s
    cdef char buf[256]
    cdef char* lowered = buf
    cdef char* heap = NULL
    cdef unsigned char c
    cdef list out = []
    cdef object piece
    if not PyUnicode_IS_ASCII(span):
        return None
    s = PyUnicode_AsUTF8AndSize(span, &n)
    if n >= 256:
        heap = <char*>malloc(n + 1)
        if heap == NULL:
            raise MemoryError()
        lowered = heap
    try:
        start = 0
        while start <= n:
            end = start
            while end < n and s[end] != b' ' and s[end] != b'-':
                end += 1
            m = 0
            for i in range(start, end):
                c = <unsigned char>s[i]
                if c < 0x21 or c > 0x7e:
                    return None          # whitespace other than " ", control characters
                lowered[m] = c + 32 if b'A' <= c <= b'Z' else c
                m += 1
            start = end + 1
            if m == 0:
                continue
            piece = _dk_number_piece(lowered, m)
            if piece is None:
                k = 0
                for i in range(m):
                    if not _dk_is_punct[<unsigned char>lowered[i]]:
                        lowered[k] = lowered[i]
                        k += 1
                if k == 0:
                    continue
                piece = _dk_number_piece(lowered, k)
                if piece is None:
                    if ((k == 1 and lowered[0] == b'a')
                            or (k == 2 and memcmp(lowered, b"an", 2) == 0)
                            or (k == 3 and memcmp(lowered, b"the", 3) == 0)):
                        continue
                    piece = lowered[:k].decode("ascii")
                    numbers.append(0)
                else:
                    numbers.append(1)
            else:
                numbers.append(1)
            out.append(piece)
        return out
    finally:
        free(heap)


# -- the walk over a gold file ---------------------------------------------------------------

cdef class DropVocab:
    """One vocabulary per evaluation: each distinct span -> the id of its normalized string
    (its bag), each bag -> its sorted distinct token ids (``tok[off[b]:off[b + 1]]``), each
    token -> whether it is a number (``numbers``). Printable-ASCII spans are normalized here;
    others by ``fallback(span) -> (normalized string, tokens, number flags)``."""

    cdef public dict of_span, of_norm, tokens
    cdef public bytearray numbers
    cdef public list tok, off
    cdef object fallback

    def __init__(self, fallback):
        self.of_span, self.of_norm, self.tokens = {}, {}, {}
        self.numbers = bytearray()
        self.tok, self.off = [], [0]
        self.fallback = fallback

    cpdef Py_ssize_t bag(self, str span) except -1:
        """The bag id of ``span``, interning it and its tokens on first sight."""
        cdef object b = self.of_span.get(span)
        cdef object pieces, flags, norm, t, tid
        cdef bytearray fl
        cdef Py_ssize_t i, n
        cdef list ids
        if b is not None:
            return b
        fl = bytearray()
        pieces = _dk_tokens(span, fl)
        if pieces is None:
            norm, pieces, flags = self.fallback(span)
        else:
            norm = " ".join(<list>pieces)
            flags = fl
        b = self.of_norm.get(norm)
        if b is None:
            b = len(self.of_norm)
            self.of_norm[norm] = b
            ids = []
            n = len(pieces)
            for i in range(n):
                t = pieces[i]
                tid = self.tokens.get(t)
                if tid is None:
                    tid = len(self.tokens)
                    self.tokens[t] = tid
                    self.numbers.append(flags[i])
                ids.append(tid)
            self.tok.extend(sorted(set(ids)))
            self.off.append(len(self.tok))
        self.of_span[span] = b
        return b


cdef inline Py_ssize_t _dk_bag_of(DropVocab vocab, str text) except -1:
    cdef object b = vocab.of_span.get(text)
    if b is None:
        return vocab.bag(text)
    return b


def drop_walk(dict gold, dict predictions, DropVocab vocab, list ids, dict missing,
              list pred_off, list pred_bags, list pair_pred, list gold_off, list gold_bags,
              list gold_blank, list gold_kind, list q_off):
    """The walk of ``qafast.drop_eval._score`` over the usual shapes (every value the DROP
    release has: string ids, string or list-of-string predictions, answers whose number,
    spans and date fields are strings), appending to the lists it is given and interning
    spans in ``vocab``. Returns False, having appended nothing that
    counts, at the first other shape: the caller then walks in Python, which handles every
    shape or names what is wrong."""
    cdef dict of_span = vocab.of_span
    cdef object passage, qa_pairs, qa, qid, first, predicted, validated, answer, number
    cdef object spans, date, day, month, year, text
    cdef list answers
    cdef Py_ssize_t k = -1, n_q = 0, i
    cdef str s
    for passage in gold.values():
        if type(passage) is not dict:
            return False
        qa_pairs = (<dict>passage).get("qa_pairs")
        if type(qa_pairs) is not list:
            return False
        for qa in <list>qa_pairs:
            if type(qa) is not dict:
                return False
            qid = (<dict>qa).get("query_id")
            first = (<dict>qa).get("answer")
            if type(qid) is not str or type(first) is not dict:
                return False
            ids.append(qid)
            predicted = predictions.get(qid)
            if predicted is None:
                if qid in predictions:
                    return False
                if not first:
                    missing[n_q] = 0
                else:
                    number = (<dict>first).get("number")
                    spans = (<dict>first).get("spans")
                    if number:
                        missing[n_q] = 0
                    elif spans:
                        if type(spans) is not list:
                            return False
                        missing[n_q] = 1 if len(<list>spans) == 1 else 2
                    elif "date" in <dict>first:
                        date = (<dict>first)["date"]
                        if type(date) is not dict or not ("day" in date and "month" in date
                                                           and "year" in date):
                            return False
                        missing[n_q] = 3
                    else:
                        return False
                q_off.append(len(pair_pred))
                n_q += 1
                continue
            if type(predicted) is str:
                pred_bags.append(_dk_bag_of(vocab, <str>predicted))
            elif type(predicted) is list:
                for text in <list>predicted:
                    if type(text) is not str:
                        return False
                    pred_bags.append(_dk_bag_of(vocab, <str>text))
            else:
                return False
            k += 1
            pred_off.append(len(pred_bags))
            validated = (<dict>qa).get("validated_answers")
            if validated:
                if type(validated) is not list:
                    return False
                answers = [first]
                answers.extend(<list>validated)
            else:
                answers = [first]
            for answer in answers:
                if type(answer) is not dict:
                    return False
                pair_pred.append(k)
                number = (<dict>answer).get("number")
                if number:
                    if type(number) is not str:
                        return False
                    gold_bags.append(_dk_bag_of(vocab, <str>number))
                    gold_blank.append(not (<str>number).strip())
                    gold_kind.append(0)
                else:
                    spans = (<dict>answer).get("spans")
                    if spans:
                        if type(spans) is not list:
                            return False
                        for text in <list>spans:
                            if type(text) is not str:
                                return False
                            gold_bags.append(_dk_bag_of(vocab, <str>text))
                        gold_blank.append(not (<str>(<list>spans)[0]).strip())
                        gold_kind.append(1 if len(<list>spans) == 1 else 2)
                    elif "date" in <dict>answer:
                        date = (<dict>answer)["date"]
                        if type(date) is not dict:
                            return False
                        day = (<dict>date).get("day")
                        month = (<dict>date).get("month")
                        year = (<dict>date).get("year")
                        if type(day) is not str or type(month) is not str or type(year) is not str:
                            return False
                        s = f"{day} {month} {year}"
                        gold_bags.append(_dk_bag_of(vocab, s))
                        gold_blank.append(not s.strip())
                        gold_kind.append(3)
                    else:
                        return False
                gold_off.append(len(gold_bags))
            q_off.append(len(pair_pred))
            n_q += 1
    return True
