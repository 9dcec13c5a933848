/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon: one event loop that takes events from its sources (through
 * the sink of source.h), matches them, tells its observers, queues their
 * runs on the scheduler and hands them to the runner.  docs/HACKING.md
 * follows one event through it.  Its lifecycle is that of systemd's udev
 * manager: kdaemon_new(), kdaemon_start(), kdaemon_run(), kdaemon_exit(),
 * kdaemon_free(); the keventd program only parses its command line around
 * it, and reads its options with kdaemon_options_read().  This is all of
 * it that the program sees (scripts/check-layers.py holds keventd.c to
 * it); the daemon's own files share daemon-internal.h.
 */
#ifndef KEVENT_DAEMON_H
#define KEVENT_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "source-udev.h"
#include "statedir.h" /* KEVENT_DEFAULT_STATE_DIR, KEVENT_DEFAULT_CONTROL */

/* the configuration file read when --config names none (keventd.yaml(5)) */
#define KEVENT_DEFAULT_CONFIG "/etc/keventd/keventd.yaml"
/* what outlives a reboot (keventd(8), --lib-dir) */
#define KEVENT_DEFAULT_LIB_DIR	  "/var/lib/keventd"
#define KEVENT_DEFAULT_QUEUE_SIZE 4096
#define KEVENT_DEFAULT_HISTORY	  1024 /* events kept for keventctl events (--history) */

struct kdaemon;
struct kdiags;
struct koptions;
struct kuserdirs;
struct strbuf;
struct kmqtt_config;
struct knotify_config;
struct kam_config;
struct kplan;
struct kproc;
struct krule;
struct ksource_sections;

struct kdaemon_config {
	const char **rule_dirs;
	size_t n_rule_dirs;
	const char *control_path; /* NULL: no control socket (tests) */
	gid_t control_gid;	  /* (gid_t)-1: root and keventd's own user only */
	unsigned sources;	  /* bit per enum kevent_source */
	enum kudev_monitor udev_monitor;
	const char *thermal_sysfs; /* NULL: /sys/class/thermal */
	/* the state directory (--state-dir): the journal, the positions and
	 * tables; NULL: none (tests of the core) */
	const char *state_dir;
	size_t journal_size; /* --journal-size; 0: the default */
	/* --lib-dir: what keventd keeps across reboots (the condition
	 * table, cond.h; the notifications' queue, notifier.h); NULL: nothing
	 * (--lib-dir none, and tests of the core) */
	const char *lib_dir;
	bool no_journal; /* KEVENTD_JOURNAL=off, for benchmarks: keventd(8) */
	/* the delegated cgroup to run handlers under, for tests; NULL: keventd's
	 * own, if it is delegated (kdaemon_start()) */
	const char *cgroup_root;
	size_t max_children;
	size_t queue_size;
	bool dry_run;
	/* check rule file ownership: root's (or, not running as root,
	 * keventd's user's own), writable by no one else */
	bool trust;
	/* the user instance (keventd --user): its control socket's directory
	 * is made 0700, the user's alone */
	bool user;
	/* --users-socket: the system instance listens there for the user
	 * instances, a user instance connects there (users-server.h,
	 * users-client.h); NULL: the system instance's beside its control
	 * socket, the user instance's KEVENT_DEFAULT_USERS; users_none: none */
	const char *users_socket;
	bool users_none;
	bool dbus;	      /* forward every event to the system bus (--dbus) */
	size_t history;	      /* events kept for `keventctl events` (--history); 0: none */
	size_t history_bytes; /* their text's bytes at most (--history-bytes); 0: the default */
	/* the broker to publish to (keventd.yaml(5)); NULL or not enabled: none */
	const struct kmqtt_config *mqtt;
	/* keventd.yaml's "notify:" targets; NULL: none, and nothing of the
	 * notifications is loaded (notifier.h) */
	const struct knotify_config *notify;
	/* keventd.yaml's "alertmanager:"; NULL: none, and nothing of it (nor
	 * libcurl, for it) is loaded (alertmanager.h) */
	const struct kam_config *alertmanager;
	/* keventd.yaml's sections of the sources (source-type.h); NULL:
	 * their defaults */
	const struct ksource_sections *sections;
	/* the configuration file keventd read (NULL: none), read again at a
	 * reload for the sources' sections; a source whose section left it
	 * out of sources may start then when it is allowed (--sources) */
	const char *config_path;
	unsigned allowed; /* bit per enum kevent_source */
	/* How handlers start: NULL is kexec_spawn() (tests start others). */
	int (*spawn)(void *userdata, const struct kplan *plan, const struct krule *r,
		     struct kproc *p, const char **what);
	void *spawn_userdata;
};

/* One option of keventd's command line: its long name without "--", and
 * its value (NULL: a flag). */
struct kdaemon_arg {
	const char *name, *value;
};

/*
 * keventd's options (keventd(8), keventd.yaml(5)): the defaults, the
 * system instance's or with user those of the user instance
 * (userdirs.h: its places; the sources socket and condition), then the
 * configuration file config (NULL: KEVENT_DEFAULT_CONFIG or the user's
 * one, read only when it is there), then
 * args[0..n) over it, the command line winning; the rule directories made
 * absolute, so that KEVENT_RULE_FILE means the same to a handler that
 * runs in "/"; and the sources' sections checked against this kernel.
 * 0 with *out; -EINVAL with the mistakes in diags (the file's, each at
 * its place) or, none there, an option's in why; another -errno with why
 * saying what failed (the file cannot be read...).
 */
int kdaemon_options_read(const char *config, const struct kuserdirs *user,
			 const struct kdaemon_arg *args, size_t n, struct koptions **out,
			 struct kdiags *diags, struct strbuf *why);
/* The daemon's configuration in o, for kdaemon_new(); the program may set
 * what its environment says (thermal_sysfs, cgroup_root, no_journal). */
struct kdaemon_config *kdaemon_options_config(struct koptions *o);
/* Sets up the log as o says (--log-level, --log-format). */
void kdaemon_options_log(const struct koptions *o);
/* NULL is fine. */
void kdaemon_options_free(struct koptions *o);
void kdaemon_options_freep(struct koptions **o); /* for _cleanup_() */
/* Whether this build can send events on the system bus (--dbus). */
bool kdaemon_dbus_available(void);

/* Makes a daemon of cfg (copied; its strings must outlive it) and loads
 * its rules; nothing is read yet.  0 or -errno. */
int kdaemon_new(const struct kdaemon_config *cfg, struct kdaemon **out);
/* Starts reading: signals, rule directory watches, the control socket,
 * D-Bus and the sources of cfg.sources (one that is not there is logged
 * and left out).  0, or -errno when the control socket cannot listen. */
int kdaemon_start(struct kdaemon *d);
/* Tells the service manager it is ready and runs until kdaemon_exit() has
 * let the running handlers finish.  0, or -errno when the loop failed. */
int kdaemon_run(struct kdaemon *d);
/* Stops: reads no more, starts no more handlers, and exits once the
 * running ones are done (each within its timeout).  Queued events that
 * have not started stay in the journal for the next start (kept), or,
 * not journaled, are dropped: counted per source in stats.dropped; both
 * are logged, the oldest KDAEMON_STOP_LOG_NAMED by name; a dropped one is
 * handed back to its source first (unhandled()), and one that a source
 * can fetch again at its next start is logged so (refetch).  sig names the reason
 * in the log (0 for none); a second call only says it is still stopping. */
#define KDAEMON_STOP_LOG_NAMED 10
void kdaemon_exit(struct kdaemon *d, int sig);
/* Frees everything.  NULL is fine. */
void kdaemon_free(struct kdaemon *d);
void kdaemon_freep(struct kdaemon **d); /* for _cleanup_() */

#endif
