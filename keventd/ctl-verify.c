// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl verify [PATH]...: lint rule files, and directories as keventd
 * would load them. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "options.h"
#include "source-trace.h"
#include "ruleset.h"
#include "transient-run.h"

struct tally {
	size_t files, rules, warnings;
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
		ctl_print(stdout,
			  "%s:%u:%u: warning: rule %s: '%s' needs systemd, which is "
			  "not the service manager here: keventd would not load the rule on "
			  "this machine",
			  f->path, r->line, r->col, r->name,
			  r->session ? "session: active" : "transient: true");
		t->warnings++;
	}
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
		warn_transient(f, t);
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
	/* whether this kernel has the tracepoints and takes their filters:
	 * what keventd checks at its start */
	if (rc == 0 && *checked && ko->trace.n)
		rc = ktrace_config_check(&ko->trace, d);
	const char *warn = *checked ? kmqtt_config_warning(&ko->mqtt) : NULL;
	if (warn) {
		ctl_print(stdout, "%s:%u:%u: warning: mqtt: %s", path, ko->mqtt.url_line,
			  ko->mqtt.url_col, warn);
		t->warnings++;
	}
	return rc;
}

int ctl_verify(struct ctl *c, int argc, char **argv)
{
	enum { O_CONFIG = 256 };
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
					     {"config", required_argument, NULL, O_CONFIG},
					     {0}};
	bool quiet = false;
	const char *config = NULL;
	int o;
	(void)c;
	while ((o = getopt_long(argc, argv, "+hq", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl verify [-q] [--config FILE] [PATH]...\n"
			       "Checks rule files, or the .yaml files of directories (default: the "
			       "three rule directories),\n"
			       "and keventd's configuration file (--config, or a FILE whose keys "
			       "are "
			       "keventd.yaml's;\n"
			       "with no PATH, the default one when it exists).\n");
			return 0;
		}
		if (o == 'q')
			quiet = true;
		else if (o == O_CONFIG)
			config = optarg;
		else
			return ctl_option_error("verify");
	}
	struct kdiags d = {0};
	struct tally t = {0};
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
	size_t checked_configs = 0;
	if (config || !n_paths) {
		bool checked;
		rc = check_config(&ko, config ? config : KEVENT_DEFAULT_CONFIG, !config, &checked,
				  &t, &d);
		checked_configs += checked;
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
	if (rc < 0) {
		fprintf(stderr, "keventctl: %s\n", strerror(-rc));
		kdiags_free(&d);
		return 1;
	}
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < d.n; i++) {
		strbuf_reset(&sb);
		kdiag_format(&d.v[i], &sb);
		printf("%s\n", strbuf_str(&sb));
	}
	strbuf_release(&sb);
	if (!quiet && checked_configs)
		fprintf(stderr, "%zu configuration file%s, ", checked_configs,
			checked_configs == 1 ? "" : "s");
	if (!quiet)
		fprintf(stderr, "%zu rule file%s, %zu rule%s, %zu error%s", t.files,
			t.files == 1 ? "" : "s", t.rules, t.rules == 1 ? "" : "s", d.n,
			d.n == 1 ? "" : "s");
	if (!quiet && t.warnings)
		fprintf(stderr, ", %zu warning%s", t.warnings, t.warnings == 1 ? "" : "s");
	if (!quiet)
		fputc('\n', stderr);
	int status = d.n ? 1 : 0;
	kdiags_free(&d);
	return status;
}
