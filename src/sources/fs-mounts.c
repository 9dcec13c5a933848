// SPDX-License-Identifier: GPL-2.0-or-later
/* The mount table of /proc/self/mountinfo, and what changed between two reads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "util.h"

#define MAX_FIELDS 64

static void mount_release(struct kfs_mount *m)
{
	free(m->mountpoint);
	free(m->fstype);
	free(m->source);
	free(m->options);
	free(m->super_options);
}

void kfs_table_release(struct kfs_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		mount_release(&t->v[i]);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

/* mountinfo writes ' ', '\t', '\n' and '\\' as \ooo. */
char *kfs_unescape(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			*o++ = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 +
				      (s[i + 3] - '0'));
			i += 3;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

/* One line: 0, -EINVAL (not mountinfo's) or -ENOMEM. */
static int parse_line(const char *s, size_t len, struct kfs_mount *m)
{
	const char *f[MAX_FIELDS];
	size_t fl[MAX_FIELDS], n = 0;
	for (size_t i = 0; i < len;) {
		while (i < len && s[i] == ' ')
			i++;
		if (i >= len)
			break;
		if (n == MAX_FIELDS)
			return -EINVAL;
		f[n] = s + i;
		while (i < len && s[i] != ' ')
			i++;
		fl[n] = (size_t)(s + i - f[n]);
		n++;
	}
	size_t dash = 6;
	while (dash < n && !(fl[dash] == 1 && f[dash][0] == '-'))
		dash++;
	if (dash + 2 >= n)
		return -EINVAL;
	const char *colon = memchr(f[2], ':', fl[2]);
	*m = (struct kfs_mount){0};
	if (!parse_digits(f[0], fl[0], &m->id) || !colon ||
	    !parse_digits(f[2], (size_t)(colon - f[2]), &m->major) ||
	    !parse_digits(colon + 1, fl[2] - (size_t)(colon - f[2]) - 1, &m->minor) || fl[4] == 0 ||
	    f[4][0] != '/')
		return -EINVAL;
	m->mountpoint = kfs_unescape(f[4], fl[4]);
	m->options = kfs_unescape(f[5], fl[5]);
	m->fstype = kfs_unescape(f[dash + 1], fl[dash + 1]);
	m->source = kfs_unescape(f[dash + 2], fl[dash + 2]);
	m->super_options = dash + 3 < n ? kfs_unescape(f[dash + 3], fl[dash + 3]) : strdup("");
	if (!m->mountpoint || !m->options || !m->fstype || !m->source || !m->super_options) {
		mount_release(m);
		return -ENOMEM;
	}
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct kfs_mount *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

int kfs_table_parse(const char *text, size_t len, struct kfs_table *out, size_t *bad)
{
	struct kfs_table t = {0};
	size_t cap = 0, nbad = 0;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
		struct kfs_mount m;
		int rc = l ? parse_line(text + i, l, &m) : 1;
		i += l + 1;
		if (rc == 1)
			continue;
		if (rc == -EINVAL) {
			nbad++;
			continue;
		}
		if (rc == 0 && t.n == KFS_MAX_MOUNTS) {
			mount_release(&m);
			rc = -E2BIG;
		}
		if (rc == 0 && t.n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct kfs_mount *v = realloc(t.v, nc * sizeof(*v));
			if (!v) {
				mount_release(&m);
				rc = -ENOMEM;
			} else {
				t.v = v;
				cap = nc;
			}
		}
		if (rc < 0) {
			kfs_table_release(&t);
			return rc;
		}
		t.v[t.n++] = m;
	}
	if (t.n)
		qsort(t.v, t.n, sizeof(*t.v), by_id);
	if (bad)
		*bad = nbad;
	*out = t;
	return 0;
}

const struct kfs_mount *kfs_table_find(const struct kfs_table *t, const char *mountpoint)
{
	/* the last one mounted there is the one seen */
	const struct kfs_mount *found = NULL;
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].mountpoint, mountpoint) == 0)
			found = &t->v[i];
	return found;
}

const struct kfs_mount *kfs_table_find_id(const struct kfs_table *t, unsigned id)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].id == id)
			return &t->v[mid];
		if (t->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct kfs_mount *kfs_table_find_dev(const struct kfs_table *t, unsigned major,
					   unsigned minor)
{
	const struct kfs_mount *found = NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].major == major && t->v[i].minor == minor)
			found = &t->v[i];
	return found;
}

static bool has_option(const char *list, const char *opt)
{
	size_t n = strlen(opt);
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ",");
		if (l == n && strncmp(p, opt, n) == 0)
			return true;
		p += l;
		if (*p)
			p++;
	}
	return false;
}

bool kfs_mount_ro(const struct kfs_mount *m)
{
	/* ext4 turned read-only by an error says "emergency_ro" on newer
	 * kernels, without "ro" */
	return has_option(m->options, "ro") || has_option(m->super_options, "ro") ||
	       has_option(m->super_options, "emergency_ro");
}

bool kfs_mount_error_ro(const struct kfs_mount *m)
{
	return (strcmp(m->fstype, "ext4") == 0 || strcmp(m->fstype, "ext3") == 0 ||
		strcmp(m->fstype, "ext2") == 0) &&
	       has_option(m->super_options, "errors=remount-ro") && !kfs_mount_ro(m);
}

bool kfs_mount_remote(const struct kfs_mount *m)
{
	/* file systems whose statfs() (which fanotify_mark() makes too, for
	 * the fsid) waits on a server, a user-space daemon, a cluster's locks
	 * or the automounter */
	static const char *const remote[] = {
		"nfs",	"nfs4",	  "cifs",     "smb3",	"smbfs",     "ceph",   "9p",
		"afs",	"coda",	  "ncpfs",    "lustre", "glusterfs", "gfs2",   "ocfs2",
		"gpfs", "beegfs", "orangefs", "pvfs2",	"virtiofs",  "vboxsf", "autofs",
	};
	if (strncmp(m->fstype, "fuse", 4) == 0) /* fuse, fuseblk, fuse.sshfs ... */
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(remote); i++)
		if (strcmp(m->fstype, remote[i]) == 0)
			return true;
	return false;
}

bool kfs_mount_wanted(const struct kfs_mount *m, bool all)
{
	static const char *const network[] = {"nfs", "nfs4", "cifs", "smb3"};
	if (all)
		return true;
	if (strncmp(m->source, "/dev/", 5) == 0 || strncmp(m->fstype, "fuse.", 5) == 0)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(network); i++)
		if (strcmp(m->fstype, network[i]) == 0)
			return true;
	return false;
}

const char *kfs_change_signal(enum kfs_change c)
{
	/* clang-format off */
	switch (c) {
	case KFS_MOUNT: return "mount";
	case KFS_UMOUNT: return "umount";
	case KFS_REMOUNT_RO: return "remount-ro";
	case KFS_REMOUNT_RW: return "remount-rw";
	case KFS_REMOUNT: return "remount";
	}
	/* clang-format on */
	return "remount";
}

bool kfs_mount_same(const struct kfs_mount *a, const struct kfs_mount *b)
{
	return a->id == b->id && a->major == b->major && a->minor == b->minor &&
	       strcmp(a->mountpoint, b->mountpoint) == 0 && strcmp(a->fstype, b->fstype) == 0;
}

size_t kfs_diff(const struct kfs_table *old, const struct kfs_table *cur, bool all, kfs_diff_fn fn,
		void *userdata)
{
	size_t count = 0;
	/* three passes over the two id-sorted tables: gone, changed, new */
	for (int pass = 0; pass < 3; pass++) {
		size_t i = 0, j = 0;
		while (i < old->n || j < cur->n) {
			const struct kfs_mount *a = i < old->n ? &old->v[i] : NULL;
			const struct kfs_mount *b = j < cur->n ? &cur->v[j] : NULL;
			if (a && (!b || a->id < b->id)) {
				if (pass == 0 && kfs_mount_wanted(a, all)) {
					fn(userdata, KFS_UMOUNT, a, NULL);
					count++;
				}
				i++;
			} else if (b && (!a || b->id < a->id)) {
				if (pass == 2 && kfs_mount_wanted(b, all)) {
					fn(userdata, KFS_MOUNT, b, NULL);
					count++;
				}
				j++;
			} else if (!kfs_mount_same(a, b)) {
				/* the id of a mount gone, taken by another */
				if (pass == 0 && kfs_mount_wanted(a, all)) {
					fn(userdata, KFS_UMOUNT, a, NULL);
					count++;
				}
				if (pass == 2 && kfs_mount_wanted(b, all)) {
					fn(userdata, KFS_MOUNT, b, NULL);
					count++;
				}
				i++;
				j++;
			} else {
				if (pass == 1 && kfs_mount_wanted(b, all) &&
				    (strcmp(a->options, b->options) != 0 ||
				     strcmp(a->super_options, b->super_options) != 0)) {
					bool ro_a = kfs_mount_ro(a), ro_b = kfs_mount_ro(b);
					enum kfs_change c = ro_a == ro_b ? KFS_REMOUNT
							    : ro_b	 ? KFS_REMOUNT_RO
									 : KFS_REMOUNT_RW;
					fn(userdata, c, b, a);
					count++;
				}
				i++;
				j++;
			}
		}
	}
	return count;
}

int kfs_object(const char *mountpoint, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_puts(&sb, KFS_OBJECT_PREFIX);
	strbuf_add_name(&sb, mountpoint, strlen(mountpoint), true);
	if (strcmp(mountpoint, "/") != 0 && sb.len > 0 && sb.buf[sb.len - 1] == '/')
		sb.len--, sb.buf[sb.len] = '\0';
	int rc = sb.oom ? -ENOMEM : sb.len + 1 > size ? -ENAMETOOLONG : 0;
	if (rc == 0)
		memcpy(buf, sb.buf, sb.len + 1);
	strbuf_release(&sb);
	return rc;
}

/* A payload line "Key: value", the value escaped as the object is. */
void kfs_put_line(struct strbuf *sb, const char *key, const char *value)
{
	strbuf_printf(sb, "%s: ", key);
	strbuf_add_name(sb, value, strlen(value), true);
	strbuf_putc(sb, '\n');
}

int kfs_mount_payload(const struct kfs_mount *m, struct strbuf *sb)
{
	kfs_put_line(sb, "Mountpoint", m->mountpoint);
	kfs_put_line(sb, "Device", m->source);
	kfs_put_line(sb, "Fstype", m->fstype);
	return sb->oom ? -ENOMEM : 0;
}

int kfs_make_event(const struct kfs_mount *m, const char *signal, const char *payload, uint64_t now,
		   struct kevent **out, const char **why)
{
	char object[KEVENT_OBJECT_MAX + 1];
	if (kfs_object(m->mountpoint, object, sizeof(object)) < 0) {
		*why = "mount point too long for an object";
		return -EINVAL;
	}
	return kevent_new(KEVENT_FS, object, signal, payload, KEVENT_SOURCE_FS, 0, now, NULL, 0,
			  out, why);
}

/* The lines of a mount table change: m as it is now, prev before (NULL:
 * none). */
static void put_change(struct strbuf *sb, const struct kfs_mount *m, const struct kfs_mount *prev)
{
	kfs_mount_payload(m, sb);
	kfs_put_line(sb, "Options", m->options);
	kfs_put_line(sb, "Super-Options", m->super_options);
	strbuf_printf(sb, "Mount-Id: %u\n", m->id);
	if (prev) {
		kfs_put_line(sb, "Previous-Options", prev->options);
		kfs_put_line(sb, "Previous-Super-Options", prev->super_options);
	}
}

int kfs_mount_event(enum kfs_change c, const struct kfs_mount *m, const struct kfs_mount *prev,
		    uint64_t now, struct kevent **out, const char **why)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	put_change(&sb, m, prev);
	if (sb.oom)
		return -ENOMEM;
	return kfs_make_event(m, kfs_change_signal(c), sb.buf, now, out, why);
}

int kfs_error_ro_event(const struct kfs_mount *m, uint64_t now, struct kevent **out,
		       const char **why)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT, sup = STRBUF_INIT;
	strbuf_printf(&sup, "%s%semergency_ro", m->super_options, *m->super_options ? "," : "");
	if (sup.oom)
		return -ENOMEM;
	/* the mount as a newer kernel shows it, after the table's */
	struct kfs_mount shown = *m;
	shown.super_options = sup.buf;
	put_change(&sb, &shown, m);
	strbuf_puts(&sb, "Inferred: yes\n");
	if (sb.oom)
		return -ENOMEM;
	return kfs_make_event(m, kfs_change_signal(KFS_REMOUNT_RO), sb.buf, now, out, why);
}
