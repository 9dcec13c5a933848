/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libmosquitto, loaded when keventd.yaml configures a broker and not
 * before: a keventd without an mqtt: section maps neither it nor the TLS
 * libraries it pulls in (libssl, libcrypto: 1.7 MB of RSS).  Each function
 * the MQTT client uses is a pointer in kmosq, called as kmosq.NAME(...)
 * for mosquitto_NAME(...).
 */
#ifndef KEVENT_MOSQ_DL_H
#define KEVENT_MOSQ_DL_H

#include <mosquitto.h>

/* the library's file, as its package installs it */
#define KMOSQ_SONAME "libmosquitto.so.1"

#define KMOSQ_SYMS(X)                \
	X(connack_string)            \
	X(connect_async)             \
	X(connect_bind_v5)           \
	X(connect_callback_set)      \
	X(destroy)                   \
	X(disconnect)                \
	X(disconnect_callback_set)   \
	X(int_option)                \
	X(lib_cleanup)               \
	X(lib_init)                  \
	X(log_callback_set)          \
	X(loop_misc)                 \
	X(loop_read)                 \
	X(loop_write)                \
	X(max_inflight_messages_set) \
	X(message_callback_set)      \
	X(new)                       \
	X(property_add_int32)        \
	X(property_free_all)         \
	X(publish)                   \
	X(publish_callback_set)      \
	X(reason_string)             \
	X(reconnect_async)           \
	X(socket)                    \
	X(strerror)                  \
	X(subscribe)                 \
	X(tls_set)                   \
	X(username_pw_set)           \
	X(want_write)                \
	X(will_set)

struct kmosq_api {
#define KMOSQ_FIELD(name) __typeof__(mosquitto_##name) *name;
	KMOSQ_SYMS(KMOSQ_FIELD)
#undef KMOSQ_FIELD
};

extern struct kmosq_api kmosq;

/* Loads the library and every function of KMOSQ_SYMS, once: 0, or
 * -ENOENT / -ENOSYS with *why (dlerror()'s words) when it cannot be had;
 * the MQTT client then stays off. */
int kmosq_load(const char **why);

#endif
