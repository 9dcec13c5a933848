// SPDX-License-Identifier: GPL-2.0-or-later
#include "options.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbus.h"
#include "history.h"
#include "journal.h"
#include "ruledirs.h"
#include "suggest.h"
#include "userdirs.h"
#include "yamltree.h"

enum opt {
	O_RULES,
	O_CONTROL,
	O_GROUP,
	O_SOURCES,
	O_UDEV,
	O_MAXCH,
	O_QUEUE,
	O_HISTORY,
	O_HISTORY_BYTES,
	O_STATE_DIR,
	O_LIB_DIR,
	O_USERS,
	O_JOURNAL_SIZE,
	O_LEVEL,
	O_FORMAT,
	O_DRY,
	O_DBUS,
};

/* clang-format off */
static const struct {
	const char *name;
	bool value; /* takes one; else a flag */
} options[] = {
	[O_RULES] = {"rules-dir", true},
	[O_CONTROL] = {"control", true},
	[O_GROUP] = {"control-group", true},
	[O_SOURCES] = {"sources", true},
	[O_UDEV] = {"udev-monitor", true},
	[O_MAXCH] = {"max-children", true},
	[O_QUEUE] = {"queue-size", true},
	[O_HISTORY] = {"history", true},
	[O_HISTORY_BYTES] = {"history-bytes", true},
	[O_STATE_DIR] = {"state-dir", true},
	[O_LIB_DIR] = {"lib-dir", true},
	[O_USERS] = {"users-socket", true},
	[O_JOURNAL_SIZE] = {"journal-size", true},
	[O_LEVEL] = {"log-level", true},
	[O_FORMAT] = {"log-format", true},
	[O_DRY] = {"dry-run", false},
	[O_DBUS] = {"dbus", false},
};
/* clang-format on */

void koptions_init(struct koptions *o)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	*o = (struct koptions){
		.cfg =
			{
				.control_path = KEVENT_DEFAULT_CONTROL,
				.control_gid = (gid_t)-1,
				.sources = (1u << KEVENT_SOURCE_MAX) - 1,
				.udev_monitor = KUDEV_AUTO,
				.max_children = (size_t)(2 * (cpus > 0 ? cpus : 1) + 4),
				.queue_size = KEVENT_DEFAULT_QUEUE_SIZE,
				.history = KEVENT_DEFAULT_HISTORY,
				.state_dir = KEVENT_DEFAULT_STATE_DIR,
				.lib_dir = KEVENT_DEFAULT_LIB_DIR,
				.journal_size = KJOURNAL_DEFAULT_SIZE,
				.trust = geteuid() == 0,
			},
		.log_level = LOG_INFO,
		.log_format = KLOG_TEXT,
	};
	kmqtt_config_init(&o->mqtt);
	knotify_config_init(&o->notify);
	kam_config_init(&o->am);
}

void koptions_release(struct koptions *o)
{
	for (size_t i = 0; i < o->n_owned; i++)
		free(o->owned[i]);
	free(o->owned);
	o->owned = NULL;
	o->n_owned = 0;
	free(o->default_dirs);
	o->default_dirs = NULL;
	kmqtt_config_release(&o->mqtt);
	ksource_sections_release(&o->sections);
	knotify_config_release(&o->notify);
	kam_config_release(&o->am);
}

int koptions_takes_value(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (strcmp(options[i].name, name) == 0)
			return options[i].value;
	return -ENOENT;
}

/* A copy of s that o keeps until koptions_release(). */
static const char *keep(struct koptions *o, const char *s)
{
	char **v = realloc(o->owned, (o->n_owned + 1) * sizeof(*v));
	if (!v)
		return NULL;
	o->owned = v;
	char *c = strdup(s);
	if (c)
		o->owned[o->n_owned++] = c;
	return c;
}

int koptions_init_user(struct koptions *o, const struct kuserdirs *u)
{
	const char *control = keep(o, u->control), *state = keep(o, u->state_dir),
		   *lib = keep(o, u->lib_dir);
	const char **dirs = calloc(u->n_rule_dirs, sizeof(*dirs));
	if (!control || !state || !lib || !dirs) {
		free(dirs);
		return -ENOMEM;
	}
	free(o->default_dirs);
	o->default_dirs = dirs;
	for (size_t i = 0; i < u->n_rule_dirs; i++)
		if (!(dirs[i] = keep(o, u->rule_dirs[i])))
			return -ENOMEM;
	o->n_default_dirs = u->n_rule_dirs;
	o->cfg.control_path = control;
	o->cfg.state_dir = state;
	o->cfg.lib_dir = lib;
	/* the kernel's sources are the system instance's */
	o->cfg.sources = 1u << KEVENT_SOURCE_SOCKET | 1u << KEVENT_SOURCE_CONDITION;
	o->cfg.trust = true;
	o->cfg.user = true;
	return 0;
}

static int parse_size(const char *s, size_t min, size_t max, size_t *out)
{
	int64_t v;
	if (parse_int64(s, &v) < 0 || v < (int64_t)min || (uint64_t)v > max)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

/* A number of bytes, with K, M or G for KiB, MiB or GiB, min..max. */
static int parse_bytes(const char *s, size_t min, size_t max, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;
	if (end == s || *s == '-' || errno)
		return -EINVAL;
	if (*end && !end[1])
		shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : -1;
	if (shift < 0 || (*end && (!shift || end[1])) || v > max >> shift || (v << shift) < min)
		return -EINVAL;
	*out = (size_t)(v << shift);
	return 0;
}

/* The --sources list as a bit set; -EINVAL on an unknown name. */
static int parse_sources(const char *list, unsigned *out)
{
	_cleanup_free_ char *copy = strdup(list);
	unsigned set = 0;
	if (!copy)
		return -ENOMEM;
	for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int s = kevent_source_from_name(tok);
		if (s < 0)
			return -EINVAL;
		set |= 1u << s;
	}
	*out = set;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "on"};
	static const char *const no[] = {"false", "False", "FALSE", "no", "off"};
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
		if (strcmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		if (strcmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	return -EINVAL;
}

static int fail(struct strbuf *why, const char *fmt, ...) _printf_(2, 3);
static int fail(struct strbuf *why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(why, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int koptions_set(struct koptions *o, const char *name, const char *value, bool from_file,
		 struct strbuf *why)
{
	size_t id = 0;
	while (id < ARRAY_SIZE(options) && strcmp(options[id].name, name) != 0)
		id++;
	if (id == ARRAY_SIZE(options))
		return -ENOENT;
	/* the option as the user wrote it */
	const char *dash = from_file ? "" : "--";
	bool flag = true;
	if (!options[id].value && from_file && parse_bool(value, &flag) < 0)
		return fail(why, "%s wants true or false, not '%s'", name, value);
	const char *kept = NULL;
	if (options[id].value && (id == O_RULES || id == O_CONTROL || id == O_STATE_DIR ||
				  id == O_LIB_DIR || id == O_USERS)) {
		kept = keep(o, value);
		if (!kept)
			return -ENOMEM;
	}
	size_t n;
	switch ((enum opt)id) {
	case O_RULES:
		if (!from_file && o->dirs_from_file)
			o->n_dirs = 0; /* the command line's list replaces the file's */
		o->dirs_from_file = from_file;
		if (o->n_dirs == KOPTIONS_MAX_DIRS)
			return fail(why, "too many %srules-dir", dash);
		o->dirs[o->n_dirs++] = kept;
		break;
	case O_CONTROL:
		o->cfg.control_path = kept;
		break;
	case O_GROUP: {
		struct group *g = getgrnam(value);
		int64_t gid;
		if (g)
			o->cfg.control_gid = g->gr_gid;
		else if (parse_int64(value, &gid) == 0 && gid >= 0 && gid < (gid_t)-1)
			o->cfg.control_gid = (gid_t)gid;
		else
			return fail(why, "unknown group '%s'", value);
		break;
	}
	case O_SOURCES: {
		unsigned set;
		int rc = parse_sources(value, &set);
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0) {
			_cleanup_strbuf_ struct strbuf names = STRBUF_INIT;
			for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
				strbuf_printf(&names, "%s%s", i ? ", " : "",
					      kevent_source_name((enum kevent_source)i));
			return fail(why, "unknown source in '%s' (%s)", value, strbuf_str(&names));
		}
		o->cfg.sources = set;
		break;
	}
	case O_UDEV:
		if (strcmp(value, "auto") == 0)
			o->cfg.udev_monitor = KUDEV_AUTO;
		else if (strcmp(value, "udev") == 0)
			o->cfg.udev_monitor = KUDEV_UDEV;
		else if (strcmp(value, "kernel") == 0)
			o->cfg.udev_monitor = KUDEV_KERNEL;
		else
			return fail(why, "%sudev-monitor wants auto, udev or kernel, not '%s'",
				    dash, value);
		break;
	case O_MAXCH:
		if (parse_size(value, 1, KOPTIONS_MAX_CHILDREN_MAX, &n) < 0)
			return fail(why, "%smax-children wants 1..%d, not '%s'", dash,
				    KOPTIONS_MAX_CHILDREN_MAX, value);
		o->cfg.max_children = n;
		break;
	case O_QUEUE:
		if (parse_size(value, 1, KOPTIONS_QUEUE_SIZE_MAX, &n) < 0)
			return fail(why, "%squeue-size wants 1..%d, not '%s'", dash,
				    KOPTIONS_QUEUE_SIZE_MAX, value);
		o->cfg.queue_size = n;
		break;
	case O_HISTORY:
		if (parse_size(value, 0, KHISTORY_MAX, &n) < 0)
			return fail(why, "%shistory wants 0..%d, not '%s'", dash, KHISTORY_MAX,
				    value);
		o->cfg.history = n;
		break;
	case O_HISTORY_BYTES:
		if (parse_bytes(value, KHISTORY_BYTES_MIN, KHISTORY_BYTES_MAX, &n) < 0)
			return fail(why,
				    "%shistory-bytes wants a size of 4K..1024G (bytes, or with K, "
				    "M or G), not '%s'",
				    dash, value);
		o->cfg.history_bytes = n;
		break;
	case O_STATE_DIR:
		if (value[0] != '/')
			return fail(why, "%sstate-dir wants an absolute path, not '%s'", dash,
				    value);
		o->cfg.state_dir = kept;
		break;
	case O_LIB_DIR:
		if (strcmp(value, "none") == 0) {
			o->cfg.lib_dir = NULL;
			break;
		}
		if (value[0] != '/')
			return fail(why, "%slib-dir wants an absolute path or none, not '%s'", dash,
				    value);
		o->cfg.lib_dir = kept;
		break;
	case O_USERS:
		o->cfg.users_none = strcmp(value, "none") == 0;
		if (o->cfg.users_none)
			break;
		if (value[0] != '/')
			return fail(why, "%susers-socket wants an absolute path or none, not '%s'",
				    dash, value);
		o->cfg.users_socket = kept;
		break;
	case O_JOURNAL_SIZE:
		if (parse_bytes(value, KJOURNAL_SIZE_MIN, KJOURNAL_SIZE_MAX, &n) < 0)
			return fail(why,
				    "%sjournal-size wants a size of 64K..1G (bytes, or with K, M "
				    "or G), not '%s'",
				    dash, value);
		o->cfg.journal_size = n;
		break;
	case O_LEVEL: {
		int level = klog_level_from_name(value);
		if (level < 0)
			return fail(why, "unknown log level '%s'", value);
		o->log_level = level;
		break;
	}
	case O_FORMAT:
		if (strcmp(value, "text") == 0)
			o->log_format = KLOG_TEXT;
		else if (strcmp(value, "json") == 0)
			o->log_format = KLOG_JSON;
		else
			return fail(why, "unknown log format '%s' (text, json)", value);
		break;
	case O_DRY:
		o->cfg.dry_run = flag;
		break;
	case O_DBUS:
		if (flag && !kdbus_available())
			return fail(why, "%sdbus: this keventd was built without D-Bus", dash);
		o->cfg.dbus = flag;
		break;
	}
	return 0;
}

static void section_names(char *buf, size_t size);
static const char *suggest_option(const char *name);

/* One option of the file: key k, value v. */
static int file_option(struct koptions *o, const struct ynode *k, const struct ynode *v,
		       const char *path, struct kdiags *diags)
{
	const char *name = k->value;
	int takes = koptions_takes_value(name);
	if (takes < 0) {
		char names[128];
		const char *near = suggest_option(name);
		if (near) {
			kdiags_add(diags, path, k->line, k->col,
				   "unknown option '%s': did you mean %s?", name, near);
			return 0;
		}
		section_names(names, sizeof(names));
		kdiags_add(diags, path, k->line, k->col,
			   "unknown option '%s' (a long option of keventd(8), or a section: %s)",
			   name, names);
		return 0;
	}
	const struct ynode *const *items = &v;
	size_t n_items = 1;
	if (v->kind == YNODE_SEQ && strcmp(name, "rules-dir") == 0) {
		items = (const struct ynode *const *)v->kids;
		n_items = v->n_kids;
		/* a list replaces what was there */
		o->n_dirs = 0;
		o->dirs_from_file = true;
	}
	for (size_t i = 0; i < n_items; i++) {
		const struct ynode *it = items[i];
		if (it->kind != YNODE_SCALAR || ynode_is_null(it)) {
			kdiags_add(diags, path, it->line, it->col, "%s wants %s, not %s", name,
				   strcmp(name, "rules-dir") == 0 ? "a directory or a list of them"
				   : takes			  ? "a value"
								  : "true or false",
				   ynode_kind_name(it));
			continue;
		}
		struct strbuf why = STRBUF_INIT;
		int rc = koptions_set(o, name, it->value, true, &why);
		if (rc == -EINVAL)
			kdiags_add(diags, path, it->line, it->col, "%s", strbuf_str(&why));
		strbuf_release(&why);
		if (rc == -ENOMEM)
			return rc;
	}
	return 0;
}

/* keventd.yaml's sections: a key whose value is a mapping (or a list) of
 * its own, parsed by the part of keventd it configures (keventd.yaml(5)):
 * the broker's, the notification targets', then each source's that has
 * one (source-type.h). */
static const char mqtt_section[] = "mqtt";
static const char notify_section[] = "notify";
static const char am_section[] = "alertmanager";

static bool is_section(const char *name)
{
	return strcmp(name, mqtt_section) == 0 || strcmp(name, notify_section) == 0 ||
	       strcmp(name, am_section) == 0 || ksource_type_of_section(name);
}

static int parse_section(struct koptions *o, const char *name, const struct ynode *v,
			 const char *path, struct kdiags *diags)
{
	if (strcmp(name, mqtt_section) == 0)
		return kmqtt_config_parse(&o->mqtt, v, path, diags);
	if (strcmp(name, notify_section) == 0)
		return knotify_config_parse(&o->notify, v, path, diags);
	if (strcmp(name, am_section) == 0)
		return kam_config_parse(&o->am, v, path, diags);
	return ksource_sections_parse(&o->sections, ksource_type_of_section(name), v, path, diags);
}

/* The sections' names, in that order, into words (at least
 * 3 + KEVENT_SOURCE_MAX); returns how many. */
static size_t sections_of(const char **words)
{
	size_t n = 0;
	words[n++] = mqtt_section;
	words[n++] = notify_section;
	words[n++] = am_section;
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
		if (ksource_types[i]->section_size)
			words[n++] = kevent_source_name((enum kevent_source)i);
	return n;
}

/* "mqtt, fs, trace": the sections, for a message */
static void section_names(char *buf, size_t size)
{
	const char *words[3 + KEVENT_SOURCE_MAX];
	size_t n = sections_of(words), len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", words[i]);
}

/* The option or section nearest to a misspelt name; NULL: none is near. */
static const char *suggest_option(const char *name)
{
	const char *words[ARRAY_SIZE(options) + 3 + KEVENT_SOURCE_MAX];
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		words[n++] = options[i].name;
	n += sections_of(words + n);
	return suggest_word(name, words, n);
}

bool koptions_is_config(const char *buf, size_t len)
{
	struct ynode *root = NULL;
	unsigned line, col;
	_cleanup_free_ char *msg = NULL;
	if (len > KOPTIONS_FILE_MAX_BYTES || memchr(buf, '\0', len) ||
	    ytree_parse(buf, len, &root, &line, &col, &msg) < 0 || !root)
		return false;
	bool option = false, rules = false;
	for (size_t i = 0; root->kind == YNODE_MAP && i + 1 < root->n_kids; i += 2) {
		const struct ynode *k = root->kids[i];
		if (k->kind != YNODE_SCALAR)
			continue;
		if (strcmp(k->value, "rules") == 0)
			rules = true;
		else if (is_section(k->value) || koptions_takes_value(k->value) >= 0)
			option = true;
	}
	ynode_free(root);
	return option && !rules;
}

int koptions_parse_file(struct koptions *o, const char *buf, size_t len, const char *path,
			struct kdiags *diags)
{
	if (len > KOPTIONS_FILE_MAX_BYTES) {
		kdiags_add(diags, path, 0, 0, "configuration file larger than %d bytes",
			   KOPTIONS_FILE_MAX_BYTES);
		return 0;
	}
	if (memchr(buf, '\0', len)) {
		kdiags_add(diags, path, 0, 0, "configuration file contains a NUL byte");
		return 0;
	}
	struct ynode *root = NULL;
	unsigned line, col;
	_cleanup_free_ char *msg = NULL;
	int rc = ytree_parse(buf, len, &root, &line, &col, &msg);
	if (rc == -EINVAL) {
		kdiags_add(diags, path, line, col, "%s", msg);
		return 0;
	}
	if (rc < 0)
		return rc;
	if (!root || ynode_is_null(root)) {
		ynode_free(root);
		return 0; /* an empty file sets nothing */
	}
	if (root->kind != YNODE_MAP) {
		kdiags_add(diags, path, root->line, root->col,
			   "a configuration file is a mapping of option names, not %s",
			   ynode_kind_name(root));
		ynode_free(root);
		return 0;
	}
	for (size_t i = 0; rc == 0 && i + 1 < root->n_kids; i += 2) {
		const struct ynode *k = root->kids[i], *v = root->kids[i + 1];
		if (k->kind != YNODE_SCALAR) {
			kdiags_add(diags, path, k->line, k->col, "an option is a name, not %s",
				   ynode_kind_name(k));
			continue;
		}
		bool twice = false;
		for (size_t j = 0; j < i && !twice; j += 2)
			twice = root->kids[j]->kind == YNODE_SCALAR &&
				strcmp(root->kids[j]->value, k->value) == 0;
		if (twice) {
			kdiags_add(diags, path, k->line, k->col, "'%s' given twice", k->value);
			continue;
		}
		if (is_section(k->value)) {
			rc = parse_section(o, k->value, v, path, diags);
			if (rc == -EINVAL)
				rc = 0;
		} else {
			rc = file_option(o, k, v, path, diags);
		}
	}
	ynode_free(root);
	return rc;
}

int koptions_load_file(struct koptions *o, const char *path, bool trust, struct kdiags *diags)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	const char *why = kentry_check_fd(fd, trust);
	if (why) {
		kdiags_add(diags, path, 0, 0, "refusing configuration file: %s", why);
		return 0;
	}
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int rc = read_fd(fd, KOPTIONS_FILE_MAX_BYTES, &buf, &len);
	if (rc == -EFBIG) {
		kdiags_add(diags, path, 0, 0, "configuration file larger than %d bytes",
			   KOPTIONS_FILE_MAX_BYTES);
		return 0;
	}
	if (rc < 0)
		return rc;
	return koptions_parse_file(o, buf, len, path, diags);
}

void koptions_finish(struct koptions *o)
{
	if (!o->n_dirs && o->default_dirs)
		for (size_t i = 0; i < o->n_default_dirs; i++)
			o->dirs[o->n_dirs++] = o->default_dirs[i];
	else if (!o->n_dirs)
		for (size_t i = 0; i < ARRAY_SIZE(kevent_default_rule_dirs); i++)
			o->dirs[o->n_dirs++] = kevent_default_rule_dirs[i];
	o->cfg.rule_dirs = o->dirs;
	o->cfg.n_rule_dirs = o->n_dirs;
	o->cfg.mqtt = o->mqtt.enabled ? &o->mqtt : NULL;
	o->cfg.notify = o->notify.n ? &o->notify : NULL;
	o->cfg.alertmanager = o->am.enabled ? &o->am : NULL;
	o->cfg.sections = &o->sections;
	o->cfg.allowed = o->cfg.sources;
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		const struct ksource_type *t = ksource_types[i];
		if (t->idle && t->idle(ksource_section(&o->sections, (enum kevent_source)i)))
			o->cfg.sources &= ~(1u << i);
	}
}

/* The rule directories as absolute paths, kept by o.  0 or -errno. */
static int absolute_dirs(struct koptions *o)
{
	for (size_t i = 0; i < o->cfg.n_rule_dirs; i++) {
		_cleanup_free_ char *abs = path_absolute(o->dirs[i]);
		if (!abs || !(o->dirs[i] = keep(o, abs)))
			return -errno;
	}
	o->cfg.rule_dirs = o->dirs;
	return 0;
}

int kdaemon_options_read(const char *config, const struct kuserdirs *user,
			 const struct kdaemon_arg *args, size_t n, struct koptions **out,
			 struct kdiags *diags, struct strbuf *why)
{
	_cleanup_(kdaemon_options_freep) struct koptions *o = malloc(sizeof(*o));
	if (!o) {
		strbuf_puts(why, strerror(ENOMEM));
		return -ENOMEM;
	}
	koptions_init(o);
	if (user && koptions_init_user(o, user) < 0) {
		strbuf_puts(why, strerror(ENOMEM));
		return -ENOMEM;
	}
	/* The file first, then the command line over it.  The default file
	 * is read only when it is there; one that is named must be. */
	const char *path = config ? config : user ? keep(o, user->config) : KEVENT_DEFAULT_CONFIG;
	if (!path) {
		strbuf_puts(why, strerror(ENOMEM));
		return -ENOMEM;
	}
	int rc = koptions_load_file(o, path, o->cfg.trust, diags);
	if (rc == -ENOENT && !config)
		rc = 0;
	if (rc < 0) {
		strbuf_printf(why, "cannot read %s: %s", path, strerror(-rc));
		return rc == -EINVAL ? -EIO : rc;
	}
	if (diags->n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		rc = koptions_set(o, args[i].name, args[i].value, false, why);
		if (rc < 0) {
			if (rc != -EINVAL)
				strbuf_puts(why, strerror(-rc));
			return rc;
		}
	}
	koptions_finish(o);
	/* read again at a reload, for what changes without a restart */
	o->cfg.config_path = path;
	/* the sources' sections as the kernel sees them (the tracepoints
	 * and their filters): a mistake is the file's, at its line, before
	 * anything starts */
	rc = ksource_sections_check(&o->sections, o->cfg.sources, diags);
	if (rc == 0 && diags->n)
		rc = -EINVAL;
	if (rc == 0 && (rc = absolute_dirs(o)) < 0)
		strbuf_printf(why, "cannot make the rule directories absolute: %s", strerror(-rc));
	else if (rc < 0 && rc != -EINVAL)
		strbuf_puts(why, strerror(-rc));
	if (rc == 0)
		*out = TAKE_PTR(o);
	return rc;
}

struct kdaemon_config *kdaemon_options_config(struct koptions *o)
{
	return &o->cfg;
}

void kdaemon_options_log(const struct koptions *o)
{
	klog_setup(o->log_level, o->log_format);
}

void kdaemon_options_free(struct koptions *o)
{
	if (!o)
		return;
	koptions_release(o);
	free(o);
}

void kdaemon_options_freep(struct koptions **o)
{
	kdaemon_options_free(*o);
}

bool kdaemon_dbus_available(void)
{
	return kdbus_available();
}
