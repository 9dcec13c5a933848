// SPDX-License-Identifier: GPL-2.0-or-later
/* The control requests' handlers without a socket (docs/control-protocol.md):
 * send, post, sync, status, reload, monitor, malformed messages, and the
 * parking of events while the daemon has no room. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon-ctl.h"
#include "daemon-internal.h"
#include "testutil.h"
#include "util.h"

#define CPU "/org/kernel/devices/system/cpu/temperature"

static const char rules[] = "rules:\n"
			    "  # shown in keventctl monitor; runs nothing\n"
			    "  - name: cpu-watch\n"
			    "    match:\n"
			    "      object: " CPU "\n"
			    "\n"
			    "  - name: cpu-poweroff\n"
			    "    match:\n"
			    "      object: " CPU "\n"
			    "      signal: critical\n"
			    "    run: [/usr/local/sbin/poweroff-soon]\n";

/* A client: every reply it was sent, as "KIND" or "KIND TEXT". */
struct peer {
	struct kctl_peer p;
	char *replies[16];
	size_t n;
	bool full, subscribed;
	size_t flushes;
};

static struct peer *peer_of(const struct kctl_peer *p)
{
	return container_of(p, struct peer, p);
}

static void peer_reply(struct kctl_peer *p, const char *kind, const char *text)
{
	struct peer *pr = peer_of(p);
	assert_true(pr->n < ARRAY_SIZE(pr->replies));
	pr->replies[pr->n++] = text ? tu_printf("%s %s", kind, text) : tu_printf("%s", kind);
}

static void peer_reply_data(struct kctl_peer *p, const char *text)
{
	peer_reply(p, "data", text);
}

static bool peer_full(const struct kctl_peer *p)
{
	return peer_of(p)->full;
}

static void peer_flush(struct kctl_peer *p)
{
	peer_of(p)->flushes++;
}

static void peer_subscribe(struct kctl_peer *p)
{
	peer_of(p)->subscribed = true;
}

static const struct kctl_peer_ops peer_ops = {
	.reply = peer_reply,
	.reply_data = peer_reply_data,
	.full = peer_full,
	.flush = peer_flush,
	.subscribe = peer_subscribe,
};

static void peer_init(struct peer *pr, pid_t pid)
{
	*pr = (struct peer){.p = {.ops = &peer_ops, .pid = pid}};
}

static void peer_release(struct peer *pr)
{
	for (size_t i = 0; i < pr->n; i++)
		free(pr->replies[i]);
	pr->n = 0;
}

static void check_replies(const struct peer *pr, const char *const *want, size_t n_want)
{
	for (size_t i = 0; i < pr->n; i++)
		print_message("  reply %s\n", pr->replies[i]);
	assert_int_equal(pr->n, n_want);
	for (size_t i = 0; i < n_want; i++)
		assert_string_equal(pr->replies[i], want[i]);
}

/* The fake spawner: a child that exits 0 at once. */
struct fake {
	pid_t pids[8];
	size_t n;
};

static int fake_spawn(void *userdata, const struct kplan *plan, const struct krule *r,
		      struct kproc *p, const char **what)
{
	struct fake *f = userdata;
	(void)plan;
	(void)r;
	(void)what;
	assert_true(f->n < ARRAY_SIZE(f->pids));
	int rc = tu_spawn(&(struct tu_child){.status = 0}, p);
	f->pids[f->n++] = p->pid;
	return rc;
}

struct setup {
	char *dir;
	const char *dirs[1];
	struct fake fake;
	struct kdaemon *d;
	struct kdaemon_ctl *ctl;
};

static size_t setup_history; /* --history of the next setup_make() */

static void setup_make(struct setup *t, unsigned sources, size_t queue_size)
{
	*t = (struct setup){.dir = tu_mkdtemp()};
	t->dirs[0] = t->dir;
	tu_write(t->dir, "50-cpu.yaml", rules, 0644);
	struct kdaemon_config cfg = {
		.rule_dirs = t->dirs,
		.n_rule_dirs = 1,
		.control_path = NULL,
		.control_gid = (gid_t)-1,
		.sources = sources,
		.max_children = 4,
		.queue_size = queue_size,
		.spawn = fake_spawn,
		.spawn_userdata = &t->fake,
		.history = setup_history,
	};
	assert_int_equal(kdaemon_new(&cfg, &t->d), 0);
	assert_int_equal(kdaemon_ctl_new(t->d, NULL, (gid_t)-1, &t->ctl), 0);
	t->d->ctl = t->ctl; /* as kdaemon_start() does: kdaemon_free() frees it */
}

static void setup_free(struct setup *t)
{
	for (size_t i = 0; i < t->fake.n; i++)
		tu_reap(t->fake.pids[i]); /* only if a failed test left one */
	kdaemon_free(t->d);
	tu_rm_rf(t->dir);
	free(t->dir);
}

static bool idle(void *userdata)
{
	struct kdaemon *d = userdata;
	return ksched_pending(d->sched) == 0 && krunner_children(d->runner) == 0;
}

static void stop(void *userdata)
{
	kdaemon_exit(userdata, 0);
}

/* Lets what was queued run, then stops the daemon (idle, it exits at once). */
static void drain(struct setup *t)
{
	struct tu_deadline dl;
	struct tu_poll p;
	tu_deadline_arm(&dl, t->d->loop, 10000);
	tu_poll_arm(&p, t->d->loop, idle, stop, t->d);
	if (!tu_deadline_run(&dl)) {
		tu_poll_cancel(&p);
		fail_msg("the queued handlers did not finish");
	}
	assert_int_equal(ksched_pending(t->d->sched), 0);
}

/* One request, its fields separated by '|'. */
static int request(struct setup *t, struct peer *pr, const char *fields, bool may_park)
{
	char buf[512];
	struct kctl_msg m = {0};
	assert_true(strlen(fields) < sizeof(buf));
	strcpy(buf, fields);
	for (char *s = buf, *bar;; s = bar + 1) {
		assert_true(m.n < KCTL_FIELDS_MAX);
		m.f[m.n++] = s;
		bar = strchr(s, '|');
		if (!bar)
			break;
		*bar = '\0';
	}
	return kdaemon_ctl_request(t->ctl, &pr->p, &m, may_park);
}

#define SOCKET_ON  (1u << KEVENT_SOURCE_SOCKET)
#define SOCKET_OFF (1u << KEVENT_SOURCE_UDEV | 1u << KEVENT_SOURCE_KERNEL)
#define NOT_A_POST "post takes TYPE OBJECT SIGNAL [PAYLOAD]"
#define NOT_A_SEND "send takes TYPE OBJECT SIGNAL [PAYLOAD]"
#define REFUSED	   "the socket source is off (keventd --sources): event refused"

struct ctl_case {
	const char *name;
	unsigned sources;
	const char *requests[4];
	const char *replies[4];
	uint64_t received, rejected, ctl_bad, posts;
};

/* clang-format off */
static const struct ctl_case cases[] = {
	{"send answers the seqnum", SOCKET_ON, {"send|power|" CPU "|high|Cpu: 3", "send|power|" CPU "|normal"}, {"ok 1", "ok 2"}, .received = 2},
	{"send with three fields", SOCKET_ON, {"send|power|" CPU}, {"err " NOT_A_SEND}, .ctl_bad = 1},
	{"send with six fields", SOCKET_ON, {"send|power|" CPU "|high|Cpu: 3|x"}, {"err " NOT_A_SEND}, .ctl_bad = 1},
	{"send of an invalid event", SOCKET_ON, {"send|power|" CPU "|h i"}, {"err invalid event: signal has a character outside [A-Za-z0-9_.:-]"}, .rejected = 1},
	{"post answers nothing", SOCKET_ON, {"post|power|" CPU "|high"}, {NULL}, .received = 1, .posts = 1},
	{"post with a bad type", SOCKET_ON, {"post|weather|" CPU "|high"}, {"err post 1: invalid event: unknown event type"}, .rejected = 1, .posts = 1},
	{"an error names its post", SOCKET_ON, {"post|power|" CPU "|high", "post|power|" CPU}, {"err post 2: " NOT_A_POST}, .received = 1, .ctl_bad = 1, .posts = 2},
	{"sync counts the posts", SOCKET_ON, {"post|power|" CPU "|high", "post|power|" CPU "|normal", "sync"}, {"ok 2"}, .received = 2, .posts = 2},
	{"sync with no posts", SOCKET_ON, {"sync"}, {"ok 0"}, .posts = 0},
	{"posts and sends share the seqnums", SOCKET_ON, {"post|power|" CPU "|high", "send|power|" CPU "|normal"}, {"ok 2"}, .received = 2, .posts = 1},
	{"an event with a handler", SOCKET_ON, {"send|power|" CPU "|critical"}, {"ok 1"}, .received = 1},
	{"send with the socket source off", SOCKET_OFF, {"send|power|" CPU "|high"}, {"err " REFUSED}, .received = 0},
	{"post with the socket source off", SOCKET_OFF, {"post|power|" CPU "|high"}, {"err post 1: " REFUSED}, .posts = 1},
	{"a bad send with the socket source off", SOCKET_OFF, {"send|power"}, {"err " NOT_A_SEND}, .ctl_bad = 1},
	{"reload", SOCKET_ON, {"reload"}, {"data no changes\n2 rules in 1 files\n", "ok"}, .received = 0},
	{"unknown command", SOCKET_ON, {"frobnicate|now"}, {"err unknown command"}, .ctl_bad = 1},
};
/* clang-format on */

static void test_requests(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct ctl_case *c = &cases[i];
		print_message("case: %s\n", c->name);
		struct setup t;
		setup_make(&t, c->sources, 64);
		struct peer pr;
		peer_init(&pr, 1234);
		for (size_t k = 0; k < ARRAY_SIZE(c->requests) && c->requests[k]; k++)
			assert_int_equal(request(&t, &pr, c->requests[k], true), 0);
		size_t n_want = 0;
		while (n_want < ARRAY_SIZE(c->replies) && c->replies[n_want])
			n_want++;
		check_replies(&pr, c->replies, n_want);
		const struct kstats *s = &t.d->stats;
		assert_int_equal(s->received[KEVENT_SOURCE_SOCKET], c->received);
		assert_int_equal(s->rejected[KEVENT_SOURCE_SOCKET], c->rejected);
		assert_int_equal(s->ctl_bad, c->ctl_bad);
		assert_int_equal(pr.p.posts, c->posts);
		drain(&t);
		assert_int_equal(s->handled, c->received);
		peer_release(&pr);
		setup_free(&t);
	}
}

/* A strict check of JSON text (RFC 8259), enough to tell a rendering
 * that would not parse. */
static const char *json_value(const char *s, int depth);

static const char *json_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

static const char *json_string(const char *s)
{
	if (*s++ != '"')
		return NULL;
	while (*s != '"') {
		if ((unsigned char)*s < 0x20)
			return NULL; /* control characters, and the end of the text */
		if (*s == '\\') {
			s++;
			if (*s == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)s[i]))
						return NULL;
				s += 4;
			} else if (!*s || !strchr("\"\\/bfnrt", *s)) {
				return NULL;
			}
		}
		s++;
	}
	return s + 1;
}

static const char *json_digits(const char *s)
{
	if (!isdigit((unsigned char)*s))
		return NULL;
	while (isdigit((unsigned char)*s))
		s++;
	return s;
}

static const char *json_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (!(s = json_digits(s)))
		return NULL;
	if (*s == '.' && !(s = json_digits(s + 1)))
		return NULL;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		s = json_digits(s);
	}
	return s;
}

static const char *json_value(const char *s, int depth)
{
	s = json_ws(s);
	if (*s == '{' || *s == '[') {
		char close = *s == '{' ? '}' : ']';
		if (depth == 32)
			return NULL;
		s = json_ws(s + 1);
		if (*s == close)
			return s + 1;
		for (;;) {
			if (close == '}') {
				if (!(s = json_string(json_ws(s))))
					return NULL;
				s = json_ws(s);
				if (*s++ != ':')
					return NULL;
			}
			if (!(s = json_value(s, depth + 1)))
				return NULL;
			s = json_ws(s);
			if (*s == close)
				return s + 1;
			if (*s++ != ',')
				return NULL;
		}
	}
	if (*s == '"')
		return json_string(s);
	static const char *const words[] = {"true", "false", "null"};
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strncmp(s, words[i], strlen(words[i])) == 0)
			return s + strlen(words[i]);
	return json_number(s);
}

static bool json_valid(const char *s)
{
	s = json_value(s, 0);
	return s && !*json_ws(s);
}

static void test_json_check(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct { const char *text; bool valid; } json[] = {
		{"{\"a\":[1,-2.5e3,\"x\\n\\u00e9\",true,false,null,{}]}", true},
		{" [ ] ", true},
		{"{\"a\":1,}", false},
		{"{\"a\" 1}", false},
		{"{a:1}", false},
		{"[01]", false},
		{"\"tab\there\"", false},
		{"\"\\x41\"", false},
		{"{\"a\":1}}", false},
		{"{\"a\":1", false},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(json); i++) {
		print_message("json: %s\n", json[i].text);
		assert_int_equal(json_valid(json[i].text), json[i].valid);
	}
}

static void test_status(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct { const char *request; const char *starts; bool json; } cases_status[] = {
		{"status", "data uptime: ", false},
		{"status|text", "data uptime: ", false},
		{"status|weird", "data uptime: ", false},
		{"status|json", "data {", true},
		{"status|prometheus", "data # HELP keventd_", false},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases_status); i++) {
		print_message("case: %s\n", cases_status[i].request);
		struct setup t;
		setup_make(&t, SOCKET_ON, 64);
		struct peer pr;
		peer_init(&pr, 1);
		assert_int_equal(request(&t, &pr, "send|power|" CPU "|high", true), 0);
		assert_int_equal(request(&t, &pr, cases_status[i].request, true), 0);
		for (size_t k = 0; k < pr.n; k++)
			print_message("  reply %s\n", pr.replies[k]);
		/* "ok 1" for the send, the rendering, and "ok" */
		assert_int_equal(pr.n, 3);
		const char *data = pr.replies[1];
		assert_string_equal(pr.replies[2], "ok");
		assert_memory_equal(data, cases_status[i].starts, strlen(cases_status[i].starts));
		if (cases_status[i].json) {
			assert_true(json_valid(data + strlen("data ")));
			assert_non_null(strstr(data, "\"socket\""));
		} else if (strstr(cases_status[i].starts, "uptime")) {
			assert_non_null(strstr(data, "\nsocket "));
			assert_non_null(strstr(data, "\nevents: handled 1, rate-limited 0, "
						     "debounced 0, matched 1\n"));
		}
		drain(&t);
		peer_release(&pr);
		setup_free(&t);
	}
}

#define LINE1 "socket seq=1 power " CPU " high payload=\"Cpu: 3\" rules=cpu-watch"
#define LINE2 "socket seq=2 storage /org/kernel/block/sda add payload=\"\" rules=(none)"
#define LINE3 "socket seq=3 power " CPU " normal payload=\"\" rules=cpu-watch"

/* The monitor drops status shows (the control socket's own field). */
static size_t monitor_dropped(struct setup *t)
{
	struct kstatus_extra x;
	kdaemon_status_extra(t->d, &x);
	return x.monitor_dropped;
}
static void test_monitor(void **state)
{
	(void)state;
	struct setup t;
	setup_make(&t, SOCKET_ON, 64);
	struct peer text, json, slow, sender;
	peer_init(&text, 10);
	peer_init(&json, 11);
	peer_init(&slow, 12);
	peer_init(&sender, 13);
	assert_int_equal(request(&t, &text, "monitor", true), 0);
	assert_int_equal(request(&t, &json, "monitor|json", true), 0);
	assert_int_equal(request(&t, &slow, "monitor", true), 0);
	assert_true(text.subscribed && json.subscribed && slow.subscribed);
	assert_false(sender.subscribed);

	slow.full = true;
	assert_int_equal(request(&t, &sender, "send|power|" CPU "|high|Cpu: 3", true), 0);
	check_replies(&text, (const char *[]){"ok", "data " LINE1}, 2);
	assert_int_equal(text.flushes, 1);
	assert_int_equal(json.n, 2);
	assert_memory_equal(json.replies[1], "data {\"seqnum\":1,", 17);
	assert_true(json_valid(json.replies[1] + strlen("data ")));
	assert_non_null(strstr(json.replies[1], "\"rules\":[\"cpu-watch\"]"));
	check_replies(&slow, (const char *[]){"ok"}, 1); /* dropped, not queued */
	assert_int_equal(slow.flushes, 0);
	assert_int_equal(monitor_dropped(&t), 1);
	check_replies(&sender, (const char *[]){"ok 1"}, 1);

	/* a slow monitor is told what it missed before its next line */
	slow.full = false;
	assert_int_equal(request(&t, &sender, "send|storage|/org/kernel/block/sda|add", true), 0);
	check_replies(&slow,
		      (const char *[]){"ok", "data (1 events not shown: monitor too slow)",
				       "data " LINE2},
		      3);
	check_replies(&text, (const char *[]){"ok", "data " LINE1, "data " LINE2}, 3);

	/* a monitor asked twice is in the list once; a forgotten one is told nothing */
	assert_int_equal(request(&t, &json, "monitor", true), 0); /* now as text */
	kdaemon_ctl_forget(t.ctl, &text.p);
	assert_false(text.p.monitor);
	assert_int_equal(request(&t, &sender, "send|power|" CPU "|normal", true), 0);
	assert_int_equal(text.n, 3);
	assert_int_equal(json.n, 5); /* ok, seq 1 and 2 as JSON, ok, seq 3 */
	assert_memory_equal(json.replies[2], "data {\"seqnum\":2,", 17);
	assert_string_equal(json.replies[3], "ok");
	assert_string_equal(json.replies[4], "data " LINE3);
	assert_int_equal(slow.n, 4);
	assert_string_equal(slow.replies[3], "data " LINE3);
	assert_int_equal(monitor_dropped(&t), 1);

	kdaemon_ctl_forget(t.ctl, &json.p);
	kdaemon_ctl_forget(t.ctl, &slow.p);
	kdaemon_ctl_forget(t.ctl, &sender.p); /* not a monitor: nothing to do */
	drain(&t);
	peer_release(&text);
	peer_release(&json);
	peer_release(&slow);
	peer_release(&sender);
	setup_free(&t);
}

static void test_bad_messages(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct { enum kctl_bad why; const char *buf; size_t len; const char *reply; uint64_t posts; } bad[] = {
		{KCTL_BAD_MALFORMED, "post\0power\0/a", 13, "err post 1: malformed message", 1},
		{KCTL_BAD_MALFORMED, "post", 4, "err malformed message", 0},
		{KCTL_BAD_MALFORMED, "posting\0", 8, "err malformed message", 0},
		{KCTL_BAD_MALFORMED, "send\0power", 10, "err malformed message", 0},
		{KCTL_BAD_TOO_LONG, "post\0power\0/a\0b\0", 16, "err post 1: message too long", 1},
		{KCTL_BAD_TOO_LONG, "status\0", 7, "err message too long", 0},
		{KCTL_BAD_EMPTY, "", 0, "err empty message", 0},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		print_message("case: %s\n", bad[i].reply);
		struct setup t;
		setup_make(&t, SOCKET_ON, 64);
		struct peer pr;
		peer_init(&pr, 99);
		kdaemon_ctl_bad(t.ctl, &pr.p, bad[i].why, bad[i].buf, bad[i].len);
		check_replies(&pr, &bad[i].reply, 1);
		assert_int_equal(pr.p.posts, bad[i].posts);
		assert_int_equal(t.d->stats.ctl_bad, 1);
		/* a bad post counts in the numbering of the ones after it */
		assert_int_equal(request(&t, &pr, "post|power", true), 0);
		char *want = tu_printf("err post %llu: " NOT_A_POST,
				       (unsigned long long)bad[i].posts + 1);
		assert_int_equal(pr.n, 2);
		assert_string_equal(pr.replies[1], want);
		free(want);
		peer_release(&pr);
		setup_free(&t);
	}
}

/* A full queue: events park (-EAGAIN) when the transport can wait, and are
 * taken all the same when it cannot; other requests never park. */
static void test_parking_on_a_full_queue(void **state)
{
	(void)state;
	struct setup t;
	setup_make(&t, SOCKET_ON, 1);
	struct peer pr;
	peer_init(&pr, 7);
	assert_int_equal(request(&t, &pr, "send|power|" CPU "|critical", true), 0);
	assert_int_equal(t.fake.n, 1); /* its handler runs until the loop reaps it */
	assert_int_equal(kdaemon_room(t.d, KEVENT_SOURCE_SOCKET), 0);
	assert_int_equal(request(&t, &pr, "send|power|" CPU "|high", true), -EAGAIN);
	assert_int_equal(request(&t, &pr, "post|power|" CPU "|high", true), -EAGAIN);
	assert_int_equal(pr.p.posts, 0); /* a parked post is not numbered yet */
	assert_int_equal(t.d->stats.received[KEVENT_SOURCE_SOCKET], 1);
	assert_int_equal(request(&t, &pr, "sync", true), 0);
	/* over the bound: the job waits behind the first */
	assert_int_equal(request(&t, &pr, "send|power|" CPU "|critical", false), 0);
	assert_int_equal(request(&t, &pr, "post|power|" CPU "|normal", false), 0);
	check_replies(&pr, (const char *[]){"ok 1", "ok 0", "ok 2"}, 3);
	assert_int_equal(pr.p.posts, 1);
	assert_int_equal(t.d->stats.received[KEVENT_SOURCE_SOCKET], 3);
	assert_int_equal(t.fake.n, 1);
	drain(&t);
	assert_int_equal(t.fake.n, 2);
	assert_int_equal(t.d->stats.handled, 3);
	assert_int_equal(t.d->stats.runs, 2);
	peer_release(&pr);
	setup_free(&t);
}

static void test_parking_while_stopping(void **state)
{
	(void)state;
	struct setup t;
	setup_make(&t, SOCKET_ON, 64);
	struct peer pr;
	peer_init(&pr, 8);
	assert_int_equal(kdaemon_room(t.d, KEVENT_SOURCE_SOCKET), 64);
	kdaemon_exit(t.d, 0);
	assert_true(t.d->stopping);
	assert_int_equal(kdaemon_room(t.d, KEVENT_SOURCE_SOCKET), 0);
	assert_int_equal(request(&t, &pr, "send|power|" CPU "|high", true), -EAGAIN);
	assert_int_equal(pr.n, 0);
	assert_int_equal(request(&t, &pr, "send|power|" CPU "|high", false), 0);
	check_replies(&pr, (const char *[]){"ok 1"}, 1);
	assert_int_equal(t.d->stats.handled, 1);
	peer_release(&pr);
	setup_free(&t);
}

/* A peer that takes streams: the test steps the one it was given. */
static struct kctl_stream *given;

static void peer_take_stream(struct kctl_peer *p, struct kctl_stream *s)
{
	(void)p;
	assert_null(given);
	given = s;
}

static const struct kctl_peer_ops stream_peer_ops = {
	.reply = peer_reply,
	.reply_data = peer_reply_data,
	.full = peer_full,
	.flush = peer_flush,
	.subscribe = peer_subscribe,
	.stream = peer_take_stream,
};

/* The stream's last reply, and the stream freed. */
static void end_given(const char *kind, const char *text_starts)
{
	const char *k = NULL, *text = NULL;
	given->end(given, &k, &text);
	print_message("  end %s %s\n", k ? k : "(ok)", text ? text : "");
	assert_string_equal(k ? k : "ok", kind);
	if (text_starts) {
		assert_non_null(text);
		assert_memory_equal(text, text_starts, strlen(text_starts));
	} else {
		assert_null(text);
	}
	given->free(given);
	given = NULL;
}

/* events, status and explain are streams for a peer that takes them,
 * rendered as it reads: events that leave the history before their turn
 * are skipped, the rest sent from the oldest still kept, and the last
 * reply says how many; a reload while status or explain is sent ends it
 * with an error.  Nothing is replied before the stream's own end. */
static void test_streams(void **state)
{
	(void)state;
	struct setup t;
	setup_history = 4;
	setup_make(&t, SOCKET_ON, 64);
	setup_history = 0;
	struct peer pr;
	peer_init(&pr, 1);
	pr.p.ops = &stream_peer_ops;
	char req[64];
	for (int i = 1; i <= 4; i++) {
		snprintf(req, sizeof(req), "send|general|/o|s%d", i);
		assert_int_equal(request(&t, &pr, req, true), 0);
	}
	assert_int_equal(pr.n, 4);
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(request(&t, &pr, "events|0|text", true), 0);
	assert_non_null(given);
	assert_true(given->next(given, &sb));
	assert_non_null(strstr(strbuf_str(&sb), " socket seq=1 general /o s1\n"));
	for (int i = 5; i <= 7; i++) {
		snprintf(req, sizeof(req), "send|general|/o|s%d", i);
		assert_int_equal(request(&t, &pr, req, true), 0);
	}
	strbuf_reset(&sb);
	assert_true(given->next(given, &sb));
	assert_non_null(strstr(strbuf_str(&sb), " socket seq=4 general /o s4\n"));
	strbuf_reset(&sb);
	assert_false(given->next(given, &sb));
	assert_int_equal(sb.len, 0);
	end_given("err", "2 of the events asked for left the history before they were sent");
	/* all read in time: ok */
	assert_int_equal(request(&t, &pr, "events|2|json", true), 0);
	assert_true(given->next(given, &sb));
	assert_true(given->next(given, &sb));
	assert_false(given->next(given, &sb));
	end_given("ok", NULL);

	static const char *const reloading[] = {"status|json", "status|prometheus", "status",
						"explain|last"};
	for (size_t i = 0; i < ARRAY_SIZE(reloading); i++) {
		print_message("case: %s\n", reloading[i]);
		assert_int_equal(request(&t, &pr, reloading[i], true), 0);
		strbuf_reset(&sb);
		assert_true(given->next(given, &sb));
		assert_true(sb.len > 0);
		assert_int_equal(kdaemon_reload(t.d, NULL), 0);
		assert_false(given->next(given, &sb));
		end_given("err", "the rules were reloaded while this reply was sent: ask again");
	}
	assert_int_equal(pr.n, 7); /* the sends' */
	strbuf_release(&sb);
	drain(&t);
	peer_release(&pr);
	setup_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_json_check),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_monitor),
		cmocka_unit_test(test_bad_messages),
		cmocka_unit_test(test_parking_on_a_full_queue),
		cmocka_unit_test(test_parking_while_stopping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
