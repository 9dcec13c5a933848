// SPDX-License-Identifier: GPL-2.0-or-later
/* Rule directories: layering, masking, ordering and the trust checks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	/* keventd's own user's too: the user instance's (keventd --user) */
	uid_t self = geteuid();
	if (st->st_uid != 0 && st->st_uid != self)
		return self == 0 ? "not owned by root" : "owned by neither root nor keventd's user";
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

void kentry_release(struct kentry *en)
{
	for (size_t i = 0; i < en->n_dropins; i++) {
		free(en->dropins[i].name);
		free(en->dropins[i].path);
	}
	free(en->dropins);
	en->dropins = NULL;
	en->n_dropins = 0;
	free(en->name);
	free(en->path);
	en->name = en->path = NULL;
}

void kentries_free(struct kentries *e)
{
	for (size_t i = 0; i < e->n; i++)
		kentry_release(&e->v[i]);
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

/* What a directory entry is: a rule file (or a drop-in), a mask, or
 * refused (with a diag). */
struct kfound {
	const char *name, *path;
	bool masked, refused;
};

static void classify(struct kfound *en, int dfd, char **real_dirs, size_t n_dirs, bool trust,
		     struct kdiags *diags)
{
	struct stat st;
	if (fstatat(dfd, en->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		kdiags_add(diags, en->path, 0, 0, "cannot stat: %s", strerror(errno));
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
			kdiags_add(diags, en->path, 0, 0, "broken symlink: %s", strerror(errno));
			en->refused = true;
			return;
		}
		if (strcmp(real, "/dev/null") == 0) {
			en->masked = true;
			return;
		}
		if (!inside(real, real_dirs, n_dirs)) {
			kdiags_add(diags, en->path, 0, 0,
				   "symlink points outside the rule directories (to %s); only "
				   "/dev/null is allowed there",
				   real);
			en->refused = true;
			return;
		}
		if (stat(en->path, &st) < 0) {
			kdiags_add(diags, en->path, 0, 0, "cannot stat: %s", strerror(errno));
			en->refused = true;
			return;
		}
	}
	if (!S_ISREG(st.st_mode)) {
		kdiags_add(diags, en->path, 0, 0, "not a regular file");
		en->refused = true;
		return;
	}
	const char *why = trust_problem(&st, trust);
	if (why) {
		kdiags_add(diags, en->path, 0, 0, "refusing rule file %s (keventd runs as root)",
			   why);
		en->refused = true;
		return;
	}
	en->masked = st.st_size == 0;
}

static int cmp_dropin(const void *a, const void *b)
{
	return strcmp(((const struct kentry_dropin *)a)->name,
		      ((const struct kentry_dropin *)b)->name);
}

static bool dropin_seen(const struct kentry *en, const char *name)
{
	for (size_t i = 0; i < en->n_dropins; i++)
		if (strcmp(en->dropins[i].name, name) == 0)
			return true;
	return false;
}

/* The *.yaml of NAME.d/ in one rule directory, added to en's drop-ins
 * unless a higher directory had the name. */
static int scan_dropin_dir(struct kentry *en, const char *dir, char **real_dirs, size_t n_dirs,
			   bool trust, struct kdiags *diags)
{
	_cleanup_free_ char *path = NULL;
	if (asprintf(&path, "%s/%s.d", dir, en->name) < 0)
		return -ENOMEM;
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		struct stat lst;
		if (errno == ELOOP || errno == ENOTDIR) {
			bool link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
			kdiags_add(diags, path, 0, 0, "a drop-in directory must be a directory%s",
				   link ? ", not a symbolic link" : "");
			en->dropin_refused = true;
		} else if (errno != ENOENT) {
			kdiags_add(diags, path, 0, 0, "cannot open drop-in directory: %s",
				   strerror(errno));
			en->dropin_refused = true;
		}
		return 0;
	}
	struct stat st;
	const char *why = fstat(dfd, &st) < 0 ? "cannot stat" : trust_problem(&st, trust);
	if (why) {
		kdiags_add(diags, path, 0, 0,
			   "refusing drop-in directory %s (keventd runs as root)", why);
		en->dropin_refused = true;
		close(dfd);
		return 0;
	}
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !str_has_suffix(de->d_name, ".yaml") ||
		    dropin_seen(en, de->d_name))
			continue;
		struct kentry_dropin *v =
			realloc(en->dropins, (en->n_dropins + 1) * sizeof(*en->dropins));
		if (!v) {
			rc = -ENOMEM;
			break;
		}
		en->dropins = v;
		struct kentry_dropin *di = &v[en->n_dropins];
		*di = (struct kentry_dropin){0};
		di->name = strdup(de->d_name);
		if (!di->name || asprintf(&di->path, "%s/%s", path, de->d_name) < 0) {
			free(di->name);
			rc = -ENOMEM;
			break;
		}
		en->n_dropins++;
		struct kfound fo = {.name = di->name, .path = di->path};
		classify(&fo, dirfd(d), real_dirs, n_dirs, trust, diags);
		di->masked = fo.masked;
		di->refused = fo.refused;
		en->dropin_refused |= fo.refused;
	}
	closedir(d);
	return rc;
}

static int scan_dropins(struct kentry *en, const char *const *dirs, size_t n_dirs, char **real_dirs,
			bool trust, struct kdiags *diags)
{
	int rc = 0;
	for (size_t i = 0; i < n_dirs && rc == 0; i++)
		rc = scan_dropin_dir(en, dirs[i], real_dirs, n_dirs, trust, diags);
	if (en->n_dropins)
		qsort(en->dropins, en->n_dropins, sizeof(*en->dropins), cmp_dropin);
	return rc;
}

int kentry_scan_dropins(struct kentry *en, const char *const *dirs, size_t n_dirs, bool trust,
			struct kdiags *diags)
{
	char **real_dirs = calloc(n_dirs + 1, sizeof(char *));
	if (!real_dirs)
		return -ENOMEM;
	for (size_t i = 0; i < n_dirs; i++)
		real_dirs[i] = realpath(dirs[i], NULL);
	int rc = scan_dropins(en, dirs, n_dirs, real_dirs, trust, diags);
	for (size_t i = 0; i < n_dirs; i++)
		free(real_dirs[i]);
	free(real_dirs);
	return rc;
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
				kdiags_add(diags, dirs[i], 0, 0, "cannot open rule directory: %s",
					   strerror(errno));
			continue;
		}
		struct stat st;
		const char *why = fstat(dfd, &st) < 0 ? "cannot stat" : trust_problem(&st, trust);
		if (why) {
			kdiags_add(diags, dirs[i], 0, 0,
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
			struct kfound fo = {.name = en->name, .path = en->path};
			classify(&fo, dirfd(d), real_dirs, n_dirs, trust, diags);
			en->masked = fo.masked;
			en->refused = fo.refused;
		}
		closedir(d);
	}
	if (e.n)
		qsort(e.v, e.n, sizeof(*e.v), cmp_entry);
	/* drop-ins, for the files that have a NAME.d/ somewhere */
	for (size_t i = 0; rc == 0 && i < e.n; i++) {
		struct kentry *en = &e.v[i];
		bool any = false;
		for (size_t j = 0; j < n_dirs && !any && !en->masked && !en->refused; j++) {
			_cleanup_free_ char *d = NULL;
			struct stat st;
			if (asprintf(&d, "%s/%s.d", dirs[j], en->name) < 0)
				rc = -ENOMEM;
			else
				any = lstat(d, &st) == 0;
		}
		if (any)
			rc = scan_dropins(en, dirs, n_dirs, real_dirs, trust, diags);
	}
	for (size_t i = 0; i < n_dirs; i++)
		free(real_dirs[i]);
	free(real_dirs);
	if (rc < 0) {
		kentries_free(&e);
		return rc;
	}
	*out = e;
	return 0;
}
