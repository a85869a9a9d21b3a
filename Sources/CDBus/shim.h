#ifndef CDBUS_SHIM_H
#define CDBUS_SHIM_H

#include <dbus/dbus.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <pthread.h>

/* Macros that Swift cannot import (casts of character literals, expressions). */
static const int cdbus_type_invalid = DBUS_TYPE_INVALID;
static const int cdbus_timeout_infinite = DBUS_TIMEOUT_INFINITE;
static const unsigned int cdbus_watch_readable = DBUS_WATCH_READABLE;
static const unsigned int cdbus_watch_writable = DBUS_WATCH_WRITABLE;
static const unsigned int cdbus_watch_error = DBUS_WATCH_ERROR;
static const unsigned int cdbus_watch_hangup = DBUS_WATCH_HANGUP;

/* A DBusError lives on the stack in C; this keeps it in one heap cell so Swift can pass its address. */
static inline DBusError *cdbus_error_new(void) {
    DBusError *e = (DBusError *)dbus_malloc(sizeof(DBusError));
    if (e) dbus_error_init(e);
    return e;
}

static inline void cdbus_error_delete(DBusError *e) {
    if (!e) return;
    dbus_error_free(e);
    dbus_free(e);
}

/* recvmmsg(2) and struct mmsghdr are declared only under _GNU_SOURCE, which the system module
   is built without: the same call (bound to glibc's symbol) and the same layout, under names of
   our own. */
struct cdbus_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

extern int cdbus_recvmmsg(int fd, struct cdbus_mmsghdr *vector, unsigned int count, int flags,
                          struct timespec *timeout) __asm__("recvmmsg");

/* pthread_setname_np(3), also declared only under _GNU_SOURCE: names the calling thread
   (at most 15 bytes) for top -H, perf and gdb. */
extern int cdbus_pthread_setname_np(pthread_t thread, const char *name) __asm__("pthread_setname_np");

#endif
