# cython: language_level=3
"""Every hot loop of qafast, and nothing else.

Kernels take ``const`` typed memoryviews, write into arrays the caller allocated and release
the GIL. Validation happens in the Python layer before any of these run.
"""

include "_trec_io.pxi"
include "_ranking_kernels.pxi"
include "_encode_kernels.pxi"
