// SPDX-License-Identifier: GPL-2.0-or-later
/* Drop-ins: the merge of named rules key by key, its errors with their
 * locations, and drop-in directories layered across the rule directories
 * and reloaded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dropin.h"
#include "ruleset.h"
#include "testutil.h"
#include "util.h"

#define BASE                                       \
	"rules:\n"                                 \
	"  - name: hot\n"                          \
	"    match: {type: power, signal: high}\n" \
	"    run: [/bin/cool]\n"                   \
	"    timeout: 30s\n"                       \
	"  - name: disk\n"                         \
	"    match: {type: storage}\n"             \
	"    shell: echo disk\n"                   \
	"    ratelimit: 1/60s\n"                   \
	"  - match: {type: fs}\n"                  \
	"    run: [/bin/fs]\n"

/* What a rule is, in a line: name, match, handler, timeout, rate, enabled. */
static void describe(const struct krule *r, struct strbuf *sb)
{
	strbuf_printf(sb, "%s:", r->name);
	for (size_t i = 0; i < r->type.n; i++)
		strbuf_printf(sb, " type=%s", r->type.v[i].text);
	for (size_t i = 0; i < r->signal.n; i++)
		strbuf_printf(sb, " signal=%s", r->signal.v[i].text);
	if (r->run)
		strbuf_printf(sb, " run=%s", r->run[0]);
	if (r->shell)
		strbuf_printf(sb, " shell=%s", r->shell);
	strbuf_printf(sb, " timeout=%llu", (unsigned long long)krule_extra(r)->timeout_ms);
	if (krule_extra(r)->rl_period_ms)
		strbuf_printf(sb, " rate=%u/%llu", krule_extra(r)->rl_count,
			      (unsigned long long)krule_extra(r)->rl_period_ms);
	if (r->disabled)
		strbuf_puts(sb, " off");
}

static char *describe_file(const struct kfile *f)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < f->n_rules; i++) {
		if (i)
			strbuf_puts(&sb, "; ");
		describe(&f->rules[i], &sb);
	}
	return strbuf_steal(&sb);
}

struct merge_case {
	const char *label;
	const char *dropins[3]; /* 10-a.yaml, 20-b.yaml, 30-c.yaml; NULL: none */
	const char *want;	/* describe_file() of the result, or the first diag's line */
};

#define HOT  "hot: type=power signal=high run=/bin/cool timeout=30000"
#define DISK "disk: type=storage shell=echo disk timeout=60000 rate=1/60000"
#define FS   "50-v.yaml:2: type=fs run=/bin/fs timeout=60000"
#define D(n) "/etc/keventd/rules.d/50-v.yaml.d/" n

/* clang-format off */
static const struct merge_case merge_cases[] = {
	{"no drop-ins", {NULL}, HOT "; " DISK "; " FS},
	{"a timeout", {"rules:\n  - name: hot\n    timeout: 5s\n"}, "hot: type=power signal=high run=/bin/cool timeout=5000; " DISK "; " FS},
	{"switched off", {"rules:\n  - name: disk\n    enabled: false\n"}, HOT "; " DISK " off; " FS},
	{"match replaced whole", {"rules:\n  - name: hot\n    match: {type: fs}\n"}, "hot: type=fs run=/bin/cool timeout=30000; " DISK "; " FS},
	{"a new key", {"rules:\n  - name: hot\n    ratelimit: 2/10s\n"}, "hot: type=power signal=high run=/bin/cool timeout=30000 rate=2/10000; " DISK "; " FS},
	{"run replaces shell", {"rules:\n  - name: disk\n    run: [/bin/disk]\n"}, HOT "; disk: type=storage run=/bin/disk timeout=60000 rate=1/60000; " FS},
	{"shell replaces run", {"rules:\n  - name: hot\n    shell: cool\n"}, "hot: type=power signal=high shell=cool timeout=30000; " DISK "; " FS},
	{"a rule without a name, by its default name", {"rules:\n  - name: \"50-v.yaml:2\"\n    timeout: 1s\n"}, HOT "; " DISK "; 50-v.yaml:2: type=fs run=/bin/fs timeout=1000"},
	{"in file-name order: the last one wins", {"rules:\n  - name: hot\n    timeout: 5s\n", "rules:\n  - name: hot\n    timeout: 7s\n"}, "hot: type=power signal=high run=/bin/cool timeout=7000; " DISK "; " FS},
	{"two rules in one drop-in", {"rules:\n  - name: hot\n    enabled: no\n  - name: disk\n    timeout: 2s\n"}, HOT " off; disk: type=storage shell=echo disk timeout=2000 rate=1/60000; " FS},
	{"an empty drop-in changes nothing", {"# nothing yet\n"}, HOT "; " DISK "; " FS},
	{"a name alone changes nothing", {"rules:\n  - name: hot\n"}, HOT "; " DISK "; " FS},
	/* errors: where, in which file */
	{"names no rule", {"rules:\n  - name: cold\n    timeout: 5s\n"}, D("10-a.yaml") ":2:11: error: no rule named \"cold\" in 50-v.yaml"},
	{"names no rule, in the second drop-in", {"rules:\n  - name: hot\n    timeout: 5s\n", "\nrules:\n  - name: hto\n"}, D("20-b.yaml") ":3:11: error: no rule named \"hto\" in 50-v.yaml"},
	{"no name", {"rules:\n  - timeout: 5s\n"}, D("10-a.yaml") ":2:5: error: a drop-in rule needs 'name': the rule of 50-v.yaml that it changes"},
	{"name is a list", {"rules:\n  - name: [hot]\n"}, D("10-a.yaml") ":2:11: error: 'name' must be a value, not a list"},
	{"an unknown key", {"rules:\n  - name: hot\n    colour: red\n"}, D("10-a.yaml") ":3:5: error: unknown key 'colour' in rule (expected name, match, run, shell, timeout, user, ratelimit, debounce, key, enabled, last, no_new_privs, limits, memory_max, tasks_max, cpu_weight, transient, unit_properties, session, notify, title, message or share)"},
	{"a bad value", {"rules:\n  - name: hot\n    timeout: soon\n"}, D("10-a.yaml") ":3:14: error: bad timeout \"soon\": "},
	{"a bad value deep in match", {NULL, NULL, "rules:\n  - name: hot\n    match:\n      type: [power, heat]\n"}, D("30-c.yaml") ":4:21: error: bad 'type' value \"heat\": "},
	{"a key twice", {"rules:\n  - name: hot\n    timeout: 1s\n    timeout: 2s\n"}, D("10-a.yaml") ":4:5: error: key 'timeout' given twice"},
	{"not a list of rules", {"rules: {name: hot}\n"}, D("10-a.yaml") ":1:8: error: 'rules' must be a list of rules, not a mapping"},
	{"an unknown top-level key", {"rule:\n  - name: hot\n"}, D("10-a.yaml") ":1:1: error: unknown top-level key 'rule' (expected 'rules' or 'conditions')"},
	{"a rule that is a value", {"rules:\n  - hot\n"}, D("10-a.yaml") ":2:5: error: a drop-in rule is a mapping with 'name' and the keys it changes, not a value"},
	{"YAML syntax", {"rules: [\n"}, D("10-a.yaml") ":2:1: error: YAML syntax error"},
};
/* clang-format on */

static void test_merge(void **state)
{
	(void)state;
	static const char *const names[] = {D("10-a.yaml"), D("20-b.yaml"), D("30-c.yaml")};
	for (size_t i = 0; i < ARRAY_SIZE(merge_cases); i++) {
		const struct merge_case *c = &merge_cases[i];
		struct ksrc base = {"/usr/lib/keventd/rules.d/50-v.yaml", BASE, strlen(BASE)};
		struct ksrc d[3];
		size_t n = 0;
		for (size_t j = 0; j < 3; j++)
			if (c->dropins[j])
				d[n++] = (struct ksrc){names[j], c->dropins[j],
						       strlen(c->dropins[j])};
		struct kdiags diags = {0};
		struct kfile *f = NULL;
		int rc = kdropin_parse(&base, d, n, &f, &diags);
		print_message("case: %s\n", c->label);
		if (strstr(c->want, ": error: ")) {
			assert_int_equal(rc, -EINVAL);
			assert_null(f);
			assert_true(diags.n >= 1);
			char *got = tu_diag(&diags.v[0]);
			if (strncmp(got, c->want, strlen(c->want)) != 0)
				fail_msg("%s: got \"%s\", want \"%s\"", c->label, got, c->want);
			free(got);
		} else {
			assert_int_equal(rc, 0);
			assert_int_equal(diags.n, 0);
			char *got = describe_file(f);
			assert_string_equal(got, c->want);
			free(got);
			/* the rules are still the base file's, where they start */
			assert_string_equal(f->path, base.path);
			assert_int_equal(f->rules[0].line, 2);
		}
		kfile_unref(f);
		kdiags_free(&diags);
	}
}

/* Every error of a file is reported, drop-in or not, in one run. */
static void test_all_errors(void **state)
{
	(void)state;
	const char *a = "rules:\n  - name: cold\n  - name: hot\n    timeout: soon\n";
	struct ksrc base = {"/l/50-v.yaml", BASE, strlen(BASE)};
	struct ksrc d = {"/e/50-v.yaml.d/a.yaml", a, strlen(a)};
	struct kdiags diags = {0};
	struct kfile *f = NULL;
	assert_int_equal(kdropin_parse(&base, &d, 1, &f, &diags), -EINVAL);
	assert_int_equal(diags.n, 2);
	assert_int_equal(diags.v[0].line, 2);
	assert_int_equal(diags.v[1].line, 4);
	kdiags_free(&diags);
}

/* The merged tree says where each node came from. */
static void test_tree_origins(void **state)
{
	(void)state;
	const char *a = "rules:\n  - name: hot\n    timeout: 5s\n";
	struct ksrc base = {"/l/50-v.yaml", BASE, strlen(BASE)};
	struct ksrc d = {"/e/50-v.yaml.d/a.yaml", a, strlen(a)};
	struct kdiags diags = {0};
	struct ynode *tree = NULL;
	assert_int_equal(kdropin_merge(&base, &d, 1, &tree, &diags), 0);
	const struct ynode *hot = tree->kids[1]->kids[0];
	assert_int_equal(hot->n_kids, 8);
	assert_string_equal(hot->kids[6]->value, "timeout");
	assert_string_equal(hot->kids[7]->value, "5s");
	assert_string_equal(hot->kids[6]->file, d.path);
	assert_int_equal(hot->kids[6]->line, 3);
	assert_null(hot->kids[0]->file); /* name: the base file's */
	ynode_free(tree);
	/* an error: no tree */
	const char *b = "rules:\n  - name: cold\n";
	d = (struct ksrc){"/e/50-v.yaml.d/b.yaml", b, strlen(b)};
	assert_int_equal(kdropin_merge(&base, &d, 1, &tree, &diags), -EINVAL);
	assert_null(tree);
	kdiags_free(&diags);
}

static void write_dropin(const char *dir, const char *name, const char *text)
{
	char *d = tu_printf("%s/50-v.yaml.d", dir);
	(void)mkdir(d, 0755);
	tu_write(d, name, text, 0644);
	free(d);
}

static struct kruleset *reload(struct tu_tree *t, struct kruleset *prev, struct kdiags *d,
			       struct kchanges *c)
{
	struct kruleset *rs = NULL;
	kchanges_free(c);
	kdiags_free(d);
	assert_int_equal(kruleset_load(t->dirs, 3, false, prev, &rs, d, c), 0);
	kruleset_free(prev);
	return rs;
}

static char *describe_set(const struct kruleset *rs)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < rs->n_rules; i++) {
		if (i)
			strbuf_puts(&sb, "; ");
		describe(rs->rules[i], &sb);
	}
	return strbuf_steal(&sb);
}

#define assert_rules(rs, want)                     \
	do {                                       \
		char *got_ = describe_set(rs);     \
		assert_string_equal(got_, (want)); \
		free(got_);                        \
	} while (0)

static void test_dirs(void **state)
{
	(void)state;
	struct tu_tree t;
	tu_tree_make(&t);
	tu_write(t.lib, "50-v.yaml", BASE, 0644);
	/* layered by name: etc's 20-t.yaml hides lib's, whatever it says */
	write_dropin(t.lib, "20-t.yaml", "rules:\n  - name: hot\n    timeout: 1s\n");
	write_dropin(t.etc, "20-t.yaml", "rules:\n  - name: hot\n    timeout: 2s\n");
	/* ordered by name across directories: lib's 30- comes after etc's 20- */
	write_dropin(t.lib, "30-off.yaml", "rules:\n  - name: disk\n    enabled: false\n");
	write_dropin(t.run, "10-first.yaml", "rules:\n  - name: hot\n    timeout: 9s\n");
	/* not drop-ins */
	write_dropin(t.etc, "README", "not yaml: [");
	write_dropin(t.etc, ".hidden.yaml", "rules: [");

	struct kdiags d = {0};
	struct kentries e = {0};
	assert_int_equal(kentries_scan(t.dirs, 3, false, &e, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.v[0].n_dropins, 3);
	char *want0 = tu_printf("%s/50-v.yaml.d/10-first.yaml", t.run);
	char *want1 = tu_printf("%s/50-v.yaml.d/20-t.yaml", t.etc);
	char *want2 = tu_printf("%s/50-v.yaml.d/30-off.yaml", t.lib);
	assert_string_equal(e.v[0].dropins[0].path, want0);
	assert_string_equal(e.v[0].dropins[1].path, want1);
	assert_string_equal(e.v[0].dropins[2].path, want2);
	kentries_free(&e);

	struct kchanges c = {0};
	struct kruleset *rs = reload(&t, NULL, &d, &c);
	assert_int_equal(d.n, 0);
	assert_rules(rs,
		     "hot: type=power signal=high run=/bin/cool timeout=2000; " DISK " off; " FS);
	const struct kfile *f1 = rs->files[0];
	assert_int_equal(f1->n_dropins, 3);

	/* unchanged: the very same file */
	rs = reload(&t, rs, &d, &c);
	assert_ptr_equal(rs->files[0], f1);
	assert_int_equal(c.n, 0);

	/* a drop-in masked by /dev/null in a higher directory: a change */
	char *mask = tu_printf("%s/50-v.yaml.d/30-off.yaml", t.etc);
	assert_int_equal(symlink("/dev/null", mask), 0);
	rs = reload(&t, rs, &d, &c);
	assert_int_equal(d.n, 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.v[0].kind, KCHANGE_CHANGED);
	assert_rules(rs, "hot: type=power signal=high run=/bin/cool timeout=2000; " DISK "; " FS);

	/* a drop-in that breaks: the last good version stays */
	const struct kfile *f2 = rs->files[0];
	write_dropin(t.etc, "40-bad.yaml", "rules:\n  - name: nope\n    enabled: false\n");
	rs = reload(&t, rs, &d, &c);
	assert_int_equal(d.n, 1);
	char *bad = tu_printf("%s/50-v.yaml.d/40-bad.yaml", t.etc);
	assert_string_equal(d.v[0].file, bad);
	assert_int_equal(d.v[0].line, 2);
	assert_int_equal(d.v[0].col, 11);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.v[0].kind, KCHANGE_BROKEN);
	assert_ptr_equal(rs->files[0], f2);

	/* it goes: the drop-ins that are left, read again */
	assert_int_equal(unlink(bad), 0);
	rs = reload(&t, rs, &d, &c);
	assert_int_equal(d.n, 0);
	assert_rules(rs, "hot: type=power signal=high run=/bin/cool timeout=2000; " DISK "; " FS);

	/* every drop-in goes: the vendor's file as it is */
	char *dd = tu_printf("%s/50-v.yaml.d", t.etc);
	tu_rm_rf(dd);
	char *dl = tu_printf("%s/50-v.yaml.d", t.lib);
	tu_rm_rf(dl);
	char *dr = tu_printf("%s/50-v.yaml.d", t.run);
	tu_rm_rf(dr);
	rs = reload(&t, rs, &d, &c);
	assert_int_equal(d.n, 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(rs->files[0]->n_dropins, 0);
	assert_rules(rs, HOT "; " DISK "; " FS);

	/* a drop-in directory of a file that is not there is left alone;
	 * one of 50-v.yaml that names no rule of it is an error */
	char *other = tu_printf("%s/60-other.yaml.d", t.etc);
	assert_int_equal(mkdir(other, 0755), 0);
	tu_write(other, "10-x.yaml", "rules:\n  - name: x\n", 0644);
	write_dropin(t.etc, "10-x.yaml", "rules:\n  - name: x\n");
	rs = reload(&t, rs, &d, &c);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "no rule named \"x\" in 50-v.yaml");

	/* a drop-in directory that is a file: the file is broken */
	tu_rm_rf(dd);
	tu_write(t.etc, "50-v.yaml.d", "x", 0644);
	rs = reload(&t, rs, &d, &c);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "a drop-in directory must be a directory");
	assert_int_equal(c.v[0].kind, KCHANGE_BROKEN);
	assert_int_equal(rs->n_files, 1);

	/* nor a symbolic link to one */
	char *sub = tu_subdir(t.root, "elsewhere");
	tu_write(sub, "10-x.yaml", "rules:\n  - name: hot\n", 0644);
	assert_int_equal(unlink(dd), 0);
	assert_int_equal(symlink(sub, dd), 0);
	rs = reload(&t, rs, &d, &c);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg,
			    "a drop-in directory must be a directory, not a symbolic link");
	assert_int_equal(rs->n_files, 1);
	free(sub);

	kruleset_free(rs);
	kchanges_free(&c);
	kdiags_free(&d);
	free(want0);
	free(want1);
	free(want2);
	free(mask);
	free(bad);
	free(dd);
	free(dl);
	free(dr);
	free(other);
	tu_tree_free(&t);
}

/* With trust, a drop-in (or its directory) writable by others is refused,
 * and the file it would change is broken, not loaded without it. */
static void test_trust(void **state)
{
	(void)state;
	if (geteuid() != 0)
		tu_skip("needs root: the files must be root's for the rest to be trusted");
	struct tu_tree t;
	tu_tree_make(&t);
	tu_write(t.lib, "50-v.yaml", BASE, 0644);
	write_dropin(t.etc, "10-off.yaml", "rules:\n  - name: hot\n    enabled: false\n");
	char *p = tu_printf("%s/50-v.yaml.d/10-off.yaml", t.etc);
	assert_int_equal(chmod(p, 0666), 0);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(chmod(t.dirs[i], 0755), 0);
	assert_int_equal(chmod(t.root, 0755), 0);
	struct kdiags d = {0};
	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_load(t.dirs, 3, true, NULL, &rs, &d, NULL), 0);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].file, p);
	assert_int_equal(rs->n_files, 0);
	kruleset_free(rs);
	kdiags_free(&d);
	free(p);
	tu_tree_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge),	     cmocka_unit_test(test_all_errors),
		cmocka_unit_test(test_tree_origins), cmocka_unit_test(test_dirs),
		cmocka_unit_test(test_trust),
	};
	return tu_result(cmocka_run_group_tests(tests, NULL, NULL));
}
