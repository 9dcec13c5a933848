// SPDX-License-Identifier: GPL-2.0-or-later
/* The control socket's transport on real sockets (docs/control-protocol.md):
 * what may be at the socket's path. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl-server.h"
#include "testutil.h"
#include "util.h"

/* never called: no client connects */
static const struct kctl_server_ops ops;

/* Only a stale socket at the path is replaced; a live one is refused, and
 * so is anything else, untouched.  The socket is 0600 (0660 with a group),
 * and is unlinked at the end only if it is still ours. */
static void test_socket_path(void **state)
{
	(void)state;
	struct kloop *loop;
	struct kctl_server *s, *other;
	assert_int_equal(kloop_new(&loop), 0);
	char *dir = tu_mkdtemp(), *path = tu_printf("%s/ctl", dir);
	char *target = tu_printf("%s/target", dir);
	struct stat st;
	tu_write(dir, "target", "keep me\n", 0644);

	tu_write(dir, "ctl", "a file\n", 0640);
	assert_int_equal(kctl_server_new(loop, path, (gid_t)-1, &ops, NULL, &s), -EEXIST);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(unlink(path), 0);

	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(kctl_server_new(loop, path, 0, &ops, NULL, &s), -EEXIST);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(unlink(path), 0);

	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(kctl_server_new(loop, path, (gid_t)-1, &ops, NULL, &s), -EEXIST);
	assert_int_equal(rmdir(path), 0);

	/* a stale socket: replaced */
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_int_equal(kctl_server_new(loop, path, (gid_t)-1, &ops, NULL, &s), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	/* a live one: refused, and left alone */
	assert_int_equal(kctl_server_new(loop, path, (gid_t)-1, &ops, NULL, &other), -EADDRINUSE);
	kctl_server_free(s);
	assert_int_equal(lstat(path, &st), -1);

	/* with a group (the caller's own: no privilege needed) */
	assert_int_equal(kctl_server_new(loop, path, getegid(), &ops, NULL, &s), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0660);
	assert_int_equal(st.st_gid, getegid());
	/* replaced by a file before the end: not ours to remove */
	assert_int_equal(unlink(path), 0);
	tu_write(dir, "ctl", "someone else's\n", 0644);
	kctl_server_free(s);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));

	kloop_free(loop);
	tu_rm_rf(dir);
	free(dir);
	free(path);
	free(target);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
