// SPDX-License-Identifier: GPL-2.0-or-later
/* The state directory and its files (statedir.h). */
#include "statedir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define LOCK_TRIES 100 /* of 10 ms each */

int kstatedir_check(int fd, uid_t uid, const char **why)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		*why = "cannot look at it";
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		*why = "not a directory";
		return -ENOTDIR;
	}
	if (st.st_uid != uid) {
		*why = "not owned by keventd's user";
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		*why = "writable by group or others (chmod go-w it)";
		return -EACCES;
	}
	return 0;
}

/* A keventd killed a moment ago may live on for a few microseconds in a
 * handler it forked that has not closed its descriptors yet. */
static int take_lock(int fd)
{
	for (int tries = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; tries++) {
		if (errno != EWOULDBLOCK)
			return -errno;
		if (tries == LOCK_TRIES)
			return -EBUSY;
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
	}
	return 0;
}

int kstatedir_open_dir(const char *path, const char **why)
{
	*why = NULL;
	if (mkdir(path, KSTATEDIR_MODE) < 0 && errno != EEXIST) {
		*why = "cannot make it";
		return -errno;
	}
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		struct stat st;
		int rc = -errno;
		/* a symlink gives ENOTDIR with O_DIRECTORY */
		if (rc == -ENOTDIR && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			rc = -ELOOP;
		*why = rc == -ELOOP	? "a symbolic link, not followed"
		       : rc == -ENOTDIR ? "not a directory"
					: "cannot open it";
		return rc;
	}
	int rc = kstatedir_check(fd, geteuid(), why);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int kstatedir_open(const char *path, struct kstatedir **out, const char **why)
{
	*why = NULL;
	struct kstatedir *sd = calloc(1, sizeof(*sd));
	if (!sd || !(sd->path = strdup(path))) {
		free(sd);
		return -ENOMEM;
	}
	sd->lockfd = -1;
	int rc = sd->fd = kstatedir_open_dir(path, why);
	if (rc >= 0)
		rc = 0;
	if (rc == 0 &&
	    (sd->lockfd = kstatedir_openat(sd->fd, KSTATEDIR_LOCK, O_RDWR | O_CREAT, 0600)) < 0) {
		rc = sd->lockfd;
		*why = "cannot open its " KSTATEDIR_LOCK;
	}
	if (rc == 0 && (rc = take_lock(sd->lockfd)) < 0)
		*why = rc == -EBUSY ? "another keventd holds its " KSTATEDIR_LOCK
				    : "cannot lock its " KSTATEDIR_LOCK;
	if (rc < 0) {
		kstatedir_free(sd);
		return rc;
	}
	*out = sd;
	return 0;
}

void kstatedir_free(struct kstatedir *sd)
{
	if (!sd)
		return;
	if (sd->lockfd >= 0)
		close(sd->lockfd);
	if (sd->fd >= 0)
		close(sd->fd);
	free(sd->path);
	free(sd);
}

int kstatedir_openat(int dirfd, const char *name, int flags, mode_t mode)
{
	/* O_NONBLOCK: a FIFO put there must not hang the open; dropped again
	 * once the file is known to be a regular one */
	int base = (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
		   O_NONBLOCK;
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 3; tries++) {
		if (!(flags & O_EXCL))
			fd = openat(dirfd, name, base);
		if (fd < 0 && (flags & O_CREAT) && ((flags & O_EXCL) || errno == ENOENT)) {
			fd = openat(dirfd, name, base | O_CREAT | O_EXCL, mode);
			if (fd < 0 && errno == EEXIST && !(flags & O_EXCL))
				continue; /* made meanwhile: opened as it is */
		}
		if (fd < 0)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	else if (st.st_uid != geteuid())
		rc = -EPERM;
	else if (st.st_nlink > 1)
		rc = -EMLINK;
	else if (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, base & ~O_NONBLOCK) < 0)
		rc = -errno;
	else if ((flags & O_TRUNC) && ftruncate(fd, 0) < 0)
		rc = -errno;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

bool kstatedir_refused(int rc)
{
	return rc == -ELOOP || rc == -EPERM || rc == -EMLINK || rc == -EISDIR || rc == -EINVAL;
}

int kstatedir_read(int dirfd, const char *name, size_t max, char **out, size_t *out_len)
{
	_cleanup_close_ int fd = kstatedir_openat(dirfd, name, O_RDONLY, 0);
	if (fd < 0)
		return fd;
	return read_fd(fd, max, out, out_len);
}

static int replace(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
		   bool sync)
{
	size_t n = strlen(name);
	char tmp[n + sizeof(".new")];
	memcpy(tmp, name, n);
	memcpy(tmp + n, ".new", sizeof(".new"));
	/* left by a keventd that died mid-way (or anything else): never
	 * written through, made afresh */
	if (unlinkat(dirfd, tmp, 0) < 0 && errno != ENOENT)
		return -errno;
	int fd = kstatedir_openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL, mode);
	if (fd < 0)
		return fd;
	int err = 0;
	for (size_t off = 0; !err && off < len;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno != EINTR)
			err = errno;
		else if (w == 0)
			err = EIO;
		off += w > 0 ? (size_t)w : 0;
	}
	if (sync && !err && fsync(fd) < 0)
		err = errno;
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err && renameat(dirfd, tmp, dirfd, name) < 0)
		err = errno;
	if (err)
		(void)unlinkat(dirfd, tmp, 0);
	/* the rename itself, for a machine that stops now */
	if (sync && !err && fsync(dirfd) < 0)
		err = errno;
	return -err;
}

int kstatedir_replace(int dirfd, const char *name, const char *data, size_t len, mode_t mode)
{
	return replace(dirfd, name, data, len, mode, false);
}

int kstatedir_replace_synced(int dirfd, const char *name, const char *data, size_t len, mode_t mode)
{
	return replace(dirfd, name, data, len, mode, true);
}

const char *kstatedir_strerror(int rc)
{
	switch (rc < 0 ? -rc : rc) {
	case ELOOP:
		return "a symbolic link, not followed";
	case EPERM:
		return "not owned by keventd's user: refused";
	case EMLINK:
		return "a file of several names (hard links): refused";
	case EINVAL:
		return "not a regular file: refused";
	default:
		return strerror(rc < 0 ? -rc : rc);
	}
}
