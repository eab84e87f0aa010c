# Answer kernels (exact match, token/character F1, longest-common-substring F1), included by
# _kernels.pyx. The definitions they implement are in qafast/reference/answers.py.
#
# Strings become integer ids in two steps (every distinct string is normalized once): each
# distinct answer string gets an index, and each distinct string's tokens get ids through one
# hash table keyed by the tokens' UTF-8 bytes (one vocabulary per evaluation). With SQuAD's
# normalizer (the usual case) ``answer_encode_squad`` does both holding the GIL only to copy
# the strings out (see _answer_snapshot.pxi), normalizing in C (str.lower through CPython
# only for cased scripts other than Latin-1's); other normalizers run in Python first, and
# then ``answer_intern`` and ``answer_tokens`` read the str objects with the GIL. The scoring
# kernels run on CSR arrays of ids without the GIL.

# The kernels are in parts, included at the end of this file in the order each needs the
# ones before it; this file keeps what they share: the C API they call, the helpers of
# walks over Python lists, the token table and growing id arrays.

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from cpython.list cimport PyList_AsTuple
from libc.math cimport isfinite
from libc.stdint cimport uint16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport malloc, realloc, free, calloc, qsort
from libc.string cimport memcpy, memcmp, memset

from cpython.ref cimport PyObject
cimport cython

cdef extern from "_portable.h":
    void AK_PREFETCH "qafast_prefetch" (const void* p) noexcept nogil
    # The hash a str caches once computed, or -1: CPython's own field where its layout is
    # known (guarded by version in _portable.h), PyUnstable_Unicode_GET_CACHED_HASH on 3.14+,
    # else -1, and the caller calls PyObject_Hash (which returns the cached hash through two
    # calls). The private read pays in answer_intern's prefetches: 1M SQuAD questions,
    # 3 golds each, CPython 3.11, thread CPU time, medians of 8 alternating rounds on a
    # shared 2-core machine (benchmarks/bench_private_capi.py): 509 ms, public path 566 ms.
    Py_hash_t _ak_cached_hash "qafast_str_cached_hash" (PyObject* o) noexcept

cdef extern from "Python.h":
    bint _ak_is_exact_float "PyFloat_CheckExact"(PyObject* o)
    double _ak_float_value "PyFloat_AS_DOUBLE"(PyObject* o)
    bint _ak_is_exact_int "PyLong_CheckExact"(PyObject* o)
    double _ak_int_as_double "PyLong_AsDouble"(PyObject* o)
    PyObject* PyErr_Occurred()

cdef extern from "Python.h":
    PyObject* _ak_list_item "PyList_GET_ITEM"(object lst, Py_ssize_t i)
    bint _ak_is_list "PyList_CheckExact"(PyObject* o)
    Py_ssize_t _ak_list_len "PyList_GET_SIZE"(PyObject* o)
    bint _ak_is_exact_str "PyUnicode_CheckExact"(PyObject* o)
    Py_hash_t PyObject_Hash(object o)
    void PyErr_Clear()



cdef inline void _ak_prefetch_str(list lst, Py_ssize_t i) noexcept:
    # The loops below visit millions of scattered str objects in list order: ask for the
    # header (hash, length) and the first characters of one a few steps ahead.
    cdef char* o
    if i < len(lst):
        o = <char*>_ak_list_item(lst, i)
        AK_PREFETCH(o)
        AK_PREFETCH(o + 64)


cdef inline bint _ak_pause_gil(Py_ssize_t i) noexcept:
    # The walks over Python objects below need the GIL, for tens of milliseconds on large
    # inputs. Giving it up for a moment every 4096 items lets a thread that waits for it
    # (one that finished a kernel of its own and returns to Python) take it within one
    # switch interval rather than after the whole walk, so that several threads' walks
    # overlap the work the others do without the GIL. Each caller pauses only where it
    # holds no borrowed reference into a list another thread could change meanwhile, and
    # checks the lengths of the caller's lists after a pause (True).
    if (i & 4095) == 4095:
        with nogil:
            pass
        return True
    return False


cdef int _ak_lists_changed(str what) except -1:
    raise InputError(f"the {what} changed while they were read (by another thread?)")


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch)
    Py_UCS4 PyUnicode_READ(int kind, void* data, Py_ssize_t index)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    int PyUnicode_KIND(object o)
    void* PyUnicode_DATA(object o)


# ---------------------------------------------------------------------------------------------
# Token table: UTF-8 bytes -> int32 id, the TREC reader's id table (_trec_Table, on the shared
# hash table), without its UTF-8 check: a tokenizer's bytes are taken as they are
# ---------------------------------------------------------------------------------------------

cdef int _ak_table_init(_trec_Table* t) except -1:
    if _trec_table_init(t, 12) != 0:
        _trec_table_free(t)
        raise MemoryError()
    return 0


cdef int32_t _ak_intern(_trec_Table* t, const char* p, Py_ssize_t n) except -1 nogil:
    """The id of the token p[:n], given one if new. p must have 8 readable bytes."""
    cdef const unsigned char* u = <const unsigned char*>p
    # the document-id hash, eight bytes a step (a byte-wise hash's chain of multiplies was
    # a tenth of the tokenizer's time); token ids follow first appearance, not the hash
    cdef int64_t tid = _trec_table_intern(t, u, n, _trec_meta(_trec_hash(u, n), n),
                                          _trec_key8(u, n, u + 8), False)
    if tid >= 0:
        return <int32_t>tid
    if tid == -4:
        raise OverflowError("more than 2**31 - 1 distinct tokens")
    raise MemoryError()


# ---------------------------------------------------------------------------------------------
# Growable int32 output
# ---------------------------------------------------------------------------------------------

cdef struct _AkIds:
    int32_t* data
    int64_t size
    int64_t cap


cdef int _ak_reserve(_AkIds* b, int64_t more) except -1 nogil:
    cdef int64_t cap
    cdef void* grown
    if b.size + more <= b.cap:
        return 0
    cap = b.cap * 2 if b.cap else 1 << 16
    while cap < b.size + more:
        cap *= 2
    # the TREC reader's allocator (mremap on Linux): the result is handed to numpy as is,
    # where a bytes copy of it cost as much as the page faults of a second buffer
    grown = _trec_mem_resize(b.data, b.cap * sizeof(int32_t), cap * sizeof(int32_t))
    if grown == NULL:
        raise MemoryError()
    b.data = <int32_t*>grown
    b.cap = cap
    return 0


cdef object _ak_ids_array(_AkIds* b):
    """The ids as an int32 numpy array that takes over b's memory."""
    cdef object a
    if b.data == NULL:
        return _trec_np().empty(0, dtype="int32")
    a = _trec_wrap(b.data, <uint64_t>b.cap, <uint64_t>b.size, 4, b"i", "int32")
    b.data = NULL
    b.cap = 0
    return a


cdef object _ak_ids_buffer(_AkIds* b):
    """The ids as a buffer of int32 (format "i") that takes over b's memory, without numpy:
    np.frombuffer reads it as _ak_ids_array's array, and a caller that runs without numpy
    (``qafast triviaqa``) passes it to the kernels as it is."""
    cdef object a
    if b.data == NULL:
        return memoryview(b"").cast("i")
    a = _trec_wrap(b.data, <uint64_t>b.cap, <uint64_t>b.size, 4, b"i", "int32", False)
    b.data = NULL
    b.cap = 0
    return a


cdef void _ak_ids_free(_AkIds* b) noexcept:
    _trec_mem_free(b.data, b.cap * sizeof(int32_t))
    b.data = NULL


cdef int _ak_push(_AkIds* b, int32_t v) except -1 nogil:
    if b.size >= b.cap:
        _ak_reserve(b, 1)
    b.data[b.size] = v
    b.size += 1
    return 0


# ---------------------------------------------------------------------------------------------
# The parts: the normalizer; the tokenizers and the interning that read str objects with the
# GIL; snapshots and the encoder that works from them; the scores; SQuAD datasets
# ---------------------------------------------------------------------------------------------

include "_answer_normalize.pxi"
include "_answer_tokens.pxi"
include "_answer_intern.pxi"
include "_answer_snapshot.pxi"
include "_answer_encode.pxi"
include "_answer_scores.pxi"
include "_answer_squad.pxi"
