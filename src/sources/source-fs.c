// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "fs" source: the mount table (/proc/self/mountinfo, which wakes a
 * poller with POLLPRI on every change, read again and diffed), file
 * system errors (fanotify FAN_FS_ERROR on each watched file system), and
 * free space and inodes against keventd.yaml's thresholds (statfs(),
 * timed as keventd(8) says: by the distance to the next line and the rate
 * the space goes, with a one-shot fanotify FAN_MODIFY wake-up while the
 * file system is still).  The decisions are the pure parts' (fs.h).
 * What was reported is kept in fs.state in the state directory, so that
 * a start reports what changed meanwhile (synthetic).  The loop never
 * waits on a peer: a file system answered by one (kfs_mount_remote()) is
 * never statfs()ed nor marked, and the names of quota warnings are looked
 * up by a thread (idname.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fanotify.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "fs.h"
#include "idname.h"
#include "log.h"
#include "loop.h"
#include "source-genl.h"
#include "source-fs.h"
#include "statedir.h"
#include "util.h"
#include "source-type.h"

#define MOUNTINFO "/proc/self/mountinfo"
/* after an error, the mount table is read again this long after, for a
 * file system that the error turns read-only (the mount table does not
 * wake anyone then); at the third, an error-stopped ext4 the table still
 * calls rw is reported all the same (kfs_mount_error_ro()) */
static const uint64_t error_rereads_ms[] = {0, 100, 400, 1000};
#define INFER_AT 2

struct watch {
	struct fs_source *fs;
	unsigned mount_id;
	struct kfs_mount m; /* a copy (its strings are the table's) */
	bool remote;	    /* answers through a peer: never statfs()ed, never marked */
	bool space;	    /* thresholds are checked (a block device) */
	struct kfs_thresholds t;
	struct kfs_space sp;
	struct ktimer *timer;
	int32_t fsid[2];
	bool has_fsid;
	bool marked;	  /* FAN_FS_ERROR (and FAN_MODIFY when armed) */
	bool armed;	  /* the one-shot FAN_MODIFY wake-up */
	bool mark_failed; /* the file system takes no fanotify mark */
	bool writing;	  /* a write was seen and the space still moves */
	double peak;	  /* the fastest fall measured, bytes a second */
	bool seen;	  /* still in the table (a pass's mark) */
	bool retune;	  /* its thresholds changed at a reload: look now */
	bool error;	  /* an error came: is it read-only now? (INFER_AT) */
	bool error_ro;	  /* reported read-only after an error, inferred */
	bool resumed;	  /* its space state is the last keventd's: the first
			   * look's crossings happened while none watched */
};

struct fs_source {
	struct ksource base;
	struct ksink sink;
	const struct kfs_config *cfg;
	struct kfs_config own_cfg; /* when none is given */
	int info_fd, fan_fd;
	struct kio *info_io, *fan_io;
	struct kfs_table table;
	struct watch **w;
	size_t n_w;
	struct ktimer *reread[ARRAY_SIZE(error_rereads_ms)];
	struct ksource *quota; /* the VFS_DQUOT family's warnings, or NULL */
	uint64_t seq;	       /* the events so far */
	bool stopped;
	/* what was reported, kept in the state directory for the next start
	 * (NULL: no state directory) */
	char *state_path;	       /* for messages */
	const struct kstatedir *state; /* where fs.state is: NULL, none */
	char boot_id[40];
	bool dirty;			/* the file is behind what was reported */
	const struct kfs_state *resume; /* at start: the last keventd's */
	size_t n_synthetic;
	/* quota warnings waiting for the name of their user or group, looked
	 * up off the loop (idname.h), in order; NULL: no thread, no names */
	struct kidname *names;
	struct kfs_holdq held;
	struct ktimer *held_timer;
	bool names_stuck; /* a look-up overran: names are not waited for */
};

/* How long a quota warning waits for its name: then it goes without, and
 * so do the next ones until the look-ups caught up. */
#define NAME_WAIT_NS (1000ull * 1000000)

static void look(struct watch *w, uint64_t now);
static void save_state(struct fs_source *fs);

static void submit(struct fs_source *fs, int rc, struct kevent *ev, const char *why)
{
	if (rc == 0) {
		ev->seqnum = ++fs->seq;
		(void)ksink_submit(&fs->sink, ev);
	} else
		ksink_reject(&fs->sink, KEVENT_SOURCE_FS, rc == -ENOMEM ? "out of memory" : why);
}

static struct watch *find_watch(struct fs_source *fs, unsigned id)
{
	for (size_t i = 0; i < fs->n_w; i++)
		if (fs->w[i]->mount_id == id)
			return fs->w[i];
	return NULL;
}

static void set_mark(struct watch *w, bool on, uint64_t mask)
{
	struct fs_source *fs = w->fs;
	if (fs->fan_fd < 0 || w->remote)
		return;
	unsigned flags = (on ? FAN_MARK_ADD : FAN_MARK_REMOVE) | FAN_MARK_FILESYSTEM;
	if (fanotify_mark(fs->fan_fd, flags, mask, AT_FDCWD, w->m.mountpoint) < 0) {
		/* said once, and not tried again for this mount */
		if (on && !w->mark_failed)
			log_notice("fs: %s (%s) cannot report %s through fanotify: %s",
				   w->m.mountpoint, w->m.fstype,
				   mask & FAN_FS_ERROR ? "errors" : "writes", strerror(errno));
		if (on)
			w->mark_failed = true;
		return;
	}
	if (mask & FAN_FS_ERROR)
		w->marked = on;
	if (mask & FAN_MODIFY)
		w->armed = on;
}

static void on_timer(struct ktimer *t, void *userdata)
{
	struct watch *w = userdata;
	(void)t;
	w->timer = NULL;
	look(w, now_monotonic_ns());
	save_state(w->fs);
}

/* statfs(), the crossings it shows, and the next look. */
static void look(struct watch *w, uint64_t now)
{
	struct fs_source *fs = w->fs;
	ktimer_cancel(w->timer);
	w->timer = NULL;
	if (fs->stopped || !w->space || !kfs_thresholds_on(&w->t))
		return; /* nothing to say about its space: never looked at */
	struct statfs sf;
	if (statfs(w->m.mountpoint, &sf) < 0) {
		log_debug("fs: statfs %s: %s", w->m.mountpoint, strerror(errno));
		return;
	}
	if (!w->has_fsid) {
		memcpy(w->fsid, &sf.f_fsid, sizeof(w->fsid));
		w->has_fsid = true;
	}
	uint64_t bs = sf.f_frsize ? (uint64_t)sf.f_frsize : (uint64_t)sf.f_bsize;
	struct kfs_stat st = {
		.size = (uint64_t)sf.f_blocks * bs,
		.avail = (uint64_t)sf.f_bavail * bs,
		.files = (uint64_t)sf.f_files,
		.files_avail = (uint64_t)sf.f_ffree,
	};
	bool moved = !w->sp.known || st.avail != w->sp.last_avail;
	struct kfs_space_change ch;
	kfs_space_update(&w->sp, &w->t, &st, now, &ch);
	bool synthetic = w->resumed;
	w->resumed = false;
	for (size_t i = 0; i < ch.n; i++) {
		struct kevent *ev = NULL;
		const char *why = NULL;
		int rc = kfs_space_event(ch.signal[i], ch.initial, &w->m, &st, now_realtime_ns(),
					 &ev, &why);
		if (rc == 0 && ch.initial)
			log_notice("fs: %s is already %s at start-up", w->m.mountpoint,
				   ch.signal[i]);
		if (rc == 0 && synthetic) {
			ev->synthetic = true;
			fs->n_synthetic++;
		}
		submit(fs, rc, ev, why);
	}
	if (ch.n || synthetic)
		fs->dirty = true;
	if (w->sp.rate > w->peak)
		w->peak = w->sp.rate;
	if (!moved)
		w->writing = false;
	/* still: wait for the next write (one wake-up) rather than look often */
	if (!w->writing && !w->armed && !w->mark_failed)
		set_mark(w, true, FAN_MODIFY);
	double rate = w->sp.rate;
	if (w->writing) {
		double assumed = w->peak > KFS_ASSUMED_RATE ? w->peak : KFS_ASSUMED_RATE;
		rate = rate > assumed ? rate : assumed;
	}
	uint64_t next = kfs_space_interval(&w->sp, &w->t, &st, rate, now);
	if (kloop_add_timer(fs->sink.loop, now + next, on_timer, w, &w->timer) < 0)
		log_warning("fs: cannot time the next look at %s", w->m.mountpoint);
}

static void watch_free(struct watch *w)
{
	if (!w)
		return;
	ktimer_cancel(w->timer);
	free(w);
}

static int watch_add(struct fs_source *fs, const struct kfs_mount *m)
{
	struct watch *w = calloc(1, sizeof(*w));
	struct watch **v = realloc(fs->w, (fs->n_w + 1) * sizeof(*v));
	if (!w || !v) {
		free(w);
		if (v)
			fs->w = v;
		return -ENOMEM;
	}
	fs->w = v;
	w->fs = fs;
	w->mount_id = m->id;
	w->m = *m;
	/* statfs() of a network or FUSE file system whose server is gone
	 * blocks, and so does fanotify_mark(), which makes one for the fsid:
	 * thresholds are for the block devices', and neither call is made
	 * for a file system that answers through a peer (kfs_mount_remote),
	 * whatever its source says */
	w->remote = kfs_mount_remote(m);
	w->space = !w->remote && strncmp(m->source, "/dev/", 5) == 0;
	w->t = *kfs_config_for(fs->cfg, m->mountpoint);
	fs->w[fs->n_w++] = w;
	if (!w->remote)
		set_mark(w, true, FAN_FS_ERROR);
	/* at start, the same mount as the last keventd's, judged by the same
	 * thresholds: its space state goes on from what was reported then,
	 * and the first look says only a crossing made meanwhile; with other
	 * thresholds it is a first look (Initial) */
	const struct kfs_mount *was =
		fs->resume ? kfs_table_find_id(&fs->resume->table, m->id) : NULL;
	const struct kfs_saved_space *sp =
		was && kfs_mount_same(was, m) ? kfs_state_space(fs->resume, m->id) : NULL;
	if (sp && sp->judged && kfs_thresholds_equal(&sp->t, &w->t) && w->space &&
	    kfs_thresholds_on(&w->t)) {
		w->sp = (struct kfs_space){
			.known = true, .space = sp->space, .inodes_low = sp->inodes_low};
		w->resumed = true;
	}
	return 0;
}

struct diff_ctx {
	struct fs_source *fs;
	uint64_t now;
	bool synthetic;
};

static void on_change(void *userdata, enum kfs_change c, const struct kfs_mount *m,
		      const struct kfs_mount *prev)
{
	struct diff_ctx *d = userdata;
	struct kevent *ev = NULL;
	const char *why = NULL;
	int rc = kfs_mount_event(c, m, prev, d->now, &ev, &why);
	if (rc == 0 && d->synthetic) {
		ev->synthetic = true;
		d->fs->n_synthetic++;
	}
	submit(d->fs, rc, ev, why);
}

/* The state file made what was reported, when it is behind. */
static void save_state(struct fs_source *fs)
{
	if (!fs->state_path || !fs->dirty)
		return;
	_cleanup_free_ struct kfs_saved_space *sp = calloc(fs->n_w + 1, sizeof(*sp));
	size_t n = 0;
	for (size_t i = 0; sp && i < fs->n_w; i++) {
		const struct watch *w = fs->w[i];
		if (w->space && w->sp.known && kfs_thresholds_on(&w->t))
			sp[n++] = (struct kfs_saved_space){w->mount_id, w->sp.space,
							   w->sp.inodes_low, true, w->t};
	}
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (sp)
		kfs_state_render(fs->boot_id, fs->cfg->all, &fs->table, sp, n, &sb);
	int rc = !sp || sb.oom
			 ? -ENOMEM
			 : kstatedir_replace(fs->state->fd, KFS_STATE_FILE, sb.buf, sb.len, 0600);
	if (rc < 0)
		log_warning("fs: cannot write %s: %s", fs->state_path, kstatedir_strerror(rc));
	else
		fs->dirty = false;
}

/* Reads the mount table again, says what changed (synthetic: while no
 * keventd watched) and follows it. */
static void reread_as(struct fs_source *fs, bool report, bool synthetic)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0, bad = 0;
	int rc = reread_fd(fs->info_fd, KFS_MOUNTINFO_MAX, &text, &len);
	struct kfs_table cur;
	if (rc == 0)
		rc = kfs_table_parse(text, len, &cur, &bad);
	if (rc < 0) {
		log_warning("fs: cannot read %s: %s", MOUNTINFO, strerror(-rc));
		return;
	}
	if (report) {
		struct diff_ctx d = {fs, now_realtime_ns(), synthetic};
		if (kfs_diff(&fs->table, &cur, fs->cfg->all, on_change, &d))
			fs->dirty = true;
	} else {
		fs->dirty = true;
	}
	/* the watches follow the new table: strings re-pointed, gone ones freed */
	for (size_t i = 0; i < fs->n_w; i++)
		fs->w[i]->seen = false;
	uint64_t now = now_monotonic_ns();
	for (size_t i = 0; i < cur.n; i++) {
		const struct kfs_mount *m = &cur.v[i];
		if (!kfs_mount_wanted(m, fs->cfg->all))
			continue;
		struct watch *w = find_watch(fs, m->id);
		if (w) {
			w->m = *m;
			w->seen = true;
		} else if (watch_add(fs, m) == 0) {
			w = fs->w[fs->n_w - 1];
			w->seen = true;
			look(w, now);
		}
	}
	size_t k = 0;
	for (size_t i = 0; i < fs->n_w; i++) {
		if (fs->w[i]->seen)
			fs->w[k++] = fs->w[i];
		else
			watch_free(fs->w[i]); /* the kernel drops its marks with the fs */
	}
	fs->n_w = k;
	kfs_table_release(&fs->table);
	fs->table = cur;
	save_state(fs);
}

static void reread(struct fs_source *fs, bool report)
{
	reread_as(fs, report, false);
}

static void on_info(struct kio *io, int fd, uint32_t events, void *userdata)
{
	(void)io, (void)fd, (void)events;
	reread(userdata, true);
}

/* Each file system an error stopped writing while the mount table still
 * says rw: its remount-ro, once. */
static void infer_error_ro(struct fs_source *fs)
{
	for (size_t i = 0; i < fs->n_w; i++) {
		struct watch *w = fs->w[i];
		bool stopped = w->error && !w->error_ro && kfs_mount_error_ro(&w->m);
		w->error = false;
		if (!stopped)
			continue;
		w->error_ro = true;
		struct kevent *ev = NULL;
		const char *why = NULL;
		int rc = kfs_error_ro_event(&w->m, now_realtime_ns(), &ev, &why);
		submit(fs, rc, ev, why);
		log_notice("fs: %s stopped writing after its error (errors=remount-ro), though "
			   "the mount table says rw: reported remount-ro",
			   w->m.mountpoint);
	}
}

static void on_reread(struct ktimer *t, void *userdata)
{
	struct fs_source *fs = userdata;
	size_t at = ARRAY_SIZE(fs->reread);
	for (size_t i = 0; i < ARRAY_SIZE(fs->reread); i++)
		if (fs->reread[i] == t) {
			fs->reread[i] = NULL;
			at = i;
		}
	reread(fs, true);
	if (at == INFER_AT)
		infer_error_ro(fs);
}

static struct watch *watch_of_fsid(struct fs_source *fs, const int32_t fsid[2])
{
	for (size_t i = 0; i < fs->n_w; i++) {
		struct watch *w = fs->w[i];
		if (!w->has_fsid) {
			struct statfs sf;
			if (w->space && statfs(w->m.mountpoint, &sf) == 0) {
				memcpy(w->fsid, &sf.f_fsid, sizeof(w->fsid));
				w->has_fsid = true;
			}
		}
		if (w->has_fsid && w->fsid[0] == fsid[0] && w->fsid[1] == fsid[1])
			return w;
	}
	return NULL;
}

static void on_error(struct fs_source *fs, const struct kfs_fan_rec *r)
{
	struct watch *w = r->has_fsid ? watch_of_fsid(fs, r->fsid) : NULL;
	if (!w) {
		ksink_reject(&fs->sink, KEVENT_SOURCE_FS, "an error of a file system not watched");
		return;
	}
	struct kevent *ev = NULL;
	const char *why = NULL;
	int rc = kfs_error_event(r, &w->m, now_realtime_ns(), &ev, &why);
	submit(fs, rc, ev, why);
	w->error = true;
	/* errors=remount-ro: the super block turns read-only without a
	 * mount table change; look now and a little later */
	uint64_t now = now_monotonic_ns();
	for (size_t i = 0; i < ARRAY_SIZE(error_rereads_ms); i++) {
		ktimer_cancel(fs->reread[i]);
		fs->reread[i] = NULL;
		(void)kloop_add_timer(fs->sink.loop, now + error_rereads_ms[i] * 1000000, on_reread,
				      fs, &fs->reread[i]);
	}
}

/* A write on a file system marked while still.  The mark is the super
 * block's, shared by every mount of it (bind mounts): it is taken off
 * through the first, even when that one had not armed it (one whose
 * watch is gone), and every watch of the file system looks now. */
static void on_write(struct fs_source *fs, const struct kfs_fan_rec *r)
{
	struct watch *first = r->has_fsid ? watch_of_fsid(fs, r->fsid) : NULL;
	if (!first)
		return;
	first->armed = true;
	set_mark(first, false, FAN_MODIFY);
	uint64_t now = now_monotonic_ns();
	for (size_t i = 0; i < fs->n_w; i++) {
		struct watch *w = fs->w[i];
		if (!w->has_fsid || w->fsid[0] != r->fsid[0] || w->fsid[1] != r->fsid[1])
			continue;
		w->armed = false;
		w->writing = true;
		look(w, now);
	}
}

/* The group's queue overflowed: errors may be lost.  Counted, and the
 * mount table and every file system looked at again. */
static void on_overflow(struct fs_source *fs)
{
	ksink_overrun(&fs->sink, KEVENT_SOURCE_FS);
	reread(fs, true);
	uint64_t now = now_monotonic_ns();
	for (size_t i = 0; i < fs->n_w; i++) {
		fs->w[i]->writing = true;
		look(fs->w[i], now);
	}
}

static void on_fan(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct fs_source *fs = userdata;
	(void)io, (void)events;
	uint8_t buf[8192] __attribute__((aligned(8)));
	for (int rounds = 0; rounds < 16; rounds++) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (size_t off = 0; off < (size_t)n;) {
			struct kfs_fan_rec r;
			size_t used;
			const char *why = NULL;
			int rc = kfs_fan_decode(buf + off, (size_t)n - off, &r, &used, &why);
			if (rc < 0)
				ksink_reject(&fs->sink, KEVENT_SOURCE_FS, why);
			else if (r.mask & FAN_Q_OVERFLOW)
				on_overflow(fs);
			else if (r.mask & FAN_FS_ERROR)
				on_error(fs, &r);
			else if (r.mask & FAN_MODIFY)
				on_write(fs, &r);
			if (!used)
				break;
			off += used;
		}
	}
	save_state(fs);
}

static int quota_init(const void *arg, void **state)
{
	*state = (void *)arg;
	return 0;
}

/* The first n held warnings go, the first with name (may be NULL). */
static void send_first(struct fs_source *fs, size_t n, const char *name)
{
	for (size_t i = 0; i < n && fs->held.n; i++) {
		struct kfs_held e;
		kfs_holdq_pop(&fs->held, &e);
		const struct kfs_mount m = {
			.mountpoint = e.mountpoint, .source = e.source, .fstype = e.fstype};
		struct kevent *ev = NULL;
		const char *why = NULL;
		int rc = kfs_quota_event(&e.q, &m, i == 0 ? name : NULL, e.now, &ev, &why);
		submit(fs, rc, ev, why);
		kfs_held_release(&e);
	}
}

static void on_held_timer(struct ktimer *t, void *userdata);

/* The head's wait for its name, timed. */
static void time_first(struct fs_source *fs)
{
	ktimer_cancel(fs->held_timer);
	fs->held_timer = NULL;
	if (fs->held.n && kloop_add_timer(fs->sink.loop, fs->held.v[0].since + NAME_WAIT_NS,
					  on_held_timer, fs, &fs->held_timer) < 0)
		fs->names_stuck = true; /* cannot wait: none waits */
}

/* Every held warning goes, without a name. */
static void send_held(struct fs_source *fs)
{
	send_first(fs, fs->held.n, NULL);
	time_first(fs);
}

static void on_held_timer(struct ktimer *t, void *userdata)
{
	struct fs_source *fs = userdata;
	(void)t;
	fs->held_timer = NULL;
	log_warning("fs: the user and group databases did not answer within a second: quota "
		    "warnings go without Name: until they do");
	fs->names_stuck = true;
	send_held(fs);
}

static void on_name(void *userdata, uint64_t token, const char *name)
{
	struct fs_source *fs = userdata;
	size_t n = kfs_holdq_answered(&fs->held, token);
	if (n) {
		send_first(fs, n, name);
		time_first(fs);
	}
	/* else: the answer of a warning that went without */
	if (fs->names_stuck && !kidname_outstanding(fs->names)) {
		fs->names_stuck = false;
		log_notice("fs: the user and group databases answer again");
	}
}

/* Holds the warning q on m until its name comes, or (a project's) until
 * those before it went; false when it need not wait or cannot (no
 * thread, the look-ups stuck or too many). */
static bool hold(struct fs_source *fs, const struct kfs_quota_msg *q, const struct kfs_mount *m,
		 uint64_t now)
{
	bool named = kfs_quota_named(q);
	if (!fs->names || fs->names_stuck || fs->held.n >= KIDNAME_OUTSTANDING ||
	    (!named && !fs->held.n))
		return false;
	struct kfs_held *e;
	if (kfs_holdq_push(&fs->held, q, m, now, now_monotonic_ns(), &e) < 0)
		return false;
	if (named && kidname_ask(fs->names, q->qtype == 1, (uint32_t)q->id, e->token) < 0) {
		kfs_holdq_drop_last(&fs->held);
		return false;
	}
	if (fs->held.n == 1)
		time_first(fs);
	return true;
}

static int quota_decode(void *state, const struct nlmsghdr *nlh, size_t left, int family_id,
			struct kevent **ev, const char **why)
{
	struct fs_source *fs = state;
	struct kfs_quota_msg q;
	*ev = NULL;
	int rc = kfs_quota_decode(nlh, left, family_id, &q, why);
	if (rc < 0 || !q.warning)
		return rc;
	const struct kfs_mount *m = kfs_table_find_dev(&fs->table, q.major, q.minor);
	if (!m) {
		*why = "a quota warning of a device that is not mounted";
		return -EINVAL;
	}
	uint64_t now = now_realtime_ns();
	/* the name is looked up off the loop: the warning waits for it */
	if (hold(fs, &q, m, now))
		return 0;
	send_held(fs); /* in their order: those before it go first */
	rc = kfs_quota_event(&q, m, NULL, now, ev, why);
	if (rc == 0)
		(*ev)->seqnum = ++fs->seq;
	return rc;
}

static const char *const quota_groups[] = {"events"};

static const struct ksource_genl_desc quota_desc = {
	.name = "fs",
	.kind = KEVENT_SOURCE_FS,
	.family = "VFS_DQUOT",
	.groups = quota_groups,
	.n_groups = ARRAY_SIZE(quota_groups),
	.recv_buf = 16 * 1024,
	.decode = quota_decode,
	.init = quota_init,
	.say_subscribed = "subscribed to the VFS_DQUOT family's quota warnings",
	.say_absent = "the kernel has no VFS_DQUOT netlink family (no quota support, yet)",
};

static void fs_pause(struct ksource *s, bool pause)
{
	struct fs_source *fs = (struct fs_source *)s;
	if (fs->quota)
		fs->quota->pause(fs->quota, pause);
	if (fs->info_io)
		(void)kio_set_events(fs->info_io, pause ? 0 : EPOLLPRI);
	if (fs->fan_io)
		(void)kio_set_events(fs->fan_io, pause ? 0 : EPOLLIN);
	if (!pause)
		reread(fs, true);
}

static void fs_stop(struct ksource *s)
{
	struct fs_source *fs = (struct fs_source *)s;
	if (!fs->stopped)
		save_state(fs);
	fs->stopped = true;
	if (fs->quota)
		fs->quota->stop(fs->quota);
	/* a warning read goes, without the name it waited for */
	send_held(fs);
	kidname_free(fs->names);
	fs->names = NULL;
	kio_free(fs->info_io);
	kio_free(fs->fan_io);
	fs->info_io = fs->fan_io = NULL;
	for (size_t i = 0; i < fs->n_w; i++) {
		ktimer_cancel(fs->w[i]->timer);
		fs->w[i]->timer = NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(fs->reread); i++) {
		ktimer_cancel(fs->reread[i]);
		fs->reread[i] = NULL;
	}
}

static void fs_free(struct ksource *s)
{
	struct fs_source *fs = (struct fs_source *)s;
	if (!fs)
		return;
	fs_stop(s);
	if (fs->quota)
		fs->quota->free(fs->quota);
	for (size_t i = 0; i < fs->n_w; i++)
		watch_free(fs->w[i]);
	free(fs->w);
	kfs_table_release(&fs->table);
	kfs_config_release(&fs->own_cfg);
	free(fs->state_path);
	kfs_holdq_release(&fs->held);
	if (fs->info_fd >= 0)
		close(fs->info_fd);
	if (fs->fan_fd >= 0)
		close(fs->fan_fd);
	free(fs);
}

void ksource_fs_configure(struct ksource *s, const struct kfs_config *cfg)
{
	struct fs_source *fs = (struct fs_source *)s;
	uint64_t now = now_monotonic_ns();
	fs->cfg = cfg;
	for (size_t i = 0; i < fs->n_w; i++) {
		struct watch *w = fs->w[i];
		const struct kfs_thresholds *t = kfs_config_for(cfg, w->m.mountpoint);
		if (kfs_thresholds_equal(t, &w->t))
			continue;
		bool was_on = kfs_thresholds_on(&w->t);
		w->t = *t;
		if (!kfs_thresholds_on(t)) {
			/* never looked at again: what it knew is forgotten */
			ktimer_cancel(w->timer);
			w->timer = NULL;
			w->sp = (struct kfs_space){0};
			continue;
		}
		/* turned on by a reload: all was well until now, so a file
		 * system past the new lines is a crossing, not Initial */
		if (!was_on)
			w->sp = (struct kfs_space){.known = true, .space = KFS_OK, .last_ns = now};
		w->retune = true;
	}
	/* mounts: block|all may have changed: watches made or dropped */
	reread(fs, false);
	for (size_t i = 0; i < fs->n_w; i++)
		if (fs->w[i]->retune) {
			fs->w[i]->retune = false;
			look(fs->w[i], now);
		}
	save_state(fs);
	log_info("fs: watching %zu file system(s) of %zu mounts", fs->n_w, fs->table.n);
}

/* This boot's id, or "" */
static void read_boot_id(char *out, size_t size)
{
	_cleanup_close_ int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, out, size - 1);
	size_t len = n > 0 ? strcspn(out, "\n") : 0;
	out[len < size ? len : 0] = '\0';
	for (size_t i = 0; i < len; i++)
		if (!((out[i] >= '0' && out[i] <= '9') || (out[i] >= 'a' && out[i] <= 'f') ||
		      out[i] == '-'))
			out[0] = '\0';
}

/* The first read of the mount table.  With the last keventd's state (the
 * same boot, the same mounts: setting), the differences are reported,
 * flagged synthetic: mounts that came, went or were remounted meanwhile,
 * and space states crossed; the first start (no file, or a damaged one,
 * which is dropped) reports what it always does: the space states
 * already past a line, Initial. */
static void resume(struct fs_source *fs, const struct kstatedir *state)
{
	read_boot_id(fs->boot_id, sizeof(fs->boot_id));
	fs->state = state;
	if (!state || !fs->boot_id[0] ||
	    asprintf(&fs->state_path, "%s/" KFS_STATE_FILE, state->path) < 0) {
		fs->state_path = NULL;
		reread(fs, false);
		return;
	}
	struct kfs_state st = {0};
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	const char *why = NULL;
	int rc = kstatedir_read(state->fd, KFS_STATE_FILE, KFS_STATE_MAX, &text, &len);
	if (rc == 0)
		rc = kfs_state_parse(text, len, &st, &why);
	else if (rc != -ENOENT)
		why = kstatedir_strerror(rc);
	bool use = rc == 0 && strcmp(st.boot_id, fs->boot_id) == 0 && st.all == fs->cfg->all;
	if (rc < 0 && rc != -ENOENT)
		log_warning("fs: %s is damaged (%s): dropped, nothing reported of the time "
			    "before this start",
			    fs->state_path, why);
	else if (rc == 0 && !use)
		log_info("fs: %s is of another boot or mounts: setting: not compared",
			 fs->state_path);
	if (!use) {
		kfs_state_release(&st);
		reread(fs, false);
		return;
	}
	/* the saved table as the last read, so that the first read says the
	 * changes; st.table is the same until reread_as() releases it */
	kfs_table_release(&fs->table);
	fs->table = st.table;
	fs->resume = &st;
	reread_as(fs, true, true);
	fs->resume = NULL;
	st.table = (struct kfs_table){0};
	kfs_state_release(&st);
	fs->dirty = true;
	save_state(fs);
	if (fs->n_synthetic)
		log_notice("fs: %zu change(s) while not watched (reported, synthetic)",
			   fs->n_synthetic);
}

/* "4 mounts (2 for space: /, /home), errors on 3, quota warnings" */
static void fs_describe(struct ksource *s, struct strbuf *out)
{
	struct fs_source *fs = container_of(s, struct fs_source, base);
	size_t space = 0, marked = 0, shown = 0;
	_cleanup_strbuf_ struct strbuf where = STRBUF_INIT;
	for (size_t i = 0; i < fs->n_w; i++) {
		const struct watch *w = fs->w[i];
		marked += w->marked;
		if (!w->space)
			continue;
		if (space++ < 4) {
			strbuf_puts(&where, shown++ ? ", " : ": ");
			strbuf_put_escaped(&where, w->m.mountpoint);
		}
	}
	strbuf_printf(out, "%zu mount%s (%zu for space%s%s), errors on %zu", fs->n_w,
		      fs->n_w == 1 ? "" : "s", space, strbuf_str(&where),
		      space > shown ? ", ..." : "", marked);
	strbuf_puts(out, fs->quota ? ", quota warnings" : ", no quota family");
}

int ksource_fs_new(const struct ksink *sink, const struct kfs_config *cfg, struct ksource **out)
{
	struct fs_source *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	fs->base = (struct ksource){
		.name = "fs",
		.kind = KEVENT_SOURCE_FS,
		.pause = fs_pause,
		.stop = fs_stop,
		.describe = fs_describe,
		.free = fs_free,
	};
	fs->sink = *sink;
	kfs_config_init(&fs->own_cfg);
	fs->cfg = cfg ? cfg : &fs->own_cfg;
	fs->fan_fd = -1;
	fs->info_fd = open(MOUNTINFO, O_RDONLY | O_CLOEXEC);
	if (fs->info_fd < 0) {
		int e = errno;
		fs_free(&fs->base);
		return -e;
	}
	int rc = kloop_add_io(sink->loop, fs->info_fd, EPOLLPRI, on_info, fs, &fs->info_io);
	if (rc < 0) {
		fs_free(&fs->base);
		return rc;
	}
	fs->fan_fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC | FAN_NONBLOCK,
				   O_RDONLY | O_CLOEXEC | O_LARGEFILE);
	if (fs->fan_fd < 0)
		log_notice("fs: no fanotify (%s): no error events, space looked at by time alone",
			   strerror(errno));
	else if (kloop_add_io(sink->loop, fs->fan_fd, EPOLLIN, on_fan, fs, &fs->fan_io) < 0) {
		close(fs->fan_fd);
		fs->fan_fd = -1;
	}
	resume(fs, sink->state);
	/* the quota warnings: the one Generic Netlink implementation, whose
	 * decoder maps the device to its mount through the table above */
	if (ksource_genl_new(&quota_desc, sink, fs, &fs->quota) < 0)
		fs->quota = NULL;
	if (fs->quota && kidname_new(sink->loop, on_name, fs, &fs->names) < 0)
		log_notice("fs: no thread to look names up: quota warnings go without Name:");
	log_info("fs: watching %zu file system(s) of %zu mounts", fs->n_w, fs->table.n);
	*out = &fs->base;
	return 0;
}

/* --- its row (source-type.h): keventd.yaml's fs:, applied at a reload
 * without making the source again --- */

static int make(const struct ksource_args *a, struct ksource **out)
{
	return ksource_fs_new(a->sink, a->section, out);
}

static int parse(void *section, const struct ynode *v, const char *path, struct kdiags *diags)
{
	return kfs_config_parse(section, v, path, diags);
}

static bool equal(const void *a, const void *b)
{
	return kfs_config_equal(a, b);
}

static void release(void *section)
{
	kfs_config_release(section);
}

/* the mounts it watches and their thresholds */
static void configure(struct ksource *s, const void *section, struct strbuf *said)
{
	if (s)
		ksource_fs_configure(s, section);
	strbuf_puts(said, "fs settings changed: applied");
}

/* The file systems' space and read-only states are reported afresh
 * when fs.state is gone (a first start, a reboot that emptied the state
 * directory). */
static bool reports_at_start(const struct kstatedir *state)
{
	return !state || faccessat(state->fd, KFS_STATE_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0;
}

const struct ksource_type ksource_type_fs = {
	.kind = KEVENT_SOURCE_FS,
	.make = make,
	.reports_at_start = reports_at_start,
	.section_size = sizeof(struct kfs_config),
	.defaults = &kfs_config_defaults,
	.parse = parse,
	.equal = equal,
	.release = release,
	.configure = configure,
};
