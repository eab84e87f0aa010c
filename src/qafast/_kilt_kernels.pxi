# Kernels included by _kernels.pyx: KILT's downstream evaluation (qafast.kilt).
#
# kilt_rouge_l is the ROUGE-L F of the ``rouge`` package (1.0.1) that eval_downstream.py
# calls, for many (prediction, reference) pairs of texts given as interned word ids split
# into sentences. The package's LCS is summary-level: one LCS per pair of sentences, found
# by its backtracking, and the union of their words counted once per distinct word.

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memcmp, memcpy, memmove


cdef int64_t _kl_distinct(const int32_t* toks, const int64_t* sent_off, int64_t s0,
                          int64_t s1, int64_t* mark, int64_t stamp) noexcept nogil:
    """Distinct word ids of sentences s0..s1 (marking them with stamp)."""
    cdef int64_t k, count = 0
    for k in range(sent_off[s0], sent_off[s1]):
        if mark[toks[k]] != stamp:
            mark[toks[k]] = stamp
            count += 1
    return count


cdef int64_t _kl_lcs_union(const int32_t* x, int64_t nx, const int32_t* y, int64_t ny,
                           int32_t* table, int64_t* mark, int64_t stamp) noexcept nogil:
    """Add to the words marked with stamp those of the LCS of x and y that the package's
    backtracking finds; returns how many were new. table has room for (nx+1)*(ny+1)."""
    cdef int64_t i, j, w = ny + 1, added = 0
    cdef int32_t up, left
    for j in range(w):
        table[j] = 0
    for i in range(1, nx + 1):
        table[i * w] = 0
        for j in range(1, ny + 1):
            if x[i - 1] == y[j - 1]:
                table[i * w + j] = table[(i - 1) * w + j - 1] + 1
            else:
                up = table[(i - 1) * w + j]
                left = table[i * w + j - 1]
                table[i * w + j] = up if up > left else left
    i = nx
    j = ny
    while i > 0 and j > 0:
        if x[i - 1] == y[j - 1]:
            if mark[x[i - 1]] != stamp:
                mark[x[i - 1]] = stamp
                added += 1
            i -= 1
            j -= 1
        elif table[(i - 1) * w + j] > table[i * w + j - 1]:
            i -= 1
        else:
            j -= 1
    return added


def kilt_rouge_l(const int32_t[::1] toks, const int64_t[::1] sent_off,
                 const int64_t[::1] text_sent, const int64_t[::1] hyp,
                 const int64_t[::1] ref, int64_t vocab, double[::1] out):
    """ROUGE-L F of text ``hyp[p]`` against text ``ref[p]`` into ``out[p]``, 0.0 where either
    has no sentence. Text t's sentences are ``text_sent[t]:text_sent[t + 1]``, sentence s's
    word ids (all below ``vocab``) ``toks[sent_off[s]:sent_off[s + 1]]``."""
    cdef Py_ssize_t npairs = hyp.shape[0], nt = text_sent.shape[0] - 1, p
    cdef int64_t k, h, r, hs, rs, m, n, u, stamp = 0, need, cap = 0, longest = 0
    cdef int64_t* mark = NULL
    cdef int32_t* table = NULL
    cdef void* grown
    cdef double r_lcs, p_lcs
    if ref.shape[0] != npairs or out.shape[0] != npairs or nt < 0:
        raise InputError("one reference and one output per prediction are expected")
    if sent_off.shape[0] == 0 or text_sent[nt] >= sent_off.shape[0] \
            or sent_off[sent_off.shape[0] - 1] > toks.shape[0]:
        raise InputError("sentence offsets out of range")
    if sent_off[0] < 0 or text_sent[0] < 0:
        raise InputError("sentence offsets out of range")
    for k in range(1, sent_off.shape[0]):
        if sent_off[k] < sent_off[k - 1]:
            raise InputError("sentence offsets must not decrease")
    for k in range(1, text_sent.shape[0]):
        if text_sent[k] < text_sent[k - 1]:
            raise InputError("sentence offsets must not decrease")
    for k in range(toks.shape[0]):
        if toks[k] < 0 or toks[k] >= vocab:
            raise InputError("word ids out of range")
    for p in range(npairs):
        if hyp[p] < 0 or hyp[p] >= nt or ref[p] < 0 or ref[p] >= nt:
            raise InputError("text index out of range")
    mark = <int64_t*>malloc((vocab + 1) * sizeof(int64_t))
    if mark == NULL:
        raise MemoryError()
    try:
        with nogil:
            for k in range(vocab + 1):
                mark[k] = 0
            for p in range(npairs):
                h = hyp[p]
                r = ref[p]
                if text_sent[h] == text_sent[h + 1] or text_sent[r] == text_sent[r + 1]:
                    out[p] = 0.0
                    continue
                stamp += 1
                m = _kl_distinct(&toks[0], &sent_off[0], text_sent[r], text_sent[r + 1],
                                 mark, stamp)
                stamp += 1
                n = _kl_distinct(&toks[0], &sent_off[0], text_sent[h], text_sent[h + 1],
                                 mark, stamp)
                stamp += 1
                u = 0
                for rs in range(text_sent[r], text_sent[r + 1]):
                    for hs in range(text_sent[h], text_sent[h + 1]):
                        need = (sent_off[rs + 1] - sent_off[rs] + 1) \
                            * (sent_off[hs + 1] - sent_off[hs] + 1)
                        if need > cap:
                            grown = realloc(table, need * sizeof(int32_t))
                            if grown == NULL:
                                with gil:
                                    raise MemoryError()
                            table = <int32_t*>grown
                            cap = need
                        u += _kl_lcs_union(&toks[sent_off[rs]], sent_off[rs + 1] - sent_off[rs],
                                           &toks[sent_off[hs]], sent_off[hs + 1] - sent_off[hs],
                                           table, mark, stamp)
                r_lcs = <double>u / <double>m
                p_lcs = <double>u / <double>n
                out[p] = 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8))
    finally:
        free(mark)
        free(table)


# ---------------------------------------------------------------------------------------------
# kilt_rank and kilt_in_context are the per-question numbers of eval_retrieval.py's
# get_ranking_metrics, on ids the Python layer interned (one id per distinct provenance key
# string) and texts it normalized (code points of SQuAD's normalize_answer), so that the
# ranking runs without the GIL.
# ---------------------------------------------------------------------------------------------

cdef int _kl_check_csr(const int64_t[::1] off, Py_ssize_t count, Py_ssize_t size,
                       str what) except -1:
    """off has count + 1 entries, starts at 0 or more, never decreases and ends within size."""
    cdef Py_ssize_t k
    if off.shape[0] != count + 1:
        raise InputError(f"{what} offsets: one entry per item and one more are expected")
    if off[0] < 0 or off[count] > size:
        raise InputError(f"{what} offsets out of range")
    for k in range(count):
        if off[k + 1] < off[k]:
            raise InputError(f"{what} offsets must not decrease")
    return 0


cdef int _kl_check_ids(const int32_t[::1] ids, int64_t vocab, str what) except -1:
    cdef Py_ssize_t k
    for k in range(ids.shape[0]):
        if ids[k] < 0 or ids[k] >= vocab:
            raise InputError(f"{what} ids out of range")
    return 0


cdef inline bint _kl_has(const int32_t* s, int64_t n, int32_t x) noexcept nogil:
    """x is in the ascending s[0:n]."""
    cdef int64_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if s[mid] < x:
            lo = mid + 1
        elif s[mid] > x:
            hi = mid
        else:
            return True
    return False


def kilt_rank(const int32_t[::1] guess_ids, const int64_t[::1] guess_off,
              const int64_t[::1] out_off, const int32_t[::1] rp_ids, const int64_t[::1] rp_off,
              const int32_t[::1] set_ids, const int64_t[::1] set_off,
              const uint8_t[::1] has_prov, int64_t vocab, const int64_t[::1] ks,
              double[::1] rprec, int64_t[::1] n_sets, int64_t[:, ::1] hits):
    """The R-precision and the rank of evidence sets of each question q.

    Question q's guess ids (of the provenances with every rank key, repeats included) are
    ``guess_ids[guess_off[q]:guess_off[q + 1]]``, its gold outputs ``out_off[q]:out_off[q + 1]``;
    output o's complete provenance ids ``rp_ids[rp_off[o]:rp_off[o + 1]]`` (for R-precision),
    the ids of its evidence set ``set_ids[set_off[o]:set_off[o + 1]]`` (each provenance's join
    of the keys it has), ``has_prov[o]`` whether it has a provenance list at all. Writes the
    best R-precision over the outputs into ``rprec[q]``, the number of distinct evidence sets
    into ``n_sets[q]`` (0 where the guess has no id) and, for each ``ks[j]``, the count of
    complete sets among the first ``ks[j]`` ranks into ``hits[q, j]``."""
    cdef Py_ssize_t nq = guess_off.shape[0] - 1, nout, nk = ks.shape[0]
    cdef Py_ssize_t q, o, j, i, e, k, most_guess = 0, most_set = 0, most_out = 0
    cdef int64_t stamp = 0, ng, r, found_n, value_hits, n_entries, nsets, cap, kk, count, lo, hi
    cdef double value, best
    cdef bint found
    cdef int64_t* mark = NULL
    cdef int32_t* guess = NULL      # this question's distinct guess ids, in order
    cdef int32_t* members = NULL    # its distinct evidence sets, each ascending, one after another
    cdef int64_t* set_lo = NULL
    cdef int64_t* set_n = NULL
    cdef int64_t* left = NULL       # each set's members not yet ranked
    cdef int64_t* entries = NULL    # -1 a rank without a set, -2 a completed set, i set i's rank
    if nq < 0:
        raise InputError("guess offsets: one entry per question and one more are expected")
    _kl_check_csr(guess_off, nq, guess_ids.shape[0], "guess")
    if out_off.shape[0] != nq + 1:
        raise InputError("output offsets: one entry per question and one more are expected")
    nout = out_off[nq] if nq >= 0 else 0
    _kl_check_csr(out_off, nq, nout, "output")
    if out_off[0] != 0:
        raise InputError("output offsets must start at 0")
    _kl_check_csr(rp_off, nout, rp_ids.shape[0], "provenance")
    _kl_check_csr(set_off, nout, set_ids.shape[0], "evidence set")
    if has_prov.shape[0] != nout:
        raise InputError("one has_prov flag per output is expected")
    _kl_check_ids(guess_ids, vocab, "guess")
    _kl_check_ids(rp_ids, vocab, "provenance")
    _kl_check_ids(set_ids, vocab, "evidence set")
    if rprec.shape[0] != nq or n_sets.shape[0] != nq or hits.shape[0] != nq \
            or hits.shape[1] != nk:
        raise InputError("one output row per question and one hits column per k are expected")
    for j in range(nk):
        if ks[j] <= 0:
            raise InputError("every k must be positive")
    for q in range(nq):
        most_guess = max(most_guess, guess_off[q + 1] - guess_off[q])
        most_out = max(most_out, out_off[q + 1] - out_off[q])
        most_set = max(most_set, set_off[out_off[q + 1]] - set_off[out_off[q]])
    mark = <int64_t*>calloc(vocab + 1, sizeof(int64_t))
    guess = <int32_t*>malloc((most_guess + 1) * sizeof(int32_t))
    members = <int32_t*>malloc((most_set + 1) * sizeof(int32_t))
    set_lo = <int64_t*>malloc((most_out + 1) * sizeof(int64_t))
    set_n = <int64_t*>malloc((most_out + 1) * sizeof(int64_t))
    left = <int64_t*>malloc((most_out + 1) * sizeof(int64_t))
    entries = <int64_t*>malloc((most_guess + 2 * most_out + 1) * sizeof(int64_t))
    try:
        if mark == NULL or guess == NULL or members == NULL or set_lo == NULL or set_n == NULL \
                or left == NULL or entries == NULL:
            raise MemoryError()
        with nogil:
            for q in range(nq):
                # the guess ids, first occurrences only
                stamp += 1
                ng = 0
                for i in range(guess_off[q], guess_off[q + 1]):
                    if mark[guess_ids[i]] != stamp:
                        mark[guess_ids[i]] = stamp
                        guess[ng] = guess_ids[i]
                        ng += 1
                # R-precision: the best over the outputs of the share of the first r guesses
                # among the output's r distinct ids
                best = -1.0
                for o in range(out_off[q], out_off[q + 1]):
                    stamp += 1
                    r = 0
                    for i in range(rp_off[o], rp_off[o + 1]):
                        if mark[rp_ids[i]] != stamp:
                            mark[rp_ids[i]] = stamp
                            r += 1
                    value = 0.0
                    if r > 0:
                        value_hits = 0
                        for i in range(min(r, ng)):
                            if mark[guess[i]] == stamp:
                                value_hits += 1
                        value = <double>value_hits / <double>r
                    if best < 0.0 or value > best:
                        best = value
                rprec[q] = best if best > 0.0 else 0.0
                for j in range(nk):
                    hits[q, j] = 0
                n_sets[q] = 0
                if ng == 0:
                    continue
                # the distinct evidence sets, in output order
                nsets = 0
                cap = 0
                for o in range(out_off[q], out_off[q + 1]):
                    if not has_prov[o]:
                        continue
                    lo = cap
                    for i in range(set_off[o], set_off[o + 1]):
                        members[cap] = set_ids[i]
                        cap += 1
                    if cap - lo > 1:
                        qsort(&members[lo], cap - lo, sizeof(int32_t), _ak_cmp_int32)
                    hi = lo
                    for i in range(lo, cap):
                        if i == lo or members[i] != members[hi - 1]:
                            members[hi] = members[i]
                            hi += 1
                    found = False
                    for e in range(nsets):
                        if set_n[e] == hi - lo:
                            found = True
                            for i in range(hi - lo):
                                if members[set_lo[e] + i] != members[lo + i]:
                                    found = False
                                    break
                            if found:
                                break
                    if found:
                        cap = lo
                        continue
                    set_lo[nsets] = lo
                    set_n[nsets] = hi - lo
                    left[nsets] = hi - lo
                    nsets += 1
                    cap = hi
                n_sets[q] = nsets
                # each guess id ranks the sets holding it: a set's rank moves to the last of
                # its ids, and counts once all its ids are ranked
                n_entries = 0
                for i in range(ng):
                    found = False
                    for e in range(nsets):
                        if not _kl_has(&members[set_lo[e]], set_n[e], guess[i]):
                            continue
                        found = True
                        for k in range(n_entries):
                            if entries[k] == e:
                                for kk in range(k, n_entries - 1):
                                    entries[kk] = entries[kk + 1]
                                n_entries -= 1
                                break
                        left[e] -= 1
                        entries[n_entries] = -2 if left[e] == 0 else e
                        n_entries += 1
                    if not found:
                        entries[n_entries] = -1
                        n_entries += 1
                for j in range(nk):
                    count = 0
                    for k in range(min(ks[j], n_entries)):
                        if entries[k] == -2:
                            count += 1
                    hits[q, j] = count
    finally:
        free(mark)
        free(guess)
        free(members)
        free(set_lo)
        free(set_n)
        free(left)
        free(entries)


cdef inline bint _kl_contains(const int32_t* chars, const int64_t* off, int64_t text,
                              int64_t needle) noexcept nogil:
    """Normalized string needle occurs in normalized string text."""
    cdef int64_t nh = off[text + 1] - off[text], nx = off[needle + 1] - off[needle], i, j
    cdef const int32_t* h
    cdef const int32_t* x
    if nx == 0:
        return True
    h = chars + off[text]     # (chars is not empty: needle has a code point)
    x = chars + off[needle]
    for i in range(nh - nx + 1):
        if h[i] == x[0]:
            j = 1
            while j < nx and h[i + j] == x[j]:
                j += 1
            if j == nx:
                return True
    return False


cdef inline bint _kl_any_in(const int32_t* chars, const int64_t* off, int64_t text,
                            const int64_t* needles, int64_t a, int64_t b) noexcept nogil:
    cdef int64_t k
    for k in range(a, b):
        if _kl_contains(chars, off, text, needles[k]):
            return True
    return False


#: what kilt_in_context writes for "in none of the texts"
KILT_NEVER = 1 << 62


def kilt_in_context(const int32_t[::1] chars, const int64_t[::1] char_off,
                    const int64_t[::1] texts, const int64_t[::1] text_off,
                    const int64_t[::1] answers, const int64_t[::1] answer_off,
                    const int64_t[::1] titles, const int64_t[::1] title_off,
                    const int64_t[::1] source, int64_t[::1] first_answer,
                    int64_t[::1] first_title, int64_t[::1] first_both,
                    int64_t[::1] entity_in_input):
    """Where the answers and titles first occur in each question's guess texts.

    String s (normalized) is ``chars[char_off[s]:char_off[s + 1]]``. Question q's guess texts
    (those of its first max(ks) provenances, -1 for one without text) are
    ``texts[text_off[q]:text_off[q + 1]]``, its answers and titles the strings
    ``answers[answer_off[q]:answer_off[q + 1]]`` and ``titles[title_off[q]:title_off[q + 1]]``,
    its input the string ``source[q]``. Writes the rank of the first text holding an answer
    (a title; both), or ``KILT_NEVER``, into ``first_answer[q]`` (``first_title[q]``,
    ``first_both[q]``), and 1 or 0 into ``entity_in_input[q]`` as a title occurs in the
    input or not."""
    cdef Py_ssize_t nq = source.shape[0], q, i, k, nstr = char_off.shape[0] - 1
    cdef int64_t t, n, fa, ft, fb, never = (<int64_t>1) << 62
    cdef const int32_t* cp = NULL
    cdef const int64_t* ap = NULL
    cdef const int64_t* tp = NULL
    cdef bint a, b
    if nstr < 0:
        raise InputError("string offsets: one entry per string and one more are expected")
    _kl_check_csr(char_off, nstr, chars.shape[0], "string")
    _kl_check_csr(text_off, nq, texts.shape[0], "text")
    _kl_check_csr(answer_off, nq, answers.shape[0], "answer")
    _kl_check_csr(title_off, nq, titles.shape[0], "title")
    for k in range(texts.shape[0]):
        if texts[k] < -1 or texts[k] >= nstr:
            raise InputError("text string index out of range")
    for k in range(answers.shape[0]):
        if answers[k] < 0 or answers[k] >= nstr:
            raise InputError("answer string index out of range")
    for k in range(titles.shape[0]):
        if titles[k] < 0 or titles[k] >= nstr:
            raise InputError("title string index out of range")
    for k in range(nq):
        if source[k] < 0 or source[k] >= nstr:
            raise InputError("input string index out of range")
    if first_answer.shape[0] != nq or first_title.shape[0] != nq \
            or first_both.shape[0] != nq or entity_in_input.shape[0] != nq:
        raise InputError("one output per question is expected")
    if chars.shape[0]:
        cp = &chars[0]
    if answers.shape[0]:
        ap = &answers[0]
    if titles.shape[0]:
        tp = &titles[0]
    with nogil:
        for q in range(nq):
            fa = ft = fb = never
            n = text_off[q + 1] - text_off[q]
            for i in range(n):
                if fa != never and ft != never and fb != never:
                    break
                t = texts[text_off[q] + i]
                if t < 0:
                    continue
                a = _kl_any_in(cp, &char_off[0], t, ap, answer_off[q], answer_off[q + 1])
                b = _kl_any_in(cp, &char_off[0], t, tp, title_off[q], title_off[q + 1])
                if a and fa == never:
                    fa = i
                if b and ft == never:
                    ft = i
                if a and b and fb == never:
                    fb = i
            first_answer[q] = fa
            first_title[q] = ft
            first_both[q] = fb
            entity_in_input[q] = _kl_any_in(cp, &char_off[0], source[q], tp, title_off[q],
                                            title_off[q + 1])


# ---------------------------------------------------------------------------------------------
# kilt_scan reads a guess and a gold KILT file without the GIL where both are plainly valid:
# every line one JSON object that json.loads reads as written (see _json_scan_kernels.pxi's
# rules, and no key with an escape in a record, an output or a provenance, no such key twice),
# "output" a list of objects, "provenance" lists of objects, and every rank key value a
# string (with well-formed escapes), an integer, true, false or null. Anything else gives
# None: the caller then reads the files with json.loads, which also finds any error.
#
# It gives the fields the scores read as rows: a record's id, input and outputs, an
# output's answer and provenances, a provenance's key ids, title and text, each string as
# its kind and the byte span of its contents. A provenance's rank key values are made what
# str(value).strip() makes them and joined with "+" (those it has, in rank key order), the
# join interned: its id, and the same id again where it has every key (-1 if not).
# ---------------------------------------------------------------------------------------------

cdef enum:
    _KJ_MAX_DEPTH = 200
    _KJ_MAX_KEYS = 16
    _KJ_ABSENT = 0
    _KJ_PLAIN = 1      # a string without escapes
    _KJ_ESCAPED = 2    # a string with escapes
    _KJ_OTHER = 3      # any other value
    _KJ_REC_W = 8      # id kind/lo/hi, input kind/lo/hi, outputs lo/hi
    _KJ_OUT_W = 6      # answer kind/lo/hi, has provenance, provenances lo/hi
    _KJ_PROV_W = 8     # complete id, partial id, title kind/lo/hi, text kind/lo/hi


cdef struct _KjRows:
    int64_t* data
    int64_t count
    int64_t cap
    int64_t width


cdef struct _KjScan:
    const unsigned char* s
    Py_ssize_t n                     # the end of the current line
    _KjRows rec
    _KjRows out
    _KjRows prov
    unsigned char* val               # the current provenance's key values, then their join
    int64_t val_size
    int64_t val_cap
    _trec_Table* table
    const unsigned char* keys        # the rank keys' UTF-8 names, one after another
    const int64_t* key_off
    int nkeys
    int64_t key_lo[_KJ_MAX_KEYS]     # each rank key's value in val (-1: absent)
    int64_t key_hi[_KJ_MAX_KEYS]


cdef int64_t _kj_row(_KjRows* r) noexcept nogil:
    """A new zeroed row's index, -1 out of memory."""
    cdef int64_t want, k
    cdef void* grown
    if r.count == r.cap:
        want = r.cap * 2 if r.cap else 1024
        grown = realloc(r.data, want * r.width * sizeof(int64_t))
        if grown == NULL:
            return -1
        r.data = <int64_t*>grown
        r.cap = want
    for k in range(r.width):
        r.data[r.count * r.width + k] = 0
    r.count += 1
    return r.count - 1


cdef int _kj_reserve(_KjScan* k, int64_t more) noexcept nogil:
    """Room for more bytes in val, and 8 more (the id table reads words)."""
    cdef int64_t want
    cdef void* grown
    if k.val_size + more + 8 > k.val_cap:
        want = k.val_cap * 2
        if want < k.val_size + more + 64:
            want = k.val_size + more + 64
        grown = realloc(k.val, want)
        if grown == NULL:
            return -1
        k.val = <unsigned char*>grown
        k.val_cap = want
    return 0


cdef Py_ssize_t _kj_skip(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                         int depth) noexcept nogil:
    """The end of the valid JSON value at p, -1 if there is none."""
    cdef bint esc = False, obj
    cdef unsigned char c, close
    cdef Py_ssize_t q
    if p >= n:
        return -1
    c = s[p]
    if c == 34:
        return _ty_string(s, p, n, &esc)
    if c == 123 or c == 91:
        if depth >= _KJ_MAX_DEPTH:
            return -1
        obj = c == 123
        close = 125 if obj else 93
        p = _ty_ws(s, p + 1, n)
        if p < n and s[p] == close:
            return p + 1
        while True:
            if obj:
                if p >= n or s[p] != 34:
                    return -1
                p = _ty_string(s, p, n, &esc)
                if p < 0:
                    return -1
                p = _ty_ws(s, p, n)
                if p >= n or s[p] != 58:
                    return -1
                p = _ty_ws(s, p + 1, n)
            p = _kj_skip(s, p, n, depth + 1)
            if p < 0:
                return -1
            p = _ty_ws(s, p, n)
            if p >= n:
                return -1
            if s[p] == close:
                return p + 1
            if s[p] != 44:
                return -1
            p = _ty_ws(s, p + 1, n)
    if c == 45 or 48 <= c <= 57:
        q = _ty_number(s, p, n)
        if q < 0 or q - p > 4000:
            return -1
        return q
    if c == 116 and _ty_word(s, p, n, b"true", 4):
        return p + 4
    if c == 102 and _ty_word(s, p, n, b"false", 5):
        return p + 5
    if c == 110 and _ty_word(s, p, n, b"null", 4):
        return p + 4
    return -1


cdef Py_ssize_t _kj_key(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                        Py_ssize_t* klo, Py_ssize_t* khi) noexcept nogil:
    """The key at p (its contents at klo..khi) and its colon: where its value starts, -1 if
    there is no key or it has an escape (it may then name a field: left to json.loads)."""
    cdef bint esc = False
    cdef Py_ssize_t q
    if p >= n or s[p] != 34:
        return -1
    q = _ty_string(s, p, n, &esc)
    if q < 0 or esc:
        return -1
    klo[0] = p + 1
    khi[0] = q - 1
    q = _ty_ws(s, q, n)
    if q >= n or s[q] != 58:
        return -1
    return _ty_ws(s, q + 1, n)


cdef inline bint _kj_is(const unsigned char* s, Py_ssize_t lo, Py_ssize_t hi, const char* w,
                        Py_ssize_t k) noexcept nogil:
    return hi - lo == k and _ty_word(s, lo, hi, w, k)


cdef Py_ssize_t _kj_next(const unsigned char* s, Py_ssize_t p, Py_ssize_t n,
                         unsigned char close, bint* more) noexcept nogil:
    """After a member: past the comma (more) or the closing bracket, -1 if neither."""
    p = _ty_ws(s, p, n)
    if p >= n:
        return -1
    if s[p] == 44:
        more[0] = True
        return _ty_ws(s, p + 1, n)
    if s[p] == close:
        more[0] = False
        return p + 1
    return -1


cdef Py_ssize_t _kj_capture(const unsigned char* s, Py_ssize_t p, Py_ssize_t n, int depth,
                            int64_t* row) noexcept nogil:
    """The value at p as kind, lo, hi into row[0:3] (a string's contents, any other value's
    span); its end, or -1."""
    cdef bint esc = False
    cdef Py_ssize_t q
    if p < n and s[p] == 34:
        q = _ty_string(s, p, n, &esc)
        if q < 0:
            return -1
        row[0] = _KJ_ESCAPED if esc else _KJ_PLAIN
        row[1] = p + 1
        row[2] = q - 1
        return q
    q = _kj_skip(s, p, n, depth)
    if q < 0:
        return -1
    row[0] = _KJ_OTHER
    row[1] = p
    row[2] = q
    return q


cdef inline int _kj_hex(unsigned char c) noexcept nogil:
    if c <= 57:
        return c - 48
    if c <= 70:
        return c - 55
    return c - 87


cdef inline int64_t _kj_u4(const unsigned char* s, Py_ssize_t p) noexcept nogil:
    return (_kj_hex(s[p]) << 12) | (_kj_hex(s[p + 1]) << 8) | (_kj_hex(s[p + 2]) << 4) \
        | _kj_hex(s[p + 3])


cdef Py_ssize_t _kj_unescape(const unsigned char* s, Py_ssize_t lo, Py_ssize_t hi,
                             unsigned char* out) noexcept nogil:
    """The UTF-8 of the (validated) string contents s[lo:hi] into out (an escape never
    takes more bytes than it is written with); its length, -1 for a lone surrogate."""
    cdef Py_ssize_t p = lo, m = 0
    cdef int64_t cp, low
    cdef unsigned char c
    while p < hi:
        c = s[p]
        if c != 92:
            out[m] = c
            m += 1
            p += 1
            continue
        c = s[p + 1]
        if c != 117:
            out[m] = (34 if c == 34 else 92 if c == 92 else 47 if c == 47 else 8 if c == 98
                      else 12 if c == 102 else 10 if c == 110 else 13 if c == 114 else 9)
            m += 1
            p += 2
            continue
        cp = _kj_u4(s, p + 2)
        p += 6
        if 0xDC00 <= cp <= 0xDFFF:
            return -1
        if 0xD800 <= cp <= 0xDBFF:
            if p + 6 > hi or s[p] != 92 or s[p + 1] != 117:
                return -1
            low = _kj_u4(s, p + 2)
            if not (0xDC00 <= low <= 0xDFFF):
                return -1
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
            p += 6
        if cp < 0x80:
            out[m] = <unsigned char>cp
            m += 1
        elif cp < 0x800:
            out[m] = <unsigned char>(0xC0 | (cp >> 6))
            out[m + 1] = <unsigned char>(0x80 | (cp & 0x3F))
            m += 2
        elif cp < 0x10000:
            out[m] = <unsigned char>(0xE0 | (cp >> 12))
            out[m + 1] = <unsigned char>(0x80 | ((cp >> 6) & 0x3F))
            out[m + 2] = <unsigned char>(0x80 | (cp & 0x3F))
            m += 3
        else:
            out[m] = <unsigned char>(0xF0 | (cp >> 18))
            out[m + 1] = <unsigned char>(0x80 | ((cp >> 12) & 0x3F))
            out[m + 2] = <unsigned char>(0x80 | ((cp >> 6) & 0x3F))
            out[m + 3] = <unsigned char>(0x80 | (cp & 0x3F))
            m += 4
    return m


cdef inline bint _kj_space(int64_t cp) noexcept nogil:
    """str.isspace of one code point (what str.strip() strips)."""
    if cp < 128:
        return cp == 32 or 9 <= cp <= 13 or 28 <= cp <= 31
    return (cp == 0x85 or cp == 0xA0 or cp == 0x1680 or 0x2000 <= cp <= 0x200A
            or cp == 0x2028 or cp == 0x2029 or cp == 0x202F or cp == 0x205F or cp == 0x3000)


cdef inline int64_t _kj_decode(const unsigned char* u, Py_ssize_t p, Py_ssize_t* width) noexcept nogil:
    """The code point of the valid UTF-8 at u[p], its byte count in width."""
    cdef unsigned char c = u[p]
    if c < 0x80:
        width[0] = 1
        return c
    if c < 0xE0:
        width[0] = 2
        return ((c & 0x1F) << 6) | (u[p + 1] & 0x3F)
    if c < 0xF0:
        width[0] = 3
        return ((c & 0x0F) << 12) | ((u[p + 1] & 0x3F) << 6) | (u[p + 2] & 0x3F)
    width[0] = 4
    return ((c & 0x07) << 18) | ((u[p + 1] & 0x3F) << 12) | ((u[p + 2] & 0x3F) << 6) \
        | (u[p + 3] & 0x3F)


cdef Py_ssize_t _kj_key_value(_KjScan* k, Py_ssize_t p, int r) noexcept nogil:
    """The rank key value at p as str(value).strip() into val, its span in key_lo/hi[r];
    the value's end, -1 if it is none the scan takes."""
    cdef const unsigned char* s = k.s
    cdef Py_ssize_t n = k.n, q, m, lo, hi, w, back
    cdef bint esc = False
    cdef unsigned char c = s[p] if p < n else 0
    cdef const char* word = NULL
    if c == 34:
        q = _ty_string(s, p, n, &esc)
        if q < 0 or _kj_reserve(k, q - p) < 0:
            return -1
        if esc:
            m = _kj_unescape(s, p + 1, q - 1, k.val + k.val_size)
            if m < 0:
                return -1
        else:
            memcpy(k.val + k.val_size, s + p + 1, q - 1 - (p + 1))
            m = q - 1 - (p + 1)
        lo = k.val_size
        hi = lo + m
        while lo < hi:
            if not _kj_space(_kj_decode(k.val, lo, &w)):
                break
            lo += w
        while hi > lo:
            back = hi - 1
            while (k.val[back] & 0xC0) == 0x80:
                back -= 1
            if not _kj_space(_kj_decode(k.val, back, &w)):
                break
            hi = back
        k.key_lo[r] = lo
        k.key_hi[r] = hi
        k.val_size += m
        return q
    if c == 45 or 48 <= c <= 57:
        q = _ty_number(s, p, n)
        if q < 0 or q - p > 4000:
            return -1
        for m in range(p, q):
            if s[m] == 46 or s[m] == 101 or s[m] == 69:
                return -1    # (a float: its str is not its text)
        if _kj_reserve(k, q - p) < 0:
            return -1
        if q - p == 2 and s[p] == 45 and s[p + 1] == 48:
            k.val[k.val_size] = 48       # str(-0) is "0"
            m = 1
        else:
            memcpy(k.val + k.val_size, s + p, q - p)
            m = q - p
        k.key_lo[r] = k.val_size
        k.key_hi[r] = k.val_size + m
        k.val_size += m
        return q
    if c == 116 and _ty_word(s, p, n, b"true", 4):
        word = b"True"
        q = p + 4
    elif c == 102 and _ty_word(s, p, n, b"false", 5):
        word = b"False"
        q = p + 5
    elif c == 110 and _ty_word(s, p, n, b"null", 4):
        word = b"None"
        q = p + 4
    else:
        return -1
    m = 5 if c == 102 else 4
    if _kj_reserve(k, m) < 0:
        return -1
    memcpy(k.val + k.val_size, word, m)
    k.key_lo[r] = k.val_size
    k.key_hi[r] = k.val_size + m
    k.val_size += m
    return q


cdef int _kj_join(_KjScan* k, int64_t row) noexcept nogil:
    """The provenance's complete and partial ids from its key values."""
    cdef int r
    cdef bint complete = True, first = True
    cdef int64_t start, size, tid
    cdef const unsigned char* u
    cdef int64_t* out = &k.prov.data[row * _KJ_PROV_W]
    if _kj_reserve(k, k.val_size + k.nkeys) < 0:
        return -1
    start = k.val_size
    for r in range(k.nkeys):
        if k.key_lo[r] < 0:
            complete = False
            continue
        if not first:
            k.val[k.val_size] = 43    # +
            k.val_size += 1
        first = False
        memmove(k.val + k.val_size, k.val + k.key_lo[r], k.key_hi[r] - k.key_lo[r])
        k.val_size += k.key_hi[r] - k.key_lo[r]
    size = k.val_size - start
    if size < 0:    # never: it tells the compiler the key's size is not negative
        return -1
    u = k.val + start
    tid = _trec_table_intern(k.table, u, size, _trec_meta(_trec_hash(u, size), size),
                             _trec_key8(u, size, u + size + 8), False)
    if tid < 0:
        return -1
    out[0] = tid if complete else -1
    out[1] = tid
    return 0


cdef Py_ssize_t _kj_provenance(_KjScan* k, Py_ssize_t p) noexcept nogil:
    cdef const unsigned char* s = k.s
    cdef Py_ssize_t n = k.n, klo, khi, q, end
    cdef int64_t row
    cdef int r, seen = 0
    cdef bint more, matched
    if p >= n or s[p] != 123:
        return -1
    row = _kj_row(&k.prov)
    if row < 0:
        return -1
    k.val_size = 0
    for r in range(k.nkeys):
        k.key_lo[r] = -1
    p = _ty_ws(s, p + 1, n)
    if p < n and s[p] == 125:
        p += 1
    else:
        while True:
            p = _kj_key(s, p, n, &klo, &khi)
            if p < 0:
                return -1
            end = -1
            matched = False
            for r in range(k.nkeys):
                if khi - klo == k.key_off[r + 1] - k.key_off[r] and (
                        khi == klo or memcmp(s + klo, k.keys + k.key_off[r], khi - klo) == 0):
                    if k.key_lo[r] >= 0:
                        return -1    # (a key twice: json.loads keeps the last)
                    matched = True
                    end = _kj_key_value(k, p, r)
                    if end < 0:
                        return -1
            if _kj_is(s, klo, khi, b"title", 5) or _kj_is(s, klo, khi, b"text", 4):
                q = 2 if _kj_is(s, klo, khi, b"title", 5) else 5
                if seen & (1 << q):
                    return -1
                seen |= 1 << q
                end = _kj_capture(s, p, n, 6, &k.prov.data[row * _KJ_PROV_W + q])
            elif not matched:
                end = _kj_skip(s, p, n, 6)
            if end < 0:
                return -1
            p = _kj_next(s, end, n, 125, &more)
            if p < 0:
                return -1
            if not more:
                break
    if _kj_join(k, row) < 0:
        return -1
    return p


cdef Py_ssize_t _kj_list(_KjScan* k, Py_ssize_t p, int what) noexcept nogil:
    """A list of outputs (what 0) or of provenances (what 1): where it ends, -1 if it is
    not a list of objects the scan takes."""
    cdef const unsigned char* s = k.s
    cdef Py_ssize_t n = k.n
    cdef bint more
    if p >= n or s[p] != 91:
        return -1
    p = _ty_ws(s, p + 1, n)
    if p < n and s[p] == 93:
        return p + 1
    while True:
        p = _kj_output(k, p) if what == 0 else _kj_provenance(k, p)
        if p < 0:
            return -1
        p = _kj_next(s, p, n, 93, &more)
        if p < 0 or not more:
            return p


cdef Py_ssize_t _kj_output(_KjScan* k, Py_ssize_t p) noexcept nogil:
    cdef const unsigned char* s = k.s
    cdef Py_ssize_t n = k.n, klo, khi
    cdef int64_t row
    cdef int seen = 0
    cdef bint more
    if p >= n or s[p] != 123:
        return -1
    row = _kj_row(&k.out)
    if row < 0:
        return -1
    k.out.data[row * _KJ_OUT_W + 4] = k.prov.count
    k.out.data[row * _KJ_OUT_W + 5] = k.prov.count
    p = _ty_ws(s, p + 1, n)
    if p < n and s[p] == 125:
        return p + 1
    while True:
        p = _kj_key(s, p, n, &klo, &khi)
        if p < 0:
            return -1
        if _kj_is(s, klo, khi, b"answer", 6):
            if seen & 1:
                return -1
            seen |= 1
            p = _kj_capture(s, p, n, 4, &k.out.data[row * _KJ_OUT_W])
        elif _kj_is(s, klo, khi, b"provenance", 10):
            if seen & 2:
                return -1
            seen |= 2
            k.out.data[row * _KJ_OUT_W + 3] = 1
            p = _kj_list(k, p, 1)
            k.out.data[row * _KJ_OUT_W + 5] = k.prov.count
        else:
            p = _kj_skip(s, p, n, 4)
        if p < 0:
            return -1
        p = _kj_next(s, p, n, 125, &more)
        if p < 0 or not more:
            return p


cdef Py_ssize_t _kj_record(_KjScan* k, Py_ssize_t p) noexcept nogil:
    cdef const unsigned char* s = k.s
    cdef Py_ssize_t n = k.n, klo, khi
    cdef int64_t row
    cdef int seen = 0
    cdef bint more
    if p >= n or s[p] != 123:
        return -1
    row = _kj_row(&k.rec)
    if row < 0:
        return -1
    k.rec.data[row * _KJ_REC_W + 6] = k.out.count
    k.rec.data[row * _KJ_REC_W + 7] = k.out.count
    p = _ty_ws(s, p + 1, n)
    if p < n and s[p] == 125:
        return p + 1
    while True:
        p = _kj_key(s, p, n, &klo, &khi)
        if p < 0:
            return -1
        if _kj_is(s, klo, khi, b"id", 2) or _kj_is(s, klo, khi, b"input", 5):
            klo = 0 if khi - klo == 2 else 3
            if seen & (1 << klo):
                return -1
            seen |= 1 << klo
            p = _kj_capture(s, p, n, 2, &k.rec.data[row * _KJ_REC_W + klo])
        elif _kj_is(s, klo, khi, b"output", 6):
            if seen & 64:
                return -1
            seen |= 64
            p = _kj_list(k, p, 0)
            k.rec.data[row * _KJ_REC_W + 7] = k.out.count
        else:
            p = _kj_skip(s, p, n, 2)
        if p < 0:
            return -1
        p = _kj_next(s, p, n, 125, &more)
        if p < 0 or not more:
            return p


cdef int _kj_file(_KjScan* k, const unsigned char* s, Py_ssize_t size) noexcept nogil:
    """Every line of s[:size] (universal line ends; a last empty line dropped) as a record;
    -1 if one is not plainly valid."""
    cdef Py_ssize_t start = 0, end, p
    k.s = s
    while start < size:
        end = start
        while end < size and s[end] != 10 and s[end] != 13:
            end += 1
        k.n = end
        p = _kj_record(k, _ty_ws(s, start, end))
        if p < 0 or _ty_ws(s, p, end) != end:
            return -1
        if end < size and s[end] == 13 and end + 1 < size and s[end + 1] == 10:
            end += 1
        start = end + 1
    return 0


#: the columns of kilt_scan's record, output and provenance rows
KILT_SCAN_WIDTHS = (_KJ_REC_W, _KJ_OUT_W, _KJ_PROV_W)


cdef bytes _kj_bytes(_KjRows* r):
    if r.count == 0:
        return b""
    return (<char*>r.data)[:r.count * r.width * <int64_t>sizeof(int64_t)]


def kilt_scan(const unsigned char[::1] gold, const unsigned char[::1] guess, list rank_keys):
    """The records of a gold and a guess KILT file (their bytes) as rows, or None where
    either is not plainly valid (see above): ``(gold_rec, gold_out, gold_prov, guess_rec,
    guess_out, guess_prov, ids)``, the rows as the bytes of int64 arrays of
    ``KILT_SCAN_WIDTHS`` columns (offsets into the next level are absolute row indexes,
    string spans byte offsets into their file), and the number of distinct key joins."""
    cdef _KjScan k[2]
    cdef _trec_Table table
    cdef bytes names = b"".join([key.encode("utf-8", "surrogatepass") for key in rank_keys])
    cdef int64_t key_off[_KJ_MAX_KEYS + 1]
    cdef int i, j, failed = 0
    cdef const unsigned char* data[2]
    cdef Py_ssize_t size[2]
    if not rank_keys or len(rank_keys) > _KJ_MAX_KEYS:
        return None
    key_off[0] = 0
    for j, key in enumerate(rank_keys):
        key_off[j + 1] = key_off[j] + len(key.encode("utf-8", "surrogatepass"))
    data[0] = &gold[0] if gold.shape[0] else NULL
    data[1] = &guess[0] if guess.shape[0] else NULL
    size[0] = gold.shape[0]
    size[1] = guess.shape[0]
    if _trec_table_init(&table, 12) != 0:
        _trec_table_free(&table)
        raise MemoryError()
    for i in range(2):
        k[i].rec.data = k[i].out.data = k[i].prov.data = NULL
        k[i].rec.count = k[i].out.count = k[i].prov.count = 0
        k[i].rec.cap = k[i].out.cap = k[i].prov.cap = 0
        k[i].rec.width = _KJ_REC_W
        k[i].out.width = _KJ_OUT_W
        k[i].prov.width = _KJ_PROV_W
        k[i].val = NULL
        k[i].val_size = k[i].val_cap = 0
        k[i].table = &table
        k[i].keys = <const unsigned char*>(<const char*>names)
        k[i].key_off = key_off
        k[i].nkeys = len(rank_keys)
    try:
        with nogil:
            for i in range(2):
                if failed == 0 and size[i] and _kj_file(&k[i], data[i], size[i]) < 0:
                    failed = 1
        if failed:
            return None
        return (_kj_bytes(&k[0].rec), _kj_bytes(&k[0].out), _kj_bytes(&k[0].prov),
                _kj_bytes(&k[1].rec), _kj_bytes(&k[1].out), _kj_bytes(&k[1].prov),
                <int64_t>table.h.count)
    finally:
        for i in range(2):
            free(k[i].rec.data)
            free(k[i].out.data)
            free(k[i].prov.data)
            free(k[i].val)
        _trec_table_free(&table)


# ---------------------------------------------------------------------------------------------
# kilt_squad_spans normalizes the strings the scanner found (answers, titles, inputs and
# guess texts) as SQuAD's normalize_answer does, straight from their UTF-8 bytes in the file
# and without the GIL, so that threads scoring files run in parallel: decoding each string
# to a Python str first held the GIL for most of a call.
#
# s.lower() is Py_UNICODE_TOLOWER per code point except where CPython lowers into more than
# one code point (U+0130 only: "i" + U+0307, done here) or with context (U+03A3, final
# sigma). A string with U+03A3, a lone surrogate escape, or a span that is not the contents
# of a valid JSON string is left to the caller (which decodes it and uses
# answer_squad_chars, holding the GIL for it: Greek text with capital sigmas scores with the
# GIL held).
# ---------------------------------------------------------------------------------------------

cdef extern from "Python.h":
    Py_UCS4 _kl_tolower "Py_UNICODE_TOLOWER"(Py_UCS4 ch) noexcept nogil

#: kilt_squad_spans' state of a row: normalized, no string (an absent value), normalized and
#: blank (str.strip() makes it empty), left to the caller
cdef enum:
    _KL_SPAN_DONE = 0
    _KL_SPAN_ABSENT = 1
    _KL_SPAN_BLANK = 2
    _KL_SPAN_LEFT = 3

KILT_SPAN_DONE = _KL_SPAN_DONE
KILT_SPAN_ABSENT = _KL_SPAN_ABSENT
KILT_SPAN_BLANK = _KL_SPAN_BLANK
KILT_SPAN_LEFT = _KL_SPAN_LEFT


cdef Py_ssize_t _kl_prepare_utf8(const unsigned char* u, Py_ssize_t n, _AkWork* w,
                                 bint* blank) noexcept nogil:
    """Fill w.cp/w.cls (room for n) with s.lower() minus string.punctuation for the str s
    of the valid UTF-8 u[0:n] (room for n: no code point takes fewer bytes than it makes
    code points); their count, -1 where s.lower() needs context (left to CPython). blank:
    every code point of s is whitespace."""
    cdef Py_ssize_t p = 0, m = 0, width
    cdef int64_t c
    cdef Py_UCS4 low
    cdef uint8_t k
    blank[0] = True
    while p < n:
        c = u[p]
        if c < 128:
            p += 1
            k = _AK_CLASS[c]
            if k != 2:
                blank[0] = False
            if k == 1:
                continue
            if 65 <= c <= 90:
                c += 32
            w.cp[m] = <Py_UCS4>c
            w.cls[m] = k
            m += 1
            continue
        c = _kj_decode(u, p, &width)
        p += width
        if c == 0x3A3:
            return -1
        if not _ak_isspace(<Py_UCS4>c):
            blank[0] = False
        if c == 0x130:
            # str.lower makes it "i" and U+0307 (a combining mark: no word character); its
            # two UTF-8 bytes leave room for the two code points
            w.cp[m] = 105
            w.cls[m] = 4
            w.cp[m + 1] = 0x307
            w.cls[m + 1] = _ak_uclass(0x307)
            m += 2
            continue
        low = _kl_tolower(<Py_UCS4>c)
        if low < 128:
            k = _AK_CLASS[low]
            if k == 1:
                continue
        else:
            k = _ak_uclass(low)
        w.cp[m] = low
        w.cls[m] = k
        m += 1
    return m


def kilt_squad_spans(const unsigned char[::1] raw, const int64_t[:, ::1] rows, Py_ssize_t col,
                     int64_t[::1] off, int32_t[::1] chars, uint8_t[::1] state):
    """SQuAD's normalize_answer of the string of each row of ``rows`` (its kind, start and
    end at columns ``col``, ``col + 1``, ``col + 2``, as kilt_scan gives them for ``raw``).

    Row i's code points go to ``chars[off[i]:off[i + 1]]`` (``off[0]`` is given: where the
    first goes) and its ``KILT_SPAN_*`` state to ``state[i]``; a row in no state but DONE and
    BLANK gets no code point. ``chars`` needs room, from ``off[0]``, for the bytes of every
    row's string (no normalized string is longer)."""
    cdef Py_ssize_t nrows = rows.shape[0], i, j, t, nt, a, b, lo, hi, n = raw.shape[0]
    cdef Py_ssize_t m, size, most = 0
    cdef int64_t kind, need = 0, at
    cdef bint escaped, blank
    cdef const unsigned char* u
    cdef unsigned char* unescaped = NULL
    cdef _AkWork w
    if col < 0 or col + 3 > rows.shape[1]:
        raise InputError("the string columns are out of range")
    if off.shape[0] != nrows + 1 or state.shape[0] != nrows:
        raise InputError("one offset per row and one more, and one state per row, are expected")
    for i in range(nrows):
        kind = rows[i, col]
        lo = rows[i, col + 1]
        hi = rows[i, col + 2]
        if kind == _KJ_PLAIN or kind == _KJ_ESCAPED:
            if lo < 1 or hi < lo or hi >= n:
                raise InputError("string spans out of range")
            need += hi - lo
            most = max(most, hi - lo)
    if off[0] < 0 or off[0] > chars.shape[0] or need > chars.shape[0] - off[0]:
        raise InputError("chars has no room for the strings")
    w.cp = NULL
    w.cls = NULL
    w.spans = NULL
    w.utf8 = NULL
    w.cap = 0
    unescaped = <unsigned char*>malloc(most + 1)
    if unescaped == NULL:
        raise MemoryError()
    try:
        with nogil:
            _ak_work_reserve(&w, most + 1)
            at = off[0]
            for i in range(nrows):
                kind = rows[i, col]
                state[i] = _KL_SPAN_LEFT
                if kind == _KJ_ABSENT:
                    state[i] = _KL_SPAN_ABSENT
                elif kind == _KJ_PLAIN or kind == _KJ_ESCAPED:
                    lo = rows[i, col + 1]
                    hi = rows[i, col + 2]
                    escaped = False
                    # (the span must be exactly a valid JSON string's contents: then its
                    # UTF-8 and escapes are well-formed and the decoding below stays in it)
                    if raw[lo - 1] == 34 and raw[hi] == 34 \
                            and _ty_string(&raw[0], lo - 1, hi + 1, &escaped) == hi + 1:
                        u = &raw[lo]
                        size = hi - lo
                        if escaped:
                            size = _kj_unescape(&raw[0], lo, hi, unescaped)
                            u = unescaped
                        if size >= 0:
                            m = _kl_prepare_utf8(u, size, &w, &blank)
                            if m >= 0:
                                nt = _ak_squad_spans(&w, m)
                                for t in range(nt):
                                    if t:
                                        chars[at] = 32
                                        at += 1
                                    a = w.spans[2 * t]
                                    b = w.spans[2 * t + 1]
                                    for j in range(a, b):
                                        chars[at] = <int32_t>w.cp[j]
                                        at += 1
                                state[i] = _KL_SPAN_BLANK if blank else _KL_SPAN_DONE
                off[i + 1] = at
    finally:
        free(unescaped)
        _ak_work_free(&w)


# ---------------------------------------------------------------------------------------------
# kilt_answer_scores is eval_downstream.py's per-question accuracy, EM, F1 and ROUGE-L from
# the answers' bytes in the files, without the GIL: decoding each answer to a str, splitting
# it into ROUGE's words and interning them in a dict held the GIL for most of a call, so
# threads scoring files ran one at a time.
#
# An answer is compared as the str json.loads makes of it, str.strip()ped: a str compares
# equal exactly where its UTF-8 does, so accuracy and the word ids compare bytes. ROUGE's
# words (rouge 1.0.1, which KILT calls unnormalized) are the pieces of each non-empty part
# between "." cut at whitespace runs (str.split()), one empty word for a part that is all
# whitespace; "." never occurs inside a multi-byte UTF-8 sequence. EM and F1 take SQuAD's
# normalize_answer tokens (kilt_squad_spans' rules); a question with a string that rule
# leaves to CPython (capital sigma, a lone surrogate, a span that is not a JSON string's
# contents) is left to the caller.
# ---------------------------------------------------------------------------------------------

#: kilt_answer_scores' state of a question: scored, left to the caller, an answer without a
#: gold answer to compare with (the script fails on it; the caller reports it)
cdef enum:
    _KL_ANSWER_DONE = 0
    _KL_ANSWER_LEFT = 1
    _KL_ANSWER_NO_GOLD = 2

KILT_ANSWER_DONE = _KL_ANSWER_DONE
KILT_ANSWER_LEFT = _KL_ANSWER_LEFT
KILT_ANSWER_NO_GOLD = _KL_ANSWER_NO_GOLD


cdef struct _KlWords:
    # interned words: word w's bytes are bytes[off[w]:off[w + 1]]; slots is an open-addressed
    # table of word ids + 1 (0: empty), its size a power of two kept above twice the count
    unsigned char* bytes
    int64_t* off
    int32_t* slots
    int64_t* mark        # the LCS's stamps, one per word
    int64_t nbytes, cap_bytes, count, cap_words, nslots


cdef int _kl_words_init(_KlWords* v) noexcept nogil:
    v.nbytes = 0
    v.count = 0
    v.cap_bytes = 256
    v.cap_words = 64
    v.nslots = 256
    v.bytes = <unsigned char*>malloc(v.cap_bytes)
    v.off = <int64_t*>malloc((v.cap_words + 1) * sizeof(int64_t))
    v.mark = <int64_t*>calloc(v.cap_words, sizeof(int64_t))
    v.slots = <int32_t*>calloc(v.nslots, sizeof(int32_t))
    if v.bytes == NULL or v.off == NULL or v.mark == NULL or v.slots == NULL:
        return -1
    v.off[0] = 0
    return 0


cdef void _kl_words_free(_KlWords* v) noexcept nogil:
    free(v.bytes)
    free(v.off)
    free(v.slots)
    free(v.mark)


cdef inline uint64_t _kl_hash(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = <uint64_t>1469598103934665603
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ s[i]) * <uint64_t>1099511628211
    return h ^ (h >> 29)


cdef int32_t _kl_intern(_KlWords* v, const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """The id of the word s[0:n], a new one where it is new; -1 when memory runs out."""
    cdef uint64_t mask = <uint64_t>(v.nslots - 1)
    cdef uint64_t at = _kl_hash(s, n) & mask
    cdef int32_t w
    cdef int64_t k, cap
    cdef int32_t* slots
    cdef void* grown
    while v.slots[at]:
        w = v.slots[at] - 1
        if v.off[w + 1] - v.off[w] == n and memcmp(&v.bytes[v.off[w]], s, n) == 0:
            return w
        at = (at + 1) & mask
    if v.count >= 0x7FFFFFFE:
        return -1
    if v.nbytes + n > v.cap_bytes:
        cap = 2 * (v.nbytes + n)
        grown = realloc(v.bytes, cap)
        if grown == NULL:
            return -1
        v.bytes = <unsigned char*>grown
        v.cap_bytes = cap
    if v.count + 1 > v.cap_words:
        cap = 2 * v.cap_words
        grown = realloc(v.off, (cap + 1) * sizeof(int64_t))
        if grown == NULL:
            return -1
        v.off = <int64_t*>grown
        grown = realloc(v.mark, cap * sizeof(int64_t))
        if grown == NULL:
            return -1
        v.mark = <int64_t*>grown
        for k in range(v.cap_words, cap):
            v.mark[k] = 0
        v.cap_words = cap
    if n:
        memcpy(&v.bytes[v.nbytes], s, n)
    v.nbytes += n
    w = <int32_t>v.count
    v.count += 1
    v.off[v.count] = v.nbytes
    v.slots[at] = w + 1
    if 2 * v.count >= v.nslots:
        # (rehash into a table twice the size)
        slots = <int32_t*>calloc(2 * v.nslots, sizeof(int32_t))
        if slots == NULL:
            return -1
        mask = <uint64_t>(2 * v.nslots - 1)
        for k in range(v.count):
            at = _kl_hash(&v.bytes[v.off[k]], v.off[k + 1] - v.off[k]) & mask
            while slots[at]:
                at = (at + 1) & mask
            slots[at] = <int32_t>(k + 1)
        free(v.slots)
        v.slots = slots
        v.nslots *= 2
    return w


cdef struct _KlText:
    # one stripped answer: its UTF-8, its ROUGE word ids and sentence offsets, its SQuAD
    # tokens (code points and spans in work)
    const unsigned char* u
    Py_ssize_t n
    int32_t* toks        # room for n + 1
    int64_t* sent_off    # room for n + 2
    int64_t nsent
    _AkWork work
    Py_ssize_t ntok      # SQuAD tokens; -1: normalizing needs CPython


cdef inline Py_ssize_t _kl_strip(const unsigned char* u, Py_ssize_t n, Py_ssize_t* start) noexcept nogil:
    """str.strip() of the valid UTF-8 u[0:n]: its start in start, its length returned."""
    cdef Py_ssize_t a = 0, b = n, width, q
    cdef int64_t c
    while a < b:
        c = _kj_decode(u, a, &width)
        if not _kj_space(c):
            break
        a += width
    while b > a:
        q = b - 1
        while q > a and (u[q] & 0xC0) == 0x80:
            q -= 1
        c = _kj_decode(u, q, &width)
        if not _kj_space(c):
            break
        b = q
    start[0] = a
    return b - a


cdef int _kl_text(_KlText* t, const unsigned char* u, Py_ssize_t n, _KlWords* v) noexcept nogil:
    """Fill t from the stripped UTF-8 u[0:n] (its work has room for n + 1): ROUGE's
    sentences of word ids and SQuAD's tokens. -1 when memory runs out."""
    cdef Py_ssize_t p = 0, part_end, q, width, m, ws
    cdef int64_t c, nt = 0
    cdef int32_t w
    cdef bint blank
    t.u = u
    t.n = n
    t.nsent = 0
    t.sent_off[0] = 0
    while p < n:
        part_end = p
        while part_end < n and u[part_end] != 46:
            part_end += 1
        if part_end > p:
            # one sentence: the words of u[p:part_end] cut at whitespace runs
            q = p
            ws = -1
            while q <= part_end:
                if q < part_end:
                    c = _kj_decode(u, q, &width)
                    if not _kj_space(c):
                        if ws < 0:
                            ws = q
                        q += width
                        continue
                else:
                    width = 1
                if ws >= 0:
                    w = _kl_intern(v, &u[ws], q - ws)
                    if w < 0:
                        return -1
                    t.toks[nt] = w
                    nt += 1
                    ws = -1
                q += width
            if nt == t.sent_off[t.nsent]:
                # all whitespace: " ".join([]).split(" ") is one empty word
                w = _kl_intern(v, u, 0)
                if w < 0:
                    return -1
                t.toks[nt] = w
                nt += 1
            t.nsent += 1
            t.sent_off[t.nsent] = nt
        p = part_end + 1
    m = _kl_prepare_utf8(u, n, &t.work, &blank)
    t.ntok = -1 if m < 0 else _ak_squad_spans(&t.work, m)
    return 0


cdef inline bint _kl_token_eq(_KlText* x, Py_ssize_t i, _KlText* y, Py_ssize_t j) noexcept nogil:
    cdef Py_ssize_t a = x.work.spans[2 * i], b = x.work.spans[2 * i + 1]
    cdef Py_ssize_t c = y.work.spans[2 * j], d = y.work.spans[2 * j + 1]
    return b - a == d - c and memcmp(&x.work.cp[a], &y.work.cp[c], (b - a) * sizeof(Py_UCS4)) == 0


cdef double _kl_rouge(_KlText* h, _KlText* r, _KlWords* v, int64_t* stamp,
                      int32_t** table, int64_t* cap) noexcept nogil:
    """kilt_rouge_l's number for the texts h and r; -1.0 when memory runs out."""
    cdef int64_t m, n, u = 0, hs, rs, need, k
    cdef void* grown
    cdef double r_lcs, p_lcs
    if h.nsent == 0 or r.nsent == 0:
        return 0.0
    stamp[0] += 1
    m = 0
    for k in range(r.sent_off[r.nsent]):
        if v.mark[r.toks[k]] != stamp[0]:
            v.mark[r.toks[k]] = stamp[0]
            m += 1
    stamp[0] += 1
    n = 0
    for k in range(h.sent_off[h.nsent]):
        if v.mark[h.toks[k]] != stamp[0]:
            v.mark[h.toks[k]] = stamp[0]
            n += 1
    stamp[0] += 1
    for rs in range(r.nsent):
        for hs in range(h.nsent):
            need = (r.sent_off[rs + 1] - r.sent_off[rs] + 1) * (h.sent_off[hs + 1] - h.sent_off[hs] + 1)
            if need > cap[0]:
                grown = realloc(table[0], need * sizeof(int32_t))
                if grown == NULL:
                    return -1.0
                table[0] = <int32_t*>grown
                cap[0] = need
            u += _kl_lcs_union(&r.toks[r.sent_off[rs]], r.sent_off[rs + 1] - r.sent_off[rs],
                               &h.toks[h.sent_off[hs]], h.sent_off[hs + 1] - h.sent_off[hs],
                               table[0], v.mark, stamp[0])
    r_lcs = <double>u / <double>m
    p_lcs = <double>u / <double>n
    return 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8))


cdef Py_ssize_t _kl_span_utf8(const unsigned char* raw, Py_ssize_t lo, Py_ssize_t hi,
                              unsigned char* buf, const unsigned char** u) noexcept nogil:
    """The UTF-8 of the JSON string whose contents kilt_scan found at raw[lo:hi] (in u; buf,
    with room for hi - lo, holds it where it has escapes); its length, -1 where the span is
    not exactly a valid JSON string's contents or it has a lone surrogate."""
    cdef bint escaped = False
    if raw[lo - 1] != 34 or raw[hi] != 34 or _ty_string(raw, lo - 1, hi + 1, &escaped) != hi + 1:
        return -1
    if not escaped:
        u[0] = &raw[lo]
        return hi - lo
    u[0] = buf
    return _kj_unescape(raw, lo, hi, buf)


cdef int _kl_text_alloc(_KlText* t, Py_ssize_t n) noexcept nogil:
    t.toks = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    t.sent_off = <int64_t*>malloc((n + 2) * sizeof(int64_t))
    t.work.cp = NULL
    t.work.cls = NULL
    t.work.spans = NULL
    t.work.utf8 = NULL
    t.work.cap = 0
    return -1 if t.toks == NULL or t.sent_off == NULL else 0


cdef void _kl_text_free(_KlText* t) noexcept:
    free(t.toks)
    free(t.sent_off)
    _ak_work_free(&t.work)


cdef Py_ssize_t _kl_check_spans(const int64_t[:, ::1] rows, Py_ssize_t n, str what) except -2:
    """Rows (kind, lo, hi) whose string spans lie inside raw (n bytes); the longest span."""
    cdef Py_ssize_t i, most = 0
    if rows.shape[1] != 3:
        raise InputError(f"{what}: rows of kind, start and end are expected")
    for i in range(rows.shape[0]):
        if rows[i, 0] == _KJ_PLAIN or rows[i, 0] == _KJ_ESCAPED:
            if rows[i, 1] < 1 or rows[i, 2] < rows[i, 1] or rows[i, 2] >= n:
                raise InputError(f"{what}: string spans out of range")
            most = max(most, rows[i, 2] - rows[i, 1])
    return most


def kilt_answer_scores(const unsigned char[::1] guess_raw, const int64_t[:, ::1] answers,
                       const unsigned char[::1] gold_raw, const int64_t[:, ::1] gold_answers,
                       const int64_t[::1] gold_off, double[:, ::1] out, uint8_t[::1] state):
    """eval_downstream.py's accuracy, EM, F1 and ROUGE-L of each question, from the files'
    bytes: question i's answer is the string of row i of ``answers`` (kind, start, end as
    kilt_scan gives them for ``guess_raw``), its gold answers those of rows
    ``gold_off[i]:gold_off[i + 1]`` of ``gold_answers`` (for ``gold_raw``; absent ones are
    skipped). Its four numbers go to ``out[i]`` and its ``KILT_ANSWER_*`` state to
    ``state[i]``; ``out[i]`` is left as it is where the state is not DONE."""
    cdef Py_ssize_t nq = answers.shape[0], ng = gold_answers.shape[0], i, j, a, b, s
    cdef Py_ssize_t most, size, start, same, x, y
    cdef const unsigned char* u
    cdef unsigned char* guess_buf = NULL
    cdef unsigned char* gold_buf = NULL
    cdef uint8_t* used = NULL
    cdef int32_t* table = NULL
    cdef int64_t cap = 0, stamp = 0, kind
    cdef int failed = 0
    cdef bint left, found, eq
    cdef double acc, em, f1, rl, score, precision, recall
    cdef _KlWords v
    cdef _KlText h, r
    most = max(_kl_check_spans(answers, guess_raw.shape[0], "answers"),
               _kl_check_spans(gold_answers, gold_raw.shape[0], "gold answers"))
    if gold_off.shape[0] != nq + 1 or out.shape[0] != nq or out.shape[1] != 4 \
            or state.shape[0] != nq:
        raise InputError("one gold offset per question and one more, and one output row and "
                         "state per question, are expected")
    _kl_check_csr(gold_off, nq, ng, "gold answer")
    v.bytes = NULL
    v.off = NULL
    v.slots = NULL
    v.mark = NULL
    h.toks = NULL
    r.toks = NULL
    h.sent_off = NULL
    r.sent_off = NULL
    h.work.cp = NULL
    h.work.cls = NULL
    h.work.spans = NULL
    h.work.utf8 = NULL
    h.work.cap = 0
    r.work = h.work
    try:
        if _kl_words_init(&v) < 0 or _kl_text_alloc(&h, most) < 0 \
                or _kl_text_alloc(&r, most) < 0:
            raise MemoryError()
        _ak_work_reserve(&h.work, most + 1)
        _ak_work_reserve(&r.work, most + 1)
        guess_buf = <unsigned char*>malloc(most + 1)
        gold_buf = <unsigned char*>malloc(most + 1)
        used = <uint8_t*>malloc(most + 1)
        if guess_buf == NULL or gold_buf == NULL or used == NULL:
            raise MemoryError()
        with nogil:
            for i in range(nq):
                state[i] = _KL_ANSWER_LEFT
                kind = answers[i, 0]
                if kind != _KJ_PLAIN and kind != _KJ_ESCAPED:
                    continue
                size = _kl_span_utf8(&guess_raw[0], answers[i, 1], answers[i, 2], guess_buf, &u)
                if size < 0:
                    continue
                size = _kl_strip(u, size, &start)
                if size == 0:
                    out[i, 0] = out[i, 1] = out[i, 2] = out[i, 3] = 0.0
                    state[i] = _KL_ANSWER_DONE
                    continue
                if _kl_text(&h, &u[start], size, &v) < 0:
                    failed = 1
                    break
                if h.ntok < 0:
                    continue
                left = False
                found = False
                acc = em = f1 = 0.0
                rl = -1.0
                for j in range(gold_off[i], gold_off[i + 1]):
                    kind = gold_answers[j, 0]
                    if kind == _KJ_ABSENT:
                        continue
                    if kind != _KJ_PLAIN and kind != _KJ_ESCAPED:
                        left = True
                        break
                    size = _kl_span_utf8(&gold_raw[0], gold_answers[j, 1], gold_answers[j, 2],
                                         gold_buf, &u)
                    if size < 0:
                        left = True
                        break
                    size = _kl_strip(u, size, &start)
                    if size == 0:
                        continue
                    if _kl_text(&r, &u[start], size, &v) < 0:
                        failed = 1
                        break
                    if r.ntok < 0:
                        left = True
                        break
                    found = True
                    if r.n == h.n and memcmp(r.u, h.u, h.n) == 0:
                        acc = 1.0
                    # EM: the same tokens; F1: the multiset overlap of the tokens (matching
                    # each prediction token to an unused equal gold token counts it)
                    eq = h.ntok == r.ntok
                    for x in range(h.ntok):
                        if not eq:
                            break
                        eq = _kl_token_eq(&h, x, &r, x)
                    if eq:
                        em = 1.0
                    same = 0
                    for y in range(r.ntok):
                        used[y] = 0
                    for x in range(h.ntok):
                        for y in range(r.ntok):
                            if not used[y] and _kl_token_eq(&h, x, &r, y):
                                used[y] = 1
                                same += 1
                                break
                    if same:
                        precision = <double>same / <double>h.ntok
                        recall = <double>same / <double>r.ntok
                        score = (2.0 * precision * recall) / (precision + recall)
                        if score > f1:
                            f1 = score
                    score = _kl_rouge(&h, &r, &v, &stamp, &table, &cap)
                    if score < 0.0:
                        failed = 1
                        break
                    if score > rl:
                        rl = score
                if failed:
                    break
                if left:
                    continue
                if not found:
                    state[i] = _KL_ANSWER_NO_GOLD
                    continue
                out[i, 0] = acc
                out[i, 1] = em
                out[i, 2] = f1
                out[i, 3] = rl
                state[i] = _KL_ANSWER_DONE
        if failed:
            raise MemoryError()
    finally:
        _kl_words_free(&v)
        _kl_text_free(&h)
        _kl_text_free(&r)
        free(guess_buf)
        free(gold_buf)
        free(used)
        free(table)


# ---------------------------------------------------------------------------------------------
# kilt_align_ids pairs each gold question with its guess by id, as the script does with
# str(id).strip() keys, from the ids' bytes in the files and without the GIL: decoding every
# id to a Python str and aligning them with a dict held the GIL for most of what threads
# could not overlap. Two ids are the same key where their stripped, decoded texts are equal,
# which is where their UTF-8 (escapes decoded) is equal. An id escaping a lone surrogate has
# no UTF-8 and is left to the caller, as is a span that is not the contents of a valid JSON
# string.
# ---------------------------------------------------------------------------------------------

cdef enum:
    _KL_ALIGN_DONE = 0
    _KL_ALIGN_MISMATCH = 1
    _KL_ALIGN_LEFT = 2

KILT_ALIGN_DONE = _KL_ALIGN_DONE
KILT_ALIGN_MISMATCH = _KL_ALIGN_MISMATCH
KILT_ALIGN_LEFT = _KL_ALIGN_LEFT


cdef struct _KlKey:
    # one stripped id: its UTF-8 and the hash of it
    const unsigned char* u
    Py_ssize_t n
    uint64_t h


cdef int _kl_keys(const unsigned char* s, Py_ssize_t size, const int64_t[:, ::1] rows,
                  Py_ssize_t col, _KlKey* keys, unsigned char* scratch,
                  Py_ssize_t* used) noexcept nogil:
    """The stripped key of each row's id (kind, lo, hi at col) into keys, escaped ones
    decoded into scratch from used onwards; _KL_ALIGN_LEFT where one is left to CPython."""
    cdef Py_ssize_t r, lo, hi, m, start
    cdef const unsigned char* u
    cdef bint esc
    for r in range(rows.shape[0]):
        lo = rows[r, col + 1]
        hi = rows[r, col + 2]
        esc = False
        # (the span must be exactly one valid JSON string's contents: nothing else is read)
        if lo < 1 or hi < lo or hi >= size or s[lo - 1] != 34 \
                or _ty_string(s, lo - 1, size, &esc) != hi + 1:
            return _KL_ALIGN_LEFT
        if esc:
            m = _kj_unescape(s, lo, hi, scratch + used[0])
            if m < 0:
                return _KL_ALIGN_LEFT
            u = scratch + used[0]
            used[0] += m
        else:
            u = s + lo
            m = hi - lo
        m = _kl_strip(u, m, &start)
        keys[r].u = u + start
        keys[r].n = m
        keys[r].h = _kl_hash(u + start, m)
    return _KL_ALIGN_DONE


cdef inline bint _kl_same_key(_KlKey* a, _KlKey* b) noexcept nogil:
    return a.h == b.h and a.n == b.n and memcmp(a.u, b.u, a.n) == 0


def kilt_align_ids(const unsigned char[::1] gold_raw, const int64_t[:, ::1] gold_rows,
                   const unsigned char[::1] guess_raw, const int64_t[:, ::1] guess_rows,
                   Py_ssize_t col, int64_t[::1] aligned, int64_t[::1] table):
    """Each gold row's guess row by id, into ``aligned`` (gold order), the ids being the
    string spans (kind, lo, hi) at column ``col`` of the scanned rows and two ids the same
    where ``str.strip()`` of their decoded texts is. ``table`` (scratch, any contents) has a
    power-of-two length of at least twice the number of rows of both files.

    Returns ``KILT_ALIGN_DONE``; ``KILT_ALIGN_MISMATCH`` where a gold id or a guess id occurs
    twice or a gold id has no guess (the caller reports which, from the decoded ids; the
    contents of ``aligned`` are then unspecified); ``KILT_ALIGN_LEFT`` where an id is a lone
    surrogate escape or its span is not a valid JSON string's contents (the caller decodes
    and aligns them)."""
    cdef Py_ssize_t ng = gold_rows.shape[0], nq = guess_rows.shape[0]
    cdef Py_ssize_t nslots = table.shape[0], r, used = 0, room = 0, lo, hi
    cdef uint64_t mask, at
    cdef int64_t e
    cdef int state = _KL_ALIGN_DONE
    cdef _KlKey* keys = NULL
    cdef _KlKey* key
    cdef _KlKey* other
    cdef unsigned char* scratch = NULL
    cdef const unsigned char* gs = &gold_raw[0] if gold_raw.shape[0] else <const unsigned char*><const char*>b""
    cdef const unsigned char* qs = &guess_raw[0] if guess_raw.shape[0] else <const unsigned char*><const char*>b""
    if col < 0 or col + 3 > gold_rows.shape[1] or col + 3 > guess_rows.shape[1]:
        raise InputError("kilt_align_ids: the id columns are outside the rows")
    if aligned.shape[0] != ng:
        raise InputError("kilt_align_ids: aligned needs one entry per gold row")
    if nslots < 2 * (ng + nq) or nslots < 1 or (nslots & (nslots - 1)) != 0:
        raise InputError("kilt_align_ids: table needs a power-of-two length of at least "
                         "twice the rows")
    # room for the decoded escaped ids: never more bytes than their spans (a span outside
    # its file is declined before anything is decoded)
    for r in range(ng):
        lo, hi = gold_rows[r, col + 1], gold_rows[r, col + 2]
        if 0 <= lo <= hi <= gold_raw.shape[0]:
            room += hi - lo
    for r in range(nq):
        lo, hi = guess_rows[r, col + 1], guess_rows[r, col + 2]
        if 0 <= lo <= hi <= guess_raw.shape[0]:
            room += hi - lo
    keys = <_KlKey*>malloc((ng + nq + 1) * sizeof(_KlKey))
    scratch = <unsigned char*>malloc(room + 1)
    if keys == NULL or scratch == NULL:
        free(keys)
        free(scratch)
        raise MemoryError()
    mask = <uint64_t>(nslots - 1)
    try:
        with nogil:
            state = _kl_keys(gs, gold_raw.shape[0], gold_rows, col, keys, scratch, &used)
            if state == _KL_ALIGN_DONE:
                state = _kl_keys(qs, guess_raw.shape[0], guess_rows, col, keys + ng, scratch,
                                 &used)
            if state == _KL_ALIGN_DONE:
                # a slot holds g + 1 for gold row g, -(q + 1) for a guess row q that is no
                # gold id; 0 is empty
                for r in range(nslots):
                    table[r] = 0
                for r in range(ng):
                    key = &keys[r]
                    at = key.h & mask
                    while table[at] != 0:
                        if _kl_same_key(&keys[table[at] - 1], key):
                            state = _KL_ALIGN_MISMATCH   # (a gold id twice)
                            break
                        at = (at + 1) & mask
                    if state != _KL_ALIGN_DONE:
                        break
                    table[at] = r + 1
                    aligned[r] = -1
            if state == _KL_ALIGN_DONE:
                for r in range(nq):
                    key = &keys[ng + r]
                    at = key.h & mask
                    e = 0
                    while table[at] != 0:
                        e = table[at]
                        other = &keys[e - 1] if e > 0 else &keys[ng - e - 1]
                        if _kl_same_key(other, key):
                            break
                        e = 0
                        at = (at + 1) & mask
                    if e < 0 or (e > 0 and aligned[e - 1] >= 0):
                        state = _KL_ALIGN_MISMATCH   # (a guess id twice)
                        break
                    if e > 0:
                        aligned[e - 1] = r
                    else:
                        table[at] = -(r + 1)
            if state == _KL_ALIGN_DONE:
                for r in range(ng):
                    if aligned[r] < 0:
                        state = _KL_ALIGN_MISMATCH   # (a gold id without a guess)
                        break
    finally:
        free(keys)
        free(scratch)
    return state
