# Stub of the compiled module qafast._kernels (built from _kernels.pyx and its .pxi parts).
# Arrays are numpy arrays with the dtype named; kernels write into the arrays passed as out.

from typing import Any

import numpy as np
from numpy.typing import NDArray

I32 = NDArray[np.int32]
I64 = NDArray[np.int64]
F64 = NDArray[np.float64]
U8 = NDArray[np.uint8]

# ranking (_ranking_kernels.pxi)
def rank_judged(
    run_offsets: I64, run_hashes: I64, run_tiekeys: I64, run_keys: I64, run_key_off: I64, run_blob: U8,
    run_scores: F64, qrels_offsets: I64, qrels_hashes: I64, qrels_keys: I64,
    qrels_key_off: I64, qrels_blob: U8, qrels_grades: I32, pair_run: I64, pair_qrels: I64,
    max_docs: int, judged_only: bool, out_offsets: I64, out_rank: I32, out_grade: I32,
    out_count: I64, out_num_ret: I64,
) -> None: ...
def ranking_measures(
    ranked_offsets: I64, ranked_rank: I32, ranked_grade: I32, ranked_count: I64,
    num_ret: I64, pair_qrels: I64, qrels_offsets: I64, qrels_grades: I32,
    relevance_level: int, max_grade: int, v9_rounding: bool, codes: I32, int_params: I64,
    float_params: F64, list_offsets: I64, list_keys: I64, list_values: F64, need_dense: bool,
    out: F64, start: int = 0, stop: int = -1,
) -> None: ...
def first_duplicate(offsets: I64, keys: I64, n_keys: int) -> int: ...
def first_duplicate_sorted(offsets: I64, hashes: I64, keys: I64, key_off: I64, blob: U8) -> int: ...
def sort_groups(offsets: I64, hashes: I64, order: I64) -> None: ...
def hash_keys(key_off: I64, blob: U8, out: I64, tiekeys: I64) -> None: ...

# encoding of Python containers (_encode_kernels.pxi)
def encode_nested_dict(
    data: dict[Any, dict[str, Any]], integer_values: bool, query_offsets: I64, values: F64,
    hashes: I64, tiekeys: I64, byte_offsets: I64, query_ids: list[Any],
) -> tuple[bytes | None, tuple[Any, Any, Any, str] | None]: ...
def utf8_blob(strings: list[str], offsets: I64) -> bytes: ...

# TREC text parsing (_trec_io.pxi)
class _trec_Batch:
    def release(self) -> None: ...

class _trec_Parser:
    def __init__(self, is_run: bool) -> None: ...
    def scan(self, block: Any, batch: _trec_Batch | None = ...) -> Any: ...
    def intern(self, batch: _trec_Batch) -> Any: ...
    def error_line(self) -> Any: ...
    def finish(self) -> Any: ...

def _trec_last_newline(data: Any) -> int: ...
