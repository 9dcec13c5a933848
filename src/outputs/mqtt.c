// SPDX-License-Identifier: GPL-2.0-or-later
#include "mqtt.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <mqtt_protocol.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event-json.h"
#include "mqtt-dedupe-file.h"
#include "mqtt-spool.h"
#include "statedir.h"
#include "log.h"
#include "mosq-dl.h"

/* A QoS 1 message in libmosquitto's hands, not yet acknowledged. */
struct msg {
	uint64_t seq; /* its number in the spool */
	int mid;      /* libmosquitto's message id */
	bool acked;
};

enum state { DISCONNECTED, CONNECTING, CONNECTED };

struct kmqtt {
	struct ksource src; /* the source mqtt: what the subscriptions bring */
	struct ksink sink;
	bool subscribing, paused, stopped;
	char **filters;
	unsigned *host_levels; /* of each filter: the topic level of the host */
	/* the messages taken, to drop one delivered again; saved in the
	 * state directory a round after the journal has them */
	struct kmqtt_dedupe *seen;
	uint64_t seen_round; /* of the loop, when seen last changed */
	struct klog_throttle seen_log;
	size_t n_filters;
	struct kloop *loop;
	struct mosquitto *mosq;
	enum state state;
	bool started; /* kmosq.connect_async() was called once */
	bool v311;    /* the broker refused MQTT 5: 3.1.1 from now on */
	bool v311_set;
	struct kio *io;
	struct ktimer *misc, *retry;
	uint64_t connecting_since_ns;
	unsigned backoff_ms;
	bool outage_logged; /* the current outage was logged */
	char *last_error;   /* what the last attempt said, logged when it changes */
	char *lib_error;    /* libmosquitto's own last error line (OpenSSL's reason) */

	/* the settings */
	char *host, *hostname, *client_id, *prefix, *status_topic;
	unsigned port;
	int qos;
	enum kmqtt_publish publish;
	char *off; /* why publishing is off; NULL while it is on */

	/* QoS 1: in the spool, and the window of them in libmosquitto's
	 * hands, oldest first */
	struct kmqtt_spool *spool;
	char *spool_dir;
	unsigned spool_mb;
	bool drop_logged; /* the spool overflowed in this outage, and it was said */
	uint64_t dropped_in_outage;
	struct msg flight[KMQTT_WINDOW];
	size_t n_flight;
	struct strbuf topic, msg; /* read from the spool */
	int status_mid;		  /* of the last "online" */
	size_t qos0_pending;	  /* QoS 0 messages libmosquitto has not written yet */
	struct klog_throttle spool_log;
	struct kmqtt_counters c;
};

static void on_io(struct kio *io, int fd, uint32_t events, void *userdata);
static void on_misc(struct ktimer *t, void *userdata);
static void on_retry(struct ktimer *t, void *userdata);
static void feed(struct kmqtt *m);
static void save_seen(struct kmqtt *m, bool all);

/* ---- the window ---- */

/* Forgets the acknowledged messages at the front of the window, and tells
 * the spool what it may forget. */
static void trim(struct kmqtt *m)
{
	size_t n = 0;
	while (n < m->n_flight && m->flight[n].acked)
		n++;
	if (!n)
		return;
	memmove(m->flight, m->flight + n, (m->n_flight - n) * sizeof(*m->flight));
	m->n_flight -= n;
	kmqtt_spool_ack_below(m->spool,
			      m->n_flight ? m->flight[0].seq : kmqtt_spool_cursor(m->spool));
}

/* ---- the connection ---- */

/* The source mqtt stopped reading for good (keventd is stopping). */
static bool stopped(const struct kmqtt *m)
{
	return m->subscribing && m->stopped;
}

static void drop_io(struct kmqtt *m)
{
	kio_free(m->io);
	m->io = NULL;
}

/* Watches libmosquitto's socket for what it wants now. */
static void sync_io(struct kmqtt *m)
{
	int fd = kmosq.socket(m->mosq);
	if (fd < 0) {
		drop_io(m);
		return;
	}
	/* while the source mqtt is paused, the broker waits (TCP's flow
	 * control); once it is stopped too: libmosquitto would acknowledge
	 * what it read, and a stopping keventd takes nothing, so the broker
	 * keeps it for the next start */
	bool reading = (!m->paused && !stopped(m)) || m->state != CONNECTED;
	uint32_t want = (reading ? EPOLLIN : 0) | (kmosq.want_write(m->mosq) ? EPOLLOUT : 0);
	if (!m->io) {
		int rc = kloop_add_io(m->loop, fd, want, on_io, m, &m->io);
		if (rc < 0)
			log_error("mqtt: cannot watch the connection: %s", strerror(-rc));
	} else if (kio_events(m->io) != want) {
		(void)kio_set_events(m->io, want);
	}
}

static void schedule_retry(struct kmqtt *m)
{
	if (m->retry)
		return;
	uint64_t at_ns = now_monotonic_ns() + (uint64_t)m->backoff_ms * 1000000ull;
	if (kloop_add_timer(m->loop, at_ns, on_retry, m, &m->retry) < 0)
		m->retry = NULL;
	m->backoff_ms =
		m->backoff_ms * 2 > KMQTT_BACKOFF_MAX_MS ? KMQTT_BACKOFF_MAX_MS : m->backoff_ms * 2;
}

/* The connection is gone (or never came): say why once per outage, and
 * try again later.  The messages in libmosquitto's hands stay there: it
 * sends them again, with their ids, once connected. */
static void lost(struct kmqtt *m, const char *reason)
{
	/* libmosquitto's texts end with a '.', which a log line does not */
	char why[256];
	snprintf(why, sizeof(why), "%s", reason);
	size_t n = strlen(why);
	if (n && why[n - 1] == '.')
		why[n - 1] = '\0';
	bool was_connected = m->state == CONNECTED;
	m->state = DISCONNECTED;
	m->c.connected = false;
	drop_io(m);
	m->qos0_pending = 0;
	if (was_connected || !m->outage_logged || !m->last_error ||
	    strcmp(m->last_error, why) != 0) {
		log_warning("mqtt: %s %s:%u: %s; trying again in %u ms%s",
			    was_connected ? "lost the connection to" : "cannot connect to", m->host,
			    m->port, why, m->backoff_ms,
			    m->outage_logged && !was_connected ? " (and on, with a backoff)" : "");
		m->outage_logged = true;
		free(m->last_error);
		m->last_error = strdup(why);
	}
	schedule_retry(m);
}

static const char *errno_text(struct kmqtt *m, int rc)
{
	if (rc == MOSQ_ERR_TLS && m->lib_error)
		return m->lib_error;
	return rc == MOSQ_ERR_ERRNO ? strerror(errno) : kmosq.strerror(rc);
}

/* libmosquitto says why a TLS handshake failed only in its log: keep its
 * last error line for the one keventd logs. */
static void on_log(struct mosquitto *mosq, void *userdata, int level, const char *str)
{
	struct kmqtt *m = userdata;
	(void)mosq;
	if (!(level & MOSQ_LOG_ERR))
		return;
	char *e = NULL;
	if (asprintf(&e, "TLS: %s", str) < 0)
		return;
	free(m->lib_error);
	m->lib_error = e;
}

/* MQTT 5, so that keventd can tell the broker the largest packet it takes
 * (MAXIMUM_PACKET_SIZE in CONNECT): libmosquitto reads a packet whole,
 * whatever its size, before keventd sees it.  libmosquitto 2.0 has no
 * asynchronous connect with properties; kmosq.connect_bind_v5() keeps
 * them for every later connect before it checks its port, and a port of
 * -1 stops it there, before it connects (and blocks). */
static void set_protocol(struct kmqtt *m, bool v5)
{
	mosquitto_property *props = NULL;
	(void)kmosq.int_option(m->mosq, MOSQ_OPT_PROTOCOL_VERSION,
			       v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311);
	/* subscribed: a session the broker keeps while keventd is away (3.1.1:
	 * clean session off does it), so what is published meanwhile comes */
	if (v5 && (kmosq.property_add_int32(&props, MQTT_PROP_MAXIMUM_PACKET_SIZE,
					    KMQTT_PACKET_MAX) != MOSQ_ERR_SUCCESS ||
		   (m->n_filters &&
		    kmosq.property_add_int32(&props, MQTT_PROP_SESSION_EXPIRY_INTERVAL,
					     KMQTT_SESSION_EXPIRY_S) != MOSQ_ERR_SUCCESS))) {
		kmosq.property_free_all(&props);
		(void)kmosq.int_option(m->mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
		return;
	}
	/* with v5 false, NULL: forgets them, as 3.1.1 has none */
	(void)kmosq.connect_bind_v5(m->mosq, m->host, -1, KMQTT_KEEPALIVE_S, NULL, props);
	kmosq.property_free_all(&props);
}

static void attempt(struct kmqtt *m)
{
	drop_io(m); /* reconnecting closes the old socket: its number may come back */
	if (m->v311 && !m->v311_set) {
		set_protocol(m, false);
		m->v311_set = true;
	}
	m->c.attempts++;
	free(m->lib_error);
	m->lib_error = NULL;
	m->state = CONNECTING;
	m->connecting_since_ns = now_monotonic_ns();
	int rc;
	if (!m->started) {
		rc = kmosq.connect_async(m->mosq, m->host, (int)m->port, KMQTT_KEEPALIVE_S);
		m->started = rc == MOSQ_ERR_SUCCESS;
	} else {
		rc = kmosq.reconnect_async(m->mosq);
	}
	if (rc != MOSQ_ERR_SUCCESS && rc != MOSQ_ERR_CONN_PENDING) {
		lost(m, errno_text(m, rc));
		return;
	}
	sync_io(m);
}

static void on_retry(struct ktimer *t, void *userdata)
{
	struct kmqtt *m = userdata;
	(void)t;
	m->retry = NULL;
	if (m->state == DISCONNECTED)
		attempt(m);
}

static void on_misc(struct ktimer *t, void *userdata)
{
	struct kmqtt *m = userdata;
	(void)t;
	m->misc = NULL;
	save_seen(m, false);
	if (m->state == CONNECTING &&
	    now_monotonic_ns() - m->connecting_since_ns > KMQTT_CONNECT_TIMEOUT_MS * 1000000ull)
		lost(m, "no answer in time");
	else if (m->state != DISCONNECTED)
		(void)kmosq.loop_misc(m->mosq); /* keepalive; on_disconnect when it fails */
	if (m->state != DISCONNECTED)
		sync_io(m);
	(void)kloop_add_timer(m->loop, now_monotonic_ns() + 1000000000ull, on_misc, m, &m->misc);
}

/* Writes the table of messages taken once the rounds of the loop that
 * changed it are over: their events are in the journal then (it is
 * written at the end of each round), so a message the file names is
 * never one keventd would lose at a kill.  all: at the end, when no round
 * is to come. */
static void save_seen(struct kmqtt *m, bool all)
{
	if (!m->seen || !m->sink.state || !kmqtt_dedupe_dirty(m->seen) ||
	    (!all && kloop_wakeups(m->loop) == m->seen_round))
		return;
	int rc = kmqtt_dedupe_save(m->seen, m->sink.state->fd);
	if (rc < 0)
		klog_throttled(&m->seen_log, LOG_WARNING,
			       "mqtt: cannot write %s/" KMQTT_DEDUPE_FILE ": %s",
			       m->sink.state->path, kstatedir_strerror(rc));
}

static void on_io(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kmqtt *m = userdata;
	(void)io;
	(void)fd;
	save_seen(m, false);
	/* Reading also drives a TLS handshake, which may wait to write: read
	 * on either.  kmosq.loop_read() reads one packet a call (its
	 * max_packets counts QoS 2 messages only): call it until the socket
	 * is drained, a bounded number of times, and while the source has room. */
	int rc = MOSQ_ERR_SUCCESS;
	for (int i = 0; i < 256 && m->state != DISCONNECTED; i++) {
		if (m->subscribing && m->state == CONNECTED &&
		    (m->paused || m->stopped || !ksink_room(&m->sink, KEVENT_SOURCE_MQTT)))
			break;
		errno = 0;
		rc = kmosq.loop_read(m->mosq, 1);
		if (rc != MOSQ_ERR_SUCCESS || errno == EAGAIN || errno == EWOULDBLOCK)
			break;
	}
	if (rc == MOSQ_ERR_SUCCESS && m->state != DISCONNECTED && (events & EPOLLOUT))
		rc = kmosq.loop_write(m->mosq, 64);
	if (rc != MOSQ_ERR_SUCCESS && m->state != DISCONNECTED)
		lost(m, errno_text(m, rc));
	if (m->state != DISCONNECTED)
		sync_io(m);
}

/* What the broker's refusal says: MQTT 5's codes as 3.1.1's words where
 * they mean the same. */
static const char *refusal(int rc)
{
	switch (rc) {
	case MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION:
		return kmosq.connack_string(CONNACK_REFUSED_PROTOCOL_VERSION);
	case MQTT_RC_CLIENTID_NOT_VALID:
		return kmosq.connack_string(CONNACK_REFUSED_IDENTIFIER_REJECTED);
	case MQTT_RC_SERVER_UNAVAILABLE:
		return kmosq.connack_string(CONNACK_REFUSED_SERVER_UNAVAILABLE);
	case MQTT_RC_BAD_USERNAME_OR_PASSWORD:
		return kmosq.connack_string(CONNACK_REFUSED_BAD_USERNAME_PASSWORD);
	case MQTT_RC_NOT_AUTHORIZED:
		return kmosq.connack_string(CONNACK_REFUSED_NOT_AUTHORIZED);
	}
	return rc <= CONNACK_REFUSED_NOT_AUTHORIZED ? kmosq.connack_string(rc)
						    : kmosq.reason_string(rc);
}

static void on_connect(struct mosquitto *mosq, void *userdata, int rc)
{
	struct kmqtt *m = userdata;
	if (rc == MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION && !m->v311) {
		/* a broker of MQTT 3.1.1 only */
		log_warning("mqtt: %s:%u does not speak MQTT 5: speaking 3.1.1 to it, which "
			    "cannot bound the size of the packets it sends",
			    m->host, m->port);
		m->v311 = true;
	}
	if (rc != 0) {
		/* the broker said no: it closes, and on_disconnect follows */
		lost(m, refusal(rc));
		return;
	}
	m->state = CONNECTED;
	m->c.connected = true;
	m->backoff_ms = KMQTT_BACKOFF_MIN_MS;
	if (m->outage_logged || !m->last_error)
		log_info("mqtt: connected to %s:%u as %s", m->host, m->port, m->client_id);
	m->outage_logged = false;
	free(m->last_error);
	m->last_error = NULL;
	if (m->drop_logged)
		log_warning("mqtt: %" PRIu64 " messages dropped from the full spool while the "
			    "broker was away",
			    m->dropped_in_outage);
	m->drop_logged = false;
	m->dropped_in_outage = 0;
	(void)kmosq.publish(mosq, &m->status_mid, m->status_topic, 6, "online", 1, true);
	for (size_t i = 0; m->subscribing && i < m->n_filters; i++)
		if (kmosq.subscribe(mosq, NULL, m->filters[i], 1) != MOSQ_ERR_SUCCESS)
			log_error("mqtt: cannot subscribe to %s", m->filters[i]);
	feed(m);
}

static void on_disconnect(struct mosquitto *mosq, void *userdata, int rc)
{
	struct kmqtt *m = userdata;
	(void)mosq;
	if (m->state != DISCONNECTED)
		lost(m, rc == MOSQ_ERR_CONN_LOST ? "connection lost"
			: rc >= 0x80		 ? kmosq.reason_string(rc) /* MQTT 5's DISCONNECT */
						 : errno_text(m, rc));
}

/* A keventd's own "online" or "offline", which a wide filter also takes. */
static bool is_status(const struct mosquitto_message *msg)
{
	size_t n = strlen(msg->topic);
	return n >= 7 && strcmp(msg->topic + n - 7, "/status") == 0 &&
	       ((msg->payloadlen == 6 && memcmp(msg->payload, "online", 6) == 0) ||
		(msg->payloadlen == 7 && memcmp(msg->payload, "offline", 7) == 0));
}

static void on_message(struct mosquitto *mosq, void *userdata, const struct mosquitto_message *msg)
{
	struct kmqtt *m = userdata;
	(void)mosq;
	if (!m->subscribing || m->stopped || is_status(msg))
		return;
	struct kevent *ev = NULL;
	struct kmqtt_key key;
	const char *why = NULL;
	/* the host is the topic's, which the broker's ACL vouches for, never
	 * the message's own word (keventd.yaml(5), SUBSCRIBING) */
	char host[KEVENT_HOST_MAX + 1];
	int rc = kmqtt_topic_host(m->filters, m->host_levels, m->n_filters, msg->topic, host, &why);
	if (rc == 0)
		rc = kmqtt_decode(msg->payload, msg->payloadlen > 0 ? (size_t)msg->payloadlen : 0,
				  host, &ev, &key, &why);
	if (rc < 0) {
		ksink_reject(&m->sink, KEVENT_SOURCE_MQTT, why ? why : "out of memory");
		return;
	}
	m->c.received++;
	/* no memory for the table: taken, as at-least-once wants */
	if (m->seen && kmqtt_dedupe_seen(m->seen, &key) > 0) {
		m->c.duplicates++;
		kevent_free(ev);
		return;
	}
	if (m->seen && kmqtt_dedupe_dirty(m->seen))
		m->seen_round = kloop_wakeups(m->loop);
	(void)ksink_submit(&m->sink, ev);
}

static void source_pause(struct ksource *src, bool pause)
{
	struct kmqtt *m = container_of(src, struct kmqtt, src);
	m->paused = pause;
	if (m->state != DISCONNECTED)
		sync_io(m);
}

static void source_stop(struct ksource *src)
{
	struct kmqtt *m = container_of(src, struct kmqtt, src);
	m->stopped = true;
	if (m->state != DISCONNECTED)
		sync_io(m);
}

/* "broker HOST:PORT, connected, 2 subscriptions" */
static void source_describe(struct ksource *src, struct strbuf *out)
{
	struct kmqtt *m = container_of(src, struct kmqtt, src);
	strbuf_puts(out, "broker ");
	strbuf_put_escaped(out, m->host);
	strbuf_printf(out, ":%u, %s, %zu subscription%s", m->port,
		      m->state == CONNECTED ? "connected" : "not connected", m->n_filters,
		      m->n_filters == 1 ? "" : "s");
}

struct ksource *kmqtt_source(struct kmqtt *m)
{
	return &m->src;
}

static void on_publish(struct mosquitto *mosq, void *userdata, int mid)
{
	struct kmqtt *m = userdata;
	(void)mosq;
	if (mid == m->status_mid)
		return;
	for (size_t i = 0; i < m->n_flight; i++) {
		struct msg *g = &m->flight[i];
		if (g->mid == mid && !g->acked) {
			g->acked = true;
			m->c.acked++;
			trim(m);
			feed(m);
			return;
		}
	}
	if (m->qos == 0 && m->qos0_pending)
		m->qos0_pending--;
}

/* Whether kmosq.publish() failed before it queued the message:
 * anything else means libmosquitto holds it and sends it once it can. */
static bool refused(int rc)
{
	switch (rc) {
	case MOSQ_ERR_INVAL:
	case MOSQ_ERR_NOMEM:
	case MOSQ_ERR_NOT_SUPPORTED:
	case MOSQ_ERR_QOS_NOT_SUPPORTED:
	case MOSQ_ERR_MALFORMED_UTF8:
	case MOSQ_ERR_PAYLOAD_SIZE:
	case MOSQ_ERR_OVERSIZE_PACKET:
		return true;
	}
	return false;
}

/* Publishing stops, for good: said once, and in status. */
static void turn_off(struct kmqtt *m, const char *fmt, ...) _printf_(2, 3);
static void turn_off(struct kmqtt *m, const char *fmt, ...)
{
	if (m->off)
		return;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&m->off, fmt, ap) < 0)
		m->off = NULL;
	va_end(ap);
	if (!m->off)
		m->off = strdup("out of memory");
	log_error("mqtt: %s: publishing is off", m->off ? m->off : "out of memory");
}

static const char aside_full[] =
	" (not all: at most " STRINGIFY(KMQTT_SPOOL_ASIDE_FILES) " files are kept, of 64 KiB each)";

/* Says what the spool found damaged, and counts the messages lost. */
static void say_damage(struct kmqtt *m, const struct kmqtt_spool_damage *g)
{
	if (g->cut)
		log_warning("mqtt: spool %s: %" PRIu64 " bytes of a torn record cut off "
			    "(keventd stopped while writing it)",
			    m->spool_dir, g->cut);
	if (!g->regions)
		return;
	m->c.corrupt += g->corrupt;
	log_error("mqtt: spool %s: %" PRIu64 " damaged bytes in %" PRIu64 " places skipped, "
		  "the records after them kept; %" PRIu64 " messages lost with them (counted "
		  "corrupt); %" PRIu64 " bytes kept aside in *.corrupt%s",
		  m->spool_dir, g->damaged, g->regions, g->corrupt, g->aside,
		  g->not_kept ? aside_full : "");
}

/* Hands libmosquitto what its window has room for, from the spool. */
static void feed(struct kmqtt *m)
{
	if (m->state != CONNECTED || !m->spool || m->off)
		return;
	while (m->n_flight < KMQTT_WINDOW) {
		uint64_t seq;
		int rc = kmqtt_spool_next(m->spool, &m->topic, &m->msg, &seq);
		struct kmqtt_spool_damage g = {0};
		kmqtt_spool_damage(m->spool, &g);
		say_damage(m, &g);
		if (rc == -ENOENT)
			break;
		if (rc < 0) {
			turn_off(m, "cannot read the spool %s: %s", m->spool_dir, strerror(-rc));
			break;
		}
		int mid = 0;
		rc = kmosq.publish(m->mosq, &mid, m->topic.buf, (int)m->msg.len, m->msg.buf, 1,
				   kmqtt_topic_retained(m->prefix, m->topic.buf));
		if (refused(rc)) {
			m->c.dropped++;
			trim(m);
			continue;
		}
		m->flight[m->n_flight++] = (struct msg){.seq = seq, .mid = mid};
		m->c.published++;
	}
	if (!m->n_flight) /* nothing in flight: all sent is acknowledged */
		kmqtt_spool_ack_below(m->spool, kmqtt_spool_cursor(m->spool));
	sync_io(m);
}

static void count_dropped(struct kmqtt *m, uint64_t n)
{
	if (!n)
		return;
	m->c.dropped += n;
	m->dropped_in_outage += n;
	if (!m->drop_logged)
		log_warning("mqtt: the spool %s is full (%u MB): dropping its oldest messages "
			    "not yet sent",
			    m->spool_dir, m->spool_mb);
	m->drop_logged = true;
}

/* One message, as publishing goes: at once (QoS 0) or through the spool. */
static void publish_one(struct kmqtt *m, const struct strbuf *topic, const struct strbuf *msg)
{
	if (topic->oom || msg->oom || topic->len > KMQTT_TOPIC_MAX) {
		m->c.dropped++;
		return;
	}
	if (m->qos == 0) {
		if (m->state != CONNECTED || m->qos0_pending >= KMQTT_QUEUE_MAX) {
			m->c.dropped++;
			return;
		}
		int rc = kmosq.publish(m->mosq, NULL, topic->buf, (int)msg->len, strbuf_str(msg), 0,
				       kmqtt_topic_retained(m->prefix, topic->buf));
		if (rc != MOSQ_ERR_SUCCESS) {
			m->c.dropped++;
			return;
		}
		m->qos0_pending++;
		m->c.published++;
		sync_io(m);
		return;
	}
	uint64_t dropped = 0;
	int rc = kmqtt_spool_append(m->spool, topic->buf, strbuf_str(msg), msg->len, &dropped);
	count_dropped(m, dropped);
	if (rc < 0) {
		m->c.dropped++;
		klog_throttled(&m->spool_log, LOG_ERR, "mqtt: cannot write the spool %s: %s",
			       m->spool_dir, strerror(-rc));
		return;
	}
	feed(m);
}

void kmqtt_publish(struct kmqtt *m, const struct kevent *ev, bool matched)
{
	if (m->off || m->publish == KMQTT_PUBLISH_NONE)
		return;
	if (ev->source == KEVENT_SOURCE_MQTT) /* another machine's: never sent back */
		return;
	_cleanup_strbuf_ struct strbuf topic = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf msg = STRBUF_INIT;
	kmqtt_message(ev, m->hostname, &msg);
	if (m->publish != KMQTT_PUBLISH_MATCHED || matched) {
		kmqtt_topic(m->prefix, ev, &topic);
		publish_one(m, &topic, &msg);
	}
	/* a condition's row: retained while it holds, emptied when it clears */
	strbuf_reset(&topic);
	if (kmqtt_condition_topic(m->prefix, ev, &topic)) {
		if (strcmp(ev->signal, "clear") == 0)
			strbuf_reset(&msg);
		publish_one(m, &topic, &msg);
	}
}

void kmqtt_counters(const struct kmqtt *m, struct kmqtt_counters *out)
{
	*out = m->c;
	out->spooled = m->spool ? (size_t)kmqtt_spool_pending(m->spool) : 0;
	out->off = m->off ? m->off : m->publish == KMQTT_PUBLISH_NONE ? "publish: none" : NULL;
}

/* The password: the first line of a file no one else may read. */
static int read_password(const char *path, char **out, const char **why)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		*why = "cannot open the password file";
		return -errno;
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		*why = "the password file may be read by group or others (chmod 600 it)";
		return -EACCES;
	}
	char *buf = NULL;
	size_t len = 0;
	int rc = read_fd(fd, 4096, &buf, &len);
	if (rc < 0) {
		*why = "cannot read the password file";
		return rc;
	}
	buf[strcspn(buf, "\r\n")] = '\0';
	*out = buf;
	return 0;
}

/* s, or else a, '/' or '-' and b. */
static char *dup_or(const char *s, const char *a, char sep, const char *b)
{
	char *r = NULL;
	if (s)
		return strdup(s);
	if (asprintf(&r, "%s%c%s", a, sep, b) < 0)
		return NULL;
	return r;
}

/* The client, its callbacks, its login and TLS: whether it can connect
 * (else publishing is off, said why). */
static bool connect_setup(struct kmqtt *m, const struct kmqtt_config *cfg)
{
	const char *no = "; no connection to the broker, for publishing nor for the source mqtt";
	/* the source mqtt: a persistent session under the stable client id */
	m->mosq = kmosq.new(m->client_id, m->n_filters == 0, m);
	if (!m->mosq) {
		turn_off(m, "libmosquitto cannot make a client: %s%s", strerror(errno), no);
		return false;
	}
	kmosq.connect_callback_set(m->mosq, on_connect);
	kmosq.disconnect_callback_set(m->mosq, on_disconnect);
	kmosq.publish_callback_set(m->mosq, on_publish);
	kmosq.message_callback_set(m->mosq, on_message);
	if (cfg->tls) /* else its log, formatted for every packet, tells keventd nothing */
		kmosq.log_callback_set(m->mosq, on_log);
	set_protocol(m, true);
	(void)kmosq.max_inflight_messages_set(m->mosq, KMQTT_WINDOW);
	if (kmosq.will_set(m->mosq, m->status_topic, 7, "offline", 1, true) != MOSQ_ERR_SUCCESS) {
		turn_off(m, "libmosquitto refuses the status topic %s%s", m->status_topic, no);
		return false;
	}
	if (cfg->username) {
		_cleanup_free_ char *password = NULL;
		const char *why = NULL;
		if (cfg->password_file) {
			int rc = read_password(cfg->password_file, &password, &why);
			if (rc < 0) {
				turn_off(m, "%s: %s: %s%s",
					 why ? why : "cannot read the password file",
					 cfg->password_file, strerror(-rc), no);
				return false;
			}
		}
		int rc = kmosq.username_pw_set(m->mosq, cfg->username, password);
		if (password)
			explicit_bzero(password, strlen(password));
		if (rc != MOSQ_ERR_SUCCESS) {
			turn_off(m, "libmosquitto refuses the username or password%s", no);
			return false;
		}
	}
	if (cfg->tls) {
		/* no ca_file: the system's store */
		const char *capath = cfg->ca_file ? NULL : "/etc/ssl/certs";
		int trc = kmosq.tls_set(m->mosq, cfg->ca_file, capath, cfg->cert_file,
					cfg->key_file, NULL);
		if (trc != MOSQ_ERR_SUCCESS) {
			turn_off(m, "%s%s",
				 trc == MOSQ_ERR_INVAL ? "cannot read the TLS files (ca_file, "
							 "cert_file, key_file)"
						       : kmosq.strerror(trc),
				 no);
			return false;
		}
	}
	return true;
}

/* The spool of QoS 1; publishing is off without it (the connection stays,
 * for the source mqtt). */
static void open_spool(struct kmqtt *m, const struct kmqtt_config *cfg)
{
	struct kmqtt_spool_damage g;
	const char *why = NULL;
	int rc = kmqtt_spool_open(m->spool_dir, (uint64_t)cfg->spool_max_mb << 20, &m->spool, &g,
				  &why);
	if (rc < 0) {
		m->spool = NULL;
		turn_off(m, "spool %s: %s (%s)", m->spool_dir, strerror(-rc),
			 why ? why : "cannot open it");
		return;
	}
	say_damage(m, &g);
	uint64_t held = kmqtt_spool_pending(m->spool);
	if (held)
		log_info("mqtt: %" PRIu64 " messages in the spool %s, sent once connected", held,
			 m->spool_dir);
}

/* The table of messages taken that the last keventd left. */
static void load_seen(struct kmqtt *m)
{
	m->seen_log =
		(struct klog_throttle){.name = "mqtt", .what = "lines about " KMQTT_DEDUPE_FILE};
	if (!m->sink.state)
		return;
	const char *why = NULL;
	int rc = kmqtt_dedupe_load(m->seen, m->sink.state->fd, &why);
	if (rc < 0)
		log_warning("mqtt: %s/" KMQTT_DEDUPE_FILE ": %s: a message delivered again "
			    "after this start may run twice",
			    m->sink.state->path, why ? why : kstatedir_strerror(rc));
	if (rc < 0 && kmqtt_dedupe_streams(m->seen)) {
		/* part of a file that is not whole: none of it */
		kmqtt_dedupe_free(m->seen);
		m->seen = NULL;
		(void)kmqtt_dedupe_new(&m->seen);
	}
}

int kmqtt_new(struct kloop *loop, const struct kmqtt_config *cfg, const struct ksink *sink,
	      struct kmqtt **out, const char **why)
{
	char host[256] = "";
	*why = NULL;
	if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
		strcpy(host, "localhost");
	int rc = kmosq_load(why);
	if (rc < 0)
		return rc;
	struct kmqtt *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	kmosq.lib_init();
	m->loop = loop;
	m->src = (struct ksource){.name = "mqtt",
				  .kind = KEVENT_SOURCE_MQTT,
				  .pause = source_pause,
				  .stop = source_stop,
				  .describe = source_describe};
	if (sink && cfg->n_subscribe) {
		m->sink = *sink;
		m->subscribing = true;
		m->filters = cfg->subscribe; /* cfg outlives m (kdaemon_config) */
		m->host_levels = cfg->host_level;
		m->n_filters = cfg->n_subscribe;
		if (kmqtt_dedupe_new(&m->seen) < 0) {
			kmqtt_free(m);
			return -ENOMEM;
		}
		load_seen(m);
	}
	m->port = cfg->port;
	m->qos = cfg->qos;
	m->publish = cfg->publish;
	m->backoff_ms = KMQTT_BACKOFF_MIN_MS;
	m->topic = m->msg = (struct strbuf)STRBUF_INIT;
	m->spool_log = (struct klog_throttle){.name = "mqtt", .what = "spool errors"};
	m->spool_mb = cfg->spool_max_mb;
	m->spool_dir = strdup(cfg->spool_dir ? cfg->spool_dir : KMQTT_DEFAULT_SPOOL_DIR);
	m->host = strdup(cfg->host);
	m->hostname = strdup(host);
	m->client_id = dup_or(cfg->client_id, "keventd", '-', host);
	m->prefix = dup_or(cfg->topic_prefix, "keventd", '/', host);
	m->status_topic = m->prefix ? dup_or(NULL, m->prefix, '/', "status") : NULL;
	if (!m->spool_dir || !m->host || !m->hostname || !m->client_id || !m->prefix ||
	    !m->status_topic) {
		kmqtt_free(m);
		return -ENOMEM;
	}
	/* From here on a problem turns publishing off, and leaves the rest of
	 * keventd be: a broker is never worth its other sources. */
	const char *warn = kmqtt_config_warning(cfg);
	if (warn)
		log_warning("mqtt: %s", warn);
	if (!connect_setup(m, cfg)) {
		/* no connection: free libmosquitto's, and nothing to watch */
		kmosq.destroy(m->mosq);
		m->mosq = NULL;
		*out = m;
		return 0;
	}
	if (m->qos == 1 && m->publish != KMQTT_PUBLISH_NONE)
		open_spool(m, cfg);
	attempt(m);
	rc = kloop_add_timer(loop, now_monotonic_ns() + 1000000000ull, on_misc, m, &m->misc);
	if (rc < 0) {
		kmqtt_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* On a clean stop: "offline" on the status topic (the will is only for a
 * connection that breaks), then DISCONNECT, written within a second. */
static void say_goodbye(struct kmqtt *m)
{
	if (m->state != CONNECTED)
		return;
	(void)kmosq.publish(m->mosq, NULL, m->status_topic, 7, "offline", 1, true);
	m->state = DISCONNECTED; /* what follows is no outage */
	(void)kmosq.disconnect(m->mosq);
	uint64_t deadline = now_monotonic_ns() + 1000000000ull;
	while (kmosq.want_write(m->mosq) && kmosq.socket(m->mosq) >= 0) {
		uint64_t now = now_monotonic_ns();
		if (now >= deadline)
			break;
		struct pollfd p = {.fd = kmosq.socket(m->mosq), .events = POLLOUT};
		if (poll(&p, 1, (int)((deadline - now) / 1000000ull) + 1) <= 0)
			break;
		if (kmosq.loop_write(m->mosq, 8) != MOSQ_ERR_SUCCESS)
			break;
	}
}

void kmqtt_free(struct kmqtt *m)
{
	if (!m)
		return;
	save_seen(m, true);
	if (m->mosq) {
		say_goodbye(m);
		m->state = DISCONNECTED; /* no more callbacks of ours */
		kmosq.destroy(m->mosq);
	}
	kmosq.lib_cleanup();
	drop_io(m);
	ktimer_cancel(m->misc);
	ktimer_cancel(m->retry);
	kmqtt_spool_free(m->spool);
	kmqtt_dedupe_free(m->seen);
	free(m->spool_dir);
	strbuf_release(&m->topic);
	strbuf_release(&m->msg);
	free(m->last_error);
	free(m->lib_error);
	free(m->off);
	free(m->host);
	free(m->hostname);
	free(m->client_id);
	free(m->prefix);
	free(m->status_topic);
	free(m);
}
