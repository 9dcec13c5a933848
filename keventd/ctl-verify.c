// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl verify [PATH]...: lint rule files, and directories as keventd
 * would load them. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "desktop.h"
#include "options.h"
#include "plan.h"
#include "ruleset.h"
#include "transient-run.h"

struct tally {
	size_t files, rules, conds;
	struct kdiags warnings; /* printed with the errors, in order */
	const char *root;	/* programs are looked up under it (--root) */
	/* keventd.yaml's notify: when a configuration file was checked, for
	 * the targets rules name; NULL: none checked */
	const struct knotify_config *notify;
	const char *config;
	bool user; /* the user instance's rules (keventctl --user) */
};

/* A transient rule on a machine where systemd is not the service manager:
 * the file is right, but keventd would not load the rule here.  A warning,
 * so that rules can be checked on any machine before they are shipped. */
static void warn_transient(const struct kfile *f, struct tally *t)
{
	if (ktrun_available())
		return;
	for (size_t i = 0; i < f->n_rules; i++) {
		const struct krule *r = &f->rules[i];
		if (!r->transient)
			continue;
		kdiags_add(&t->warnings, f->path, r->line, r->col,
			   "rule %s: '%s' needs systemd, which is not the service manager here: "
			   "keventd would not load the rule on this machine",
			   r->name, r->session ? "session: active" : "transient: true");
	}
}

/* Whether prog, under the root of t, is a file that can run: 0, or -errno
 * (-ENOENT, -EACCES, -EISDIR). */
static int runnable(const struct tally *t, const char *prog)
{
	_cleanup_free_ char *path = NULL;
	struct stat st;
	if (asprintf(&path, "%s%s", t->root ? t->root : "", prog) < 0)
		return -ENOMEM;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EISDIR;
	return access(path, X_OK) < 0 ? -errno : 0;
}

/* A rule whose program is not there, or cannot run: a warning, not an
 * error, since the program may come with another package or later; found
 * as keventd finds it (an absolute path, or a name on the handlers' PATH,
 * keventd.rules(5)), under --root when given. */
static void warn_programs(const struct kfile *f, struct tally *t)
{
	for (size_t i = 0; i < f->n_rules; i++) {
		const struct krule *r = &f->rules[i];
		if (!r->run || !r->run[0])
			continue;
		const char *prog = r->run[0];
		int rc = -ENOENT;
		if (prog[0] == '/') {
			rc = runnable(t, prog);
		} else if (!strchr(prog, '/')) {
			for (const char *p = KEVENT_HANDLER_PATH; *p && rc < 0;) {
				size_t n = strcspn(p, ":");
				_cleanup_free_ char *cand = NULL;
				if (asprintf(&cand, "%.*s/%s", (int)n, p, prog) < 0)
					return;
				int r2 = runnable(t, cand);
				if (r2 == 0 || rc == -ENOENT)
					rc = r2;
				p += n + (p[n] == ':');
			}
		}
		if (rc == 0 || rc == -ENOMEM)
			continue;
		const char *where =
			prog[0] == '/' ? "" : " on keventd's PATH (" KEVENT_HANDLER_PATH ")";
		if (rc == -ENOENT)
			kdiags_add(&t->warnings, f->path, r->line, r->col,
				   "rule %s: program %s not found%s%s%s", r->name ? r->name : "?",
				   prog, where, t->root ? " under " : "", t->root ? t->root : "");
		else
			kdiags_add(&t->warnings, f->path, r->line, r->col,
				   "rule %s: program %s is not an executable file%s%s",
				   r->name ? r->name : "?", prog, t->root ? " under " : "",
				   t->root ? t->root : "");
	}
}

/* Files in a rule directory that keventd passes over: a rule file saved
 * as *.yml, or kept as *.yaml.bak, loads nothing, without a word. */
static void warn_ignored(const char *dir, struct tally *t)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	while (dp && (de = readdir(dp))) {
		const char *name = de->d_name, *dot = strrchr(name, '.');
		if (name[0] == '.' || str_has_suffix(name, ".yaml") ||
		    (!dot && name[strlen(name) - 1] != '~'))
			continue;
		_cleanup_free_ char *path = NULL;
		struct stat st;
		if (asprintf(&path, "%s/%s", dir, name) < 0)
			break;
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue; /* drop-in directories are DIR/NAME.yaml.d */
		kdiags_add(&t->warnings, path, 0, 0, "ignored: keventd reads only *.yaml");
	}
	if (dp)
		closedir(dp);
}

/* A rule that names a target keventd.yaml's notify: has not: keventd
 * logs it and sends nothing there. */
static void warn_notify(const struct kfile *f, struct tally *t)
{
	for (size_t i = 0; i < f->n_rules; i++) {
		const struct krule *r = &f->rules[i];
		for (char **n = krule_extra(r)->notify; n && *n; n++)
			if (strcmp(*n, KDESKTOP_TARGET) == 0) {
				if (!t->user)
					kdiags_add(&t->warnings, f->path, r->line, r->col,
						   "rule %s: notify: desktop is shown by a user "
						   "instance alone (keventd --user): the system "
						   "instance shows nothing",
						   r->name);
			} else if (t->notify && !knotify_config_find(t->notify, *n))
				kdiags_add(&t->warnings, f->path, r->line, r->col,
					   "rule %s: notify: no target '%s' in %s's notify:",
					   r->name, *n, t->config);
	}
}

struct finding {
	const struct kdiag *d;
	bool warning;
	size_t order; /* as found: the tie-break */
};

static int by_place(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	int c = strcmp(x->d->file, y->d->file);
	if (c)
		return c;
	if (x->d->line != y->d->line)
		return x->d->line < y->d->line ? -1 : 1;
	if (x->d->col != y->d->col)
		return x->d->col < y->d->col ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Errors and warnings together, by file, then line and column: a file's
 * findings in the order of its text (a file's own errors come after those
 * of the scan of its directory otherwise).  0 or -ENOMEM. */
/* --json: the findings, in the same order, as one JSON object with the
 * counts of the summary line. */
static void print_json(const struct finding *v, size_t n, const struct tally *t, size_t configs,
		       size_t errors)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_printf(&sb,
		      "{\"configuration_files\":%zu,\"rule_files\":%zu,\"rules\":%zu,"
		      "\"conditions\":%zu,\"errors\":%zu,\"warnings\":%zu,\"findings\":[",
		      configs, t->files, t->rules, t->conds, errors, n - errors);
	for (size_t i = 0; i < n; i++) {
		strbuf_puts(&sb, i ? ",{\"file\":" : "{\"file\":");
		strbuf_json(&sb, v[i].d->file);
		if (v[i].d->line)
			strbuf_printf(&sb, ",\"line\":%u,\"column\":%u", v[i].d->line, v[i].d->col);
		strbuf_printf(&sb, ",\"severity\":\"%s\",\"message\":",
			      v[i].warning ? "warning" : "error");
		strbuf_json(&sb, v[i].d->msg);
		strbuf_putc(&sb, '}');
	}
	strbuf_puts(&sb, "]}");
	puts(sb.oom ? "{}" : strbuf_str(&sb));
	strbuf_release(&sb);
}

/* Prints the errors and warnings sorted by place: a line each, or with
 * json (the counts of t and configs) one object. */
static int print_findings(const struct kdiags *errors, const struct kdiags *warnings,
			  const struct tally *t, size_t configs, bool json)
{
	size_t n = errors->n + warnings->n;
	_cleanup_free_ struct finding *v = calloc(n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct finding){i < errors->n ? &errors->v[i] : &warnings->v[i - errors->n],
					i >= errors->n, i};
	qsort(v, n, sizeof(*v), by_place);
	if (json) {
		print_json(v, n, t, configs, errors->n);
		return 0;
	}
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		strbuf_reset(&sb);
		if (!v[i].warning) {
			kdiag_format(v[i].d, &sb);
		} else {
			strbuf_put_escaped(&sb, v[i].d->file);
			if (v[i].d->line)
				strbuf_printf(&sb, ":%u:%u", v[i].d->line, v[i].d->col);
			strbuf_puts(&sb, ": warning: ");
			strbuf_put_escaped(&sb, v[i].d->msg);
		}
		printf("%s\n", strbuf_str(&sb));
	}
	strbuf_release(&sb);
	return 0;
}

static int check_entry(const struct kentry *en, struct tally *t, struct kdiags *d)
{
	struct kfile *f = NULL;
	int rc = kruleset_load_entry(en, ctl_trust(), NULL, &f, d);
	if (rc < 0)
		return rc;
	t->files++;
	if (f) {
		t->rules += f->n_rules;
		t->conds += f->n_conds;
		warn_transient(f, t);
		warn_programs(f, t);
		warn_notify(f, t);
	}
	kfile_unref(f);
	return 0;
}

/* A file alone, with the drop-ins of PATH.d/ beside it; a drop-in
 * (DIR/NAME.yaml.d/FILE.yaml) is checked with the file it changes,
 * DIR/NAME.yaml, and that file's other drop-ins. */
static int check_file(const char *arg, struct tally *t, struct kdiags *d)
{
	_cleanup_free_ char *dir = strdup(arg), *path = NULL;
	if (!dir)
		return -ENOMEM;
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir && (*slash = '\0', str_has_suffix(dir, ".yaml.d"))) {
		dir[strlen(dir) - 2] = '\0'; /* DIR/NAME.yaml */
		path = TAKE_PTR(dir);
		if (!(dir = strdup(path)))
			return -ENOMEM;
		slash = strrchr(dir, '/');
	} else if (!(path = strdup(arg))) {
		return -ENOMEM;
	} else if (slash) {
		*slash = '/';
	}
	const char *name = slash ? path + (slash - dir) + 1 : path;
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	if (strcmp(path, arg) != 0 && access(path, F_OK) < 0) {
		kdiags_add(d, arg, 0, 0,
			   "a drop-in of %s, which is not in %s: verify the rule directories "
			   "together (keventctl verify DIR...)",
			   name, dir);
		return 0;
	}
	struct kentry en = {.name = strdup(name), .path = strdup(path)};
	int rc = en.name && en.path ? 0 : -ENOMEM;
	if (rc == 0)
		rc = kentry_scan_dropins(&en, (const char *const[]){dir}, 1, ctl_trust(), d);
	if (rc == 0)
		rc = check_entry(&en, t, d);
	kentry_release(&en);
	return rc;
}

static int check_dirs(const char *const *dirs, size_t n, struct tally *t, struct kdiags *d)
{
	struct kentries e = {0};
	int rc = kentries_scan(dirs, n, ctl_trust(), &e, d);
	for (size_t i = 0; i < n; i++)
		warn_ignored(dirs[i], t);
	for (size_t i = 0; rc == 0 && i < e.n; i++)
		if (!e.v[i].masked && !e.v[i].refused)
			rc = check_entry(&e.v[i], t, d);
	kentries_free(&e);
	return rc;
}

/* Whether path is keventd.yaml rather than a rule file, by its keys. */
static bool is_config_file(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	return read_file(path, KOPTIONS_FILE_MAX_BYTES, &buf, &len) == 0 &&
	       koptions_is_config(buf, len);
}

/* keventd's configuration file at path into ko (its mistakes in d), and
 * its warnings; 0 or -ENOMEM.  missing_ok: no file is no mistake. */
static int check_config(struct koptions *ko, const char *path, bool missing_ok, bool *checked,
			struct tally *t, struct kdiags *d)
{
	int rc = koptions_load_file(ko, path, ctl_trust(), d);
	*checked = !(rc == -ENOENT && missing_ok);
	if (rc < 0 && rc != -ENOMEM) {
		if (*checked)
			kdiags_add(d, path, 0, 0, "cannot open: %s", strerror(-rc));
		rc = 0;
	}
	koptions_finish(ko);
	/* whether this kernel takes the sources' sections (has the
	 * tracepoints, takes their filters): what keventd checks at its start */
	if (rc == 0 && *checked)
		rc = ksource_sections_check(&ko->sections, ~0u, d);
	/* the secret files, as keventd reads them: others may not */
	if (rc == 0 && *checked)
		knotify_config_check_files(&ko->notify, path, d);
	if (rc == 0 && *checked)
		kam_config_check_files(&ko->am, path, d);
	const char *warn = *checked ? kmqtt_config_warning(&ko->mqtt) : NULL;
	if (warn)
		kdiags_add(&t->warnings, path, ko->mqtt.url_line, ko->mqtt.url_col, "mqtt: %s",
			   warn);
	return rc;
}

int ctl_verify(struct ctl *c, int argc, char **argv)
{
	enum { O_CONFIG = 256, O_ROOT };
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
					     {"quiet", no_argument, NULL, 'q'},
					     {"config", required_argument, NULL, O_CONFIG},
					     {"root", required_argument, NULL, O_ROOT},
					     {"json", no_argument, NULL, 'j'},
					     {0}};
	bool quiet = false, json = false;
	const char *config = NULL, *root = NULL;
	int o;
	/* options anywhere: "verify FILE -q" as well ("--" ends them) */
	while ((o = getopt_long(argc, argv, "hqj", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl verify [-q|--json] [--config FILE] [--root DIR] "
			       "[PATH]...\n"
			       "Checks rule files, or the .yaml files of directories (default: the "
			       "three rule directories),\n"
			       "and keventd's configuration file (--config, or a FILE whose keys "
			       "are "
			       "keventd.yaml's;\n"
			       "with no PATH, the default one when it exists).\n"
			       "--root DIR looks the rules' programs up under DIR, a staging "
			       "root.\n"
			       "--json: the findings and the counts as one JSON object.\n");
			return 0;
		}
		if (o == 'q')
			quiet = true;
		else if (o == 'j')
			json = quiet = true; /* the counts are in the object */
		else if (o == O_CONFIG)
			config = optarg;
		else if (o == O_ROOT)
			root = optarg;
		else
			return ctl_option_error("verify");
	}
	struct kdiags d = {0};
	struct tally t = {.root = root, .user = c->user != NULL};
	if (root && !root[strspn(root, "/")])
		t.root = NULL; /* --root / is the machine itself */
	int rc = 0;
	/* A FILE whose keys are keventd.yaml's is checked as a configuration
	 * file: the first, when --config names none, stands for --config. */
	size_t n = argc > optind ? (size_t)(argc - optind) : 0, n_paths = 0, n_configs = 0;
	_cleanup_free_ const char **paths = calloc(n + 1, sizeof(*paths));
	_cleanup_free_ const char **configs = calloc(n + 1, sizeof(*configs));
	if (!paths || !configs) {
		fprintf(stderr, "keventctl: %s\n", strerror(ENOMEM));
		return 1;
	}
	for (int i = optind; i < argc; i++) {
		if (is_config_file(argv[i]))
			configs[n_configs++] = argv[i];
		else
			paths[n_paths++] = argv[i];
	}
	size_t first_extra = 0;
	if (!config && n_configs)
		config = configs[first_extra++];
	/* keventd's configuration file: the one named, or with no PATH the
	 * default one when it is there; with no PATH, the rule directories
	 * it names are those checked */
	_cleanup_(koptions_release) struct koptions ko;
	koptions_init(&ko);
	if (c->user && koptions_init_user(&ko, c->user) < 0) {
		fprintf(stderr, "keventctl: %s\n", strerror(ENOMEM));
		return 1;
	}
	const char *default_config = ctl_default_config(c);
	size_t checked_configs = 0;
	if (config || !n_paths) {
		bool checked;
		rc = check_config(&ko, config ? config : default_config, !config, &checked, &t, &d);
		checked_configs += checked;
		if (checked) {
			t.notify = &ko.notify;
			t.config = config ? config : default_config;
		}
	}
	for (size_t i = first_extra; rc == 0 && i < n_configs; i++) {
		_cleanup_(koptions_release) struct koptions other;
		bool checked;
		koptions_init(&other);
		rc = check_config(&other, configs[i], false, &checked, &t, &d);
		checked_configs += checked;
	}
	if (rc == 0 && !n_paths)
		rc = check_dirs(ko.cfg.rule_dirs, ko.cfg.n_rule_dirs, &t, &d);
	/* The directories are one layered set, highest first, as with
	 * keventd's --rules-dir: a name in one hides it in the next, and a
	 * symlink may point into any of them.  Checked where the first is. */
	_cleanup_free_ int *err = calloc(n + 1, sizeof(*err)); /* stat()'s errno */
	_cleanup_free_ const char **dirs = calloc(n + 1, sizeof(*dirs));
	_cleanup_free_ bool *is_dir = calloc(n + 1, sizeof(*is_dir));
	if (!err || !dirs || !is_dir)
		rc = -ENOMEM;
	size_t n_dirs = 0;
	for (size_t i = 0; rc == 0 && i < n_paths; i++) {
		struct stat st;
		if (stat(paths[i], &st) < 0)
			err[i] = errno;
		else if ((is_dir[i] = S_ISDIR(st.st_mode)))
			dirs[n_dirs++] = paths[i];
	}
	for (size_t i = 0; rc == 0 && i < n_paths; i++) {
		if (err[i])
			kdiags_add(&d, paths[i], 0, 0, "%s", strerror(err[i]));
		else if (!is_dir[i])
			rc = check_file(paths[i], &t, &d);
		else if (paths[i] == dirs[0])
			rc = check_dirs(dirs, n_dirs, &t, &d);
	}
	if (rc == 0)
		rc = print_findings(&d, &t.warnings, &t, checked_configs, json);
	if (rc < 0) {
		fprintf(stderr, "keventctl: %s\n", strerror(-rc));
		kdiags_free(&d);
		kdiags_free(&t.warnings);
		return 1;
	}
	if (!quiet && checked_configs)
		fprintf(stderr, "%zu configuration file%s, ", checked_configs,
			checked_configs == 1 ? "" : "s");
	if (!quiet)
		fprintf(stderr, "%zu rule file%s, %zu rule%s, ", t.files, t.files == 1 ? "" : "s",
			t.rules, t.rules == 1 ? "" : "s");
	if (!quiet && t.conds)
		fprintf(stderr, "%zu condition%s, ", t.conds, t.conds == 1 ? "" : "s");
	if (!quiet)
		fprintf(stderr, "%zu error%s", d.n, d.n == 1 ? "" : "s");
	if (!quiet && t.warnings.n)
		fprintf(stderr, ", %zu warning%s", t.warnings.n, t.warnings.n == 1 ? "" : "s");
	if (!quiet)
		fputc('\n', stderr);
	int status = d.n ? 1 : 0;
	kdiags_free(&d);
	kdiags_free(&t.warnings);
	return status;
}
