# TREC reader part: the line splitter in C, which indexes a segment of text into bit masks of
# its spaces and newlines (SSE2, AVX2 or SWAR) and finds a line's fields from them, and the
# run lane's loop, which takes the common run line with all its state in locals (its Cython
# side is _trec_run_lane in _trec_scan.pxi). Apart from the byte helpers (_trec_bytes.pxi,
# whose C this uses and follows) because only the scan uses it.

cdef extern from *:
    """
    /* Line splitting without a branch per byte. The scan first indexes a segment of text
       (up to _trec_SEG bytes from a line start, plus a window's worth more): bit j of
       ws[j / 64] says whether byte j is C isspace (space \t \n \v \f \r), bit j of nl[j / 64]
       whether it is '\n'; bytes past the text count as neither. Then the 64-bit windows of
       both masks at a line's start give its fields: token starts are non-spaces after a space
       (the line start counts as one), token ends spaces after a non-space, all before the
       first newline. Consecutive lines then depend on each other only through a few loads
       and shifts of the masks, not through the text. With SSE2 (every x86-64) 16 bytes are
       indexed per step, elsewhere 8 (SWAR; byte by byte on a big-endian machine). */
    #define _trec_SEG 16384
    #define _trec_SEG_WORDS ((_trec_SEG + 128) / 64 + 2)

    #define _trec_ALWAYS_INLINE QAFAST_ALWAYS_INLINE
    #define _trec_ctz64(x) qafast_ctz64(x)

    #if QAFAST_SSE2 && !defined(_trec_NO_SSE2)
    static inline void _trec_mask64(const unsigned char *p, uint64_t *ws_out, uint64_t *nl_out) {
        const __m128i nine = _mm_set1_epi8(9), four = _mm_set1_epi8(4);
        const __m128i space = _mm_set1_epi8(32), newline = _mm_set1_epi8(10);
        const __m128i zero = _mm_setzero_si128();
        uint64_t ws = 0, nl = 0;
        int i;
        for (i = 0; i < 4; i++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * i));
            /* c == 32 or (unsigned char)(c - 9) <= 4 */
            __m128i w = _mm_or_si128(
                _mm_cmpeq_epi8(_mm_subs_epu8(_mm_sub_epi8(v, nine), four), zero),
                _mm_cmpeq_epi8(v, space));
            ws |= (uint64_t)(uint32_t)_mm_movemask_epi8(w) << (16 * i);
            nl |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)) << (16 * i);
        }
        *ws_out = ws;
        *nl_out = nl;
    }
    #elif _trec_LITTLE_ENDIAN
    /* SWAR: 8 bytes per step, each byte's flag in its high bit, the 8 flags then gathered
       into 8 bits by one multiply */
    static inline uint64_t _trec_gather8(uint64_t high) {
        return (((high >> 7) & 0x0101010101010101ULL) * 0x0102040810204080ULL) >> 56;
    }
    static inline uint64_t _trec_eq8(uint64_t x, uint64_t c) {    /* high bit: byte == c */
        const uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL;
        uint64_t t = x ^ (c * 0x0101010101010101ULL);
        return ~(((t & low7) + low7) | t) & 0x8080808080808080ULL;
    }
    static inline void _trec_mask64(const unsigned char *p, uint64_t *ws_out, uint64_t *nl_out) {
        const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
        uint64_t ws = 0, nl = 0, x, a, ctl;
        int i;
        for (i = 0; i < 8; i++) {
            memcpy(&x, p + 8 * i, 8);
            a = x | high;                      /* per byte 128 + (c & 127): no borrows */
            ctl = ((a - 9 * ones) & ~(a - 14 * ones) & ~x) & high;    /* 9 <= c <= 13 */
            ws |= _trec_gather8(ctl | _trec_eq8(x, 32)) << (8 * i);
            nl |= _trec_gather8(_trec_eq8(x, 10)) << (8 * i);
        }
        *ws_out = ws;
        *nl_out = nl;
    }
    #else
    static inline void _trec_mask64(const unsigned char *p, uint64_t *ws_out, uint64_t *nl_out) {
        uint64_t ws = 0, nl = 0;
        int i;
        for (i = 0; i < 64; i++) {
            unsigned char c = p[i];
            ws |= (uint64_t)(c == 32 || (unsigned char)(c - 9) <= 4) << i;
            nl |= (uint64_t)(c == 10) << i;
        }
        *ws_out = ws;
        *nl_out = nl;
    }
    #endif

    #if QAFAST_HAVE_CLONES && QAFAST_SSE2 && !defined(_trec_NO_SSE2)
    #define _trec_AVX2_INDEX 1
    /* _trec_mask64 over whole 64-byte words with AVX2, 32 bytes at a time. The six C isspace
       bytes (9-13 and 32) have six different low nibbles, so a byte is one of them exactly
       when the table entry of its low nibble equals it. The other entries are 0, which no
       byte with such a low nibble is, and pshufb gives 0 for the bytes of 128 and above. */
    QAFAST_TARGET_AVX2
    static void _trec_index64_avx2(const unsigned char *p, Py_ssize_t words, uint64_t *ws,
                                   uint64_t *nl) {
        const __m256i table = _mm256_setr_epi8(
            32, 0, 0, 0, 0, 0, 0, 0, 0, 9, 10, 11, 12, 13, 0, 0,
            32, 0, 0, 0, 0, 0, 0, 0, 0, 9, 10, 11, 12, 13, 0, 0);
        const __m256i newline = _mm256_set1_epi8(10);
        Py_ssize_t k;
        for (k = 0; k < words; k++) {
            __m256i lo = _mm256_loadu_si256((const __m256i *)(p + 64 * k));
            __m256i hi = _mm256_loadu_si256((const __m256i *)(p + 64 * k + 32));
            __m256i lo_ws = _mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, lo), lo);
            __m256i hi_ws = _mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, hi), hi);
            ws[k] = (uint64_t)(uint32_t)_mm256_movemask_epi8(lo_ws)
                    | ((uint64_t)(uint32_t)_mm256_movemask_epi8(hi_ws) << 32);
            nl[k] = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, newline))
                    | ((uint64_t)(uint32_t)_mm256_movemask_epi8(
                           _mm256_cmpeq_epi8(hi, newline)) << 32);
        }
    }
    #else
    #define _trec_AVX2_INDEX 0
    #endif

    /* Index p[0:n] (n <= _trec_SEG + 128) into ws and nl, with a zero guard word after. */
    static void _trec_index(const unsigned char *p, Py_ssize_t n, uint64_t *ws, uint64_t *nl) {
        unsigned char tail[64];
        Py_ssize_t i = 0, k = 0;
    #if _trec_AVX2_INDEX
        if (qafast_cpu_has_avx2()) {
            k = n / 64;
            i = 64 * k;
            _trec_index64_avx2(p, k, ws, nl);
        }
    #endif
        for (; i + 64 <= n; i += 64, k++)
            _trec_mask64(p + i, &ws[k], &nl[k]);
        if (i < n) {
            memset(tail, 0, 64);               /* NUL: neither space nor newline */
            memcpy(tail, p + i, (size_t)(n - i));
            _trec_mask64(tail, &ws[k], &nl[k]);
            k++;
        }
        ws[k] = 0;
        nl[k] = 0;
        ws[k + 1] = 0;
        nl[k + 1] = 0;
    }

    /* The first `need` fields of the line at byte `pos` of an indexed segment starting at
       base, if they end within 64 bytes (before the newline, if there is one there). Sets
       *eol to the newline, or NULL when there is none within the 64 bytes. Returns 0 when
       the line is left to the byte-wise loop (fewer fields in reach: blank, short, long).
       Fields whose bit is set in `unused` are counted but not located (tok and tlen keep
       what they held): a run's "Q0" and rank, a qrels' iteration, which nothing reads.
       Called with constant `need` and `unused`, so that the loop over the fields unrolls
       and the skipped fields cost two instructions each. */
    static _trec_ALWAYS_INLINE int _trec_fields_at(
            const uint64_t *wsm, const uint64_t *nlm, Py_ssize_t pos,
            const unsigned char *base, int need, unsigned unused, const unsigned char **tok,
            Py_ssize_t *tlen, const unsigned char **eol) {
        Py_ssize_t k = pos >> 6, s, e;
        unsigned sh = (unsigned)(pos & 63);
        const unsigned char *p = base + pos;
        /* the 64 bits from bit pos on; (x << 1) << (63 - sh) is x << (64 - sh), 0 for sh 0 */
        uint64_t ws = (wsm[k] >> sh) | ((wsm[k + 1] << 1) << (63 - sh));
        uint64_t nl = (nlm[k] >> sh) | ((nlm[k + 1] << 1) << (63 - sh));
        uint64_t word = ~ws, starts, ends;
        int i;
        starts = word & ~(word << 1);
        ends = ws & (word << 1);
        if (nl != 0) {
            uint64_t first = nl & (0 - nl);
            starts &= first - 1;               /* before the newline */
            ends &= first | (first - 1);       /* up to and including it */
            *eol = p + _trec_ctz64(nl);
        } else {
            *eol = NULL;
        }
        for (i = 0; i < need; i++) {
            if (ends == 0)
                return 0;
            if (!((unused >> i) & 1u)) {
                s = _trec_ctz64(starts);
                e = _trec_ctz64(ends);
                tok[i] = p + s;
                tlen[i] = e - s;
            }
            starts &= starts - 1;
            ends &= ends - 1;
        }
        return 1;
    }

    /* A run lane's state (_trec_run_lane), in plain C types. */
    typedef struct {
        const unsigned char *seg, *seg_end;    /* the indexed segment; in and out */
        uint64_t *ws_mask, *nl_mask;
        const unsigned char *qref;             /* the query id of the rows before */
        Py_ssize_t qn;
        int32_t qi;
        double *scores;
        int64_t *hashes, *tiekeys, *offsets;   /* tiekeys may be NULL */
        int32_t *qidx;
        unsigned char *blob;
        uint64_t row, stop, blob_len;          /* row and blob_len: in and out */
        const unsigned char *tag;              /* out: the last row's run tag */
        Py_ssize_t tag_len;
    } _trec_LaneState;


    /* The rows of the lane from p on (see _trec_run_lane): stores each exactly as the
       general loop would and returns where it stopped. Lines starting in the last 80 bytes
       of the text are left to the general loop: a line of the lane ends within 64 bytes of
       its start, and its widest loads (the score's 8 bytes, the document id's 16, from
       within the line) then end within 79, inside the text without a check of their own.
       Built for x86-64-v3 as well, where clones are built: on the 100M-line benchmark's run,
       callgrind counted 321 instructions a line for the lane instead of 361. */
    QAFAST_CLONES_V3
    static const unsigned char *_trec_lane_rows(_trec_LaneState *st, const unsigned char *p,
                                                const unsigned char *end) {
        const unsigned char *seg = st->seg, *seg_end = st->seg_end, *safe, *lim;
        uint64_t *wsm = st->ws_mask, *nlm = st->nl_mask;
        const unsigned char *qref = st->qref;
        Py_ssize_t qn = st->qn, left;
        int32_t qi = st->qi;
        double *scores = st->scores;
        int64_t *hashes = st->hashes, *tiekeys = st->tiekeys, *offsets = st->offsets;
        int32_t *qidx = st->qidx;
        unsigned char *blob = st->blob;
        uint64_t row = st->row, stop = st->stop, blen = st->blob_len, m;
        const unsigned char *tok[6], *eol, *tag = st->tag;
        Py_ssize_t tlen[6], tag_len = st->tag_len;
        int frac;
        double v;
        if (end - p <= 80 || tiekeys == NULL)
            return p;
        safe = end - 80;
        while (p < safe) {
            if (p >= seg_end) {
                left = end - p;
                seg = p;
                seg_end = p + (left < _trec_SEG ? left : _trec_SEG);
                _trec_index(p, left < _trec_SEG + 128 ? left : _trec_SEG + 128, wsm, nlm);
            }
            lim = seg_end < safe ? seg_end : safe;
            while (p < lim) {
                if (row >= stop)
                    goto done;
                /* a comment's first token starts with '#', which no query id of the run
                   can */
                if (!_trec_fields_at(wsm, nlm, p - seg, seg, 6, 0xAu, tok, tlen, &eol)
                        || eol == NULL || tlen[0] != qn || !_trec_equal(tok[0], qref, qn))
                    goto done;
                if (_trec_lane_digits(tok[4], tlen[4], &m, &frac))
                    /* as _trec_fast_float converts these digits: one exact division at most */
                    v = frac ? (double)m / _trec_POW10[frac] : (double)m;
                else if (!_trec_fast_float(tok[4], tlen[4], &v))
                    goto done;
                if (!_trec_is_ascii(tok[5], tlen[5]))
                    goto done;
                /* tok[2] + 16 for the text's end: those bytes are in it (see above) */
                if (_trec_take_doc(tok[2], tlen[2], tok[2] + 16, blob + blen,
                                   tiekeys + row) != 1
                        && !_trec_utf8_ok(tok[2], tlen[2]))
                    goto done;
                hashes[row] = (int64_t)_trec_hash(tok[2], tlen[2]);
                scores[row] = v;
                blen += (uint64_t)tlen[2];
                offsets[row + 1] = (int64_t)blen;
                qidx[row] = qi;
                tag = tok[5];
                tag_len = tlen[5];
                row++;
                p = eol + 1;
            }
        }
    done:
        st->seg = seg;
        st->seg_end = seg_end;
        st->row = row;
        st->blob_len = blen;
        st->tag = tag;
        st->tag_len = tag_len;
        return p;
    }
    """
    enum: _trec_SEG
    enum: _trec_SEG_WORDS
    void _trec_index(const unsigned char *p, Py_ssize_t n, uint64_t *ws,
                     uint64_t *nl) noexcept nogil
    int _trec_fields_at(const uint64_t *wsm, const uint64_t *nlm, Py_ssize_t pos,
                        const unsigned char *base, int need, unsigned unused,
                        const unsigned char **tok, Py_ssize_t *tlen,
                        const unsigned char **eol) noexcept nogil
    ctypedef struct _trec_LaneState:
        const unsigned char *seg
        const unsigned char *seg_end
        uint64_t *ws_mask
        uint64_t *nl_mask
        const unsigned char *qref
        Py_ssize_t qn
        int32_t qi
        double *scores
        int64_t *hashes
        int64_t *tiekeys
        int64_t *offsets
        int32_t *qidx
        unsigned char *blob
        uint64_t row
        uint64_t stop
        uint64_t blob_len
        const unsigned char *tag
        Py_ssize_t tag_len
    const unsigned char *_trec_lane_rows(_trec_LaneState *st, const unsigned char *p,
                                         const unsigned char *end) noexcept nogil
