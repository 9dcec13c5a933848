// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An array's md/ directory in sysfs (Documentation/admin-guide/md.rst):
 * the attributes the md source reads at each look, and the members'
 * dev-NAME/ directories.  Only the descriptor given is read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "md.h"

/* Reads the attribute name of dirfd into buf, its last newline cut.
 * 0, or -errno. */
static int read_attr(int dirfd, const char *name, char *buf, size_t size)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	ssize_t n;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	if (*s < '0' || *s > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

int kmd_parse_completed(const char *s, bool *syncing, uint64_t *done, uint64_t *total)
{
	if (strcmp(s, "none") == 0) {
		*syncing = false;
		return 0;
	}
	if (strcmp(s, "delayed") == 0) {
		*syncing = true;
		return 0;
	}
	char *end;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long d = strtoull(s, &end, 10);
	if (errno || strncmp(end, " / ", 3) != 0 || end[3] < '0' || end[3] > '9')
		return -EINVAL;
	unsigned long long t = strtoull(end + 3, &end, 10);
	if (errno || *end || d > t)
		return -EINVAL;
	*syncing = true;
	*done = d;
	*total = t;
	return 0;
}

void kmd_parse_member_state(const char *s, struct kmd_member *m)
{
	m->faulty = m->in_sync = m->spare = false;
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, ",");
		if (n == 6 && memcmp(p, "faulty", 6) == 0)
			m->faulty = true;
		else if (n == 7 && memcmp(p, "in_sync", 7) == 0)
			m->in_sync = true;
		else if (n == 5 && memcmp(p, "spare", 5) == 0)
			m->spare = true;
		p += n;
		if (*p == ',')
			p++;
	}
}

static void read_member(int dirfd, const char *dir, struct kmd_member *m)
{
	char path[KMD_NAME_MAX + 16], buf[256];
	snprintf(path, sizeof(path), "%s/state", dir);
	if (read_attr(dirfd, path, buf, sizeof(buf)) == 0)
		kmd_parse_member_state(buf, m);
	snprintf(path, sizeof(path), "%s/slot", dir);
	uint64_t slot;
	if (read_attr(dirfd, path, buf, sizeof(buf)) == 0)
		m->slot = parse_u64(buf, &slot) && slot < 100000 ? (int)slot : -1;
}

/* The members as md/ lists them (dev-NAME), in place of mdstat's. */
static int read_members(int dirfd, struct kmd_array *a)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return -e;
	}
	struct kmd_member old[KMD_MAX_MEMBERS];
	size_t n_old = a->n_m;
	memcpy(old, a->m, n_old * sizeof(old[0]));
	a->n_m = 0;
	struct dirent *de;
	while ((de = readdir(d)) && a->n_m < KMD_MAX_MEMBERS) {
		size_t len = strlen(de->d_name);
		if (len <= 4 || len - 4 >= KMD_NAME_MAX || strncmp(de->d_name, "dev-", 4) != 0)
			continue;
		struct kmd_member *m = &a->m[a->n_m++];
		memset(m, 0, sizeof(*m));
		memcpy(m->name, de->d_name + 4, len - 4 + 1);
		m->slot = -1;
		/* what mdstat said, until the attributes say better */
		for (size_t i = 0; i < n_old; i++)
			if (strcmp(old[i].name, m->name) == 0)
				*m = old[i];
		read_member(dirfd, de->d_name, m);
	}
	closedir(d);
	/* in name order: a look does not depend on the directory's */
	for (size_t i = 1; i < a->n_m; i++)
		for (size_t j = i; j > 0 && strcmp(a->m[j - 1].name, a->m[j].name) > 0; j--) {
			struct kmd_member t = a->m[j];
			a->m[j] = a->m[j - 1];
			a->m[j - 1] = t;
		}
	return 0;
}

/* src into dst of size bytes, cut to fit */
static void set_str(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int kmd_sysfs_read(int dirfd, struct kmd_array *a)
{
	char buf[256];
	uint64_t v;
	int rc = read_attr(dirfd, "array_state", buf, sizeof(buf));
	if (rc < 0)
		return rc;
	set_str(a->array_state, sizeof(a->array_state), buf);
	if (read_attr(dirfd, "level", buf, sizeof(buf)) == 0)
		set_str(a->level, sizeof(a->level), buf);
	/* the UUID of its superblock (Linux 4.x and later): the same at
	 * every assembly, when the name (md0, md127) is not; all zeros for
	 * an array without one (mdadm --build) */
	if (read_attr(dirfd, "uuid", buf, sizeof(buf)) == 0 && strspn(buf, "0-") != strlen(buf) &&
	    strlen(buf) < sizeof(a->uuid))
		set_str(a->uuid, sizeof(a->uuid), buf);
	if (read_attr(dirfd, "raid_disks", buf, sizeof(buf)) == 0 && parse_u64(buf, &v) &&
	    v < 100000)
		a->raid_disks = (int)v;
	if (read_attr(dirfd, "degraded", buf, sizeof(buf)) == 0 && parse_u64(buf, &v) && v < 100000)
		a->degraded = (int)v;
	/* Whether a sync runs is mdstat's to say: md shows a sync there
	 * from its start to its end, while sync_action and sync_completed
	 * also say "recover" and "0 / N" for the moment md looks for a
	 * spare to rebuild after a failure (md_check_recovery()).
	 * sync_action names it better (mdstat's "resync" is also a repair). */
	if (a->syncing && read_attr(dirfd, "sync_action", buf, sizeof(buf)) == 0) {
		int act = kmd_action_from_word(buf, strlen(buf));
		if (act > KMD_IDLE && act != KMD_FROZEN)
			a->action = (enum kmd_action)act;
	}
	bool syncing;
	uint64_t done = 0, total = 0;
	if (read_attr(dirfd, "sync_completed", buf, sizeof(buf)) == 0 &&
	    kmd_parse_completed(buf, &syncing, &done, &total) == 0) {
		if (!syncing) {
			a->syncing = false;
			a->action = KMD_IDLE;
		} else if (total && a->syncing) {
			/* mdstat's position runs ahead of sync_completed's
			 * checkpoints; the further of the two */
			if (a->total != total || done > a->done)
				a->done = done;
			a->total = total;
		}
	}
	if (read_attr(dirfd, "mismatch_cnt", buf, sizeof(buf)) == 0 && parse_u64(buf, &v)) {
		a->has_mismatch = true;
		a->mismatch = v;
	}
	if (read_attr(dirfd, "resync_start", buf, sizeof(buf)) == 0)
		a->resync_pending = strcmp(buf, "none") != 0;
	if (read_attr(dirfd, "sync_min", buf, sizeof(buf)) == 0 && parse_u64(buf, &v)) {
		a->has_sync_min = true;
		a->sync_min = v;
	}
	(void)read_members(dirfd, a);
	return 0;
}
