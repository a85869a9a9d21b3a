/* A D-Bus client in C (libdbus) against ble-sim, as against bluetoothd: discover the heart-rate
 * monitor, connect, find its Body Sensor Location characteristic by UUID, read it, disconnect.
 * Prints the value in hex and exits 0 when it is 01 (chest), 1 otherwise.
 *
 *   cc read_location.c $(pkg-config --cflags --libs dbus-1) -o read_location
 *   DBUS_SYSTEM_BUS_ADDRESS=... ./read_location
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <string.h>

#define ADAPTER "/org/bluez/hci0"
#define DEVICE ADAPTER "/dev_C4_7C_8D_6A_11_22"
#define LOCATION_UUID "00002a38-0000-1000-8000-00805f9b34fb"

static DBusConnection *bus;

static int fail(const char *what, DBusError *error) {
    fprintf(stderr, "read_location: %s: %s\n", what, error && dbus_error_is_set(error) ? error->message : "failed");
    return 1;
}

/* Calls a method with no arguments, or one `a{sv}` left empty; returns the reply or NULL. */
static DBusMessage *call(const char *path, const char *interface, const char *member, int empty_options,
                         DBusError *error) {
    DBusMessage *message = dbus_message_new_method_call("org.bluez", path, interface, member);
    if (empty_options) {
        DBusMessageIter args, dict;
        dbus_message_iter_init_append(message, &args);
        dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &dict);
        dbus_message_iter_close_container(&args, &dict);
    }
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(bus, message, 20000, error);
    dbus_message_unref(message);
    return reply;
}

/* Device1.<name> (a boolean property), or -1 when the device does not exist (yet). */
static int device_flag(const char *name) {
    DBusMessage *message = dbus_message_new_method_call(
        "org.bluez", DEVICE, "org.freedesktop.DBus.Properties", "Get");
    const char *interface = "org.bluez.Device1";
    dbus_message_append_args(message, DBUS_TYPE_STRING, &interface, DBUS_TYPE_STRING, &name, DBUS_TYPE_INVALID);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(bus, message, 20000, NULL);
    dbus_message_unref(message);
    if (!reply) return -1;
    DBusMessageIter iter, variant;
    dbus_bool_t value = FALSE;
    dbus_message_iter_init(reply, &iter);
    dbus_message_iter_recurse(&iter, &variant);
    dbus_message_iter_get_basic(&variant, &value);
    dbus_message_unref(reply);
    return value ? 1 : 0;
}

/* Waits up to a second for bluetoothd's next signal (the match rule set in main lets through
 * only its own): something changed, or time to look again. Returns 0 after 30 calls. */
static int next_signal(void) {
    static int calls;
    if (++calls > 30) return 0;
    DBusMessage *message;
    dbus_connection_read_write(bus, 1000);
    while ((message = dbus_connection_pop_message(bus))) dbus_message_unref(message);
    return 1;
}

/* The path of the characteristic LOCATION_UUID below DEVICE, from GetManagedObjects. */
static int find_location(char *out, size_t size, DBusError *error) {
    DBusMessage *reply = call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", 0, error);
    if (!reply) return 0;
    DBusMessageIter objects, entry, interfaces, interface, properties, property, value;
    int found = 0;
    dbus_message_iter_init(reply, &objects);
    dbus_message_iter_recurse(&objects, &entry);
    for (; !found && dbus_message_iter_get_arg_type(&entry) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&entry)) {
        DBusMessageIter pair;
        const char *path;
        dbus_message_iter_recurse(&entry, &pair);
        dbus_message_iter_get_basic(&pair, &path);
        if (strncmp(path, DEVICE "/", strlen(DEVICE) + 1) != 0) continue;
        dbus_message_iter_next(&pair);
        dbus_message_iter_recurse(&pair, &interfaces);
        for (; dbus_message_iter_get_arg_type(&interfaces) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&interfaces)) {
            const char *name;
            dbus_message_iter_recurse(&interfaces, &interface);
            dbus_message_iter_get_basic(&interface, &name);
            if (strcmp(name, "org.bluez.GattCharacteristic1") != 0) continue;
            dbus_message_iter_next(&interface);
            dbus_message_iter_recurse(&interface, &properties);
            for (; dbus_message_iter_get_arg_type(&properties) == DBUS_TYPE_DICT_ENTRY;
                 dbus_message_iter_next(&properties)) {
                const char *key, *uuid;
                dbus_message_iter_recurse(&properties, &property);
                dbus_message_iter_get_basic(&property, &key);
                if (strcmp(key, "UUID") != 0) continue;
                dbus_message_iter_next(&property);
                dbus_message_iter_recurse(&property, &value);
                dbus_message_iter_get_basic(&value, &uuid);
                if (strcasecmp(uuid, LOCATION_UUID) == 0 && strlen(path) < size) {
                    strcpy(out, path);
                    found = 1;
                }
            }
        }
    }
    dbus_message_unref(reply);
    return found;
}

int main(void) {
    DBusError error;
    dbus_error_init(&error);
    if (!(bus = dbus_bus_get(DBUS_BUS_SYSTEM, &error))) return fail("the system bus", &error);
    dbus_bus_add_match(bus, "type='signal',sender='org.bluez'", &error);
    if (dbus_error_is_set(&error)) return fail("AddMatch", &error);

    DBusMessage *reply = call(ADAPTER, "org.bluez.Adapter1", "StartDiscovery", 0, &error);
    if (!reply) return fail("StartDiscovery", &error);
    dbus_message_unref(reply);
    while (device_flag("Connected") < 0)  /* until the monitor is seen */
        if (!next_signal()) return fail("the monitor never showed up", NULL);
    if (!(reply = call(DEVICE, "org.bluez.Device1", "Connect", 0, &error))) return fail("Connect", &error);
    dbus_message_unref(reply);
    while (device_flag("ServicesResolved") != 1)
        if (!next_signal()) return fail("the services were never resolved", NULL);

    char path[256];
    if (!find_location(path, sizeof path, &error)) return fail("the Body Sensor Location characteristic", &error);
    if (!(reply = call(path, "org.bluez.GattCharacteristic1", "ReadValue", 1, &error))) return fail("ReadValue", &error);
    unsigned char *bytes;
    int count = 0;
    dbus_message_get_args(reply, &error, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &bytes, &count, DBUS_TYPE_INVALID);
    printf("%s:", path);
    for (int i = 0; i < count; i++) printf(" %02x", bytes[i]);
    printf("\n");
    int chest = count == 1 && bytes[0] == 0x01;
    dbus_message_unref(reply);

    if ((reply = call(DEVICE, "org.bluez.Device1", "Disconnect", 0, &error))) dbus_message_unref(reply);
    return chest ? 0 : 1;
}
