/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rules: the model (rule.c), and the parser of one rule file
 * (rules-parse.c).  krules_parse() is a pure function of its input (and of
 * the user database, for "user:"), so a fuzzer can drive it.
 */
#ifndef KEVENT_RULES_H
#define KEVENT_RULES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "diag.h"
#include "event.h"
#include "rlimits.h"
#include "pattern.h"
#include "unitprops.h"

#define KRULE_NAME_MAX 128
/* notify: at most this many targets, each a name of keventd.yaml(5) */
#define KRULE_NOTIFY_MAX	 32
#define KRULE_NOTIFY_NAME_MAX	 64
#define KRULE_NOTIFY_TEXT_MAX	 (64 * 1024)
#define KRULE_FILE_MAX_BYTES	 (1024 * 1024)
#define KRULE_DEFAULT_TIMEOUT_MS 60000
/* share: at most this many names, each a user's or "@" and a group's
 * (krule_share_name_valid()) */
#define KRULE_SHARE_MAX	     64
#define KRULE_SHARE_NAME_MAX 256

enum kpayload_kind { KPT_GLOB, KPT_CMP, KPT_RANGE };
enum kcmp_op { KCMP_GT, KCMP_GE, KCMP_LT, KCMP_LE, KCMP_EQ };

struct kpayload_test {
	char *key;
	char *text; /* as written, for explanations */
	enum kpayload_kind kind;
	struct kpattern_list globs; /* KPT_GLOB */
	enum kcmp_op op;	    /* KPT_CMP */
	int64_t a, b;		    /* KPT_CMP: a; KPT_RANGE: a..b */
};

struct kfile;

/* A rule's user, looked up once when the rule is loaded so that no run
 * waits on the user database (NSS may be a network service): the ids and
 * the supplementary groups the handler gets.  A bare uid with no passwd
 * entry has its uid as gid and no supplementary groups. */
struct kuser_ids {
	uid_t uid;
	gid_t gid;
	size_t n_groups;
	gid_t groups[];
};

/* Limits of a run's own cgroup (keventd.rules(5): memory_max, tasks_max,
 * cpu_weight), in systemd's units and meanings.  0: not given. */
#define KCG_INFINITY UINT64_MAX
struct kcg_limits {
	uint64_t memory_max; /* bytes, or KCG_INFINITY */
	uint64_t tasks_max;  /* processes and threads, or KCG_INFINITY */
	uint32_t cpu_weight; /* 1..10000 */
};

/* What few rules set: kept out of line, so that the common rule is small
 * (10,000 rules are a megabyte smaller).  A rule without any of it has
 * extra NULL and reads the defaults through krule_extra(). */
enum krule_key { KRULE_KEY_OBJECT, KRULE_KEY_RULE, KRULE_KEY_PAYLOAD };
struct krule_extra {
	uint64_t timeout_ms;
	char *user;		/* NULL: the daemon's user */
	struct kuser_ids *ids;	/* with user: resolved at load */
	struct krlimit *limits; /* n_limits of them; NULL when none */
	size_t n_limits;
	struct kcg_limits *cg_limits; /* NULL when none */
	uint32_t rl_count;
	uint64_t rl_period_ms; /* 0: no rate limit */
	/* what the rate limit counts by (key:) */
	enum krule_key key;
	char *key_prop;		      /* KRULE_KEY_PAYLOAD: the property's name */
	struct kunitprop *unit_props; /* transient: unit_properties, in file order */
	size_t n_unit_props;
	/* notify: the targets of keventd.yaml's notify: section it sends to
	 * (NULL-terminated; NULL: none), and its title: and message:
	 * templates (NULL: the defaults, keventd.rules(5)) */
	char **notify;
	char *notify_title, *notify_message;
	/* share: the user instances a system rule's events are forwarded to
	 * beyond what the policy lets them see (keventd.rules(5), SHARE):
	 * share_users, every user's ("share: users"); else share, the names
	 * of users and, "@" first, of groups (NULL-terminated; NULL: none) */
	bool share_users;
	char **share;
};

/* Which of a rule's lists are another rule's of the same file, shared
 * because they are equal (most rules of a file repeat their type, object
 * and program): krule.shared, freed only by the rule that owns them. */
enum {
	KRULE_SHARED_TYPE = 1 << 0,
	KRULE_SHARED_OBJECT = 1 << 1,
	KRULE_SHARED_SIGNAL = 1 << 2,
	KRULE_SHARED_SOURCE = 1 << 3,
	KRULE_SHARED_RUN = 1 << 4,
};

struct krule {
	char *name;
	const struct kfile *file;
	unsigned line, col; /* where the rule starts */
	unsigned index;	    /* position in its file, from 0 */

	uint8_t type_mask; /* bit per enum kevent_type; all when not given */
	bool no_new_privs : 1, last : 1;
	bool transient : 1; /* runs as a transient systemd service (transient.h) */
	bool session : 1;   /* session: active: in the active session's user's name */
	/* set by the daemon, not the file: a rule this machine cannot run
	 * (transient: true without systemd), reported as an error at load and
	 * never matched */
	bool refused : 1;
	/* enabled: false: kept, listed, never matched */
	bool disabled : 1;
	/* a condition's set or clear (struct kcond_def), not a rule */
	bool cond : 1;
	uint8_t shared; /* KRULE_SHARED_* */
	struct kpattern_list type, object, signal, source;
	struct kpayload_test *payload;
	size_t n_payload;

	char **run;		   /* argv templates, NULL-terminated; NULL when none */
	char *shell;		   /* script for /bin/sh -c; NULL when none */
	uint64_t debounce_ms;	   /* 0: none; else runs once per quiet DURATION (debounce.h) */
	struct krule_extra *extra; /* NULL: the defaults (krule_extra()) */
};

extern const struct krule_extra krule_extra_default;
/* r's rarely set keys: its own, or the defaults. */
static inline const struct krule_extra *krule_extra(const struct krule *r)
{
	return r->extra ? r->extra : &krule_extra_default;
}

/*
 * A condition (keventd.rules(5), CONDITIONS): a state of an object that
 * one kind of event sets and another clears, declared beside the rules.
 * set and clear are match-only rules (no run), indexed apart from the
 * rules (kruleset.conds); their index in the file is the condition's.
 */
#define KCOND_NAME_MAX 64
enum kcond_severity { KCOND_INFO, KCOND_WARNING, KCOND_CRITICAL };
enum kcond_remind {
	KCOND_REMIND_NONE,
	KCOND_REMIND_DAILY,
	KCOND_REMIND_DIMINISHING,
	KCOND_REMIND_EVERY
};
struct kcond_def {
	char *name; /* [a-z0-9-]+ */
	const struct kfile *file;
	unsigned line, col;
	struct krule set, clear; /* clear: has_clear */
	bool has_clear;
	enum kcond_severity severity;
	enum kcond_remind remind;
	uint64_t remind_ms; /* KCOND_REMIND_EVERY */
	uint64_t expire_ms; /* 0: never */
	char *key_prop;	    /* key: payload.NAME; NULL: a row per object */
};

const char *kcond_severity_name(enum kcond_severity s);
/* The severity of a name, or -1. */
int kcond_severity_from_name(const char *s);
/* The condition whose set or clear r is; NULL for a rule. */
const struct kcond_def *kcond_def_of(const struct krule *r);

/* One parsed rule file.  Shared, reference-counted, between rulesets so
 * that an unchanged or broken file keeps its rules across reloads. */
struct kfile {
	unsigned refs;
	char *path; /* as opened */
	char *name; /* base name: what orders and overrides files */
	struct krule *rules;
	size_t n_rules;
	struct kcond_def *conds; /* its conditions: */
	size_t n_conds;
	/* identity of what was read, to skip re-parsing unchanged files */
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns, ctime_ns;
	/* the drop-ins applied to it (keventd.rules(5)), in order, and what
	 * was read of each: a change to any of them is a change to the file */
	struct kfile_dropin *dropins;
	size_t n_dropins;
};

struct kfile_dropin {
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns, ctime_ns;
};

/* A reference more on f (may be NULL); the last unref frees it and its rules. */
struct kfile *kfile_ref(struct kfile *f);
void kfile_unref(struct kfile *f);
static inline void kfile_unrefp(struct kfile **f)
{
	kfile_unref(*f);
}

/* Frees what x holds, not x itself. */
void krule_extra_release(struct krule_extra *x);

/* Whether s may stand in share: a user's name, or "@" and a group's: 1 to
 * KRULE_SHARE_NAME_MAX bytes of [A-Za-z0-9._-], the first not '-' nor
 * '.', and a last '$' allowed (a machine account), as useradd(8) takes. */
bool krule_share_name_valid(const char *s);

/* Whether r has a handler: a 'run' or a 'shell'. */
bool krule_runs_something(const struct krule *r);
/* What r's rate limit counts ev by: its object, "" for the whole rule, or
 * the value of the payload property of key: (empty when it is missing). */
const char *krule_limit_key(const struct krule *r, const struct kevent *ev);

/*
 * Parses a rule file's contents.  On success returns 0 and a new kfile with
 * refs 1.  On errors in the file returns -EINVAL and appends every error
 * found to diags (all of them, not just the first).  -ENOMEM on memory.
 */
int krules_parse(const char *buf, size_t len, const char *path, struct kfile **out,
		 struct kdiags *diags);

/* krules_parse()'s two halves, for a file that is made of several (its
 * drop-ins, dropin.h).  krules_read_tree() checks the size, NUL bytes and
 * the YAML syntax: 0 and *root (NULL for an empty document), -EINVAL with
 * the error in diags, or -ENOMEM.  krules_from_tree() checks the schema, as
 * krules_parse() does; each error names the file of its node (ynode.file,
 * path when NULL). */
struct ynode;
int krules_read_tree(const char *buf, size_t len, const char *path, struct ynode **root,
		     struct kdiags *diags);
int krules_from_tree(const struct ynode *root, const char *path, struct kfile **out,
		     struct kdiags *diags);

#endif
