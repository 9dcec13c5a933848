/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pure parts of the "md" source (source-md.c): /proc/mdstat's text
 * (md-stat.c), an array's md/ attributes read from a sysfs directory
 * (md-sysfs.c), and what changed between two looks at an array, the
 * progress steps a sync crossed and when to look again (md-state.c).
 * None of them logs; only md-sysfs.c reads files, those it is given.
 */
#ifndef KEVENT_MD_H
#define KEVENT_MD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define KMD_NAME_MAX	   32 /* "md127", "vdb1": a block device's name */
#define KMD_MAX_ARRAYS	   256
#define KMD_MAX_MEMBERS	   64
#define KMD_MDSTAT_MAX	   (1u << 20)
#define KMD_OBJECT_PREFIX  "/org/kernel"
#define KMD_PROGRESS_STEPS 9 /* 10 % ... 90 % */

/* What a sync does: sync_action's words (mdstat says "recovery" for
 * recover, "resync" for repair). */
enum kmd_action {
	KMD_IDLE,
	KMD_RESYNC,
	KMD_RECOVER,
	KMD_CHECK,
	KMD_REPAIR,
	KMD_RESHAPE,
	KMD_FROZEN,
};
const char *kmd_action_name(enum kmd_action a);
/* From sync_action's or mdstat's word; -1 when unknown. */
int kmd_action_from_word(const char *s, size_t len);

struct kmd_member {
	char name[KMD_NAME_MAX];
	int slot;     /* its place in the array; -1: none (a spare) */
	bool faulty;  /* failed, kept until removed */
	bool in_sync; /* holds the array's data */
	bool spare;   /* not in sync and not faulty: a spare or being rebuilt */
};

/* One look at an array: what /proc/mdstat says, then its md/ attributes
 * where they could be read (they win). */
struct kmd_array {
	char name[KMD_NAME_MAX];
	bool active;
	char level[16];	      /* "raid1"; "" for an inactive array */
	char array_state[24]; /* "clean", "active"...; "" unknown */
	char uuid[40];	      /* md/uuid: the array's UUID, whatever its name; "" none */
	int raid_disks;	      /* -1: unknown */
	int degraded;	      /* members missing; -1: unknown */
	enum kmd_action action;
	bool syncing;	      /* a sync runs (or waits: delayed) */
	uint64_t done, total; /* the sync's position, in sectors; total 0: unknown */
	bool has_mismatch;
	uint64_t mismatch;   /* mismatch_cnt: sectors a check found different */
	bool resync_pending; /* resync_start is not "none": the array is not in sync */
	bool has_sync_min;
	uint64_t sync_min; /* where a requested sync (check) starts; 0 after one completed */
	struct kmd_member m[KMD_MAX_MEMBERS];
	size_t n_m;
};

/* --- /proc/mdstat --- */

struct kmd_stat {
	struct kmd_array *v;
	size_t n;
};

/* Parses mdstat's text: each array's name, state, level, members and
 * their flags ((F) faulty, (S) spare), "[n/m]" and the sync's position.
 * Lines it does not know are skipped.  0, -ENOMEM, -E2BIG (too many
 * arrays).  An array with more members keeps the first KMD_MAX_MEMBERS. */
int kmd_stat_parse(const char *text, size_t len, struct kmd_stat *out);
void kmd_stat_release(struct kmd_stat *s);
const struct kmd_array *kmd_stat_find(const struct kmd_stat *s, const char *name);

/* --- md/ in sysfs --- */

/* Reads the attributes of the array whose md/ directory is dirfd (an
 * O_PATH or O_DIRECTORY descriptor) into a, over what mdstat said:
 * level, array_state, raid_disks, degraded, sync_action,
 * sync_completed, mismatch_cnt, resync_start, sync_min and each
 * dev-NAME/ (state, slot).  A sync runs only if mdstat said so: the
 * attributes name its action and may move its position on (or end it).
 * An attribute that cannot be read leaves its field as it was.  0, or
 * -errno when md/ itself cannot be read. */
int kmd_sysfs_read(int dirfd, struct kmd_array *a);
/* Parses sync_completed's text: "none", "delayed", or "DONE / TOTAL". */
int kmd_parse_completed(const char *s, bool *syncing, uint64_t *done, uint64_t *total);
/* Parses a member's state text ("faulty,in_sync,...") into m. */
void kmd_parse_member_state(const char *s, struct kmd_member *m);

/* --- what changed --- */

/* What the source keeps of an array between two looks. */
struct kmd_track {
	bool known;	       /* a first look was made */
	struct kmd_array last; /* the last look */
	/* the sync being followed */
	enum kmd_action action;
	bool syncing;
	unsigned step;	   /* the progress steps reported (0..9) */
	uint64_t pos_ns;   /* when the position last moved (monotonic) */
	uint64_t pos;	   /* its value then */
	double rate;	   /* sectors a second, measured; 0: unknown */
	int sync_degraded; /* degraded when the sync started */
};

/* One event to make: its signal and the lines of its payload (besides
 * those of every event of the array). */
struct kmd_change {
	const char *signal;
	char member[KMD_NAME_MAX]; /* Member: (failed-device, spare-active) */
	enum kmd_action action;	   /* Action: (start, done, progress) */
	unsigned percent;	   /* Percent: (progress) */
	bool result;		   /* Result: (done): true done, false interrupted */
	bool has_mismatch;	   /* Mismatch-Count: (check-done) */
	uint64_t mismatch;
	bool initial; /* Initial: yes */
};

#define KMD_MAX_CHANGES (2 * KMD_MAX_MEMBERS + KMD_PROGRESS_STEPS + 8)

struct kmd_changes {
	struct kmd_change v[KMD_MAX_CHANGES];
	size_t n;
};

/* Compares cur, a new look at the array t followed, with t's last and
 * says in out what happened, in the order it happened: failed-device,
 * degraded, the end of a sync (its progress steps left when it
 * completed, X-done), spare-active, optimal, the start of a sync
 * (X-start), progress steps crossed.  The first look (t->known false)
 * reports only a degraded array and a sync already running, with
 * initial set, unless fresh (an array that appeared after keventd
 * started: reported as changes from an idle, whole array).  Then t
 * holds cur.  now_ns: monotonic, for the rate. */
void kmd_update(struct kmd_track *t, const struct kmd_array *cur, bool fresh, uint64_t now_ns,
		struct kmd_changes *out);

#define KMD_MIN_LOOK_NS	    (100ull * 1000000)
#define KMD_MAX_LOOK_NS	    (5ull * 1000000000)
#define KMD_DEFAULT_LOOK_NS (1ull * 1000000000)
/* While t's sync runs: in how many ns to look at its position again,
 * the time its next 10 % step is away at the measured rate (and a
 * little more), within KMD_MIN_LOOK_NS and KMD_MAX_LOOK_NS; without a
 * rate yet, KMD_DEFAULT_LOOK_NS.  0: no sync, or one that waits
 * (delayed: md says when it begins), no look. */
uint64_t kmd_next_look(const struct kmd_track *t, uint64_t now_ns);

/* The signal of a sync's start or end ("recovery-start", "check-done"). */
const char *kmd_sync_signal(enum kmd_action a, bool start);

/* The event of change c of array a, whose device path in sysfs is
 * devpath ("/devices/virtual/block/md0"). */
int kmd_event(const struct kmd_change *c, const struct kmd_array *a, const char *devpath,
	      uint64_t now, struct kevent **out, const char **why);

#endif
