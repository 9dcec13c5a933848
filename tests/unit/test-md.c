// SPDX-License-Identifier: GPL-2.0-or-later
/* The md source's pure parts: /proc/mdstat's text as the kernel writes
 * it, an array's md/ attributes from a directory, what changed between
 * two looks (failures, degraded and whole, syncs and their 10 % steps),
 * when to look at a sync again, and the events. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "md.h"
#include "testutil.h"

#define PERS \
	"Personalities : [raid1] [linear] [multipath] [raid0] [raid6] [raid5] [raid4] [raid10] \n"
#define TAIL "unused devices: <none>\n"

/* real texts, as md.c and raid1.c/raid5.c print them */
#define OPTIMAL                                     \
	"md0 : active raid1 vdc[1] vdb[0]\n"        \
	"      65472 blocks super 1.2 [2/2] [UU]\n" \
	"      \n"
#define FAULTY                                      \
	"md0 : active raid1 vdc[1](F) vdb[0]\n"     \
	"      65472 blocks super 1.2 [2/1] [U_]\n" \
	"      \n"
#define REMOVED                                     \
	"md0 : active raid1 vdb[0]\n"               \
	"      65472 blocks super 1.2 [2/1] [U_]\n" \
	"      \n"
#define RECOVERY(pct, done)                                                                  \
	"md0 : active raid1 vdc[2] vdb[0]\n"                                                 \
	"      65472 blocks super 1.2 [2/1] [U_]\n"                                          \
	"      [====>................]  recovery = " pct "% (" done "/65472) finish=0.2min " \
	"speed=3696K/sec\n"                                                                  \
	"      \n"
#define WHOLE                                       \
	"md0 : active raid1 vdc[2] vdb[0]\n"        \
	"      65472 blocks super 1.2 [2/2] [UU]\n" \
	"      \n"
#define CHECK(pct, done)                                                                  \
	"md0 : active raid1 vdc[2] vdb[0]\n"                                              \
	"      65472 blocks super 1.2 [2/2] [UU]\n"                                       \
	"      [=========>...........]  check = " pct "% (" done "/65472) finish=0.1min " \
	"speed=3855K/sec\n"                                                               \
	"      \n"
#define RESYNC                                                                         \
	"md1 : active raid1 sdc1[1] sdb1[0]\n"                                         \
	"      1046528 blocks super 1.2 [2/2] [UU]\n"                                  \
	"      [>....................]  resync =  0.9% (10112/1046528) finish=1.7min " \
	"speed=10112K/sec\n"                                                           \
	"      bitmap: 1/1 pages [4KB], 65536KB chunk\n"                               \
	"\n"
#define RAID5                                                                             \
	"md2 : active raid5 sdd1[3] sdc1[1] sdb1[0]\n"                                    \
	"      2093056 blocks super 1.2 level 5, 512k chunk, algorithm 2 [3/2] [UU_]\n"   \
	"      [==>..................]  recovery = 12.6% (132480/1046528) finish=0.9min " \
	"speed=16560K/sec\n"                                                              \
	"      \n"
#define INACTIVE                                 \
	"md127 : inactive sdb[1](S) sdc[2](S)\n" \
	"      2093056 blocks super 1.2\n"       \
	"       \n"
#define DELAYED                                               \
	"md3 : active (auto-read-only) raid1 sde[0] sdf[1]\n" \
	"      1046528 blocks super 1.2 [2/2] [UU]\n"         \
	"      \tresync=DELAYED\n"                            \
	"      \n"

struct want_member {
	const char *name;
	bool faulty, spare;
};

static void test_parse(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *text;
		const char *name, *level;
		bool active;
		int raid_disks, degraded;
		enum kmd_action action;
		bool syncing;
		uint64_t done, total;
		size_t n_m;
		struct want_member m[3];
	} cases[] = {
		{PERS OPTIMAL TAIL, "md0", "raid1", true, 2, 0, KMD_IDLE, false, 0, 0, 2,
		 {{"vdc", false, false}, {"vdb", false, false}}},
		{PERS FAULTY TAIL, "md0", "raid1", true, 2, 1, KMD_IDLE, false, 0, 0, 2,
		 {{"vdc", true, false}, {"vdb", false, false}}},
		{PERS REMOVED TAIL, "md0", "raid1", true, 2, 1, KMD_IDLE, false, 0, 0, 1,
		 {{"vdb", false, false}}},
		{PERS RECOVERY("22.5", "14784") TAIL, "md0", "raid1", true, 2, 1, KMD_RECOVER, true,
		 2 * 14784, 2 * 65472, 2, {{"vdc", false, false}, {"vdb", false, false}}},
		{PERS CHECK("47.1", "30848") TAIL, "md0", "raid1", true, 2, 0, KMD_CHECK, true,
		 2 * 30848, 2 * 65472, 2, {{"vdc", false, false}, {"vdb", false, false}}},
		{PERS RESYNC TAIL, "md1", "raid1", true, 2, 0, KMD_RESYNC, true, 2 * 10112,
		 2 * 1046528, 2, {{"sdc1", false, false}, {"sdb1", false, false}}},
		{PERS RAID5 TAIL, "md2", "raid5", true, 3, 1, KMD_RECOVER, true, 2 * 132480,
		 2 * 1046528, 3, {{"sdd1", false, false}, {"sdc1", false, false}, {"sdb1", false, false}}},
		{PERS INACTIVE TAIL, "md127", "", false, -1, -1, KMD_IDLE, false, 0, 0, 2,
		 {{"sdb", false, true}, {"sdc", false, true}}},
		{PERS DELAYED TAIL, "md3", "raid1", true, 2, 0, KMD_RESYNC, true, 0, 0, 2,
		 {{"sde", false, false}, {"sdf", false, false}}},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kmd_stat st;
		assert_int_equal(kmd_stat_parse(cases[i].text, strlen(cases[i].text), &st), 0);
		assert_int_equal(st.n, 1);
		const struct kmd_array *a = kmd_stat_find(&st, cases[i].name);
		assert_non_null(a);
		assert_string_equal(a->level, cases[i].level);
		assert_int_equal(a->active, cases[i].active);
		assert_int_equal(a->raid_disks, cases[i].raid_disks);
		assert_int_equal(a->degraded, cases[i].degraded);
		assert_int_equal(a->action, cases[i].action);
		assert_int_equal(a->syncing, cases[i].syncing);
		assert_int_equal(a->done, cases[i].done);
		assert_int_equal(a->total, cases[i].total);
		assert_int_equal(a->n_m, cases[i].n_m);
		for (size_t j = 0; j < cases[i].n_m; j++) {
			assert_string_equal(a->m[j].name, cases[i].m[j].name);
			assert_int_equal(a->m[j].faulty, cases[i].m[j].faulty);
			assert_int_equal(a->m[j].spare, cases[i].m[j].spare);
		}
		kmd_stat_release(&st);
	}
}

static void test_parse_many(void **state)
{
	(void)state;
	const char *text = PERS OPTIMAL RESYNC RAID5 INACTIVE TAIL;
	struct kmd_stat st;
	assert_int_equal(kmd_stat_parse(text, strlen(text), &st), 0);
	assert_int_equal(st.n, 4);
	assert_non_null(kmd_stat_find(&st, "md127"));
	assert_null(kmd_stat_find(&st, "md9"));
	kmd_stat_release(&st);

	/* no md driver's arrays, and lines that are not mdstat's */
	const char *odd = PERS TAIL "md../x : active raid1 a[0]\n"
				    "md4 active raid1\n"
				    "md5 : active raid1 ../etc[0] vdb[0](F)(S) vdc[x]\n";
	assert_int_equal(kmd_stat_parse(odd, strlen(odd), &st), 0);
	assert_int_equal(st.n, 1);
	assert_string_equal(st.v[0].name, "md5");
	assert_int_equal(st.v[0].n_m, 1);
	assert_true(st.v[0].m[0].faulty && st.v[0].m[0].spare);
	kmd_stat_release(&st);
}

static void test_completed(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct { const char *s; int rc; bool syncing; uint64_t done, total; } cases[] = {
		{"none", 0, false, 0, 0},
		{"delayed", 0, true, 0, 0},
		{"1024 / 130944", 0, true, 1024, 130944},
		{"130944 / 130944", 0, true, 130944, 130944},
		{"2 / 1", -EINVAL, false, 0, 0},
		{"1024/130944", -EINVAL, false, 0, 0},
		{"-1 / 5", -EINVAL, false, 0, 0},
		{"", -EINVAL, false, 0, 0},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		bool syncing = false;
		uint64_t done = 0, total = 0;
		assert_int_equal(kmd_parse_completed(cases[i].s, &syncing, &done, &total),
				 cases[i].rc);
		if (cases[i].rc == 0) {
			assert_int_equal(syncing, cases[i].syncing);
			assert_int_equal(done, cases[i].done);
			assert_int_equal(total, cases[i].total);
		}
	}
	struct kmd_member m;
	kmd_parse_member_state("faulty,write_error", &m);
	assert_true(m.faulty && !m.in_sync && !m.spare);
	kmd_parse_member_state("in_sync", &m);
	assert_true(!m.faulty && m.in_sync && !m.spare);
	kmd_parse_member_state("spare,replacement", &m);
	assert_true(!m.faulty && !m.in_sync && m.spare);
}

static void test_sysfs(void **state)
{
	(void)state;
	char *root = tu_mkdtemp();
	tu_write(root, "array_state", "clean\n", 0644);
	tu_write(root, "level", "raid1\n", 0644);
	tu_write(root, "raid_disks", "2\n", 0644);
	tu_write(root, "degraded", "1\n", 0644);
	tu_write(root, "sync_action", "recover\n", 0644);
	tu_write(root, "sync_completed", "16384 / 130944\n", 0644);
	tu_write(root, "mismatch_cnt", "0\n", 0644);
	tu_write(root, "resync_start", "none\n", 0644);
	tu_write(root, "sync_min", "0\n", 0644);
	tu_write(root, "uuid", "3f1c9a2e-5b7d-4e21-9c0a-6d8e2f4b1a07\n", 0644);
	free(tu_subdir(root, "dev-vdb"));
	free(tu_subdir(root, "dev-vdd"));
	free(tu_subdir(root, "rd0"));
	char *p = tu_printf("%s/dev-vdb", root);
	tu_write(p, "state", "in_sync\n", 0644);
	tu_write(p, "slot", "0\n", 0644);
	free(p);
	p = tu_printf("%s/dev-vdd", root);
	tu_write(p, "state", "spare\n", 0644);
	tu_write(p, "slot", "1\n", 0644);
	free(p);

	struct kmd_stat st;
	const char *text = PERS RECOVERY("22.5", "14784") TAIL;
	assert_int_equal(kmd_stat_parse(text, strlen(text), &st), 0);
	struct kmd_array a = st.v[0];
	kmd_stat_release(&st);
	int fd = open(root, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(kmd_sysfs_read(fd, &a), 0);
	assert_string_equal(a.array_state, "clean");
	assert_string_equal(a.level, "raid1");
	assert_string_equal(a.uuid, "3f1c9a2e-5b7d-4e21-9c0a-6d8e2f4b1a07");
	assert_int_equal(a.degraded, 1);
	assert_int_equal(a.action, KMD_RECOVER);
	assert_true(a.syncing);
	/* mdstat's position (ahead of the checkpoint) is kept */
	assert_int_equal(a.done, 2 * 14784);
	assert_int_equal(a.total, 130944);
	assert_false(a.resync_pending);
	assert_true(a.has_mismatch);
	assert_int_equal(a.n_m, 2);
	assert_string_equal(a.m[0].name, "vdb");
	assert_true(a.m[0].in_sync);
	assert_int_equal(a.m[0].slot, 0);
	assert_string_equal(a.m[1].name, "vdd");
	assert_true(a.m[1].spare && !a.m[1].in_sync);
	assert_int_equal(a.m[1].slot, 1);

	/* the sync over: sync_completed says none whatever sync_action says */
	tu_write(root, "sync_completed", "none\n", 0644);
	assert_int_equal(kmd_sysfs_read(fd, &a), 0);
	assert_false(a.syncing);
	assert_int_equal(a.action, KMD_IDLE);

	/* md looking for a spare after a failure: "recover" and "0 / N" for
	 * a moment, but no sync in mdstat: none runs */
	text = PERS FAULTY TAIL;
	assert_int_equal(kmd_stat_parse(text, strlen(text), &st), 0);
	a = st.v[0];
	kmd_stat_release(&st);
	tu_write(root, "sync_completed", "0 / 130944\n", 0644);
	/* an array without a superblock (mdadm --build) has a null UUID */
	tu_write(root, "uuid", "00000000-0000-0000-0000-000000000000\n", 0644);
	assert_int_equal(kmd_sysfs_read(fd, &a), 0);
	assert_string_equal(a.uuid, "");
	assert_false(a.syncing);
	assert_int_equal(a.action, KMD_IDLE);
	assert_int_equal(a.total, 0);

	/* a repair: mdstat says resync, sync_action says what it is */
	text = PERS RESYNC TAIL;
	assert_int_equal(kmd_stat_parse(text, strlen(text), &st), 0);
	a = st.v[0];
	kmd_stat_release(&st);
	tu_write(root, "sync_action", "repair\n", 0644);
	tu_write(root, "sync_completed", "0 / 2093056\n", 0644);
	assert_int_equal(kmd_sysfs_read(fd, &a), 0);
	assert_true(a.syncing);
	assert_int_equal(a.action, KMD_REPAIR);
	assert_int_equal(a.done, 2 * 10112);
	close(fd);
	tu_rm_rf(root);
	free(root);
}

/* --- what changed --- */

/* One look: an mdstat text, and what only md/ says. */
struct step {
	const char *text;
	const char *states; /* "vdc=spare vdb=in_sync": members' state */
	bool resync_pending;
	int64_t sync_min; /* -1: none */
	uint64_t mismatch;
	const char *want; /* the signals, with ":Member" or ":Percent" */
};

static void look(const struct step *s, struct kmd_array *a)
{
	struct kmd_stat st;
	assert_int_equal(kmd_stat_parse(s->text, strlen(s->text), &st), 0);
	assert_int_equal(st.n, 1);
	*a = st.v[0];
	kmd_stat_release(&st);
	snprintf(a->array_state, sizeof(a->array_state), "clean");
	a->resync_pending = s->resync_pending;
	a->has_sync_min = s->sync_min >= 0;
	a->sync_min = s->sync_min >= 0 ? (uint64_t)s->sync_min : 0;
	a->has_mismatch = true;
	a->mismatch = s->mismatch;
	for (const char *p = s->states ? s->states : ""; *p;) {
		size_t n = strcspn(p, " ");
		char item[64];
		snprintf(item, sizeof(item), "%.*s", (int)n, p);
		char *eq = strchr(item, '=');
		assert_non_null(eq);
		*eq = '\0';
		for (size_t i = 0; i < a->n_m; i++)
			if (strcmp(a->m[i].name, item) == 0)
				kmd_parse_member_state(eq + 1, &a->m[i]);
		p += n;
		while (*p == ' ')
			p++;
	}
}

static char *said(const struct kmd_changes *ch)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < ch->n; i++) {
		const struct kmd_change *c = &ch->v[i];
		if (i)
			strbuf_putc(&sb, ' ');
		strbuf_puts(&sb, c->signal);
		if (c->member[0])
			strbuf_printf(&sb, ":%s", c->member);
		if (strcmp(c->signal, "progress") == 0)
			strbuf_printf(&sb, ":%u", c->percent);
		if (strstr(c->signal, "-done"))
			strbuf_puts(&sb, c->result ? ":done" : ":interrupted");
		if (c->has_mismatch)
			strbuf_printf(&sb, ":%llu", (unsigned long long)c->mismatch);
		if (c->initial)
			strbuf_puts(&sb, ":initial");
	}
	return strbuf_steal(&sb);
}

static void run_steps(const struct step *steps, size_t n, bool fresh)
{
	struct kmd_track t = {0};
	uint64_t now = 1000000000;
	for (size_t i = 0; i < n; i++) {
		struct kmd_array a;
		struct kmd_changes ch;
		look(&steps[i], &a);
		kmd_update(&t, &a, fresh, now, &ch);
		char *got = said(&ch);
		if (strcmp(got, steps[i].want) != 0)
			fail_msg("step %zu: expected \"%s\", got \"%s\"", i, steps[i].want, got);
		free(got);
		now += 1000000000;
	}
}

#define FULL_STEPS                                                                             \
	"progress:10 progress:20 progress:30 progress:40 progress:50 progress:60 progress:70 " \
	"progress:80 progress:90"

static void test_fail_and_rebuild(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct step steps[] = {
		{PERS OPTIMAL TAIL, "vdb=in_sync vdc=in_sync", false, 0, 0, ""},
		{PERS FAULTY TAIL, "vdb=in_sync vdc=faulty", false, 0, 0, "failed-device:vdc degraded"},
		{PERS FAULTY TAIL, "vdb=in_sync vdc=faulty", false, 0, 0, ""},
		{PERS REMOVED TAIL, "vdb=in_sync", false, 0, 0, ""},
		{PERS RECOVERY(" 5.0", "3273") TAIL, "vdb=in_sync vdc=spare", false, 0, 0,
		 "recovery-start"},
		{PERS RECOVERY("22.5", "14784") TAIL, "vdb=in_sync vdc=spare", false, 0, 0,
		 "progress:10 progress:20"},
		{PERS RECOVERY("29.9", "19600") TAIL, "vdb=in_sync vdc=spare", false, 0, 0, ""},
		{PERS RECOVERY("95.0", "62200") TAIL, "vdb=in_sync vdc=spare", false, 0, 0,
		 "progress:30 progress:40 progress:50 progress:60 progress:70 progress:80 progress:90"},
		{PERS WHOLE TAIL, "vdb=in_sync vdc=in_sync", false, 0, 0,
		 "recovery-done:done spare-active:vdc optimal"},
	};
	/* clang-format on */
	run_steps(steps, ARRAY_SIZE(steps), false);
}

static void test_missed_steps(void **state)
{
	(void)state;
	/* a fail and a remove between two looks; a rebuild seen only at its
	 * start and its end: no step is missed */
	/* clang-format off */
	static const struct step steps[] = {
		{PERS OPTIMAL TAIL, "vdb=in_sync vdc=in_sync", false, 0, 0, ""},
		{PERS REMOVED TAIL, "vdb=in_sync", false, 0, 0, "failed-device:vdc degraded"},
		{PERS RECOVERY(" 1.0", "654") TAIL, "vdb=in_sync vdc=spare", false, 0, 0,
		 "recovery-start"},
		{PERS WHOLE TAIL, "vdb=in_sync vdc=in_sync", false, 0, 0,
		 FULL_STEPS " recovery-done:done spare-active:vdc optimal"},
	};
	/* clang-format on */
	run_steps(steps, ARRAY_SIZE(steps), false);

	/* the new member fails during its rebuild: interrupted, no steps */
	/* clang-format off */
	static const struct step broken[] = {
		{PERS RECOVERY("42.0", "27500") TAIL, "vdb=in_sync vdc=spare", false, 0, 0,
		 "degraded:initial recovery-start:initial"},
		{PERS RECOVERY("52.0", "34100") TAIL, "vdb=in_sync vdc=spare", false, 0, 0,
		 "progress:50"},
		{PERS FAULTY TAIL, "vdb=in_sync vdc=faulty", false, 0, 0,
		 "failed-device:vdc recovery-done:interrupted"},
	};
	/* clang-format on */
	run_steps(broken, ARRAY_SIZE(broken), false);
}

static void test_check(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct step done[] = {
		{PERS WHOLE TAIL, "vdb=in_sync vdc=in_sync", false, 0, 0, ""},
		{PERS CHECK(" 3.0", "1964") TAIL, "vdb=in_sync vdc=in_sync", false, 0, 0,
		 "check-start"},
		{PERS CHECK("47.1", "30848") TAIL, "vdb=in_sync vdc=in_sync", false, 0, 0,
		 "progress:10 progress:20 progress:30 progress:40"},
		{PERS WHOLE TAIL, "vdb=in_sync vdc=in_sync", false, 0, 128,
		 "progress:50 progress:60 progress:70 progress:80 progress:90 check-done:done:128"},
	};
	static const struct step stopped[] = {
		{PERS CHECK("47.1", "30848") TAIL, "vdb=in_sync vdc=in_sync", false, 0, 0,
		 "check-start:initial"},
		{PERS WHOLE TAIL, "vdb=in_sync vdc=in_sync", false, 61696, 0,
		 "check-done:interrupted:0"},
	};
	/* seen at its end before md reaped it: over then, and not again */
	static const struct step at_end[] = {
		{PERS CHECK("47.1", "30848") TAIL, "vdb=in_sync vdc=in_sync", false, 0, 0,
		 "check-start:initial"},
		{PERS CHECK("100.0", "65472") TAIL, "vdb=in_sync vdc=in_sync", false, 30848, 0,
		 "progress:50 progress:60 progress:70 progress:80 progress:90 check-done:done:0"},
		{PERS WHOLE TAIL, "vdb=in_sync vdc=in_sync", false, 0, 0, ""},
	};
	/* clang-format on */
	run_steps(done, ARRAY_SIZE(done), false);
	run_steps(stopped, ARRAY_SIZE(stopped), false);
	run_steps(at_end, ARRAY_SIZE(at_end), false);
}

static void test_new_array(void **state)
{
	(void)state;
	/* an array made after keventd started: its first resync is news */
	/* clang-format off */
	static const struct step steps[] = {
		{PERS RESYNC TAIL, "sdb1=in_sync sdc1=in_sync", true, -1, 0, "resync-start"},
		{PERS "md1 : active raid1 sdc1[1] sdb1[0]\n"
		      "      1046528 blocks super 1.2 [2/2] [UU]\n\n" TAIL,
		 "sdb1=in_sync sdc1=in_sync", false, -1, 0, FULL_STEPS " resync-done:done"},
	};
	/* clang-format on */
	run_steps(steps, ARRAY_SIZE(steps), true);

	/* at keventd's start the same array is only said to be resyncing */
	struct kmd_track t = {0};
	struct kmd_array a;
	struct kmd_changes ch;
	look(&steps[0], &a);
	kmd_update(&t, &a, false, 1, &ch);
	char *got = said(&ch);
	assert_string_equal(got, "resync-start:initial");
	free(got);
}

static void test_assemble_and_stop(void **state)
{
	(void)state;
	/* an array assembled (members spares until it runs), then stopped
	 * (members gone before the array): no member failed or became
	 * active */
	/* clang-format off */
	static const struct step steps[] = {
		{PERS "md0 : inactive vdc[1](S) vdb[0](S)\n      130944 blocks super 1.2\n       \n" TAIL,
		 "vdb=spare vdc=spare", false, -1, 0, ""},
		{PERS WHOLE TAIL, "vdb=in_sync vdc=in_sync", false, 0, 0, ""},
		{PERS "md0 : inactive vdb[0](S)\n      65472 blocks super 1.2\n       \n" TAIL,
		 "vdb=spare", false, -1, 0, ""},
	};
	/* clang-format on */
	run_steps(steps, ARRAY_SIZE(steps), true);
}

static void test_next_look(void **state)
{
	(void)state;
	struct kmd_track t = {0};
	assert_int_equal(kmd_next_look(&t, 0), 0);
	struct step s0 = {
		PERS RECOVERY(" 1.0", "654") TAIL, "vdb=in_sync vdc=spare", false, 0, 0, ""};
	struct kmd_array a;
	struct kmd_changes ch;
	look(&s0, &a);
	kmd_update(&t, &a, false, 1000000000, &ch);
	/* a sync, but no rate yet */
	assert_int_equal(kmd_next_look(&t, 1000000000), KMD_DEFAULT_LOOK_NS);
	/* 6546 KiB (10 %) in a second: the next step is about a second away */
	struct step s1 = {
		PERS RECOVERY("11.0", "7200") TAIL, "vdb=in_sync vdc=spare", false, 0, 0, ""};
	look(&s1, &a);
	kmd_update(&t, &a, false, 2000000000, &ch);
	assert_int_equal(t.step, 1);
	uint64_t next = kmd_next_look(&t, 2000000000);
	assert_true(next >= 800000000 && next <= 1200000000);
	/* slow: at most KMD_MAX_LOOK_NS; fast: at least KMD_MIN_LOOK_NS */
	t.rate = 1;
	assert_int_equal(kmd_next_look(&t, 0), KMD_MAX_LOOK_NS);
	t.rate = 1e12;
	assert_int_equal(kmd_next_look(&t, 0), KMD_MIN_LOOK_NS);

	/* a sync that waits for another array's has no position: no look */
	struct kmd_track d = {0};
	struct step s2 = {PERS DELAYED TAIL, "sde=in_sync sdf=in_sync", true, -1, 0, ""};
	look(&s2, &a);
	kmd_update(&d, &a, false, 1, &ch);
	assert_true(d.syncing);
	assert_int_equal(kmd_next_look(&d, 1), 0);
}

static void test_event(void **state)
{
	(void)state;
	struct kmd_stat st;
	const char *text = PERS FAULTY TAIL;
	assert_int_equal(kmd_stat_parse(text, strlen(text), &st), 0);
	struct kmd_array a = st.v[0];
	kmd_stat_release(&st);
	snprintf(a.array_state, sizeof(a.array_state), "clean");
	struct kmd_change c = {.signal = "failed-device", .member = "vdc"};
	struct kevent *ev = NULL;
	const char *why = NULL;
	/* no UUID known: no Uuid: line */
	assert_int_equal(kmd_event(&c, &a, "/devices/virtual/block/md0", 7, &ev, &why), 0);
	assert_null(kevent_prop(ev, "Uuid"));
	kevent_free(ev);
	snprintf(a.uuid, sizeof(a.uuid), "3f1c9a2e-5b7d-4e21-9c0a-6d8e2f4b1a07");
	assert_int_equal(kmd_event(&c, &a, "/devices/virtual/block/md0", 7, &ev, &why), 0);
	assert_int_equal(ev->type, KEVENT_STORAGE);
	assert_int_equal(ev->source, KEVENT_SOURCE_MD);
	assert_string_equal(ev->object, "/org/kernel/devices/virtual/block/md0");
	assert_string_equal(ev->signal, "failed-device");
	assert_string_equal(kevent_prop(ev, "Member"), "vdc");
	assert_string_equal(kevent_prop(ev, "Level"), "raid1");
	assert_string_equal(kevent_prop(ev, "Array-State"), "clean");
	assert_string_equal(kevent_prop(ev, "Degraded"), "1");
	assert_string_equal(kevent_prop(ev, "Raid-Disks"), "2");
	assert_string_equal(kevent_prop(ev, "Device"), "md0");
	assert_string_equal(kevent_prop(ev, "Uuid"), "3f1c9a2e-5b7d-4e21-9c0a-6d8e2f4b1a07");
	assert_null(kevent_prop(ev, "Initial"));
	kevent_free(ev);

	struct kmd_change p = {.signal = "progress", .action = KMD_RECOVER, .percent = 30};
	assert_int_equal(kmd_event(&p, &a, "/devices/virtual/block/md0", 7, &ev, &why), 0);
	assert_string_equal(kevent_prop(ev, "Percent"), "30");
	assert_string_equal(kevent_prop(ev, "Action"), "recover");
	kevent_free(ev);

	struct kmd_change d = {.signal = "check-done",
			       .action = KMD_CHECK,
			       .result = true,
			       .has_mismatch = true,
			       .mismatch = 256,
			       .initial = false};
	assert_int_equal(kmd_event(&d, &a, "/devices/virtual/block/md0", 7, &ev, &why), 0);
	assert_string_equal(kevent_prop(ev, "Mismatch-Count"), "256");
	assert_string_equal(kevent_prop(ev, "Result"), "done");
	kevent_free(ev);

	struct kmd_change i = {.signal = "degraded", .initial = true};
	assert_int_equal(kmd_event(&i, &a, "/devices/virtual/block/md0", 7, &ev, &why), 0);
	assert_string_equal(kevent_prop(ev, "Initial"), "yes");
	kevent_free(ev);

	char *longpath = malloc(2000);
	memset(longpath, 'x', 1999);
	longpath[0] = '/';
	longpath[1999] = '\0';
	assert_int_equal(kmd_event(&i, &a, longpath, 7, &ev, &why), -EINVAL);
	free(longpath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_many),
		cmocka_unit_test(test_completed),
		cmocka_unit_test(test_sysfs),
		cmocka_unit_test(test_fail_and_rebuild),
		cmocka_unit_test(test_missed_steps),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_new_array),
		cmocka_unit_test(test_assemble_and_stop),
		cmocka_unit_test(test_next_look),
		cmocka_unit_test(test_event),
	};
	return tu_result(cmocka_run_group_tests(tests, NULL, NULL));
}
