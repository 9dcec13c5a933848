// SPDX-License-Identifier: GPL-2.0-or-later
/* The Generic Netlink sources' datagram handling, into a fake sink: what is
 * submitted, rejected, counted as lost or as an overrun, with no socket. */
#include <errno.h>
#include <inttypes.h>
#include <linux/thermal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "seqwin.h"
#include "source-genl.h"
#include "../nlbuild.h"

#define KERNEL_FAMILY  0x1d
#define THERMAL_FAMILY 0x17
#define MAX_EVENTS     8

/* What the sources told the sink. */
struct fake {
	size_t submitted;
	uint64_t seqnums[MAX_EVENTS];
	char signals[MAX_EVENTS][16];
	size_t rejected;
	char why[128]; /* the last reason */
	size_t overruns;
	uint64_t lost;
	enum kevent_source src; /* of every call */
};

static int fake_submit(void *userdata, struct kevent *ev)
{
	struct fake *f = userdata;
	assert_int_equal(ev->source, f->src);
	if (f->submitted < MAX_EVENTS) {
		f->seqnums[f->submitted] = ev->seqnum;
		snprintf(f->signals[f->submitted], sizeof(f->signals[0]), "%s", ev->signal);
	}
	f->submitted++;
	kevent_free(ev);
	return 0;
}

static void fake_reject(void *userdata, enum kevent_source src, const char *why)
{
	struct fake *f = userdata;
	assert_int_equal(src, f->src);
	assert_non_null(why);
	f->rejected++;
	snprintf(f->why, sizeof(f->why), "%s", why);
}

static void fake_overrun(void *userdata, enum kevent_source src)
{
	struct fake *f = userdata;
	assert_int_equal(src, f->src);
	f->overruns++;
}

static void fake_lost(void *userdata, enum kevent_source src, uint64_t n)
{
	struct fake *f = userdata;
	assert_int_equal(src, f->src);
	f->lost += n;
}

static size_t fake_room(void *userdata, enum kevent_source src)
{
	(void)userdata;
	(void)src;
	return SIZE_MAX;
}

static const struct ksink_ops fake_ops = {
	.submit = fake_submit,
	.reject = fake_reject,
	.overrun = fake_overrun,
	.lost = fake_lost,
	.room = fake_room,
};

/* The pieces a test datagram is made of. */
enum part {
	END,	      /* no more parts in this datagram */
	EV,	      /* a kevent event, sequence number seq */
	EV_CUT,	      /* the same, its last bytes missing: only last in a datagram */
	EV_NO_OBJECT, /* a kevent event without its object attribute */
	EV_ALIEN,     /* a kevent event of another family id */
	NOOP,	      /* an NLMSG_NOOP */
	TRIP_UP,      /* a thermal trip crossed upward, zone seq, trip 0 */
	TRIP_DOWN,    /* and downward */
	CDEV,	      /* thermal news that is no trip */
};

struct piece {
	enum part part;
	uint64_t seq;
};

struct dgram {
	char buf[8192] __attribute__((aligned(4)));
	size_t len;
};

static void kernel_event(struct msg *m, int family, uint64_t seq, bool object)
{
	nl_begin(m, family, KEVENT_CMD_EVENT);
	nl_put_u32(m, KEVENT_A_TYPE, KEVENT_POWER);
	if (object)
		nl_put_str(m, KEVENT_A_OBJECT, "/org/kernel/devices/system/cpu/temperature");
	nl_put_str(m, KEVENT_A_SIGNAL, "high");
	nl_put_u64(m, KEVENT_A_SEQNUM, seq);
	nl_put_u64(m, KEVENT_A_TIMESTAMP, 1700000000000000000ull);
}

static void trip(struct msg *m, int cmd, uint32_t zone)
{
	nl_begin(m, THERMAL_FAMILY, cmd);
	nl_put_u32(m, THERMAL_GENL_ATTR_TZ_ID, zone);
	nl_put_u32(m, THERMAL_GENL_ATTR_TZ_TRIP_ID, 0);
	nl_put_u32(m, THERMAL_GENL_ATTR_TZ_TEMP, 95000);
}

static void add(struct dgram *d, const struct piece *p)
{
	struct msg m;
	size_t cut = 0;
	m.len = 0;
	switch (p->part) {
	case END:
		return;
	case EV:
		kernel_event(&m, KERNEL_FAMILY, p->seq, true);
		break;
	case EV_CUT:
		kernel_event(&m, KERNEL_FAMILY, p->seq, true);
		cut = 4;
		break;
	case EV_NO_OBJECT:
		kernel_event(&m, KERNEL_FAMILY, p->seq, false);
		break;
	case EV_ALIEN:
		kernel_event(&m, KERNEL_FAMILY + 1, p->seq, true);
		break;
	case NOOP:
		memset(&m, 0, sizeof(m));
		((struct nlmsghdr *)m.buf)->nlmsg_type = NLMSG_NOOP;
		((struct nlmsghdr *)m.buf)->nlmsg_len = NLMSG_HDRLEN;
		m.len = NLMSG_HDRLEN;
		break;
	case TRIP_UP:
		trip(&m, THERMAL_GENL_EVENT_TZ_TRIP_UP, (uint32_t)p->seq);
		break;
	case TRIP_DOWN:
		trip(&m, THERMAL_GENL_EVENT_TZ_TRIP_DOWN, (uint32_t)p->seq);
		break;
	case CDEV:
		nl_begin(&m, THERMAL_FAMILY, THERMAL_GENL_EVENT_CDEV_STATE_UPDATE);
		break;
	}
	assert_true(d->len + m.len <= sizeof(d->buf));
	memcpy(d->buf + d->len, m.buf, m.len - cut);
	d->len += m.len - cut;
}

static void test_datagrams(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *what;
		bool thermal;
		struct piece dgrams[3][4]; /* each datagram's parts, END-terminated */
		size_t submitted;
		uint64_t seqnums[4]; /* of the events submitted (kernel) */
		size_t rejected;
		const char *why; /* part of the last reason */
		uint64_t lost_live; /* lost while reading: out of the window */
		uint64_t lost;	    /* lost in all, once reading has stopped */
	} cases[] = {
		{"an event is submitted", false, {{{EV, 1}}}, 1, {1}, 0, NULL, 0, 0},
		{"two events in one datagram", false, {{{EV, 1}, {EV, 2}}}, 2, {1, 2}, 0, NULL, 0, 0},
		{"a malformed message is rejected, its neighbours kept", false, {{{EV, 1}, {EV_NO_OBJECT, 2}, {EV, 3}}}, 2, {1, 3}, 1, "missing object", 0, 1},
		{"another family's message is rejected", false, {{{EV_ALIEN, 1}}}, 0, {0}, 1, "family", 0, 0},
		{"a no-op message is no event and no reject", false, {{{NOOP, 0}, {EV, 1}}}, 1, {1}, 0, NULL, 0, 0},
		{"a truncated trailing message is rejected", false, {{{EV, 1}, {EV_CUT, 2}}}, 1, {1}, 1, "truncated netlink message", 0, 0},
		{"a lone truncated message is rejected", false, {{{EV_CUT, 1}}}, 0, {0}, 1, "truncated netlink message", 0, 0},
		{"a gap in sequence numbers is lost events", false, {{{EV, 1}}, {{EV, 5}}}, 2, {1, 5}, 0, NULL, 0, 3},
		{"gaps add up, within and across datagrams", false, {{{EV, 10}, {EV, 12}}, {{EV, 20}}}, 3, {10, 12, 20}, 0, NULL, 0, 8},
		{"an event out of order loses nothing", false, {{{EV, 5}}, {{EV, 3}}, {{EV, 6}}}, 3, {5, 3, 6}, 0, NULL, 0, 0},
		{"a rejected message leaves no gap behind it", false, {{{EV, 1}, {EV_NO_OBJECT, 2}}, {{EV, 2}}}, 2, {1, 2}, 1, "missing object", 0, 0},
		{"the first event loses nothing", false, {{{EV, 1000}}}, 1, {1000}, 0, NULL, 0, 0},
		{"an event late by less than the window fills its gap", false, {{{EV, 1}}, {{EV, 3}}, {{EV, 2}}}, 3, {1, 3, 2}, 0, NULL, 0, 0},
		{"a gap pushed out of the window is lost at once, the rest at the end", false, {{{EV, 1}, {EV, 3}}, {{EV, 70}}}, 3, {1, 3, 70}, 0, NULL, 4, 67},
		{"a duplicate is not counted twice", false, {{{EV, 1}, {EV, 3}}, {{EV, 3}, {EV, 70}}}, 4, {1, 3, 3, 70}, 0, NULL, 4, 67},
		{"a duplicate fills no gap", false, {{{EV, 1}, {EV, 3}, {EV, 3}}, {{EV, 4}}}, 4, {1, 3, 3, 4}, 0, NULL, 0, 1},
		{"an event later than the window stays counted lost", false, {{{EV, 1}}, {{EV, 70}}, {{EV, 2}}}, 3, {1, 70, 2}, 0, NULL, 5, 68},
		{"a trip up is submitted", true, {{{TRIP_UP, 2}}}, 1, {0}, 0, NULL, 0, 0},
		{"a trip known crossed is no event", true, {{{TRIP_UP, 2}, {TRIP_UP, 2}}}, 1, {0}, 0, NULL, 0, 0},
		{"thermal news that is no trip is no event", true, {{{CDEV, 0}, {TRIP_DOWN, 3}}}, 0, {0}, 0, NULL, 0, 0},
		{"a trip up, then down", true, {{{TRIP_UP, 1}}, {{TRIP_DOWN, 1}}}, 2, {0}, 0, NULL, 0, 0},
		{"a no-op is no thermal message", true, {{{NOOP, 0}}}, 0, {0}, 1, "family", 0, 0},
		{"a truncated thermal message is rejected", true, {{{TRIP_UP, 1}, {EV_CUT, 1}}}, 1, {0}, 1, "truncated netlink message", 0, 0},
	};
	/* clang-format on */
	const struct ksource_thermal_arg thermal_arg = {"/nonexistent", NULL};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const bool th = cases[i].thermal;
		struct fake f = {.src = th ? KEVENT_SOURCE_THERMAL : KEVENT_SOURCE_KERNEL};
		struct ksink sink = {.loop = NULL, .ops = &fake_ops, .userdata = &f};
		struct ksource *s = NULL;
		assert_int_equal(
			ksource_genl_new_detached(th ? &ksource_thermal_desc : &ksource_kernel_desc,
						  &sink, th ? &thermal_arg : NULL,
						  th ? THERMAL_FAMILY : KERNEL_FAMILY, &s),
			0);
		assert_string_equal(s->name, th ? "thermal" : "kernel");
		assert_int_equal(s->kind, f.src);
		for (size_t j = 0; j < 3 && cases[i].dgrams[j][0].part != END; j++) {
			struct dgram d = {.len = 0};
			for (size_t k = 0; k < 4; k++)
				add(&d, &cases[i].dgrams[j][k]);
			assert_true(ksource_genl_handle(s, KGENL_DATAGRAM, d.buf, d.len, 0));
		}
		if (f.lost != cases[i].lost_live)
			fail_msg("%s: %" PRIu64 " lost while reading, not %" PRIu64, cases[i].what,
				 f.lost, cases[i].lost_live);
		s->free(s);

		if (f.submitted != cases[i].submitted || f.rejected != cases[i].rejected ||
		    f.lost != cases[i].lost || f.overruns != 0)
			fail_msg("%s: %zu submitted, %zu rejected (%s), %" PRIu64 " lost, %zu "
				 "overruns",
				 cases[i].what, f.submitted, f.rejected, f.why, f.lost, f.overruns);
		if (cases[i].why && !strstr(f.why, cases[i].why))
			fail_msg("%s: reason \"%s\" does not mention \"%s\"", cases[i].what, f.why,
				 cases[i].why);
		for (size_t k = 0; !th && k < f.submitted; k++)
			if (f.seqnums[k] != cases[i].seqnums[k])
				fail_msg("%s: event %zu has seqnum %" PRIu64 ", not %" PRIu64,
					 cases[i].what, k, f.seqnums[k], cases[i].seqnums[k]);
		if (th && f.submitted)
			assert_string_equal(f.signals[0], "high");
		if (th && f.submitted > 1)
			assert_string_equal(f.signals[1], "normal");
	}
}

/* The window alone: what each number is, what it pushes out, what is
 * still missing at the end and given up on then. */
static void test_seqwin(void **state)
{
	(void)state;
#define N KSEQWIN_NEW
#define D KSEQWIN_DUPLICATE
#define O KSEQWIN_OLD
	/* clang-format off */
	static const struct {
		const char *what;
		uint64_t seq[8]; /* 0 ends the list */
		enum kseqwin_verdict verdict[8];
		uint64_t lost[8]; /* pushed out by each number */
		uint64_t pending; /* missing at the end, in the window */
		uint64_t next;	  /* the lowest number not settled, at the end */
	} cases[] = {
		{"in order", {1, 2, 3}, {N, N, N}, {0, 0, 0}, 0, 4},
		{"the first number starts the stream", {500}, {N}, {0}, 0, 501},
		{"1, 3, 2 loses nothing", {1, 3, 2}, {N, N, N}, {0, 0, 0}, 0, 4},
		{"a gap waits in the window", {1, 3}, {N, N}, {0, 0}, 1, 2},
		{"1, 3, then 70 pushes out 2, 4, 5 and 6", {1, 3, 70}, {N, N, N}, {0, 0, 4}, 63, 7},
		{"the window's last place is no loss", {1, 65}, {N, N}, {0, 0}, 63, 2},
		{"one place further pushes out one", {1, 66}, {N, N}, {0, 1}, 63, 3},
		{"far ahead: every number between is lost", {1, 1001}, {N, N}, {0, 936}, 63, 938},
		{"a duplicate in the window", {1, 3, 3}, {N, N, D}, {0, 0, 0}, 1, 2},
		{"a duplicate below the window", {1, 2, 1}, {N, N, O}, {0, 0, 0}, 0, 3},
		{"a duplicate is not counted twice when pushed out", {1, 3, 3, 70}, {N, N, D, N}, {0, 0, 0, 4}, 63, 7},
		{"a number given up on is old when it comes", {1, 70, 2}, {N, N, O}, {0, 5, 0}, 63, 7},
		{"before the first number is old", {10, 9}, {N, O}, {0, 0}, 0, 11},
		{"late numbers fill gaps in any order", {1, 5, 4, 2, 3}, {N, N, N, N, N}, {0, 0, 0, 0, 0}, 0, 6},
		{"a filled gap moves the window on", {1, 3, 2, 67}, {N, N, N, N}, {0, 0, 0, 0}, 63, 4},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kseqwin w = {0};
		uint64_t top = 0;
		for (size_t k = 0; k < 8 && cases[i].seq[k]; k++) {
			uint64_t lost = 99;
			enum kseqwin_verdict v = kseqwin_see(&w, cases[i].seq[k], &lost);
			if (v != cases[i].verdict[k] || lost != cases[i].lost[k])
				fail_msg("%s: number %" PRIu64 " is %d and pushes out %" PRIu64
					 ", not %d and %" PRIu64,
					 cases[i].what, cases[i].seq[k], (int)v, lost,
					 (int)cases[i].verdict[k], cases[i].lost[k]);
			if (cases[i].seq[k] > top)
				top = cases[i].seq[k];
		}
		if (kseqwin_pending(&w) != cases[i].pending || w.next != cases[i].next)
			fail_msg("%s: %" PRIu64 " pending from %" PRIu64 ", not %" PRIu64
				 " from %" PRIu64,
				 cases[i].what, kseqwin_pending(&w), w.next, cases[i].pending,
				 cases[i].next);
		/* the end: what is missing is lost, and the stream goes on above */
		assert_int_equal(kseqwin_settle(&w), cases[i].pending);
		assert_int_equal(kseqwin_pending(&w), 0);
		assert_int_equal(kseqwin_settle(&w), 0);
		assert_int_equal(w.next, top + 1);
		uint64_t lost = 99;
		assert_int_equal(kseqwin_see(&w, top + 2, &lost), KSEQWIN_NEW);
		assert_int_equal(lost, 0);
		assert_int_equal(kseqwin_pending(&w), 1);
	}
#undef N
#undef D
#undef O
}

/* What else a receive can see: counted (or logged) and reading goes on, or
 * reading stops. */
static void test_outcomes(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		enum kgenl_recv r;
		int err;
		bool go_on;
		size_t rejected, overruns;
		const char *why;
	} cases[] = {
		{KGENL_AGAIN, 0, false, 0, 0, NULL},
		{KGENL_OVERRUN, 0, true, 0, 1, NULL},
		{KGENL_FORGED, 0, true, 1, 0, "netlink message not from the kernel (sender port id != 0)"},
		{KGENL_TRUNC, 0, true, 1, 0, "oversize netlink datagram"},
		{KGENL_ERROR, -ECONNRESET, false, 0, 0, NULL},
		{KGENL_ERROR, -EBADF, false, 0, 0, NULL},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake f = {.src = KEVENT_SOURCE_KERNEL};
		struct ksink sink = {.loop = NULL, .ops = &fake_ops, .userdata = &f};
		struct ksource *s = NULL;
		assert_int_equal(ksource_genl_new_detached(&ksource_kernel_desc, &sink, NULL,
							   KERNEL_FAMILY, &s),
				 0);
		assert_int_equal(ksource_genl_handle(s, cases[i].r, NULL, 0, cases[i].err),
				 cases[i].go_on);
		s->free(s);
		assert_int_equal(f.submitted, 0);
		assert_int_equal(f.lost, 0);
		assert_int_equal(f.rejected, cases[i].rejected);
		assert_int_equal(f.overruns, cases[i].overruns);
		if (cases[i].why)
			assert_string_equal(f.why, cases[i].why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_datagrams),
		cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_seqwin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
