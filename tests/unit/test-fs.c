// SPDX-License-Identifier: GPL-2.0-or-later
/* The fs source's pure parts: the mount table and its diff, thresholds
 * with hysteresis and the time of the next look, fanotify's error
 * records, and keventd.yaml's "fs:". */
#include <errno.h>
#include <linux/fanotify.h>
#include <linux/quota.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fs.h"
#include "testutil.h"
#include "../nlbuild.h"

#define ROOT  "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
#define LOOP  "30 22 7:0 / /mnt/a\\040b rw,relatime shared:9 - ext4 /dev/loop0 rw\n"
#define LOOPR "30 22 7:0 / /mnt/a\\040b ro,relatime shared:9 - ext4 /dev/loop0 ro\n"
#define LOOPN "30 22 7:0 / /mnt/a\\040b rw,noatime shared:9 - ext4 /dev/loop0 rw\n"
#define LOOPE "30 22 7:0 / /mnt/a\\040b rw,relatime - ext4 /dev/loop0 rw,emergency_ro\n"
#define PROC  "25 22 0:22 / /proc rw,nosuid - proc proc rw\n"
#define NFS   "31 22 0:40 / /srv rw - nfs4 server:/x rw,vers=4.2\n"
#define FUSE  "32 22 0:41 / /run/doc rw - fuse.portal portal rw\n"

static void test_parse(void **state)
{
	(void)state;
	struct kfs_table t;
	size_t bad = 0;
	const char *text = LOOP "garbage line\n" ROOT PROC;
	assert_int_equal(kfs_table_parse(text, strlen(text), &t, &bad), 0);
	assert_int_equal(bad, 1);
	assert_int_equal(t.n, 3);
	/* sorted by id */
	assert_int_equal(t.v[0].id, 22);
	assert_int_equal(t.v[2].id, 30);
	const struct kfs_mount *m = kfs_table_find(&t, "/mnt/a b");
	assert_non_null(m);
	assert_int_equal(m->major, 7);
	assert_string_equal(m->fstype, "ext4");
	assert_string_equal(m->source, "/dev/loop0");
	assert_string_equal(m->options, "rw,relatime");
	assert_string_equal(m->super_options, "rw");
	kfs_table_release(&t);
}

static void test_wanted(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct { const char *line; bool block, all; } cases[] = {
		{ROOT, true, true},
		{PROC, false, true},
		{NFS, true, true},
		{FUSE, true, true},
		{"40 22 0:50 / /t rw - tmpfs tmpfs rw\n", false, true},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kfs_table t;
		assert_int_equal(kfs_table_parse(cases[i].line, strlen(cases[i].line), &t, NULL),
				 0);
		assert_int_equal(t.n, 1);
		assert_int_equal(kfs_mount_wanted(&t.v[0], false), cases[i].block);
		assert_int_equal(kfs_mount_wanted(&t.v[0], true), cases[i].all);
		kfs_table_release(&t);
	}
}

/* The file systems that keventd's loop never calls statfs() or
 * fanotify_mark() on: those answered by a server or a daemon, whatever
 * their source claims. */
static void test_remote(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct { const char *line; bool remote; } cases[] = {
		{ROOT, false},
		{LOOP, false},
		{PROC, false},
		{NFS, true},
		{FUSE, true},
		{"33 22 0:42 / /srv/n rw - nfs server:/y rw\n", true},
		{"34 22 0:43 / /srv/c rw - cifs //server/share rw\n", true},
		{"35 22 0:44 / /srv/s rw - smb3 //server/share rw\n", true},
		{"36 22 0:45 / /srv/ceph rw - ceph 10.0.0.1:/ rw\n", true},
		{"37 22 0:46 / /srv/9 rw - 9p hostshare rw\n", true},
		{"38 22 0:47 / /srv/v rw - virtiofs myfs rw\n", true},
		{"39 22 0:48 / /home/u/x rw - fuse.sshfs u@host:/ rw\n", true},
		{"41 22 0:49 / /home/u/y rw - fuse.glusterfs gl:/vol rw\n", true},
		{"42 22 0:51 / /net rw - autofs systemd-1 rw\n", true},
		/* FUSE with a source that looks like a disk: ntfs-3g's fuseblk,
		 * a user's fsname=/dev/sda1 */
		{"43 22 8:17 / /media/w rw - fuseblk /dev/sdb1 rw\n", true},
		{"44 22 0:52 / /home/u/z rw - fuse /dev/sda1 rw\n", true},
		{"45 22 0:53 / /home/u/q rw - fuse.hang /dev/sda1 rw\n", true},
		{"40 22 0:50 / /t rw - tmpfs tmpfs rw\n", false},
		{"46 22 253:1 / /data rw - xfs /dev/mapper/vg-data rw\n", false},
		{"47 22 0:54 / /b rw - btrfs /dev/vdb rw\n", false},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kfs_table t;
		assert_int_equal(kfs_table_parse(cases[i].line, strlen(cases[i].line), &t, NULL),
				 0);
		assert_int_equal(t.n, 1);
		if (kfs_mount_remote(&t.v[0]) != cases[i].remote)
			fail_msg("%s: remote %d, wanted %d", cases[i].line, !cases[i].remote,
				 cases[i].remote);
		kfs_table_release(&t);
	}
}

struct seen {
	char text[512];
};

static void record(void *userdata, enum kfs_change c, const struct kfs_mount *m,
		   const struct kfs_mount *prev)
{
	struct seen *s = userdata;
	size_t n = strlen(s->text);
	snprintf(s->text + n, sizeof(s->text) - n, "%s %s%s%s;", kfs_change_signal(c),
		 m->mountpoint, prev ? " was " : "", prev ? prev->options : "");
}

static void test_diff(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct { const char *old, *cur; bool all; const char *want; } cases[] = {
		{ROOT, ROOT, false, ""},
		{ROOT, ROOT LOOP, false, "mount /mnt/a b;"},
		{ROOT LOOP, ROOT, false, "umount /mnt/a b;"},
		{ROOT LOOP, ROOT LOOPR, false, "remount-ro /mnt/a b was rw,relatime;"},
		{ROOT LOOPR, ROOT LOOP, false, "remount-rw /mnt/a b was ro,relatime;"},
		{ROOT LOOP, ROOT LOOPN, false, "remount /mnt/a b was rw,relatime;"},
		/* ext4 turned read-only by an error, without "ro" */
		{ROOT LOOP, ROOT LOOPE, false, "remount-ro /mnt/a b was rw,relatime;"},
		/* not block-backed: only with mounts: all */
		{ROOT, ROOT PROC, false, ""},
		{ROOT, ROOT PROC, true, "mount /proc;"},
		/* umounts first, then remounts, then mounts */
		{ROOT LOOP NFS, ROOT LOOPR FUSE, false,
		 "umount /srv;remount-ro /mnt/a b was rw,relatime;mount /run/doc;"},
		/* the id of a mount gone, taken by another (ids are reused) */
		{ROOT LOOP, ROOT "30 22 7:1 / /mnt/c rw - ext4 /dev/loop1 rw\n", false,
		 "umount /mnt/a b;mount /mnt/c;"},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kfs_table a, b;
		struct seen s = {""};
		assert_int_equal(kfs_table_parse(cases[i].old, strlen(cases[i].old), &a, NULL), 0);
		assert_int_equal(kfs_table_parse(cases[i].cur, strlen(cases[i].cur), &b, NULL), 0);
		kfs_diff(&a, &b, cases[i].all, record, &s);
		if (strcmp(s.text, cases[i].want) != 0)
			fail_msg("case %zu: got \"%s\", wanted \"%s\"", i, s.text, cases[i].want);
		kfs_table_release(&a);
		kfs_table_release(&b);
	}
}

/* The state file: what was reported, read back as written; a file that
 * is not whole, or not one, refused whole. */
static void test_state(void **state)
{
	(void)state;
	const char *text = ROOT LOOP PROC NFS "40 22 0:50 / /t\\134x rw - tmpfs tmpfs \n";
	struct kfs_table t;
	assert_int_equal(kfs_table_parse(text, strlen(text), &t, NULL), 0);
	const struct kfs_thresholds judged = {
		{KFS_LIMIT_PERCENT, 9950}, {KFS_LIMIT_SIZE, 1ull << 40}, {KFS_LIMIT_OFF, 0}};
	const struct kfs_saved_space sp[] = {{.id = 22, .space = KFS_LOW},
					     {30, KFS_CRITICAL, true, true, judged}};
	struct strbuf sb = STRBUF_INIT;
	kfs_state_render("0b5e6a1c-1d2e-4f00-9a8b-0123456789ab", true, &t, sp, 2, &sb);
	assert_false(sb.oom);
	struct kfs_state st;
	const char *why = NULL;
	assert_int_equal(kfs_state_parse(sb.buf, sb.len, &st, &why), 0);
	assert_string_equal(st.boot_id, "0b5e6a1c-1d2e-4f00-9a8b-0123456789ab");
	assert_true(st.all);
	assert_int_equal(st.table.n, t.n);
	for (size_t i = 0; i < t.n; i++) {
		const struct kfs_mount *a = &t.v[i], *b = &st.table.v[i];
		assert_true(kfs_mount_same(a, b));
		assert_string_equal(a->mountpoint, b->mountpoint);
		assert_string_equal(a->options, b->options);
		assert_string_equal(a->super_options, b->super_options);
		assert_string_equal(a->source, b->source);
	}
	assert_string_equal(kfs_table_find_id(&st.table, 40)->mountpoint, "/t\\x");
	assert_string_equal(kfs_table_find_id(&st.table, 40)->super_options, "");
	assert_int_equal(kfs_state_space(&st, 30)->space, KFS_CRITICAL);
	assert_true(kfs_state_space(&st, 30)->inodes_low);
	assert_int_equal(kfs_state_space(&st, 22)->space, KFS_LOW);
	assert_null(kfs_state_space(&st, 31));
	/* the thresholds a state was judged by come back; none, none */
	assert_true(kfs_state_space(&st, 30)->judged);
	assert_true(kfs_thresholds_equal(&kfs_state_space(&st, 30)->t, &judged));
	assert_false(kfs_state_space(&st, 22)->judged);
	kfs_state_release(&st);

	/* mounts: block keeps the block-backed and network ones only */
	strbuf_release(&sb);
	kfs_state_render("b", false, &t, NULL, 0, &sb);
	assert_int_equal(kfs_state_parse(sb.buf, sb.len, &st, &why), 0);
	assert_false(st.all);
	assert_int_equal(st.table.n, 3);
	assert_null(kfs_table_find_id(&st.table, 25));
	kfs_state_release(&st);

	/* cut anywhere but after a line, or a line changed: refused */
	for (size_t cut = 0; cut < sb.len; cut++) {
		bool whole = cut > 0 && sb.buf[cut - 1] == '\n';
		int rc = kfs_state_parse(sb.buf, cut, &st, &why);
		if (rc == 0)
			kfs_state_release(&st);
		if (!whole || cut < strlen("keventd-fs 1\nboot b\nmounts block\n"))
			assert_int_equal(rc, -EINVAL);
	}
	static const char *const bad[] = {
		"keventd-fs 2\nboot b\nmounts block\n",
		"keventd-fs 1\nboot b\nmounts some\n",
		"keventd-fs 1\nmounts block\nboot b\n",
		"keventd-fs 1\nboot b\nmounts block\nm 1 8:1 /x rw rw ext4\n",
		"keventd-fs 1\nboot b\nmounts block\nm 1 8:1 x rw rw ext4 /dev/sda\n",
		"keventd-fs 1\nboot b\nmounts block\nm 1 8:1 /x rw  rw ext4 /dev/sda\n",
		"keventd-fs 1\nboot b\nmounts block\ns 1 lowish inodes-ok\n",
		"keventd-fs 1\nboot b\nmounts block\ns x low inodes-ok\n",
		"keventd-fs 1\nboot b\nmounts block\ns 1 low inodes-ok p10 off\n",
		"keventd-fs 1\nboot b\nmounts block\ns 1 low inodes-ok p10 off x1\n",
		"keventd-fs 1\nboot b\nmounts block\ns 1 low inodes-ok p10 off b\n",
		"keventd-fs 1\nboot b\nmounts block\ns 1 low inodes-ok p1x off off\n",
		"keventd-fs 1\nboot b\nmounts block\nsomething else\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		why = NULL;
		if (kfs_state_parse(bad[i], strlen(bad[i]), &st, &why) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_non_null(why);
	}
	strbuf_release(&sb);
	kfs_table_release(&t);
}

/* Quota warnings waiting for their names: in order, a project's behind
 * a user's waits its turn and goes with it, a late answer moves nothing. */
static void test_holdq(void **state)
{
	(void)state;
	struct kfs_table t;
	assert_int_equal(kfs_table_parse(LOOP, strlen(LOOP), &t, NULL), 0);
	struct kfs_holdq h = {0};
	struct kfs_held *e;
	const struct kfs_quota_msg user = {.warning = true, .qtype = 0, .id = 1000},
				   group = {.warning = true, .qtype = 1, .id = 50},
				   project = {.warning = true, .qtype = 2, .id = 7},
				   huge = {.warning = true, .qtype = 0, .id = 1ull << 40};
	assert_true(kfs_quota_named(&user) && kfs_quota_named(&group));
	assert_false(kfs_quota_named(&project) || kfs_quota_named(&huge));
	assert_int_equal(kfs_holdq_push(&h, &user, &t.v[0], 1, 2, &e), 0);
	assert_int_equal(e->token, 1);
	assert_string_equal(e->mountpoint, "/mnt/a b");
	assert_int_equal(kfs_holdq_push(&h, &project, &t.v[0], 3, 4, &e), 0);
	assert_int_equal(e->token, 0);
	assert_int_equal(kfs_holdq_push(&h, &group, &t.v[0], 5, 6, &e), 0);
	assert_int_equal(e->token, 2);
	assert_int_equal(kfs_holdq_push(&h, &project, &t.v[0], 7, 8, &e), 0);
	assert_int_equal(kfs_holdq_ready(&h), 0);
	/* an answer that is not the head's (one that went without) */
	assert_int_equal(kfs_holdq_answered(&h, 2), 0);
	assert_int_equal(kfs_holdq_answered(&h, 0), 0);
	/* the head's: it and the project's behind it */
	assert_int_equal(kfs_holdq_answered(&h, 1), 2);
	struct kfs_held out;
	kfs_holdq_pop(&h, &out);
	assert_int_equal(out.q.id, 1000);
	assert_int_equal(out.now, 1);
	kfs_held_release(&out);
	kfs_holdq_pop(&h, &out);
	assert_int_equal(out.q.qtype, 2);
	kfs_held_release(&out);
	assert_int_equal(kfs_holdq_answered(&h, 2), 2);
	/* a look-up that could not be asked is taken back */
	assert_int_equal(kfs_holdq_push(&h, &user, &t.v[0], 9, 10, &e), 0);
	assert_int_equal(e->token, 3);
	kfs_holdq_drop_last(&h);
	assert_int_equal(h.n, 2);
	kfs_holdq_release(&h);
	kfs_table_release(&t);
}

static void test_mount_event(void **state)
{
	(void)state;
	struct kfs_table a, b;
	assert_int_equal(kfs_table_parse(ROOT LOOP, strlen(ROOT LOOP), &a, NULL), 0);
	assert_int_equal(kfs_table_parse(ROOT LOOPR, strlen(ROOT LOOPR), &b, NULL), 0);
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kfs_mount_event(KFS_REMOUNT_RO, &b.v[1], &a.v[1], 1, &ev, &why), 0);
	assert_int_equal(ev->type, KEVENT_FS);
	assert_string_equal(ev->object, "/org/kernel/fs/mnt/a b");
	assert_string_equal(ev->signal, "remount-ro");
	assert_string_equal(kevent_prop(ev, "Mountpoint"), "/mnt/a b");
	assert_string_equal(kevent_prop(ev, "Device"), "/dev/loop0");
	assert_string_equal(kevent_prop(ev, "Fstype"), "ext4");
	assert_string_equal(kevent_prop(ev, "Options"), "ro,relatime");
	assert_string_equal(kevent_prop(ev, "Super-Options"), "ro");
	assert_string_equal(kevent_prop(ev, "Mount-Id"), "30");
	assert_string_equal(kevent_prop(ev, "Previous-Options"), "rw,relatime");
	kevent_free(ev);
	/* the root file system is /org/kernel/fs/ */
	assert_int_equal(kfs_mount_event(KFS_MOUNT, &a.v[0], NULL, 1, &ev, &why), 0);
	assert_string_equal(ev->object, "/org/kernel/fs/");
	assert_null(kevent_prop(ev, "Previous-Options"));
	kevent_free(ev);
	kfs_table_release(&a);
	kfs_table_release(&b);
	char obj[64];
	assert_int_equal(kfs_object("/media/\xc3\xa9t\xc3\xa9", obj, sizeof(obj)), 0);
	assert_string_equal(obj, "/org/kernel/fs/media/\\xc3\\xa9t\\xc3\\xa9");
	/* a byte escaped and its escape written by hand: two objects */
	char other[64];
	assert_int_equal(kfs_object("/mnt/a b\n c", obj, sizeof(obj)), 0);
	assert_int_equal(kfs_object("/mnt/a b\\012c", other, sizeof(other)), 0);
	assert_string_equal(obj, "/org/kernel/fs/mnt/a b\\n c");
	assert_string_equal(other, "/org/kernel/fs/mnt/a b\\\\012c");
}

/* An ext4 an error stopped writing, where the kernel shows nothing of it
 * (Linux 6.12 to 6.14): inferred, only with errors=remount-ro. */
static void test_error_ro(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct { const char *line; bool ro; } cases[] = {
		{"30 22 7:0 / /m rw - ext4 /dev/loop0 rw,errors=remount-ro\n", true},
		{"30 22 7:0 / /m rw - ext3 /dev/loop0 rw,errors=remount-ro\n", true},
		{"30 22 7:0 / /m rw - ext4 /dev/loop0 rw\n", false},
		{"30 22 7:0 / /m rw - ext4 /dev/loop0 rw,errors=continue\n", false},
		{"30 22 7:0 / /m rw - ext4 /dev/loop0 ro,errors=remount-ro\n", false},
		{"30 22 7:0 / /m rw - ext4 /dev/loop0 rw,emergency_ro,errors=remount-ro\n", false},
		{"30 22 7:0 / /m rw - xfs /dev/loop0 rw,errors=remount-ro\n", false},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kfs_table t;
		assert_int_equal(kfs_table_parse(cases[i].line, strlen(cases[i].line), &t, NULL),
				 0);
		if (kfs_mount_error_ro(&t.v[0]) != cases[i].ro)
			fail_msg("case %zu: %s", i, cases[i].line);
		kfs_table_release(&t);
	}
	struct kfs_table t;
	const char *line = cases[0].line;
	assert_int_equal(kfs_table_parse(line, strlen(line), &t, NULL), 0);
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kfs_error_ro_event(&t.v[0], 1, &ev, &why), 0);
	assert_string_equal(ev->signal, "remount-ro");
	assert_string_equal(ev->object, "/org/kernel/fs/m");
	assert_string_equal(kevent_prop(ev, "Super-Options"), "rw,errors=remount-ro,emergency_ro");
	assert_string_equal(kevent_prop(ev, "Previous-Super-Options"), "rw,errors=remount-ro");
	assert_string_equal(kevent_prop(ev, "Inferred"), "yes");
	kevent_free(ev);
	kfs_table_release(&t);
}

#define GB (1024ull * 1024 * 1024)

static void test_space(void **state)
{
	(void)state;
	const struct kfs_thresholds t = {
		.space_low = {KFS_LIMIT_PERCENT, 1000},
		.space_critical = {KFS_LIMIT_PERCENT, 300},
		.inodes_low = {KFS_LIMIT_PERCENT, 500},
	};
	/* a 100 GB file system, each look one step of avail (GB) and free
	 * inodes (of 1000); the margin of low (10 GB) is 1 GB, of critical
	 * (3 GB) 0.3 GB */
	/* clang-format off */
	static const struct { double avail; uint64_t files; const char *want; } steps[] = {
		{50, 900, ""},
		{10.5, 900, ""},
		{9.9, 900, "space-low"},
		{10.5, 900, ""},		/* within the margin: no flapping */
		{9.5, 900, ""},
		{2.9, 900, "space-critical"},
		{3.1, 900, ""},			/* within critical's margin */
		{3.4, 900, "space-low"},
		{11.1, 900, "space-ok"},
		{11.1, 40, "inodes-low"},
		{11.1, 52, ""},
		{11.1, 56, "inodes-ok"},
		{1, 900, "space-critical"},	/* straight past both: one event */
	};
	/* clang-format on */
	struct kfs_space s = {0};
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		struct kfs_stat st = {100 * GB, (uint64_t)(steps[i].avail * GB), 1000,
				      steps[i].files};
		struct kfs_space_change ch;
		kfs_space_update(&s, &t, &st, (i + 1) * 1000000000ull, &ch);
		char got[64] = "";
		for (size_t k = 0; k < ch.n; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", k ? "," : "",
				 ch.signal[k]);
		if (strcmp(got, steps[i].want) != 0)
			fail_msg("step %zu: got \"%s\", wanted \"%s\"", i, got, steps[i].want);
		assert_int_equal(ch.initial, i == 0);
	}
	/* already past at the first look: said, as initial */
	struct kfs_space s2 = {0};
	struct kfs_stat st = {100 * GB, 5 * GB, 1000, 10};
	struct kfs_space_change ch;
	kfs_space_update(&s2, &t, &st, 1, &ch);
	assert_int_equal(ch.n, 2);
	assert_true(ch.initial);
	assert_string_equal(ch.signal[0], "space-low");
	assert_string_equal(ch.signal[1], "inodes-low");
	struct kevent *ev = NULL;
	const char *why = NULL;
	struct kfs_mount m = {1, 7, 0, "/var", "ext4", "/dev/sda2", "rw", "rw"};
	assert_int_equal(kfs_space_event("space-low", true, &m, &st, 1, &ev, &why), 0);
	assert_string_equal(ev->object, "/org/kernel/fs/var");
	assert_string_equal(kevent_prop(ev, "Avail-Percent"), "5");
	assert_string_equal(kevent_prop(ev, "Avail"), "5368709120");
	assert_string_equal(kevent_prop(ev, "Files-Avail"), "10");
	assert_string_equal(kevent_prop(ev, "Initial"), "yes");
	kevent_free(ev);
}

static void test_interval(void **state)
{
	(void)state;
	const struct kfs_thresholds t = {.space_low = {KFS_LIMIT_PERCENT, 1000}};
	struct kfs_space s = {.known = true, .space = KFS_OK};
	struct kfs_stat st = {100 * GB, 50 * GB, 0, 0};
	/* clang-format off */
	static const struct { double rate; uint64_t want_ns; } cases[] = {
		{0, KFS_MAX_INTERVAL_NS},		/* still: the longest */
		{1e3, KFS_MAX_INTERVAL_NS},		/* 40 GB away at 1 KB/s */
		{1.0 * GB, 20000000000ull},		/* 40 s away: half of it */
		{1e15, KFS_MIN_INTERVAL_NS},		/* no slower than the shortest */
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_int_equal(kfs_space_interval(&s, &t, &st, cases[i].rate, 0),
				 cases[i].want_ns);
	/* a file system with every threshold off is never looked at */
	const struct kfs_thresholds off = {0};
	assert_false(kfs_thresholds_on(&off));
	assert_true(kfs_thresholds_on(&t));
	/* past the line and still: as long as it has been still, 1 s to 60 s */
	s.space = KFS_LOW;
	s.changed_ns = 0;
	st.avail = 5 * GB;
	assert_int_equal(kfs_space_interval(&s, &t, &st, 0, 0), 1000000000ull);
	assert_int_equal(kfs_space_interval(&s, &t, &st, 0, 7000000000ull), 7000000000ull);
	assert_int_equal(kfs_space_interval(&s, &t, &st, 0, 900000000000ull), KFS_MAX_INTERVAL_NS);
}

static size_t put_rec(uint8_t *buf, uint64_t mask, int error, uint32_t count, int fh_type,
		      uint32_t ino)
{
	uint8_t info[64];
	size_t n = 0;
	struct fanotify_event_info_error e = {
		{FAN_EVENT_INFO_TYPE_ERROR, 0, sizeof(e)}, error, count};
	memcpy(info, &e, sizeof(e));
	n += sizeof(e);
	struct fanotify_event_info_fid fid = {{FAN_EVENT_INFO_TYPE_FID, 0, 0}, {{0x12, 0x34}}};
	uint32_t bytes = fh_type == 1 ? 8 : 0, gen = 9;
	fid.hdr.len = (uint16_t)(sizeof(fid) + 8 + bytes);
	memcpy(info + n, &fid, sizeof(fid));
	memcpy(info + n + sizeof(fid), &bytes, 4);
	memcpy(info + n + sizeof(fid) + 4, &fh_type, 4);
	memcpy(info + n + sizeof(fid) + 8, &ino, 4);
	memcpy(info + n + sizeof(fid) + 12, &gen, 4);
	n += fid.hdr.len;
	struct fanotify_event_metadata md = {
		.event_len = (uint32_t)(sizeof(md) + n),
		.vers = FANOTIFY_METADATA_VERSION,
		.metadata_len = sizeof(md),
		.mask = mask,
		.fd = FAN_NOFD,
	};
	memcpy(buf, &md, sizeof(md));
	memcpy(buf + sizeof(md), info, n);
	return md.event_len;
}

static void test_fanotify(void **state)
{
	(void)state;
	uint8_t buf[256];
	struct kfs_fan_rec r;
	size_t used;
	const char *why = NULL;
	size_t len = put_rec(buf, FAN_FS_ERROR, EIO, 3, 1, 4242);
	assert_int_equal(kfs_fan_decode(buf, len, &r, &used, &why), 0);
	assert_int_equal(used, len);
	assert_true(r.has_error && r.has_fsid && r.has_ino);
	assert_int_equal(r.error, EIO);
	assert_int_equal(r.error_count, 3);
	assert_int_equal(r.fsid[0], 0x12);
	assert_int_equal(r.ino, 4242);
	struct kfs_mount m = {1, 7, 0, "/", "ext4", "/dev/vda", "rw", "rw"};
	struct kevent *ev = NULL;
	assert_int_equal(kfs_error_event(&r, &m, 1, &ev, &why), 0);
	assert_string_equal(ev->signal, "error");
	assert_string_equal(ev->object, "/org/kernel/fs/");
	assert_string_equal(kevent_prop(ev, "Error"), "EIO");
	assert_string_equal(kevent_prop(ev, "Error-Count"), "3");
	assert_string_equal(kevent_prop(ev, "Inode"), "4242");
	kevent_free(ev);
	/* the whole file system (no inode): FILEID_INVALID */
	len = put_rec(buf, FAN_FS_ERROR, EUCLEAN, 1, 0xff, 0);
	assert_int_equal(kfs_fan_decode(buf, len, &r, &used, &why), 0);
	assert_false(r.has_ino);
	assert_int_equal(kfs_error_event(&r, &m, 1, &ev, &why), 0);
	assert_string_equal(kevent_prop(ev, "Error"), "EUCLEAN");
	assert_null(kevent_prop(ev, "Inode"));
	kevent_free(ev);
	/* cut or lying records are refused, never read past */
	/* clang-format off */
	static const struct { size_t cut; size_t poke_at; uint8_t poke; } bad[] = {
		{10, 0, 0},		/* shorter than the header */
		{40, 0, 0},		/* event_len past the buffer */
		{0, 4, 2},		/* another version */
		{0, 6, 200},		/* metadata_len past the record */
		{0, 26, 255},		/* an information's length past the record */
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		len = put_rec(buf, FAN_FS_ERROR, EIO, 1, 1, 1);
		if (bad[i].poke_at)
			buf[bad[i].poke_at] = bad[i].poke;
		size_t l = bad[i].cut ? bad[i].cut : len;
		why = NULL;
		if (kfs_fan_decode(buf, l, &r, &used, &why) != -EINVAL || !why)
			fail_msg("bad case %zu accepted", i);
		assert_true(used <= l);
	}
}

/* The fs: section read: its values, and what a mount point leaves to the
 * section (its mistakes: test-source-type.c). */
static void test_config(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct { const char *yaml; } cases[] = {
		{"fs: {mounts: all, space_low: 20%, space_critical: 2.5%, inodes_low: 10000}\n"},
		{"fs:\n  space_low: 2G\n  /var: {space_low: 30%}\n  /srv/: {space_critical: off}\n"},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ynode *root = tu_yaml(cases[i].yaml);
		struct kfs_config c;
		kfs_config_init(&c);
		struct kdiags d = {0};
		if (kfs_config_parse(&c, root->kids[1], "k.yaml", &d) != 0)
			fail_msg("case %zu: %s", i, d.n ? d.v[0].msg : "?");
		if (i == 0) {
			assert_true(c.all);
			assert_int_equal(c.t.space_critical.value, 250);
			assert_int_equal(c.t.inodes_low.kind, KFS_LIMIT_SIZE);
			assert_int_equal(c.t.inodes_low.value, 10000);
		}
		if (i == 1) {
			const struct kfs_thresholds *v = kfs_config_for(&c, "/var");
			assert_int_equal(v->space_low.kind, KFS_LIMIT_PERCENT);
			assert_int_equal(v->space_low.value, 3000);
			/* what an override does not say comes from the section */
			assert_int_equal(v->space_critical.value, 300);
			const struct kfs_thresholds *srv = kfs_config_for(&c, "/srv");
			assert_int_equal(srv->space_low.kind, KFS_LIMIT_SIZE);
			assert_int_equal(srv->space_low.value, 2 * GB);
			assert_int_equal(srv->space_critical.kind, KFS_LIMIT_OFF);
			assert_ptr_equal(kfs_config_for(&c, "/home"), &c.t);
		}
		kdiags_free(&d);
		kfs_config_release(&c);
		ynode_free(root);
	}
}

static void parse_config(const char *yaml, struct kfs_config *c)
{
	struct ynode *root = tu_yaml(yaml);
	struct kdiags d = {0};
	kfs_config_init(c);
	assert_int_equal(kfs_config_parse(c, root->kids[1], "k.yaml", &d), 0);
	kdiags_free(&d);
	ynode_free(root);
}

/* What a reload compares: the same settings however written, and any
 * difference seen. */
static void test_config_equal(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct { const char *a, *b; bool equal; } cases[] = {
		{"fs: {}\n", "fs: {space_low: 10%, space_critical: 3%, inodes_low: 5%}\n", true},
		{"fs: {space_low: off}\n", "fs: {space_low: 0}\n", true},
		{"fs: {/var: {space_low: 20%}}\n", "fs: {/var: {space_low: 20%}}\n", true},
		{"fs: {}\n", "fs: {mounts: all}\n", false},
		{"fs: {space_low: 10%}\n", "fs: {space_low: 11%}\n", false},
		{"fs: {space_low: 1000K}\n", "fs: {space_low: 10%}\n", false},
		{"fs: {inodes_low: 5%}\n", "fs: {inodes_low: off}\n", false},
		{"fs: {/var: {space_low: 20%}}\n", "fs: {/srv: {space_low: 20%}}\n", false},
		{"fs: {/var: {space_low: 20%}}\n", "fs: {/var: {space_low: 21%}}\n", false},
		{"fs: {/var: {space_low: 20%}}\n", "fs: {}\n", false},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kfs_config a, b;
		parse_config(cases[i].a, &a);
		parse_config(cases[i].b, &b);
		if (kfs_config_equal(&a, &b) != cases[i].equal ||
		    kfs_config_equal(&b, &a) != cases[i].equal)
			fail_msg("case %zu: wanted %s", i, cases[i].equal ? "equal" : "different");
		kfs_config_release(&a);
		kfs_config_release(&b);
	}
}

#define DQUOT 0x1d

static void quota_msg(struct msg *m, uint32_t type, uint64_t id, uint32_t warning, uint32_t major,
		      uint32_t minor, uint64_t caller)
{
	nl_begin(m, DQUOT, QUOTA_NL_C_WARNING);
	nl_put_u32(m, QUOTA_NL_A_QTYPE, type);
	nl_put_u64(m, QUOTA_NL_A_EXCESS_ID, id);
	nl_put_u32(m, QUOTA_NL_A_WARNING, warning);
	nl_put_u32(m, QUOTA_NL_A_DEV_MAJOR, major);
	nl_put_u32(m, QUOTA_NL_A_DEV_MINOR, minor);
	nl_put_u64(m, QUOTA_NL_A_CAUSED_ID, caller);
}

static void test_quota(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct { uint32_t type, warning; const char *signal; } cases[] = {
		{USRQUOTA, QUOTA_NL_BSOFTWARN, "block-soft"},
		{USRQUOTA, QUOTA_NL_BHARDWARN, "block-hard"},
		{USRQUOTA, QUOTA_NL_BSOFTLONGWARN, "block-grace-expired"},
		{GRPQUOTA, QUOTA_NL_ISOFTWARN, "inode-soft"},
		{GRPQUOTA, QUOTA_NL_IHARDWARN, "inode-hard"},
		{GRPQUOTA, QUOTA_NL_ISOFTLONGWARN, "inode-grace-expired"},
		{PRJQUOTA, QUOTA_NL_BSOFTBELOW, "block-below-soft"},
		{PRJQUOTA, QUOTA_NL_BHARDBELOW, "block-below-hard"},
		{USRQUOTA, QUOTA_NL_ISOFTBELOW, "inode-below-soft"},
		{USRQUOTA, QUOTA_NL_IHARDBELOW, "inode-below-hard"},
		{USRQUOTA, QUOTA_NL_NOWARN, NULL},	/* not a warning: refused */
		{3, QUOTA_NL_BSOFTWARN, NULL},		/* no such quota type */
		{USRQUOTA, 11, NULL},
	};
	/* clang-format on */
	struct kfs_mount mnt = {1, 7, 3, "/home", "ext4", "/dev/loop3", "rw", "rw,quota"};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct msg m;
		struct kfs_quota_msg q;
		const char *why = NULL;
		quota_msg(&m, cases[i].type, 1000, cases[i].warning, 7, 3, 0);
		int rc = kfs_quota_decode(m.buf, m.len, DQUOT, &q, &why);
		if (!cases[i].signal) {
			assert_int_equal(rc, -EINVAL);
			assert_non_null(why);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_true(q.warning);
		assert_string_equal(q.signal, cases[i].signal);
		assert_int_equal(q.major, 7);
		assert_int_equal(q.minor, 3);
		struct kevent *ev = NULL;
		assert_int_equal(kfs_quota_event(&q, &mnt, i == 0 ? "alice" : NULL, 1, &ev, &why),
				 0);
		assert_string_equal(ev->object, "/org/kernel/fs/home");
		assert_string_equal(ev->signal, cases[i].signal);
		assert_string_equal(kevent_prop(ev, "Device"), "7:3 /dev/loop3");
		assert_string_equal(kevent_prop(ev, "Id"), "1000");
		assert_string_equal(kevent_prop(ev, "Caller-Uid"), "0");
		assert_string_equal(kevent_prop(ev, "Quota-Type"),
				    cases[i].type == USRQUOTA	? "user"
				    : cases[i].type == GRPQUOTA ? "group"
								: "project");
		if (i == 0)
			assert_string_equal(kevent_prop(ev, "Name"), "alice");
		else
			assert_null(kevent_prop(ev, "Name"));
		kevent_free(ev);
	}
	/* an attribute missing or of the wrong size; another family; another command */
	struct msg m;
	struct kfs_quota_msg q;
	const char *why = NULL;
	nl_begin(&m, DQUOT, QUOTA_NL_C_WARNING);
	nl_put_u32(&m, QUOTA_NL_A_QTYPE, 0);
	assert_int_equal(kfs_quota_decode(m.buf, m.len, DQUOT, &q, &why), -EINVAL);
	nl_begin(&m, DQUOT, QUOTA_NL_C_WARNING);
	nl_put_u32(&m, QUOTA_NL_A_QTYPE, 0);
	nl_put_u32(&m, QUOTA_NL_A_EXCESS_ID, 1000);
	nl_put_u32(&m, QUOTA_NL_A_WARNING, QUOTA_NL_BSOFTWARN);
	nl_put_u32(&m, QUOTA_NL_A_DEV_MAJOR, 7);
	nl_put_u32(&m, QUOTA_NL_A_DEV_MINOR, 3);
	nl_put_u64(&m, QUOTA_NL_A_CAUSED_ID, 0);
	assert_int_equal(kfs_quota_decode(m.buf, m.len, DQUOT, &q, &why), -EINVAL);
	quota_msg(&m, 0, 1000, QUOTA_NL_BSOFTWARN, 7, 3, 0);
	assert_true(kfs_quota_decode(m.buf, m.len, DQUOT + 1, &q, &why) < 0);
	nl_begin(&m, DQUOT, QUOTA_NL_C_UNSPEC);
	assert_int_equal(kfs_quota_decode(m.buf, m.len, DQUOT, &q, &why), 0);
	assert_false(q.warning);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),	     cmocka_unit_test(test_remote),
		cmocka_unit_test(test_wanted),	     cmocka_unit_test(test_diff),
		cmocka_unit_test(test_state),	     cmocka_unit_test(test_mount_event),
		cmocka_unit_test(test_space),	     cmocka_unit_test(test_interval),
		cmocka_unit_test(test_fanotify),     cmocka_unit_test(test_config),
		cmocka_unit_test(test_quota),	     cmocka_unit_test(test_holdq),
		cmocka_unit_test(test_config_equal), cmocka_unit_test(test_error_ro),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
