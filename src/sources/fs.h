/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pure parts of the "fs" source (source-fs.c): the mount table read
 * from /proc/self/mountinfo and the changes between two reads
 * (fs-mounts.c), free space and inodes against thresholds with hysteresis
 * and the time of the next look (fs-space.c), fanotify's error records
 * (fs-fanotify.c), and the section "fs:" of keventd.yaml (fs-config.c).
 * None of them logs or touches the system.
 */
#ifndef KEVENT_FS_H
#define KEVENT_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "event.h"
#include "util.h"
#include "yamltree.h"

#define KFS_OBJECT_PREFIX "/org/kernel/fs"
/* Bounds on what one read of the mount table may hold. */
#define KFS_MAX_MOUNTS	  8192
#define KFS_MOUNTINFO_MAX (8u << 20)
#define KFS_MAX_OVERRIDES 64

/* --- the mount table --- */

struct kfs_mount {
	unsigned id;
	unsigned major, minor;
	char *mountpoint; /* unescaped */
	char *fstype;
	char *source; /* the device, "none" when mountinfo says nothing */
	char *options;
	char *super_options;
};

struct kfs_table {
	struct kfs_mount *v; /* sorted by id */
	size_t n;
};

/* Parses mountinfo's text.  A line that is not mountinfo's is skipped
 * and counted in *bad (may be NULL).  0 or -ENOMEM, -E2BIG (too many). */
int kfs_table_parse(const char *text, size_t len, struct kfs_table *out, size_t *bad);
void kfs_table_release(struct kfs_table *t);
const struct kfs_mount *kfs_table_find(const struct kfs_table *t, const char *mountpoint);
/* The mount of id (t sorted by id, as parsed), or NULL. */
const struct kfs_mount *kfs_table_find_id(const struct kfs_table *t, unsigned id);

/* Whether m is watched: every mount when all, otherwise those backed by
 * a block device and the network file systems. */
bool kfs_mount_wanted(const struct kfs_mount *m, bool all);
/* Whether m's file system answers statfs() only through a peer: a
 * network or cluster file system, FUSE (whatever its source says: fuseblk
 * on /dev/sdb1, or a user's fsname=/dev/...), virtiofs, autofs.  keventd's
 * loop never makes a call that reaches such a file system (its statfs(),
 * a fanotify mark, which takes the fsid through statfs()): one whose
 * server or daemon does not answer would stop every source. */
bool kfs_mount_remote(const struct kfs_mount *m);
/* Whether m is read-only: its own option or its super block's ("ro",
 * or ext4's "emergency_ro" after an error). */
bool kfs_mount_ro(const struct kfs_mount *m);

/* Whether an error left m read-only while the mount table still says
 * rw: ext2/3/4 mounted errors=remount-ro stops writing at an error, and
 * Linux 6.12 to 6.14 show it nowhere (older ones set "ro", newer ones
 * "emergency_ro").  Asked only after an error of m. */
bool kfs_mount_error_ro(const struct kfs_mount *m);
/* The remount-ro that kfs_mount_error_ro() infers: Super-Options as a
 * newer kernel shows it (with "emergency_ro"), Previous-Super-Options as
 * the table says, and Inferred: yes. */
int kfs_error_ro_event(const struct kfs_mount *m, uint64_t now, struct kevent **out,
		       const char **why);

/* Whether a and b are one mount: the same id, device, mount point and
 * type (mount ids are reused: an id seen again after a restart may be
 * another mount's). */
bool kfs_mount_same(const struct kfs_mount *a, const struct kfs_mount *b);
/* mountinfo's \ooo undone: a string of malloc(), or NULL. */
char *kfs_unescape(const char *s, size_t n);

enum kfs_change { KFS_MOUNT, KFS_UMOUNT, KFS_REMOUNT_RO, KFS_REMOUNT_RW, KFS_REMOUNT };
const char *kfs_change_signal(enum kfs_change c);

/* Calls fn for each difference between old and cur among the wanted
 * mounts: umounts first, then remounts, then mounts, each in id order.
 * prev is the old entry of a remount, else NULL.  Returns the count. */
typedef void (*kfs_diff_fn)(void *userdata, enum kfs_change c, const struct kfs_mount *m,
			    const struct kfs_mount *prev);
size_t kfs_diff(const struct kfs_table *old, const struct kfs_table *cur, bool all, kfs_diff_fn fn,
		void *userdata);

/* "/org/kernel/fs" + the mount point ("/org/kernel/fs/" for "/"), bytes
 * that are not printable ASCII as \ooo.  0, or -ENAMETOOLONG. */
int kfs_object(const char *mountpoint, char *buf, size_t size);
/* The event of a mount table change. */
int kfs_mount_event(enum kfs_change c, const struct kfs_mount *m, const struct kfs_mount *prev,
		    uint64_t now, struct kevent **out, const char **why);

/* For the source's events: a payload line "Key: value" (unprintable
 * bytes as \ooo); Mountpoint:, Device:, Fstype: of m; an fs event of m. */
void kfs_put_line(struct strbuf *sb, const char *key, const char *value);
int kfs_mount_payload(const struct kfs_mount *m, struct strbuf *sb);
int kfs_make_event(const struct kfs_mount *m, const char *signal, const char *payload, uint64_t now,
		   struct kevent **out, const char **why);

/* --- thresholds --- */

/* A threshold: off, a share of the size in hundredths of a percent, or
 * bytes (or inodes). */
struct kfs_limit {
	enum { KFS_LIMIT_OFF, KFS_LIMIT_PERCENT, KFS_LIMIT_SIZE } kind;
	uint64_t value;
};

struct kfs_thresholds {
	struct kfs_limit space_low, space_critical, inodes_low;
};

/* One statfs() of a file system, in bytes and inodes. */
struct kfs_stat {
	uint64_t size, avail, files, files_avail;
};

enum kfs_level { KFS_OK, KFS_LOW, KFS_CRITICAL };

struct kfs_space {
	bool known; /* a first look was made */
	enum kfs_level space;
	bool inodes_low;
	/* the previous look and the rate avail falls at, bytes per second */
	uint64_t last_avail, last_ns;
	double rate;
	uint64_t changed_ns; /* when avail or the level last changed */
};

/* Whether any of t is on: a file system with none is never looked at. */
bool kfs_thresholds_on(const struct kfs_thresholds *t);
/* The limit in units of total: 0 when off. */
uint64_t kfs_limit_of(const struct kfs_limit *l, uint64_t total);
/* The margin above a limit that a figure must pass to be back to ok:
 * a hundredth of the total or a tenth of the limit, the smaller. */
uint64_t kfs_margin(uint64_t limit, uint64_t total);

/* Signals of one look, at most 2 (space and inodes). */
struct kfs_space_change {
	const char *signal[2];
	size_t n;
	bool initial;
};
/* Updates s with st at now_ns (monotonic) and says which crossings it
 * made; the first look reports only what is past a threshold, initial. */
void kfs_space_update(struct kfs_space *s, const struct kfs_thresholds *t,
		      const struct kfs_stat *st, uint64_t now_ns, struct kfs_space_change *out);
/* The event of a crossing. */
int kfs_space_event(const char *signal, bool initial, const struct kfs_mount *m,
		    const struct kfs_stat *st, uint64_t now, struct kevent **out, const char **why);

#define KFS_MIN_INTERVAL_NS (50ull * 1000000)
#define KFS_MAX_INTERVAL_NS (60ull * 1000000000)
/* The bytes a writer at full speed is assumed to write each second until
 * one was measured on this file system. */
#define KFS_ASSUMED_RATE (1024.0 * 1024 * 1024)
/* In how many ns to look again: half the time the next line down is away
 * at rate (bytes a second: the measured one, or the assumed one after a
 * write was seen), within KFS_MIN_INTERVAL_NS and KFS_MAX_INTERVAL_NS;
 * past a line, at most as long as the figure has been still (at least a
 * second), so that space freed is seen soon. */
uint64_t kfs_space_interval(const struct kfs_space *s, const struct kfs_thresholds *t,
			    const struct kfs_stat *st, double rate, uint64_t now_ns);

/* --- what the source knew, kept across a restart --- */

/* The state directory's file: the watched mounts and the space states
 * reported, so that a start reports what changed while keventd was not
 * running (KEVENT_SYNTHETIC=1).  Written whole (replace_file()), read
 * back at start; a damaged one is dropped whole. */
#define KFS_STATE_FILE "fs.state"
#define KFS_STATE_MAX  KFS_MOUNTINFO_MAX

struct kfs_saved_space {
	unsigned id; /* the mount's */
	enum kfs_level space;
	bool inodes_low;
	/* judged: the state is of thresholds t; a start with others looks
	 * afresh (Initial), as one without (an older keventd's file) does */
	bool judged;
	struct kfs_thresholds t;
};

struct kfs_state {
	char boot_id[40]; /* /proc/sys/kernel/random/boot_id */
	bool all;	  /* fs: {mounts: all} */
	struct kfs_table table;
	struct kfs_saved_space *sp;
	size_t n_sp;
};

void kfs_state_release(struct kfs_state *s);
/* The file of the wanted mounts of t (of all) and the n space states sp. */
void kfs_state_render(const char *boot_id, bool all, const struct kfs_table *t,
		      const struct kfs_saved_space *sp, size_t n, struct strbuf *sb);
/* Reads the file back: 0, -EINVAL with *why for a file that is not one
 * (any line), -E2BIG (too many mounts), -ENOMEM. */
int kfs_state_parse(const char *text, size_t len, struct kfs_state *out, const char **why);
/* The saved space state of mount id, or NULL. */
const struct kfs_saved_space *kfs_state_space(const struct kfs_state *s, unsigned id);

/* --- fanotify --- */

struct kfs_fan_rec {
	uint64_t mask;
	bool has_error;
	int error;
	uint32_t error_count;
	bool has_fsid;
	int32_t fsid[2];
	bool has_ino;
	uint64_t ino;
};

/* Decodes the record at buf (len bytes left): 0 with *used its length,
 * -EINVAL with *why for a record that is cut or malformed (*used then
 * says how much to skip, 0: the rest). */
int kfs_fan_decode(const uint8_t *buf, size_t len, struct kfs_fan_rec *rec, size_t *used,
		   const char **why);
/* The event of an error record for m. */
int kfs_error_event(const struct kfs_fan_rec *r, const struct kfs_mount *m, uint64_t now,
		    struct kevent **out, const char **why);

/* --- quota warnings (the VFS_DQUOT Generic Netlink family) --- */

struct kfs_quota_msg {
	bool warning;	/* false: another command, no event */
	unsigned qtype; /* 0 user, 1 group, 2 project */
	const char *signal;
	uint64_t id, caller;
	unsigned major, minor;
};

/* Decodes one message of the family (its id now family_id).  0 (see
 * warning), or -EINVAL / -EBADMSG with *why. */
int kfs_quota_decode(const void *buf, size_t len, int family_id, struct kfs_quota_msg *m,
		     const char **why);
/* The event of q on the file system m; name: the user's or group's name,
 * or NULL. */
int kfs_quota_event(const struct kfs_quota_msg *q, const struct kfs_mount *m, const char *name,
		    uint64_t now, struct kevent **out, const char **why);
/* Quota warnings waiting, in order, for the name of their user or group
 * (looked up off the loop), or behind one that waits: a warning with
 * token 0 (a project's, an id without a name) waits only its turn. */
struct kfs_held {
	uint64_t token, now, since;
	struct kfs_quota_msg q;
	char *mountpoint, *source, *fstype;
};

struct kfs_holdq {
	struct kfs_held *v;
	size_t n;
	uint64_t tokens; /* the last given */
};

/* Whether q needs a name looked up (a user's or group's id). */
bool kfs_quota_named(const struct kfs_quota_msg *q);
/* Appends q on m (its strings copied), with a new token when it needs a
 * name; *held the entry.  0 or -ENOMEM. */
int kfs_holdq_push(struct kfs_holdq *h, const struct kfs_quota_msg *q, const struct kfs_mount *m,
		   uint64_t now, uint64_t since, struct kfs_held **held);
/* Takes the last entry off (its look-up could not be asked). */
void kfs_holdq_drop_last(struct kfs_holdq *h);
/* How many at the head may go now that token's name came (0: not the
 * head's: a warning that went without); the head takes the name. */
size_t kfs_holdq_answered(const struct kfs_holdq *h, uint64_t token);
/* How many at the head wait for no name and may go. */
size_t kfs_holdq_ready(const struct kfs_holdq *h);
/* Takes the head off into *out (its strings then the caller's). */
void kfs_holdq_pop(struct kfs_holdq *h, struct kfs_held *out);
void kfs_held_release(struct kfs_held *e);
void kfs_holdq_release(struct kfs_holdq *h);

/* The mount of the device major:minor (the last mounted), or NULL. */
const struct kfs_mount *kfs_table_find_dev(const struct kfs_table *t, unsigned major,
					   unsigned minor);

/* --- keventd.yaml's "fs:" --- */

struct kfs_override {
	char *mountpoint;
	struct kfs_thresholds t;
};

struct kfs_config {
	bool all; /* mounts: all */
	struct kfs_thresholds t;
	struct kfs_override *over;
	size_t n_over;
};

/* the section of a file without one: every mount, the default thresholds */
extern const struct kfs_config kfs_config_defaults;
void kfs_config_init(struct kfs_config *c);
void kfs_config_release(struct kfs_config *c);
/* Replaces *c with the section n of path; on a mistake, a diagnostic for
 * each in diags and *c unchanged.  0, -EINVAL or -ENOMEM. */
int kfs_config_parse(struct kfs_config *c, const struct ynode *n, const char *path,
		     struct kdiags *diags);
/* The thresholds of the mount point mp. */
const struct kfs_thresholds *kfs_config_for(const struct kfs_config *c, const char *mp);
/* Whether a and b say the same (at a reload: nothing to apply). */
bool kfs_thresholds_equal(const struct kfs_thresholds *a, const struct kfs_thresholds *b);
bool kfs_config_equal(const struct kfs_config *a, const struct kfs_config *b);

#endif
