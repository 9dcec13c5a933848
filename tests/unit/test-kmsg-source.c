// SPDX-License-Identifier: GPL-2.0-or-later
/* The kmsg source's numbers, on a /dev/kmsg of the test's own: read() of
 * its descriptor (an eventfd, always readable) is wrapped to return the
 * records, EPIPE and EAGAIN a test scripts.  Checked: a first start
 * begins at the end; a number skipped is counted lost, exactly, and
 * reading goes on; a full share pauses reading and loses nothing the ring
 * kept; kmsg.pos resumes a start, none twice; a continued line is one
 * event; a position of another boot is a first start, backlog: yes reads
 * the ring from its start; kmsg.pos never covers an event before the
 * journal holds it. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "loop.h"
#include "source-kmsg.h"
#include "statedir.h"
#include "testutil.h"
#include "util.h"

#define MAX_SCRIPT 64
#define MAX_EVENTS 64

/* The records read() returns, in order: "EPIPE" for an overrun; past the
 * last, EAGAIN. */
static struct {
	int fd;
	char *recs[MAX_SCRIPT];
	size_t n, next;
	size_t reads; /* every read() of fd, EAGAIN too */
} script = {.fd = -1};

ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	if (fd != script.fd || fd < 0)
		return __real_read(fd, buf, n);
	script.reads++;
	if (script.next == script.n) {
		errno = EAGAIN;
		return -1;
	}
	const char *r = script.recs[script.next++];
	if (strcmp(r, "EPIPE") == 0) {
		errno = EPIPE;
		return -1;
	}
	size_t len = strlen(r);
	assert_true(len <= n);
	memcpy(buf, r, len);
	return (ssize_t)len;
}

/* Scripts the record SEQ at level (its text names its number), or an
 * overrun for "EPIPE". */
static void rec(unsigned level, uint64_t seq)
{
	assert_true(script.n < MAX_SCRIPT);
	script.recs[script.n++] =
		tu_printf("%u,%" PRIu64 ",1000,-;record %" PRIu64 "\n", level, seq, seq);
}

static void raw(const char *text)
{
	assert_true(script.n < MAX_SCRIPT);
	script.recs[script.n++] = strdup(text);
}

static void script_reset(void)
{
	for (size_t i = 0; i < script.n; i++)
		free(script.recs[i]);
	script.n = script.next = script.reads = 0;
}

/* The sink: the daemon's flow control in small, a share of the queue that
 * pauses the source when it is full. */
struct fake {
	struct ksource *src;
	size_t share, pending;
	bool paused;
	uint64_t seqs[MAX_EVENTS];
	char msgs[MAX_EVENTS][64];
	size_t submitted, rejected, overruns;
	uint64_t lost;
	/* the journal's write at the end of a round fails: the events stay
	 * pending, and the source is not told they are journaled */
	bool journal_fails;
};

/* The end of a round of the loop, as the daemon's: the journal written,
 * then the source told (source.h: journaled()). */
static void round_end(void *userdata)
{
	struct fake *f = userdata;
	if (f->src && !f->journal_fails)
		f->src->journaled(f->src);
}

static int fake_submit(void *userdata, struct kevent *ev)
{
	struct fake *f = userdata;
	assert_int_equal(ev->source, KEVENT_SOURCE_KMSG);
	assert_true(f->submitted < MAX_EVENTS);
	f->seqs[f->submitted] = ev->seqnum;
	snprintf(f->msgs[f->submitted], sizeof(f->msgs[0]), "%s", kevent_prop(ev, "Message"));
	f->submitted++;
	kevent_free(ev);
	if (++f->pending >= f->share && !f->paused) {
		f->paused = true;
		f->src->pause(f->src, true);
	}
	return 0;
}

static void fake_reject(void *userdata, enum kevent_source src, const char *why)
{
	struct fake *f = userdata;
	(void)src;
	(void)why;
	f->rejected++;
}

static void fake_overrun(void *userdata, enum kevent_source src)
{
	struct fake *f = userdata;
	(void)src;
	f->overruns++;
}

static void fake_lost(void *userdata, enum kevent_source src, uint64_t n)
{
	struct fake *f = userdata;
	(void)src;
	f->lost += n;
}

static void fake_truncated(void *userdata, enum kevent_source src)
{
	(void)userdata;
	(void)src;
}

static size_t fake_room(void *userdata, enum kevent_source src)
{
	struct fake *f = userdata;
	(void)src;
	return f->pending < f->share ? f->share - f->pending : 0;
}

static const struct ksink_ops fake_ops = {
	.submit = fake_submit,
	.reject = fake_reject,
	.overrun = fake_overrun,
	.lost = fake_lost,
	.truncated = fake_truncated,
	.room = fake_room,
};

struct env {
	struct kloop *loop;
	char *dir;
	struct kstatedir *state;
	struct fake f;
	struct ksink sink;
};

static struct env env;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(kloop_new(&env.loop), 0);
	env.dir = tu_mkdtemp();
	env.state = tu_statedir(env.dir);
	env.f = (struct fake){.share = 1000};
	env.sink = (struct ksink){
		.loop = env.loop, .ops = &fake_ops, .userdata = &env.f, .state = env.state};
	kloop_set_after(env.loop, round_end, &env.f);
	script_reset();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	script_reset();
	kloop_free(env.loop);
	kstatedir_free(env.state);
	tu_rm_rf(env.dir);
	free(env.dir);
	return 0;
}

/* The source on a fresh descriptor, reading the script from its start. */
static struct ksource *start(const struct kkmsg_config *cfg)
{
	script.fd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
	assert_true(script.fd >= 0);
	struct ksource *src = NULL;
	assert_int_equal(ksource_kmsg_open(&env.sink, cfg, script.fd, &src), 0);
	env.f.src = src;
	return src;
}

/* As the daemon stops: the journal written, then the source stopped. */
static void stop(struct ksource *src)
{
	if (!env.f.journal_fails)
		src->journaled(src);
	src->stop(src);
	src->free(src);
	env.f.src = NULL;
	script.fd = -1;
}

struct step {
	size_t reads;
	unsigned left;
};

static void on_step(struct ktimer *t, void *userdata)
{
	struct step *s = userdata;
	(void)t;
	if (script.reads != s->reads || !s->left--) {
		kloop_exit(env.loop, 0);
		return;
	}
	assert_int_equal(kloop_add_timer(env.loop, now_monotonic_ns(), on_step, s, NULL), 0);
}

/* Runs the loop until the source read (or, paused, a few wake-ups). */
static void step(void)
{
	struct step s = {.reads = script.reads, .left = 5};
	assert_int_equal(kloop_add_timer(env.loop, now_monotonic_ns(), on_step, &s, NULL), 0);
	assert_int_equal(kloop_run(env.loop), 0);
}

static uint64_t pos_seq(void)
{
	_cleanup_free_ char *path = tu_printf("%s/kmsg.pos", env.dir);
	_cleanup_free_ char *text = NULL;
	size_t len;
	assert_int_equal(read_file(path, 256, &text, &len), 0);
	struct kkmsg_pos p;
	assert_int_equal(kkmsg_pos_parse(text, len, &p), 0);
	return p.seq;
}

static void test_first_start_at_end(void **state)
{
	(void)state;
	for (uint64_t s = 10; s < 15; s++)
		rec(3, s);
	struct ksource *src = start(NULL);
	/* the ring read through: nothing submitted, the position at its end */
	assert_int_equal(env.f.submitted, 0);
	assert_int_equal(pos_seq(), 14);
	rec(3, 15);
	rec(6, 16);  /* below err: read, no event */
	rec(12, 17); /* a user-space writer's */
	rec(2, 18);
	step();
	assert_int_equal(env.f.submitted, 2);
	assert_int_equal(env.f.seqs[0], 15);
	assert_int_equal(env.f.seqs[1], 18);
	assert_int_equal(env.f.lost, 0);
	assert_int_equal(pos_seq(), 18);
	stop(src);
}

static void test_lost(void **state)
{
	(void)state;
	rec(3, 1);
	struct ksource *src = start(NULL);
	rec(3, 2);
	raw("EPIPE");
	rec(3, 7); /* 3..6 overwritten */
	rec(3, 8);
	raw("EPIPE");
	rec(6, 20); /* 9..19, the first one read below err */
	rec(3, 21);
	step();
	assert_int_equal(env.f.submitted, 4);
	assert_int_equal(env.f.seqs[1], 7);
	assert_int_equal(env.f.seqs[3], 21);
	assert_int_equal(env.f.lost, 4 + 11);
	assert_int_equal(env.f.overruns, 2);
	/* a record seen before (numbers going back) is passed over */
	rec(3, 21);
	rec(3, 22);
	step();
	assert_int_equal(env.f.submitted, 5);
	assert_int_equal(env.f.seqs[4], 22);
	assert_int_equal(env.f.lost, 15);
	assert_int_equal(pos_seq(), 22);
	stop(src);
}

/* A flood: the share fills, reading stops with the rest left in the ring,
 * and what the ring overwrote meanwhile is counted when reading resumes. */
static void test_flood(void **state)
{
	(void)state;
	rec(6, 0);
	env.f.share = 3;
	struct ksource *src = start(NULL);
	for (uint64_t s = 1; s <= 10; s++)
		rec(3, s);
	step();
	assert_int_equal(env.f.submitted, 3);
	assert_true(env.f.paused);
	size_t next = script.next;
	assert_int_equal(pos_seq(), 3);
	/* paused: nothing read, however long */
	step();
	assert_int_equal(script.next, next);
	assert_int_equal(env.f.submitted, 3);
	/* the queue drains; meanwhile the kernel overwrote 4..7 */
	script.next = script.n; /* the rest of the script is gone */
	raw("EPIPE");
	rec(3, 8);
	rec(3, 9);
	env.f.pending = 0;
	env.f.paused = false;
	env.f.share = 1000;
	src->pause(src, false);
	step();
	assert_int_equal(env.f.submitted, 5);
	assert_int_equal(env.f.seqs[3], 8);
	assert_int_equal(env.f.lost, 4);
	assert_int_equal(pos_seq(), 9);
	stop(src);
}

static void test_resume(void **state)
{
	(void)state;
	rec(3, 0);
	struct ksource *src = start(NULL);
	rec(3, 1);
	rec(3, 2);
	step();
	assert_int_equal(env.f.submitted, 2);
	stop(src);
	assert_int_equal(pos_seq(), 2);
	/* records while keventd was away; the ring from its start */
	script_reset();
	for (uint64_t s = 0; s <= 5; s++)
		rec(3, s);
	env.f.submitted = 0;
	src = start(NULL);
	assert_int_equal(env.f.submitted, 0);
	step();
	assert_int_equal(env.f.submitted, 3);
	assert_int_equal(env.f.seqs[0], 3);
	assert_int_equal(env.f.seqs[2], 5);
	assert_int_equal(env.f.lost, 0);
	stop(src);
	/* away longer than the ring keeps: what it lost is counted */
	script_reset();
	for (uint64_t s = 9; s <= 10; s++)
		rec(3, s);
	env.f.submitted = 0;
	src = start(NULL);
	step();
	assert_int_equal(env.f.submitted, 2);
	assert_int_equal(env.f.seqs[0], 9);
	assert_int_equal(env.f.lost, 3); /* 6, 7, 8 */
	assert_int_equal(pos_seq(), 10);
	stop(src);
}

static void test_backlog_and_boot(void **state)
{
	(void)state;
	/* a position of another boot is a first start */
	_cleanup_free_ char *path = tu_printf("%s/kmsg.pos", env.dir);
	tu_write(env.dir, "kmsg.pos", "00000000-0000-0000-0000-000000000000 3\n", 0644);
	rec(3, 0);
	rec(3, 1);
	struct ksource *src = start(NULL);
	step();
	assert_int_equal(env.f.submitted, 0);
	assert_int_equal(pos_seq(), 1);
	stop(src);
	/* with backlog: yes, a first start reads the ring from its start */
	unlink(path);
	script_reset();
	rec(3, 0);
	rec(3, 1);
	struct kkmsg_config cfg;
	kkmsg_config_init(&cfg);
	cfg.backlog = true;
	src = start(&cfg);
	step();
	assert_int_equal(env.f.submitted, 2);
	assert_int_equal(env.f.seqs[0], 0);
	stop(src);
}

static void test_continued(void **state)
{
	(void)state;
	rec(6, 0);
	struct ksource *src = start(NULL);
	raw("3,1,5,c;one \n");
	raw("3,2,5,+;line\n");
	raw("3,3,5,c;a piece alone\n");
	rec(3, 4);
	step();
	assert_int_equal(env.f.submitted, 3);
	assert_int_equal(env.f.seqs[0], 1);
	assert_string_equal(env.f.msgs[0], "one line");
	assert_string_equal(env.f.msgs[1], "a piece alone");
	assert_int_equal(env.f.seqs[2], 4);
	assert_int_equal(env.f.lost, 0);
	assert_int_equal(pos_seq(), 4);
	stop(src);
}

/* kmsg.pos follows the journal: however much is read, a record whose
 * event the journal does not hold yet is not covered, and a start after a
 * kill then reads it again. */
static void test_position_after_journal(void **state)
{
	(void)state;
	rec(3, 0);
	struct ksource *src = start(NULL);
	assert_int_equal(pos_seq(), 0);
	env.f.journal_fails = true;
	rec(3, 1);
	rec(6, 2); /* below err: no event, but after one not journaled */
	step();
	assert_int_equal(env.f.submitted, 1);
	assert_int_equal(pos_seq(), 0);
	/* killed now: the next start reads 1 and 2 again */
	stop(src);
	assert_int_equal(pos_seq(), 0);
	script_reset();
	for (uint64_t s = 0; s <= 2; s++)
		rec(3, s);
	env.f.submitted = 0;
	env.f.journal_fails = false;
	src = start(NULL);
	step();
	assert_int_equal(env.f.submitted, 2);
	assert_int_equal(env.f.seqs[0], 1);
	assert_int_equal(pos_seq(), 2);
	stop(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_first_start_at_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backlog_and_boot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_continued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_position_after_journal, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
