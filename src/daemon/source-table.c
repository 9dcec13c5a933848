// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sources table: one row per source (event.h: KEVENT_SOURCE_LIST), its
 * constructor from keventd's configuration.  kdaemon_start() makes the
 * sources --sources names, in this order; one that cannot be made is
 * logged and left out, and keventd goes on without it.  Adding a source
 * is its own file(s) in sources/, a line in KEVENT_SOURCE_LIST and a row
 * here (docs/HACKING.md).
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "daemon-ctl.h"
#include "daemon.h"
#include "log.h"
#include "source-fs.h"
#include "source-genl.h"
#include "source-input.h"
#include "source-md.h"
#include "source-kmsg.h"
#include "source-trace.h"
#include "source-udev.h"
#include "thermal.h"

/* Makes the source from d's configuration, reporting to sink: 0 with
 * *out (NULL: nothing to add, said why), or -errno. */
typedef int (*make_fn)(struct kdaemon *d, const struct ksink *sink, struct ksource **out);

static int make_socket(struct kdaemon *d, const struct ksink *sink, struct ksource **out)
{
	(void)sink;
	*out = kdaemon_ctl_source(d->ctl);
	return 0;
}

static int make_udev(struct kdaemon *d, const struct ksink *sink, struct ksource **out)
{
	return ksource_udev_new(sink, d->cfg.udev_monitor, out);
}

static int make_thermal(struct kdaemon *d, const struct ksink *sink, struct ksource **out)
{
	return ksource_thermal_new(
		sink, d->cfg.thermal_sysfs ? d->cfg.thermal_sysfs : KTHERMAL_SYSFS, out);
}

static int make_acpi(struct kdaemon *d, const struct ksink *sink, struct ksource **out)
{
	(void)d;
	return ksource_acpi_new(sink, out);
}

static int make_input(struct kdaemon *d, const struct ksink *sink, struct ksource **out)
{
	return ksource_input_new(sink, d->cfg.udev_monitor, out);
}

static int make_kernel(struct kdaemon *d, const struct ksink *sink, struct ksource **out)
{
	(void)d;
	return ksource_kernel_new(sink, out);
}

static int make_fs(struct kdaemon *d, const struct ksink *sink, struct ksource **out)
{
	return ksource_fs_new(sink, d->cfg.fs, out);
}

static int make_md(struct kdaemon *d, const struct ksink *sink, struct ksource **out)
{
	(void)d;
	return ksource_md_new(sink, out);
}

static int make_kmsg(struct kdaemon *d, const struct ksink *sink, struct ksource **out)
{
	return ksource_kmsg_new(sink, d->cfg.kmsg, out);
}

/* The broker's subscriptions: the connection is the MQTT output's, made
 * first (kdaemon_mqtt_start()); no broker or none subscribed, no source. */
static int make_mqtt(struct kdaemon *d, const struct ksink *sink, struct ksource **out)
{
	(void)sink;
	*out = d->mqtt_source;
	return 0;
}

/* keventd.yaml's tracepoints; no entry, no source and no perf descriptor */
static int make_trace(struct kdaemon *d, const struct ksink *sink, struct ksource **out)
{
	if (!d->cfg.trace || !d->cfg.trace->n) {
		log_info("trace source: keventd.yaml lists no tracepoint (trace:)");
		*out = NULL;
		return 0;
	}
	return ksource_trace_new(sink, d->cfg.trace, out);
}

/* keventd's own: the condition table's changes (daemon/conditions.c),
 * submitted as they are made, with nothing to read */
static int make_condition(struct kdaemon *d, const struct ksink *sink, struct ksource **out)
{
	(void)d;
	(void)sink;
	*out = NULL;
	return 0;
}

static const make_fn makers[KEVENT_SOURCE_MAX] = {
	[KEVENT_SOURCE_SOCKET] = make_socket,	[KEVENT_SOURCE_UDEV] = make_udev,
	[KEVENT_SOURCE_THERMAL] = make_thermal, [KEVENT_SOURCE_ACPI] = make_acpi,
	[KEVENT_SOURCE_INPUT] = make_input,	[KEVENT_SOURCE_KERNEL] = make_kernel,
	[KEVENT_SOURCE_MQTT] = make_mqtt,	[KEVENT_SOURCE_FS] = make_fs,
	[KEVENT_SOURCE_TRACE] = make_trace,	[KEVENT_SOURCE_MD] = make_md,
	[KEVENT_SOURCE_KMSG] = make_kmsg,	[KEVENT_SOURCE_CONDITION] = make_condition,
};
/* the order sources are made in: the broker's subscriptions and the
 * control socket first, the kernel's ring last */
static const enum kevent_source order[] = {
	KEVENT_SOURCE_MQTT, KEVENT_SOURCE_SOCKET, KEVENT_SOURCE_UDEV,  KEVENT_SOURCE_THERMAL,
	KEVENT_SOURCE_ACPI, KEVENT_SOURCE_INPUT,  KEVENT_SOURCE_TRACE, KEVENT_SOURCE_KERNEL,
	KEVENT_SOURCE_FS,   KEVENT_SOURCE_MD,	  KEVENT_SOURCE_KMSG,  KEVENT_SOURCE_CONDITION,
};
static_assert(sizeof(order) / sizeof(order[0]) == KEVENT_SOURCE_MAX,
	      "every source of KEVENT_SOURCE_LIST has a place in the order");
static_assert(KEVENT_SOURCE_MAX <= KEVENT_MAX_SOURCES, "room for every source");

void kdaemon_start_sources(struct kdaemon *d, const struct ksink *sink)
{
	d->sources_started = true;
	d->sources_sink = *sink;
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		enum kevent_source kind = order[i];
		if (!(d->cfg.sources & (1u << kind)))
			continue;
		struct ksource *src = NULL;
		int rc = makers[kind] ? makers[kind](d, sink, &src) : -ENOSYS;
		if (rc < 0)
			log_error("%s source unavailable: %s", kevent_source_name(kind),
				  strerror(-rc));
		else if (src && d->n_sources < ARRAY_SIZE(d->sources))
			d->sources[d->n_sources++] = src;
		else if (src)
			src->free(src);
	}
}
