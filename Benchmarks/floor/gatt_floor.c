/*
 * gatt_floor.c - the libdbus floor of the GATT benchmarks (issues 8 and 19), against ble-sim on the
 * bus in $DBUS_SYSTEM_BUS_ADDRESS, with no threads and no allocation beyond what libdbus does (and
 * fixed tables). swift-ble and bleak do the same work (Benchmarks/ble-bench,
 * Benchmarks/bleak_bench.py); Benchmarks/run_gatt.py runs them all.
 *
 * Two modes, the same GATT calls in both:
 *   same work (the default, impl "c-floor"): what a client that mirrors BlueZ's objects receives and
 *     decodes, done in C. One AddMatch for every signal org.bluez sends, so it gets what swift-ble
 *     and bleak get (the PropertiesChanged(Value) echo of every read, the GATT objects'
 *     InterfacesAdded, the MTU changes, ...), and every message it receives is parsed in full (a
 *     walk over the whole body). It keeps a characteristic mirror (path and UUID): one
 *     GetManagedObjects at start-up, then InterfacesAdded/InterfacesRemoved, so a connection needs
 *     no GetManagedObjects. This is the floor the targets of issue 19 are against.
 *   lean (--lean, impl "c-floor-lean"): the least D-Bus traffic a GATT client needs, issue 8's
 *     floor: matches for its device's Device1 changes (and the notifying characteristic's) only,
 *     GetManagedObjects after every connection, the signals it does not wait for dropped unparsed.
 *
 * usage: gatt_floor [--lean] CASE ARGS
 *        gatt_floor connect N                      Connect, ServicesResolved, the characteristics (x N)
 *        gatt_floor read SIZE N WARMUP             ReadValue of the SIZE-byte characteristic (20|512)
 *        gatt_floor write SIZE N WARMUP            WriteValue type=request
 *        gatt_floor wcmd SIZE N WARMUP WINDOW      WriteValue type=command, WINDOW calls in flight
 *        gatt_floor notify dbus|acquire N INTERVAL_US SIZE
 *                                                  StartNotify (PropertiesChanged) or AcquireNotify
 *                                                  (socket), then ble-sim's StartNotifications run
 *        gatt_floor scan N                         StartDiscovery until N devices were added
 *        gatt_floor memory N1,N2,...               connect peripherals 1..max, RSS at each count
 *
 * The peripherals and characteristics are those of Scenarios/tools/make_bench_gatt.py. Prints one
 * JSON line: impl, case, n, wall_s, ops_per_s, cpu_us_per_op, cs_per_op and vcs_per_op (getrusage
 * over the measured phase: CPU, voluntary + involuntary context switches and voluntary ones alone,
 * per operation), lat_*_us,
 * lost, rss_kb, peak_rss_kb and case-specific keys; memory adds rss_at, and lat_at and cpu_at: per
 * count N, the median latency and client CPU (us) of the 5 connections ending at connection N
 * (connections 1-5 for N < 5). With wake_probe.so preloaded, connect adds after_wake_p50_us (the
 * median time from a connection's last wake-up to its end) and wake_ups_p50. Exit 1 on any
 * failure.
 */
#define _GNU_SOURCE
#include <dbus/dbus.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BLUEZ "org.bluez"
#define ADAPTER "/org/bluez/hci0"
#define CHAR_IFACE "org.bluez.GattCharacteristic1"
#define DEVICE_IFACE "org.bluez.Device1"
#define UUID_READ20 "b0b00001-5b1e-4d2a-9f00-62656e636800"
#define UUID_READ512 "b0b00002-5b1e-4d2a-9f00-62656e636800"
#define UUID_WRITE "b0b00003-5b1e-4d2a-9f00-62656e636800"
#define UUID_NOTIFY "b0b00004-5b1e-4d2a-9f00-62656e636800"
#define OBJECT_MANAGER "org.freedesktop.DBus.ObjectManager"
#define CALL_TIMEOUT_MS 30000
#define IDLE_END_MS 2000
#define TREE_CHARACTERISTICS 20 /* the 5 x 4 tree of make_bench_gatt.py */
#define MAX_DEVICES 4096

static DBusConnection *conn;
static int lean;                /* --lean: issue 8's traffic (see the top) */
static volatile uint64_t sink;  /* what the parser read, so that the compiler keeps the walk */
static char resolve_path[128];  /* same work: the device being connected, while it is */
static int resolved;            /* ... and whether absorb() saw its ServicesResolved=true */
static uint8_t known[MAX_DEVICES]; /* the benchmark peripherals the floor knows, by index */

static void absorb(DBusMessage *m);

/* ------------------------------------------------------------------ clocks, memory, output */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

/* Voluntary + involuntary: the count perf's context-switches software event reads. */
static long context_switches(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* Voluntary alone: the process blocked (a wait for the bus); the rest are preemptions. */
static long voluntary_switches(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_nvcsw;
}

static long rss_kb(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* VmHWM, not ru_maxrss: the latter survives exec, so it would include the parent's RSS at fork. */
static long peak_rss_kb(void) {
    char line[256];
    long kb = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb;
}

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gatt_floor: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

/* wake_probe.c's readers, when run_gatt.py preloaded it (null otherwise). */
extern uint64_t wake_probe_last_ns(void) __attribute__((weak));
extern uint64_t wake_probe_count(void) __attribute__((weak));

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A measured phase: wall, CPU and context switches from start(), latencies in ns. */
struct phase {
    uint64_t wall0, cpu0, wall, cpu;
    long cs0, cs, vcs0, vcs;
    uint64_t *lat;
    size_t nlat;
};

static void phase_start(struct phase *p, size_t capacity) {
    p->lat = calloc(capacity ? capacity : 1, sizeof(uint64_t));
    if (!p->lat) die("out of memory");
    p->nlat = 0;
    p->wall0 = now_ns();
    p->cpu0 = cpu_ns();
    p->cs0 = context_switches();
    p->vcs0 = voluntary_switches();
}

static void phase_stop(struct phase *p) {
    p->wall = now_ns() - p->wall0;
    p->cpu = cpu_ns() - p->cpu0;
    p->cs = context_switches() - p->cs0;
    p->vcs = voluntary_switches() - p->vcs0;
}

/* Prints the common keys (without the closing brace): ops is what rates and CPU are per. */
static void print_common(const char *name, struct phase *p, size_t ops, double wall_s) {
    qsort(p->lat, p->nlat, sizeof(uint64_t), cmp_u64);
    double min = 0, p50 = 0, p99 = 0, max = 0;
    if (p->nlat) {
        min = p->lat[0] / 1e3;
        p50 = p->lat[(p->nlat - 1) / 2] / 1e3;
        size_t r99 = (size_t)(0.99 * p->nlat + 0.999999);
        p99 = p->lat[(r99 ? r99 : 1) - 1] / 1e3;
        max = p->lat[p->nlat - 1] / 1e3;
    }
    printf("{\"impl\":\"%s\",\"case\":\"%s\",\"n\":%zu,\"wall_s\":%.6f,\"ops_per_s\":%.3f,"
           "\"cpu_us_per_op\":%.3f,\"cs_per_op\":%.3f,\"vcs_per_op\":%.3f,\"lat_min_us\":%.3f,\"lat_p50_us\":%.3f,"
           "\"lat_p99_us\":%.3f,\"lat_max_us\":%.3f,\"rss_kb\":%ld,\"peak_rss_kb\":%ld",
           lean ? "c-floor-lean" : "c-floor", name, ops, wall_s, wall_s > 0 ? ops / wall_s : 0,
           ops ? p->cpu / 1e3 / ops : 0, ops ? (double)p->cs / ops : 0, ops ? (double)p->vcs / ops : 0, min, p50, p99, max, rss_kb(),
           peak_rss_kb());
}

/* ------------------------------------------------------------------ D-Bus helpers */

static DBusMessage *new_call(const char *dest, const char *path, const char *iface, const char *member) {
    DBusMessage *m = dbus_message_new_method_call(dest, path, iface, member);
    if (!m) die("out of memory");
    return m;
}

/* Same work: parses every queued message (the socket is not read). */
static void pump(void) {
    DBusMessage *m;
    while ((m = dbus_connection_pop_message(conn))) {
        absorb(m);
        dbus_message_unref(m);
    }
}

/* Sends and waits for the reply; dies on an error reply. The caller parses the reply. */
static DBusMessage *call(DBusMessage *m) {
    DBusError err;
    dbus_error_init(&err);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(conn, m, CALL_TIMEOUT_MS, &err);
    if (!reply) die("%s.%s on %s: %s: %s", dbus_message_get_interface(m), dbus_message_get_member(m),
                    dbus_message_get_path(m), err.name, err.message);
    dbus_message_unref(m);
    /* The signals that came meanwhile were queued: parse them now, as a client's reader would have
     * (and the queue does not grow). */
    if (!lean) pump();
    return reply;
}

static void call_simple(const char *path, const char *iface, const char *member) {
    dbus_message_unref(call(new_call(BLUEZ, path, iface, member)));
}

static void add_match(const char *rule) {
    DBusError err;
    dbus_error_init(&err);
    dbus_bus_add_match(conn, rule, &err);
    if (dbus_error_is_set(&err)) die("AddMatch %s: %s", rule, err.message);
}

static void append_empty_options(DBusMessageIter *it) {
    DBusMessageIter dict;
    dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "{sv}", &dict);
    dbus_message_iter_close_container(it, &dict);
}

/* Appends a{sv} {"type": <s type>}. */
static void append_type_option(DBusMessageIter *it, const char *type) {
    DBusMessageIter dict, entry, variant;
    const char *key = "type";
    dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "{sv}", &dict);
    dbus_message_iter_open_container(&dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "s", &variant);
    dbus_message_iter_append_basic(&variant, DBUS_TYPE_STRING, &type);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(&dict, &entry);
    dbus_message_iter_close_container(it, &dict);
}

static void append_bytes(DBusMessageIter *it, const unsigned char *bytes, int size) {
    DBusMessageIter array;
    dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "y", &array);
    dbus_message_iter_append_fixed_array(&array, DBUS_TYPE_BYTE, &bytes, size);
    dbus_message_iter_close_container(it, &array);
}

/* In an a{sv} iterator: positions `value` inside the variant of `key`; 0 when absent. */
static int find_property(DBusMessageIter *dict, const char *key, DBusMessageIter *value) {
    DBusMessageIter it = *dict;
    for (; dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&it)) {
        DBusMessageIter entry;
        const char *name;
        dbus_message_iter_recurse(&it, &entry);
        dbus_message_iter_get_basic(&entry, &name);
        if (strcmp(name, key) != 0) continue;
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, value);
        return 1;
    }
    return 0;
}

/* Calls fn(path, interface, a{sv} iterator, ctx) for every interface of every object. */
typedef void (*object_fn)(const char *path, const char *iface, DBusMessageIter *props, void *ctx);

/* `entry` is at the object path followed by a{sa{sv}}: one object of GetManagedObjects or the body
 * of InterfacesAdded. */
static void each_interface(DBusMessageIter *entry, object_fn fn, void *ctx) {
    DBusMessageIter ifaces;
    const char *path;
    dbus_message_iter_get_basic(entry, &path);
    dbus_message_iter_next(entry);
    dbus_message_iter_recurse(entry, &ifaces);
    for (; dbus_message_iter_get_arg_type(&ifaces) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&ifaces)) {
        DBusMessageIter ientry, props;
        const char *iface;
        dbus_message_iter_recurse(&ifaces, &ientry);
        dbus_message_iter_get_basic(&ientry, &iface);
        dbus_message_iter_next(&ientry);
        dbus_message_iter_recurse(&ientry, &props);
        fn(path, iface, &props, ctx);
    }
}

static void for_each_interface(DBusMessage *managed, object_fn fn, void *ctx) {
    DBusMessageIter top, objects;
    dbus_message_iter_init(managed, &top);
    dbus_message_iter_recurse(&top, &objects);
    for (; dbus_message_iter_get_arg_type(&objects) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&objects)) {
        DBusMessageIter entry;
        dbus_message_iter_recurse(&objects, &entry);
        each_interface(&entry, fn, ctx);
    }
}

static DBusMessage *managed_objects(void) {
    return call(new_call(BLUEZ, "/", OBJECT_MANAGER, "GetManagedObjects"));
}

/* Reads every value under the iterator, what a client decoding the message does: strings are
 * measured, byte arrays summed, containers and variants walked. */
static uint64_t walk(DBusMessageIter *it) {
    uint64_t acc = 0;
    for (int type; (type = dbus_message_iter_get_arg_type(it)) != DBUS_TYPE_INVALID; dbus_message_iter_next(it)) {
        DBusMessageIter sub;
        int element = type == DBUS_TYPE_ARRAY ? dbus_message_iter_get_element_type(it) : DBUS_TYPE_INVALID;
        if (element != DBUS_TYPE_INVALID && dbus_type_is_fixed(element) && element != DBUS_TYPE_UNIX_FD) {
            const unsigned char *bytes;
            int n = 0;
            dbus_message_iter_recurse(it, &sub);
            dbus_message_iter_get_fixed_array(&sub, &bytes, &n);
            if (element == DBUS_TYPE_BYTE)
                for (int i = 0; i < n; i++) acc += bytes[i];
            acc += (unsigned)n;
        } else if (dbus_type_is_container(type)) {
            dbus_message_iter_recurse(it, &sub);
            acc += walk(&sub);
        } else if (type == DBUS_TYPE_STRING || type == DBUS_TYPE_OBJECT_PATH || type == DBUS_TYPE_SIGNATURE) {
            const char *text;
            dbus_message_iter_get_basic(it, &text);
            acc += strlen(text);
        } else {
            DBusBasicValue value;
            memset(&value, 0, sizeof value);
            dbus_message_iter_get_basic(it, &value);
            if (type == DBUS_TYPE_UNIX_FD) close(value.fd); /* get_basic gave a duplicate */
            acc += value.u64;
        }
    }
    return acc;
}

/* ------------------------------------------------------------------ the GATT model the floor keeps */

struct lookup {
    const char *prefix;  /* device path + "/" */
    const char *uuid;    /* wanted characteristic, or NULL */
    char path[256];      /* the characteristic found */
    int characteristics; /* characteristics under the device */
};

static void lookup_fn(const char *path, const char *iface, DBusMessageIter *props, void *ctx) {
    struct lookup *l = ctx;
    size_t n = strlen(l->prefix);
    if (strcmp(iface, CHAR_IFACE) != 0 || strncmp(path, l->prefix, n) != 0) return;
    l->characteristics++;
    DBusMessageIter value;
    const char *uuid;
    if (l->uuid && find_property(props, "UUID", &value)) {
        dbus_message_iter_get_basic(&value, &uuid);
        if (strcasecmp(uuid, l->uuid) == 0) snprintf(l->path, sizeof l->path, "%s", path);
    }
}

static struct lookup lookup(const char *device, const char *uuid) {
    static char prefix[256];
    snprintf(prefix, sizeof prefix, "%s/", device);
    struct lookup l = {.prefix = prefix, .uuid = uuid};
    DBusMessage *reply = managed_objects();
    for_each_interface(reply, lookup_fn, &l);
    dbus_message_unref(reply);
    return l;
}

static void device_path(char *out, size_t size, int index) {
    snprintf(out, size, ADAPTER "/dev_B0_00_00_00_%02X_%02X", index >> 8, index & 0xff);
}

/* Is this a PropertiesChanged of Device1 at path with `key` = boolean `want`? */
static int device_changed(DBusMessage *m, const char *path, const char *key, dbus_bool_t want) {
    if (!dbus_message_is_signal(m, "org.freedesktop.DBus.Properties", "PropertiesChanged")) return 0;
    if (!dbus_message_has_path(m, path)) return 0;
    DBusMessageIter it, changed, value;
    const char *iface;
    dbus_message_iter_init(m, &it);
    dbus_message_iter_get_basic(&it, &iface);
    if (strcmp(iface, DEVICE_IFACE) != 0) return 0;
    dbus_message_iter_next(&it);
    dbus_message_iter_recurse(&it, &changed);
    if (!find_property(&changed, key, &value)) return 0;
    dbus_bool_t b;
    dbus_message_iter_get_basic(&value, &b);
    return b == want;
}

/* Waits for Device1.ServicesResolved=true on path (queued messages first). Same work: every
 * message goes through absorb(), which sets `resolved` (armed by connect_and_discover before its
 * Connect, since call() parses what comes with the reply, this signal included). */
static void wait_resolved(const char *path) {
    uint64_t deadline = now_ns() + (uint64_t)CALL_TIMEOUT_MS * 1000000u;
    for (;;) {
        DBusMessage *m;
        if (!lean) {
            pump();
            if (resolved) return;
        }
        while (lean && (m = dbus_connection_pop_message(conn))) {
            int done = device_changed(m, path, "ServicesResolved", TRUE);
            dbus_message_unref(m);
            if (done) return;
        }
        if (now_ns() > deadline) die("no ServicesResolved on %s", path);
        if (!dbus_connection_read_write(conn, 100)) die("disconnected from the bus");
    }
}

/* Index of a benchmark peripheral's device path (…/dev_B0_00_00_00_HH_LL), or 0. */
static int device_index(const char *path) {
    unsigned hi, lo;
    char rest;
    if (sscanf(path, ADAPTER "/dev_B0_00_00_00_%2X_%2X%c", &hi, &lo, &rest) != 2) return 0;
    return (int)(hi << 8 | lo);
}

/* Index of the benchmark peripheral an object is under (…/dev_B0_00_00_00_HH_LL/…), or 0. */
static int owner_index(const char *path) {
    unsigned hi, lo;
    int end = 0;
    if (sscanf(path, ADAPTER "/dev_B0_00_00_00_%2X_%2X%n", &hi, &lo, &end) != 2 || path[end] != '/') return 0;
    int index = (int)(hi << 8 | lo);
    return index < MAX_DEVICES ? index : 0;
}

/* ------------------------------------------------------------------ the mirror (same work) */

/* The characteristics by path, open addressing (a removed one leaves a tombstone), and their count
 * per benchmark peripheral (index 0: any other device). 8192 slots hold 100 peripherals' trees;
 * a client's map of its objects, without the properties it would also keep. */
enum { MIRROR_SLOTS = 8192, SLOT_FREE = 0, SLOT_USED, SLOT_REMOVED };
static struct mirrored {
    char path[112], uuid[40];
    int device, state;
} mirror[MIRROR_SLOTS];
static int mirror_count[MAX_DEVICES];

static uint32_t path_hash(const char *path) {
    uint32_t h = 2166136261u; /* FNV-1a */
    while (*path) h = (h ^ (unsigned char)*path++) * 16777619u;
    return h;
}

static struct mirrored *mirror_find(const char *path) {
    uint32_t h = path_hash(path);
    for (uint32_t i = 0; i < MIRROR_SLOTS; i++) {
        struct mirrored *e = &mirror[(h + i) & (MIRROR_SLOTS - 1)];
        if (e->state == SLOT_FREE) return NULL;
        if (e->state == SLOT_USED && strcmp(e->path, path) == 0) return e;
    }
    return NULL;
}

static void mirror_put(const char *path, const char *uuid) {
    /* Longer paths are no characteristic of the benchmark trees. */
    if (strlen(path) >= sizeof mirror[0].path || strlen(uuid) >= sizeof mirror[0].uuid) return;
    uint32_t h = path_hash(path);
    struct mirrored *slot = NULL;
    for (uint32_t i = 0; i < MIRROR_SLOTS; i++) {
        struct mirrored *e = &mirror[(h + i) & (MIRROR_SLOTS - 1)];
        if (e->state == SLOT_USED && strcmp(e->path, path) == 0) {
            strcpy(e->uuid, uuid);
            return;
        }
        if (e->state != SLOT_USED && !slot) slot = e;
        if (e->state == SLOT_FREE) break;
    }
    if (!slot) die("the characteristic mirror is full (%d)", MIRROR_SLOTS);
    strcpy(slot->path, path);
    strcpy(slot->uuid, uuid);
    slot->state = SLOT_USED;
    slot->device = owner_index(path);
    mirror_count[slot->device]++;
}

static void mirror_remove(const char *path) {
    struct mirrored *e = mirror_find(path);
    if (!e) return;
    e->state = SLOT_REMOVED;
    mirror_count[e->device]--;
}

/* The characteristic with uuid under peripheral `device` into out (256 bytes); 0 when absent. */
static int mirror_lookup(int device, const char *uuid, char *out) {
    for (int i = 0; i < MIRROR_SLOTS; i++) {
        if (mirror[i].state != SLOT_USED || mirror[i].device != device || strcasecmp(mirror[i].uuid, uuid) != 0)
            continue;
        snprintf(out, 256, "%s", mirror[i].path);
        return 1;
    }
    return 0;
}

/* An object's interface appeared (GetManagedObjects, InterfacesAdded): a characteristic into the
 * mirror, a benchmark peripheral known. */
static void object_added(const char *path, const char *iface, DBusMessageIter *props, void *ctx) {
    (void)ctx;
    DBusMessageIter value;
    if (strcmp(iface, CHAR_IFACE) == 0 && find_property(props, "UUID", &value)) {
        const char *uuid;
        dbus_message_iter_get_basic(&value, &uuid);
        mirror_put(path, uuid);
    } else if (strcmp(iface, DEVICE_IFACE) == 0) {
        int index = device_index(path);
        if (index > 0 && index < MAX_DEVICES) known[index] = 1;
    }
}

/* InterfacesRemoved (o, as). */
static void objects_removed(DBusMessage *m) {
    DBusMessageIter it, names;
    const char *path, *iface;
    dbus_message_iter_init(m, &it);
    dbus_message_iter_get_basic(&it, &path);
    dbus_message_iter_next(&it);
    dbus_message_iter_recurse(&it, &names);
    for (; dbus_message_iter_get_arg_type(&names) == DBUS_TYPE_STRING; dbus_message_iter_next(&names)) {
        dbus_message_iter_get_basic(&names, &iface);
        if (strcmp(iface, CHAR_IFACE) == 0) mirror_remove(path);
        else if (strcmp(iface, DEVICE_IFACE) == 0 && device_index(path) > 0 && device_index(path) < MAX_DEVICES)
            known[device_index(path)] = 0;
    }
}

/* Same work, for every message received: the whole body parsed, then what a mirroring client keeps
 * of it (the characteristics, the peripherals known, the ServicesResolved being waited for). */
static void absorb(DBusMessage *m) {
    DBusMessageIter it;
    if (dbus_message_iter_init(m, &it)) sink += walk(&it);
    if (dbus_message_get_type(m) != DBUS_MESSAGE_TYPE_SIGNAL) return;
    if (dbus_message_is_signal(m, OBJECT_MANAGER, "InterfacesAdded")) {
        dbus_message_iter_init(m, &it);
        each_interface(&it, object_added, NULL);
    } else if (dbus_message_is_signal(m, OBJECT_MANAGER, "InterfacesRemoved")) {
        objects_removed(m);
    } else if (resolve_path[0] && device_changed(m, resolve_path, "ServicesResolved", TRUE)) {
        resolved = 1;
    }
}

/* Same work, at start-up: the one match for everything org.bluez sends, and the mirror from one
 * GetManagedObjects (parsed in full too). */
static void start_mirror(void) {
    DBusError err;
    dbus_error_init(&err);
    dbus_bus_add_match(conn, "type='signal',sender='" BLUEZ "'", &err);
    if (dbus_error_is_set(&err)) die("AddMatch: %s", err.message);
    DBusMessage *reply = managed_objects();
    DBusMessageIter it;
    if (dbus_message_iter_init(reply, &it)) sink += walk(&it);
    for_each_interface(reply, object_added, NULL);
    dbus_message_unref(reply);
}

static void known_fn(const char *path, const char *iface, DBusMessageIter *props, void *ctx) {
    (void)props;
    uint8_t *known = ctx;
    int index = device_index(path);
    if (index > 0 && index < 4096 && strcmp(iface, DEVICE_IFACE) == 0) known[index] = 1;
}

/* Makes the devices 1..count known (lean: GetManagedObjects; same work: the mirror knows them),
 * then discovery for the missing ones. */
static void ensure_known(int count) {
    int missing = 0;
    if (lean) {
        DBusMessage *reply = managed_objects();
        for_each_interface(reply, known_fn, known);
        dbus_message_unref(reply);
    }
    for (int i = 1; i <= count; i++) missing += !known[i];
    if (!missing) return;
    if (lean)
        add_match("type='signal',sender='" BLUEZ "',interface='org.freedesktop.DBus.ObjectManager',"
                  "member='InterfacesAdded'");
    call_simple(ADAPTER, "org.bluez.Adapter1", "StartDiscovery");
    uint64_t deadline = now_ns() + 30000000000u;
    while (missing > 0) {
        DBusMessage *m;
        if (!lean) {
            pump();
            missing = 0;
            for (int i = 1; i <= count; i++) missing += !known[i];
        }
        while (lean && missing > 0 && (m = dbus_connection_pop_message(conn))) {
            if (dbus_message_is_signal(m, "org.freedesktop.DBus.ObjectManager", "InterfacesAdded")) {
                const char *added;
                DBusMessageIter it;
                dbus_message_iter_init(m, &it);
                dbus_message_iter_get_basic(&it, &added);
                int index = device_index(added);
                if (index >= 1 && index <= count && !known[index]) {
                    known[index] = 1;
                    missing--;
                }
            }
            dbus_message_unref(m);
        }
        if (now_ns() > deadline) die("%d peripherals not found", missing);
        if (missing > 0 && !dbus_connection_read_write(conn, 100)) die("disconnected from the bus");
    }
    call_simple(ADAPTER, "org.bluez.Adapter1", "StopDiscovery");
}

/* Lean only: the same-work match covers it. */
static void watch_device(const char *path) {
    if (!lean) return;
    char rule[300];
    snprintf(rule, sizeof rule,
             "type='signal',sender='" BLUEZ "',interface='org.freedesktop.DBus.Properties',"
             "member='PropertiesChanged',path='%s',arg0='" DEVICE_IFACE "'", path);
    add_match(rule);
}

/* Connect, wait ServicesResolved, the characteristics (lean: GetManagedObjects; same work: the
 * mirror): what a client does before its first GATT operation. Returns the characteristics seen
 * under the device. */
static int connect_and_discover(const char *path, const char *uuid, char *char_path) {
    if (lean) {
        call_simple(path, DEVICE_IFACE, "Connect");
        wait_resolved(path);
        struct lookup l = lookup(path, uuid);
        if (uuid) {
            if (!l.path[0]) die("no characteristic %s under %s", uuid, path);
            strcpy(char_path, l.path);
        }
        return l.characteristics;
    }
    int index = device_index(path);
    if (index < 1 || index >= MAX_DEVICES) die("%s is no benchmark peripheral", path);
    snprintf(resolve_path, sizeof resolve_path, "%s", path);
    resolved = 0;
    call_simple(path, DEVICE_IFACE, "Connect");
    wait_resolved(path);
    resolve_path[0] = 0;
    /* The GATT objects' InterfacesAdded may come after ServicesResolved=true. */
    uint64_t deadline = now_ns() + (uint64_t)IDLE_END_MS * 1000000u;
    while (mirror_count[index] < TREE_CHARACTERISTICS && now_ns() < deadline) {
        if (!dbus_connection_read_write(conn, 100)) die("disconnected from the bus");
        pump();
    }
    if (uuid && !mirror_lookup(index, uuid, char_path)) die("no characteristic %s under %s", uuid, path);
    return mirror_count[index];
}

/* What is waiting: lean drops it, same work parses it. */
static void drain(void) {
    DBusMessage *m;
    dbus_connection_read_write(conn, 0);
    if (!lean) pump();
    while ((m = dbus_connection_pop_message(conn))) dbus_message_unref(m);
}

/* ------------------------------------------------------------------ cases */

static int case_connect(int n) {
    char dev[128];
    device_path(dev, sizeof dev, 1);
    ensure_known(1);
    watch_device(dev);
    struct phase p;
    int characteristics = 0;
    int probed = wake_probe_last_ns && wake_probe_count;
    uint64_t *after_wake = calloc(n > 0 ? n : 1, sizeof(uint64_t));
    uint64_t *wake_ups = calloc(n > 0 ? n : 1, sizeof(uint64_t));
    if (!after_wake || !wake_ups) die("out of memory");
    phase_start(&p, n);
    for (int i = 0; i < n; i++) {
        uint64_t t0 = now_ns(), woken0 = probed ? wake_probe_count() : 0;
        characteristics = connect_and_discover(dev, NULL, NULL);
        uint64_t end = now_ns();
        p.lat[p.nlat++] = end - t0;
        if (probed) {
            uint64_t last = wake_probe_last_ns();
            after_wake[i] = end - (last > t0 ? last : t0);
            wake_ups[i] = wake_probe_count() - woken0;
        }
        if (characteristics != 20) die("discovered %d characteristics, expected 20", characteristics);
        call_simple(dev, DEVICE_IFACE, "Disconnect");
        drain();
    }
    phase_stop(&p);
    print_common("connect", &p, n, p.wall / 1e9);
    if (probed && n > 0) {
        qsort(after_wake, n, sizeof(uint64_t), cmp_u64);
        qsort(wake_ups, n, sizeof(uint64_t), cmp_u64);
        printf(",\"after_wake_p50_us\":%.3f,\"wake_ups_p50\":%llu", after_wake[(n - 1) / 2] / 1e3,
               (unsigned long long)wake_ups[(n - 1) / 2]);
    }
    printf(",\"characteristics\":%d}\n", characteristics);
    free(after_wake);
    free(wake_ups);
    return 0;
}

/* Connects peripheral 1 and finds the characteristic with uuid. */
static void setup_gatt(char *dev, char *char_path, const char *uuid) {
    device_path(dev, 128, 1);
    ensure_known(1);
    watch_device(dev);
    connect_and_discover(dev, uuid, char_path);
    drain();
}

static DBusMessage *read_call(const char *path) {
    DBusMessage *m = new_call(BLUEZ, path, CHAR_IFACE, "ReadValue");
    DBusMessageIter it;
    dbus_message_iter_init_append(m, &it);
    append_empty_options(&it);
    return m;
}

static DBusMessage *write_call(const char *path, const unsigned char *value, int size, const char *type) {
    DBusMessage *m = new_call(BLUEZ, path, CHAR_IFACE, "WriteValue");
    DBusMessageIter it;
    dbus_message_iter_init_append(m, &it);
    append_bytes(&it, value, size);
    append_type_option(&it, type);
    return m;
}

static int case_read(int size, int n, int warmup) {
    char dev[128], path[256];
    if (size != 20 && size != 512) die("read SIZE is 20 or 512");
    setup_gatt(dev, path, size == 20 ? UUID_READ20 : UUID_READ512);
    struct phase p;
    for (int i = -warmup; i < n; i++) {
        if (i == 0) phase_start(&p, n);
        uint64_t t0 = now_ns();
        DBusMessage *reply = call(read_call(path));
        DBusMessageIter it, array;
        int len = 0;
        const unsigned char *bytes;
        dbus_message_iter_init(reply, &it);
        dbus_message_iter_recurse(&it, &array);
        dbus_message_iter_get_fixed_array(&array, &bytes, &len);
        if (len != size) die("read %d bytes, expected %d", len, size);
        dbus_message_unref(reply);
        if (i >= 0) p.lat[p.nlat++] = now_ns() - t0;
    }
    phase_stop(&p);
    call_simple(dev, DEVICE_IFACE, "Disconnect");
    print_common(size == 20 ? "read-20" : "read-512", &p, n, p.wall / 1e9);
    printf("}\n");
    return 0;
}

static int case_write(int size, int n, int warmup) {
    char dev[128], path[256], name[32];
    unsigned char *value = calloc(size, 1);
    setup_gatt(dev, path, UUID_WRITE);
    struct phase p;
    for (int i = -warmup; i < n; i++) {
        if (i == 0) phase_start(&p, n);
        value[0] = (unsigned char)i;
        uint64_t t0 = now_ns();
        dbus_message_unref(call(write_call(path, value, size, "request")));
        if (i >= 0) p.lat[p.nlat++] = now_ns() - t0;
    }
    phase_stop(&p);
    call_simple(dev, DEVICE_IFACE, "Disconnect");
    snprintf(name, sizeof name, "write-%d", size);
    print_common(name, &p, n, p.wall / 1e9);
    printf("}\n");
    return 0;
}

/* Write commands with `window` in flight: send, then pop replies by serial. */
static int case_wcmd(int size, int n, int warmup, int window) {
    char dev[128], path[256], name[48];
    unsigned char *value = calloc(size, 1);
    enum { SLOTS = 4096 };
    static uint64_t started[SLOTS];
    if (window < 1 || window > 128) die("WINDOW is 1...128 (the bus allows 128 pending replies)");
    setup_gatt(dev, path, UUID_WRITE);
    struct phase p;
    int total = warmup + n, sent = 0, done = 0, inflight = 0;
    while (done < total) {
        if (done == warmup && sent == warmup) phase_start(&p, n);
        /* The warm-up ends with its last reply, so the measured phase starts with none in flight. */
        int limit = done < warmup ? warmup : total;
        while (inflight < window && sent < limit) {
            dbus_uint32_t serial;
            value[0] = (unsigned char)sent;
            DBusMessage *m = write_call(path, value, size, "command");
            uint64_t t0 = now_ns();
            if (!dbus_connection_send(conn, m, &serial)) die("out of memory");
            dbus_message_unref(m);
            started[serial % SLOTS] = t0;
            sent++;
            inflight++;
        }
        dbus_connection_flush(conn);
        DBusMessage *m;
        int got = 0;
        while ((m = dbus_connection_pop_message(conn))) {
            if (!lean) absorb(m);
            int type = dbus_message_get_type(m);
            if (type == DBUS_MESSAGE_TYPE_METHOD_RETURN || type == DBUS_MESSAGE_TYPE_ERROR) {
                if (type == DBUS_MESSAGE_TYPE_ERROR) die("WriteValue failed: %s", dbus_message_get_error_name(m));
                uint64_t t = now_ns() - started[dbus_message_get_reply_serial(m) % SLOTS];
                if (done >= warmup) p.lat[p.nlat++] = t;
                done++;
                inflight--;
                got = 1;
            }
            dbus_message_unref(m);
        }
        if (!got && done < total && !dbus_connection_read_write(conn, 1000)) die("disconnected from the bus");
    }
    phase_stop(&p);
    call_simple(dev, DEVICE_IFACE, "Disconnect");
    snprintf(name, sizeof name, window == 1 ? "wcmd-%d" : "wcmd-%d-w%d", size, window);
    print_common(name, &p, n, p.wall / 1e9);
    printf(",\"window\":%d}\n", window);
    return 0;
}

/* Notification bookkeeping: distinct sequence numbers and latency from the stamp. */
struct receiver {
    uint8_t *seen;
    int n, distinct;
    uint64_t last;
    struct phase *p;
};

static void receive_value(struct receiver *r, const unsigned char *bytes, int len) {
    if (len < 12) return;
    uint64_t t = now_ns(), stamp = 0;
    uint32_t seq = 0;
    for (int i = 7; i >= 0; i--) stamp = stamp << 8 | bytes[i];
    for (int i = 11; i >= 8; i--) seq = seq << 8 | bytes[i];
    if ((int)seq >= r->n || r->seen[seq]) return;
    r->seen[seq] = 1;
    r->distinct++;
    r->last = t;
    r->p->lat[r->p->nlat++] = t - stamp;
}

/* A PropertiesChanged of GattCharacteristic1 carrying Value. */
static void receive_signal(struct receiver *r, DBusMessage *m) {
    if (!dbus_message_is_signal(m, "org.freedesktop.DBus.Properties", "PropertiesChanged")) return;
    DBusMessageIter it, changed, value, array;
    const char *iface;
    dbus_message_iter_init(m, &it);
    dbus_message_iter_get_basic(&it, &iface);
    if (strcmp(iface, CHAR_IFACE) != 0) return;
    dbus_message_iter_next(&it);
    dbus_message_iter_recurse(&it, &changed);
    if (!find_property(&changed, "Value", &value)) return;
    const unsigned char *bytes;
    int len = 0;
    dbus_message_iter_recurse(&value, &array);
    dbus_message_iter_get_fixed_array(&array, &bytes, &len);
    receive_value(r, bytes, len);
}

static void start_run(int n, int interval, int size) {
    const char *address = "B0:00:00:00:00:01", *uuid = UUID_NOTIFY;
    dbus_uint32_t count = n, us = interval, bytes = size;
    DBusMessage *m = new_call("org.swiftble.Simulator", "/org/swiftble/Simulator", "org.swiftble.Simulator1",
                              "StartNotifications");
    dbus_message_append_args(m, DBUS_TYPE_STRING, &address, DBUS_TYPE_STRING, &uuid, DBUS_TYPE_UINT32, &count,
                             DBUS_TYPE_UINT32, &us, DBUS_TYPE_UINT32, &bytes, DBUS_TYPE_INVALID);
    /* Not awaited: its reply may come after the first values (another sender). */
    if (!dbus_connection_send(conn, m, NULL)) die("out of memory");
    dbus_message_unref(m);
    dbus_connection_flush(conn);
}

static int case_notify(const char *mode, int n, int interval, int size) {
    char dev[128], path[256], name[48], rule[512];
    int acquire = strcmp(mode, "acquire") == 0;
    if (!acquire && strcmp(mode, "dbus") != 0) die("notify MODE is dbus or acquire");
    setup_gatt(dev, path, UUID_NOTIFY);
    struct phase p;
    struct receiver r = {.seen = calloc(n, 1), .n = n, .p = &p};
    int fd = -1, bus_fd = -1;
    if (!lean && !dbus_connection_get_unix_fd(conn, &bus_fd)) die("no bus socket");
    if (acquire) {
        DBusMessage *m = new_call(BLUEZ, path, CHAR_IFACE, "AcquireNotify");
        DBusMessageIter it;
        dbus_message_iter_init_append(m, &it);
        append_empty_options(&it);
        DBusMessage *reply = call(m);
        dbus_uint16_t mtu;
        DBusError err;
        dbus_error_init(&err);
        if (!dbus_message_get_args(reply, &err, DBUS_TYPE_UNIX_FD, &fd, DBUS_TYPE_UINT16, &mtu, DBUS_TYPE_INVALID))
            die("AcquireNotify reply: %s", err.message);
        dbus_message_unref(reply);
    } else {
        /* Same work: the characteristic's PropertiesChanged come through the broad match. */
        if (lean) {
            snprintf(rule, sizeof rule,
                     "type='signal',sender='" BLUEZ "',interface='org.freedesktop.DBus.Properties',"
                     "member='PropertiesChanged',path='%s',arg0='" CHAR_IFACE "'", path);
            add_match(rule);
        }
        DBusMessage *m = new_call(BLUEZ, path, CHAR_IFACE, "StartNotify");
        dbus_message_unref(call(m));
    }
    drain();
    phase_start(&p, n);
    start_run(n, interval, size);
    uint64_t idle_since = now_ns();
    unsigned char buf[1024];
    while (r.distinct < n && now_ns() - idle_since < (uint64_t)IDLE_END_MS * 1000000u) {
        int before = r.distinct;
        if (acquire) {
            /* Same work: the bus too, which a client's event loop would also be reading. */
            struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN}, {.fd = bus_fd, .events = POLLIN}};
            if (poll(pfd, lean ? 1 : 2, 100) > 0) {
                ssize_t len;
                while ((len = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) receive_value(&r, buf, (int)len);
                if (len == 0) die("the notify socket closed");
                if (!lean && pfd[1].revents) {
                    if (!dbus_connection_read_write(conn, 0)) die("disconnected from the bus");
                    pump();
                }
            }
        } else {
            DBusMessage *m;
            while ((m = dbus_connection_pop_message(conn))) {
                if (!lean) absorb(m);
                receive_signal(&r, m);
                dbus_message_unref(m);
            }
            if (r.distinct < n && !dbus_connection_read_write(conn, 100)) die("disconnected from the bus");
        }
        if (r.distinct != before) idle_since = now_ns();
    }
    phase_stop(&p);
    if (acquire) close(fd);
    else call_simple(path, CHAR_IFACE, "StopNotify");
    call_simple(dev, DEVICE_IFACE, "Disconnect");
    double wall = r.distinct ? (r.last - p.wall0) / 1e9 : p.wall / 1e9;
    snprintf(name, sizeof name, "notify-%s-%s-%d", acquire ? "acquire" : "dbus", interval ? "paced" : "burst", size);
    /* CPU per received notification; the idle tail after a loss is in it, as it is for everyone. */
    print_common(name, &p, r.distinct, wall);
    printf(",\"sent\":%d,\"lost\":%d,\"interval_us\":%d,\"size\":%d}\n", n, n - r.distinct, interval, size);
    return 0;
}

static int case_scan(int n) {
    if (lean)
        add_match("type='signal',sender='" BLUEZ "',interface='org.freedesktop.DBus.ObjectManager',"
                  "member='InterfacesAdded'");
    struct phase p;
    int count = 0;
    phase_start(&p, 1);
    call_simple(ADAPTER, "org.bluez.Adapter1", "StartDiscovery");
    uint64_t deadline = now_ns() + 120000000000u;
    while (count < n) {
        DBusMessage *m;
        while ((m = dbus_connection_pop_message(conn))) {
            if (!lean) absorb(m);
            if (dbus_message_is_signal(m, "org.freedesktop.DBus.ObjectManager", "InterfacesAdded")) {
                DBusMessageIter it, ifaces, entry;
                const char *added, *iface;
                dbus_message_iter_init(m, &it);
                dbus_message_iter_get_basic(&it, &added);
                dbus_message_iter_next(&it);
                dbus_message_iter_recurse(&it, &ifaces);
                for (; dbus_message_iter_get_arg_type(&ifaces) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&ifaces)) {
                    dbus_message_iter_recurse(&ifaces, &entry);
                    dbus_message_iter_get_basic(&entry, &iface);
                    if (strcmp(iface, DEVICE_IFACE) == 0) count++;
                }
            }
            dbus_message_unref(m);
        }
        if (now_ns() > deadline) die("only %d of %d advertisers reported", count, n);
        if (count < n && !dbus_connection_read_write(conn, 100)) die("disconnected from the bus");
    }
    p.lat[p.nlat++] = now_ns() - p.wall0;
    phase_stop(&p);
    call_simple(ADAPTER, "org.bluez.Adapter1", "StopDiscovery");
    char name[32];
    snprintf(name, sizeof name, "scan-%d", n);
    print_common(name, &p, n, p.wall / 1e9);
    printf("}\n");
    return 0;
}

/* Median in us of the 5 values (ns) ending at the n-th (the first 5 for n < 5), as Python's. */
static double window_median_us(const uint64_t *values, int total, int n) {
    uint64_t w[5];
    int from = n < 5 ? 0 : n - 5, k = (from + 5 < total ? from + 5 : total) - from;
    memcpy(w, values + from, k * sizeof *w);
    qsort(w, k, sizeof *w, cmp_u64);
    return (k % 2 ? (double)w[k / 2] : (w[k / 2 - 1] + w[k / 2]) / 2.0) / 1e3;
}

static int case_memory(const char *list) {
    int counts[16], ncounts = 0, max = 0;
    for (const char *s = list; *s && ncounts < 16; s = strchr(s, ',') ? strchr(s, ',') + 1 : s + strlen(s)) {
        counts[ncounts] = atoi(s);
        if (counts[ncounts] > max) max = counts[ncounts];
        ncounts++;
    }
    if (max < 1 || max > 4095) die("memory counts are 1...4095");
    ensure_known(max);
    long base = rss_kb(), rss[16];
    /* Per connection, in order: its latency, and the client CPU of its whole step (match, connect,
     * discovery, the drain after it). */
    uint64_t *lat = calloc(max, sizeof *lat), *cpu = calloc(max, sizeof *cpu);
    if (!lat || !cpu) die("out of memory");
    struct phase p;
    phase_start(&p, max);
    char dev[128];
    for (int i = 1, next = 0; i <= max; i++) {
        uint64_t c0 = cpu_ns();
        device_path(dev, sizeof dev, i);
        watch_device(dev);
        uint64_t t0 = now_ns();
        connect_and_discover(dev, NULL, NULL);
        p.lat[p.nlat++] = lat[i - 1] = now_ns() - t0;
        drain();
        cpu[i - 1] = cpu_ns() - c0;
        while (next < ncounts && counts[next] == i) rss[next++] = rss_kb();
    }
    phase_stop(&p);
    for (int i = 1; i <= max; i++) {
        device_path(dev, sizeof dev, i);
        call_simple(dev, DEVICE_IFACE, "Disconnect");
    }
    print_common("memory", &p, max, p.wall / 1e9);
    printf(",\"rss_base_kb\":%ld,\"rss_at\":{", base);
    for (int i = 0; i < ncounts; i++) printf("%s\"%d\":%ld", i ? "," : "", counts[i], rss[i]);
    printf("},\"lat_at\":{");
    for (int i = 0; i < ncounts; i++)
        printf("%s\"%d\":%.3f", i ? "," : "", counts[i], window_median_us(lat, max, counts[i]));
    printf("},\"cpu_at\":{");
    for (int i = 0; i < ncounts; i++)
        printf("%s\"%d\":%.3f", i ? "," : "", counts[i], window_median_us(cpu, max, counts[i]));
    printf("}}\n");
    return 0;
}

int main(int argc, char **argv) {
    DBusError err;
    dbus_error_init(&err);
    if (argc > 1 && strcmp(argv[1], "--lean") == 0) {
        lean = 1;
        argv++;
        argc--;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: see the comment at the top of gatt_floor.c\n");
        return 2;
    }
    conn = dbus_bus_get_private(DBUS_BUS_SYSTEM, &err);
    if (!conn) die("cannot connect to the bus: %s", err.message);
    dbus_connection_set_exit_on_disconnect(conn, FALSE);
    if (!lean) start_mirror();
    const char *what = argv[1];
    if (strcmp(what, "connect") == 0) return case_connect(atoi(argv[2]));
    if (strcmp(what, "read") == 0 && argc == 5) return case_read(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    if (strcmp(what, "write") == 0 && argc == 5) return case_write(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    if (strcmp(what, "wcmd") == 0 && argc == 6)
        return case_wcmd(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    if (strcmp(what, "notify") == 0 && argc == 6)
        return case_notify(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    if (strcmp(what, "scan") == 0) return case_scan(atoi(argv[2]));
    if (strcmp(what, "memory") == 0) return case_memory(argv[2]);
    fprintf(stderr, "gatt_floor: unknown or incomplete case %s\n", what);
    return 2;
}
