/*
 * dbus_floor.c - the libdbus-1 "floor" for swift-ble's D-Bus method-call benchmark.
 *
 * The floor is the cheapest plain-C client we can write: it tells how much a
 * method-call round trip costs on this machine through dbus-daemon, so that the
 * swift-ble client can be judged against it (see Benchmarks/run_dbus_calls.py).
 *
 * Every mode connects to the bus in $DBUS_SYSTEM_BUS_ADDRESS.
 *
 *   dbus_floor server
 *       Owns org.swiftble.Bench and exports on /org/swiftble/Bench, interface
 *       org.swiftble.Bench1:
 *         Echo(ay) -> ay    returns the bytes it was given
 *         Quit()            replies, then the server exits 0
 *       and, on CHAR_PATH, interface org.bluez.GattCharacteristic1:
 *         ReadValue(a{sv}) -> ay   what bluetoothd 5.66 does on the D-Bus side of a read
 *                                  (src/gatt-client.c characteristic_read_value, chrc_read_cb,
 *                                  write_characteristic_cb, read_op_cb): parses the options,
 *                                  stores the value in its cache, emits PropertiesChanged(Value)
 *                                  (gdbus, flushed at once), then replies from the cache.
 *                                  The ATT exchange with the peer is not modelled (nor is it
 *                                  in ble-sim), so this is a floor for bluetoothd's D-Bus work.
 *       Prints "ready" on stdout once the name is owned.
 *
 *   dbus_floor seq SIZE N WARMUP
 *       WARMUP, then N sequential Echo calls of SIZE bytes (blocking calls).
 *
 *   dbus_floor pipe SIZE N WINDOW WARMUP
 *       WARMUP, then N Echo calls of SIZE bytes with up to WINDOW in flight
 *       (pending-call notify callbacks, one read/write/dispatch loop).
 *
 *   dbus_floor read N WARMUP
 *       WARMUP, then N sequential ReadValue calls (empty options) on CHAR_PATH.
 *
 *   dbus_floor quit
 *       Calls Quit() on the server (used by the runner to stop it).
 *
 * A client prints exactly one JSON line on stdout:
 *   {"impl":"c-floor","mode":"seq"|"pipe"|"read","size":S,"n":N,"window":W,"wall_s":...,
 *    "calls_per_s":...,"p50_us":...,"p90_us":...,"p99_us":...,"max_us":...,
 *    "cpu_us_per_call":...}
 * window is 1 for seq. Latency of a call runs from just before the message is
 * handed to libdbus to the moment its reply is back (CLOCK_MONOTONIC); building
 * the message is outside it but inside wall_s and CPU. CPU is getrusage(RUSAGE_SELF)
 * user + system time over the measured calls only (warm-up excluded). Percentiles
 * are nearest-rank. Any error (error reply, wrong reply length, lost connection)
 * prints a message on stderr and exits 1; bad arguments exit 2.
 *
 * Build: Benchmarks/floor/build.sh [OUTDIR], or
 *   gcc -O2 -o dbus_floor dbus_floor.c $(pkg-config --cflags --libs dbus-1)
 */
#define _POSIX_C_SOURCE 200809L

#include <dbus/dbus.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#define BENCH_NAME "org.swiftble.Bench"
#define BENCH_PATH "/org/swiftble/Bench"
#define BENCH_IFACE "org.swiftble.Bench1"

/* A characteristic path of the length bluetoothd gives one, and the 1-byte value of Body Sensor
 * Location (2A38) in Scenarios/heart-rate-monitor.json, which ble-bench sim-read reads. */
#define CHAR_PATH "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0009/char000e"
#define CHAR_IFACE "org.bluez.GattCharacteristic1"
#define PROPERTIES_IFACE "org.freedesktop.DBus.Properties"
static const unsigned char peer_value[] = {0x01};

/* libdbus's default call timeout (25 s), as a real client would use. */
#define CALL_TIMEOUT_MS DBUS_TIMEOUT_USE_DEFAULT

/* ------------------------------------------------------------ helpers */

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("dbus_floor: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void fail_dbus(const char *what, const DBusError *err)
{
    if (dbus_error_is_set(err))
        fail("%s: %s: %s", what, err->name, err->message);
    fail("%s failed", what);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* User + system CPU of this process, in ns (getrusage has µs resolution). */
static uint64_t cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t us = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
                  (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    return us * 1000u;
}

static void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        fail("out of memory");
    return p;
}

static DBusConnection *bus_connect(void)
{
    const char *address = getenv("DBUS_SYSTEM_BUS_ADDRESS");
    if (!address || !*address)
        fail("DBUS_SYSTEM_BUS_ADDRESS is not set");

    DBusError err;
    dbus_error_init(&err);
    DBusConnection *conn = dbus_connection_open_private(address, &err);
    if (!conn)
        fail_dbus("connect", &err);
    dbus_connection_set_exit_on_disconnect(conn, FALSE);
    if (!dbus_bus_register(conn, &err))
        fail_dbus("Hello", &err);
    return conn;
}

static void bus_disconnect(DBusConnection *conn)
{
    dbus_connection_close(conn);
    dbus_connection_unref(conn);
}

/* If msg has signature "ay", points bytes and len at its payload and returns 1. */
static int get_byte_array(DBusMessage *msg, const unsigned char **bytes, int *len)
{
    DBusMessageIter args, array;
    if (!dbus_message_has_signature(msg, "ay") || !dbus_message_iter_init(msg, &args))
        return 0;
    dbus_message_iter_recurse(&args, &array);
    dbus_message_iter_get_fixed_array(&array, bytes, len);
    return 1;
}

/* ------------------------------------------------------------ server */

static int quit_requested;

static DBusHandlerResult send_reply(DBusConnection *conn, DBusMessage *reply)
{
    if (!reply || !dbus_connection_send(conn, reply, NULL))
        fail("out of memory");
    dbus_message_unref(reply);
    return DBUS_HANDLER_RESULT_HANDLED;
}

static DBusHandlerResult handle_echo(DBusConnection *conn, DBusMessage *call)
{
    const unsigned char *bytes = NULL;
    int len = 0;
    if (!get_byte_array(call, &bytes, &len))
        return send_reply(conn, dbus_message_new_error(call, DBUS_ERROR_INVALID_ARGS,
                                                       "Echo takes one argument of type ay"));

    DBusMessage *reply = dbus_message_new_method_return(call);
    if (!reply || !dbus_message_append_args(reply, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &bytes, len,
                                            DBUS_TYPE_INVALID))
        fail("out of memory");
    return send_reply(conn, reply);
}

static DBusHandlerResult handle_quit(DBusConnection *conn, DBusMessage *call)
{
    send_reply(conn, dbus_message_new_method_return(call));
    dbus_connection_flush(conn);
    quit_requested = 1;
    return DBUS_HANDLER_RESULT_HANDLED;
}

/* bluetoothd's attribute cache of the characteristic (gatt_db_attribute value). */
static struct {
    unsigned char *bytes;
    size_t len;
} cache;

/* parse_options in src/gatt-client.c: keys compared case-insensitively, offset must be q. */
static int parse_read_options(DBusMessage *call, uint16_t *offset)
{
    DBusMessageIter args, dict;
    if (!dbus_message_iter_init(call, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY)
        return -1;
    dbus_message_iter_recurse(&args, &dict);
    while (dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY) {
        DBusMessageIter entry, value;
        const char *key;
        dbus_message_iter_recurse(&dict, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &value);
        if (strcasecmp(key, "offset") == 0) {
            if (dbus_message_iter_get_arg_type(&value) != DBUS_TYPE_UINT16)
                return -1;
            dbus_message_iter_get_basic(&value, offset);
        }
        dbus_message_iter_next(&dict);
    }
    return 0;
}

/* gatt_db_attribute_reset + gatt_db_attribute_write of the peer's answer. */
static void cache_store(const unsigned char *bytes, size_t len)
{
    free(cache.bytes);
    cache.bytes = xmalloc(len);
    memcpy(cache.bytes, bytes, len);
    cache.len = len;
}

static void append_cached_value(DBusMessageIter *iter)
{
    DBusMessageIter array;
    const unsigned char *bytes = cache.bytes;
    if (!dbus_message_iter_open_container(iter, DBUS_TYPE_ARRAY, "y", &array) ||
        !dbus_message_iter_append_fixed_array(&array, DBUS_TYPE_BYTE, &bytes, (int)cache.len) ||
        !dbus_message_iter_close_container(iter, &array))
        fail("out of memory");
}

/* gdbus process_properties_from_interface: PropertiesChanged(s iface, a{sv} {Value}, as []). */
static void emit_value_changed(DBusConnection *conn)
{
    DBusMessage *signal = dbus_message_new_signal(CHAR_PATH, PROPERTIES_IFACE, "PropertiesChanged");
    DBusMessageIter iter, dict, entry, variant, invalidated;
    const char *iface = CHAR_IFACE, *name = "Value";
    if (!signal)
        fail("out of memory");
    dbus_message_iter_init_append(signal, &iter);
    if (!dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &iface) ||
        !dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{sv}", &dict) ||
        !dbus_message_iter_open_container(&dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry) ||
        !dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &name) ||
        !dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "ay", &variant))
        fail("out of memory");
    append_cached_value(&variant);
    if (!dbus_message_iter_close_container(&entry, &variant) || !dbus_message_iter_close_container(&dict, &entry) ||
        !dbus_message_iter_close_container(&iter, &dict) ||
        !dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "s", &invalidated) ||
        !dbus_message_iter_close_container(&iter, &invalidated))
        fail("out of memory");
    if (!dbus_connection_send(conn, signal, NULL))
        fail("out of memory");
    dbus_message_unref(signal);
}

static DBusHandlerResult handle_read_value(DBusConnection *conn, DBusMessage *call)
{
    uint16_t offset = 0;
    if (!dbus_message_has_signature(call, "a{sv}") || parse_read_options(call, &offset) != 0 || offset != 0)
        return send_reply(conn, dbus_message_new_error(call, "org.bluez.Error.InvalidArguments", "Invalid arguments"));
    cache_store(peer_value, sizeof peer_value);
    emit_value_changed(conn);
    DBusMessage *reply = dbus_message_new_method_return(call);
    if (!reply)
        fail("out of memory");
    DBusMessageIter iter;
    dbus_message_iter_init_append(reply, &iter);
    append_cached_value(&iter);
    return send_reply(conn, reply);
}

static DBusHandlerResult char_object(DBusConnection *conn, DBusMessage *msg, void *user_data)
{
    (void)user_data;
    if (dbus_message_is_method_call(msg, CHAR_IFACE, "ReadValue"))
        return handle_read_value(conn, msg);
    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
}

static DBusHandlerResult bench_object(DBusConnection *conn, DBusMessage *msg, void *user_data)
{
    (void)user_data;
    if (dbus_message_is_method_call(msg, BENCH_IFACE, "Echo"))
        return handle_echo(conn, msg);
    if (dbus_message_is_method_call(msg, BENCH_IFACE, "Quit"))
        return handle_quit(conn, msg);
    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED; /* libdbus answers UnknownMethod */
}

static int run_server(void)
{
    static const DBusObjectPathVTable vtable = {.message_function = bench_object};
    static const DBusObjectPathVTable char_vtable = {.message_function = char_object};
    DBusConnection *conn = bus_connect();
    if (!dbus_connection_register_object_path(conn, BENCH_PATH, &vtable, NULL) ||
        !dbus_connection_register_object_path(conn, CHAR_PATH, &char_vtable, NULL))
        fail("out of memory");

    DBusError err;
    dbus_error_init(&err);
    int owned = dbus_bus_request_name(conn, BENCH_NAME, DBUS_NAME_FLAG_DO_NOT_QUEUE, &err);
    if (owned == -1)
        fail_dbus("RequestName", &err);
    if (owned != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER)
        fail("RequestName: %s is already owned", BENCH_NAME);

    puts("ready");
    fflush(stdout);

    while (!quit_requested)
        if (!dbus_connection_read_write_dispatch(conn, -1))
            fail("server: disconnected from the bus");
    bus_disconnect(conn);
    return 0;
}

/* ------------------------------------------------------------ clients: common */

static DBusMessage *new_echo_call(const unsigned char *payload, uint32_t size)
{
    DBusMessage *call = dbus_message_new_method_call(BENCH_NAME, BENCH_PATH, BENCH_IFACE, "Echo");
    if (!call || !dbus_message_append_args(call, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &payload, (int)size,
                                           DBUS_TYPE_INVALID))
        fail("out of memory");
    return call;
}

/* Exits unless reply is a method return carrying exactly `size` bytes. */
static void check_echo_reply(DBusMessage *reply, uint32_t size)
{
    if (dbus_message_get_type(reply) == DBUS_MESSAGE_TYPE_ERROR) {
        DBusError err;
        dbus_error_init(&err);
        dbus_set_error_from_message(&err, reply);
        fail_dbus("Echo", &err);
    }
    const unsigned char *bytes;
    int len = -1;
    if (!get_byte_array(reply, &bytes, &len))
        fail("Echo: reply has signature '%s', expected 'ay'", dbus_message_get_signature(reply));
    if ((uint32_t)len != size)
        fail("Echo: reply has %d bytes, expected %u", len, size);
}

static unsigned char *new_payload(uint32_t size)
{
    unsigned char *payload = xmalloc(size);
    for (uint32_t i = 0; i < size; i++)
        payload[i] = (unsigned char)(i * 31u + 7u);
    return payload;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted[0..n), in µs. */
static double percentile_us(const uint64_t *sorted, uint32_t n, unsigned permille)
{
    uint64_t rank = ((uint64_t)n * permille + 999u) / 1000u;
    return sorted[rank ? rank - 1 : 0] / 1e3;
}

struct measurement {
    const char *mode;
    uint32_t size, n, window;
    uint64_t wall_ns, cpu_ns;
    uint64_t *latency_ns; /* n entries; sorted by print_result */
};

static void print_result(struct measurement *m)
{
    qsort(m->latency_ns, m->n, sizeof *m->latency_ns, compare_u64);
    double wall_s = m->wall_ns / 1e9;
    printf("{\"impl\":\"c-floor\",\"mode\":\"%s\",\"size\":%u,\"n\":%u,\"window\":%u,"
           "\"wall_s\":%.6f,\"calls_per_s\":%.1f,\"p50_us\":%.2f,\"p90_us\":%.2f,"
           "\"p99_us\":%.2f,\"max_us\":%.2f,\"cpu_us_per_call\":%.3f}\n",
           m->mode, m->size, m->n, m->window, wall_s, m->n / wall_s,
           percentile_us(m->latency_ns, m->n, 500), percentile_us(m->latency_ns, m->n, 900),
           percentile_us(m->latency_ns, m->n, 990), m->latency_ns[m->n - 1] / 1e3,
           m->cpu_ns / 1e3 / m->n);
    fflush(stdout);
}

/* ------------------------------------------------------------ client: seq */

/* One blocking Echo call; returns its latency in ns. */
static uint64_t echo_blocking(DBusConnection *conn, const unsigned char *payload, uint32_t size)
{
    DBusError err;
    dbus_error_init(&err);
    DBusMessage *call = new_echo_call(payload, size);

    uint64_t start = mono_ns();
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(conn, call, CALL_TIMEOUT_MS, &err);
    uint64_t end = mono_ns();

    dbus_message_unref(call);
    if (!reply)
        fail_dbus("Echo", &err);
    check_echo_reply(reply, size);
    dbus_message_unref(reply);
    return end - start;
}

static int run_seq(uint32_t size, uint32_t n, uint32_t warmup)
{
    DBusConnection *conn = bus_connect();
    unsigned char *payload = new_payload(size);
    struct measurement m = {.mode = "seq", .size = size, .n = n, .window = 1,
                            .latency_ns = xmalloc(sizeof(uint64_t) * n)};

    for (uint32_t i = 0; i < warmup; i++)
        echo_blocking(conn, payload, size);

    uint64_t cpu0 = cpu_ns(), wall0 = mono_ns();
    for (uint32_t i = 0; i < n; i++)
        m.latency_ns[i] = echo_blocking(conn, payload, size);
    m.wall_ns = mono_ns() - wall0;
    m.cpu_ns = cpu_ns() - cpu0;

    print_result(&m);
    bus_disconnect(conn);
    free(m.latency_ns);
    free(payload);
    return 0;
}

/* ------------------------------------------------------------ client: pipe */

/* The one pipeline of this process; the notify callback gets a call's index. */
static struct {
    DBusConnection *conn;
    const unsigned char *payload;
    uint32_t size, window;
    uint32_t sent, done;
    uint64_t *sent_at_ns, *latency_ns; /* indexed by call */
} pipeline;

static void on_echo_reply(DBusPendingCall *pending, void *user_data)
{
    uint64_t now = mono_ns();
    uint32_t index = (uint32_t)(uintptr_t)user_data;

    DBusMessage *reply = dbus_pending_call_steal_reply(pending);
    if (!reply)
        fail("Echo: pending call completed without a reply");
    check_echo_reply(reply, pipeline.size);
    dbus_message_unref(reply);
    dbus_pending_call_unref(pending);

    pipeline.latency_ns[index] = now - pipeline.sent_at_ns[index];
    pipeline.done++;
}

static void send_echo_async(uint32_t index)
{
    DBusMessage *call = new_echo_call(pipeline.payload, pipeline.size);
    DBusPendingCall *pending = NULL;

    pipeline.sent_at_ns[index] = mono_ns();
    if (!dbus_connection_send_with_reply(pipeline.conn, call, &pending, CALL_TIMEOUT_MS))
        fail("out of memory");
    if (!pending)
        fail("Echo: connection is closed");
    if (!dbus_pending_call_set_notify(pending, on_echo_reply, (void *)(uintptr_t)index, NULL))
        fail("out of memory");
    dbus_message_unref(call);
}

/* Makes `count` calls, keeping up to pipeline.window in flight. */
static void run_pipeline(uint32_t count)
{
    pipeline.sent = pipeline.done = 0;
    while (pipeline.done < count) {
        while (pipeline.sent < count && pipeline.sent - pipeline.done < pipeline.window)
            send_echo_async(pipeline.sent++);
        if (!dbus_connection_read_write_dispatch(pipeline.conn, -1))
            fail("Echo: disconnected from the bus");
    }
}

static int run_pipe(uint32_t size, uint32_t n, uint32_t window, uint32_t warmup)
{
    uint32_t slots = n > warmup ? n : warmup;
    pipeline.conn = bus_connect();
    pipeline.payload = new_payload(size);
    pipeline.size = size;
    pipeline.window = window;
    pipeline.sent_at_ns = xmalloc(sizeof(uint64_t) * slots);
    pipeline.latency_ns = xmalloc(sizeof(uint64_t) * slots);

    run_pipeline(warmup);

    struct measurement m = {.mode = "pipe", .size = size, .n = n, .window = window,
                            .latency_ns = pipeline.latency_ns};
    uint64_t cpu0 = cpu_ns(), wall0 = mono_ns();
    run_pipeline(n);
    m.wall_ns = mono_ns() - wall0;
    m.cpu_ns = cpu_ns() - cpu0;

    print_result(&m);
    bus_disconnect(pipeline.conn);
    free(pipeline.sent_at_ns);
    free(pipeline.latency_ns);
    free((void *)pipeline.payload);
    return 0;
}

/* ------------------------------------------------------------ client: read */

/* One blocking ReadValue with empty options; returns its latency in ns. */
static uint64_t read_blocking(DBusConnection *conn)
{
    DBusError err;
    dbus_error_init(&err);
    DBusMessage *call = dbus_message_new_method_call(BENCH_NAME, CHAR_PATH, CHAR_IFACE, "ReadValue");
    DBusMessageIter iter, dict;
    if (!call)
        fail("out of memory");
    dbus_message_iter_init_append(call, &iter);
    if (!dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{sv}", &dict) ||
        !dbus_message_iter_close_container(&iter, &dict))
        fail("out of memory");

    uint64_t start = mono_ns();
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(conn, call, CALL_TIMEOUT_MS, &err);
    uint64_t end = mono_ns();

    dbus_message_unref(call);
    if (!reply)
        fail_dbus("ReadValue", &err);
    const unsigned char *bytes;
    int len = -1;
    if (!get_byte_array(reply, &bytes, &len) || (size_t)len != sizeof peer_value)
        fail("ReadValue: unexpected reply");
    dbus_message_unref(reply);
    return end - start;
}

static int run_read(uint32_t n, uint32_t warmup)
{
    DBusConnection *conn = bus_connect();
    struct measurement m = {.mode = "read", .size = sizeof peer_value, .n = n, .window = 1,
                            .latency_ns = xmalloc(sizeof(uint64_t) * n)};
    for (uint32_t i = 0; i < warmup; i++)
        read_blocking(conn);
    uint64_t cpu0 = cpu_ns(), wall0 = mono_ns();
    for (uint32_t i = 0; i < n; i++)
        m.latency_ns[i] = read_blocking(conn);
    m.wall_ns = mono_ns() - wall0;
    m.cpu_ns = cpu_ns() - cpu0;
    print_result(&m);
    bus_disconnect(conn);
    free(m.latency_ns);
    return 0;
}

/* ------------------------------------------------------------ client: quit */

static int run_quit(void)
{
    DBusConnection *conn = bus_connect();
    DBusMessage *call = dbus_message_new_method_call(BENCH_NAME, BENCH_PATH, BENCH_IFACE, "Quit");
    if (!call)
        fail("out of memory");
    DBusError err;
    dbus_error_init(&err);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(conn, call, 5000, &err);
    if (!reply)
        fail_dbus("Quit", &err);
    dbus_message_unref(reply);
    dbus_message_unref(call);
    bus_disconnect(conn);
    return 0;
}

/* ------------------------------------------------------------ main */

static int usage(void)
{
    fputs("usage: dbus_floor server\n"
          "       dbus_floor seq SIZE N WARMUP\n"
          "       dbus_floor pipe SIZE N WINDOW WARMUP\n"
          "       dbus_floor read N WARMUP\n"
          "       dbus_floor quit\n"
          "The bus address is taken from $DBUS_SYSTEM_BUS_ADDRESS.\n",
          stderr);
    return 2;
}

/* Parses a decimal integer in [min, max] into *out; returns 0 if it is not one. */
static int parse_u32(const char *text, uint32_t min, uint32_t max, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-' || value < min || value > max)
        return 0;
    *out = (uint32_t)value;
    return 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    const uint32_t max_size = DBUS_MAXIMUM_ARRAY_LENGTH;
    uint32_t size, n, window, warmup;

    if (strcmp(mode, "server") == 0 && argc == 2)
        return run_server();
    if (strcmp(mode, "quit") == 0 && argc == 2)
        return run_quit();
    if (strcmp(mode, "seq") == 0 && argc == 5 &&
        parse_u32(argv[2], 0, max_size, &size) &&
        parse_u32(argv[3], 1, UINT32_MAX, &n) &&
        parse_u32(argv[4], 0, UINT32_MAX, &warmup))
        return run_seq(size, n, warmup);
    if (strcmp(mode, "pipe") == 0 && argc == 6 &&
        parse_u32(argv[2], 0, max_size, &size) &&
        parse_u32(argv[3], 1, UINT32_MAX, &n) &&
        parse_u32(argv[4], 1, UINT32_MAX, &window) &&
        parse_u32(argv[5], 0, UINT32_MAX, &warmup))
        return run_pipe(size, n, window, warmup);
    if (strcmp(mode, "read") == 0 && argc == 4 &&
        parse_u32(argv[2], 1, UINT32_MAX, &n) &&
        parse_u32(argv[3], 0, UINT32_MAX, &warmup))
        return run_read(n, warmup);
    return usage();
}
