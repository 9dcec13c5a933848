// SPDX-License-Identifier: GPL-2.0-or-later
/* A cgroup per handler run (cgroup.h). */
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util.h"

struct kcgroup {
	char *dir;
	int dirfd;
	unsigned controllers;
};

static const struct {
	const char *name;
	unsigned bit;
} controllers[] = {
	{"memory", KCGROUP_MEMORY},
	{"pids", KCGROUP_PIDS},
	{"cpu", KCGROUP_CPU},
};

int kcgroup_parse_self(const char *text, char **path)
{
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len > 3 && memcmp(line, "0::", 3) == 0) {
			*path = strndup(line + 3, len - 3);
			return *path ? 0 : -ENOMEM;
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

int kcgroup_parse_mountinfo(const char *text, char **mount)
{
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		_cleanup_free_ char *l = strndup(line, len);
		if (!l)
			return -ENOMEM;
		char *sep = strstr(l, " - ");
		if (sep && strncmp(sep + 3, "cgroup2 ", 8) == 0) {
			char *save = NULL, *f = strtok_r(l, " ", &save);
			for (int i = 0; f && i < 4; i++)
				f = strtok_r(NULL, " ", &save);
			if (f) {
				*mount = strdup(f); /* no octal escapes in /sys/fs/cgroup */
				return *mount ? 0 : -ENOMEM;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

unsigned kcgroup_parse_controllers(const char *text)
{
	unsigned mask = 0;
	for (const char *p = text; *p;) {
		p += strspn(p, " \t\n");
		size_t n = strcspn(p, " \t\n");
		for (size_t i = 0; n && i < ARRAY_SIZE(controllers); i++)
			if (strlen(controllers[i].name) == n &&
			    memcmp(controllers[i].name, p, n) == 0)
				mask |= controllers[i].bit;
		p += n;
	}
	return mask;
}

/* The contents of the small file name under dirfd, NUL-terminated. */
static int read_small(int dirfd, const char *name, char *buf, size_t size)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int write_small(int dirfd, const char *name, const char *text, int flags)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | flags, 0644);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int slurp(const char *path, char **out)
{
	size_t len;
	return read_file(path, 1 << 20, out, &len);
}

/* Whether systemd says it delegated dir: the "delegate" attribute it sets
 * on a unit's cgroup with Delegate=yes. */
static bool delegate_attr(const char *dir)
{
	static const char *const names[] = {"trusted.delegate", "user.delegate"};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char v[8];
		ssize_t n = getxattr(dir, names[i], v, sizeof(v) - 1);
		if (n == 1 && v[0] == '1')
			return true;
	}
	return false;
}

int kcgroup_find(const char *override, char **dir, const char **why)
{
	if (override && *override) {
		if (override[0] != '/') {
			*why = "the cgroup root must be an absolute path";
			return -EINVAL;
		}
		*dir = strdup(override);
		return *dir ? 0 : -ENOMEM;
	}
	_cleanup_free_ char *self = NULL, *mountinfo = NULL, *own = NULL, *mnt = NULL;
	if (slurp("/proc/self/cgroup", &self) < 0 || kcgroup_parse_self(self, &own) < 0) {
		*why = "not in a cgroup v2 hierarchy";
		return -ENOENT;
	}
	if (slurp("/proc/self/mountinfo", &mountinfo) < 0 ||
	    kcgroup_parse_mountinfo(mountinfo, &mnt) < 0) {
		*why = "no cgroup2 file system is mounted";
		return -ENOENT;
	}
	if (strcmp(own, "/") == 0) {
		*why = "keventd is in the root cgroup, which is never delegated";
		return -EPERM;
	}
	_cleanup_free_ char *path = NULL;
	if (asprintf(&path, "%s%s", mnt, own) < 0)
		return -ENOMEM;
	/* the leaf of an earlier start in the same cgroup: its parent is ours */
	size_t n = strlen(path), l = strlen("/" KCGROUP_LEAF);
	if (n > l && strcmp(path + n - l, "/" KCGROUP_LEAF) == 0)
		path[n - l] = '\0';
	_cleanup_free_ char *procs = NULL, *subtree = NULL;
	if (asprintf(&procs, "%s/cgroup.procs", path) < 0 ||
	    asprintf(&subtree, "%s/cgroup.subtree_control", path) < 0)
		return -ENOMEM;
	if (access(path, W_OK) < 0 || access(procs, W_OK) < 0 || access(subtree, W_OK) < 0) {
		*why = "its cgroup is not writable by keventd";
		return -EPERM;
	}
	if (access("/run/systemd/system", F_OK) == 0 && !delegate_attr(path)) {
		*why = "systemd did not delegate its cgroup (the unit has no Delegate=yes)";
		return -EPERM;
	}
	*dir = TAKE_PTR(path);
	return 0;
}

int kcgroup_open(const char *dir, int pid, struct kcgroup **out, const char **why)
{
	_cleanup_free_ struct kcgroup *cg = calloc(1, sizeof(*cg));
	if (!cg)
		return -ENOMEM;
	cg->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->dirfd < 0) {
		*why = "cannot open the cgroup";
		return -errno;
	}
	cg->dir = strdup(dir);
	int rc = cg->dir ? 0 : -ENOMEM;
	if (rc == 0 && mkdirat(cg->dirfd, KCGROUP_LEAF, 0755) < 0 && errno != EEXIST) {
		rc = -errno;
		*why = "cannot make its leaf cgroup \"" KCGROUP_LEAF "\"";
	}
	char num[24];
	snprintf(num, sizeof(num), "%d", pid);
	if (rc == 0 && (rc = write_small(cg->dirfd, KCGROUP_LEAF "/cgroup.procs", num,
					 O_APPEND | O_CREAT)) < 0)
		*why = "cannot move into its leaf cgroup";
	if (rc < 0) {
		close(cg->dirfd);
		free(cg->dir);
		return rc;
	}
	/* the controllers we were given, enabled for the runs, one by one: a
	 * controller that cannot be enabled is one the runs do without */
	char text[512];
	unsigned have = read_small(cg->dirfd, "cgroup.controllers", text, sizeof(text)) == 0
				? kcgroup_parse_controllers(text)
				: 0;
	for (size_t i = 0; i < ARRAY_SIZE(controllers); i++) {
		if (!(have & controllers[i].bit))
			continue;
		char w[32];
		snprintf(w, sizeof(w), "+%s", controllers[i].name);
		if (write_small(cg->dirfd, "cgroup.subtree_control", w, O_APPEND) == 0)
			cg->controllers |= controllers[i].bit;
	}
	*out = TAKE_PTR(cg);
	return 0;
}

void kcgroup_free(struct kcgroup *cg)
{
	if (!cg)
		return;
	close(cg->dirfd);
	free(cg->dir);
	free(cg);
}

const char *kcgroup_dir(const struct kcgroup *cg)
{
	return cg->dir;
}

unsigned kcgroup_controllers(const struct kcgroup *cg)
{
	return cg->controllers;
}

void kcgroup_run_name(const char *rule, uint64_t seq, uint64_t n, char buf[KCGROUP_NAME_MAX])
{
	char tail[48];
	int lt = snprintf(tail, sizeof(tail), "-%" PRIu64 "-%" PRIu64, seq, n);
	size_t room = KCGROUP_NAME_MAX - 1 - (size_t)lt, i = 0;
	for (; rule[i] && i < room; i++) {
		char c = rule[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '-';
		buf[i] = ok ? c : '_';
	}
	memcpy(buf + i, tail, (size_t)lt + 1);
}

unsigned kcgroup_limits_need(const struct kcg_limits *lim)
{
	if (!lim)
		return 0;
	return (lim->memory_max ? KCGROUP_MEMORY : 0) | (lim->tasks_max ? KCGROUP_PIDS : 0) |
	       (lim->cpu_weight ? KCGROUP_CPU : 0);
}

static void format_max(uint64_t v, char *buf, size_t size)
{
	if (v == KCG_INFINITY)
		snprintf(buf, size, "max");
	else
		snprintf(buf, size, "%" PRIu64, v);
}

int kcgroup_write_limits(int dirfd, const struct kcg_limits *lim, unsigned have, const char **file)
{
	char v[32];
	int rc = 0;
	if (!lim)
		return 0;
	if (lim->memory_max && (have & KCGROUP_MEMORY)) {
		format_max(lim->memory_max, v, sizeof(v));
		*file = "memory.max";
		if ((rc = write_small(dirfd, "memory.max", v, O_TRUNC)) < 0)
			return rc;
	}
	if (lim->tasks_max && (have & KCGROUP_PIDS)) {
		format_max(lim->tasks_max, v, sizeof(v));
		*file = "pids.max";
		if ((rc = write_small(dirfd, "pids.max", v, O_TRUNC)) < 0)
			return rc;
	}
	if (lim->cpu_weight && (have & KCGROUP_CPU)) {
		snprintf(v, sizeof(v), "%" PRIu32, lim->cpu_weight);
		*file = "cpu.weight";
		if ((rc = write_small(dirfd, "cpu.weight", v, O_TRUNC)) < 0)
			return rc;
	}
	return 0;
}

int kcgroup_run_create(struct kcgroup *cg, const char *name, const struct kcg_limits *lim,
		       int *dirfd, const char **why)
{
	if (mkdirat(cg->dirfd, name, 0755) < 0) {
		*why = "making its cgroup";
		return -errno;
	}
	int fd = openat(cg->dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int rc = -errno;
		(void)unlinkat(cg->dirfd, name, AT_REMOVEDIR);
		*why = "opening its cgroup";
		return rc;
	}
	const char *file = NULL;
	int rc = kcgroup_write_limits(fd, lim, cg->controllers, &file);
	if (rc < 0) {
		close(fd);
		(void)unlinkat(cg->dirfd, name, AT_REMOVEDIR);
		*why = "writing its cgroup's limits";
		return rc;
	}
	*dirfd = fd;
	return 0;
}

int kcgroup_run_kill(int dirfd)
{
	int rc = write_small(dirfd, "cgroup.kill", "1", 0);
	if (rc != -ENOENT)
		return rc;
	/* no cgroup.kill (before Linux 5.14): each process listed; the
	 * populated watch finds what a fork in the meantime left */
	char buf[4096];
	if ((rc = read_small(dirfd, "cgroup.procs", buf, sizeof(buf))) < 0)
		return rc;
	for (char *p = buf; *p;) {
		char *end;
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 0)
			(void)kill((pid_t)pid, SIGKILL);
		p = end + strspn(end, "\n");
	}
	return 0;
}

/* The value of key in a "key value" file under dirfd; -ENOENT. */
static int read_key(int dirfd, const char *file, const char *key, uint64_t *value)
{
	char buf[1024];
	int rc = read_small(dirfd, file, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	size_t kl = strlen(key);
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
			*value = strtoull(line + kl + 1, NULL, 10);
			return 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

int kcgroup_run_populated(int dirfd)
{
	uint64_t v = 0;
	int rc = read_key(dirfd, "cgroup.events", "populated", &v);
	return rc < 0 ? rc : v != 0;
}

uint64_t kcgroup_run_oom_kills(int dirfd)
{
	uint64_t v = 0;
	return read_key(dirfd, "memory.events", "oom_kill", &v) < 0 ? 0 : v;
}

int kcgroup_run_remove(struct kcgroup *cg, const char *name)
{
	return unlinkat(cg->dirfd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}
