# TREC run / qrels text parsing, included by _kernels.pyx (one compiled module).
#
# qafast.io.trec reads the text in blocks of whole lines and runs two stages per block, each
# without the GIL except to make Python objects:
#   1. scan (`_trec_Parser.scan`): split lines into fields (from bit masks of the text's
#      spaces and newlines, 64 bytes at a time), convert scores or grades, hash the document
#      ids, and append scores/grades and line numbers to growing arrays;
#   2. intern (`_trec_Parser.intern`): map query and document ids to int32 indexes in
#      first-seen order, with hash tables over the ids' bytes, then make one Python `str`
#      per new distinct id.
# The stages own disjoint state, so one thread can scan block k + 1 while another interns
# block k. Stage 2 is bound by memory latency (a run's document table outgrows the caches),
# so it prefetches table slots well ahead of each lookup.
#
# Without interning documents (`intern_docs=False`) stage 1 keeps each line's document hash
# in a column, and stage 2 interns only the query ids, checks each document id's UTF-8,
# computes its tie key and appends its bytes to one blob: no table, no Python object.
#
# Scores: a decimal with at most 19 significant digits, a mantissa up to 2**53 and a power of
# ten within +-22 is converted exactly (Clinger's fast path: one correctly rounded multiply or
# divide of two exact doubles). Every other score token is queued and converted after the
# block by CPython's `PyOS_string_to_double` (David Gay's correctly rounded strtod, which
# needs the GIL). Either way the result is the double `float(token)`.
#
# Every module-level name of the reader's parts starts with `_trec` (they are textually
# included).

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy, memmove
from cpython.buffer cimport PyBUF_FORMAT
from cpython.exc cimport PyErr_Clear, PyErr_ExceptionMatches, PyErr_Occurred
from cpython.ref cimport PyObject
from cpython.unicode cimport PyUnicode_DecodeUTF8

cdef object _trec_numpy = None


cdef object _trec_np():
    # numpy on first use: the command line measures small TREC files without it (importing
    # numpy was most of the time `qafast trec` took on a 45,000-line run)
    global _trec_numpy
    if _trec_numpy is None:
        import numpy
        _trec_numpy = numpy
    return _trec_numpy

cdef extern from "Python.h":
    double _trec_PyOS_string_to_double "PyOS_string_to_double" (
        const char *s, char **endptr, PyObject *overflow_exception) noexcept

# The reader's parts, each after those it needs: the byte helpers (C) and the error
# codes; the line splitter and the run lane (C); the id tables; stage 1; stage 2. This
# file keeps the objects qafast.io.trec uses.
include "_trec_bytes.pxi"
include "_trec_lines.pxi"
include "_trec_ids.pxi"
include "_trec_scan.pxi"
include "_trec_intern.pxi"


# ---------------------------------------------------------------------------------------
# zero-copy owner of a malloc'd result array (numpy wraps it with np.frombuffer)

cdef class _trec_Array:
    cdef void *ptr
    cdef size_t mapsize              # what _trec_mem_resize allocated
    cdef Py_ssize_t nbytes
    cdef Py_ssize_t itemsize
    cdef bytes fmt
    cdef Py_ssize_t shape[1]
    cdef Py_ssize_t strides[1]

    def __dealloc__(self):
        _trec_mem_free(self.ptr, self.mapsize)

    def __getbuffer__(self, Py_buffer *view, int flags):
        self.shape[0] = self.nbytes // self.itemsize
        self.strides[0] = self.itemsize
        view.buf = self.ptr
        view.obj = self
        view.len = self.nbytes
        view.readonly = 0
        view.itemsize = self.itemsize
        view.format = NULL
        if flags & PyBUF_FORMAT:
            view.format = <char *>self.fmt
        view.ndim = 1
        view.shape = self.shape
        view.strides = self.strides
        view.suboffsets = NULL
        view.internal = NULL

    def __releasebuffer__(self, Py_buffer *view):
        pass


cdef object _trec_wrap(void *ptr, uint64_t cap, uint64_t n, Py_ssize_t itemsize, bytes fmt,
                       str dtype, bint as_numpy=True):
    # Hand an array from _trec_mem_resize (cap items) over without copying: to numpy, or
    # as the owner itself (a buffer of format ``fmt``). The pages past n items were never
    # written, so they take no memory.
    cdef _trec_Array a = _trec_Array.__new__(_trec_Array)
    a.ptr = ptr
    a.mapsize = cap * itemsize
    a.nbytes = <Py_ssize_t>(n * itemsize)
    a.itemsize = itemsize
    a.fmt = fmt
    return _trec_np().frombuffer(a, dtype=dtype) if as_numpy else a


# ---------------------------------------------------------------------------------------
# the objects used by qafast.io.trec

_trec_FIELDS_RUN = "qid iter docno rank score run_id"
_trec_FIELDS_QRELS = "qid iter docno rel"


cdef str _trec_message(int code, bint is_run, int nfields, const unsigned char *buf,
                       Py_ssize_t off, Py_ssize_t tlen):
    cdef bytes raw = b""
    cdef str tok
    if off >= 0:
        raw = (<const char *>buf)[off:off + min(tlen, 200)]
    tok = repr(raw.decode("utf-8", "backslashreplace"))
    if tlen > 200:
        tok += "..."
    if code == _trec_E_FIELDS:
        return (f"expected at least {6 if is_run else 4} whitespace-separated fields "
                f"({_trec_FIELDS_RUN if is_run else _trec_FIELDS_QRELS}), found {nfields}")
    if code == _trec_E_SCORE:
        return f"score (5th field) {tok} is not a number"
    if code == _trec_E_NAN:
        return f"score (5th field) {tok} is NaN; expected a number that can be ranked"
    if code == _trec_E_GRADE:
        return f"relevance grade (4th field) {tok} is not an integer"
    if code == _trec_E_GRADE_RANGE:
        return (f"relevance grade (4th field) {tok} is out of range; "
                f"expected an integer from -2147483648 to 2147483647")
    if code == _trec_E_UTF8_QID:
        return f"query id (1st field) is not valid UTF-8: {raw!r}"
    if code == _trec_E_UTF8_DOCNO:
        return f"document id (3rd field) is not valid UTF-8: {raw!r}"
    if code == _trec_E_UTF8_RUNID:
        return f"run id (6th field) is not valid UTF-8: {raw!r}"
    if code == _trec_E_LINE_TOO_LONG:
        return (f"a line longer than {_trec_MAX_LINE} bytes (1 MiB, the longest a "
                f"{'run' if is_run else 'qrels'} line may be), starting "
                f"{raw[:40].decode('utf-8', 'backslashreplace')!r}...; is this a TREC "
                f"{'run' if is_run else 'qrels'} file?")
    if code == _trec_E_ID_TOO_LONG:
        return f"id of {tlen} bytes is longer than the 16 MiB limit"
    return f"more than {_trec_MAX_IDS} distinct ids"


cdef class _trec_Batch:
    """One scanned block of text, waiting to have its ids interned."""

    cdef _trec_BatchData b
    cdef object block                # a memoryview keeping the text alive and unresized
    cdef const unsigned char *base
    cdef Py_ssize_t nbytes
    cdef readonly int64_t error_line   # 0, or the line of the block's first scan error
    cdef readonly str error_message

    def __cinit__(self):
        self.b.cap = 0
        self.b.n = 0
        self.b.n_ok = 0
        self.b.q_off = NULL
        self.b.q_len = NULL
        self.b.d_off = NULL
        self.b.d_len = NULL
        self.b.d_meta = NULL
        self.b.d_key8 = NULL

    def __dealloc__(self):
        free(self.b.q_off)
        free(self.b.q_len)
        free(self.b.d_off)
        free(self.b.d_len)
        free(self.b.d_meta)
        free(self.b.d_key8)

    def release(self):
        """Drop the reference to the text (the arrays stay for reuse)."""
        self.block = None
        self.base = NULL
        self.nbytes = 0


cdef class _trec_Parser:
    """Two-stage TREC run (``is_run=True``) or qrels parser; see qafast.io.trec.

    ``scan(block)`` reads the complete lines of one block of text; ``intern(batch)`` then
    maps the block's ids to indexes. The stages touch disjoint state, so one thread may scan
    block k + 1 while another interns block k; each stage must see blocks in file order.

    With ``intern_docs=False`` document ids are not interned: the scan keeps each line's
    document hash, and ``intern`` (query ids only) copies the document's bytes to one blob
    and computes its tie key, kept unless ``tie_keys=False`` (then ``finish()`` gives None
    for them: qrels are never ranked by document id).
    """

    cdef _trec_ScanState sc
    cdef _trec_InternState it
    cdef readonly list query_ids      # every query id so far, in order of first appearance
    cdef list doc_ids
    cdef readonly object run_id
    cdef readonly str error_message     # set when intern() returns False
    cdef uint64_t error_row
    cdef bint finished

    def __cinit__(self, bint is_run, bint intern_docs=True, bint tie_keys=True):
        self.sc.is_run = is_run
        self.sc.intern_docs = intern_docs
        self.sc.hashes = NULL
        self.it.intern_docs = intern_docs
        self.it.keep_tiekeys = tie_keys and not intern_docs
        self.it.tiekeys = NULL
        self.it.offsets = NULL
        self.it.blob = NULL
        self.it.blob_len = 0
        self.it.blob_cap = 0
        self.sc.need = 6 if is_run else 4
        self.sc.cap = 0
        self.sc.scores = NULL
        self.sc.grades = NULL
        self.sc.jump_row = NULL
        self.sc.jump_line = NULL
        self.sc.jump_cap = 0
        self.sc.pend = NULL
        self.sc.pend_cap = 0
        self.it.qtab.h.slots = NULL
        self.it.qtab.arena = NULL
        self.it.qtab.id_off = NULL
        self.it.dtab.h.slots = NULL
        self.it.dtab.arena = NULL
        self.it.dtab.id_off = NULL
        self.it.qidx = NULL
        self.it.didx = NULL
        self.it.cap = 0
        self.it.keep_starts = is_run and not intern_docs
        self.it.qstart = NULL
        self.it.qstart_cap = 0
        if (_trec_scan_grow(&self.sc) != 0 or _trec_intern_grow(&self.it, 1) != 0
                or (not intern_docs and _trec_blob_grow(&self.it, 1) != 0)):
            raise MemoryError("no memory for a TREC reader's first arrays")
        self.finished = False
        self._start_text()

    cdef int _start_text(self) except -1:
        # the state of a parser that has read nothing (new tables; the arrays are kept)
        _trec_table_free(&self.it.qtab)
        _trec_table_free(&self.it.dtab)
        if (_trec_table_init(&self.it.qtab, 10) != 0
                or _trec_table_init(&self.it.dtab, 16 if self.it.intern_docs else 4) != 0):
            raise MemoryError("no memory for a TREC reader's id tables")
        self.it.qtab.ascending = 3
        self.sc.line_no = 0
        self.sc.rows = 0
        self.sc.njump = 0
        self.sc.next_line = -1
        self.sc.npend = 0
        self.sc.err = _trec_OK
        self.it.rows = 0
        self.it.prev_q = -1
        self.it.scattered = False
        self.it.nqstart = 0
        self.it.err = _trec_OK
        self.it.blob_len = 0
        if self.it.offsets != NULL:
            self.it.offsets[0] = 0
        self.query_ids = []
        self.doc_ids = []
        self.run_id = None
        self.error_message = None
        return 0

    def __dealloc__(self):
        _trec_table_free(&self.it.qtab)
        _trec_table_free(&self.it.dtab)
        _trec_mem_free(self.it.qidx, self.it.cap * sizeof(int32_t))
        _trec_mem_free(self.it.didx, self.it.cap * sizeof(int32_t))
        _trec_mem_free(self.it.tiekeys, self.it.cap * sizeof(int64_t))
        _trec_mem_free(self.it.offsets, (self.it.cap + 1) * sizeof(int64_t))
        _trec_mem_free(self.it.blob, self.it.blob_cap)
        _trec_mem_free(self.sc.scores, self.sc.cap * sizeof(double))
        _trec_mem_free(self.sc.grades, self.sc.cap * sizeof(int32_t))
        free(self.sc.jump_row)
        free(self.sc.jump_line)
        _trec_mem_free(self.sc.hashes, self.sc.cap * sizeof(int64_t))
        free(self.sc.pend)
        free(self.it.qstart)

    def scan(self, block, _trec_Batch batch=None):
        """Stage 1 on ``block`` (bytes-like, complete lines; the last may lack its newline).

        Fills and returns ``batch`` (a new one if None). If a line is malformed, the batch
        keeps the rows before it and names it in ``error_line`` / ``error_message``.
        """
        return self._scan(block, batch, False)

    def scan_intern(self, block, _trec_Batch batch=None):
        """Both stages on ``block`` in one pass over its text, for a caller that would run
        them one after the other on one thread; only without document interning. Returns
        ``batch`` with nothing left to intern; ``error_line`` / ``error_message`` name the
        block's first malformed line, an invalid id included."""
        if self.it.intern_docs:
            raise RuntimeError("scan_intern() needs a parser without document interning")
        if self.sc.rows != self.it.rows:
            raise RuntimeError("scan_intern() while a scanned batch waits for intern()")
        return self._scan(block, batch, True)

    cdef _trec_Batch _scan(self, block, _trec_Batch batch, bint fused):
        cdef _trec_ScanState *sc = &self.sc
        cdef _trec_InternState *it = &self.it if fused else NULL
        cdef object view = memoryview(block)
        cdef const unsigned char[::1] data = view.cast("B") if view.format != "B" else view
        cdef Py_ssize_t n = data.shape[0]
        cdef const unsigned char *buf = &data[0] if n > 0 else NULL
        cdef int rc = _trec_OK
        cdef uint64_t k
        if self.finished:
            raise RuntimeError("scan() after finish()")
        if batch is None:
            batch = _trec_Batch.__new__(_trec_Batch)
        batch.block = view
        batch.base = buf
        batch.nbytes = n
        batch.error_line = 0
        batch.error_message = None
        batch.b.row_start = sc.rows
        batch.b.n = 0
        sc.npend = 0
        sc.runid_off = -1
        sc.err = _trec_OK
        if n > 0:
            with nogil:
                rc = _trec_scan_lines(sc, &batch.b, buf, n, it)
        if fused:
            self._make_strings(&self.it.qtab, self.query_ids)
        if rc == _trec_E_NOMEM:
            raise MemoryError(f"no memory to grow the TREC reader's arrays past {sc.rows} rows "
                              f"(at line {sc.err_line})")
        batch.b.n_ok = batch.b.n
        if rc != _trec_OK:
            batch.error_line = sc.err_line
            batch.error_message = _trec_message(rc, sc.is_run, sc.err_nfields, buf, sc.err_off,
                                                sc.err_len)
        # scores for the exact slow path; a failure there comes before any error above
        k = self._resolve_pending(buf, batch)
        if k < sc.npend:
            batch.b.n_ok = sc.pend[k].row - batch.b.row_start
        if sc.runid_off >= 0 and batch.error_line == 0:
            self.run_id = PyUnicode_DecodeUTF8(<const char *>buf + sc.runid_off,
                                               sc.runid_len, NULL)
        return batch

    cdef uint64_t _resolve_pending(self, const unsigned char *buf, _trec_Batch batch) except? 0:
        # Convert the queued score tokens; returns the index of the first bad one, or
        # npend when all are numbers.
        cdef _trec_ScanState *sc = &self.sc
        cdef uint64_t k
        cdef _trec_Pending *pe
        cdef char small[64]
        cdef char *tmp
        cdef char *endp
        cdef double v
        cdef int code
        for k in range(sc.npend):
            pe = &sc.pend[k]
            if pe.len < 64:
                tmp = small
            else:
                tmp = <char *>malloc(pe.len + 1)
                if tmp == NULL:
                    raise MemoryError(f"no memory to convert a score of {pe.len} bytes")
            memcpy(tmp, buf + pe.off, pe.len)
            tmp[pe.len] = 0
            v = _trec_PyOS_string_to_double(tmp, &endp, NULL)
            if tmp != small:
                free(tmp)
            if PyErr_Occurred() != NULL:
                if PyErr_ExceptionMatches(ValueError):
                    PyErr_Clear()
                else:
                    raise MemoryError(f"no memory to convert a score of {pe.len} bytes")
            code = _trec_OK
            if endp != tmp + pe.len:
                code = _trec_E_SCORE
            elif v != v:
                code = _trec_E_NAN
            if code != _trec_OK:
                batch.error_line = pe.line
                batch.error_message = _trec_message(code, True, 0, buf, pe.off, pe.len)
                return k
            sc.scores[pe.row] = v
        return sc.npend

    def intern(self, _trec_Batch batch not None):
        """Stage 2 on a scanned batch. Returns False after an invalid id (described by
        ``error_message`` and ``error_line()``), else True; the batch's own scan error, if
        any, is the caller's to raise."""
        cdef _trec_InternState *it = &self.it
        cdef int rc
        if self.finished:
            raise RuntimeError("intern() after finish()")
        if batch.b.row_start != it.rows:
            raise RuntimeError("batches must be interned in the order they were scanned")
        with nogil:
            if it.intern_docs:
                rc = _trec_intern_rows(it, &batch.b, batch.base, batch.nbytes)
            else:
                rc = _trec_doc_rows(it, &batch.b, batch.base, batch.nbytes)
        self._make_strings(&it.qtab, self.query_ids)
        if it.intern_docs:
            self._make_strings(&it.dtab, self.doc_ids)
        if rc == _trec_E_NOMEM:
            raise MemoryError(f"no memory to grow the TREC reader's id tables past {it.rows} "
                              "rows")
        if rc != _trec_OK:
            self.error_row = batch.b.row_start + it.err_k
            self.error_message = _trec_message(rc, self.sc.is_run, 0, batch.base, it.err_off,
                                               it.err_len)
            return False
        return True

    @property
    def rows(self):
        """Rows scanned and not yet handed over."""
        return self.it.rows

    @property
    def lines(self):
        """Lines scanned so far (comments and blank lines included)."""
        return self.sc.line_no

    @property
    def interns_docs(self):
        """Whether document ids are interned (else only hashed, and scan_intern() works)."""
        return self.it.intern_docs

    def complete_rows(self, bint everything, int64_t first_query):
        """For evaluating a run file as it is read: the rows of the queries that are
        complete (all but the last query's rows; every row with ``everything``), as numpy
        views of the parser's own arrays (qidx, scores, hashes, tiekeys, lines, byte
        offsets, blob), and each query's first row (q_off, a new array, with the number of
        rows last). The views are valid until the next scan() or drop_rows(); the caller
        then drops the rows with drop_rows(), so the arrays stay small and in cache. For a
        run parser without document interning, between batches.

        The rows read since the text's start must hold each query's lines together,
        queries in order of first appearance, and the rows held must start with query
        ``first_query``; otherwise returns None (the caller reads the file whole).
        """
        cdef _trec_ScanState *sc = &self.sc
        cdef _trec_InternState *it = &self.it
        cdef uint64_t n = it.rows, cut, nq
        if not sc.is_run or it.intern_docs or sc.rows != n:
            raise RuntimeError("complete_rows() needs a run parser without document "
                               "interning, between batches")
        if n == 0:
            return 0, None
        # every row since the text's start was checked as stage 2 took it (a pass over the
        # rows here was 1.7% of a 100M-line run's time)
        if it.scattered or it.qidx[0] != first_query:
            return None
        nq = it.nqstart
        cut = n
        if not everything:
            nq -= 1
            cut = <uint64_t>it.qstart[nq]       # the last query's lines may go on
        if cut == 0:
            return 0, None
        q_off = _trec_np().empty(nq + 1, dtype="int64")
        cdef int64_t[::1] qo = q_off
        memcpy(&qo[0], it.qstart, nq * sizeof(int64_t))
        qo[nq] = <int64_t>cut
        return cut, (
            _trec_np().asarray(<int32_t[:cut]> it.qidx),
            _trec_np().asarray(<double[:cut]> sc.scores),
            _trec_np().asarray(<int64_t[:cut]> sc.hashes),
            _trec_np().asarray(<int64_t[:cut]> it.tiekeys),
            self._line_numbers(cut),
            _trec_np().asarray(<int64_t[:cut + 1]> it.offsets),
            _trec_np().asarray(<uint8_t[:max(it.offsets[cut], 1)]> it.blob),
            q_off)

    def drop_rows(self, uint64_t cut):
        """Forget the first ``cut`` rows (those complete_rows() showed), moving the rest to
        the front."""
        cdef _trec_ScanState *sc = &self.sc
        cdef _trec_InternState *it = &self.it
        cdef uint64_t n = it.rows, i, rest, nbytes, k, kept
        if cut > n or sc.rows != n:
            raise RuntimeError("drop_rows() past the rows, or during a batch")
        rest = n - cut
        nbytes = <uint64_t>it.offsets[cut]
        if rest:
            memmove(it.qidx, it.qidx + cut, rest * sizeof(int32_t))
            memmove(sc.scores, sc.scores + cut, rest * sizeof(double))
            memmove(sc.hashes, sc.hashes + cut, rest * sizeof(int64_t))
            if it.tiekeys != NULL:
                memmove(it.tiekeys, it.tiekeys + cut, rest * sizeof(int64_t))
            memmove(it.blob, it.blob + nbytes, it.blob_len - nbytes)
            # the kept rows' jumps, renumbered, row `cut` (now 0) among them
            k = _trec_last_jump(sc, cut)
            sc.jump_line[k] += <int64_t>cut - sc.jump_row[k]
            sc.jump_row[k] = <int64_t>cut
            kept = sc.njump - k
            for i in range(kept):
                sc.jump_row[i] = sc.jump_row[k + i] - <int64_t>cut
                sc.jump_line[i] = sc.jump_line[k + i]
            sc.njump = kept
        else:
            sc.njump = 0
            sc.next_line = -1                 # the next row starts the jumps again
        for i in range(rest + 1):
            it.offsets[i] = it.offsets[cut + i] - <int64_t>nbytes
        it.blob_len -= nbytes
        it.rows = rest
        sc.rows = rest
        # the starts of the queries kept, renumbered; row 0 starts one, even if the cut was
        # within a query
        k = 0
        while k < it.nqstart and <uint64_t>it.qstart[k] < cut:
            k += 1
        kept = it.nqstart - k
        for i in range(kept):
            it.qstart[i] = it.qstart[k + i] - <int64_t>cut
        it.nqstart = kept
        if it.keep_starts and rest and (kept == 0 or it.qstart[0] != 0):
            if _trec_qstart_push(&self.it, 0) != 0:
                raise MemoryError("no memory for the TREC reader's query starts")
            memmove(it.qstart + 1, it.qstart, kept * sizeof(int64_t))
            it.qstart[0] = 0

    def restart(self):
        """Forget every line read, to read another text from its start, keeping the
        arrays' memory: a thread that reads several byte ranges of a file (see
        qafast._runfile) otherwise has every range page-fault its arrays in afresh, which
        cost 7 ms a range."""
        if self.finished:
            raise RuntimeError("restart() after finish()")
        self._start_text()

    def error_line(self):
        """The line of the row intern() failed on. Only while no scan() is running."""
        return _trec_line_of(&self.sc, self.error_row)

    cdef object _line_numbers(self, uint64_t n):
        # the lines of rows [0, n) (qafast._lines.LineNumbers), from the jumps before row n
        from qafast._lines import LineNumbers
        cdef uint64_t k = _trec_last_jump(&self.sc, n - 1) + 1 if n else 0
        rows = _trec_np().empty(k, dtype="int64")
        lines = _trec_np().empty(k, dtype="int64")
        cdef int64_t[::1] r = rows
        cdef int64_t[::1] v = lines
        cdef uint64_t i
        for i in range(k):
            r[i] = self.sc.jump_row[i]
            v[i] = self.sc.jump_line[i]
        return LineNumbers(rows, lines, n)

    cdef int _make_strings(self, _trec_Table *t, list out) except -1:
        cdef uint64_t i
        cdef uint64_t count = t.h.count + t.unslotted
        for i in range(t.made, count):
            out.append(PyUnicode_DecodeUTF8(<const char *>t.arena + t.id_off[i],
                                            <Py_ssize_t>(t.id_off[i + 1] - t.id_off[i]), NULL))
        t.made = count
        return 0

    def finish(self, bint as_numpy=True):
        """Hand over the columns: (query_ids, query_index, doc_ids, doc_index, values,
        line_numbers, run_id, doc_hashes, doc_tiekeys, doc_offsets, doc_blob); the first
        two document columns are None without interning, the last four with it. The parser
        cannot be used afterwards. ``as_numpy=False`` gives each column as a buffer (int32
        "i", int64 "q", float64 "d", uint8 "B") and line_numbers as None, without
        importing numpy."""
        cdef uint64_t n = self.it.rows
        if self.finished:
            raise RuntimeError("finish() called twice")
        if self.sc.rows != n:
            raise RuntimeError("finish() before every scanned batch was interned")
        self.finished = True
        _trec_table_free(&self.it.qtab)
        _trec_table_free(&self.it.dtab)
        free(self.sc.pend)
        self.sc.pend = NULL
        qidx = _trec_wrap(self.it.qidx, self.it.cap, n, 4, b"i", "int32", as_numpy)
        self.it.qidx = NULL
        doc_ids = didx = hashes = tiekeys = offsets = blob = None
        if self.it.intern_docs:
            doc_ids = self.doc_ids
            didx = _trec_wrap(self.it.didx, self.it.cap, n, 4, b"i", "int32", as_numpy)
            self.it.didx = NULL
        else:
            hashes = _trec_wrap(self.sc.hashes, self.sc.cap, n, 8, b"q", "int64", as_numpy)
            self.sc.hashes = NULL
            if self.it.keep_tiekeys:
                tiekeys = _trec_wrap(self.it.tiekeys, self.it.cap, n, 8, b"q", "int64",
                                     as_numpy)
                self.it.tiekeys = NULL
            offsets = _trec_wrap(self.it.offsets, self.it.cap + 1, n + 1, 8, b"q", "int64",
                                 as_numpy)
            self.it.offsets = NULL
            blob = _trec_wrap(self.it.blob, self.it.blob_cap, self.it.blob_len, 1, b"B",
                              "uint8", as_numpy)
            self.it.blob = NULL
        if self.sc.is_run:
            values = _trec_wrap(self.sc.scores, self.sc.cap, n, 8, b"d", "float64", as_numpy)
            self.sc.scores = NULL
        else:
            values = _trec_wrap(self.sc.grades, self.sc.cap, n, 4, b"i", "int32", as_numpy)
            self.sc.grades = NULL
        lines = self._line_numbers(n) if as_numpy else None
        return (self.query_ids, qidx, doc_ids, didx, values, lines, self.run_id,
                hashes, tiekeys, offsets, blob)


def _trec_hash_bytes(const unsigned char[::1] data not None):
    """The 64-bit hash (as a signed int64) that ``intern_docs=False`` reports for a document
    id with these UTF-8 bytes: ``_trec_hash``, as other qafast code hashes ids."""
    cdef Py_ssize_t n = data.shape[0]
    return <int64_t>_trec_hash(&data[0] if n > 0 else NULL, n)


def _trec_last_newline(const unsigned char[::1] data not None):
    """Index of the last b"\\n" in data, or -1."""
    cdef Py_ssize_t i = data.shape[0] - 1
    with nogil:
        while i >= 0 and data[i] != 10:
            i -= 1
    return i
