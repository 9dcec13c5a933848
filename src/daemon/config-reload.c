// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * keventd.yaml read again at a reload (SIGHUP, keventctl reload, a change
 * in the rule directories), once, and checked as at start-up, the
 * kernel's view of the tracepoints and filters included: its trace:
 * entries (trace-reload.c) and its fs: (fs-reload.c) are then applied
 * without a restart.  A file with a mistake changes nothing, and says
 * why.  The file's other settings take effect at the next start.
 */
#include <errno.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "options.h"
#include "source-trace.h"

void kdaemon_reload_config(struct kdaemon *d, struct strbuf *report)
{
	if (!d->sources_started || d->stopping || !d->cfg.config_path)
		return;
	_cleanup_(koptions_release) struct koptions o;
	struct kdiags diags = {0};
	koptions_init(&o);
	/* no file (any more): the defaults, as at a start without one */
	int rc = koptions_load_file(&o, d->cfg.config_path, d->cfg.trust, &diags);
	if (rc < 0 && rc != -ENOENT)
		kdiags_add(&diags, d->cfg.config_path, 0, 0, "cannot read: %s", strerror(-rc));
	if (!diags.n && d->cfg.trace_allowed && o.trace.n &&
	    ktrace_config_check(&o.trace, &diags) < 0) {
		kdiags_free(&diags);
		return;
	}
	if (diags.n) {
		d->stats.reload_errors++;
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < diags.n; i++) {
			strbuf_reset(&sb);
			kdiag_format(&diags.v[i], &sb);
			log_error("%s", strbuf_str(&sb));
			if (report)
				strbuf_printf(report, "%s\n", strbuf_str(&sb));
		}
		static const char keep[] =
			"keventd.yaml: keeping the current trace entries and fs settings";
		log_notice("%s", keep);
		if (report)
			strbuf_printf(report, "%s\n", keep);
		kdiags_free(&diags);
		return;
	}
	if (d->cfg.trace_allowed)
		kdaemon_reload_trace(d, &o, report);
	kdaemon_reload_fs(d, &o, report);
	kdaemon_reload_kmsg(d, &o, report);
}
