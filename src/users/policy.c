// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The forwarding policy (keventd.rules(5), WHAT USERS SEE): a line per
 * kind of event, from what the event carries (docs/sources.md).  Anything
 * the lines do not name is kept from users: a new source or signal is
 * private until a line says otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "util.h"

/* The input source's objects (sources/input-map.h, KINPUT_*_PREFIX):
 * a switch's state is public, a key's press is the session's. */
#define INPUT_SWITCH_PREFIX "/org/kernel/input/switch/"

static bool in_list(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* The fs source's signals (docs/sources.md, "fs"): the mount table's and
 * free space's are the mount's, seen by those who see the mount; quota's
 * are the user's or group's they name; error is the admin's. */
static const char *const fs_mount_signals[] = {
	"mount",	  "umount",   "remount-ro", "remount-rw", "remount", "space-low",
	"space-critical", "space-ok", "inodes-low", "inodes-ok",  NULL,
};
static const char *const fs_quota_signals[] = {
	"block-soft",
	"block-hard",
	"block-grace-expired",
	"inode-soft",
	"inode-hard",
	"inode-grace-expired",
	"block-below-soft",
	"block-below-hard",
	"inode-below-soft",
	"inode-below-hard",
	NULL,
};

/*
 * A condition of source fs is the users' when it is about space or
 * read-only: every event of a row says the signal that set it (Set-By:),
 * which then decides, whatever ended or reminded it (umount, expired,
 * acked, reminder).  Without Set-By: (an event of an older keventd), the
 * Reason: decides: a set's is the signal that set it, a clear's the one
 * that cleared it; these signals speak of nothing but a file system's
 * space and whether it is writable, whichever way they came, and any
 * other (error, umount, expired, ...) cannot tell fs-errors from
 * fs-space-low, and is kept private.
 */
static const char *const fs_condition_reasons[] = {
	"space-low", "space-critical", "space-ok",   "inodes-low",
	"inodes-ok", "remount-ro",     "remount-rw", NULL,
};

static bool parse_id(const char *s, uint32_t *out)
{
	int64_t v;
	if (!s || parse_int64(s, &v) < 0 || v < 0 || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* A quota warning: the user's whose Id: it is, or the group members'. */
static enum kusers_why judge_quota(const struct kusers_peer *p, const struct kevent *ev)
{
	const char *type = kevent_prop(ev, "Quota-Type");
	uint32_t id;
	if (!type || !parse_id(kevent_prop(ev, "Id"), &id))
		return KUSERS_NOT_QUOTA;
	if (strcmp(type, "user") == 0)
		return p->uid == (uid_t)id ? KUSERS_QUOTA : KUSERS_NOT_QUOTA;
	if (strcmp(type, "group") == 0) {
		for (size_t i = 0; p->gids && i < p->n_groups; i++)
			if (p->gids[i] == (gid_t)id)
				return KUSERS_QUOTA;
		return KUSERS_NOT_QUOTA;
	}
	return KUSERS_NOT_QUOTA; /* project: no one's in particular */
}

/* An event of a mount: the users' who see the mount. */
static enum kusers_why judge_mount(const struct kusers_peer *p, const struct kusers_facts *f,
				   const struct kevent *ev)
{
	const char *mp = kevent_prop(ev, "Mountpoint");
	_cleanup_free_ char *path = NULL;
	size_t len;
	if (!mp || !f->mount_visible || str_unescape(mp, strlen(mp), &path, &len) < 0 ||
	    strlen(path) != len || path[0] != '/')
		return KUSERS_NOT_MOUNT;
	return f->mount_visible(f->ud, p->pid, path) ? KUSERS_MOUNT : KUSERS_NOT_MOUNT;
}

static enum kusers_why judge_fs(const struct kusers_peer *p, const struct kusers_facts *f,
				const struct kevent *ev)
{
	if (in_list(ev->signal, fs_quota_signals))
		return judge_quota(p, ev);
	if (in_list(ev->signal, fs_mount_signals))
		return judge_mount(p, f, ev);
	return KUSERS_PRIVATE; /* error, and any signal not named above */
}

static enum kusers_why judge_condition(const struct kevent *ev)
{
	const char *src = kevent_prop(ev, "Source");
	if (!src)
		return KUSERS_PRIVATE;
	if (strcmp(src, "md") == 0 || strcmp(src, "thermal") == 0)
		return KUSERS_CONDITION;
	const char *by = kevent_prop(ev, "Set-By");
	if (strcmp(src, "fs") == 0 &&
	    in_list(by ? by : kevent_prop(ev, "Reason"), fs_condition_reasons))
		return KUSERS_CONDITION;
	return KUSERS_PRIVATE;
}

/* The policy's line for ev, before share:. */
static enum kusers_why judge(const struct kusers_peer *p, const struct kusers_facts *f,
			     const struct kevent *ev)
{
	if (ev->host)
		return KUSERS_PRIVATE; /* another machine's */
	switch (ev->source) {
	case KEVENT_SOURCE_UDEV:
	case KEVENT_SOURCE_THERMAL:
	case KEVENT_SOURCE_ACPI:
	case KEVENT_SOURCE_MD: /* /proc/mdstat is every user's to read */
		return KUSERS_PUBLIC;
	case KEVENT_SOURCE_INPUT:
		if (strncmp(ev->object, INPUT_SWITCH_PREFIX, strlen(INPUT_SWITCH_PREFIX)) == 0)
			return KUSERS_PUBLIC;
		/* a key, or anything else of the input source */
		return f->active_session && f->active_session(f->ud, p->uid) ? KUSERS_SESSION
									     : KUSERS_NOT_SESSION;
	case KEVENT_SOURCE_FS:
		return judge_fs(p, f, ev);
	case KEVENT_SOURCE_CONDITION:
		return judge_condition(ev);
	case KEVENT_SOURCE_KERNEL:
	case KEVENT_SOURCE_SOCKET:
	case KEVENT_SOURCE_MQTT:
	case KEVENT_SOURCE_TRACE:
	case KEVENT_SOURCE_KMSG:
	case KEVENT_SOURCE_MAX:
		break;
	}
	return KUSERS_PRIVATE;
}

bool kusers_shared_with(const struct krule *r, const struct kusers_peer *p)
{
	const struct krule_extra *x = krule_extra(r);
	if (x->share_users)
		return true;
	for (char **s = x->share; s && *s; s++) {
		if ((*s)[0] != '@') {
			if (p->name && p->name[0] && strcmp(*s, p->name) == 0)
				return true;
			continue;
		}
		for (size_t i = 0; p->groups && i < p->n_groups; i++)
			if (p->groups[i] && strcmp(*s + 1, p->groups[i]) == 0)
				return true;
	}
	return false;
}

static bool yes(enum kusers_why w)
{
	return w <= KUSERS_SHARED;
}

bool kusers_may_see(const struct kusers_peer *p, const struct kusers_facts *f,
		    const struct kevent *ev, const struct krule *const *rules, size_t n,
		    enum kusers_why *why)
{
	enum kusers_why w = KUSERS_PRIVATE;
	if (p && f && ev) {
		w = judge(p, f, ev);
		for (size_t i = 0; !yes(w) && rules && i < n; i++)
			if (rules[i] && kusers_shared_with(rules[i], p))
				w = KUSERS_SHARED;
	}
	if (why)
		*why = w;
	return yes(w);
}

const char *kusers_why_name(enum kusers_why why)
{
	static const char *const names[KUSERS_WHY_MAX] = {
		[KUSERS_PUBLIC] = "public",
		[KUSERS_SESSION] = "session",
		[KUSERS_CONDITION] = "condition",
		[KUSERS_MOUNT] = "mount",
		[KUSERS_QUOTA] = "quota",
		[KUSERS_SHARED] = "shared",
		[KUSERS_NOT_SESSION] = "not-session",
		[KUSERS_NOT_MOUNT] = "not-mount",
		[KUSERS_NOT_QUOTA] = "not-quota",
		[KUSERS_PRIVATE] = "private",
	};
	return (unsigned)why < KUSERS_WHY_MAX ? names[why] : "?";
}
