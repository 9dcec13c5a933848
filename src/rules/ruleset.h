/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A ruleset: every rule file of the rule directories, layered and ordered,
 * with an index so that matching costs about the same for 10 rules as for
 * 10,000.  A new ruleset is built beside the old one and swapped in only
 * once it is complete; files that fail to load keep their last good version.
 */
#ifndef KEVENT_RULESET_H
#define KEVENT_RULESET_H

#include "diag.h"
#include "event.h"
#include "ruledirs.h"
#include "rules.h"
#include "util.h"

/*
 * Loads one rule file.  If old has the same path and the file is unchanged
 * (device, inode, size, mtime, ctime), returns a new reference to old.
 * Problems with the file go to diags and leave *out NULL; returns 0, or
 * -ENOMEM.
 */
int kruleset_load_file(const char *path, bool trust, struct kfile *old, struct kfile **out,
		       struct kdiags *diags);
/* The same for a file of kentries_scan() and its drop-ins (keventd.rules(5),
 * DROP-INS): one that is refused or does not apply makes the file broken. */
int kruleset_load_entry(const struct kentry *en, bool trust, struct kfile *old, struct kfile **out,
			struct kdiags *diags);

struct kbucket;

struct kruleset {
	struct kfile **files; /* ordered by name */
	size_t n_files;
	const struct krule **rules; /* every rule, in matching order */
	size_t n_rules;
	/* index: (type, literal signal) -> rule positions; the rest per type */
	struct kbucket *buckets; /* dense, one per key */
	size_t n_buckets;
	uint32_t *slots; /* hash table: bucket index + 1, 0 when free */
	size_t n_slots;	 /* a power of two */
	uint32_t *generic[KEVENT_NTYPES];
	size_t n_generic[KEVENT_NTYPES];
	/* bit n: some prefix key (index.h) is n characters long */
	uint64_t prefix_lens[(KEVENT_OBJECT_MAX + 64) / 64];
	size_t prefix_len_max; /* the longest of them */
	bool has_prefix_keys;
	/* the conditions of its files (rules.h: struct kcond_def), in order,
	 * a name declared again in a later file left out (an error at load);
	 * their set and clear matchers as a rule set of their own, indexed
	 * (kruleset_match() on it gives the matchers, kcond_def_of()) */
	const struct kcond_def **cond_defs;
	size_t n_cond_defs;
	struct kruleset *conds;
	struct hashmap *cond_names; /* name -> its struct kcond_def */
	/* the files that were broken when this set was loaded, by name, and
	 * the first of their errors (keventctl status, explain) */
	struct kbroken *broken;
	size_t n_broken;
};

struct kbroken {
	char *name;
	char *why; /* "FILE:LINE:COLUMN: error: ..." */
	bool kept; /* its last good version is in the set */
};

enum kchange_kind { KCHANGE_ADDED, KCHANGE_CHANGED, KCHANGE_REMOVED, KCHANGE_BROKEN };

struct kchange {
	enum kchange_kind kind;
	char *name;
};

struct kchanges {
	struct kchange *v;
	size_t n;
};

void kchanges_free(struct kchanges *c);
const char *kchange_kind_name(enum kchange_kind k);

/*
 * Loads a ruleset from dirs.  prev (may be NULL) lends unchanged files and
 * the last good version of broken ones.  Errors in files go to diags and
 * never fail the load; returns 0 or -ENOMEM.  changes may be NULL.
 */
int kruleset_load(const char *const *dirs, size_t n_dirs, bool trust, const struct kruleset *prev,
		  struct kruleset **out, struct kdiags *diags, struct kchanges *changes);

/* Builds a ruleset from already-parsed files (ordered as given); takes a
 * reference on each.  For tests and benchmarks. */
int kruleset_from_files(struct kfile *const *files, size_t n, struct kruleset **out);

void kruleset_free(struct kruleset *rs);
/* The condition named name, or NULL. */
const struct kcond_def *kruleset_cond(const struct kruleset *rs, const char *name);
static inline void kruleset_freep(struct kruleset **rs)
{
	kruleset_free(*rs);
}

/*
 * Calls cb for each rule that matches ev, in rule order; stops after a
 * matching rule with last: true, or when cb returns false.  Returns the
 * number of matches.
 */
typedef bool (*kmatch_fn)(const struct krule *r, void *userdata);
size_t kruleset_match(const struct kruleset *rs, const struct kevent *ev, kmatch_fn cb,
		      void *userdata);

/* Whether r matches ev; if not and why is given, appends the reason. */
bool krule_match(const struct krule *r, const struct kevent *ev, struct strbuf *why);

#endif
