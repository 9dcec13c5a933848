// SPDX-License-Identifier: GPL-2.0-or-later
/* The journal of accepted events: its records (journal-rec.h) made and
 * read back, read through damage, cut-off writes and stray bytes; and its
 * segments (journal.h) appended, retired, bounded and replayed. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
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

#include "journal-rec.h"
#include "journal.h"
#include "testutil.h"

static struct kevent *make(const char *object, const char *payload)
{
	struct kevent *ev = tu_event(KEVENT_POWER, object, "high", payload);
	ev->source = KEVENT_SOURCE_SOCKET;
	ev->seqnum = 7;
	ev->timestamp = 1234567890123ull;
	return ev;
}

static void assert_same(const struct kevent *a, const struct kevent *b)
{
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->source, b->source);
	assert_int_equal(a->seqnum, b->seqnum);
	assert_int_equal(a->timestamp, b->timestamp);
	assert_int_equal(a->instance, b->instance);
	assert_string_equal(a->object, b->object);
	assert_string_equal(a->signal, b->signal);
	assert_string_equal(a->payload, b->payload);
	assert_int_equal(a->n_props, b->n_props);
	assert_int_equal(a->recovered, b->recovered);
	assert_int_equal(a->synthetic, b->synthetic);
	assert_int_equal(a->redelivered, b->redelivered);
	assert_int_equal(a->injected, b->injected);
	assert_int_equal(a->test, b->test);
	assert_int_equal(!a->host, !b->host);
	if (a->host)
		assert_string_equal(a->host, b->host);
	assert_int_equal(a->n_uevent_env, b->n_uevent_env);
	for (size_t i = 0; i < a->n_uevent_env; i++)
		assert_string_equal(a->uevent_env[i], b->uevent_env[i]);
}

/* Every field comes back as it went in. */
static void test_roundtrip(void **state)
{
	(void)state;
	static char *const env[] = {"ACTION=add", "DEVNAME=sda", NULL};
	/* clang-format off */
	static const struct {
		const char *what, *object, *payload, *host;
		bool recovered, synthetic, redelivered, env;
		uint64_t instance;
	} cases[] = {
		{"plain", "/a", "", NULL, false, false, false, false, 0},
		{"properties", "/b/c", "Cpu: 0\nZone: 3\n", NULL, false, false, false, false, 0},
		{"a host", "/c", "x", "gw-1.example", false, false, false, false, 0},
		{"recovered, an instance", "/d", "", NULL, true, false, false, false, 99},
		{"synthetic, uevent variables", "/e", "", NULL, false, true, false, true, 0},
		{"redelivered", "/f", "y", NULL, false, false, true, false, 0},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kevent *ev = NULL, *back = NULL;
		const char *why = NULL;
		if (cases[i].env) {
			assert_int_equal(kevent_new(KEVENT_POWER, cases[i].object, "high",
						    cases[i].payload, KEVENT_SOURCE_UDEV, 3, 4, env,
						    2, &ev, &why),
					 0);
		} else {
			ev = make(cases[i].object, cases[i].payload);
		}
		ev->recovered = cases[i].recovered;
		ev->synthetic = cases[i].synthetic;
		ev->redelivered = cases[i].redelivered;
		ev->instance = cases[i].instance;
		/* keventctl test --run's: each flag alone, and both */
		ev->injected = i % 3 == 1 || i % 3 == 2;
		ev->test = i % 3 == 2;
		if (cases[i].host)
			assert_int_equal(kevent_set_host(ev, cases[i].host, &why), 0);
		struct strbuf sb = STRBUF_INIT;
		kjrec_encode(&sb, ev);
		assert_false(sb.oom);
		struct kjrec r;
		kjrec_next(sb.buf, sb.len, 0, &r);
		if (r.kind != KJREC_RECORD || r.len != sb.len || !r.live)
			fail_msg("%s: not one live record", cases[i].what);
		assert_int_equal(kjrec_decode(r.body, r.body_len, &back, &why), 0);
		assert_same(ev, back);
		kjrec_next(sb.buf, sb.len, r.len, &r);
		assert_int_equal(r.kind, KJREC_END);
		kevent_free(back);
		kevent_free(ev);
		strbuf_release(&sb);
	}
}

enum harm {
	H_NONE,
	H_BODY,	      /* a byte of the second record's body flipped */
	H_MAGIC,      /* the second record's magic broken */
	H_LEN,	      /* the second record's length made huge */
	H_LEN_LONG,   /* the second's length past the end, under the bound */
	H_LEN_SHORT,  /* the second's length a few bytes short */
	H_SUM,	      /* the second record's checksum broken */
	H_DONE,	      /* the second record marked done */
	H_TAIL,	      /* the last record cut off by 5 bytes */
	H_TAIL_HDR,   /* only 6 bytes of the last record's header */
	H_GARBAGE,    /* stray bytes before the first record */
	H_ZEROS,      /* zeros between the first and the second */
	H_STATE_JUNK, /* the second's state byte neither live nor done: live */
};

/* Three records a, b, c and a harm: the pieces read, and the events. */
static void test_damage(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *what;
		enum harm harm;
		const char *pieces; /* R record, D damaged, T torn */
		const char *live;   /* the objects read back live, in order */
	} cases[] = {
		{"intact", H_NONE, "RRR", "/a /b /c"},
		{"a body byte flipped", H_BODY, "RDR", "/a /c"},
		{"a magic broken", H_MAGIC, "RDR", "/a /c"},
		{"a length broken", H_LEN, "RDR", "/a /c"},
		{"a length past the end", H_LEN_LONG, "RDR", "/a /c"},
		{"a length short", H_LEN_SHORT, "RDR", "/a /c"},
		{"a checksum broken", H_SUM, "RDR", "/a /c"},
		{"a record done", H_DONE, "RRR", "/a /c"},
		{"the tail cut off", H_TAIL, "RRT", "/a /b"},
		{"a header cut off", H_TAIL_HDR, "RRT", "/a /b"},
		{"garbage in front", H_GARBAGE, "DRRR", "/a /b /c"},
		{"zeros between", H_ZEROS, "RDRR", "/a /b /c"},
		{"a state byte of junk", H_STATE_JUNK, "RRR", "/a /b /c"},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		size_t off[3];
		const char *objs[] = {"/a", "/b", "/c"};
		if (cases[i].harm == H_GARBAGE)
			strbuf_add(&sb, "KEVxjunk", 8);
		for (size_t k = 0; k < 3; k++) {
			if (k == 1 && cases[i].harm == H_ZEROS)
				strbuf_add(&sb, "\0\0\0\0\0\0\0", 7);
			off[k] = sb.len;
			struct kevent *ev = make(objs[k], "Key: v\n");
			kjrec_encode(&sb, ev);
			kevent_free(ev);
		}
		size_t len = sb.len;
		uint8_t *b = (uint8_t *)sb.buf;
		switch (cases[i].harm) {
		case H_BODY:
			b[off[1] + sizeof(struct kjrec_hdr) + 3] ^= 0x40;
			break;
		case H_MAGIC:
			b[off[1]] ^= 1;
			break;
		case H_LEN:
			b[off[1] + 6] = 0x7f;
			break;
		case H_LEN_LONG:
			b[off[1] + 5] = 0x10; /* + 4096: past the end, under the bound */
			break;
		case H_LEN_SHORT:
			b[off[1] + 4] -= 3;
			break;
		case H_SUM:
			b[off[1] + 8] ^= 0x10;
			break;
		case H_DONE:
			b[off[1] + KJREC_STATE_OFF] = KJREC_DONE;
			break;
		case H_TAIL:
			len -= 5;
			break;
		case H_TAIL_HDR:
			len = off[2] + 6;
			break;
		case H_STATE_JUNK:
			b[off[1] + KJREC_STATE_OFF] = 0x55;
			break;
		default:
			break;
		}
		char pieces[16] = "", live[64] = "";
		size_t at = 0;
		struct kjrec r;
		for (kjrec_next(b, len, 0, &r); r.kind != KJREC_END;
		     kjrec_next(b, len, r.off + r.len, &r)) {
			assert_int_equal(r.off, at);
			assert_true(r.len > 0);
			at += r.len;
			size_t n = strlen(pieces);
			pieces[n] = r.kind == KJREC_RECORD ? 'R' : r.kind == KJREC_TORN ? 'T' : 'D';
			if (r.kind == KJREC_TORN)
				assert_int_equal(r.off + r.len, len);
			if (r.kind != KJREC_RECORD || !r.live)
				continue;
			struct kevent *ev = NULL;
			const char *why;
			assert_int_equal(kjrec_decode(r.body, r.body_len, &ev, &why), 0);
			snprintf(live + strlen(live), sizeof(live) - strlen(live), "%s%s",
				 *live ? " " : "", ev->object);
			kevent_free(ev);
		}
		assert_int_equal(at, len);
		if (strcmp(pieces, cases[i].pieces) || strcmp(live, cases[i].live))
			fail_msg("%s: pieces %s (want %s), live '%s' (want '%s')", cases[i].what,
				 pieces, cases[i].pieces, live, cases[i].live);
		strbuf_release(&sb);
	}
}

/* Bodies with a right checksum but wrong fields are refused, not read. */
static void test_decode_refuses(void **state)
{
	(void)state;
	struct kevent *ev = make("/a", "p");
	struct strbuf sb = STRBUF_INIT;
	kjrec_encode(&sb, ev);
	kevent_free(ev);
	const uint8_t *body = (const uint8_t *)sb.buf + sizeof(struct kjrec_hdr);
	size_t len = sb.len - sizeof(struct kjrec_hdr);
	_cleanup_free_ uint8_t *c = malloc(len + 1);
	/* clang-format off */
	static const struct {
		const char *what;
		size_t at;    /* the byte changed; SIZE_MAX: none */
		uint8_t to;
		long delta;   /* bytes taken off (<0) or added (>0) at the end */
	} cases[] = {
		{"a version unknown", 0, 9, 0},
		{"a source unknown", 2, 200, 0},
		{"cut short", SIZE_MAX, 0, -1},
		{"a byte too many", SIZE_MAX, 0, 1},
		{"too short for its header", SIZE_MAX, 0, -(long)30},
		{"a type unknown", 1, 250, 0},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(c, body, len);
		c[len] = 'x';
		if (cases[i].at != SIZE_MAX)
			c[cases[i].at] = cases[i].to;
		struct kevent *back = NULL;
		const char *why = NULL;
		int rc = kjrec_decode(c, (size_t)((long)len + cases[i].delta), &back, &why);
		if (rc != -EINVAL || !why)
			fail_msg("%s: %d, not refused", cases[i].what, rc);
	}
	strbuf_release(&sb);
}

struct replayed {
	char objects[512];
	size_t n;
	bool all_redelivered;
};

static int take(void *userdata, struct kevent *ev)
{
	struct replayed *r = userdata;
	snprintf(r->objects + strlen(r->objects), sizeof(r->objects) - strlen(r->objects), "%s%s",
		 r->n ? " " : "", ev->object);
	r->n++;
	r->all_redelivered &= ev->redelivered && ev->journal_ref != 0;
	kevent_free(ev);
	return 0;
}

/* kjournal_open() on the directory dir. */
static int jopen(const char *dir, size_t size, struct kjournal **out)
{
	_cleanup_close_ int fd = tu_dirfd(dir);
	return kjournal_open(fd, size, out);
}

static uint64_t append(struct kjournal *j, const char *object)
{
	struct kevent *ev = make(object, "");
	assert_int_equal(kjournal_append(j, ev), 0);
	uint64_t ref = ev->journal_ref;
	assert_true(ref != 0);
	kevent_free(ev);
	return ref;
}

/* may() of a paced replay: room for budget more events. */
static bool budget_left(void *userdata, const struct kevent *ev)
{
	(void)ev;
	size_t *budget = userdata;
	return *budget > 0 && (*budget)--;
}

struct paced {
	size_t budget;
	struct replayed r;
	uint64_t refs[8];
};

static bool paced_may(void *userdata, const struct kevent *ev)
{
	return budget_left(&((struct paced *)userdata)->budget, ev);
}

static int paced_take(void *userdata, struct kevent *ev)
{
	struct paced *p = userdata;
	if (p->r.n < ARRAY_SIZE(p->refs))
		p->refs[p->r.n] = ev->journal_ref;
	return take(&p->r, ev);
}

/* A replay is fed as the caller has room: two events a call, in order,
 * the rest waiting; stopped half way, what was not handed on (and what
 * was, but not retired) is there at the next open, and nothing twice. */
static void test_replay_paced(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	const char *objs[] = {"/a", "/b", "/c", "/d", "/e"};
	for (size_t i = 0; i < ARRAY_SIZE(objs); i++)
		(void)append(j, objs[i]);
	kjournal_free(j);

	struct paced p = {.r = {.all_redelivered = true}};
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	kjournal_replay_start(j);
	assert_true(kjournal_replaying(j));
	p.budget = 2;
	assert_int_equal(kjournal_replay_more(j, paced_may, paced_take, &p), 2);
	assert_string_equal(p.r.objects, "/a /b");
	assert_true(kjournal_replaying(j));
	assert_int_equal(kjournal_replay_more(j, paced_may, paced_take, &p), 0); /* no room */
	p.budget = 2;
	assert_int_equal(kjournal_replay_more(j, paced_may, paced_take, &p), 2);
	assert_string_equal(p.r.objects, "/a /b /c /d");
	assert_true(kjournal_replaying(j));
	/* /a and /b are finished; /c and /d were handed on and not; /e never */
	kjournal_retire(j, p.refs[0], false);
	kjournal_retire(j, p.refs[1], false);
	kjournal_free(j);

	struct replayed r = {.all_redelivered = true};
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	assert_int_equal(kjournal_replay(j, take, &r), 3);
	assert_string_equal(r.objects, "/c /d /e");
	assert_false(kjournal_replaying(j));
	kjournal_free(j);

	/* all in: the replay ends by itself */
	struct paced q = {.budget = 100, .r = {.all_redelivered = true}};
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	kjournal_replay_start(j);
	assert_int_equal(kjournal_replay_more(j, paced_may, paced_take, &q), 3);
	assert_false(kjournal_replaying(j));
	assert_true(q.r.all_redelivered);
	kjournal_free(j);
}

/* What a journal left behind is handed on again, in order, only what was
 * not retired, flagged redelivered; a lazy retirement counts too. */
static void test_replay(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	uint64_t a = append(j, "/a");
	(void)append(j, "/b");
	uint64_t c = append(j, "/c");
	(void)append(j, "/d");
	kjournal_retire(j, a, false);
	kjournal_retire(j, c, true);
	kjournal_free(j); /* as a stop leaves it */

	struct replayed r = {.all_redelivered = true};
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	assert_int_equal(kjournal_replay(j, take, &r), 2);
	assert_string_equal(r.objects, "/b /d");
	assert_true(r.all_redelivered);
	struct kjournal_status st;
	kjournal_status(j, &st);
	assert_int_equal(st.live, 2);
	assert_int_equal(st.corrupt, 0);
	kjournal_free(j);
	tu_rm_rf(dir);
}

/* A journal killed in the middle of a write: the cut-off record is
 * counted, the ones before it come back. */
static void test_replay_torn(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	(void)append(j, "/a");
	(void)append(j, "/b");
	kjournal_free(j);
	_cleanup_free_ char *seg = tu_printf("%s/journal-%020d", dir, 1);
	int fd = open(seg, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	uint32_t magic = KJREC_MAGIC, len = 40;
	assert_int_equal(write(fd, &magic, 4), 4);
	assert_int_equal(write(fd, &len, 4), 4);
	close(fd);

	struct replayed r = {.all_redelivered = true};
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	assert_int_equal(kjournal_replay(j, take, &r), 2);
	assert_string_equal(r.objects, "/a /b");
	struct kjournal_status st;
	kjournal_status(j, &st);
	assert_int_equal(st.corrupt, 1);
	kjournal_free(j);
	tu_rm_rf(dir);
}

/* The bytes of segment no of dir. */
static void read_segment(const char *dir, int no, char **data, size_t *len)
{
	_cleanup_free_ char *seg = tu_printf("%s/journal-%020d", dir, no);
	int fd = open(seg, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read_fd(fd, 1 << 20, data, len), 0);
	close(fd);
}

static void write_segment(const char *dir, int no, const char *data, size_t len)
{
	_cleanup_free_ char *seg = tu_printf("%s/journal-%020d", dir, no);
	int fd = open(seg, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* A segment of /a /b /c /d whose record /b is damaged (in its header or
 * its body) or whose record /d is cut off: the damaged record alone is
 * lost, counted, and its bytes are kept aside as a file
 * journal-N@OFFSET.corrupt; the records after it are handed on. */
static void test_replay_damage(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *what;
		size_t at;	/* the byte of /b's record changed */
		uint8_t xor;
		bool cut;	/* /d cut off by 5 bytes instead */
		const char *objects;
	} cases[] = {
		{"a length past the end", 5, 0x10, false, "/a /c /d"},
		{"a length huge", 7, 0x7f, false, "/a /c /d"},
		{"a length short", 4, 0x03, false, "/a /c /d"},
		{"a magic", 0, 0x01, false, "/a /c /d"},
		{"a checksum", 9, 0x20, false, "/a /c /d"},
		{"a body byte", 20, 0x40, false, "/a /c /d"},
		{"the torn tail", 0, 0, true, "/a /b /c"},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *dir = tu_mkdtemp();
		struct kjournal *j = NULL;
		assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
		const char *objs[] = {"/a", "/b", "/c", "/d"};
		for (size_t k = 0; k < 4; k++)
			(void)append(j, objs[k]);
		kjournal_free(j);
		_cleanup_free_ char *data = NULL;
		size_t len = 0, off[4];
		read_segment(dir, 1, &data, &len);
		struct kjrec r;
		size_t n = 0;
		for (size_t o = 0; kjrec_next(data, len, o, &r), r.kind != KJREC_END;
		     o = r.off + r.len)
			off[n++] = r.off;
		assert_int_equal(n, 4);
		size_t lost = cases[i].cut ? off[3] : off[1];
		if (cases[i].cut)
			len -= 5;
		else
			data[off[1] + cases[i].at] ^= (char)cases[i].xor ;
		write_segment(dir, 1, data, len);

		struct replayed rp = {.all_redelivered = true};
		assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
		kjournal_replay(j, take, &rp);
		struct kjournal_status st;
		kjournal_status(j, &st);
		if (strcmp(rp.objects, cases[i].objects) || st.corrupt != 1)
			fail_msg("%s: '%s' (want '%s'), %" PRIu64 " corrupt", cases[i].what,
				 rp.objects, cases[i].objects, st.corrupt);
		_cleanup_free_ char *kept = tu_printf("%s/journal-%020d@%zu.corrupt", dir, 1, lost);
		struct stat sb;
		if (stat(kept, &sb) < 0 || sb.st_size == 0)
			fail_msg("%s: no %s", cases[i].what, kept);
		kjournal_free(j);
		tu_rm_rf(dir);
	}
}

/* Damage kept aside is bounded: past 16 files, none more is made (the
 * damage is counted all the same). */
static void test_corrupt_bound(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	for (size_t k = 0; k < 40; k++)
		(void)append(j, "/x");
	kjournal_free(j);
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	read_segment(dir, 1, &data, &len);
	struct kjrec r;
	size_t n = 0;
	for (size_t o = 0; kjrec_next(data, len, o, &r), r.kind != KJREC_END; o = r.off + r.len)
		if (n++ % 2 == 0)
			data[r.off + 9] ^= 0x20; /* every other one's checksum */
	write_segment(dir, 1, data, len);
	struct replayed rp = {.all_redelivered = true};
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	assert_int_equal(kjournal_replay(j, take, &rp), 20);
	struct kjournal_status st;
	kjournal_status(j, &st);
	assert_int_equal(st.corrupt, 20);
	kjournal_free(j);
	DIR *d = opendir(dir);
	assert_non_null(d);
	size_t files = 0;
	for (struct dirent *e; (e = readdir(d));)
		files += strstr(e->d_name, ".corrupt") != NULL;
	closedir(d);
	assert_int_equal(files, 16);
	tu_rm_rf(dir);
}

/* The bound: unfinished events fill it and it says full (every append
 * still written); once they are retired it has room, and its segments
 * go. */
static void test_bound(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	assert_int_equal(jopen(dir, KJOURNAL_SIZE_MIN, &j), 0);
	static uint64_t refs[4096];
	size_t n = 0;
	while (!kjournal_full(j)) {
		assert_true(n < 4096);
		refs[n++] = append(j, "/full");
	}
	struct kjournal_status st;
	kjournal_status(j, &st);
	assert_int_equal(st.segments, KJOURNAL_SEGMENTS);
	assert_true(st.bytes >= KJOURNAL_SIZE_MIN);
	assert_true(st.bytes < KJOURNAL_SIZE_MIN + 1024);
	refs[n++] = append(j, "/over"); /* full: written all the same */
	assert_true(kjournal_full(j));
	for (size_t i = 0; i < n; i++)
		kjournal_retire(j, refs[i], false);
	assert_false(kjournal_full(j));
	kjournal_status(j, &st);
	assert_int_equal(st.live, 0);
	assert_int_equal(st.segments, 1);
	kjournal_free(j);
	tu_rm_rf(dir); /* nothing live: no segment left to read */
}

/* The bytes of the segment files in dir. */
static off_t dir_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	off_t n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		_cleanup_free_ char *path = tu_printf("%s/%s", dir, e->d_name);
		if (strncmp(e->d_name, "journal-", 8) == 0 && stat(path, &st) == 0)
			n += st.st_size;
	}
	closedir(d);
	return n;
}

/* Records held for long, one in each of many segments, never fill the
 * journal: the segments are compacted, their live records copied
 * forward; the journal stays within its size and a segment more; the
 * held records are still found by their events' references (their done
 * bits kept), and come back once each, in order, after a restart. */
static void test_compaction(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	assert_int_equal(jopen(dir, KJOURNAL_SIZE_MIN, &j), 0);
	uint64_t held[12];
	char want[256] = "";
	struct kjournal_status st;
	for (size_t k = 0; k < 12; k++) {
		char obj[16];
		snprintf(obj, sizeof(obj), "/held%zu", k);
		held[k] = append(j, obj);
		if (k % 2 == 0)
			kjournal_progress(j, held[k], 0x2);
		/* a segment's worth of events that finish at once */
		for (size_t i = 0; i < 300; i++) {
			uint64_t ref = append(j, "/brief");
			assert_false(kjournal_full(j));
			kjournal_retire(j, ref, i % 3 == 0);
			assert_true(dir_bytes(dir) <=
				    KJOURNAL_SIZE_MIN + KJOURNAL_SIZE_MIN / 4 + 4096);
		}
		assert_int_equal(kjournal_flush(j), 0);
	}
	kjournal_status(j, &st);
	assert_true(st.compactions > 0);
	assert_int_equal(st.live, 12);
	assert_true(st.segments <= 2 * KJOURNAL_SEGMENTS + 2);
	/* found where they went: the first is retired, the others stay */
	kjournal_retire(j, held[0], false);
	kjournal_progress(j, held[1], 0x4);
	for (size_t k = 1; k < 12; k++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s/held%zu",
			 *want ? " " : "", k);
	kjournal_free(j);

	struct replayed r = {.all_redelivered = true};
	assert_int_equal(jopen(dir, KJOURNAL_SIZE_MIN, &j), 0);
	assert_int_equal(kjournal_replay(j, take, &r), 11);
	assert_string_equal(r.objects, want);
	assert_true(r.all_redelivered);
	kjournal_free(j);
	tu_rm_rf(dir);
}

/* As take(), into a buffer of any size, with each "/eK" event's done bits
 * in done[K]. */
struct taken_all {
	char *objects;
	uint32_t *done;
	size_t max;
};

static int take_all(void *userdata, struct kevent *ev)
{
	struct taken_all *t = userdata;
	size_t len = strlen(t->objects);
	sprintf(t->objects + len, "%s%s", len ? " " : "", ev->object);
	size_t k = strtoul(ev->object + 2, NULL, 10);
	if (k < t->max)
		t->done[k] = ev->journal_done;
	kevent_free(ev);
	return 0;
}

static int take_bits(void *userdata, struct kevent *ev)
{
	uint32_t *bits = userdata;
	const char *n = ev->object + strlen("/held");
	if (strncmp(ev->object, "/held", 5) == 0 && atoi(n) < 12)
		bits[atoi(n)] = ev->journal_done;
	kevent_free(ev);
	return 0;
}

/* The done bits of a record a compaction moved are kept, and set where it
 * went. */
static void test_compaction_bits(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	assert_int_equal(jopen(dir, KJOURNAL_SIZE_MIN, &j), 0);
	uint64_t held[6];
	for (size_t k = 0; k < 6; k++) {
		char obj[16];
		snprintf(obj, sizeof(obj), "/held%zu", k);
		held[k] = append(j, obj);
		kjournal_progress(j, held[k], 1u << k);
		for (size_t i = 0; i < 300; i++)
			kjournal_retire(j, append(j, "/brief"), false);
	}
	struct kjournal_status st;
	kjournal_status(j, &st);
	assert_true(st.compactions > 0);
	for (size_t k = 0; k < 6; k++)
		kjournal_progress(j, held[k], 0x100);
	kjournal_free(j);
	uint32_t bits[12] = {0};
	assert_int_equal(jopen(dir, KJOURNAL_SIZE_MIN, &j), 0);
	assert_int_equal(kjournal_replay(j, take_bits, bits), 6);
	for (size_t k = 0; k < 6; k++)
		assert_int_equal(bits[k], (1u << k) | 0x100);
	kjournal_free(j);
	tu_rm_rf(dir);
}

/* A keventd killed in a compaction after its copy took the first
 * segment's name and before the others were deleted: the copies and their
 * originals are both there, and each event is handed on once, in order. */
static void test_compaction_killed(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	(void)append(j, "/a");
	uint64_t b = append(j, "/b");
	kjournal_retire(j, b, false);
	kjournal_free(j); /* segment 1: /a, /b done */
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	struct replayed r0 = {.all_redelivered = true};
	assert_int_equal(kjournal_replay(j, take, &r0), 1); /* /a, live in 1 */
	(void)append(j, "/c");
	(void)append(j, "/d");
	/* kept as found: 1 was never finished, 2 holds /c /d */
	kjournal_free(j);
	/* what the compaction of 1 and 2 into 1 leaves when killed before 2
	 * goes: 1 holds /a and copies of /c /d */
	_cleanup_free_ char *d1 = NULL, *d2 = NULL;
	size_t l1 = 0, l2 = 0;
	read_segment(dir, 1, &d1, &l1);
	read_segment(dir, 2, &d2, &l2);
	struct strbuf sb = STRBUF_INIT;
	const char *bufs[] = {d1, d2};
	size_t lens[] = {l1, l2};
	for (size_t k = 0; k < 2; k++) {
		struct kjrec rec;
		for (size_t o = 0; kjrec_next(bufs[k], lens[k], o, &rec), rec.kind != KJREC_END;
		     o = rec.off + rec.len) {
			if (!rec.live)
				continue;
			size_t at = sb.len;
			strbuf_add(&sb, bufs[k] + rec.off, rec.len);
			sb.buf[at + KJREC_STATE_OFF] = KJREC_COPY;
		}
	}
	write_segment(dir, 1, sb.buf, sb.len);
	strbuf_release(&sb);

	struct replayed r = {.all_redelivered = true};
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	assert_int_equal(kjournal_replay(j, take, &r), 3);
	assert_string_equal(r.objects, "/a /c /d");
	struct kjournal_status st;
	kjournal_status(j, &st);
	assert_int_equal(st.live, 3);
	assert_int_equal(st.corrupt, 0);
	kjournal_free(j);
	/* and once more: the duplicates were marked done */
	struct replayed r2 = {.all_redelivered = true};
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	assert_int_equal(kjournal_replay(j, take, &r2), 3);
	assert_string_equal(r2.objects, "/a /c /d");
	kjournal_free(j);
	tu_rm_rf(dir);
}

/* Appends and retirements at random, with done bits set on the way, over
 * many compactions: what a restart hands on is exactly what was left
 * live, in order, with its bits, and the files stay within the size and
 * a segment (and a record) between the calls. */
static void test_compaction_random(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	assert_int_equal(jopen(dir, KJOURNAL_SIZE_MIN, &j), 0);
	enum { N = 6000 };
	static uint64_t refs[N];
	static bool live[N];
	static uint32_t bits[N];
	size_t n = 0, n_live = 0;
	unsigned seed = 12345;
	for (int step = 0; step < 40000 && n < N; step++) {
		seed = seed * 1103515245u + 12345u;
		unsigned r = (seed >> 8) % 100;
		if (r < 45 && !kjournal_full(j)) {
			char obj[16];
			snprintf(obj, sizeof(obj), "/e%zu", n);
			refs[n] = append(j, obj);
			live[n++] = true;
			n_live++;
		} else if (r < 95 && n_live) {
			size_t k = (seed >> 4) % n;
			while (!live[k])
				k = (k + 1) % n;
			if (r < 60) {
				uint32_t b = 1u << (seed % 20);
				bits[k] |= b;
				kjournal_progress(j, refs[k], bits[k]);
				continue;
			}
			kjournal_retire(j, refs[k], r % 2);
			live[k] = false;
			n_live--;
		} else {
			assert_int_equal(kjournal_flush(j), 0);
		}
		assert_true(dir_bytes(dir) <=
			    KJOURNAL_SIZE_MIN + 2 * (KJOURNAL_SIZE_MIN / 4) + 4096);
	}
	struct kjournal_status st;
	kjournal_status(j, &st);
	assert_true(st.compactions > 0);
	assert_int_equal(st.live, n_live);
	kjournal_free(j);

	static char want[N * 8], got[N * 8];
	static uint32_t done[N];
	size_t at = 0;
	for (size_t k = 0; k < n; k++)
		if (live[k])
			at += (size_t)snprintf(want + at, sizeof(want) - at, "%s/e%zu",
					       at ? " " : "", k);
	struct taken_all t = {got, done, N};
	assert_int_equal(jopen(dir, KJOURNAL_SIZE_MIN, &j), 0);
	assert_int_equal(kjournal_replay(j, take_all, &t), n_live);
	assert_string_equal(got, want);
	for (size_t k = 0; k < n; k++)
		if (live[k] && done[k] != bits[k])
			fail_msg("/e%zu: bits %#x, want %#x", k, done[k], bits[k]);
	kjournal_free(j);
	tu_rm_rf(dir);
}

/* The journal is full by its live records' bytes: it says so when they
 * reach its size, and not before. */
static void test_full_by_live_bytes(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	assert_int_equal(jopen(dir, KJOURNAL_SIZE_MIN, &j), 0);
	struct kjournal_status st;
	size_t n = 0;
	for (;;) {
		kjournal_status(j, &st);
		if (kjournal_full(j))
			break;
		assert_true(st.live_bytes < KJOURNAL_SIZE_MIN);
		uint64_t ref = append(j, "/x");
		if (n++ % 2)
			kjournal_retire(j, ref, false); /* every other one finishes */
		assert_true(n < 10000);
	}
	assert_true(st.live_bytes >= KJOURNAL_SIZE_MIN);
	assert_true(st.compactions > 0);
	kjournal_free(j);
	tu_rm_rf(dir);
}

/* The live records' objects of a segment file, as a reader finds them. */
static void live_objects(const char *dir, int no, char *out, size_t size)
{
	_cleanup_free_ char *seg = tu_printf("%s/journal-%020d", dir, no);
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int fd = open(seg, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read_fd(fd, 1 << 20, &data, &len), 0);
	close(fd);
	out[0] = '\0';
	struct kjrec r;
	for (size_t off = 0; kjrec_next(data, len, off, &r), r.kind != KJREC_END;
	     off = r.off + r.len) {
		assert_int_equal(r.kind, KJREC_RECORD);
		struct kevent *ev = NULL;
		const char *why = NULL;
		assert_int_equal(kjrec_decode(r.body, r.body_len, &ev, &why), 0);
		if (r.live)
			snprintf(out + strlen(out), size - strlen(out), "%s%s", *out ? " " : "",
				 ev->object);
		kevent_free(ev);
	}
}

static off_t file_size(const char *dir, int no)
{
	_cleanup_free_ char *seg = tu_printf("%s/journal-%020d", dir, no);
	struct stat st;
	assert_int_equal(stat(seg, &st), 0);
	return st.st_size;
}

/* Appends wait in memory and go to the segment in one write at the
 * flush; a record retired meanwhile is written done; a flush with
 * nothing pending writes nothing. */
static void test_batch(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	(void)append(j, "/a");
	uint64_t b = append(j, "/b");
	(void)append(j, "/c");
	assert_true(kjournal_pending(j));
	assert_int_equal(file_size(dir, 1), 0);
	kjournal_retire(j, b, false);
	struct kjournal_status st;
	kjournal_status(j, &st);
	assert_int_equal(st.writes, 0);
	assert_int_equal(st.live, 2);

	assert_int_equal(kjournal_flush(j), 0);
	assert_false(kjournal_pending(j));
	kjournal_status(j, &st);
	assert_int_equal(st.writes, 1);
	assert_int_equal(file_size(dir, 1), (off_t)st.bytes);
	char live[256];
	live_objects(dir, 1, live, sizeof(live));
	assert_string_equal(live, "/a /c");

	assert_int_equal(kjournal_flush(j), 0);
	uint64_t d = append(j, "/d");
	assert_int_equal(kjournal_flush(j), 0);
	kjournal_status(j, &st);
	assert_int_equal(st.writes, 2);
	kjournal_retire(j, d, false); /* written: marked in the file */
	live_objects(dir, 1, live, sizeof(live));
	assert_string_equal(live, "/a /c");
	kjournal_free(j);
	tu_rm_rf(dir);
}

struct dones {
	uint32_t v[4];
	size_t n;
};

static int take_done(void *userdata, struct kevent *ev)
{
	struct dones *d = userdata;
	if (d->n < 4)
		d->v[d->n++] = ev->journal_done;
	kevent_free(ev);
	return 0;
}

/* An event's done bits, written pending and written in place, come back
 * with it. */
static void test_progress(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	uint64_t a = append(j, "/a");
	kjournal_progress(j, a, 0x1); /* pending */
	assert_int_equal(kjournal_flush(j), 0);
	uint64_t b = append(j, "/b");
	assert_int_equal(kjournal_flush(j), 0);
	kjournal_progress(j, b, 0x800005); /* written */
	kjournal_progress(j, a, 0x3);
	kjournal_free(j);
	struct dones got = {.n = 0};
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	assert_int_equal(kjournal_replay(j, take_done, &got), 2);
	assert_int_equal(got.n, 2);
	assert_int_equal(got.v[0], 0x3);
	assert_int_equal(got.v[1], 0x800005);
	kjournal_free(j);
	tu_rm_rf(dir);
}

/* A record of an older keventd (KJREC_MAGIC_V1, its checksum over bytes)
 * is read as well; the magic of one format with the other's sum is
 * damage. */
static void test_old_records(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	struct kevent *ev = make("/old", "Cpu: 1");
	kjrec_encode(&sb, ev);
	struct kjrec_hdr h;
	memcpy(&h, sb.buf, sizeof(h));
	struct kjrec r;
	kjrec_next(sb.buf, sb.len, 0, &r);
	assert_int_equal(r.kind, KJREC_RECORD);
	/* the same record with the old magic and the new sum: damaged */
	h.magic = KJREC_MAGIC_V1;
	memcpy(sb.buf, &h, sizeof(h));
	kjrec_next(sb.buf, sb.len, 0, &r);
	assert_int_equal(r.kind, KJREC_DAMAGED);
	/* and with the old sum (FNV-1a of len, then the body, a byte at a time) */
	uint32_t sum = 2166136261u;
	const unsigned char *lenb = (const unsigned char *)&h.len;
	for (size_t i = 0; i < sizeof(h.len); i++)
		sum = (sum ^ lenb[i]) * 16777619u;
	for (size_t i = 0; i < h.len; i++)
		sum = (sum ^ (unsigned char)sb.buf[sizeof(h) + i]) * 16777619u;
	h.sum = sum;
	memcpy(sb.buf, &h, sizeof(h));
	kjrec_next(sb.buf, sb.len, 0, &r);
	assert_int_equal(r.kind, KJREC_RECORD);
	struct kevent *back = NULL;
	const char *why = NULL;
	assert_int_equal(kjrec_decode(r.body, r.body_len, &back, &why), 0);
	assert_same(ev, back);
	kevent_free(back);
	kevent_free(ev);
	strbuf_release(&sb);
}

/* A record names the rules of its event (version 2): the identities come
 * back with it, none is none, and a record without them (version 1, an
 * older keventd's or one that had no memory for them) has no list at all;
 * a list longer than the done bits is damage. */
static void test_rule_ids(void **state)
{
	(void)state;
	static const size_t counts[] = {0, 1, 3, KJREC_DONE_BITS};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		struct kevent *ev = make("/ids", "x"), *back = NULL;
		const char *why = NULL;
		ev->journal_ids = calloc(KJREC_DONE_BITS + 1, sizeof(uint32_t));
		assert_non_null(ev->journal_ids);
		for (size_t k = 0; k < counts[i]; k++)
			ev->journal_ids[k] =
				kjrec_rule_id("10-a.yaml", k % 2 ? "a" : "b") + (uint32_t)k;
		ev->n_journal_ids = (uint8_t)counts[i];
		struct strbuf sb = STRBUF_INIT;
		kjrec_encode(&sb, ev);
		struct kjrec r;
		kjrec_next(sb.buf, sb.len, 0, &r);
		assert_int_equal(r.kind, KJREC_RECORD);
		assert_int_equal(((const uint8_t *)r.body)[0], 2);
		assert_int_equal(kjrec_decode(r.body, r.body_len, &back, &why), 0);
		assert_same(ev, back);
		assert_non_null(back->journal_ids);
		assert_int_equal(back->n_journal_ids, counts[i]);
		assert_memory_equal(back->journal_ids, ev->journal_ids,
				    counts[i] * sizeof(uint32_t));
		kevent_free(back);
		if (counts[i] == KJREC_DONE_BITS) {
			/* one more than the bits: refused */
			size_t at = sizeof(struct kjrec_hdr) + r.body_len - counts[i] * 4 - 1;
			sb.buf[at] = KJREC_DONE_BITS + 1;
			assert_int_equal(kjrec_decode(sb.buf + sizeof(struct kjrec_hdr), r.body_len,
						      &back, &why),
					 -EINVAL);
		}
		strbuf_release(&sb);
		kevent_free(ev);
	}
	/* version 1: no list */
	struct kevent *ev = make("/v1", "y"), *back = NULL;
	const char *why = NULL;
	struct strbuf sb = STRBUF_INIT;
	kjrec_encode(&sb, ev);
	struct kjrec r;
	kjrec_next(sb.buf, sb.len, 0, &r);
	assert_int_equal(((const uint8_t *)r.body)[0], 1);
	assert_int_equal(kjrec_decode(r.body, r.body_len, &back, &why), 0);
	assert_null(back->journal_ids);
	kevent_free(back);
	kevent_free(ev);
	strbuf_release(&sb);
	/* the file's name and the rule's are told apart */
	assert_int_not_equal(kjrec_rule_id("ab", "c"), kjrec_rule_id("a", "bc"));
	assert_int_equal(kjrec_rule_id("10-a.yaml", "x"), kjrec_rule_id("10-a.yaml", "x"));
}

/* A record held (a debounced run waiting for it) takes one retirement per
 * holder before it is done; settled, it is retired only once the records
 * pending then are written; done bits set apart add up. */
static void test_holds(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kjournal *j = NULL;
	struct kjournal_status st;
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	uint64_t a = append(j, "/a");
	uint64_t b = append(j, "/b");
	assert_int_equal(kjournal_flush(j), 0);
	assert_int_equal(kjournal_hold(j, a), 0);
	assert_int_equal(kjournal_hold(j, a), 0);
	assert_true(kjournal_held(j, a));
	assert_false(kjournal_held(j, b));
	kjournal_retire(j, a, false); /* the event's own */
	kjournal_retire(j, a, false); /* a holder's */
	kjournal_status(j, &st);
	assert_int_equal(st.live, 2);
	kjournal_progress(j, b, 0x4);
	kjournal_progress(j, b, 0x1); /* the 0x4 stays */
	/* a settles when c, pending, is written */
	(void)append(j, "/c");
	kjournal_settle(j, a, 0x2);
	kjournal_status(j, &st);
	assert_int_equal(st.live, 3);
	assert_int_equal(kjournal_flush(j), 0);
	kjournal_status(j, &st);
	assert_int_equal(st.live, 2);
	assert_false(kjournal_held(j, a));
	kjournal_free(j);
	struct dones got = {.n = 0};
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	assert_int_equal(kjournal_replay(j, take_done, &got), 2); /* b and c */
	assert_int_equal(got.v[0], 0x5);
	assert_int_equal(got.v[1], 0);
	kjournal_free(j);
	tu_rm_rf(dir);
}

/* A segment that is not keventd's own file is never read or written: one
 * found at open (a symlink, another user's file) is left as found and not
 * replayed; a symlink named like the next segment is not written
 * through, whatever it points to. */
static void test_refused(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	_cleanup_free_ char *victim = tu_printf("%s/victim", dir);
	_cleanup_free_ char *seg1 = tu_printf("%s/journal-%020d", dir, 1);
	_cleanup_free_ char *seg2 = tu_printf("%s/journal-%020d", dir, 2);
	_cleanup_free_ char *seg4 = tu_printf("%s/journal-%020d", dir, 4);
	struct kjournal *j = NULL;
	/* a segment with a live event, then made a symlink's target */
	assert_int_equal(jopen(dir, KJOURNAL_DEFAULT_SIZE, &j), 0);
	append(j, "/a");
	assert_int_equal(kjournal_flush(j), 0);
	kjournal_free(j);
	assert_int_equal(rename(seg1, victim), 0);
	assert_int_equal(symlink("victim", seg1), 0);
	struct stat before;
	assert_int_equal(stat(victim, &before), 0);
	struct replayed r = {0};
	assert_int_equal(jopen(dir, KJOURNAL_SIZE_MIN, &j), 0);
	assert_int_equal(kjournal_replay(j, take, &r), 0);
	/* the next segment would be 3: a symlink named like the one after */
	assert_int_equal(symlink("victim", seg4), 0);
	for (int i = 0; i < 2000; i++) /* past three segments' worth */
		append(j, "/b");
	assert_int_equal(kjournal_flush(j), 0);
	kjournal_free(j);
	struct stat after, link;
	assert_int_equal(stat(victim, &after), 0);
	assert_int_equal(after.st_size, before.st_size);
	assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	assert_int_equal(lstat(seg1, &link), 0);
	assert_true(S_ISLNK(link.st_mode));
	assert_int_equal(lstat(seg4, &link), 0);
	assert_true(S_ISLNK(link.st_mode));
	assert_int_equal(lstat(seg2, &link), 0); /* 2 and 3 were written */
	assert_true(S_ISREG(link.st_mode));
	tu_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),	  cmocka_unit_test(test_damage),
		cmocka_unit_test(test_decode_refuses),	  cmocka_unit_test(test_replay),
		cmocka_unit_test(test_replay_paced),	  cmocka_unit_test(test_replay_torn),
		cmocka_unit_test(test_replay_damage),	  cmocka_unit_test(test_corrupt_bound),
		cmocka_unit_test(test_compaction),	  cmocka_unit_test(test_compaction_bits),
		cmocka_unit_test(test_compaction_killed), cmocka_unit_test(test_full_by_live_bytes),
		cmocka_unit_test(test_compaction_random), cmocka_unit_test(test_bound),
		cmocka_unit_test(test_refused),		  cmocka_unit_test(test_batch),
		cmocka_unit_test(test_progress),	  cmocka_unit_test(test_old_records),
		cmocka_unit_test(test_rule_ids),	  cmocka_unit_test(test_holds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
