// SPDX-License-Identifier: Apache-2.0
// The floor under any polling sensor daemon on this machine (issue 12): the on-CPU time of a
// thread that wakes once per period and does nothing else, then the same plus the six sysfs-style
// reads of a magnetometer and an accelerometer sample, then plus a ~300-byte datagram to a peer
// at most every 100 ms (a PropertiesChanged signal at qiblad's default max-signal-rate of 10 Hz:
// every other period at 50 ms, every period at 700 ms). No Swift, no D-Bus, no model: what a
// sample costs before qiblad adds anything. With a bus address (built with libdbus, WITH_DBUS), a
// fourth variant sends a real PropertiesChanged signal through libdbus at the same moments instead
// of the bare datagram (four double properties, as qiblad's heading group): the floor of any
// daemon that speaks D-Bus through libdbus. Built and run by scripts/bench-wake-floor.sh.
//
// usage: wake-floor PERIOD_MS ITERATIONS DIR [BUS_ADDRESS]
// WAKE_FLOOR_ONLY=VARIANT runs only that variant (scripts/bench-ab.sh, beside two qiblad builds).
// WAKE_FLOOR_FILES=P1,...,P6 reads those six existing files instead of creating them in DIR
// (scripts/bench-vs-iio-sensor-proxy.sh: the umockdev testbed's attributes, through its preload).
// Prints one line per variant: "variant µs-per-iteration voluntary-switches-per-iteration".
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef WITH_DBUS
#include <dbus/dbus.h>

// org.freedesktop.DBus.Properties.PropertiesChanged("io.github.qiblad.Qibla1", {4 × name: <double>}, []).
static int send_properties_changed(DBusConnection *connection, double value) {
    static const char *names[4] = {"Heading", "QiblaTurn", "HeadingError", "MagneticHeading"};
    const char *interface = "io.github.qiblad.Qibla1";
    DBusMessage *signal = dbus_message_new_signal("/io/github/qiblad/Qibla1", "org.freedesktop.DBus.Properties",
                                                  "PropertiesChanged");
    if (!signal) return -1;
    DBusMessageIter body, changed, entry, variant, invalidated;
    dbus_message_iter_init_append(signal, &body);
    dbus_message_iter_append_basic(&body, DBUS_TYPE_STRING, &interface);
    dbus_message_iter_open_container(&body, DBUS_TYPE_ARRAY, "{sv}", &changed);
    for (int i = 0; i < 4; i++) {
        double v = value + i;
        dbus_message_iter_open_container(&changed, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
        dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &names[i]);
        dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "d", &variant);
        dbus_message_iter_append_basic(&variant, DBUS_TYPE_DOUBLE, &v);
        dbus_message_iter_close_container(&entry, &variant);
        dbus_message_iter_close_container(&changed, &entry);
    }
    dbus_message_iter_close_container(&body, &changed);
    dbus_message_iter_open_container(&body, DBUS_TYPE_ARRAY, "s", &invalidated);
    dbus_message_iter_close_container(&body, &invalidated);
    dbus_bool_t sent = dbus_connection_send(connection, signal, NULL);
    dbus_message_unref(signal);
    return sent ? 0 : -1;
}
#endif

// Field 1 of /proc/thread-self/schedstat: nanoseconds on the CPU (Documentation/scheduler/sched-stats.rst).
static double on_cpu_ns(void) {
    char buffer[128] = {0};
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    return n > 0 ? strtod(buffer, NULL) : 0;
}

static long voluntary_switches(void) {
    char line[256];
    long value = 0;
    FILE *status = fopen("/proc/thread-self/status", "r");
    if (!status) return 0;
    while (fgets(line, sizeof line, status))
        if (sscanf(line, "voluntary_ctxt_switches: %ld", &value) == 1) break;
    fclose(status);
    return value;
}

#ifdef WITH_DBUS
typedef DBusConnection *DBusConnectionPtr;
#else
typedef void *DBusConnectionPtr;
#endif

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s PERIOD_MS ITERATIONS DIR [BUS_ADDRESS]\n", argv[0]);
        return 2;
    }
    int period_ms = atoi(argv[1]), iterations = atoi(argv[2]);
    const char *names[6] = {"in_magn_x_raw", "in_magn_y_raw", "in_magn_z_raw", "in_accel_x_raw", "in_accel_y_raw", "in_accel_z_raw"};
    int files[6];
    char *given = getenv("WAKE_FLOOR_FILES") ? strdup(getenv("WAKE_FLOOR_FILES")) : NULL, *cursor = given;
    for (int i = 0; i < 6; i++) {
        char path[4096];
        if (given) {
            char *next = strsep(&cursor, ",");
            if (!next) { fputs("WAKE_FLOOR_FILES: six paths separated by commas\n", stderr); return 2; }
            snprintf(path, sizeof path, "%s", next);
            files[i] = open(path, O_RDONLY | O_CLOEXEC);
            if (files[i] < 0) { perror(path); return 1; }
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", argv[3], names[i]);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, "-1234\n", 6) != 6) { perror(path); return 1; }
        files[i] = fd;
    }
    free(given);
    int stop = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);  // what a stop-aware sleep polls, as qiblad's does
    int pair[2];
    if (stop < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) { perror("setup"); return 1; }
    pid_t reader = fork();
    if (reader == 0) {  // the peer (dbus-daemon's part): drains the socket; its time is not counted
        close(pair[0]);
        char sink[4096];
        while (read(pair[1], sink, sizeof sink) > 0) {}
        _exit(0);
    }
    close(pair[1]);
    char message[300];
    memset(message, 'x', sizeof message);

    DBusConnectionPtr connection = NULL;
#ifdef WITH_DBUS
    if (argc == 5) {
        DBusError error;
        dbus_error_init(&error);
        connection = dbus_connection_open_private(argv[4], &error);
        if (!connection || !dbus_bus_register(connection, &error)) {
            fprintf(stderr, "%s: %s\n", argv[4], error.message);
            return 1;
        }
    }
#endif
    static const char *variants[4] = {"wake", "wake+6reads", "wake+6reads+signal", "wake+6reads+libdbus-signal"};
    int signal_every = period_ms >= 100 ? 1 : (100 + period_ms - 1) / period_ms;  // at most 10 signals a second
    const char *only = getenv("WAKE_FLOOR_ONLY");
    for (int variant = 0; variant < (connection ? 4 : 3); variant++) {
        if (only && strcmp(only, variants[variant]) != 0) continue;
        double cpu0 = on_cpu_ns();
        long switches0 = voluntary_switches();
        long sum = 0;
        for (int i = 0; i < iterations; i++) {
            struct pollfd pfd = {.fd = stop, .events = POLLIN};
            poll(&pfd, 1, period_ms);
            if (variant >= 1) {
                for (int f = 0; f < 6; f++) {
                    char buffer[32];
                    ssize_t n = pread(files[f], buffer, sizeof buffer - 1, 0);
                    if (n > 0) { buffer[n] = 0; sum += strtol(buffer, NULL, 10); }
                }
            }
            if (variant == 2 && i % signal_every == 0) {
                struct iovec iov = {.iov_base = message, .iov_len = sizeof message};
                struct msghdr header = {.msg_iov = &iov, .msg_iovlen = 1};
                if (sendmsg(pair[0], &header, MSG_NOSIGNAL) < 0) { perror("sendmsg"); return 1; }
            }
#ifdef WITH_DBUS
            if (variant == 3 && i % signal_every == 0) {
                if (send_properties_changed(connection, sum + i) != 0) { fputs("libdbus: out of memory\n", stderr); return 1; }
                dbus_connection_flush(connection);
            }
#endif
        }
        double cpu = on_cpu_ns() - cpu0;
        long switches = voluntary_switches() - switches0;
        printf("%s %.1f %.2f\n", variants[variant], cpu / 1e3 / iterations, (double)switches / iterations);
        fflush(stdout);
        if (sum == 42) puts("");  // keep the reads
    }
#ifdef WITH_DBUS
    if (connection) {
        dbus_connection_close(connection);
        dbus_connection_unref(connection);
    }
#endif
    close(pair[0]);
    waitpid(reader, NULL, 0);
    return 0;
}
