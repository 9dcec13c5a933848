// SPDX-License-Identifier: GPL-2.0-or-later
/* A cgroup per handler run (keventd(8), CONTAINMENT): the path logic,
 * against a fake cgroup tree in a temporary directory. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "testutil.h"
#include "util.h"

static char *slurp_at(const char *dir, const char *name)
{
	char *path = tu_printf("%s/%s", dir, name), *out = NULL;
	size_t len;
	if (read_file(path, 1 << 16, &out, &len) < 0)
		out = NULL;
	free(path);
	return out;
}

static bool exists_at(const char *dir, const char *name)
{
	char *path = tu_printf("%s/%s", dir, name);
	struct stat st;
	bool ok = stat(path, &st) == 0;
	free(path);
	return ok;
}

struct self_case {
	const char *text, *want; /* want NULL: -ENOENT */
};

/* clang-format off */
static const struct self_case self_cases[] = {
	{"0::/system.slice/keventd.service\n", "/system.slice/keventd.service"},
	{"12:pids:/x\n1:name=systemd:/y\n0::/system.slice/keventd.service\n", "/system.slice/keventd.service"},
	{"0::/\n", "/"},
	{"0::/a b\n", "/a b"},
	{"12:pids:/x\n1:name=systemd:/y\n", NULL},
	{"", NULL},
	{"0::", NULL},
	{"10::/not-v2\n", NULL},
};
/* clang-format on */

static void test_parse_self(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(self_cases); i++) {
		const struct self_case *c = &self_cases[i];
		print_message("case: %s\n", c->text);
		char *path = NULL;
		int rc = kcgroup_parse_self(c->text, &path);
		if (!c->want) {
			assert_int_equal(rc, -ENOENT);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_string_equal(path, c->want);
		free(path);
	}
}

/* clang-format off */
static const struct self_case mount_cases[] = {
	{"25 1 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n", "/sys/fs/cgroup"},
	{"31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	 "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n", "/sys/fs/cgroup/unified"},
	{"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 master:2 - cgroup2 cgroup2 rw\n", "/sys/fs/cgroup/unified"},
	{"31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", NULL},
	{"31 25 0:27 / /mnt/cgroup2 rw - tmpfs cgroup2 rw\n", NULL},
	{"", NULL},
};
/* clang-format on */

static void test_parse_mountinfo(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(mount_cases); i++) {
		const struct self_case *c = &mount_cases[i];
		print_message("case: %s\n", c->text);
		char *mnt = NULL;
		int rc = kcgroup_parse_mountinfo(c->text, &mnt);
		if (!c->want) {
			assert_int_equal(rc, -ENOENT);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_string_equal(mnt, c->want);
		free(mnt);
	}
}

static void test_parse_controllers(void **state)
{
	(void)state;
	assert_int_equal(kcgroup_parse_controllers("cpuset cpu io memory hugetlb pids rdma misc\n"),
			 KCGROUP_MEMORY | KCGROUP_PIDS | KCGROUP_CPU);
	assert_int_equal(kcgroup_parse_controllers("io memory\n"), KCGROUP_MEMORY);
	assert_int_equal(kcgroup_parse_controllers("cpuset hugetlb\n"), 0);
	assert_int_equal(kcgroup_parse_controllers(""), 0);
	assert_int_equal(kcgroup_parse_controllers("pid cpus memoryx"), 0);
}

struct name_case {
	const char *rule;
	uint64_t seq, n;
	const char *want;
};

/* clang-format off */
static const struct name_case name_cases[] = {
	{"cpu-overheat", 42, 1, "cpu-overheat-42-1"},
	{"10-usb.yaml:0", 7, 3, "10-usb_yaml_0-7-3"},
	{"a/../b", 1, 1, "a____b-1-1"},
	{"..", 1, 2, "__-1-2"},
	{"cgroup.procs", 5, 9, "cgroup_procs-5-9"},
	{"with space\tand tab", 1, 1, "with_space_and_tab-1-1"},
	{"\xc3\xa9t\xc3\xa9", 1, 1, "__t__-1-1"},
	{"", 18446744073709551615ull, 18446744073709551615ull, "-18446744073709551615-18446744073709551615"},
};
/* clang-format on */

static void test_run_name(void **state)
{
	(void)state;
	char buf[KCGROUP_NAME_MAX];
	for (size_t i = 0; i < ARRAY_SIZE(name_cases); i++) {
		print_message("case: %s\n", name_cases[i].rule);
		kcgroup_run_name(name_cases[i].rule, name_cases[i].seq, name_cases[i].n, buf);
		assert_string_equal(buf, name_cases[i].want);
	}
	/* a long name is cut, the numbers that make it unique kept */
	char rule[200];
	memset(rule, 'x', sizeof(rule) - 1);
	rule[sizeof(rule) - 1] = '\0';
	kcgroup_run_name(rule, 18446744073709551615ull, 18446744073709551615ull, buf);
	assert_int_equal(strlen(buf), KCGROUP_NAME_MAX - 1);
	assert_non_null(strstr(buf, "x-18446744073709551615-18446744073709551615"));
	kcgroup_run_name(rule, 3, 4, buf);
	assert_int_equal(strlen(buf), KCGROUP_NAME_MAX - 1);
	assert_string_equal(buf + strlen(buf) - 4, "-3-4");
}

static void test_find_override(void **state)
{
	(void)state;
	char *dir = NULL;
	const char *why = NULL;
	assert_int_equal(kcgroup_find("/sys/fs/cgroup/test.slice", &dir, &why), 0);
	assert_string_equal(dir, "/sys/fs/cgroup/test.slice");
	free(dir);
	assert_int_equal(kcgroup_find("relative/path", &dir, &why), -EINVAL);
	assert_string_equal(why, "the cgroup root must be an absolute path");
}

struct open_case {
	const char *controllers; /* cgroup.controllers of the subtree */
	unsigned want;
	const char *subtree; /* what cgroup.subtree_control got */
};

/* clang-format off */
static const struct open_case open_cases[] = {
	{"cpuset cpu io memory pids\n", KCGROUP_MEMORY | KCGROUP_PIDS | KCGROUP_CPU, "+memory+pids+cpu"},
	{"io memory\n", KCGROUP_MEMORY, "+memory"},
	{"pids\n", KCGROUP_PIDS, "+pids"},
	{"", 0, ""},
	{NULL, 0, ""}, /* no cgroup.controllers at all */
};
/* clang-format on */

/* keventd moves into its leaf, then enables for the runs the controllers
 * it was given. */
static void test_open(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(open_cases); i++) {
		const struct open_case *c = &open_cases[i];
		print_message("case: %s\n", c->controllers ? c->controllers : "(none)");
		char *dir = tu_mkdtemp();
		if (c->controllers)
			tu_write(dir, "cgroup.controllers", c->controllers, 0644);
		tu_write(dir, "cgroup.subtree_control", "", 0644);
		struct kcgroup *cg = NULL;
		const char *why = NULL;
		assert_int_equal(kcgroup_open(dir, 4242, &cg, &why), 0);
		assert_string_equal(kcgroup_dir(cg), dir);
		assert_int_equal(kcgroup_controllers(cg), c->want);
		char *procs = slurp_at(dir, "keventd/cgroup.procs");
		assert_string_equal(procs, "4242");
		free(procs);
		char *sub = slurp_at(dir, "cgroup.subtree_control");
		assert_string_equal(sub, c->subtree);
		free(sub);
		kcgroup_free(cg);
		tu_rm_rf(dir);
		free(dir);
	}
	/* a subtree that is not there */
	struct kcgroup *cg = NULL;
	const char *why = NULL;
	assert_int_equal(kcgroup_open("/nonexistent/keventd-test", 1, &cg, &why), -ENOENT);
	assert_string_equal(why, "cannot open the cgroup");
	assert_null(cg);
}

struct limits_case {
	const char *what;
	struct kcg_limits lim;
	unsigned have;
	const char *memory, *pids, *cpu; /* the files afterwards; "-" untouched */
};

/* clang-format off */
static const struct limits_case limits_cases[] = {
	{"all three", {20ull << 20, 8, 50}, KCGROUP_MEMORY | KCGROUP_PIDS | KCGROUP_CPU, "20971520", "8", "50"},
	{"infinity", {KCG_INFINITY, KCG_INFINITY, 0}, KCGROUP_MEMORY | KCGROUP_PIDS | KCGROUP_CPU, "max", "max", "-"},
	{"memory alone", {4096, 0, 0}, KCGROUP_MEMORY | KCGROUP_PIDS | KCGROUP_CPU, "4096", "-", "-"},
	{"no memory controller", {4096, 8, 0}, KCGROUP_PIDS, "-", "8", "-"},
	{"none given", {0, 0, 0}, KCGROUP_MEMORY | KCGROUP_PIDS | KCGROUP_CPU, "-", "-", "-"},
};
/* clang-format on */

static void test_write_limits(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(limits_cases); i++) {
		const struct limits_case *c = &limits_cases[i];
		print_message("case: %s\n", c->what);
		char *dir = tu_mkdtemp();
		tu_write(dir, "memory.max", "-", 0644);
		tu_write(dir, "pids.max", "-", 0644);
		tu_write(dir, "cpu.weight", "-", 0644);
		int fd = open(dir, O_RDONLY | O_DIRECTORY);
		const char *file = NULL;
		assert_int_equal(kcgroup_write_limits(fd, &c->lim, c->have, &file), 0);
		close(fd);
		const char *names[] = {"memory.max", "pids.max", "cpu.weight"};
		const char *want[] = {c->memory, c->pids, c->cpu};
		for (size_t k = 0; k < 3; k++) {
			char *got = slurp_at(dir, names[k]);
			assert_string_equal(got, want[k]);
			free(got);
		}
		tu_rm_rf(dir);
		free(dir);
	}
	assert_int_equal(kcgroup_limits_need(NULL), 0);
	assert_int_equal(
		kcgroup_limits_need(&(struct kcg_limits){.memory_max = 1, .cpu_weight = 1}),
		KCGROUP_MEMORY | KCGROUP_CPU);
}

/* A run's cgroup: made, its state read, removed; one whose limits
 * cannot be written is not left behind. */
static void test_run_lifecycle(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	tu_write(dir, "cgroup.controllers", "memory pids\n", 0644);
	tu_write(dir, "cgroup.subtree_control", "", 0644);
	struct kcgroup *cg = NULL;
	const char *why = NULL;
	assert_int_equal(kcgroup_open(dir, 1, &cg, &why), 0);

	int fd = -1;
	assert_int_equal(kcgroup_run_create(cg, "r-1-1", NULL, &fd, &why), 0);
	assert_true(fd >= 0);
	assert_true(exists_at(dir, "r-1-1"));
	/* the same name twice: refused, the first kept */
	int fd2 = -1;
	assert_int_equal(kcgroup_run_create(cg, "r-1-1", NULL, &fd2, &why), -EEXIST);
	assert_string_equal(why, "making its cgroup");
	assert_true(exists_at(dir, "r-1-1"));

	/* what the kernel writes, read back */
	char *run = tu_printf("%s/r-1-1", dir);
	tu_write(run, "cgroup.events", "populated 1\nfrozen 0\n", 0644);
	tu_write(run, "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n", 0644);
	assert_int_equal(kcgroup_run_populated(fd), 1);
	assert_int_equal(kcgroup_run_oom_kills(fd), 2);
	tu_write(run, "cgroup.events", "populated 0\nfrozen 0\n", 0644);
	assert_int_equal(kcgroup_run_populated(fd), 0);
	close(fd);
	/* a fake cgroup's files are files: go before rmdir */
	tu_rm_rf(run);
	assert_int_equal(kcgroup_run_remove(cg, "r-1-1"), -ENOENT);

	/* limits for a controller it has, but no file to write them to */
	struct kcg_limits lim = {.memory_max = 1 << 20};
	assert_int_equal(kcgroup_run_create(cg, "r-2-2", &lim, &fd, &why), -ENOENT);
	assert_string_equal(why, "writing its cgroup's limits");
	assert_false(exists_at(dir, "r-2-2"));

	/* no memory.events (no memory controller): no OOM kill */
	assert_int_equal(kcgroup_run_create(cg, "r-3-3", NULL, &fd, &why), 0);
	assert_int_equal(kcgroup_run_oom_kills(fd), 0);
	assert_int_equal(kcgroup_run_populated(fd), -ENOENT);
	close(fd);
	assert_int_equal(kcgroup_run_remove(cg, "r-3-3"), 0);
	assert_false(exists_at(dir, "r-3-3"));

	free(run);
	kcgroup_free(cg);
	tu_rm_rf(dir);
	free(dir);
}

/* Without cgroup.kill (Linux before 5.14), each process cgroup.procs
 * lists gets SIGKILL. */
static void test_kill_without_cgroup_kill(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	pid_t a = fork();
	if (a == 0) {
		pause();
		_exit(0);
	}
	pid_t b = fork();
	if (b == 0) {
		pause();
		_exit(0);
	}
	char *procs = tu_printf("%d\n%d\n", (int)a, (int)b);
	tu_write(dir, "cgroup.procs", procs, 0644);
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(kcgroup_run_kill(fd), 0);
	close(fd);
	pid_t kids[] = {a, b};
	for (size_t i = 0; i < 2; i++) {
		int st;
		assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGKILL);
	}
	/* with cgroup.kill, that is what is written */
	tu_write(dir, "cgroup.kill", "", 0644);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(kcgroup_run_kill(fd), 0);
	close(fd);
	char *k = slurp_at(dir, "cgroup.kill");
	assert_string_equal(k, "1");
	free(k);
	free(procs);
	tu_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_self),
		cmocka_unit_test(test_parse_mountinfo),
		cmocka_unit_test(test_parse_controllers),
		cmocka_unit_test(test_run_name),
		cmocka_unit_test(test_find_override),
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_write_limits),
		cmocka_unit_test(test_run_lifecycle),
		cmocka_unit_test(test_kill_without_cgroup_kill),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
