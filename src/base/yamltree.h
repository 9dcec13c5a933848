/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small YAML tree built from libyaml's event parser, keeping the line
 * and column of every node.  Aliases are refused (no "billion laughs"),
 * nesting and node count are bounded, and only one document is allowed.
 */
#ifndef KEVENT_YAMLTREE_H
#define KEVENT_YAMLTREE_H

#include <stdbool.h>
#include <stddef.h>

enum ynode_kind { YNODE_SCALAR, YNODE_SEQ, YNODE_MAP };

struct ynode {
	enum ynode_kind kind;
	unsigned line, col;  /* 1-based */
	char *value;	     /* scalars */
	bool plain;	     /* scalar written without quotes */
	struct ynode **kids; /* seq: items; map: key, value, key, value... */
	size_t n_kids;
	/* the file a node was read from when a tree is made of several (a
	 * rule file and its drop-ins); NULL: the tree's own file.  Not owned. */
	const char *file;
};

#define YTREE_MAX_DEPTH 32
#define YTREE_MAX_NODES 200000

/*
 * Parses buf.  Returns 0 and *root (NULL for an empty document), or
 * -EINVAL with *line, *col and *msg (malloc'd) describing the error.
 */
int ytree_parse(const char *buf, size_t len, struct ynode **root, unsigned *line, unsigned *col,
		char **msg);
void ynode_free(struct ynode *n);
/* A plain scalar that YAML reads as null: "", "~", "null". */
bool ynode_is_null(const struct ynode *n);
const char *ynode_kind_name(const struct ynode *n);

#endif
