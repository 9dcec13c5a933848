// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "trace" source (source-trace.h).  Each entry's tracepoint is opened
 * with perf_event_open() on every CPU (PERF_TYPE_TRACEPOINT, the ID from
 * tracefs), its filter installed with PERF_EVENT_IOC_SET_FILTER, so the
 * kernel drops what does not match before anything reaches keventd.  The
 * first descriptor of a CPU owns that CPU's ring (mmap); the others send
 * their samples into it (PERF_EVENT_IOC_SET_OUTPUT), so there is one ring
 * per CPU however many tracepoints are listed, and a sample's tracepoint
 * is its record's common_type.
 *
 * Each sample wakes the loop (wakeup_events 1) and is decoded at once
 * (trace-msg.h).  While the daemon's queue has no room for this source,
 * the rings are not read: the kernel drops what does not fit and counts
 * it on the counter whose sample it was, which keventd reads
 * (PERF_FORMAT_LOST) after a drain that found its ring half full or a
 * PERF_RECORD_LOST in it, and after a pause: lost is exact as soon as the
 * rings are read, even for a burst's last drops, which the kernel reports
 * in a PERF_RECORD_LOST only at the next sample that fits.  A kernel
 * without PERF_FORMAT_LOST (before 6.0) is counted from those records.
 * perf's poll reports a ring once per wake-up, so a ring left unread at a
 * pause is drained from a timer when reading resumes.
 */
#include "source-trace.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"
#include "trace-msg.h"
#include "util.h"
#include "source-type.h"

#define RECORD_MAX (64 * 1024) /* a perf record's size is a u16 */
#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4) /* Linux 6.0 */
#endif
#define MAX_CPUS 4096

struct tp {
	struct ktrace_format fmt;
	struct ktrace_name name;
};

struct ktrace_src;

/* Data pages of each CPU's ring: KTRACE_RING_PAGES, or for tests a smaller
 * (or larger) power of two from KEVENTD_TRACE_RING_PAGES (keventd(8)). */
static size_t ring_pages(void)
{
	const char *force = getenv("KEVENTD_TRACE_RING_PAGES");
	if (force) {
		long n = atol(force);
		if (n > 0 && n <= 4096 && (n & (n - 1)) == 0)
			return (size_t)n;
		log_warning("trace: KEVENTD_TRACE_RING_PAGES=%s is not a power of two from 1 "
			    "to 4096: %d pages",
			    force, KTRACE_RING_PAGES);
	}
	return KTRACE_RING_PAGES;
}

struct ring {
	struct ktrace_src *t;
	int fd; /* the CPU's first descriptor: the one mapped and watched */
	void *base;
	size_t len;
	struct kio *io;
};

struct ktrace_src {
	struct ksource src;
	struct ksink sink;
	struct tp *tps;
	size_t n_tps;
	struct ring *rings;
	size_t n_rings;
	int *fds;	     /* every descriptor, the rings' included */
	uint64_t *lost_seen; /* per descriptor: its lost samples counted so far */
	size_t n_fds;
	bool lost_by_read;  /* the counters say what they lost (PERF_FORMAT_LOST) */
	bool lost_reported; /* a PERF_RECORD_LOST since the counters were read */
	struct ktimer *drain;
	uint64_t seqnum;
	bool paused, stopped;
	uint8_t buf[RECORD_MAX]; /* a record that wraps around its ring */
};

static struct ktrace_src *of(struct ksource *s)
{
	return container_of(s, struct ktrace_src, src);
}

/* tracefs: where the kernel documents it, mounted there if it is not
 * (Documentation/trace/ftrace.rst), else under debugfs. */
static const char *tracefs_root(void)
{
	struct stat st;
	if (stat(KTRACE_TRACEFS "/events", &st) == 0)
		return KTRACE_TRACEFS;
	if (mount("nodev", KTRACE_TRACEFS, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) ==
		    0 &&
	    stat(KTRACE_TRACEFS "/events", &st) == 0)
		return KTRACE_TRACEFS;
	if (stat(KTRACE_TRACEFS_DEBUG "/events", &st) == 0)
		return KTRACE_TRACEFS_DEBUG;
	return NULL;
}

/* The format of e's tracepoint.  0, -ENOENT (no such tracepoint, or no
 * tracefs), -EINVAL with *why, or another -errno. */
static int load_format(const struct ktrace_entry *e, struct ktrace_format *f, const char **why)
{
	const char *root = tracefs_root();
	if (!root) {
		*why = "no tracefs (mount it on " KTRACE_TRACEFS ")";
		return -ENOENT;
	}
	char path[512];
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, e->system, e->event);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*why = "the kernel has no such tracepoint";
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
	}
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int rc = read_fd(fd, KTRACE_FORMAT_MAX, &text, &len);
	if (rc < 0) {
		*why = "its format cannot be read";
		return rc;
	}
	return ktrace_format_parse(text, len, f, why);
}

/* A disabled counter of tracepoint id on cpu, with filter.  The fd, or
 * -errno with *what saying which step failed. */
static int perf_open(uint32_t id, int cpu, const char *filter, bool count_lost, const char **what)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = id,
		.sample_period = 1,
		.sample_type =
			PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW,
		.disabled = 1,
		.wakeup_events = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC, /* NMI-safe; the event's time adds the offset */
		.read_format = count_lost ? PERF_FORMAT_LOST : 0,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		*what = "perf_event_open";
		return -errno;
	}
	if (filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0) {
		int err = errno;
		close(fd);
		*what = "filter";
		return -err;
	}
	return fd;
}

static int n_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	return n < 1 ? 1 : n > MAX_CPUS ? MAX_CPUS : (int)n;
}

/* An offline CPU has no counters. */
static bool cpu_absent(int err)
{
	return err == -ENODEV || err == -ENXIO;
}

int ktrace_config_check(const struct ktrace_config *c, struct kdiags *diags)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct ktrace_entry *e = &c->v[i];
		struct ktrace_format f;
		const char *why = NULL, *what = NULL;
		int rc = load_format(e, &f, &why);
		if (rc < 0) {
			kdiags_add(diags, c->path, e->line, e->col, "trace: %s/%s: %s%s%s",
				   e->system, e->event, why,
				   rc == -ENOENT || rc == -EINVAL ? "" : ": ",
				   rc == -ENOENT || rc == -EINVAL ? "" : strerror(-rc));
			continue;
		}
		int fd = -ENODEV;
		for (int cpu = 0; cpu < n_cpus() && cpu_absent(fd); cpu++)
			fd = perf_open(f.id, cpu, e->filter, false, &what);
		if (fd >= 0) {
			close(fd);
		} else if (fd == -EINVAL && strcmp(what, "filter") == 0) {
			kdiags_add(diags, c->path, e->filter_line, e->filter_col,
				   "trace: %s/%s: the kernel refuses the filter \"%s\"", e->system,
				   e->event, e->filter);
		} else {
			kdiags_add(diags, c->path, e->line, e->col, "trace: %s/%s: %s: %s",
				   e->system, e->event, what, strerror(-fd));
		}
	}
	return 0;
}

static struct tp *find_tp(struct ktrace_src *t, uint32_t id)
{
	for (size_t i = 0; i < t->n_tps; i++)
		if (t->tps[i].fmt.id == id)
			return &t->tps[i];
	return NULL;
}

static void handle(struct ktrace_src *t, const uint8_t *rec, size_t len)
{
	struct ktrace_record r;
	const char *why = "out of memory";
	if (ktrace_record_parse(rec, len, &r, &why) < 0) {
		ksink_reject(&t->sink, KEVENT_SOURCE_TRACE, why);
		return;
	}
	if (r.kind == KTRACE_REC_LOST) {
		if (t->lost_by_read)
			t->lost_reported = true; /* counted from the counters, once */
		else
			ksink_lost(&t->sink, KEVENT_SOURCE_TRACE, r.lost);
		return;
	}
	if (r.kind != KTRACE_REC_SAMPLE)
		return;
	uint16_t type = 0;
	if (r.raw_size >= sizeof(type))
		memcpy(&type, r.raw, sizeof(type));
	struct tp *tp = find_tp(t, type);
	if (!tp) {
		ksink_reject(&t->sink, KEVENT_SOURCE_TRACE,
			     "trace sample of an unknown tracepoint");
		return;
	}
	struct kevent *ev = NULL;
	bool truncated = false;
	int rc = ktrace_event(&tp->fmt, &tp->name, &r, t->seqnum + 1, &ev, &truncated, &why);
	if (rc < 0) {
		ksink_reject(&t->sink, KEVENT_SOURCE_TRACE, rc == -ENOMEM ? "out of memory" : why);
		return;
	}
	/* CLOCK_MONOTONIC to the epoch: the two clocks' distance now */
	ev->timestamp = r.time + (now_realtime_ns() - now_monotonic_ns());
	t->seqnum++;
	if (truncated)
		ksink_truncated(&t->sink, KEVENT_SOURCE_TRACE);
	(void)ksink_submit(&t->sink, ev);
}

static void ring_copy(const uint8_t *data, uint64_t size, uint64_t pos, void *dst, size_t n)
{
	uint64_t off = pos % size;
	size_t first = n < size - off ? n : (size_t)(size - off);
	memcpy(dst, data + off, first);
	memcpy((uint8_t *)dst + first, data, n - first);
}

/* Adds to lost what each counter lost since it was last read. */
static void count_lost(struct ktrace_src *t)
{
	uint64_t lost = 0;
	t->lost_reported = false;
	for (size_t i = 0; i < t->n_fds; i++) {
		uint64_t v[2]; /* the count, then the lost samples */
		if (read(t->fds[i], v, sizeof(v)) != (ssize_t)sizeof(v) || v[1] <= t->lost_seen[i])
			continue;
		lost += v[1] - t->lost_seen[i];
		t->lost_seen[i] = v[1];
	}
	if (lost)
		ksink_lost(&t->sink, KEVENT_SOURCE_TRACE, lost);
}

/* Reads r's ring until it is empty or the source is paused. */
static void drain(struct ring *r)
{
	struct ktrace_src *t = r->t;
	struct perf_event_mmap_page *m = r->base;
	const uint8_t *data = (const uint8_t *)r->base + m->data_offset;
	uint64_t size = m->data_size;
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = m->data_tail;
	/* half full or more: a sample may not have fitted */
	bool crowded = head - tail >= size / 2;
	while (tail < head && !t->paused && !t->stopped) {
		struct perf_event_header h;
		ring_copy(data, size, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail) {
			ksink_reject(&t->sink, KEVENT_SOURCE_TRACE,
				     "perf ring with a wrong record");
			tail = head;
			break;
		}
		ring_copy(data, size, tail, t->buf, h.size);
		tail += h.size;
		handle(t, t->buf, h.size);
	}
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
	if (t->lost_by_read && (crowded || t->lost_reported))
		count_lost(t);
}

static void on_readable(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct ring *r = userdata;
	(void)fd;
	drain(r);
	if ((events & (EPOLLHUP | EPOLLERR)) && !(events & EPOLLIN)) {
		log_warning("trace: a CPU's ring went away: no longer read");
		kio_free(io);
		r->io = NULL;
	}
}

static void on_drain(struct ktimer *tm, void *userdata)
{
	struct ktrace_src *t = userdata;
	(void)tm;
	t->drain = NULL;
	for (size_t i = 0; i < t->n_rings && !t->paused && !t->stopped; i++)
		if (t->rings[i].base)
			drain(&t->rings[i]);
	if (t->lost_by_read && !t->paused && !t->stopped)
		count_lost(t); /* what the rings dropped while they were not read */
}

static void trace_pause(struct ksource *s, bool pause)
{
	struct ktrace_src *t = of(s);
	t->paused = pause;
	for (size_t i = 0; i < t->n_rings; i++)
		if (t->rings[i].io)
			(void)kio_set_events(t->rings[i].io, pause ? 0 : EPOLLIN);
	if (!pause && !t->drain && !t->stopped &&
	    kloop_add_timer(t->sink.loop, now_monotonic_ns(), on_drain, t, &t->drain) < 0)
		log_warning("trace: cannot schedule reading the rings again: they are read at "
			    "their next record");
}

static void trace_stop(struct ksource *s)
{
	struct ktrace_src *t = of(s);
	t->stopped = true;
	ktimer_cancel(t->drain);
	t->drain = NULL;
	for (size_t i = 0; i < t->n_fds; i++)
		(void)ioctl(t->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	for (size_t i = 0; i < t->n_rings; i++) {
		kio_free(t->rings[i].io);
		t->rings[i].io = NULL;
	}
}

static void trace_free(struct ksource *s)
{
	if (!s)
		return;
	struct ktrace_src *t = of(s);
	trace_stop(s);
	for (size_t i = 0; i < t->n_rings; i++)
		if (t->rings[i].base)
			munmap(t->rings[i].base, t->rings[i].len);
	for (size_t i = 0; i < t->n_fds; i++)
		close(t->fds[i]);
	free(t->rings);
	free(t->fds);
	free(t->lost_seen);
	free(t->tps);
	free(t);
}

/* Opens e's counters on every CPU, each into that CPU's ring. */
static int open_entry(struct ktrace_src *t, const struct ktrace_entry *e, const struct tp *tp,
		      int ncpu)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t opened = 0;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		const char *what = "";
		int fd = perf_open(tp->fmt.id, cpu, e->filter, t->lost_by_read, &what);
		if (fd == -EINVAL && t->lost_by_read && t->n_fds == 0) {
			log_info("trace: this kernel does not count lost samples per counter "
				 "(PERF_FORMAT_LOST): lost records are counted as the kernel "
				 "reports them, at its next record");
			t->lost_by_read = false;
			fd = perf_open(tp->fmt.id, cpu, e->filter, false, &what);
		}
		if (cpu_absent(fd))
			continue;
		if (fd < 0) {
			log_error("trace: %s/%s on CPU %d: %s: %s", e->system, e->event, cpu, what,
				  strerror(-fd));
			return fd;
		}
		t->fds[t->n_fds++] = fd;
		opened++;
		struct ring *r = &t->rings[cpu];
		if (r->fd >= 0) {
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0) {
				int err = errno;
				log_error("trace: %s/%s on CPU %d: cannot share the CPU's ring: %s",
					  e->system, e->event, cpu, strerror(err));
				return -err;
			}
			continue;
		}
		r->t = t;
		r->fd = fd;
		r->len = (1 + ring_pages()) * page;
		r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (r->base == MAP_FAILED) {
			int err = errno;
			r->base = NULL;
			log_error("trace: cannot map CPU %d's ring: %s", cpu, strerror(err));
			return -err;
		}
		int rc = kloop_add_io(t->sink.loop, fd, EPOLLIN, on_readable, r, &r->io);
		if (rc < 0)
			return rc;
	}
	return opened ? 0 : -ENODEV;
}

/* "2 tracepoints: sched:sched_process_exit, ..., on 2 CPUs" */
static void trace_describe(struct ksource *s, struct strbuf *out)
{
	struct ktrace_src *t = container_of(s, struct ktrace_src, src);
	strbuf_printf(out, "%zu tracepoint%s:", t->n_tps, t->n_tps == 1 ? "" : "s");
	for (size_t i = 0; i < t->n_tps && i < 4; i++)
		strbuf_printf(out, "%s %s:%s", i ? "," : "", t->tps[i].name.system,
			      t->tps[i].name.event);
	strbuf_printf(out, "%s on %zu CPU%s", t->n_tps > 4 ? ", ..." : "", t->n_rings,
		      t->n_rings == 1 ? "" : "s");
}

int ksource_trace_new(const struct ksink *sink, const struct ktrace_config *c, struct ksource **out)
{
	*out = NULL;
	if (!c || !c->n)
		return 0;
	int ncpu = n_cpus();
	struct ktrace_src *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->src = (struct ksource){
		.name = "trace",
		.kind = KEVENT_SOURCE_TRACE,
		.pause = trace_pause,
		.stop = trace_stop,
		.describe = trace_describe,
		.free = trace_free,
	};
	t->sink = *sink;
	t->tps = calloc(c->n, sizeof(*t->tps));
	t->rings = calloc((size_t)ncpu, sizeof(*t->rings));
	t->fds = calloc(c->n * (size_t)ncpu, sizeof(*t->fds));
	t->lost_seen = calloc(c->n * (size_t)ncpu, sizeof(*t->lost_seen));
	t->lost_by_read = true;
	if (!t->tps || !t->rings || !t->fds || !t->lost_seen) {
		trace_free(&t->src);
		return -ENOMEM;
	}
	t->n_rings = (size_t)ncpu;
	for (int i = 0; i < ncpu; i++)
		t->rings[i] = (struct ring){.t = t, .fd = -1};
	int rc = 0;
	for (size_t i = 0; i < c->n && rc == 0; i++) {
		const struct ktrace_entry *e = &c->v[i];
		struct tp *tp = &t->tps[t->n_tps];
		const char *why = "";
		rc = load_format(e, &tp->fmt, &why);
		if (rc < 0) {
			log_error("trace: %s/%s: %s", e->system, e->event, why);
			break;
		}
		tp->name = (struct ktrace_name){
			.type = e->type, .system = e->system, .event = e->event};
		t->n_tps++;
		rc = open_entry(t, e, tp, ncpu);
	}
	for (size_t i = 0; i < t->n_fds && rc == 0; i++)
		if (ioctl(t->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
			rc = -errno;
	if (rc < 0) {
		trace_free(&t->src);
		return rc;
	}
	for (size_t i = 0; i < c->n; i++)
		log_info("trace: reading %s/%s%s%s", c->v[i].system, c->v[i].event,
			 c->v[i].filter ? " where " : "", c->v[i].filter ? c->v[i].filter : "");
	*out = &t->src;
	return 0;
}

/* --- its row (source-type.h): keventd.yaml's trace:, whose entries a
 * reload reads by making the source again; no entry, no source --- */

static const struct ktrace_config no_entries = {0};

static int make(const struct ksource_args *a, struct ksource **out)
{
	const struct ktrace_config *c = a->section;
	if (!c || !c->n) {
		log_info("trace source: keventd.yaml lists no tracepoint (trace:)");
		*out = NULL;
		return 0;
	}
	return ksource_trace_new(a->sink, c, out);
}

static int parse(void *section, const struct ynode *v, const char *path, struct kdiags *diags)
{
	return ktrace_config_parse(section, v, path, diags);
}

static bool str_same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool equal(const void *a_, const void *b_)
{
	const struct ktrace_config *a = a_, *b = b_;
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct ktrace_entry *x = &a->v[i], *y = &b->v[i];
		if (!str_same(x->system, y->system) || !str_same(x->event, y->event) ||
		    !str_same(x->filter, y->filter) || x->type != y->type)
			return false;
	}
	return true;
}

static void release(void *section)
{
	ktrace_config_release(section);
}

static bool idle(const void *section)
{
	return !((const struct ktrace_config *)section)->n;
}

static int check(const void *section, struct kdiags *diags)
{
	return ktrace_config_check(section, diags);
}

static void remade(const void *section, struct strbuf *said)
{
	const struct ktrace_config *c = section;
	if (!c->n)
		strbuf_puts(said, "no trace entry left: the trace source is stopped");
	else
		strbuf_printf(said, "trace entries changed: reading %zu tracepoint%s", c->n,
			      c->n == 1 ? "" : "s");
}

const struct ksource_type ksource_type_trace = {
	.kind = KEVENT_SOURCE_TRACE,
	.make = make,
	.section_size = sizeof(struct ktrace_config),
	.defaults = &no_entries,
	.parse = parse,
	.equal = equal,
	.release = release,
	.idle = idle,
	.check = check,
	.remade = remade,
};
