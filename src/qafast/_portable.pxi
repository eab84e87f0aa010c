# Which fast paths this build compiled (see _portable.h), and the run-time switch that lets
# the tests run the public-C-API twin of the private paths on every build.

cdef extern from *:
    """
    #include "_portable.h"
    #if defined(QAFAST_PORTABLE)
    #define _pt_portable 1
    #else
    #define _pt_portable 0
    #endif
    """
    int _pt_portable
    int _pt_have_private_capi "QAFAST_HAVE_PRIVATE_CAPI"
    int _pt_gnu_builtins "QAFAST_GNU_BUILTINS"
    int _pt_sse2 "QAFAST_SSE2"
    int _pt_clones "QAFAST_HAVE_CLONES"
    int _pt_linux_memory "QAFAST_LINUX_MEMORY"
    int _pt_private_capi "qafast_private_capi"
    int _pt_set_private_capi "qafast_set_private_capi" (int on) noexcept


def _build_features():
    """The fast paths compiled into this build, as a dict of bools."""
    return {
        "portable": bool(_pt_portable),
        "private_capi": bool(_pt_have_private_capi),
        "gnu_builtins": bool(_pt_gnu_builtins),
        "sse2": bool(_pt_sse2),
        "target_clones": bool(_pt_clones),
        "linux_memory": bool(_pt_linux_memory),
    }


def _set_private_capi(bint on):
    """Read CPython's own structures (where this build may) or only use the public C API.
    Returns the previous setting. Results never depend on it; the tests run both."""
    cdef bint before = _pt_private_capi != 0
    _pt_set_private_capi(on)
    return before
