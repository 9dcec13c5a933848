// SPDX-License-Identifier: GPL-2.0-or-later
/* The notifications' queue on disk (notify-queue.h). */
#include "notify-queue.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "statedir.h"
#include "util.h"

struct knotify_queue {
	int dirfd;
	char *path;
};

int knotify_queue_open(const char *lib_dir, struct knotify_queue **out, const char **why)
{
	/* lib_dir itself was opened and checked (and is locked) by keventd's
	 * start (kdaemon_lib_open()); its notify/ is made and checked here */
	_cleanup_free_ char *path = NULL;
	if (asprintf(&path, "%s/%s", lib_dir, KNOTIFY_QUEUE_SUBDIR) < 0)
		return -ENOMEM;
	int fd = kstatedir_open_dir(path, why);
	if (fd < 0)
		return fd;
	struct knotify_queue *q = calloc(1, sizeof(*q));
	if (!q) {
		close(fd);
		return -ENOMEM;
	}
	q->dirfd = fd;
	q->path = TAKE_PTR(path);
	*out = q;
	return 0;
}

void knotify_queue_free(struct knotify_queue *q)
{
	if (!q)
		return;
	close(q->dirfd);
	free(q->path);
	free(q);
}

const char *knotify_queue_path(const struct knotify_queue *q)
{
	return q->path;
}

static void name_of(char *buf, size_t size, uint64_t id, const char *ext)
{
	snprintf(buf, size, "%016" PRIx64 ".%s", id, ext);
}

static bool exists(struct knotify_queue *q, const char *name)
{
	return faccessat(q->dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int knotify_queue_put(struct knotify_queue *q, const struct knotify_rec *r)
{
	char tmp[32], name[32], tried[32];
	name_of(tmp, sizeof(tmp), r->id, "tmp");
	name_of(name, sizeof(name), r->id, "q");
	name_of(tried, sizeof(tried), r->id, "r");
	if (exists(q, name) || exists(q, tried))
		return -EEXIST;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	knotify_rec_encode(r, &sb);
	if (sb.oom)
		return -ENOMEM;
	(void)unlinkat(q->dirfd, tmp, 0);
	int fd = kstatedir_openat(q->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return fd;
	int rc = 0;
	for (size_t off = 0; rc == 0 && off < sb.len;) {
		ssize_t n = write(fd, sb.buf + off, sb.len - off);
		if (n < 0 && errno != EINTR)
			rc = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	close(fd);
	if (rc == 0 && renameat(q->dirfd, tmp, q->dirfd, name) < 0)
		rc = -errno;
	if (rc < 0) {
		(void)unlinkat(q->dirfd, tmp, 0);
		return rc;
	}
	return fsync(q->dirfd) < 0 ? -errno : 0;
}

int knotify_queue_mark(struct knotify_queue *q, uint64_t id, bool tried)
{
	char from[32], to[32];
	name_of(from, sizeof(from), id, tried ? "q" : "r");
	name_of(to, sizeof(to), id, tried ? "r" : "q");
	return renameat(q->dirfd, from, q->dirfd, to) < 0 ? -errno : 0;
}

static void set_aside(struct knotify_queue *q, const char *name)
{
	char damaged[300];
	snprintf(damaged, sizeof(damaged), "%s.damaged", name);
	if (renameat(q->dirfd, name, q->dirfd, damaged) < 0)
		(void)unlinkat(q->dirfd, name, 0);
}

static int read_rec(struct knotify_queue *q, const char *name, struct knotify_rec *out,
		    const char **why)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	*why = NULL;
	int rc = kstatedir_read(q->dirfd, name, KNOTIFY_REC_MAX, &buf, &len);
	if (rc == -EFBIG) {
		*why = "larger than a record";
		rc = -EINVAL;
	} else if (kstatedir_refused(rc)) {
		*why = kstatedir_strerror(rc);
		rc = -EINVAL;
	} else if (rc == 0) {
		rc = knotify_rec_decode(buf, len, out, why);
	}
	if (rc == -EINVAL)
		set_aside(q, name);
	return rc;
}

int knotify_queue_get(struct knotify_queue *q, uint64_t id, bool tried, struct knotify_rec *out,
		      const char **why)
{
	char name[32];
	name_of(name, sizeof(name), id, tried ? "r" : "q");
	int rc = read_rec(q, name, out, why);
	if (rc == 0 && out->id != id) {
		knotify_rec_release(out);
		*why = "its id is not its name's";
		set_aside(q, name);
		return -EINVAL;
	}
	return rc;
}

int knotify_queue_remove(struct knotify_queue *q, uint64_t id, bool tried)
{
	char name[32];
	name_of(name, sizeof(name), id, tried ? "r" : "q");
	return unlinkat(q->dirfd, name, 0) < 0 ? -errno : 0;
}

/* "<16 hex>.EXT": its id. */
static bool parse_name(const char *name, const char *ext, uint64_t *id)
{
	size_t n = strlen(name);
	if (n != 17 + strlen(ext) || name[16] != '.' || strcmp(name + 17, ext) != 0 ||
	    strspn(name, "0123456789abcdef") != 16)
		return false;
	*id = strtoull(name, NULL, 16);
	return true;
}

int knotify_queue_scan(struct knotify_queue *q,
		       void (*fn)(void *userdata, struct knotify_rec *r, bool tried),
		       void *userdata, uint64_t *damaged)
{
	int fd = openat(q->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return -errno;
	}
	struct dirent *de;
	while ((de = readdir(dp))) {
		uint64_t id;
		bool tried = false;
		const char *why;
		if (parse_name(de->d_name, "tmp", &id)) {
			(void)unlinkat(q->dirfd, de->d_name, 0);
			continue;
		}
		if (!parse_name(de->d_name, "q", &id) &&
		    !(tried = parse_name(de->d_name, "r", &id)))
			continue;
		struct knotify_rec r;
		int rc = read_rec(q, de->d_name, &r, &why);
		if (rc == 0 && r.id != id) {
			knotify_rec_release(&r);
			set_aside(q, de->d_name);
			rc = -EINVAL;
		}
		if (rc == -EINVAL)
			(*damaged)++;
		if (rc == 0)
			fn(userdata, &r, tried);
	}
	closedir(dp);
	return 0;
}
