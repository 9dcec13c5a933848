// SPDX-License-Identifier: GPL-2.0-or-later
/* A run's record in the log (runner.h: krunner_log_result()), for the
 * runner's children and the transient units alike. */
#include <inttypes.h>
#include <string.h>

#include "log.h"
#include "runner.h"

/* One record per run: a sentence for people, and the fields rule, file
 * (path:line), seq, pid (or unit), exit or signal, timed_out and
 * duration_ms for grep and for machines (klog_fields; --log-format json
 * makes them JSON keys). */
void krunner_log_result(const struct krule *rule, uint64_t seq, pid_t pid, const char *unit,
			const struct krun_report *rep)
{
	const char *name = rule->name;
	bool exited = rep->outcome == KRUN_EXITED;
	uint64_t ms = rep->duration_ms;
	struct strbuf where = STRBUF_INIT, who = STRBUF_INIT;
	strbuf_printf(&where, "%s:%u", rule->file->path, rule->line);
	if (unit)
		strbuf_puts(&who, unit);
	else
		strbuf_printf(&who, "%d", (int)pid);
	struct klog_field f[] = {
		KLOG_STR("rule", name),
		KLOG_STR("file", strbuf_str(&where)),
		KLOG_UINT("seq", seq),
		unit ? KLOG_STR("unit", unit) : KLOG_INT("pid", pid),
		exited ? KLOG_INT("exit", rep->status) : KLOG_INT("signal", rep->status),
		KLOG_BOOL("timed_out", rep->timed_out),
		KLOG_UINT("duration_ms", ms),
	};
	if (exited)
		klog_fields(rep->status ? LOG_WARNING : LOG_INFO, f, ARRAY_SIZE(f),
			    "rule %s[%s]: exited %d after %" PRIu64 "ms (seq %" PRIu64 ")%s", name,
			    strbuf_str(&who), rep->status, ms, seq,
			    rep->status == 127 ? ": program not found?" : "");
	else
		klog_fields(LOG_WARNING, f, ARRAY_SIZE(f),
			    "rule %s[%s]: killed by signal %d (%s) after %" PRIu64
			    "ms (seq %" PRIu64 ")%s",
			    name, strbuf_str(&who), rep->status, strsignal(rep->status), ms, seq,
			    rep->timed_out ? ", timed out" : "");
	strbuf_release(&where);
	strbuf_release(&who);
}
