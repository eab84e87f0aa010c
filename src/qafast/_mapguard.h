/* Reading a run file through memory maps, safely.
 *
 * A range of a run file is scanned in place, through windows mapped one after another, instead
 * of being copied into buffers by read(): the copy was about 0.3 CPU-seconds of a 100M-line run
 * on two cores (sys time 0.77 s with read, 0.47 s mapped). A mapped page whose file was
 * truncated after it was mapped raises SIGBUS when read, and SIGBUS ends the process. While a
 * window is registered here, a SIGBUS in it maps a page of zeros over the lost page and marks
 * the window's slot as changed: the access then succeeds, and the reader, which checks the mark
 * after every block, reports the change instead of anything it made of the zeros. A SIGBUS
 * anywhere else goes to the handler that was installed before this one, or ends the process,
 * as it would have without it. The handler is installed once, at the first mapped read, and
 * never removed; a SIGBUS handler installed after it (faulthandler.enable(), say) runs first,
 * and a truncated file then ends the process as it would have without this guard.
 *
 * QAFAST_MAPPED_FILES is 1 where this works (Linux and macOS with GCC or clang builtins, not
 * the portable build); elsewhere the files are read with read() as before.
 */
#ifndef QAFAST_MAPGUARD_H
#define QAFAST_MAPGUARD_H

#include "_portable.h"

#if QAFAST_GNU_BUILTINS && (defined(__linux__) || defined(__APPLE__))
#define QAFAST_MAPPED_FILES 1
#else
#define QAFAST_MAPPED_FILES 0
#endif

#define QAFAST_GUARD_SLOTS 64

#if QAFAST_MAPPED_FILES
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

/* slot i guards [lo, hi) when in_use; hi is 0 while the window changes, so the handler never
   matches a half-written pair */
static uintptr_t qafast_guard_lo[QAFAST_GUARD_SLOTS];
static uintptr_t qafast_guard_hi[QAFAST_GUARD_SLOTS];
static int qafast_guard_changed[QAFAST_GUARD_SLOTS];
static int qafast_guard_in_use[QAFAST_GUARD_SLOTS];
static struct sigaction qafast_guard_previous;
static int qafast_guard_installed = 0;
static pthread_once_t qafast_guard_once = PTHREAD_ONCE_INIT;
static uintptr_t qafast_guard_page = 0;

/* a fault, not a SIGBUS sent by kill() or raise(), whose si_addr means nothing */
#if defined(__linux__)
#define QAFAST_GUARD_FAULT(info) ((info)->si_code > 0)
#else
#define QAFAST_GUARD_FAULT(info) ((info)->si_code != SI_USER && (info)->si_code != SI_QUEUE)
#endif

static void qafast_guard_on_sigbus(int sig, siginfo_t *info, void *context)
{
    uintptr_t at = (uintptr_t)info->si_addr;
    int i;
    for (i = 0; i < QAFAST_GUARD_SLOTS && QAFAST_GUARD_FAULT(info); i++) {
        uintptr_t hi = __atomic_load_n(&qafast_guard_hi[i], __ATOMIC_ACQUIRE);
        uintptr_t lo = __atomic_load_n(&qafast_guard_lo[i], __ATOMIC_ACQUIRE);
        if (lo <= at && at < hi) {
            /* mmap is a plain system call on Linux and macOS, safe in a handler */
            void *page = (void *)(at & ~(qafast_guard_page - 1));
            if (mmap(page, (size_t)qafast_guard_page, PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
                __atomic_store_n(&qafast_guard_changed[i], 1, __ATOMIC_RELEASE);
                return;
            }
            break;
        }
    }
    if (qafast_guard_previous.sa_flags & SA_SIGINFO) {
        qafast_guard_previous.sa_sigaction(sig, info, context);
    } else if (qafast_guard_previous.sa_handler != SIG_DFL
               && qafast_guard_previous.sa_handler != SIG_IGN) {
        qafast_guard_previous.sa_handler(sig);
    } else {
        /* the default action: the faulting access runs again and ends the process */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
    }
}

static void qafast_guard_install(void)
{
    struct sigaction mine;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        return;
    qafast_guard_page = (uintptr_t)page;
    memset(&mine, 0, sizeof mine);
    mine.sa_sigaction = qafast_guard_on_sigbus;
    mine.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&mine.sa_mask);
    if (sigaction(SIGBUS, &mine, &qafast_guard_previous) == 0)
        qafast_guard_installed = 1;
}

/* A free slot, the handler installed on first use (once per process, and never removed);
   -1 when no slot is left or the handler could not be installed: the caller then reads the
   file instead. */
static int qafast_guard_take(void)
{
    int i;
    pthread_once(&qafast_guard_once, qafast_guard_install);
    if (!qafast_guard_installed)
        return -1;
    for (i = 0; i < QAFAST_GUARD_SLOTS; i++) {
        int free_slot = 0;
        if (__atomic_compare_exchange_n(&qafast_guard_in_use[i], &free_slot, 1, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&qafast_guard_hi[i], (uintptr_t)0, __ATOMIC_RELEASE);
            __atomic_store_n(&qafast_guard_changed[i], 0, __ATOMIC_RELEASE);
            return i;
        }
    }
    return -1;
}

/* Slot i guards [at, at + size) from now on (size 0: nothing). */
static void qafast_guard_set(int i, const void *at, size_t size)
{
    __atomic_store_n(&qafast_guard_hi[i], (uintptr_t)0, __ATOMIC_RELEASE);
    __atomic_store_n(&qafast_guard_lo[i], (uintptr_t)at, __ATOMIC_RELEASE);
    __atomic_store_n(&qafast_guard_hi[i], size ? (uintptr_t)at + size : 0, __ATOMIC_RELEASE);
}

static int qafast_guard_changed_at(int i)
{
    return __atomic_load_n(&qafast_guard_changed[i], __ATOMIC_ACQUIRE);
}

static void qafast_guard_give_back(int i)
{
    __atomic_store_n(&qafast_guard_hi[i], (uintptr_t)0, __ATOMIC_RELEASE);
    __atomic_store_n(&qafast_guard_in_use[i], 0, __ATOMIC_RELEASE);
}

#else

static int qafast_guard_take(void) { return -1; }
static void qafast_guard_set(int i, const void *at, size_t size) { (void)i; (void)at; (void)size; }
static int qafast_guard_changed_at(int i) { (void)i; return 0; }
static void qafast_guard_give_back(int i) { (void)i; }

#endif
#endif
