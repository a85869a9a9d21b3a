/*
 * wake_probe.c - a library run_gatt.py preloads (LD_PRELOAD) into every client of the cases
 * that ask for it: when one of a thread's waits for I/O (poll, ppoll, epoll_wait, epoll_pwait)
 * returns with something ready, it notes the time (CLOCK_MONOTONIC) and counts the wake-up,
 * for that thread alone.
 *
 * A client reads its own thread's figures around an operation (wake_probe_last_ns,
 * wake_probe_count; found with dlsym, or as weak symbols, so that it runs without the library
 * too): the time from the operation's last wake-up to its end is the client's own work on
 * the way out (reading the answer, handling it, resuming the caller), the rest of the latency
 * is waiting for the daemon. libdbus waits with poll, swift-ble's I/O thread with epoll_wait,
 * asyncio (bleak) with epoll_wait; each client measures on the thread that waits for its
 * answers.
 *
 * Built by build.sh; a wrapped wait costs one clock read more when it returns something.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>

static __thread uint64_t last_ns;
static __thread uint64_t wake_ups;

/* The calling thread's last return from a wait with something ready (ns, CLOCK_MONOTONIC). */
uint64_t wake_probe_last_ns(void) { return last_ns; }

/* How many of the calling thread's waits returned with something ready. */
uint64_t wake_probe_count(void) { return wake_ups; }

static void woke(int ready) {
    if (ready <= 0) return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    last_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    wake_ups++;
}

/* The next definition of `name` (libc's): looked up once per function; two threads racing to
 * look it up store the same pointer. */
static void *next(void **slot, const char *name) {
    if (!*slot) *slot = dlsym(RTLD_NEXT, name);
    return *slot;
}

int poll(struct pollfd *fds, nfds_t count, int timeout) {
    static void *real;
    int ready = ((int (*)(struct pollfd *, nfds_t, int))next(&real, "poll"))(fds, count, timeout);
    woke(ready);
    return ready;
}

int ppoll(struct pollfd *fds, nfds_t count, const struct timespec *timeout, const sigset_t *mask) {
    static void *real;
    int ready = ((int (*)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))next(&real, "ppoll"))(
        fds, count, timeout, mask);
    woke(ready);
    return ready;
}

int epoll_wait(int epfd, struct epoll_event *events, int max, int timeout) {
    static void *real;
    int ready = ((int (*)(int, struct epoll_event *, int, int))next(&real, "epoll_wait"))(epfd, events, max, timeout);
    woke(ready);
    return ready;
}

int epoll_pwait(int epfd, struct epoll_event *events, int max, int timeout, const sigset_t *mask) {
    static void *real;
    int ready = ((int (*)(int, struct epoll_event *, int, int, const sigset_t *))next(&real, "epoll_pwait"))(
        epfd, events, max, timeout, mask);
    woke(ready);
    return ready;
}
