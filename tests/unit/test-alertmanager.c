// SPDX-License-Identifier: GPL-2.0-or-later
/* The Alertmanager output: keventd.yaml's alertmanager: section (good and
 * bad), a condition row as an alert (byte for byte), endsAt, and the
 * poster on a loop against an HTTP server of the test's own: a round's
 * changes make one post, a resolved alert rides along until a post that
 * carries it succeeds, a failure is counted and tried again after the
 * backoff. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "alertmanager.h"
#include "am-config.h"
#include "curl-dl.h"
#include "render.h"
#include "testutil.h"
#include "yamltree.h"

static int parse_cfg(const char *text, struct kam_config *c, struct kdiags *d)
{
	struct ynode *root = tu_yaml(text);
	int rc = kam_config_parse(c, root->kids[1], "k.yaml", d);
	ynode_free(root);
	return rc;
}

static void test_config(void **state)
{
	(void)state;
	struct kam_config c;
	struct kdiags d = {0};
	kam_config_init(&c);
	assert_int_equal(parse_cfg("alertmanager:\n"
				   "  url: https://am.example.net:9093/prefix/\n"
				   "  resend: 30s\n"
				   "  timeout: 5s\n"
				   "  labels: {cluster: prod, _dc: 'eu 1'}\n"
				   "  username: host17\n"
				   "  password_file: /etc/keventd/am.password\n"
				   "  ca_file: /etc/keventd/ca.pem\n",
				   &c, &d),
			 0);
	assert_int_equal(d.n, 0);
	assert_true(c.enabled);
	assert_string_equal(c.url, "https://am.example.net:9093/prefix");
	assert_string_equal(c.post_url, "https://am.example.net:9093/prefix/api/v2/alerts");
	assert_false(c.local);
	assert_int_equal(c.resend_ms, 30000);
	assert_int_equal(c.timeout_ms, 5000);
	assert_int_equal(c.n_labels, 2);
	assert_string_equal(c.labels[0], "cluster");
	assert_string_equal(c.labels[1], "prod");
	assert_string_equal(c.labels[2], "_dc");
	assert_string_equal(c.labels[3], "eu 1");
	assert_string_equal(c.username, "host17");
	assert_string_equal(c.password_file, "/etc/keventd/am.password");
	assert_string_equal(c.ca_file, "/etc/keventd/ca.pem");
	kam_config_release(&c);

	/* the defaults; plain http to anywhere without a password */
	assert_int_equal(parse_cfg("alertmanager: {url: 'http://[::1]:9093'}\n", &c, &d), 0);
	assert_int_equal(c.resend_ms, KAM_DEFAULT_RESEND_MS);
	assert_int_equal(c.timeout_ms, KAM_DEFAULT_TIMEOUT_MS);
	assert_true(c.local);
	assert_string_equal(c.post_url, "http://[::1]:9093/api/v2/alerts");
	assert_int_equal(parse_cfg("alertmanager: {url: http://am.example.net}\n", &c, &d), 0);
	assert_false(c.local);
	/* the password in clear to the machine itself only */
	assert_int_equal(parse_cfg("alertmanager: {url: 'http://127.0.0.1:9093', username: u, "
				   "password_file: /p}\n",
				   &c, &d),
			 0);
	kam_config_release(&c);
	assert_int_equal(d.n, 0);

	/* clang-format off */
	static const struct {
		const char *yaml, *err;
	} bad[] = {
		{"alertmanager: [a]\n", "a mapping (url,"},
		{"alertmanager: {resend: 1m}\n", "says no url"},
		{"alertmanager: {url: ftp://h}\n", "is neither https://HOST nor http://HOST"},
		{"alertmanager: {url: 'http://'}\n", "names no host"},
		{"alertmanager: {url: 'http://:9093'}\n", "names no host"},
		{"alertmanager: {url: 'http://h:0'}\n", "a port is 1 to 65535"},
		{"alertmanager: {url: 'http://h:99999'}\n", "a port is 1 to 65535"},
		{"alertmanager: {url: 'http://[::1'}\n", "no ']'"},
		{"alertmanager: {url: 'http://h/?x=1'}\n", "no query nor fragment"},
		{"alertmanager: {url: 'http://u:p@h'}\n", "not in the URL"},
		{"alertmanager: {url: 'http://h/a b'}\n", "printable characters"},
		{"alertmanager: {url: http://h, resend: 500ms}\n", "bad resend \"500ms\""},
		{"alertmanager: {url: http://h, resend: 2d}\n", "bad resend \"2d\""},
		{"alertmanager: {url: http://h, resend: soon}\n", "bad resend"},
		{"alertmanager: {url: http://h, timeout: 10m}\n", "bad timeout"},
		{"alertmanager: {url: http://h, labels: [a]}\n", "labels: a mapping"},
		{"alertmanager: {url: http://h, labels: {alertname: x}}\n", "'alertname' is keventd's own"},
		{"alertmanager: {url: http://h, labels: {instance: x}}\n", "'instance' is keventd's own"},
		{"alertmanager: {url: http://h, labels: {object: x}}\n", "'object' is keventd's own"},
		{"alertmanager: {url: http://h, labels: {severity: x}}\n", "'severity' is keventd's own"},
		{"alertmanager: {url: http://h, labels: {bad-name: x}}\n", "is not a label name"},
		{"alertmanager: {url: http://h, labels: {1a: x}}\n", "is not a label name"},
		{"alertmanager: {url: http://h, labels: {a: ''}}\n", "a value of 1 to"},
		{"alertmanager: {url: http://h, labels: {a: \"x\\ny\"}}\n", "no control characters"},
		{"alertmanager: {url: http://h, username: u}\n", "username needs a password_file"},
		{"alertmanager: {url: https://h, password_file: /p}\n", "password_file needs a username"},
		{"alertmanager: {url: http://h, username: u, password_file: /p}\n", "in clear text"},
		{"alertmanager: {url: https://h, username: u, password_file: p}\n", "is an absolute path"},
		{"alertmanager: {url: https://h, username: 'a:b', password_file: /p}\n", "no spaces, control characters or ':'"},
		{"alertmanager: {url: https://h, colour: red}\n", "unknown key 'colour'"},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct kdiags e = {0};
		kam_config_init(&c);
		assert_int_equal(parse_cfg(bad[i].yaml, &c, &e), -EINVAL);
		assert_false(c.enabled); /* unchanged */
		assert_true(e.n >= 1);
		if (!strstr(e.v[0].msg, bad[i].err) || !strstr(e.v[0].msg, "alertmanager: "))
			fail_msg("case %zu: %s: wanted %s", i, e.v[0].msg, bad[i].err);
		kdiags_free(&e);
	}
	assert_true(kam_label_name_valid("_a9"));
	assert_false(kam_label_name_valid(""));
	assert_false(kam_label_name_valid("a.b"));
}

#define SINCE	(1700000000ull * KCOND_NS_PER_S + 123456789)
#define CLEARED (1700000600ull * KCOND_NS_PER_S + 999999999)

static void test_render(void **state)
{
	(void)state;
	struct kcond_row r = {.name = (char *)"disk-bad",
			      .key = (char *)"/dev/sda",
			      .object = (char *)"/dev/sda",
			      .severity = KCOND_CRITICAL,
			      .since = SINCE,
			      .last_signal = (char *)"bad",
			      .last_payload = (char *)"Sector: 1\nSays: \"no\"\t\x01"};
	static const char *const extra[] = {"cluster", "prod", "team", "st\"or"};
	struct strbuf sb = STRBUF_INIT;
	uint64_t ends = kam_ends_at(1700000100ull * KCOND_NS_PER_S, 60000);
	assert_true(ends == 1700000340ull * KCOND_NS_PER_S); /* 4 x 60 s on */
	kcond_render_alert(&sb, &r, "host17", extra, 2, ends);
	assert_string_equal(strbuf_str(&sb),
			    "{\"labels\":{\"alertname\":\"disk-bad\",\"instance\":\"host17\","
			    "\"object\":\"/dev/sda\",\"severity\":\"critical\",\"cluster\":"
			    "\"prod\",\"team\":\"st\\\"or\"},\"annotations\":{\"summary\":\"bad "
			    "on /dev/sda\",\"description\":\"Sector: 1\\nSays: \\\"no\\\"\\t"
			    "\\u0001\"},\"startsAt\":\"2023-11-14T22:13:20Z\",\"endsAt\":"
			    "\"2023-11-14T22:19:00Z\"}");
	/* cleared: endsAt is the time it cleared, whatever ends_at says; a
	 * row of a key: object is the key, the summary says the object */
	strbuf_reset(&sb);
	r.cleared = CLEARED;
	r.key = (char *)"serial-42";
	r.severity = KCOND_INFO;
	r.last_payload = NULL;
	r.last_signal = NULL;
	kcond_render_alert(&sb, &r, "h", NULL, 0, ends);
	assert_string_equal(strbuf_str(&sb),
			    "{\"labels\":{\"alertname\":\"disk-bad\",\"instance\":\"h\",\"object\":"
			    "\"serial-42\",\"severity\":\"info\"},\"annotations\":{\"summary\":"
			    "\"set on /dev/sda\",\"description\":\"\"},\"startsAt\":"
			    "\"2023-11-14T22:13:20Z\",\"endsAt\":\"2023-11-14T22:23:20Z\"}");
	/* a long payload is cut at KCOND_ALERT_DESCRIPTION bytes, before a
	 * character it would split */
	char big[KCOND_ALERT_DESCRIPTION + 10];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big + KCOND_ALERT_DESCRIPTION - 1, "\xc3\xa9", 2); /* é across the cut */
	r.last_payload = big;
	strbuf_reset(&sb);
	kcond_render_alert(&sb, &r, "h", NULL, 0, ends);
	const char *desc = strstr(strbuf_str(&sb), "\"description\":\"") + 15;
	assert_int_equal(strcspn(desc, "\""), KCOND_ALERT_DESCRIPTION - 1);
	strbuf_release(&sb);
}

/* --- the poster, against a server of the test's own on the same loop --- */

#define MAX_REQ 8
struct server {
	struct kloop *loop;
	int lfd, port;
	struct kio *lio;
	int status;	/* the answer's */
	size_t n, want; /* requests taken; the loop stops at want */
	char *body[MAX_REQ];
	char *path[MAX_REQ];
	uint64_t fill_ends[MAX_REQ]; /* fill's ends_at at each post */
	struct kam *am;
	struct kam_counters at[MAX_REQ]; /* the poster's counters as each came */
};

struct conn {
	struct server *s;
	int fd;
	struct kio *io;
	struct strbuf in;
};

static void on_conn(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct conn *c = userdata;
	(void)events;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n > 0)
		strbuf_add(&c->in, buf, (size_t)n);
	const char *end = c->in.buf ? strstr(c->in.buf, "\r\n\r\n") : NULL;
	if (n > 0 && !end)
		return;
	if (end) {
		const char *cl = strcasestr(c->in.buf, "Content-Length: ");
		size_t len = cl ? strtoul(cl + 16, NULL, 10) : 0;
		if (n > 0 && (size_t)(c->in.buf + c->in.len - (end + 4)) < len)
			return;
		struct server *s = c->s;
		if (s->n < MAX_REQ) {
			s->body[s->n] = strndup(end + 4, len);
			s->path[s->n] = strndup(c->in.buf, strcspn(c->in.buf, "\r\n"));
			kam_counters(s->am, &s->at[s->n]);
		}
		s->n++;
		char resp[128];
		int k = snprintf(resp, sizeof(resp),
				 "HTTP/1.1 %d X\r\nContent-Length: 4\r\nConnection: close\r\n\r\n"
				 "nope",
				 s->status);
		assert_int_equal(write(fd, resp, (size_t)k), k);
		if (s->n == s->want)
			kloop_exit(s->loop, 0);
	}
	kio_free(io);
	close(fd);
	strbuf_release(&c->in);
	free(c);
}

static void on_accept(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct server *s = userdata;
	(void)io;
	(void)events;
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	if (cfd < 0)
		return;
	struct conn *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	c->s = s;
	c->fd = cfd;
	assert_int_equal(kloop_add_io(s->loop, cfd, EPOLLIN, on_conn, c, &c->io), 0);
}

static void server_start(struct server *s, struct kloop *loop)
{
	*s = (struct server){.loop = loop, .status = 200};
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->lfd, 8), 0);
	assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &al), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(kloop_add_io(loop, s->lfd, EPOLLIN, on_accept, s, &s->lio), 0);
}

static void server_stop(struct server *s)
{
	kio_free(s->lio);
	close(s->lfd);
	for (size_t i = 0; i < MAX_REQ; i++) {
		free(s->body[i]);
		free(s->path[i]);
	}
}

static void on_guard(struct ktimer *t, void *userdata)
{
	(void)t;
	kloop_exit(userdata, 1);
}

/* Runs the loop until the server has taken want requests in all. */
static void run_until(struct server *s, size_t want)
{
	struct ktimer *guard = NULL;
	s->want = want;
	assert_int_equal(kloop_add_timer(s->loop, now_monotonic_ns() + 20 * KCOND_NS_PER_S,
					 on_guard, s->loop, &guard),
			 0);
	int rc = kloop_run(s->loop);
	if (rc != 0)
		fail_msg("only %zu of %zu requests within 20 s", s->n, want);
	ktimer_cancel(guard);
}

/* Two alerts that hold, whatever the post. */
static size_t fill(void *userdata, uint64_t ends_at, struct strbuf *body)
{
	struct server *s = userdata;
	if (s->n < MAX_REQ)
		s->fill_ends[s->n] = ends_at;
	kam_sep(body);
	strbuf_puts(body, "{\"a\":1}");
	kam_sep(body);
	strbuf_puts(body, "{\"a\":2}");
	return 2;
}

static void test_poster(void **state)
{
	(void)state;
	const char *why = NULL;
	if (kcurl_load(&why) < 0)
		tu_skip("libcurl cannot be loaded: %s", why);
	struct kloop *loop = NULL;
	assert_int_equal(kloop_new(&loop), 0);
	struct server s;
	server_start(&s, loop);
	struct kam_config cfg;
	kam_config_init(&cfg);
	cfg.enabled = true;
	cfg.resend_ms = 1000;
	assert_true(asprintf(&cfg.post_url, "http://127.0.0.1:%d/api/v2/alerts", s.port) > 0);
	struct kam *a = NULL;
	uint64_t t0 = now_realtime_ns();
	assert_int_equal(kam_new(loop, &cfg, fill, &s, &a, &why), 0);
	s.am = a;
	/* a round's changes, and the first post of the table: one post */
	kam_changed(a);
	kam_changed(a);
	assert_int_equal(kam_resolved(a, "c\x1fx", "{\"r\":1}"), 0);
	assert_int_equal(kam_resolved(a, "c\x1fy", "{\"r\":0}"), 0);
	kam_holds(a, "c\x1fy"); /* set again: its resolved alert is not sent */
	kam_changed(a);
	run_until(&s, 1);
	assert_string_equal(s.path[0], "POST /api/v2/alerts HTTP/1.1");
	assert_string_equal(s.body[0], "[{\"a\":1},{\"a\":2},{\"r\":1}]");
	/* endsAt: 4 resends after the post */
	assert_true(s.fill_ends[0] >= t0 + 4 * KCOND_NS_PER_S);
	assert_true(s.fill_ends[0] <= now_realtime_ns() + 4 * KCOND_NS_PER_S);
	/* the resend, a second later: the resolved one is gone with the
	 * post that succeeded */
	run_until(&s, 2);
	assert_string_equal(s.body[1], "[{\"a\":1},{\"a\":2}]");
	assert_int_equal(s.at[1].posts, 1);
	assert_int_equal(s.at[1].resolved, 0);
	assert_true(s.at[1].up);
	/* Alertmanager answers 500: counted, tried again after the backoff,
	 * with what was resolved meanwhile */
	s.status = 500;
	run_until(&s, 3);
	assert_int_equal(kam_resolved(a, "c\x1fz", "{\"r\":2}"), 0);
	kam_changed(a); /* failing: waits for the backoff all the same */
	run_until(&s, 4);
	assert_string_equal(s.body[3], "[{\"a\":1},{\"a\":2},{\"r\":2}]");
	assert_int_equal(s.at[3].failed, 1);
	assert_false(s.at[3].up);
	assert_int_equal(s.at[3].resolved, 1);
	assert_string_equal(s.at[3].last_error, "HTTP 500: nope");
	s.status = 200;
	run_until(&s, 5); /* the backoff doubled, and capped at resend */
	assert_int_equal(s.at[4].failed, 2);
	assert_string_equal(s.body[4], "[{\"a\":1},{\"a\":2},{\"r\":2}]");
	run_until(&s, 6);
	assert_string_equal(s.body[5], "[{\"a\":1},{\"a\":2}]");
	assert_true(s.at[5].up);
	assert_int_equal(s.at[5].posts, 3);
	assert_int_equal(s.at[5].resolved, 0);
	kam_free(a);
	server_stop(&s);
	kam_config_release(&cfg);
	kloop_free(loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_poster),
	};
	return tu_result(cmocka_run_group_tests(tests, NULL, NULL));
}
