// SPDX-License-Identifier: GPL-2.0-or-later
#include "dbus.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"

void kdbus_object_path(const char *object, struct strbuf *out)
{
	static const char hex[] = "0123456789abcdef";
	if (strcmp(object, "/") == 0) {
		strbuf_putc(out, '/');
		return;
	}
	for (const char *p = object[0] == '/' ? object + 1 : object;;) {
		const char *end = strchrnul(p, '/');
		strbuf_putc(out, '/');
		if (end == p)
			strbuf_putc(out, '_');
		for (const char *c = p; c < end; c++) {
			unsigned char u = (unsigned char)*c;
			if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
			    (u >= '0' && u <= '9')) {
				strbuf_putc(out, *c);
			} else {
				strbuf_putc(out, '_');
				strbuf_putc(out, hex[u >> 4]);
				strbuf_putc(out, hex[u & 15]);
			}
		}
		if (!*end)
			break;
		p = end + 1;
	}
}

#if KEVENT_DBUS
#include <systemd/sd-bus.h>

#include "busloop.h"

/* Retries to connect: after 1 s, doubling, at most every 30 s. */
#define RETRY_FIRST_NS (1000000000ull)
#define RETRY_MAX_NS   (30 * 1000000000ull)

struct kdbus {
	sd_bus *bus; /* NULL while not connected */
	struct kloop *loop;
	struct kbusloop *bl;
	struct ktimer *retry; /* the next attempt to connect, while not connected */
	uint64_t retry_ns;    /* the wait before it */
	uint64_t sent, dropped;
	uint64_t unconnected; /* signals not sent since the connection went */
	bool failing;	      /* the last emit failed: log the next success */
};

/* The bus's answer to RequestName (org.freedesktop.DBus). */
enum { NAME_PRIMARY_OWNER = 1, NAME_IN_QUEUE = 2, NAME_EXISTS = 3, NAME_ALREADY_OWNER = 4 };

static int on_name_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	(void)userdata;
	(void)ret_error;
	const sd_bus_error *e = sd_bus_message_get_error(m);
	uint32_t r = 0;
	if (e)
		log_warning("D-Bus: cannot own the name " KDBUS_NAME " (%s): event signals go on "
			    "from keventd's unique name, which listeners that match on the name "
			    "do not see; see keventd(8)",
			    e->name);
	else if (sd_bus_message_read(m, "u", &r) < 0)
		log_warning("D-Bus: cannot read the bus's answer about the name " KDBUS_NAME);
	else if (r == NAME_IN_QUEUE || r == NAME_EXISTS)
		log_warning("D-Bus: the name " KDBUS_NAME " is owned by another connection; event "
			    "signals go on from keventd's unique name, and keventd takes the "
			    "name once it is free");
	return 0;
}

/* The bus tells each connection which names it got and lost. */
static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	(void)userdata;
	(void)ret_error;
	const char *name = NULL;
	bool got = sd_bus_message_is_signal(m, "org.freedesktop.DBus", "NameAcquired");
	if (!got && !sd_bus_message_is_signal(m, "org.freedesktop.DBus", "NameLost"))
		return 0;
	if (sd_bus_message_read(m, "s", &name) < 0 || !name || strcmp(name, KDBUS_NAME) != 0)
		return 0;
	if (got)
		log_info("D-Bus: owns the name " KDBUS_NAME ": event signals come from it");
	else
		log_warning("D-Bus: lost the name " KDBUS_NAME ": event signals go on from "
			    "keventd's unique name");
	return 0;
}

bool kdbus_available(void)
{
	return true;
}

static void disconnect(struct kdbus *b)
{
	kbusloop_free(TAKE_PTR(b->bl));
	b->bus = sd_bus_close_unref(b->bus);
}

static int connect_bus(struct kdbus *b);

static void on_retry(struct ktimer *t, void *userdata)
{
	struct kdbus *b = userdata;
	(void)t;
	b->retry = NULL; /* freed after it fires */
	(void)connect_bus(b);
}

/* Not connected: try again later, more slowly each time. */
static void schedule_retry(struct kdbus *b)
{
	b->retry_ns = b->retry_ns ? b->retry_ns * 2 : RETRY_FIRST_NS;
	if (b->retry_ns > RETRY_MAX_NS)
		b->retry_ns = RETRY_MAX_NS;
	if (kloop_add_timer(b->loop, now_monotonic_ns() + b->retry_ns, on_retry, b, &b->retry) < 0)
		b->retry = NULL;
}

static void lost(void *userdata, int r)
{
	struct kdbus *b = userdata;
	log_warning("D-Bus: connection lost (%s): event signals dropped until it is back",
		    strerror(-r));
	disconnect(b);
	b->retry_ns = 0;
	schedule_retry(b);
}

/* Connects, asks for the name and watches the connection; when the bus
 * is not there (yet: keventd starts before dbus.socket at boot), says so
 * and tries again later.  A negative errno only when out of memory. */
static int connect_bus(struct kdbus *b)
{
	bool first = !b->retry_ns;
	int r = sd_bus_open_system(&b->bus);
	if (r >= 0)
		r = sd_bus_add_filter(b->bus, NULL, on_message, b);
	/* queued first on the connection: the bus has handled it before any signal */
	if (r >= 0)
		r = sd_bus_request_name_async(b->bus, NULL, KDBUS_NAME, SD_BUS_NAME_QUEUE,
					      on_name_reply, b);
	if (r >= 0)
		r = kbusloop_new(b->loop, b->bus, lost, b, &b->bl);
	if (r < 0) {
		disconnect(b);
		if (first)
			log_warning("D-Bus: cannot connect to the system bus (%s): trying again, "
				    "event signals dropped until then",
				    strerror(-r));
		schedule_retry(b);
		return r == -ENOMEM ? r : 0;
	}
	if (!first) {
		log_notice("D-Bus: connected to the system bus: sending event signals (%" PRIu64
			   " dropped while not connected)",
			   b->unconnected);
		b->unconnected = 0;
	}
	b->retry_ns = 0;
	kbusloop_process(b->bl);
	return 0;
}

int kdbus_new(struct kloop *loop, struct kdbus **out)
{
	struct kdbus *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->loop = loop;
	int r = connect_bus(b);
	if (r < 0) {
		kdbus_free(b);
		return r;
	}
	*out = b;
	return 0;
}

/* A bus that refuses signals and takes them again in turn says so at a
 * bounded rate (log.h); the signals it refused are counted (dropped). */
static struct klog_throttle send_log = {.name = "D-Bus", .what = "lines about refused signals"};

void kdbus_emit(struct kdbus *b, const struct kevent *ev)
{
	if (!b)
		return;
	if (!b->bus) {
		b->unconnected++;
		return;
	}
	struct strbuf path = STRBUF_INIT;
	kdbus_object_path(ev->object, &path);
	/* D-Bus carries valid UTF-8 only: the object and signal are ASCII
	 * (kevent_check()), a payload's other bytes go as "\xHH" */
	_cleanup_free_ char *payload = utf8_sanitize(ev->payload ? ev->payload : "");
	int r = path.oom || !payload
			? -ENOMEM
			: sd_bus_emit_signal(b->bus, path.buf, KDBUS_INTERFACE, KDBUS_MEMBER,
					     "sssst", kevent_type_name(ev->type), ev->object,
					     ev->signal, payload, (uint64_t)ev->seqnum);
	strbuf_release(&path);
	if (r < 0) {
		if (!b->failing)
			klog_throttled(&send_log, LOG_WARNING,
				       "D-Bus: cannot send the signal of event seq %" PRIu64
				       " (%s); dropping signals until the bus takes them again",
				       (uint64_t)ev->seqnum, strerror(-r));
		b->failing = true;
		b->dropped++;
		return;
	}
	if (b->failing)
		klog_throttled(&send_log, LOG_NOTICE,
			       "D-Bus: sending event signals again (%" PRIu64 " dropped)",
			       b->dropped);
	b->failing = false;
	b->sent++;
	kbusloop_process(b->bl);
}

void kdbus_free(struct kdbus *b)
{
	if (!b)
		return;
	/* write what is queued as far as the socket takes it: never block a
	 * stopping daemon on the bus */
	if (b->bus)
		sd_bus_process(b->bus, NULL);
	disconnect(b);
	ktimer_cancel(b->retry);
	free(b);
}

#else /* !KEVENT_DBUS */

bool kdbus_available(void)
{
	return false;
}

int kdbus_new(struct kloop *loop, struct kdbus **out)
{
	(void)loop;
	*out = NULL;
	return -EOPNOTSUPP;
}

void kdbus_emit(struct kdbus *b, const struct kevent *ev)
{
	(void)b;
	(void)ev;
}

void kdbus_free(struct kdbus *b)
{
	(void)b;
}

#endif
