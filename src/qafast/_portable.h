/* What differs between compilers, CPUs and CPython versions, decided in one place for every
 * hand-written part of the kernels (_simd.h and the C blocks of the .pxi files).
 *
 * Each fast path here has a plain twin that any C compiler and any CPython builds:
 *
 *   QAFAST_PORTABLE          (setup.py: QAFAST_PORTABLE=1) compiles only the plain twins:
 *                            no SSE2, no multi-versioned loops, no GCC/clang builtins, no
 *                            Linux-only memory calls. The test suite runs against that build
 *                            too, so what aarch64, macOS and MSVC compile was run on x86-64.
 *   QAFAST_PUBLIC_API_ONLY   (setup.py: QAFAST_PUBLIC_API_ONLY=1) never reads CPython's own
 *                            structures; the public C API only.
 */
#ifndef QAFAST_PORTABLE_H
#define QAFAST_PORTABLE_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(QAFAST_PORTABLE)
#ifndef QAFAST_NO_CLONES
#define QAFAST_NO_CLONES 1
#endif
#ifndef _trec_NO_SSE2
#define _trec_NO_SSE2 1
#endif
#endif

/* GCC's and clang's builtins (prefetch, bit scans, byte swaps, always_inline) */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(QAFAST_PORTABLE)
#define QAFAST_GNU_BUILTINS 1
#else
#define QAFAST_GNU_BUILTINS 0
#endif

/* MSVC's intrinsics (clang-cl defines _MSC_VER too, and takes the builtins above) */
#if defined(_MSC_VER) && !QAFAST_GNU_BUILTINS && !defined(QAFAST_PORTABLE)
#define QAFAST_MSVC_INTRINSICS 1
#include <intrin.h>
#else
#define QAFAST_MSVC_INTRINSICS 0
#endif

/* SSE2: every x86-64 CPU has it */
#if (defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)) \
    && !defined(QAFAST_PORTABLE)
#define QAFAST_SSE2 1
#include <emmintrin.h>
#else
#define QAFAST_SSE2 0
#endif

/* target_clones: each marked loop built for AVX2, SSE4.2 and the baseline, one picked at load
 * time (needs GCC or clang, and the loader's ifunc support: x86-64 Linux with glibc; musl's
 * loader refuses the module, "unsupported relocation type 37": a musl build takes the
 * baseline alone) */
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && QAFAST_GNU_BUILTINS \
    && !defined(QAFAST_NO_CLONES)
#define QAFAST_HAVE_CLONES 1
#define QAFAST_CLONES __attribute__((target_clones("avx2", "sse4.2", "default")))
#else
#define QAFAST_HAVE_CLONES 0
#define QAFAST_CLONES
#endif

/* Where clones are built, also: a function built for x86-64-v3 (AVX2 with BMI1/BMI2's shifts
 * by a register and bit resets) besides the baseline, one picked at load time; a function
 * built for AVX2 alone, for AVX2 intrinsics, called only where qafast_cpu_has_avx2() */
#if QAFAST_HAVE_CLONES
#include <immintrin.h>
#define QAFAST_CLONES_V3 __attribute__((target_clones("arch=x86-64-v3", "default")))
#define QAFAST_TARGET_AVX2 __attribute__((target("avx2")))
#define qafast_cpu_has_avx2() __builtin_cpu_supports("avx2")
#else
#define QAFAST_CLONES_V3
#define QAFAST_TARGET_AVX2
#define qafast_cpu_has_avx2() 0
#endif

/* Linux's mmap/mremap/madvise for the growing arrays (elsewhere realloc) */
#if defined(__linux__) && !defined(QAFAST_PORTABLE)
#define QAFAST_LINUX_MEMORY 1
#else
#define QAFAST_LINUX_MEMORY 0
#endif

#if QAFAST_GNU_BUILTINS
#define QAFAST_ALWAYS_INLINE __attribute__((always_inline)) inline
#define qafast_prefetch(p) __builtin_prefetch((const void *)(p))
#define qafast_ctz32(x) __builtin_ctz(x)
#define qafast_ctz64(x) __builtin_ctzll(x)
#define QAFAST_BSWAP64(x) __builtin_bswap64(x)
#elif QAFAST_MSVC_INTRINSICS
#define QAFAST_ALWAYS_INLINE __forceinline
#if defined(_M_X64) || defined(_M_IX86)
#define qafast_prefetch(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#else
#define qafast_prefetch(p) ((void)(p))
#endif
static __forceinline int qafast_ctz32(uint32_t x)
{
    unsigned long i;
    _BitScanForward(&i, x);
    return (int)i;
}
static __forceinline int qafast_ctz64(uint64_t x)
{
    unsigned long i;
#if defined(_M_X64) || defined(_M_ARM64)
    _BitScanForward64(&i, x);
    return (int)i;
#else
    if (_BitScanForward(&i, (unsigned long)x))
        return (int)i;
    _BitScanForward(&i, (unsigned long)(x >> 32));
    return (int)i + 32;
#endif
}
#define QAFAST_BSWAP64(x) _byteswap_uint64(x)
#else
/* plain C: x is never 0 where these are called */
#define QAFAST_ALWAYS_INLINE inline
#define qafast_prefetch(p) ((void)(p))
static inline int qafast_ctz64(uint64_t x)
{
    int i = 0;
    if (!(x & 0xFFFFFFFFULL)) { x >>= 32; i += 32; }
    if (!(x & 0xFFFFULL)) { x >>= 16; i += 16; }
    if (!(x & 0xFFULL)) { x >>= 8; i += 8; }
    if (!(x & 0xFULL)) { x >>= 4; i += 4; }
    if (!(x & 0x3ULL)) { x >>= 2; i += 2; }
    return i + (int)(!(x & 1));
}
static inline int qafast_ctz32(uint32_t x) { return qafast_ctz64(x); }
static inline uint64_t QAFAST_BSWAP64(uint64_t x)
{
    x = ((x & 0x00FF00FF00FF00FFULL) << 8) | ((x >> 8) & 0x00FF00FF00FF00FFULL);
    x = ((x & 0x0000FFFF0000FFFFULL) << 16) | ((x >> 16) & 0x0000FFFF0000FFFFULL);
    return (x << 32) | (x >> 32);
}
#endif


/* Ask Linux for transparent huge pages on a large block (a hash table's slots, a growing
 * arena): its accesses are random, and with 4 KiB pages nearly every one also misses the
 * TLB. A hint only; elsewhere nothing. */
#if QAFAST_LINUX_MEMORY
#include <sys/mman.h>
static inline void qafast_advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)1 << 21;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t b = ((uintptr_t)p + n) & ~(huge - 1);
    if (b > a)
        madvise((void *)a, (size_t)(b - a), MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}
#else
static inline void qafast_advise_huge(void *p, size_t n)
{
    (void)p;
    (void)n;
}
#endif

/* ------------------------------------------------------------------------------------------
 * CPython's own structures, read only where their layout is known: CPython 3.11 to 3.14 with
 * the GIL (the free-threaded build reads these fields atomically). Everywhere else, and when
 * qafast_private_capi is 0, the public C API. Only prefetches read them: results never
 * depend on which path runs. Tests switch the private path off at run time
 * (qafast._kernels._set_private_capi) and compare; a QAFAST_PUBLIC_API_ONLY=1 build compiles
 * it out and runs the whole suite. A read stays only where it pays (the figures are beside
 * its use): a str's cached hash does; a dict's key table (PyDictObject.ma_keys) did not.
 */
#if !defined(QAFAST_PUBLIC_API_ONLY) && !defined(Py_GIL_DISABLED) && !defined(Py_LIMITED_API) \
    && !defined(PYPY_VERSION) && PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030F0000
#define QAFAST_HAVE_PRIVATE_CAPI 1
#else
#define QAFAST_HAVE_PRIVATE_CAPI 0
#endif

static int qafast_private_capi = QAFAST_HAVE_PRIVATE_CAPI;

/* The hash a str has cached, or -1 when none is (or it cannot be read without a call). */
static inline Py_hash_t qafast_str_cached_hash(PyObject *s)
{
#if QAFAST_HAVE_PRIVATE_CAPI
    if (qafast_private_capi)
        return ((PyASCIIObject *)s)->hash;
#endif
#if PY_VERSION_HEX >= 0x030E0000 && !defined(PYPY_VERSION) && !defined(Py_LIMITED_API)
    return PyUnstable_Unicode_GET_CACHED_HASH(s);
#else
    (void)s;
    return -1;
#endif
}

/* Switch the private path on or off (a no-op where it is not compiled); returns whether
 * it is now on. */
static int qafast_set_private_capi(int on)
{
    qafast_private_capi = QAFAST_HAVE_PRIVATE_CAPI && on;
    return qafast_private_capi;
}

#endif
