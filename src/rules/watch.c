// SPDX-License-Identifier: GPL-2.0-or-later
/* Rule directory watches (watch.h). */
#include "watch.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define QUIET_NS (100ull * 1000000ull)
#define MAX_NS	 (500ull * 1000000ull)

#define DIR_EVENTS                                                                          \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | \
	 IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
#define PARENT_EVENTS (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

struct kwatch {
	struct kloop *loop;
	const char *const *dirs;
	size_t n_dirs;
	void (*changed)(void *userdata);
	void *userdata;
	int fd;
	struct kio *io;
	struct ktimer *timer;
	uint64_t first_ns;
	/* the watches of the ancestors of missing rule directories: what
	 * happens there (keventd making $XDG_RUNTIME_DIR/keventd, say) is no
	 * change of rules unless a rule directory appeared */
	int parent_wd[64];
	size_t n_parent;
	uint64_t present;   /* bit i: dirs[i] was there at the last setup */
	bool rules_touched; /* an event of a rule directory's own watch, or lost ones */
};

/* Watches the drop-in directories (NAME.yaml.d/) of dir: their files
 * change rules as the rule files do.  One that appears later is seen by
 * dir's own watch, and watched from the reload that follows. */
static void watch_dropin_dirs(struct kwatch *w, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		if (de->d_name[0] == '.' || !str_has_suffix(de->d_name, ".yaml.d") ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) < sizeof(path))
			(void)inotify_add_watch(w->fd, path, DIR_EVENTS | IN_DONT_FOLLOW);
	}
	closedir(d);
}

/* (Re)creates every watch from scratch: cheap for a handful of directories,
 * and right whatever appeared, vanished or was replaced meanwhile. */
static int setup_watches(struct kwatch *w)
{
	if (w->io)
		kio_free(w->io);
	w->io = NULL;
	if (w->fd >= 0)
		close(w->fd);
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0)
		return -errno;
	w->n_parent = 0;
	w->present = 0;
	for (size_t i = 0; i < w->n_dirs; i++) {
		char path[PATH_MAX];
		const char *dir = w->dirs[i];
		if (inotify_add_watch(w->fd, dir, DIR_EVENTS) >= 0) {
			watch_dropin_dirs(w, dir);
			if (i < 64)
				w->present |= 1ull << i;
			continue;
		}
		/* missing: watch the closest ancestor that exists for it to appear */
		if (strlen(dir) >= sizeof(path))
			continue;
		strcpy(path, dir);
		for (;;) {
			char *slash = strrchr(path, '/');
			if (!slash)
				break;
			if (slash == path)
				slash[1] = '\0';
			else
				*slash = '\0';
			int wd = inotify_add_watch(w->fd, path, PARENT_EVENTS);
			if (wd >= 0 && w->n_parent < ARRAY_SIZE(w->parent_wd))
				w->parent_wd[w->n_parent++] = wd;
			if (wd >= 0 || strcmp(path, "/") == 0)
				break;
		}
	}
	return 0;
}

static void on_inotify(struct kio *io, int fd, uint32_t events, void *userdata);

static int arm_io(struct kwatch *w)
{
	return kloop_add_io(w->loop, w->fd, EPOLLIN, on_inotify, w, &w->io);
}

static void on_quiet(struct ktimer *t, void *userdata)
{
	struct kwatch *w = userdata;
	(void)t;
	w->timer = NULL;
	w->first_ns = 0;
	uint64_t was = w->present;
	bool touched = w->rules_touched || w->n_dirs > 64;
	w->rules_touched = false;
	/* watches first: a change made during the reload triggers another one */
	int rc = setup_watches(w);
	if (rc == 0)
		rc = arm_io(w);
	if (rc < 0)
		log_error("cannot watch the rule directories: %s; use SIGHUP or keventctl reload",
			  strerror(-rc));
	/* only an ancestor of a missing directory changed, and it is still
	 * missing: the watches moved down, the rules are the same */
	if (rc == 0 && !touched && w->present == was)
		return;
	w->changed(w->userdata);
}

static void on_inotify(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kwatch *w = userdata;
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool any = false;
	(void)io;
	(void)events;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		any = true; /* IN_Q_OVERFLOW included: a reload covers whatever was lost */
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			bool parent = false;
			for (size_t i = 0; i < w->n_parent && !parent; i++)
				parent = e->wd == w->parent_wd[i];
			if (!parent || (e->mask & IN_Q_OVERFLOW))
				w->rules_touched = true;
			p += sizeof(*e) + e->len;
		}
	}
	if (!any)
		return;
	uint64_t now = now_monotonic_ns();
	if (!w->first_ns)
		w->first_ns = now;
	uint64_t due = now + QUIET_NS;
	if (due > w->first_ns + MAX_NS)
		due = w->first_ns + MAX_NS;
	ktimer_cancel(w->timer);
	w->timer = NULL;
	kloop_add_timer(w->loop, due, on_quiet, w, &w->timer);
}

int kwatch_new(struct kloop *loop, const char *const *dirs, size_t n_dirs,
	       void (*changed)(void *userdata), void *userdata, struct kwatch **out)
{
	struct kwatch *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	*w = (struct kwatch){.loop = loop,
			     .dirs = dirs,
			     .n_dirs = n_dirs,
			     .changed = changed,
			     .userdata = userdata,
			     .fd = -1};
	int rc = setup_watches(w);
	if (rc == 0)
		rc = arm_io(w);
	if (rc < 0) {
		kwatch_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void kwatch_free(struct kwatch *w)
{
	if (!w)
		return;
	ktimer_cancel(w->timer);
	kio_free(w->io);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}
