# cython: language_level=3
"""Every hot loop of qafast, and nothing else.

Kernels take ``const`` typed memoryviews, write into arrays the caller allocated and release
the GIL. Validation happens in the Python layer before any of these run. Each metric family
keeps its kernels in its own part, included here, so that this stays one compiled module.
"""

include "_portable.pxi"

# the qafast exception classes, for the errors the kernels raise themselves
from .errors import InputError, InputTypeError

include "_shared_kernels.pxi"
include "_trec_io.pxi"
include "_ranking_kernels.pxi"
include "_fusion_kernels.pxi"
include "_trec_write.pxi"
include "_stream_kernels.pxi"
include "_encode_kernels.pxi"
include "_answer_kernels.pxi"
include "_factoid_kernels.pxi"
include "_label_kernels.pxi"
include "_stats_kernels.pxi"
include "_hotpot_kernels.pxi"
include "_drop_kernels.pxi"
include "_tydi_kernels.pxi"
include "_json_scan_kernels.pxi"
include "_triviaqa_scan.pxi"
include "_drop_scan.pxi"
include "_nq_kernels.pxi"
include "_quac_kernels.pxi"
include "_hotpot_scan.pxi"
include "_squad_scan.pxi"
include "_multilingual_kernels.pxi"
include "_mlqa_files.pxi"
include "_gdeval_kernels.pxi"
include "_dpr_kernels.pxi"
include "_msmarco_kernels.pxi"
include "_cwl_kernels.pxi"
include "_diversity_kernels.pxi"
include "_diversity_dicts.pxi"
include "_ndeval_scan.pxi"
include "_prefs_kernels.pxi"
include "_kilt_kernels.pxi"
include "_hotpot_spans.pxi"
