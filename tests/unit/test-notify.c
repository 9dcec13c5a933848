// SPDX-License-Identifier: GPL-2.0-or-later
/* Notifications' pure parts: the queue's record format (whole, or
 * damaged), what a notification says (the defaults and the templates, the
 * mail, ntfy's headers, Gotify's and the web hook's bodies), the HMAC of
 * the signature, keventd.yaml's notify: section and rules' notify:. */
#include <errno.h>
#include <string.h>

#include "hmac-sha256.h"
#include "notify-config.h"
#include "notify-msg.h"
#include "notify-rec.h"
#include "testutil.h"
#include "yamltree.h"

static struct knotify_rec sample(void)
{
	return (struct knotify_rec){.id = 0x0123456789abcdefull,
				    .created = 1700000000,
				    .retry = true,
				    .severity = KNOTIFY_SEV_WARNING,
				    .target = (char *)"ops-mail",
				    .rule = (char *)"md",
				    .title = (char *)"host17: degraded on /dev/md0",
				    .message = (char *)"Condition: md\nline two\n",
				    .json = (char *)"{\"a\":1}"};
}

static void test_rec_round_trip(void **state)
{
	(void)state;
	struct knotify_rec r = sample(), back;
	struct strbuf sb = STRBUF_INIT;
	const char *why = NULL;
	knotify_rec_encode(&r, &sb);
	assert_false(sb.oom);
	assert_int_equal(knotify_rec_decode(sb.buf, sb.len, &back, &why), 0);
	assert_int_equal(back.id, r.id);
	assert_int_equal(back.created, r.created);
	assert_true(back.retry);
	assert_false(back.test);
	assert_int_equal(back.severity, KNOTIFY_SEV_WARNING);
	assert_string_equal(back.target, "ops-mail");
	assert_string_equal(back.rule, "md");
	assert_string_equal(back.title, r.title);
	assert_string_equal(back.message, r.message);
	assert_string_equal(back.json, r.json);
	knotify_rec_release(&back);
	/* the file's text, as notify-rec.h describes it */
	assert_non_null(strstr(sb.buf,
			       "\nid 16\n0123456789abcdef\ncreated 10\n1700000000\nflags 1\nr\n"
			       "severity 7\nwarning\ntarget 8\nops-mail\n"));
	assert_memory_equal(sb.buf, "keventd-notify 1 ", 17);
	strbuf_release(&sb);
}

/* Every byte changed, every length cut: refused, never read as another
 * record, never a crash (the fuzzer goes further). */
static void test_rec_damage(void **state)
{
	(void)state;
	struct knotify_rec r = sample(), back;
	struct strbuf sb = STRBUF_INIT;
	const char *why = NULL;
	knotify_rec_encode(&r, &sb);
	for (size_t len = 0; len < sb.len; len++) {
		assert_int_equal(knotify_rec_decode(sb.buf, len, &back, &why), -EINVAL);
		assert_non_null(why);
	}
	for (size_t i = 0; i < sb.len; i++) {
		char saved = sb.buf[i];
		sb.buf[i] ^= 0x20;
		assert_int_equal(knotify_rec_decode(sb.buf, sb.len, &back, &why), -EINVAL);
		sb.buf[i] = saved;
	}
	strbuf_add(&sb, "x", 1);
	assert_int_equal(knotify_rec_decode(sb.buf, sb.len, &back, &why), -EINVAL);
	assert_string_equal(why, "cut short, or with bytes after its end");
	strbuf_release(&sb);
}

static struct krule *rule_of(struct kfile *f, const char *name)
{
	for (size_t i = 0; i < f->n_rules; i++)
		if (strcmp(f->rules[i].name, name) == 0)
			return &f->rules[i];
	fail_msg("no rule %s", name);
	return NULL;
}

static void test_msg_defaults_and_templates(void **state)
{
	(void)state;
	struct kfile *f = tu_parse("rules:\n"
				   "  - name: plain\n"
				   "    notify: [ops]\n"
				   "  - name: tmpl\n"
				   "    notify: ops\n"
				   "    title: \"${KEVENT_CONDITION}: ${KEVENT_OBJECT}\\nsecond\"\n"
				   "    message: \"sev=${KEVENT_SEVERITY} $$ ${KEVENT_NONE}.\"\n",
				   "/etc/keventd/rules.d/50-n.yaml");
	struct kevent *ev = tu_event(KEVENT_STORAGE, "/dev/md0", "set",
				     "Condition: md-degraded\nSeverity: Critical");
	struct knotify_rec r;
	assert_int_equal(knotify_msg_make(rule_of(f, "plain"), ev, "ops", "host17", 42, &r), 0);
	assert_string_equal(r.title, "host17: md-degraded set on /dev/md0");
	assert_int_equal(r.severity, KNOTIFY_SEV_CRITICAL);
	assert_int_equal(r.created, 42);
	assert_false(r.retry);
	assert_memory_equal(r.message,
			    "Condition: md-degraded\nSeverity: Critical\n\nHost: host17\n",
			    strlen("Condition: md-degraded\nSeverity: Critical\n\nHost: host17\n"));
	assert_non_null(strstr(r.message, "Rule: plain (/etc/keventd/rules.d/50-n.yaml)\n"));
	assert_non_null(strstr(r.json, "\"object\":\"/dev/md0\""));
	assert_non_null(strstr(r.json, ",\"host\":\"host17\""));
	uint64_t id = r.id;
	knotify_rec_release(&r);
	/* the same event, rule and target: the same id; another target: not */
	assert_int_equal(knotify_msg_id(ev, rule_of(f, "plain"), "ops"), id);
	assert_int_not_equal(knotify_msg_id(ev, rule_of(f, "plain"), "phone"), id);
	assert_int_equal(knotify_msg_make(rule_of(f, "tmpl"), ev, "ops", "host17", 42, &r), 0);
	assert_string_equal(r.title, "md-degraded: /dev/md0 second"); /* one line */
	assert_string_equal(r.message, "sev=Critical $ .");
	knotify_rec_release(&r);
	/* no condition: the signal; a redelivered event: a retry */
	kevent_free(ev);
	ev = tu_event(KEVENT_POWER, "/ac", "offline", "");
	ev->redelivered = true;
	assert_int_equal(knotify_msg_make(rule_of(f, "plain"), ev, "ops", "h", 1, &r), 0);
	assert_string_equal(r.title, "h: offline on /ac");
	assert_int_equal(r.severity, KNOTIFY_SEV_NONE);
	assert_true(r.retry);
	knotify_rec_release(&r);
	kevent_free(ev);
	kfile_unref(f);
}

static void test_mail(void **state)
{
	(void)state;
	struct knotify_rec r = sample();
	r.severity = KNOTIFY_SEV_CRITICAL;
	char *to[] = {(char *)"a@example.net", (char *)"b@example.net"};
	struct strbuf sb = STRBUF_INIT;
	knotify_mail(&r, true, "k@example.net", to, 2, "host17", &sb);
	assert_string_equal(sb.buf, "Date: Tue, 14 Nov 2023 22:13:20 +0000\r\n"
				    "From: <k@example.net>\r\n"
				    "To: <a@example.net>,\r\n    <b@example.net>\r\n"
				    "Subject: [critical] host17: degraded on /dev/md0\r\n"
				    "Message-ID: <0123456789abcdef.keventd@host17>\r\n"
				    "X-Keventd-Id: 0123456789abcdef\r\n"
				    "X-Keventd-Retry: yes\r\n"
				    "X-Keventd-Severity: critical\r\n"
				    "Importance: high\r\nX-Priority: 1\r\n"
				    "Auto-Submitted: auto-generated\r\nMIME-Version: 1.0\r\n"
				    "Content-Type: text/plain; charset=us-ascii\r\n"
				    "Content-Transfer-Encoding: 7bit\r\n\r\n"
				    "Condition: md\r\nline two\r\n");
	strbuf_reset(&sb);
	/* not ASCII: an encoded subject, a base64 body; no header injection */
	r.title = (char *)"disque plein ✓\r\nBcc: evil@example.net";
	r.message = (char *)"é\n";
	r.severity = KNOTIFY_SEV_NONE;
	knotify_mail(&r, false, "k@example.net", to, 1, "h", &sb);
	assert_non_null(strstr(sb.buf, "\r\nSubject: =?UTF-8?B?"));
	assert_null(strstr(sb.buf, "\r\nBcc:"));
	assert_null(strstr(sb.buf, "X-Keventd-Retry"));
	assert_non_null(strstr(sb.buf, "charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
				       "w6kK\r\n"));
	strbuf_release(&sb);
}

static void test_push_bodies(void **state)
{
	(void)state;
	struct knotify_rec r = sample();
	struct strbuf sb = STRBUF_INIT;
	knotify_ntfy_headers(&r, false, &sb);
	assert_string_equal(sb.buf,
			    "Title: host17: degraded on /dev/md0\nPriority: 4\n"
			    "Tags: warning,keventd,warning\nX-Keventd-Id: 0123456789abcdef\n");
	strbuf_reset(&sb);
	knotify_gotify_body(&r, true, &sb);
	assert_string_equal(sb.buf,
			    "{\"title\":\"host17: degraded on /dev/md0\",\"message\":\"Condition: "
			    "md\\nline two\\n\",\"priority\":7,\"extras\":{\"client::display\":{"
			    "\"contentType\":\"text/plain\"},\"keventd::notification\":{\"id\":"
			    "\"0123456789abcdef\",\"retry\":true}}}");
	strbuf_reset(&sb);
	knotify_webhook_body(&r, false, &sb);
	assert_string_equal(sb.buf,
			    "{\"a\":1,\"notification\":{\"id\":\"0123456789abcdef\","
			    "\"target\":\"ops-mail\",\"rule\":\"md\",\"title\":\"host17: "
			    "degraded on /dev/md0\",\"message\":\"Condition: md\\nline "
			    "two\\n\",\"severity\":\"warning\",\"retry\":false,\"test\":false}}");
	strbuf_release(&sb);
	assert_int_equal(knotify_ntfy_priority(KNOTIFY_SEV_CRITICAL), 5);
	assert_int_equal(knotify_ntfy_priority(KNOTIFY_SEV_NONE), 3);
	assert_int_equal(knotify_gotify_priority(KNOTIFY_SEV_CRITICAL), 10);
}

/* RFC 4231's test cases 1 and 2, and SHA-256 of "abc" (FIPS 180-4). */
static void test_hmac(void **state)
{
	(void)state;
	char hex[65];
	uint8_t key[20];
	memset(key, 0x0b, sizeof(key));
	khmac_sha256_hex(key, sizeof(key), "Hi There", 8, hex);
	assert_string_equal(hex,
			    "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	khmac_sha256_hex("Jefe", 4, "what do ya want for nothing?", 28, hex);
	assert_string_equal(hex,
			    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	uint8_t d[32];
	ksha256("abc", 3, d);
	assert_int_equal(d[0], 0xba);
	assert_int_equal(d[31], 0xad);
	/* a key longer than a block is hashed first (RFC 4231 case 6) */
	uint8_t big[131];
	memset(big, 0xaa, sizeof(big));
	khmac_sha256_hex(big, sizeof(big), "Test Using Larger Than Block-Size Key - Hash Key First",
			 54, hex);
	assert_string_equal(hex,
			    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static int parse_cfg(const char *text, struct knotify_config *c, struct kdiags *d)
{
	struct ynode *root = NULL;
	unsigned line, col;
	char *msg = NULL;
	assert_int_equal(ytree_parse(text, strlen(text), &root, &line, &col, &msg), 0);
	int rc = knotify_config_parse(c, root->kids[1], "k.yaml", d);
	ynode_free(root);
	return rc;
}

static void test_config(void **state)
{
	(void)state;
	struct knotify_config c;
	struct kdiags d = {0};
	knotify_config_init(&c);
	assert_int_equal(parse_cfg("notify:\n"
				   "  ops-mail:\n"
				   "    smtp: smtp://mail.example.net:587\n"
				   "    from: k@h.example.net\n"
				   "    to: [ops@example.net]\n"
				   "    username: h\n"
				   "    password_file: /etc/keventd/smtp.password\n"
				   "  local: {smtp: smtp://localhost, from: a@b, to: c@d}\n"
				   "  phone: {ntfy: https://ntfy.example.net/ops, max_age: 2h}\n"
				   "  g: {gotify: https://g.example.net, token_file: /t}\n"
				   "  hook: {webhook: http://127.0.0.1:9/h, secret_file: /s}\n",
				   &c, &d),
			 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(c.n, 5);
	const struct knotify_target *t = knotify_config_find(&c, "ops-mail");
	assert_int_equal(t->kind, KNOTIFY_SMTP);
	assert_false(t->tls);
	assert_false(t->local);
	assert_int_equal(t->max_age_ms, KNOTIFY_DEFAULT_MAX_AGE_MS);
	assert_true(knotify_config_find(&c, "local")->local);
	assert_int_equal(knotify_config_find(&c, "phone")->max_age_ms, 2 * 3600 * 1000);
	assert_true(knotify_config_find(&c, "hook")->local);
	knotify_config_release(&c);
	/* clang-format off */
	static const struct {
		const char *yaml, *err;
	} bad[] = {
		{"notify:\n  a: {webhook: http://hooks.example.net/x}\n", "would send in clear text"},
		{"notify:\n  a: {ntfy: https://ntfy.example.net/}\n", "names no topic"},
		{"notify:\n  a: {smtp: smtp://m, to: x@y}\n", "mail needs 'from' and 'to'"},
		{"notify:\n  a: {smtp: smtp://m, from: x@y, to: 'not an address'}\n", "is not a mail address"},
		{"notify:\n  a: {gotify: https://g}\n", "gotify needs the application's token_file"},
		{"notify:\n  a: {webhook: https://u:p@h/x}\n", "not in the URL"},
		{"notify:\n  a: {webhook: https://h/x, ntfy: https://h/y}\n", "not both"},
		{"notify:\n  a: {webhook: https://h/x, password_file: /p}\n", "password_file needs a username"},
		{"notify:\n  a: {ntfy: https://h/x, secret_file: /s}\n", "secret_file is for webhook"},
		{"notify:\n  a: {webhook: https://h/x, token_file: rel}\n", "is an absolute path"},
		{"notify:\n  a: {webhook: https://h/x, max_age: 0s}\n", "bad max_age"},
		{"notify:\n  a b: {webhook: https://h/x}\n", "a target's name is"},
		{"notify:\n  desktop: {webhook: https://h/x}\n", "the user instance's own target"},
		{"notify:\n  a: {webhook: https://h/x, colour: red}\n", "unknown key 'colour'"},
		{"notify:\n  a: {}\n", "says none of smtp"},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct kdiags e = {0};
		knotify_config_init(&c);
		assert_int_equal(parse_cfg(bad[i].yaml, &c, &e), -EINVAL);
		assert_int_equal(c.n, 0);
		assert_true(e.n >= 1);
		if (!strstr(e.v[0].msg, bad[i].err))
			fail_msg("case %zu: %s: wanted %s", i, e.v[0].msg, bad[i].err);
		kdiags_free(&e);
	}
}

static void test_rule_notify(void **state)
{
	(void)state;
	struct kfile *f =
		tu_parse("rules:\n  - name: n\n    notify: [a, b]\n    title: T\n", "/r/1.yaml");
	const struct krule_extra *x = krule_extra(&f->rules[0]);
	assert_string_equal(x->notify[0], "a");
	assert_string_equal(x->notify[1], "b");
	assert_null(x->notify[2]);
	assert_string_equal(x->notify_title, "T");
	assert_null(x->notify_message);
	assert_false(krule_runs_something(&f->rules[0]));
	kfile_unref(f);
	/* clang-format off */
	static const struct {
		const char *yaml, *err;
	} bad[] = {
		{"rules:\n  - title: T\n", "'title' is a notification's: the rule needs 'notify'"},
		{"rules:\n  - notify: [a, a]\n", "target 'a' given twice"},
		{"rules:\n  - notify: ['a b']\n", "is not a target's name"},
		{"rules:\n  - notify: []\n", "names 1 to 32 targets"},
		{"rules:\n  - notify: a\n    message: '${'\n", "bad 'message' template"},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct kdiags e = tu_parse_fail(bad[i].yaml, "/r/1.yaml");
		assert_true(e.n >= 1);
		if (!strstr(e.v[0].msg, bad[i].err))
			fail_msg("case %zu: %s: wanted %s", i, e.v[0].msg, bad[i].err);
		kdiags_free(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rec_round_trip),
		cmocka_unit_test(test_rec_damage),
		cmocka_unit_test(test_msg_defaults_and_templates),
		cmocka_unit_test(test_mail),
		cmocka_unit_test(test_push_bodies),
		cmocka_unit_test(test_hmac),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_rule_notify),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
