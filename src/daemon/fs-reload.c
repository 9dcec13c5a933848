// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * keventd.yaml's fs: section, read again at a reload (config-reload.c
 * reads and checks the file) and applied to the running fs source without
 * a restart: the mounts it watches and its thresholds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "options.h"
#include "source-fs.h"

void kdaemon_reload_fs(struct kdaemon *d, struct koptions *o, struct strbuf *report)
{
	struct kfs_config defaults;
	kfs_config_init(&defaults);
	if (kfs_config_equal(d->cfg.fs ? d->cfg.fs : &defaults, &o->fs))
		return;
	struct kfs_config *cfg = malloc(sizeof(*cfg));
	if (!cfg) {
		log_error("keventd.yaml: fs: %s; keeping the current settings", strerror(ENOMEM));
		return;
	}
	*cfg = o->fs; /* taken */
	kfs_config_init(&o->fs);
	if (d->source[KEVENT_SOURCE_FS])
		ksource_fs_configure(d->source[KEVENT_SOURCE_FS], cfg);
	if (d->fs) {
		kfs_config_release(d->fs);
		free(d->fs);
	}
	d->fs = cfg;
	d->cfg.fs = cfg;
	static const char done[] = "keventd.yaml: fs settings changed: applied";
	log_notice("%s", done);
	if (report)
		strbuf_printf(report, "%s\n", done);
}
