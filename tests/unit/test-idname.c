// SPDX-License-Identifier: GPL-2.0-or-later
/* The names of user and group ids, looked up off the loop (idname.h):
 * getpwuid_r() and getgrgid_r() are the test's (--wrap): one of them
 * blocks, as NSS does when its directory server does not answer, and the
 * loop goes on meanwhile. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "idname.h"
#include "loop.h"
#include "util.h"

#define STUCK_UID 1000

static int gate[2]; /* a look-up of STUCK_UID waits until the test writes */

int __wrap_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t size, struct passwd **r);
int __wrap_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t size, struct passwd **r)
{
	char c;
	if (uid == STUCK_UID && read(gate[0], &c, 1) != 1)
		return EIO;
	*r = NULL;
	if (uid == 7)
		return 0; /* no such user */
	snprintf(buf, size, "user%u", uid);
	*pw = (struct passwd){.pw_name = buf, .pw_uid = uid};
	*r = pw;
	return 0;
}

int __wrap_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t size, struct group **r);
int __wrap_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t size, struct group **r)
{
	snprintf(buf, size, "group%u", gid);
	*gr = (struct group){.gr_name = buf, .gr_gid = gid};
	*r = gr;
	return 0;
}

struct seen {
	struct kloop *loop;
	size_t n, want;
	uint64_t token[128];
	char name[128][32];
};

static void on_name(void *userdata, uint64_t token, const char *name)
{
	struct seen *s = userdata;
	assert_true(s->n < 128);
	s->token[s->n] = token;
	snprintf(s->name[s->n], sizeof(s->name[0]), "%s", name ? name : "-");
	if (++s->n == s->want)
		kloop_exit(s->loop, 0);
}

static void on_timeout(struct ktimer *t, void *userdata)
{
	(void)t;
	kloop_exit(userdata, 1);
}

/* Runs the loop until s->want answers came (0) or ms passed (1). */
static int run_for(struct seen *s, size_t want, unsigned ms)
{
	struct ktimer *t = NULL;
	s->want = want;
	if (s->n >= want)
		return 0;
	assert_int_equal(kloop_add_timer(s->loop, now_monotonic_ns() + ms * 1000000ull, on_timeout,
					 s->loop, &t),
			 0);
	int rc = kloop_run(s->loop);
	if (rc == 0)
		ktimer_cancel(t);
	return rc;
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(pipe(gate), 0);
	struct seen s = {0};
	assert_int_equal(kloop_new(&s.loop), 0);
	struct kidname *r = NULL;
	assert_int_equal(kidname_new(s.loop, on_name, &s, &r), 0);

	assert_int_equal(kidname_ask(r, false, 0, 1), 0);
	assert_int_equal(kidname_ask(r, true, 4, 2), 0);
	assert_int_equal(kidname_ask(r, false, 7, 3), 0);
	assert_int_equal(run_for(&s, 3, 5000), 0);
	assert_int_equal(s.token[0], 1);
	assert_string_equal(s.name[0], "user0");
	assert_string_equal(s.name[1], "group4");
	assert_string_equal(s.name[2], "-");
	assert_int_equal(kidname_outstanding(r), 0);

	/* a look-up that does not return: asking never waits, the loop goes
	 * on (the timer fires), and the outstanding ones are bounded */
	assert_int_equal(kidname_ask(r, false, STUCK_UID, 10), 0);
	for (uint64_t i = 1; i < KIDNAME_OUTSTANDING; i++)
		assert_int_equal(kidname_ask(r, false, (uint32_t)i, 10 + i), 0);
	assert_int_equal(kidname_ask(r, false, 1, 99), -EBUSY);
	assert_int_equal(kidname_outstanding(r), KIDNAME_OUTSTANDING);
	assert_int_equal(run_for(&s, 4, 100), 1);
	assert_int_equal(s.n, 3);

	/* it returns: every answer comes, in order */
	assert_int_equal(write(gate[1], "x", 1), 1);
	assert_int_equal(run_for(&s, 3 + KIDNAME_OUTSTANDING, 5000), 0);
	assert_int_equal(s.token[3], 10);
	assert_string_equal(s.name[3], "user1000");
	for (size_t i = 1; i < KIDNAME_OUTSTANDING; i++)
		assert_int_equal(s.token[3 + i], 10 + i);
	assert_int_equal(kidname_outstanding(r), 0);

	/* freed with a look-up stuck: the thread goes once it returns */
	assert_int_equal(kidname_ask(r, false, STUCK_UID, 200), 0);
	kidname_free(r);
	assert_int_equal(write(gate[1], "x", 1), 1);
	kloop_free(s.loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
