// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * keventd.yaml's kmsg: priority at a reload (config-reload.c reads and
 * checks the file): the kmsg source takes it for the records it reads from
 * then on, without a restart and without losing its place in the log.
 * backlog: only matters at a first start.
 */
#include "daemon.h"
#include "log.h"
#include "options.h"
#include "source-kmsg.h"

void kdaemon_reload_kmsg(struct kdaemon *d, struct koptions *o, struct strbuf *report)
{
	struct ksource *src = d->source[KEVENT_SOURCE_KMSG];
	if (!src)
		return;
	unsigned was = ksource_kmsg_priority(src);
	if (o->kmsg.priority == was)
		return;
	ksource_kmsg_set_priority(src, o->kmsg.priority);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_printf(&sb, "keventd.yaml: kmsg priority %s (was %s)",
		      kkmsg_level_name(o->kmsg.priority), kkmsg_level_name(was));
	log_notice("%s", strbuf_str(&sb));
	if (report)
		strbuf_printf(report, "%s\n", strbuf_str(&sb));
}
