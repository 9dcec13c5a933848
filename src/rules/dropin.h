/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Drop-ins (keventd.rules(5), DROP-INS): the *.yaml files of NAME.yaml.d/
 * change named rules of NAME.yaml key by key, in order.  The merge is done
 * on the YAML trees, before the schema is checked, so that a merged rule is
 * checked exactly as a rule written whole, and every node keeps the file,
 * line and column it came from.  Pure: no file is opened here.
 */
#ifndef KEVENT_DROPIN_H
#define KEVENT_DROPIN_H

#include <stddef.h>

#include "diag.h"
#include "rules.h"
#include "yamltree.h"

/* The text of one file, as read, and where from. */
struct ksrc {
	const char *path;
	const char *buf;
	size_t len;
};

/*
 * Parses base and applies each drop-in to it, in the order given.  Returns 0
 * and *tree (NULL for an empty base; free with ynode_free(); its nodes'
 * .file point into dropins[].path), -EINVAL with every error found in diags
 * (a drop-in that is not a list of rules, one that names no rule of base, a
 * key given twice), or -ENOMEM.  The schema of the merged rules is not
 * checked: that is krules_from_tree()'s.
 */
int kdropin_merge(const struct ksrc *base, const struct ksrc *dropins, size_t n,
		  struct ynode **tree, struct kdiags *diags);

/* kdropin_merge(), then krules_from_tree(): what krules_parse() is for a file
 * without drop-ins.  0 and a new kfile (its dropins list left empty), -EINVAL
 * with the errors in diags, or -ENOMEM. */
int kdropin_parse(const struct ksrc *base, const struct ksrc *dropins, size_t n, struct kfile **out,
		  struct kdiags *diags);

#endif
