// SPDX-License-Identifier: GPL-2.0-or-later
/* The state directory (statedir.h): believed only when it is keventd's
 * user's and not writable by group or others, never through a symlink,
 * locked by one keventd; its files opened without following a link, made
 * exclusively, refused when they are not keventd's user's own regular
 * file; replaced whole or not at all, never through a link planted at the
 * temporary name. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "statedir.h"
#include "testutil.h"
#include "util.h"

#define NOBODY 65534

static char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	int rc = read_fd(fd, 1 << 20, &text, &len);
	close(fd);
	return rc < 0 ? NULL : text;
}

enum dir_kind { D_MISSING, D_DIR, D_SYMLINK, D_FILE };

/* The directory: made when missing, else taken as it is or refused with
 * a reason, and nothing made in one refused. */
static void test_dir(void **state)
{
	(void)state;
	static const char wr[] = "writable by group or others (chmod go-w it)";
	/* clang-format off */
	static const struct {
		enum dir_kind kind;
		mode_t mode;
		uid_t owner; /* 0: the test's own user */
		int rc;
		const char *why;
	} cases[] = {
		{D_MISSING, 0, 0, 0, NULL},	  /* made, 0700 */
		{D_DIR, 0700, 0, 0, NULL},
		{D_DIR, 0755, 0, 0, NULL},	  /* as systemd's RuntimeDirectory= makes it */
		{D_DIR, 0770, 0, -EACCES, wr},	  /* g+w */
		{D_DIR, 0720, 0, -EACCES, wr},
		{D_DIR, 0702, 0, -EACCES, wr},	  /* o+w */
		{D_DIR, 0777, 0, -EACCES, wr},
		{D_DIR, 01777, 0, -EACCES, wr},	  /* /tmp's mode */
		{D_DIR, 0700, NOBODY, -EPERM, "not owned by keventd's user"},
		{D_SYMLINK, 0700, 0, -ELOOP, "a symbolic link, not followed"},
		{D_FILE, 0600, 0, -ENOTDIR, "not a directory"},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (cases[i].owner && geteuid() != 0)
			continue; /* only root can give it away */
		_cleanup_free_ char *top = tu_mkdtemp();
		_cleanup_free_ char *dir = tu_printf("%s/state", top);
		_cleanup_free_ char *real = tu_printf("%s/real", top);
		const char *made = cases[i].kind == D_SYMLINK ? real : dir;
		if (cases[i].kind == D_DIR || cases[i].kind == D_SYMLINK) {
			assert_int_equal(mkdir(made, 0700), 0);
			assert_int_equal(chmod(made, cases[i].mode), 0);
		}
		if (cases[i].kind == D_SYMLINK)
			assert_int_equal(symlink("real", dir), 0);
		if (cases[i].kind == D_FILE)
			tu_write(top, "state", "", cases[i].mode);
		if (cases[i].owner)
			assert_int_equal(chown(made, cases[i].owner, (gid_t)-1), 0);
		struct kstatedir *sd = NULL;
		const char *why = NULL;
		int rc = kstatedir_open(dir, &sd, &why);
		if (rc != cases[i].rc || (cases[i].why && (!why || strcmp(why, cases[i].why))))
			fail_msg("case %zu: %d (%s)", i, rc, why ? why : "");
		_cleanup_free_ char *lock = tu_printf("%s/" KSTATEDIR_LOCK, made);
		if (rc == 0) {
			struct stat st;
			assert_non_null(sd);
			assert_string_equal(sd->path, dir);
			assert_int_equal(fstat(sd->fd, &st), 0);
			assert_true(S_ISDIR(st.st_mode));
			if (cases[i].kind == D_MISSING)
				assert_int_equal(st.st_mode & 07777, KSTATEDIR_MODE);
			assert_int_equal(access(lock, F_OK), 0);
		} else {
			assert_null(sd);
			assert_int_equal(access(lock, F_OK), -1); /* nothing made in it */
		}
		kstatedir_free(sd);
		tu_rm_rf(top);
	}
}

/* One keventd per state directory: a second one is refused, and takes it
 * once the first is gone. */
static void test_lock(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kstatedir *a = NULL, *b = NULL;
	const char *why = NULL;
	assert_int_equal(kstatedir_open(dir, &a, &why), 0);
	assert_int_equal(kstatedir_open(dir, &b, &why), -EBUSY);
	assert_string_equal(why, "another keventd holds its state.lock");
	assert_null(b);
	kstatedir_free(a);
	assert_int_equal(kstatedir_open(dir, &b, &why), 0);
	kstatedir_free(b);
	tu_rm_rf(dir);
}

enum file_kind { F_MISSING, F_OWN, F_FOREIGN, F_SYMLINK, F_DANGLING, F_HARDLINK, F_FIFO, F_DIR };

/* A state file: opened only when it is keventd's user's own regular file
 * of one name; a refused one is neither followed, truncated nor made. */
static void test_openat(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		enum file_kind kind;
		int flags;
		int rc; /* 0: opened */
	} cases[] = {
		{F_MISSING, O_RDWR | O_CREAT, 0},		/* made, exclusively */
		{F_MISSING, O_RDWR | O_CREAT | O_EXCL, 0},
		{F_MISSING, O_RDONLY, -ENOENT},
		{F_OWN, O_RDWR | O_CREAT, 0},
		{F_OWN, O_RDWR | O_CREAT | O_TRUNC, 0},
		{F_OWN, O_RDWR | O_CREAT | O_EXCL, -EEXIST},
		{F_FOREIGN, O_RDONLY, -EPERM},
		{F_FOREIGN, O_RDWR | O_CREAT | O_TRUNC, -EPERM},
		{F_SYMLINK, O_RDONLY, -ELOOP},
		{F_SYMLINK, O_RDWR | O_CREAT | O_TRUNC, -ELOOP},
		{F_SYMLINK, O_RDWR | O_CREAT | O_EXCL, -EEXIST},
		{F_DANGLING, O_RDWR | O_CREAT, -ELOOP},		/* nothing made where it points */
		{F_HARDLINK, O_RDWR | O_TRUNC, -EMLINK},
		{F_FIFO, O_RDONLY, -EINVAL},			/* and no hang */
		{F_DIR, O_RDONLY, -EISDIR},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (cases[i].kind == F_FOREIGN && geteuid() != 0)
			continue;
		_cleanup_free_ char *dir = tu_mkdtemp();
		_cleanup_free_ char *path = tu_printf("%s/f", dir);
		_cleanup_free_ char *victim = tu_printf("%s/victim", dir);
		tu_write(dir, "victim", "keep\n", 0600);
		switch (cases[i].kind) {
		case F_MISSING:
			break;
		case F_OWN:
			tu_write(dir, "f", "mine\n", 0600);
			break;
		case F_FOREIGN:
			tu_write(dir, "f", "theirs\n", 0666);
			assert_int_equal(chown(path, NOBODY, NOBODY), 0);
			break;
		case F_SYMLINK:
			assert_int_equal(symlink("victim", path), 0);
			break;
		case F_DANGLING:
			assert_int_equal(symlink("nowhere", path), 0);
			break;
		case F_HARDLINK:
			assert_int_equal(link(victim, path), 0);
			break;
		case F_FIFO:
			assert_int_equal(mkfifo(path, 0600), 0);
			break;
		case F_DIR:
			assert_int_equal(mkdir(path, 0700), 0);
			break;
		}
		int dfd = tu_dirfd(dir);
		int fd = kstatedir_openat(dfd, "f", cases[i].flags, 0600);
		if (cases[i].rc ? fd != cases[i].rc : fd < 0)
			fail_msg("case %zu: %d (%s)", i, fd, kstatedir_strerror(fd));
		/* a file that is there but not keventd's, not a failed call */
		bool refused = cases[i].rc && cases[i].rc != -ENOENT && cases[i].rc != -EEXIST;
		assert_int_equal(kstatedir_refused(fd), refused);
		if (fd >= 0) {
			struct stat st;
			assert_int_equal(fstat(fd, &st), 0);
			assert_true(S_ISREG(st.st_mode));
			assert_int_equal(st.st_uid, geteuid());
			assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
			if (cases[i].kind == F_MISSING)
				assert_int_equal(st.st_mode & 0777, 0600);
			if (cases[i].flags & O_TRUNC)
				assert_int_equal(st.st_size, 0);
			else if (cases[i].kind == F_OWN)
				assert_int_equal(st.st_size, 5);
			close(fd);
		}
		/* what a refused name leads to is as it was */
		_cleanup_free_ char *v = slurp(victim);
		assert_string_equal(v, "keep\n");
		_cleanup_free_ char *nowhere = tu_printf("%s/nowhere", dir);
		assert_int_equal(access(nowhere, F_OK), -1);
		if (cases[i].kind == F_FOREIGN) {
			_cleanup_free_ char *t = slurp(path);
			assert_string_equal(t, "theirs\n");
		}
		close(dfd);
		tu_rm_rf(dir);
	}
}

/* A state file is replaced whole, with the mode given, and leaves no
 * temporary file behind. */
static void test_replace(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	_cleanup_free_ char *path = tu_printf("%s/state", dir);
	_cleanup_free_ char *tmp = tu_printf("%s/state.new", dir);
	_cleanup_close_ int dfd = tu_dirfd(dir);
	static const struct {
		const char *data;
		mode_t mode;
	} steps[] = {
		{"first\n", 0600},	    /* made */
		{"second, longer\n", 0644}, /* replaced, with the mode given */
		{"", 0600},		    /* emptied */
	};
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		assert_int_equal(kstatedir_replace(dfd, "state", steps[i].data,
						   strlen(steps[i].data), steps[i].mode),
				 0);
		_cleanup_free_ char *got = slurp(path);
		assert_non_null(got);
		assert_string_equal(got, steps[i].data);
		struct stat st;
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, steps[i].mode);
		assert_int_equal(access(tmp, F_OK), -1); /* no temporary left */
	}
	tu_rm_rf(dir);
}

/* Whatever has the temporary name (a symlink, a hard link to another
 * file) is removed, never written through: the file it leads to is left
 * as it was. */
static void test_replace_planted(void **state)
{
	(void)state;
	for (int hard = 0; hard < 2; hard++) {
		_cleanup_free_ char *dir = tu_mkdtemp();
		_cleanup_free_ char *path = tu_printf("%s/state", dir);
		_cleanup_free_ char *tmp = tu_printf("%s/state.new", dir);
		_cleanup_free_ char *victim = tu_printf("%s/victim", dir);
		_cleanup_close_ int dfd = tu_dirfd(dir);
		tu_write(dir, "victim", "keep\n", 0600);
		assert_int_equal(hard ? link(victim, tmp) : symlink(victim, tmp), 0);
		assert_int_equal(kstatedir_replace(dfd, "state", "x", 1, 0600), 0);
		_cleanup_free_ char *v = slurp(victim);
		assert_string_equal(v, "keep\n");
		_cleanup_free_ char *got = slurp(path);
		assert_string_equal(got, "x");
		assert_int_equal(access(tmp, F_OK), -1);
		tu_rm_rf(dir);
	}
}

int main(void)
{
	umask(022); /* the modes asked for are the modes made */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dir),
		cmocka_unit_test(test_lock),
		cmocka_unit_test(test_openat),
		cmocka_unit_test(test_replace),
		cmocka_unit_test(test_replace_planted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
