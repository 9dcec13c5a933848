// SPDX-License-Identifier: GPL-2.0-or-later
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *tu_diag(const struct kdiag *d)
{
	struct strbuf sb = STRBUF_INIT;
	kdiag_format(d, &sb);
	return strbuf_steal(&sb);
}

struct kfile *tu_parse(const char *yaml, const char *path)
{
	struct kdiags d = {0};
	struct kfile *f = NULL;
	int rc = krules_parse(yaml, strlen(yaml), path ? path : "t.yaml", &f, &d);
	for (size_t i = 0; i < d.n; i++) {
		char *s = tu_diag(&d.v[i]);
		print_error("unexpected: %s\n", s);
		free(s);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(d.n, 0);
	assert_non_null(f);
	kdiags_free(&d);
	return f;
}

struct kdiags tu_parse_fail(const char *yaml, const char *path)
{
	struct kdiags d = {0};
	struct kfile *f = NULL;
	int rc = krules_parse(yaml, strlen(yaml), path ? path : "t.yaml", &f, &d);
	assert_int_equal(rc, -EINVAL);
	assert_null(f);
	assert_true(d.n > 0);
	return d;
}

struct kevent *tu_event(int type, const char *object, const char *signal, const char *payload)
{
	struct kevent *ev = NULL;
	const char *why = NULL;
	int rc = kevent_new(type, object, signal, payload, KEVENT_SOURCE_SOCKET, 1, 2, NULL, 0, &ev,
			    &why);
	if (rc < 0)
		print_error("bad test event: %s\n", why ? why : "?");
	assert_int_equal(rc, 0);
	return ev;
}

char *tu_printf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	assert_true(n >= 0);
	return s;
}

char *tu_mkdtemp(void)
{
	const char *tmp = getenv("TMPDIR");
	char *p = tu_printf("%s/kevent-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(p));
	assert_int_equal(chmod(p, 0755), 0);
	return p;
}

char *tu_subdir(const char *dir, const char *sub)
{
	char *p = tu_printf("%s/%s", dir, sub);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chmod(p, 0755), 0);
	return p;
}

void tu_write(const char *dir, const char *name, const char *content, mode_t mode)
{
	char *p = tu_printf("%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	size_t len = strlen(content);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	free(p);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void tu_rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
