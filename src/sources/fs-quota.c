// SPDX-License-Identifier: GPL-2.0-or-later
/* The VFS_DQUOT Generic Netlink family's quota warnings. */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/quota.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "genl-msg.h"
#include "util.h"

static const char *const warnings[] = {
	[QUOTA_NL_IHARDWARN] = "inode-hard",
	[QUOTA_NL_ISOFTLONGWARN] = "inode-grace-expired",
	[QUOTA_NL_ISOFTWARN] = "inode-soft",
	[QUOTA_NL_BHARDWARN] = "block-hard",
	[QUOTA_NL_BSOFTLONGWARN] = "block-grace-expired",
	[QUOTA_NL_BSOFTWARN] = "block-soft",
	[QUOTA_NL_IHARDBELOW] = "inode-below-hard",
	[QUOTA_NL_ISOFTBELOW] = "inode-below-soft",
	[QUOTA_NL_BHARDBELOW] = "block-below-hard",
	[QUOTA_NL_BSOFTBELOW] = "block-below-soft",
};

int kfs_quota_decode(const void *buf, size_t len, int family_id, struct kfs_quota_msg *m,
		     const char **why)
{
	static const struct kgenl_shape shape = {.cmds = {QUOTA_NL_C_WARNING},
						 .ncmds = 1,
						 .max = QUOTA_NL_A_MAX,
						 .pad = QUOTA_NL_A_PAD};
	struct kgenl_attr at[QUOTA_NL_A_MAX + 1];
	uint8_t cmd;
	*m = (struct kfs_quota_msg){0};
	int rc = kgenl_decode(buf, len, family_id, &shape, &cmd, at, why);
	if (rc <= 0)
		return rc; /* an error, or another command: not a warning */
	/* clang-format off */
	static const struct { unsigned type; size_t size; } want[] = {
		{QUOTA_NL_A_QTYPE, 4},
		{QUOTA_NL_A_EXCESS_ID, 8},
		{QUOTA_NL_A_WARNING, 4},
		{QUOTA_NL_A_DEV_MAJOR, 4},
		{QUOTA_NL_A_DEV_MINOR, 4},
		{QUOTA_NL_A_CAUSED_ID, 8},
	};
	/* clang-format on */
	uint64_t v[QUOTA_NL_A_MAX + 1] = {0};
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct kgenl_attr *a = &at[want[i].type];
		if (!a->seen || a->len != want[i].size) {
			*why = "quota warning without one of its attributes, or of a wrong size";
			return -EINVAL;
		}
		if (want[i].size == 4) {
			uint32_t x;
			memcpy(&x, a->data, 4);
			v[want[i].type] = x;
		} else {
			memcpy(&v[want[i].type], a->data, 8);
		}
	}
	uint64_t w = v[QUOTA_NL_A_WARNING];
	if (v[QUOTA_NL_A_QTYPE] > 2 || w >= ARRAY_SIZE(warnings) || !warnings[w]) {
		*why = "quota warning of an unknown type or kind";
		return -EINVAL;
	}
	m->warning = true;
	m->qtype = (unsigned)v[QUOTA_NL_A_QTYPE];
	m->signal = warnings[w];
	m->id = v[QUOTA_NL_A_EXCESS_ID];
	m->caller = v[QUOTA_NL_A_CAUSED_ID];
	m->major = (unsigned)v[QUOTA_NL_A_DEV_MAJOR];
	m->minor = (unsigned)v[QUOTA_NL_A_DEV_MINOR];
	return 0;
}

int kfs_quota_event(const struct kfs_quota_msg *q, const struct kfs_mount *m, const char *name,
		    uint64_t now, struct kevent **out, const char **why)
{
	static const char *const types[] = {"user", "group", "project"};
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	kfs_put_line(&sb, "Mountpoint", m->mountpoint);
	_cleanup_strbuf_ struct strbuf dev = STRBUF_INIT;
	strbuf_printf(&dev, "%u:%u %s", q->major, q->minor, m->source);
	if (dev.oom)
		return -ENOMEM;
	kfs_put_line(&sb, "Device", dev.buf);
	kfs_put_line(&sb, "Fstype", m->fstype);
	strbuf_printf(&sb, "Quota-Type: %s\nId: %llu\n", types[q->qtype],
		      (unsigned long long)q->id);
	if (name)
		kfs_put_line(&sb, "Name", name);
	strbuf_printf(&sb, "Caller-Uid: %llu\n", (unsigned long long)q->caller);
	if (sb.oom)
		return -ENOMEM;
	return kfs_make_event(m, q->signal, sb.buf, now, out, why);
}

bool kfs_quota_named(const struct kfs_quota_msg *q)
{
	return q->qtype <= 1 && q->id <= UINT32_MAX;
}

void kfs_held_release(struct kfs_held *e)
{
	free(e->mountpoint);
	free(e->source);
	free(e->fstype);
	*e = (struct kfs_held){0};
}

int kfs_holdq_push(struct kfs_holdq *h, const struct kfs_quota_msg *q, const struct kfs_mount *m,
		   uint64_t now, uint64_t since, struct kfs_held **held)
{
	struct kfs_held *v = realloc(h->v, (h->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	h->v = v;
	struct kfs_held e = {.now = now,
			     .since = since,
			     .q = *q,
			     .mountpoint = strdup(m->mountpoint),
			     .source = strdup(m->source),
			     .fstype = strdup(m->fstype)};
	if (!e.mountpoint || !e.source || !e.fstype) {
		kfs_held_release(&e);
		return -ENOMEM;
	}
	if (kfs_quota_named(q))
		e.token = ++h->tokens;
	h->v[h->n] = e;
	*held = &h->v[h->n++];
	return 0;
}

void kfs_holdq_drop_last(struct kfs_holdq *h)
{
	if (h->n)
		kfs_held_release(&h->v[--h->n]);
}

size_t kfs_holdq_ready(const struct kfs_holdq *h)
{
	size_t k = 0;
	while (k < h->n && !h->v[k].token)
		k++;
	return k;
}

size_t kfs_holdq_answered(const struct kfs_holdq *h, uint64_t token)
{
	if (!h->n || !token || h->v[0].token != token)
		return 0;
	size_t k = 1;
	while (k < h->n && !h->v[k].token)
		k++;
	return k;
}

void kfs_holdq_pop(struct kfs_holdq *h, struct kfs_held *out)
{
	*out = h->v[0];
	memmove(h->v, h->v + 1, --h->n * sizeof(*h->v));
}

void kfs_holdq_release(struct kfs_holdq *h)
{
	for (size_t i = 0; i < h->n; i++)
		kfs_held_release(&h->v[i]);
	free(h->v);
	*h = (struct kfs_holdq){0};
}
