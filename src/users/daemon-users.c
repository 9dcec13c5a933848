// SPDX-License-Identifier: GPL-2.0-or-later
/* The daemon's side of the users socket (daemon-users.h). */
#include "daemon-users.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#if KEVENT_DBUS
#include <systemd/sd-login.h>
#endif
#include "daemon-internal.h"
#include "log.h"
#include "observer.h"
#include "users-client.h"
#include "users-server.h"
#include "util.h"

struct kdaemon_users {
	struct kusers_server *server; /* the system instance's */
	struct kusers_client *client; /* a user instance's */
};

/* Whether uid has the active session of a seat now: logind's word. */
static bool active_session(void *ud, uid_t uid)
{
	(void)ud;
#if KEVENT_DBUS
	return sd_uid_get_seats(uid, 1, NULL) > 0;
#else
	(void)uid;
	return false; /* no logind to ask: no key press is shown */
#endif
}

/* Whether mountpoint is a mount point in pid's mount namespace: it is the
 * system's own, or mountpoint is the fifth field of a line of its
 * mountinfo, octal escapes undone. */
static bool mount_visible(void *ud, pid_t pid, const char *mountpoint)
{
	(void)ud;
	char path[64];
	struct stat mine, theirs;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	/* the system's own mount namespace: every mount of the system's,
	 * one being unmounted too, is the user's */
	if (stat("/proc/self/ns/mnt", &mine) == 0 && stat(path, &theirs) == 0 &&
	    mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool found = false;
	char *line = NULL;
	size_t cap = 0;
	while (!found && getline(&line, &cap, f) > 0) {
		char *mp = line;
		for (int i = 0; i < 4 && mp; i++)
			mp = strchr(mp, ' ') ? strchr(mp, ' ') + 1 : NULL;
		if (!mp)
			continue;
		char *end = strchr(mp, ' ');
		if (end)
			*end = '\0';
		char *w = mp;
		for (const char *r = mp; *r; w++) {
			unsigned o;
			if (r[0] == '\\' && sscanf(r + 1, "%3o", &o) == 1) {
				*w = (char)o;
				r += 4;
			} else {
				*w = *r++;
			}
		}
		*w = '\0';
		found = strcmp(mp, mountpoint) == 0;
	}
	free(line);
	fclose(f);
	return found;
}

static void on_event(void *userdata, const struct kobs_event *e)
{
	struct kdaemon *d = userdata;
	kusers_server_offer(d->users->server, e->ev, e->rules, e->n_rules);
}

static void on_status(void *userdata, struct kstatus_extra *x)
{
	struct kdaemon *d = userdata;
	struct kusers_counts c;
	kusers_server_counts(d->users->server, &c);
	struct kusers_client_counts u;
	kusers_client_counts(d->users->client, &u);
	x->users_server = d->users->server != NULL;
	x->users_client = d->users->client != NULL;
	x->users_peers = c.peers;
	x->users_sent = c.sent;
	x->users_withheld = c.withheld;
	x->users_dropped = c.dropped;
	x->users_refused = c.refused;
	x->users_connected = u.connected;
	x->users_received = u.received;
	x->users_dropped_at_system = u.dropped_at_system;
	x->users_bad = u.bad;
}

/* The system instance's socket: --users-socket, or "users" beside the
 * control socket. */
static char *server_path(const struct kdaemon *d)
{
	if (d->cfg.users_socket)
		return strdup(d->cfg.users_socket);
	const char *ctl = d->cfg.control_path, *slash = ctl ? strrchr(ctl, '/') : NULL;
	if (!slash)
		return NULL;
	char *p = NULL;
	return asprintf(&p, "%.*s/users", (int)(slash - ctl), ctl) < 0 ? NULL : p;
}

int kdaemon_users_start(struct kdaemon *d, const struct ksink *sink)
{
	if (d->cfg.users_none || d->users)
		return 0;
	if (!(d->users = calloc(1, sizeof(*d->users))))
		return -ENOMEM;
	int rc;
	if (d->cfg.user) {
		rc = kusers_client_new(
			sink, d->cfg.users_socket ? d->cfg.users_socket : KEVENT_DEFAULT_USERS,
			&d->users->client);
	} else {
		_cleanup_free_ char *path = server_path(d);
		if (!path)
			return 0; /* no control socket (tests of the core): none */
		const struct kusers_facts facts = {active_session, mount_visible, d};
		rc = kusers_server_new(d->loop, path, &facts, &d->users->server);
		if (rc < 0) {
			log_error("users: cannot listen on %s: %s; the user instances get no "
				  "events",
				  path, strerror(-rc));
			return rc;
		}
	}
	if (rc < 0)
		return rc;
	return kdaemon_observe(d, &(struct kobserver){.name = "users",
						      .event = d->users->server ? on_event : NULL,
						      .status = on_status,
						      .userdata = d});
}

void kdaemon_users_free(struct kdaemon *d)
{
	if (!d->users)
		return;
	kusers_server_free(d->users->server);
	kusers_client_free(d->users->client);
	free(d->users);
	d->users = NULL;
}
