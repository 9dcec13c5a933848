// SPDX-License-Identifier: GPL-2.0-or-later
/* keventd.yaml's section "fs:" (keventd.yaml(5)). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "suggest.h"
#include "util.h"

const struct kfs_config kfs_config_defaults = {
	.t =
		{
			.space_low = {KFS_LIMIT_PERCENT, 1000},
			.space_critical = {KFS_LIMIT_PERCENT, 300},
			.inodes_low = {KFS_LIMIT_PERCENT, 500},
		},
};

void kfs_config_init(struct kfs_config *c)
{
	*c = kfs_config_defaults;
}

void kfs_config_release(struct kfs_config *c)
{
	for (size_t i = 0; i < c->n_over; i++)
		free(c->over[i].mountpoint);
	free(c->over);
	kfs_config_init(c);
}

const struct kfs_thresholds *kfs_config_for(const struct kfs_config *c, const char *mp)
{
	for (size_t i = 0; i < c->n_over; i++)
		if (strcmp(c->over[i].mountpoint, mp) == 0)
			return &c->over[i].t;
	return &c->t;
}

static bool limit_equal(const struct kfs_limit *a, const struct kfs_limit *b)
{
	return a->kind == b->kind && (a->kind == KFS_LIMIT_OFF || a->value == b->value);
}

bool kfs_thresholds_equal(const struct kfs_thresholds *a, const struct kfs_thresholds *b)
{
	return limit_equal(&a->space_low, &b->space_low) &&
	       limit_equal(&a->space_critical, &b->space_critical) &&
	       limit_equal(&a->inodes_low, &b->inodes_low);
}

bool kfs_config_equal(const struct kfs_config *a, const struct kfs_config *b)
{
	if (a->all != b->all || !kfs_thresholds_equal(&a->t, &b->t) || a->n_over != b->n_over)
		return false;
	for (size_t i = 0; i < a->n_over; i++)
		if (strcmp(a->over[i].mountpoint, b->over[i].mountpoint) != 0 ||
		    !kfs_thresholds_equal(&a->over[i].t, &b->over[i].t))
			return false;
	return true;
}

/* "10%", "2.5%", "2G", "512M", "100000", "off": 0, or -EINVAL. */
static int parse_limit(const char *s, struct kfs_limit *out)
{
	if (strcmp(s, "off") == 0 || strcmp(s, "0") == 0) {
		*out = (struct kfs_limit){KFS_LIMIT_OFF, 0};
		return 0;
	}
	uint64_t whole = 0, frac = 0;
	size_t i = 0, digits = 0, fdigits = 0;
	for (; s[i] >= '0' && s[i] <= '9' && digits < 16; i++, digits++)
		whole = whole * 10 + (uint64_t)(s[i] - '0');
	if (!digits)
		return -EINVAL;
	if (s[i] == '.') {
		for (i++; s[i] >= '0' && s[i] <= '9' && fdigits < 2; i++, fdigits++)
			frac = frac * 10 + (uint64_t)(s[i] - '0');
		if (!fdigits || (s[i] >= '0' && s[i] <= '9') || s[i] != '%')
			return -EINVAL;
		frac *= fdigits == 1 ? 10 : 1;
	}
	if (s[i] == '%' && !s[i + 1]) {
		if (whole > 100 || (whole == 100 && frac))
			return -EINVAL;
		*out = (struct kfs_limit){KFS_LIMIT_PERCENT, whole * 100 + frac};
		return out->value ? 0 : -EINVAL;
	}
	static const char units[] = "KMGTP";
	uint64_t mult = 1;
	if (s[i]) {
		const char *u = strchr(units, s[i] & ~0x20);
		if (!u)
			return -EINVAL;
		for (const char *x = units; x <= u; x++)
			mult *= 1024;
		i++;
		if (s[i] == 'i' && s[i + 1] == 'B')
			i += 2;
		else if (s[i] == 'B')
			i++;
		if (s[i])
			return -EINVAL;
	}
	if (whole > UINT64_MAX / mult)
		return -EINVAL;
	*out = (struct kfs_limit){KFS_LIMIT_SIZE, whole * mult};
	return 0;
}

enum { SPACE_LOW, SPACE_CRITICAL, INODES_LOW, N_KEYS };
static const char *const keys[N_KEYS] = {"space_low", "space_critical", "inodes_low"};

static struct kfs_limit *field(struct kfs_thresholds *t, int k)
{
	return k == SPACE_LOW	     ? &t->space_low
	       : k == SPACE_CRITICAL ? &t->space_critical
				     : &t->inodes_low;
}

/* key: value of thresholds into t (set[] says which); false: not one. */
static bool threshold(struct kdiag_file *p, const struct ynode *k, const struct ynode *v,
		      struct kfs_thresholds *t, bool set[N_KEYS], const char *where)
{
	for (int i = 0; i < N_KEYS; i++) {
		if (strcmp(k->value, keys[i]) != 0)
			continue;
		/* space_low: 10 was 10 bytes, never what was meant: space takes
		 * a unit (keventd.yaml(5)); inodes_low: 10000 is a count */
		if (i != INODES_LOW && v->kind == YNODE_SCALAR && strcmp(v->value, "0") != 0 &&
		    v->value[0] && !v->value[strspn(v->value, "0123456789")]) {
			if (strlen(v->value) <= 3 && atoi(v->value) <= 100)
				kdiag_at(p, v, "fs: %s%s: '%s' has no unit: did you mean %s%%?",
					 where, keys[i], v->value, v->value);
			else
				kdiag_at(p, v,
					 "fs: %s%s: '%s' has no unit: write a percentage (10%%) or "
					 "a "
					 "size with K, M, G, T or P (2G, 512M)",
					 where, keys[i], v->value);
			set[i] = true;
			return true;
		}
		if (v->kind != YNODE_SCALAR || parse_limit(v->value, field(t, i)) < 0)
			kdiag_at(p, v,
				 "fs: %s%s wants a percentage (10%%), a size (2G, 512M) or 'off', "
				 "not "
				 "%s%s%s",
				 where, keys[i], v->kind == YNODE_SCALAR ? "'" : "",
				 v->kind == YNODE_SCALAR ? v->value : ynode_kind_name(v),
				 v->kind == YNODE_SCALAR ? "'" : "");
		set[i] = true;
		return true;
	}
	return false;
}

/* The key name of the mapping n, or NULL. */
static const struct ynode *key_of(const struct ynode *n, const char *name)
{
	for (size_t i = 0; n->kind == YNODE_MAP && i + 1 < n->n_kids; i += 2)
		if (n->kids[i]->kind == YNODE_SCALAR && strcmp(n->kids[i]->value, name) == 0)
			return n->kids[i];
	return NULL;
}

/* space_critical below space_low, the mistake said where the mapping n
 * (of the mount point mp, or NULL: the section) gives one of them, or
 * else at at (the mount point's key, or the section). */
static void check_order(struct kdiag_file *p, const struct ynode *n, const struct ynode *at,
			const char *mp, const struct kfs_thresholds *t)
{
	if (t->space_low.kind != t->space_critical.kind || t->space_low.kind == KFS_LIMIT_OFF ||
	    t->space_critical.value < t->space_low.value)
		return;
	const struct ynode *k = key_of(n, "space_critical");
	if (!k)
		k = key_of(n, "space_low");
	kdiag_at(p, k ? k : at, "fs: %.40s%sspace_critical is not below space_low", mp ? mp : "",
		 mp ? ": " : "");
}

int kfs_config_parse(struct kfs_config *c, const struct ynode *n, const char *path,
		     struct kdiags *diags)
{
	struct kdiag_file p = {.path = path, .diags = diags};
	if (n->kind != YNODE_MAP) {
		kdiag_at(&p, n,
			 "fs: is a mapping (mounts, space_low, space_critical, inodes_low, and "
			 "mount points), not %s",
			 ynode_kind_name(n));
		return -EINVAL;
	}
	struct kfs_config nc;
	kfs_config_init(&nc);
	bool set[N_KEYS] = {0};
	bool(*oset)[N_KEYS] = calloc(KFS_MAX_OVERRIDES, sizeof(*oset));
	const struct ynode *okey[KFS_MAX_OVERRIDES], *omap[KFS_MAX_OVERRIDES];
	nc.over = calloc(KFS_MAX_OVERRIDES, sizeof(*nc.over));
	if (!oset || !nc.over) {
		free(oset);
		free(nc.over);
		return -ENOMEM;
	}
	int rc = 0;
	for (size_t i = 0; rc == 0 && i + 1 < n->n_kids; i += 2) {
		const struct ynode *k = n->kids[i], *v = n->kids[i + 1];
		if (k->kind != YNODE_SCALAR) {
			kdiag_at(&p, k, "fs: a key is a name, not %s", ynode_kind_name(k));
			continue;
		}
		if (strcmp(k->value, "mounts") == 0) {
			if (v->kind == YNODE_SCALAR && strcmp(v->value, "all") == 0)
				nc.all = true;
			else if (v->kind == YNODE_SCALAR && strcmp(v->value, "block") == 0)
				nc.all = false;
			else
				kdiag_at(&p, v, "fs: mounts is 'block' or 'all'");
			continue;
		}
		if (threshold(&p, k, v, &nc.t, set, ""))
			continue;
		static const char *const fs_keys[] = {"mounts", "space_low", "space_critical",
						      "inodes_low"};
		const char *near;
		if (k->value[0] != '/' &&
		    (near = suggest_word(k->value, fs_keys, ARRAY_SIZE(fs_keys)))) {
			kdiag_at(&p, k, "fs: unknown key '%s': did you mean %s?", k->value, near);
			continue;
		}
		if (k->value[0] != '/') {
			kdiag_at(&p, k,
				 "fs: unknown key '%s' (mounts, space_low, space_critical, "
				 "inodes_low, "
				 "or a mount point)",
				 k->value);
			continue;
		}
		if (v->kind != YNODE_MAP) {
			kdiag_at(&p, v, "fs: %s is a mapping of thresholds, not %s", k->value,
				 ynode_kind_name(v));
			continue;
		}
		if (nc.n_over == KFS_MAX_OVERRIDES) {
			kdiag_at(&p, k, "fs: at most %d mount points", KFS_MAX_OVERRIDES);
			continue;
		}
		struct kfs_override *o = &nc.over[nc.n_over];
		okey[nc.n_over] = k;
		omap[nc.n_over] = v;
		if (!(o->mountpoint = strdup(k->value))) {
			rc = -ENOMEM;
			break;
		}
		size_t len = strlen(o->mountpoint);
		if (len > 1 && o->mountpoint[len - 1] == '/')
			o->mountpoint[len - 1] = '\0';
		for (size_t j = 0; j + 1 < v->n_kids; j += 2) {
			const struct ynode *kk = v->kids[j], *vv = v->kids[j + 1];
			char where[64];
			snprintf(where, sizeof(where), "%.40s: ", k->value);
			if (kk->kind == YNODE_SCALAR &&
			    threshold(&p, kk, vv, &o->t, oset[nc.n_over], where))
				continue;
			if (kk->kind == YNODE_SCALAR &&
			    (near = suggest_word(kk->value, fs_keys + 1, ARRAY_SIZE(fs_keys) - 1)))
				kdiag_at(&p, kk, "fs: %s: unknown key '%s': did you mean %s?",
					 k->value, kk->value, near);
			else if (kk->kind == YNODE_SCALAR)
				kdiag_at(&p, kk,
					 "fs: %s: unknown key '%s' (a mount point has space_low, "
					 "space_critical and inodes_low)",
					 k->value, kk->value);
			else
				kdiag_at(&p, kk,
					 "fs: %s: a mount point has space_low, space_critical "
					 "and inodes_low",
					 k->value);
		}
		nc.n_over++;
	}
	for (size_t i = 0; i < nc.n_over; i++) {
		for (int k = 0; k < N_KEYS; k++)
			if (!oset[i][k])
				*field(&nc.over[i].t, k) = *field(&nc.t, k);
		check_order(&p, omap[i], okey[i], okey[i]->value, &nc.over[i].t);
	}
	check_order(&p, n, n, NULL, &nc.t);
	free(oset);
	if (rc == 0 && p.errors)
		rc = -EINVAL;
	if (rc < 0) {
		kfs_config_release(&nc);
		return rc;
	}
	kfs_config_release(c);
	*c = nc;
	return 0;
}
