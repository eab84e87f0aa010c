# MS MARCO passage ranking part: one pass over a candidate file (qid <tab> pid <tab> rank) that
# fills each query's 1000 slots, finds a pid ranked twice and the first relevant slot of 1..10.

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.string cimport memcpy


cdef extern from *:
    """
    /* Eight bytes read as one little-endian word: where the byte order is not known to be
     * little-endian, the byte loop alone reads digits. */
    #if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) \
        || defined(_M_X64) || defined(_M_IX86) || defined(_M_ARM64)
    #define QAFAST_MM_WORDS 1
    #else
    #define QAFAST_MM_WORDS 0
    #endif
    """
    bint _MM_WORDS "QAFAST_MM_WORDS"


cdef extern from "_portable.h":
    int _mm_ctz64 "qafast_ctz64" (uint64_t x) noexcept nogil


cdef inline Py_ssize_t _mm_digits(const uint8_t* buf, Py_ssize_t i, Py_ssize_t n,
                                  int64_t* out) noexcept nogil:
    """The run of 1 to 18 ASCII digits at ``i`` as ``out``; the index after it, or -1."""
    cdef Py_ssize_t start = i
    cdef int64_t v = 0
    cdef uint64_t w, nondigit
    cdef int count
    if _MM_WORDS and n - i >= 8:
        # the first eight bytes at once (the digit chain v * 10 + d is what a line's time
        # goes to): which bytes are digits, then the leading digits' value, without a
        # branch a byte. Byte b ^ 0x30 is 0..9 exactly for '0'..'9'; bit 7 of
        # ((x & 0x7f) + 0x76) | x is set exactly where x >= 10, and no byte carries into
        # the next.
        memcpy(&w, buf + i, 8)
        w ^= 0x3030303030303030ULL
        nondigit = (((w & 0x7F7F7F7F7F7F7F7FULL) + 0x7676767676767676ULL) | w) \
            & 0x8080808080808080ULL
        count = 8 if nondigit == 0 else _mm_ctz64(nondigit) >> 3
        if count == 0:
            return -1
        if count < 8:
            w <<= 64 - 8 * count     # the digits to the top bytes, zeros before them
        # pairs, then quadruples, then the eight: the first byte is the leading digit
        w = ((w & 0x0F0F0F0F0F0F0F0FULL) * 2561) >> 8
        w = ((w & 0x00FF00FF00FF00FFULL) * 6553601) >> 16
        v = <int64_t>(((w & 0x0000FFFF0000FFFFULL) * 42949672960001ULL) >> 32)
        i += count
        if count < 8:
            out[0] = v
            return i
    while i < n and 48 <= buf[i] <= 57 and i - start < 18:
        v = v * 10 + (buf[i] - 48)
        i += 1
    if i == start or (i < n and 48 <= buf[i] <= 57):
        return -1
    out[0] = v
    return i


cdef inline bint _mm_relevant(int64_t pid, const int64_t* ref_pids, int64_t lo,
                              int64_t hi) noexcept nogil:
    cdef int64_t k
    for k in range(lo, hi):
        if ref_pids[k] == pid:
            return True
    return False


def msmarco_candidates(const uint8_t[::1] buf, const int64_t[::1] ref_qids,
                       const int64_t[::1] ref_off, const int64_t[::1] ref_pids,
                       int64_t[::1] group_qid, int64_t[::1] group_ref, double[::1] group_rr,
                       int64_t[::1] last_dup, int64_t[::1] info):
    """Read a candidate file's bytes: lines ``qid<TAB>pid<TAB>rank`` (1 to 18 ASCII digits
    each, anything ASCII after a third tab, ``\\n`` or ``\\r\\n`` ends) with each query's
    lines together.

    ``ref_qids`` (sorted, distinct) are the reference's queries, the relevant pids of
    ``ref_qids[r]`` are ``ref_pids[ref_off[r]:ref_off[r + 1]]``. Query ``g`` (in file order)
    gets ``group_qid[g]``, ``group_ref[g]`` (its reference row or -1) and ``group_rr[g]``
    (1 / its first relevant slot of 1..10, else 0; pid 0 fills an empty slot, rank 0 is slot
    1000). ``last_dup`` gets the 1000 slots of the last query with a pid other than 0 in two
    slots. ``info`` gets (queries, that query's index or -1, lines). Returns -1, or the
    0-based line the reader does not take (the caller reads the file the slow way); the
    caller checks that no query comes back.
    """
    cdef Py_ssize_t n = buf.shape[0], i = 0, j, groups = 0, line = 0
    cdef int64_t qid = 0, pid = 0, rank = 0, cur = 0, r, lo, hi, mid, slot, h, k
    cdef int64_t stamp = 0, dup_group = -1, bad = -1
    cdef bint dup, have = False
    cdef int64_t slots[1000]
    cdef int64_t written[1000]
    cdef int64_t keys[4096]
    cdef int64_t key_stamp[4096]
    cdef Py_ssize_t nref = ref_qids.shape[0]
    cdef const uint8_t* p = &buf[0] if n else NULL
    cdef const int64_t* rp = &ref_pids[0] if ref_pids.shape[0] else NULL
    cdef uint64_t mix = 0x9E3779B97F4A7C15ULL
    for k in range(1000):
        written[k] = -1
    for k in range(4096):
        key_stamp[k] = -1
    with nogil:
        while True:
            if i < n:
                j = _mm_digits(p, i, n, &qid)
                if j < 0 or j >= n or p[j] != 9:
                    bad = line
                    break
                j = _mm_digits(p, j + 1, n, &pid)
                if j < 0 or j >= n or p[j] != 9:
                    bad = line
                    break
                j = _mm_digits(p, j + 1, n, &rank)
                if j < 0 or rank > 1000:
                    bad = line
                    break
                if j < n and p[j] == 9:
                    while j < n and p[j] != 10 and p[j] != 13:
                        if p[j] >= 128:
                            bad = line
                            break
                        j += 1
                    if bad >= 0:
                        break
                if j < n and p[j] == 13:
                    j += 1
                    if j >= n or p[j] != 10:
                        bad = line
                        break
                if j < n and p[j] != 10:
                    bad = line
                    break
            if i >= n or not have or qid != cur:
                if have:
                    # the finished query: its first relevant slot of 1..10 and repeated pids
                    r = group_ref[groups]
                    group_rr[groups] = 0.0
                    if r >= 0:
                        for k in range(10):
                            if _mm_relevant(slots[k] if written[k] == stamp else 0, rp,
                                            ref_off[r], ref_off[r + 1]):
                                group_rr[groups] = 1.0 / (k + 1)
                                break
                    dup = False
                    for k in range(1000):
                        if written[k] == stamp and slots[k] != 0:
                            h = <int64_t>(((<uint64_t>slots[k]) * mix) >> 52) & 4095
                            while key_stamp[h] == stamp and keys[h] != slots[k]:
                                h = (h + 1) & 4095
                            if key_stamp[h] == stamp:
                                dup = True
                                break
                            key_stamp[h] = stamp
                            keys[h] = slots[k]
                    if dup:
                        dup_group = groups
                        for k in range(1000):
                            last_dup[k] = slots[k] if written[k] == stamp else 0
                    groups += 1
                    stamp += 1
                if i >= n:
                    break
                have = True
                cur = qid
                group_qid[groups] = qid
                lo = 0
                hi = nref
                while lo < hi:
                    mid = (lo + hi) // 2
                    if ref_qids[mid] < qid:
                        lo = mid + 1
                    else:
                        hi = mid
                group_ref[groups] = lo if lo < nref and ref_qids[lo] == qid else -1
            slot = 999 if rank == 0 else rank - 1
            slots[slot] = pid
            written[slot] = stamp
            line += 1
            i = j + 1
    if bad >= 0:
        return bad
    info[0] = groups
    info[1] = dup_group
    info[2] = line
    return -1
