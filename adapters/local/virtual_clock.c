/* The agent's wall clock, moved by the engine: an LD_PRELOAD library, built by adapters/local/install.py
 * (virtual_clock_library) and preloaded by adapters/local/virtual_clock.py.
 *
 * clock_gettime (the wall clocks: REALTIME, REALTIME_COARSE, TAI), gettimeofday and time return the real time
 * plus an offset in seconds read from the file named by MMB_CLOCK_OFFSET_FILE ("+90000s", "-30s"; the engine
 * replaces it atomically). The file is read when the library loads, then again at most every 0.1 s by the
 * first thread to ask after that. Monotonic clocks, sleeps, timers, condition waits and file times are left
 * alone.
 *
 * Why not libfaketime: it calls getenv on every condition wait and clock re-read, and getenv is not safe
 * beside another thread's setenv. Python waits on a condition at every GIL hand-over, so a threaded agent
 * that sets its own environment (Hermes does, as it sets up a turn) crashed with SIGSEGV about once in ten
 * starts. This library reads its environment once, at load, before any thread of the program exists.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000LL
#define REREAD_NS (NS / 10)

typedef int (*clock_fn)(clockid_t, struct timespec *);

static char offset_path[4096];
static int64_t offset_ns;    /* __atomic: the last offset read */
static int64_t next_read_ns; /* __atomic: CLOCK_MONOTONIC time from which the file is read again */
static clock_fn real_clock;  /* __atomic: libc's clock_gettime */

static clock_fn real(void) {
    clock_fn fn = __atomic_load_n(&real_clock, __ATOMIC_ACQUIRE);
    if (fn == NULL) { /* asked before the constructor ran (another library's constructor) */
        fn = (clock_fn)dlsym(RTLD_NEXT, "clock_gettime");
        __atomic_store_n(&real_clock, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

static void read_offset(void) {
    char text[64];
    int fd = open(offset_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return; /* keep the last offset */
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0) return;
    text[got] = '\0';
    char *end = text;
    long long seconds = strtoll(text, &end, 10);
    if (end == text) return;
    __atomic_store_n(&offset_ns, (int64_t)seconds * NS, __ATOMIC_RELAXED);
}

static void maybe_reread(void) {
    struct timespec now;
    if (offset_path[0] == '\0' || real()(CLOCK_MONOTONIC, &now) != 0) return;
    int64_t t = (int64_t)now.tv_sec * NS + now.tv_nsec;
    int64_t due = __atomic_load_n(&next_read_ns, __ATOMIC_RELAXED);
    if (t < due) return;
    /* one thread reads; the others keep the offset they have */
    if (!__atomic_compare_exchange_n(&next_read_ns, &due, t + REREAD_NS, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return;
    int saved = errno; /* the caller sees the errno of its own call, never ours */
    read_offset();
    errno = saved;
}

__attribute__((constructor)) static void load(void) {
    const char *path = getenv("MMB_CLOCK_OFFSET_FILE");
    if (path != NULL) strncpy(offset_path, path, sizeof offset_path - 1);
    real();
    maybe_reread();
}

static int is_wall_clock(clockid_t id) {
    return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_TAI;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    int result = real()(id, ts);
    if (result != 0 || !is_wall_clock(id)) return result; /* a bad ts: EFAULT from libc */
    maybe_reread();
    int64_t total = (int64_t)ts->tv_sec * NS + ts->tv_nsec + __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
    ts->tv_sec = (time_t)(total / NS);
    ts->tv_nsec = (long)(total % NS);
    if (ts->tv_nsec < 0) {
        ts->tv_sec -= 1;
        ts->tv_nsec += NS;
    }
    return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
    if (tv != NULL) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    if (tz != NULL) memset(tz, 0, sizeof(struct timezone));
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
    if (out != NULL) *out = ts.tv_sec;
    return ts.tv_sec;
}
