// SPDX-License-Identifier: GPL-2.0-or-later
/* Spawning's pieces that a test can drive alone: closing a child's
 * descriptors with and without close_range(). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec.h"
#include "testutil.h"
#include "util.h"

struct close_case {
	const char *name;
	bool try_close_range;
	int lowfd;
	int open_fds[6]; /* made open before the call; 0 ends the list */
};

/* clang-format off */
static const struct close_case close_cases[] = {
	{"close_range", true, 3, {3, 4, 17, 200, 0}},
	{"the /proc/self/fd fallback", false, 3, {3, 4, 17, 200, 1000, 0}},
	{"the fallback keeps what is below lowfd", false, 10, {3, 9, 10, 11, 500, 0}},
	{"the fallback with many in a row", false, 3, {3, 5, 6, 7, 8, 0}},
};
/* clang-format on */

static void test_close_from(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(close_cases); i++) {
		const struct close_case *c = &close_cases[i];
		print_message("case: %s\n", c->name);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			/* nothing the test runner left open (a lock, a log) counts */
			for (int fd = 3; fd < 1100; fd++)
				(void)close(fd);
			/* many more than one getdents64() buffer holds, as well */
			for (int fd = 300; fd < 600; fd++)
				if (dup2(0, fd) < 0)
					_exit(10);
			for (size_t k = 0; c->open_fds[k]; k++)
				if (dup2(0, c->open_fds[k]) < 0)
					_exit(11);
			if (kexec_close_from(c->lowfd, c->try_close_range) < 0)
				_exit(12);
			for (int fd = 0; fd < 3; fd++)
				if (fcntl(fd, F_GETFD) < 0)
					_exit(13); /* 0-2 stay */
			for (int fd = 3; fd < 1100; fd++) {
				bool open = fcntl(fd, F_GETFD) >= 0;
				bool below = fd < c->lowfd;
				bool was = false;
				for (size_t k = 0; c->open_fds[k]; k++)
					was |= c->open_fds[k] == fd;
				if (open != (below && was))
					_exit(20);
			}
			_exit(0);
		}
		int st;
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_close_from),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
