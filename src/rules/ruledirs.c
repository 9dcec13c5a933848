// SPDX-License-Identifier: GPL-2.0-or-later
/* Rule directories: layering, masking, ordering and the trust checks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ruledirs.h"
#include "util.h"

const char *const kevent_default_rule_dirs[3] = {
	KEVENT_RULES_DIR_ETC,
	KEVENT_RULES_DIR_RUN,
	KEVENT_RULES_DIR_LIB,
};

static const char *trust_problem(const struct stat *st, bool trust)
{
	if (!trust)
		return NULL;
	if (st->st_uid != 0)
		return "not owned by root";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by group or others";
	return NULL;
}

const char *kentry_check_fd(int fd, bool trust)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return "cannot stat";
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	return trust_problem(&st, trust);
}

void kentries_free(struct kentries *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].name);
		free(e->v[i].path);
	}
	free(e->v);
	e->v = NULL;
	e->n = 0;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct kentry *)a)->name, ((const struct kentry *)b)->name);
}

/* Whether real (a canonical path) lies inside one of the canonical dirs. */
static bool inside(const char *real, char **real_dirs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t l = real_dirs[i] ? strlen(real_dirs[i]) : 0;
		if (l && strncmp(real, real_dirs[i], l) == 0 && real[l] == '/')
			return true;
	}
	return false;
}

static bool seen(const struct kentries *e, const char *name)
{
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->v[i].name, name) == 0)
			return true;
	return false;
}

static void classify(struct kentry *en, int dfd, char **real_dirs, size_t n_dirs, bool trust,
		     struct kdiags *diags)
{
	struct stat st;
	if (fstatat(dfd, en->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		kdiags_add(diags, en->path, 1, 1, "cannot stat: %s", strerror(errno));
		en->refused = true;
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t l = readlinkat(dfd, en->name, target, sizeof(target) - 1);
		if (l >= 0) {
			target[l] = '\0';
			if (strcmp(target, "/dev/null") == 0) {
				en->masked = true;
				return;
			}
		}
		char real[PATH_MAX];
		if (!realpath(en->path, real)) {
			kdiags_add(diags, en->path, 1, 1, "broken symlink: %s", strerror(errno));
			en->refused = true;
			return;
		}
		if (strcmp(real, "/dev/null") == 0) {
			en->masked = true;
			return;
		}
		if (!inside(real, real_dirs, n_dirs)) {
			kdiags_add(diags, en->path, 1, 1,
				   "symlink points outside the rule directories (to %s); only "
				   "/dev/null is allowed there",
				   real);
			en->refused = true;
			return;
		}
		if (stat(en->path, &st) < 0) {
			kdiags_add(diags, en->path, 1, 1, "cannot stat: %s", strerror(errno));
			en->refused = true;
			return;
		}
	}
	if (!S_ISREG(st.st_mode)) {
		kdiags_add(diags, en->path, 1, 1, "not a regular file");
		en->refused = true;
		return;
	}
	const char *why = trust_problem(&st, trust);
	if (why) {
		kdiags_add(diags, en->path, 1, 1, "refusing rule file %s (keventd runs as root)",
			   why);
		en->refused = true;
		return;
	}
	en->masked = st.st_size == 0;
}

int kentries_scan(const char *const *dirs, size_t n_dirs, bool trust, struct kentries *out,
		  struct kdiags *diags)
{
	struct kentries e = {0};
	size_t cap = 0;
	int rc = 0;
	char **real_dirs = calloc(n_dirs + 1, sizeof(char *));
	if (!real_dirs)
		return -ENOMEM;
	for (size_t i = 0; i < n_dirs; i++)
		real_dirs[i] = realpath(dirs[i], NULL);

	for (size_t i = 0; i < n_dirs && rc == 0; i++) {
		int dfd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0) {
			if (errno != ENOENT)
				kdiags_add(diags, dirs[i], 1, 1, "cannot open rule directory: %s",
					   strerror(errno));
			continue;
		}
		struct stat st;
		const char *why = fstat(dfd, &st) < 0 ? "cannot stat" : trust_problem(&st, trust);
		if (why) {
			kdiags_add(diags, dirs[i], 1, 1,
				   "refusing rule directory %s (keventd runs as root)", why);
			close(dfd);
			continue;
		}
		DIR *d = fdopendir(dfd);
		if (!d) {
			close(dfd);
			rc = -errno;
			break;
		}
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.' || !str_has_suffix(de->d_name, ".yaml") ||
			    seen(&e, de->d_name))
				continue;
			if (e.n == cap) {
				cap = cap ? cap * 2 : 32;
				struct kentry *v = realloc(e.v, cap * sizeof(*v));
				if (!v) {
					rc = -ENOMEM;
					break;
				}
				e.v = v;
			}
			struct kentry *en = &e.v[e.n];
			*en = (struct kentry){0};
			en->name = strdup(de->d_name);
			if (!en->name || asprintf(&en->path, "%s/%s", dirs[i], de->d_name) < 0) {
				free(en->name);
				rc = -ENOMEM;
				break;
			}
			e.n++;
			classify(en, dirfd(d), real_dirs, n_dirs, trust, diags);
		}
		closedir(d);
	}
	for (size_t i = 0; i < n_dirs; i++)
		free(real_dirs[i]);
	free(real_dirs);
	if (rc < 0) {
		kentries_free(&e);
		return rc;
	}
	if (e.n)
		qsort(e.v, e.n, sizeof(*e.v), cmp_entry);
	*out = e;
	return 0;
}
