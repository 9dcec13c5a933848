// SPDX-License-Identifier: GPL-2.0-or-later
/* Rule directories: layering, masking, ordering, symlinks, trust, reloads. */
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ruledirs.h"
#include "testutil.h"
#include "util.h"

/* A rule file with one rule called name. */
static char *one_rule(const char *name)
{
	return tu_printf("rules:\n  - name: %s\n    run: [/bin/true]\n", name);
}

static void write_rule(const char *dir, const char *file, const char *rule)
{
	char *y = one_rule(rule);
	tu_write(dir, file, y, 0644);
	free(y);
}

static void link_at(const char *target, const char *dir, const char *name)
{
	char *p = tu_printf("%s/%s", dir, name);
	assert_int_equal(symlink(target, p), 0);
	free(p);
}

static void print_diags(const struct kdiags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		char *s = tu_diag(&d->v[i]);
		print_message("diag: %s\n", s);
		free(s);
	}
}

static bool has_diag(const struct kdiags *d, const char *file, const char *msg_prefix)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].file, file) == 0 &&
		    strncmp(d->v[i].msg, msg_prefix, strlen(msg_prefix)) == 0)
			return true;
	return false;
}

static void test_layering(void **state)
{
	(void)state;
	struct tu_tree t;
	tu_tree_make(&t);
	write_rule(t.lib, "10-a.yaml", "a-lib");
	/* replaced files are never read: this one is not even YAML */
	tu_write(t.lib, "50-same.yaml", "rules: [\n", 0644);
	write_rule(t.lib, "60-masked.yaml", "masked-lib");
	write_rule(t.lib, "61-empty.yaml", "empty-lib");
	write_rule(t.lib, "70-over.yaml", "over-lib");
	write_rule(t.lib, ".hidden.yaml", "hidden");
	write_rule(t.lib, "README", "readme");
	write_rule(t.lib, "90-x.yml", "yml");
	write_rule(t.lib, "90-x.yaml~", "backup");
	write_rule(t.lib, "90-x.yaml.dpkg-old", "dpkg");
	write_rule(t.run, "40-d.yaml", "d-run");
	write_rule(t.run, "70-over.yaml", "over-run");
	tu_write(t.run, "61-empty.yaml", "", 0644);
	write_rule(t.etc, "20-b.yaml", "b-etc");
	write_rule(t.etc, "50-same.yaml", "same-etc");
	link_at("/dev/null", t.etc, "60-masked.yaml");

	struct kdiags d = {0};
	struct kentries e = {0};
	assert_int_equal(kentries_scan(t.dirs, 3, false, &e, &d), 0);
	print_diags(&d);
	assert_int_equal(d.n, 0);

	static const struct {
		const char *name;
		int layer; /* 0 etc, 1 run, 2 lib */
		bool masked;
	} want[] = {
		{"10-a.yaml", 2, false},    {"20-b.yaml", 0, false},	 {"40-d.yaml", 1, false},
		{"50-same.yaml", 0, false}, {"60-masked.yaml", 0, true}, {"61-empty.yaml", 1, true},
		{"70-over.yaml", 1, false},
	};
	assert_int_equal(e.n, ARRAY_SIZE(want));
	for (size_t i = 0; i < e.n; i++) {
		char *path = tu_printf("%s/%s", t.dirs[want[i].layer], want[i].name);
		assert_string_equal(e.v[i].name, want[i].name);
		assert_string_equal(e.v[i].path, path);
		assert_int_equal(e.v[i].masked, want[i].masked);
		assert_false(e.v[i].refused);
		free(path);
	}
	kentries_free(&e);

	/* The ruleset: the files' rules in file-name order across directories. */
	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_load(t.dirs, 3, false, NULL, &rs, &d, NULL), 0);
	assert_int_equal(d.n, 0);
	static const char *const rules[] = {"a-lib", "b-etc", "d-run", "same-etc", "over-run"};
	assert_int_equal(rs->n_rules, ARRAY_SIZE(rules));
	assert_int_equal(rs->n_files, ARRAY_SIZE(rules));
	for (size_t i = 0; i < rs->n_rules; i++)
		assert_string_equal(rs->rules[i]->name, rules[i]);
	kruleset_free(rs);
	tu_tree_free(&t);
}

static void test_missing_dirs(void **state)
{
	(void)state;
	struct tu_tree t;
	tu_tree_make(&t);
	write_rule(t.lib, "10-a.yaml", "a");
	char *gone = tu_printf("%s/does-not-exist", t.root);
	const char *dirs[] = {gone, "/nonexistent/keventd/rules.d", t.lib};
	struct kdiags d = {0};
	struct kentries e = {0};
	assert_int_equal(kentries_scan(dirs, 3, false, &e, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(e.n, 1);
	kentries_free(&e);

	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_load(dirs, 2, false, NULL, &rs, &d, NULL), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(rs->n_rules, 0);
	assert_int_equal(rs->n_files, 0);
	kruleset_free(rs);
	free(gone);
	tu_tree_free(&t);
}

static void test_symlinks(void **state)
{
	(void)state;
	struct tu_tree t;
	tu_tree_make(&t);
	char *outside = tu_subdir(t.root, "outside");
	write_rule(outside, "x.yaml", "outside");
	write_rule(t.lib, "shared.rules", "shared"); /* not .yaml: not listed itself */
	char *out_target = tu_printf("%s/x.yaml", outside);
	link_at(out_target, t.etc, "10-out.yaml");
	link_at("../lib/shared.rules", t.etc, "20-in.yaml");
	link_at("../outside/x.yaml", t.etc, "30-rel-out.yaml");
	link_at("/nonexistent/x.yaml", t.etc, "40-broken.yaml");
	char *d_yaml = tu_subdir(t.etc, "50-dir.yaml");
	link_at("../../../../../../../../dev/null", t.run, "60-null.yaml");
	/* a refused file still hides the file of the same name below it */
	link_at(out_target, t.etc, "70-hides.yaml");
	write_rule(t.lib, "70-hides.yaml", "hidden-by-refused");

	struct kdiags d = {0};
	struct kentries e = {0};
	assert_int_equal(kentries_scan(t.dirs, 3, false, &e, &d), 0);
	print_diags(&d);
	assert_int_equal(e.n, 7);
	assert_string_equal(e.v[0].name, "10-out.yaml");
	assert_true(e.v[0].refused);
	assert_string_equal(e.v[1].name, "20-in.yaml");
	assert_false(e.v[1].refused);
	assert_false(e.v[1].masked);
	assert_string_equal(e.v[2].name, "30-rel-out.yaml");
	assert_true(e.v[2].refused);
	assert_string_equal(e.v[3].name, "40-broken.yaml");
	assert_true(e.v[3].refused);
	assert_string_equal(e.v[4].name, "50-dir.yaml");
	assert_true(e.v[4].refused);
	assert_string_equal(e.v[5].name, "60-null.yaml");
	assert_true(e.v[5].masked);
	assert_false(e.v[5].refused);
	assert_string_equal(e.v[6].name, "70-hides.yaml");
	assert_true(e.v[6].refused);
	assert_int_equal(d.n, 5);
	assert_true(has_diag(&d, e.v[0].path, "symlink points outside the rule directories"));
	assert_true(has_diag(&d, e.v[2].path, "symlink points outside the rule directories"));
	assert_true(has_diag(&d, e.v[3].path, "broken symlink"));
	assert_true(has_diag(&d, e.v[4].path, "not a regular file"));
	kentries_free(&e);
	kdiags_free(&d);

	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_load(t.dirs, 3, false, NULL, &rs, &d, NULL), 0);
	assert_int_equal(rs->n_rules, 1);
	assert_string_equal(rs->rules[0]->name, "shared");
	kruleset_free(rs);
	kdiags_free(&d);
	free(outside);
	free(out_target);
	free(d_yaml);
	tu_tree_free(&t);
}

/* The user instance's trust: a file of root's or of keventd's own user,
 * writable by no one else; another user's is refused. */
static void test_trust_user(void **state)
{
	(void)state;
	if (geteuid() != 0)
		tu_skip("needs root to make files of three owners and become nobody");
	char *dir = tu_mkdtemp();
	char *mine = tu_printf("%s/mine", dir), *roots = tu_printf("%s/roots", dir),
	     *other = tu_printf("%s/other", dir), *loose = tu_printf("%s/loose", dir);
	const char *paths[] = {mine, roots, other, loose};
	const uid_t owner[] = {65534, 0, 1, 65534};
	const mode_t mode[] = {0644, 0644, 0644, 0664};
	for (size_t i = 0; i < 4; i++) {
		int fd = open(paths[i], O_WRONLY | O_CREAT | O_EXCL, mode[i]);
		assert_true(fd >= 0);
		close(fd);
		if (chown(paths[i], owner[i], 0) < 0 || chmod(paths[i], mode[i]) < 0) {
			tu_rm_rf(dir);
			tu_skip("cannot chown: %s", strerror(errno));
		}
	}
	assert_int_equal(chmod(dir, 0755), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int bad = setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0;
		const char *want[] = {NULL, NULL, "owned by neither root nor keventd's user",
				      "writable by group or others"};
		for (size_t i = 0; !bad && i < 4; i++) {
			int fd = open(paths[i], O_RDONLY);
			const char *why = fd < 0 ? "cannot open" : kentry_check_fd(fd, true);
			bad |= want[i] ? !why || strcmp(why, want[i]) != 0 : why != NULL;
			if (bad)
				fprintf(stderr, "%s: %s\n", paths[i], why ? why : "(accepted)");
			close(fd);
		}
		_exit(bad);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	tu_rm_rf(dir);
	free(dir);
	free(mine);
	free(roots);
	free(other);
	free(loose);
}

static void test_trust(void **state)
{
	(void)state;
	if (geteuid() != 0)
		tu_skip("the trust checks need root (chown to root/nobody)");
	struct tu_tree t;
	tu_tree_make(&t);
	write_rule(t.lib, "10-ok.yaml", "ok");
	write_rule(t.lib, "20-group-writable.yaml", "gw");
	char *p20 = tu_printf("%s/20-group-writable.yaml", t.lib);
	assert_int_equal(chmod(p20, 0664), 0);
	write_rule(t.lib, "30-other-writable.yaml", "ow");
	char *p30 = tu_printf("%s/30-other-writable.yaml", t.lib);
	assert_int_equal(chmod(p30, 0646), 0);
	write_rule(t.lib, "40-nobody.yaml", "nobody");
	char *p40 = tu_printf("%s/40-nobody.yaml", t.lib);
	if (chown(p40, 65534, 65534) < 0) {
		/* e.g. root in a user namespace without nobody mapped */
		int err = errno;
		free(p20);
		free(p30);
		free(p40);
		tu_tree_free(&t);
		tu_skip("cannot chown to nobody: %s", strerror(err));
	}
	write_rule(t.lib, "50-readonly.yaml", "ro");
	char *p50 = tu_printf("%s/50-readonly.yaml", t.lib);
	assert_int_equal(chmod(p50, 0400), 0);
	write_rule(t.run, "60-in-bad-dir.yaml", "bad-dir");
	assert_int_equal(chmod(t.run, 0775), 0);
	link_at("../lib/40-nobody.yaml", t.etc, "70-link-to-nobody.yaml");

	struct kdiags d = {0};
	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_load(t.dirs, 3, true, NULL, &rs, &d, NULL), 0);
	print_diags(&d);
	assert_int_equal(rs->n_rules, 2);
	assert_string_equal(rs->rules[0]->name, "ok");
	assert_string_equal(rs->rules[1]->name, "ro");
	char *p70 = tu_printf("%s/70-link-to-nobody.yaml", t.etc);
	assert_true(has_diag(&d, p20, "refusing rule file writable by group or others"));
	assert_true(has_diag(&d, p30, "refusing rule file writable by group or others"));
	assert_true(has_diag(&d, p40, "refusing rule file not owned by root"));
	assert_true(has_diag(&d, p70, "refusing rule file not owned by root"));
	assert_true(has_diag(&d, t.run, "refusing rule directory writable by group or others"));
	assert_int_equal(d.n, 5);
	kruleset_free(rs);
	kdiags_free(&d);

	/* kruleset_load_file checks the open file too. */
	struct kfile *f = (struct kfile *)&d;
	assert_int_equal(kruleset_load_file(p40, true, NULL, &f, &d), 0);
	assert_null(f);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "refusing rule file: not owned by root");
	kdiags_free(&d);
	assert_int_equal(kruleset_load_file(p20, true, NULL, &f, &d), 0);
	assert_null(f);
	assert_string_equal(d.v[0].msg, "refusing rule file: writable by group or others");
	kdiags_free(&d);

	/* Without trust (not root) the same tree loads whole. */
	assert_int_equal(kruleset_load(t.dirs, 3, false, NULL, &rs, &d, NULL), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(rs->n_rules, 7);
	kruleset_free(rs);

	free(p20);
	free(p30);
	free(p40);
	free(p50);
	free(p70);
	tu_tree_free(&t);
}

static void test_kfile_load(void **state)
{
	(void)state;
	struct tu_tree t;
	tu_tree_make(&t);
	write_rule(t.lib, "a.yaml", "a");
	char *pa = tu_printf("%s/a.yaml", t.lib);
	struct kdiags d = {0};
	struct kfile *f = NULL, *g = NULL;
	assert_int_equal(kruleset_load_file(pa, false, NULL, &f, &d), 0);
	assert_non_null(f);
	assert_string_equal(f->path, pa);
	assert_string_equal(f->name, "a.yaml");
	assert_int_equal(f->refs, 1);
	/* unchanged: the same object, one more reference */
	assert_int_equal(kruleset_load_file(pa, false, f, &g, &d), 0);
	assert_ptr_equal(g, f);
	assert_int_equal(f->refs, 2);
	kfile_unref(g);
	/* changed contents: a new object */
	write_rule(t.lib, "a.yaml", "a-changed");
	assert_int_equal(kruleset_load_file(pa, false, f, &g, &d), 0);
	assert_non_null(g);
	assert_ptr_not_equal(g, f);
	assert_string_equal(g->rules[0].name, "a-changed");
	kfile_unref(g);
	kfile_unref(f);

	/* a missing file, a FIFO, a broken file: a diag and no output */
	char *gone = tu_printf("%s/gone.yaml", t.lib);
	f = (struct kfile *)&d;
	assert_int_equal(kruleset_load_file(gone, false, NULL, &f, &d), 0);
	assert_null(f);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "cannot open: No such file or directory");
	kdiags_free(&d);
	char *fifo = tu_printf("%s/fifo.yaml", t.lib);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(kruleset_load_file(fifo, false, NULL, &f, &d), 0);
	assert_null(f);
	assert_string_equal(d.v[0].msg, "refusing rule file: not a regular file");
	kdiags_free(&d);
	tu_write(t.lib, "bad.yaml", "rules:\n  - nmae: x\n", 0644);
	char *bad = tu_printf("%s/bad.yaml", t.lib);
	assert_int_equal(kruleset_load_file(bad, false, NULL, &f, &d), 0);
	assert_null(f);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].file, bad);
	assert_int_equal(d.v[0].line, 2);
	assert_int_equal(d.v[0].col, 5);
	kdiags_free(&d);
	free(gone);
	free(fifo);
	free(bad);
	free(pa);
	tu_tree_free(&t);
}

struct change {
	enum kchange_kind kind;
	const char *name;
};

static void check_changes(struct kchanges *c, const struct change *want, size_t n)
{
	for (size_t i = 0; i < c->n; i++)
		print_message("change: %s %s\n", kchange_kind_name(c->v[i].kind), c->v[i].name);
	assert_int_equal(c->n, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(c->v[i].kind, want[i].kind);
		assert_string_equal(c->v[i].name, want[i].name);
	}
	kchanges_free(c);
}

static const struct kfile *file_named(const struct kruleset *rs, const char *name)
{
	for (size_t i = 0; i < rs->n_files; i++)
		if (strcmp(rs->files[i]->name, name) == 0)
			return rs->files[i];
	return NULL;
}

static struct kruleset *reload(struct tu_tree *t, struct kruleset *prev, struct kdiags *d,
			       struct kchanges *c)
{
	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_load(t->dirs, 3, false, prev, &rs, d, c), 0);
	assert_non_null(rs);
	kruleset_free(prev);
	return rs;
}

static void test_reload(void **state)
{
	(void)state;
	struct tu_tree t;
	tu_tree_make(&t);
	write_rule(t.lib, "10-a.yaml", "a");
	write_rule(t.lib, "20-b.yaml", "b");
	struct kdiags d = {0};
	struct kchanges c = {0};

	struct kruleset *rs = reload(&t, NULL, &d, &c);
	assert_int_equal(d.n, 0);
	check_changes(
		&c,
		(const struct change[]){{KCHANGE_ADDED, "10-a.yaml"}, {KCHANGE_ADDED, "20-b.yaml"}},
		2);
	const struct kfile *a1 = file_named(rs, "10-a.yaml");
	const struct kfile *b1 = file_named(rs, "20-b.yaml");

	/* nothing changed: no changes, the very same files */
	rs = reload(&t, rs, &d, &c);
	assert_int_equal(d.n, 0);
	check_changes(&c, NULL, 0);
	assert_ptr_equal(file_named(rs, "10-a.yaml"), a1);
	assert_ptr_equal(file_named(rs, "20-b.yaml"), b1);

	/* b breaks: its last good version stays, a is still reused */
	tu_write(t.lib, "20-b.yaml", "rules:\n  - name: b2\n    nmae: oops\n", 0644);
	rs = reload(&t, rs, &d, &c);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].line, 3);
	kdiags_free(&d);
	check_changes(&c, (const struct change[]){{KCHANGE_BROKEN, "20-b.yaml"}}, 1);
	assert_ptr_equal(file_named(rs, "10-a.yaml"), a1);
	assert_ptr_equal(file_named(rs, "20-b.yaml"), b1);
	assert_int_equal(rs->n_rules, 2);
	assert_string_equal(rs->rules[1]->name, "b");

	/* still broken on the next reload: still the last good version */
	rs = reload(&t, rs, &d, &c);
	assert_int_equal(d.n, 1);
	kdiags_free(&d);
	check_changes(&c, (const struct change[]){{KCHANGE_BROKEN, "20-b.yaml"}}, 1);
	assert_ptr_equal(file_named(rs, "20-b.yaml"), b1);

	/* b fixed, a removed, c added, and a new broken file */
	write_rule(t.lib, "20-b.yaml", "b-fixed");
	char *pa = tu_printf("%s/10-a.yaml", t.lib);
	assert_int_equal(unlink(pa), 0);
	write_rule(t.etc, "30-c.yaml", "c");
	tu_write(t.run, "40-new-broken.yaml", "rules: {\n", 0644);
	rs = reload(&t, rs, &d, &c);
	assert_int_equal(d.n, 1);
	assert_memory_equal(d.v[0].msg, "YAML syntax error", 17);
	kdiags_free(&d);
	check_changes(&c,
		      (const struct change[]){{KCHANGE_CHANGED, "20-b.yaml"},
					      {KCHANGE_ADDED, "30-c.yaml"},
					      {KCHANGE_BROKEN, "40-new-broken.yaml"},
					      {KCHANGE_REMOVED, "10-a.yaml"}},
		      4);
	assert_int_equal(rs->n_rules, 2);
	assert_string_equal(rs->rules[0]->name, "b-fixed");
	assert_string_equal(rs->rules[1]->name, "c");

	/* a same-name file in a higher directory replaces b: a change */
	write_rule(t.etc, "20-b.yaml", "b-etc");
	rs = reload(&t, rs, &d, &c);
	check_changes(&c,
		      (const struct change[]){{KCHANGE_CHANGED, "20-b.yaml"},
					      {KCHANGE_BROKEN, "40-new-broken.yaml"}},
		      2);
	kdiags_free(&d);
	assert_string_equal(rs->rules[0]->name, "b-etc");

	/* masking c removes it */
	char *pc = tu_printf("%s/30-c.yaml", t.etc);
	assert_int_equal(unlink(pc), 0);
	link_at("/dev/null", t.etc, "30-c.yaml");
	rs = reload(&t, rs, &d, &c);
	kdiags_free(&d);
	check_changes(&c,
		      (const struct change[]){{KCHANGE_BROKEN, "40-new-broken.yaml"},
					      {KCHANGE_REMOVED, "30-c.yaml"}},
		      2);
	assert_int_equal(rs->n_rules, 1);

	kruleset_free(rs);
	free(pa);
	free(pc);
	tu_tree_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layering),   cmocka_unit_test(test_missing_dirs),
		cmocka_unit_test(test_symlinks),   cmocka_unit_test(test_trust),
		cmocka_unit_test(test_trust_user), cmocka_unit_test(test_kfile_load),
		cmocka_unit_test(test_reload),
	};
	return tu_result(cmocka_run_group_tests(tests, NULL, NULL));
}
