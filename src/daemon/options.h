/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * keventd's options, from its command line and from its configuration
 * file (keventd(8), FILES): the same names, the same checks, one place.
 * A file sets any long option by name ("max-children: 16") and has
 * sections: "mqtt:" (mqtt-config.h) and those of the sources, named after
 * each (source-type.h); the command line, applied after the file, wins.
 * Pure: errors are returned, never logged.  The keventd program sees it
 * through daemon.h (kdaemon_options_read()), keventctl verify and the
 * tests through this header.
 */
#ifndef KEVENT_OPTIONS_H
#define KEVENT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon.h"
#include "diag.h"
#include "log.h"
#include "mqtt-config.h"
#include "am-config.h"
#include "notify-config.h"
#include "source-type.h"

#define KOPTIONS_MAX_DIRS	  64
#define KOPTIONS_MAX_CHILDREN_MAX 65536
#define KOPTIONS_QUEUE_SIZE_MAX	  10000000
#define KOPTIONS_FILE_MAX_BYTES	  (1024 * 1024)

struct koptions {
	struct kdaemon_config cfg; /* cfg.rule_dirs: see koptions_finish() */
	const char *dirs[KOPTIONS_MAX_DIRS];
	size_t n_dirs; /* given so far; 0: the default directories */
	/* the default directories: NULL, the system's (ruledirs.h); else the
	 * user instance's (koptions_init_user()), o's own */
	const char **default_dirs;
	size_t n_default_dirs;
	bool dirs_from_file; /* a --rules-dir on the command line replaces them */
	int log_level;
	enum klog_format log_format;
	struct kmqtt_config mqtt;
	struct knotify_config notify;	  /* the section notify: */
	struct kam_config am;		  /* the section alertmanager: */
	struct ksource_sections sections; /* the sources' (source-type.h) */
	char **owned;			  /* the strings above that o holds copies of */
	size_t n_owned;
};

/* The defaults of keventd(8).  koptions_release() frees what was set. */
void koptions_init(struct koptions *o);
void koptions_release(struct koptions *o);
/* The defaults of the user instance (keventd(8), USER INSTANCE) over
 * koptions_init()'s: u's places (copied), the sources socket and
 * condition, and the trust checks on (a rule file is root's or the
 * user's own).  0 or -ENOMEM. */
struct kuserdirs;
int koptions_init_user(struct koptions *o, const struct kuserdirs *u);

/*
 * Sets the long option name (without its "--") to value: NULL for a flag
 * on the command line; from a file, a flag's value is true or false.
 * Returns 0; -ENOENT for a name keventd does not take; -EINVAL with why
 * saying what is wrong (naming the option as the command line or the
 * file spells it); -ENOMEM.  Nothing changes on an error.
 */
int koptions_set(struct koptions *o, const char *name, const char *value, bool from_file,
		 struct strbuf *why);

/* Whether name is a long option that takes a value (1), a flag (0), or
 * none that a file may set (-ENOENT: not keventd's, or help, version or
 * config). */
int koptions_takes_value(const char *name);

/*
 * Applies a configuration file's text to o: a mapping of long option
 * names (rules-dir may be a list) and the section mqtt.  Each mistake is
 * one diagnostic "path:LINE:COLUMN: ..." in diags, and sets nothing of
 * its own; returns 0, or -ENOMEM.
 */
int koptions_parse_file(struct koptions *o, const char *buf, size_t len, const char *path,
			struct kdiags *diags);
/* Whether a file's text is keventd.yaml rather than a rule file: a
 * mapping with an option or a section of keventd.yaml among its keys and
 * no "rules" (a rule file's one key).  Text that does not parse is not. */
bool koptions_is_config(const char *buf, size_t len);
/*
 * Reads and applies the file at path (at most KOPTIONS_FILE_MAX_BYTES).
 * With trust, it must be owned by root and writable by no one else, as a
 * rule file: it names what keventd runs.  Returns 0 (diagnostics in
 * diags), -ENOENT when there is no such file, or another -errno.
 */
int koptions_load_file(struct koptions *o, const char *path, bool trust, struct kdiags *diags);

/* Fills in cfg.rule_dirs (the default three when none were given),
 * cfg.mqtt and cfg.sections; a source whose section leaves it nothing to
 * read (trace: without an entry) is left out of cfg.sources, not of
 * cfg.allowed.  Call once every option is set. */
void koptions_finish(struct koptions *o);

#endif
