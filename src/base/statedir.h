/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The state directory (keventd(8), --state-dir and FILES): keventd's alone.
 * It is made once (mode 0700) when missing, opened without following a
 * symlink, and believed only when it is a directory owned by keventd's
 * user (geteuid()) that group and others cannot write; one lock,
 * state.lock, says which keventd it is.  Every file in it is opened
 * through kstatedir_openat(): no symlink is followed, a new file is made
 * exclusively, and a file that is not keventd's user's own regular file
 * of one name is refused.  The MQTT spool's directory is checked the same
 * way (kstatedir_check()).
 */
#ifndef KEVENT_STATEDIR_H
#define KEVENT_STATEDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* the state directory and, in it, the control socket (keventd(8));
 * keventd and keventctl both spell them from here */
#define KEVENT_DEFAULT_STATE_DIR "/run/keventd"
#define KEVENT_DEFAULT_CONTROL	 KEVENT_DEFAULT_STATE_DIR "/control"
/* the system instance's socket for the user instances (keventd(8), USER
 * INSTANCE): beside its control socket */
#define KEVENT_DEFAULT_USERS KEVENT_DEFAULT_STATE_DIR "/users"

#define KSTATEDIR_MODE 0700
#define KSTATEDIR_LOCK "state.lock"

struct kstatedir {
	char *path; /* as given (--state-dir), for messages */
	int fd;	    /* the directory, checked */
	int lockfd; /* state.lock, flock()ed while keventd runs */
};

/* Makes path (mode 0700) when it is missing, opens and checks it
 * (kstatedir_check()) and takes its state.lock.  0, or -errno with *why
 * (static): -EBUSY when another keventd holds state.lock (a keventd killed
 * a moment ago is waited for, up to a second). */
int kstatedir_open(const char *path, struct kstatedir **out, const char **why);
/* Makes path (mode 0700) when it is missing, opens it without following
 * a symlink and checks it (kstatedir_check()), taking no lock: the
 * directory's fd, or -errno with *why (static).  The --lib-dir and the
 * directories within it are opened so. */
int kstatedir_open_dir(const char *path, const char **why);
/* Closes the directory and lets go of state.lock.  NULL is fine. */
void kstatedir_free(struct kstatedir *sd);

/* Whether the open directory fd may hold keventd's state: a directory,
 * owned by uid (keventd's: geteuid()), not writable by group or others.
 * 0, or with *why (static) -ENOTDIR, -EPERM (another owner) or -EACCES
 * (writable by others). */
int kstatedir_check(int fd, uid_t uid, const char **why);

/* openat(dirfd, name, flags, mode) for a state file, with O_NOFOLLOW and
 * O_CLOEXEC added.  With O_CREAT a missing file is made with O_EXCL and an
 * existing one opened as it is; O_TRUNC applies only once the file passed
 * the checks.  The fd, or -errno: -ELOOP a symlink, -EPERM a file not
 * owned by keventd's user, -EMLINK one with other names (hard links),
 * -EISDIR a directory, -EINVAL another file that is not a regular one
 * (kstatedir_strerror() says which).  Nothing that is refused is read, written or truncated. */
int kstatedir_openat(int dirfd, const char *name, int flags, mode_t mode);
/* Whether rc (negative) is kstatedir_openat() refusing a file that is
 * there but not keventd's own (-ELOOP, -EPERM, -EMLINK, -EISDIR, -EINVAL),
 * rather than a call that failed. */
bool kstatedir_refused(int rc);
/* Reads the state file name (at most max bytes, as read_fd()).  0,
 * -ENOENT when there is none, or -errno as kstatedir_openat(). */
int kstatedir_read(int dirfd, const char *name, size_t max, char **out, size_t *out_len);
/* Replaces the state file name with len bytes of data, whole or not at
 * all: they are written to "NAME.new", made afresh (O_EXCL, after
 * removing whatever had that name), which is then renamed over name; on
 * failure it is removed.  Not synced: the state files outlive keventd's
 * death, not the machine's.  0 or -errno. */
int kstatedir_replace(int dirfd, const char *name, const char *data, size_t len, mode_t mode);

/* The same, synced: the file before its rename, the directory after, so
 * that it outlives the machine's stop too (the condition table in
 * --lib-dir).  0 or -errno. */
int kstatedir_replace_synced(int dirfd, const char *name, const char *data, size_t len,
			     mode_t mode);

/* rc (an errno, negative or not) of the functions above said for the
 * log: a refusal in words, else strerror(). */
const char *kstatedir_strerror(int rc);

#endif
