/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pure parts of the "kmsg" source (source-kmsg.c): one record of
 * /dev/kmsg parsed (kmsg-record.c), the records keventd knows by their
 * text and the event of a record (kmsg-recognise.c), the position file
 * and the section "kmsg:" of keventd.yaml (kmsg-config.c).  None of them
 * logs or touches the system; kmsg-device.c, which finds a DEVICE= key's
 * device in sysfs, is the one part that reads the file system.
 */
#ifndef KEVENT_KMSG_H
#define KEVENT_KMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "event.h"
#include "yamltree.h"

#define KKMSG_OBJECT_LOG      "/org/kernel/log"
#define KKMSG_OBJECT_OOM      "/org/kernel/mm/oom"
#define KKMSG_OBJECT_SEGFAULT "/org/kernel/log/segfault"
#define KKMSG_OBJECT_HUNG     "/org/kernel/log/hung-task"
/* The most one read() of /dev/kmsg returns: the kernel's own bound on a
 * record as it formats it (CONSOLE_EXT_LOG_MAX). */
#define KKMSG_RECORD_MAX 8192
/* Message: is cut at this many bytes (escaped), or fewer when the other
 * lines need the room, so the payload always fits. */
#define KKMSG_MESSAGE_MAX 3000
/* SUBSYSTEM= and DEVICE= longer than this are not the kernel's (its
 * dev_printk_info holds 16 and 48 bytes): taken as absent. */
#define KKMSG_KEY_MAX 64

/* The syslog levels, 0 (emerg) to 7 (debug). */
#define KKMSG_LEVELS 8
/* "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug";
 * NULL past 7. */
const char *kkmsg_level_name(unsigned level);
/* A level by its name (also "error", "warn", "panic") or digit; -1. */
int kkmsg_level_from_name(const char *s);

/* --- one record --- */

struct kkmsg_rec {
	unsigned level;	   /* 0..7 */
	unsigned facility; /* 0: the kernel's own */
	uint64_t seq;	   /* the kernel's number of the record */
	uint64_t usec;	   /* when, in microseconds since boot */
	/* '-'; 'c': a line continued, or a piece that continues one;
	 * '+': continues the record before it (older kernels) */
	char flag;
	char *text; /* the message, unescaped; never holds a NUL */
	size_t text_len;
	char *subsystem;   /* SUBSYSTEM=, unescaped; NULL: none */
	char *device;	   /* DEVICE=, unescaped; NULL: none */
	uint64_t last_seq; /* of the last piece joined (kkmsg_rec_join()) */
	/* the header's number was read: also set on a record refused, so
	 * that it is not taken for a gap */
	bool numbered;
};

/*
 * Parses one record as read() returns it: "PRI,SEQ,USEC,FLAG[,...];TEXT\n"
 * then " KEY=VALUE\n" lines, values escaped as \xNN by the kernel.
 * 0 with *rec (kkmsg_rec_release() it); -EINVAL with *why (and rec's
 * seq and numbered, when the header had its number); -ENOMEM.
 */
int kkmsg_parse(const char *buf, size_t len, struct kkmsg_rec *rec, const char **why);
void kkmsg_rec_release(struct kkmsg_rec *rec);
/* Appends the text of piece, a record flagged '+', to rec (and its keys
 * where rec has none); rec's last_seq becomes piece's.  0, -E2BIG (rec
 * would pass KKMSG_RECORD_MAX: left as it was) or -ENOMEM. */
int kkmsg_rec_join(struct kkmsg_rec *rec, const struct kkmsg_rec *piece);

/* --- records known by their text --- */

enum kkmsg_kind {
	KKMSG_PLAIN,	   /* none of those below */
	KKMSG_OOM_CONTEXT, /* the "oom-kill:" summary before a kill: no event of its own */
	KKMSG_OOM_KILL,
	KKMSG_IO_ERROR,
	KKMSG_HUNG_TASK,
	KKMSG_SEGFAULT,
};

/* What the last OOM summary said, for the kill that follows it. */
struct kkmsg_state {
	bool oom;
	uint64_t oom_pid;
	char *oom_memcg;  /* oom_memcg=, or NULL */
	char *task_memcg; /* task_memcg=, or NULL */
	char *constraint; /* constraint=, or NULL */
	bool has_uid;
	uint64_t uid;
};
void kkmsg_state_release(struct kkmsg_state *st);

/* A recognised record's fields, copies owned by it. */
struct kkmsg_info {
	enum kkmsg_kind kind;
	const char *signal; /* oom-kill, io-error, hung-task, segfault; NULL for the others */
	uint64_t pid;
	bool has_uid;
	uint64_t uid;
	char *comm;
	char *memcg, *task_memcg, *constraint; /* oom-kill */
	char *disk, *op, *error;	       /* io-error */
	uint64_t sector;
	uint64_t seconds;	 /* hung-task */
	char *ip, *sp, *address; /* segfault, as printed (hex) */
	char *code;		 /* segfault: the error code */
};
void kkmsg_info_release(struct kkmsg_info *info);

/* Says what rec is: fills *info (release it) and updates st with an OOM
 * summary, whose memory cgroup an oom-kill of the same pid then names.
 * Only the kernel's own records (facility 0) in the kernel's own format
 * for the kind from their first byte are of a kind; a task's name inside
 * another record never makes one (kmsg-recognise.c).
 * 0, or -ENOMEM (then KKMSG_PLAIN). */
int kkmsg_recognise(struct kkmsg_state *st, const struct kkmsg_rec *rec, struct kkmsg_info *info);

/* Whether rec becomes an event: the kernel's own, and recognised or at
 * threshold or more urgent (a lower level). */
bool kkmsg_wanted(const struct kkmsg_rec *rec, const struct kkmsg_info *info, unsigned threshold);

/* The DEVICE= value to find in sysfs for rec's object: rec's DEVICE= (its
 * dictionary, never its text) for a plain record; for an io-error its
 * DEVICE=, else the disk the block layer's line names as "+block:NAME"
 * (that line has no dictionary; kkmsg_recognise() takes it only from the
 * record's first byte, so NAME is where the kernel printed the disk's
 * name); NULL for the other kinds.  buf holds the result when made. */
const char *kkmsg_device_key(const struct kkmsg_rec *rec, const struct kkmsg_info *info, char *buf,
			     size_t size);

/*
 * The event of rec: type storage for SUBSYSTEM block, scsi, nvme, ata, md
 * and io-error, else general; object devpath ("/devices/...", from
 * kkmsg_device_path()) under "/org/kernel" when given, else the record's
 * kind's (KKMSG_OBJECT_*); signal the kind's, else the level's name.
 * boot_ns: the realtime of boot, for the timestamp.  *truncated: the
 * message was cut to fit (KKMSG_MESSAGE_MAX).  0, -EINVAL with *why (a
 * record the kernel would not make), -ENOMEM.
 */
int kkmsg_event(const struct kkmsg_rec *rec, const struct kkmsg_info *info, const char *devpath,
		uint64_t boot_ns, struct kevent **out, bool *truncated, const char **why);

/* --- DEVICE= in sysfs (kmsg-device.c: reads the file system) --- */

/*
 * The path below root (sysfs, "/sys") of the device DEVICE= names: "b8:0"
 * and "c4:64" through root/dev/block and root/dev/char, "n2" by interface
 * index (root/class/net), "+SUBSYSTEM:NAME" through root/bus/SUBSYSTEM/
 * devices or root/class/SUBSYSTEM; the same path as the device's DEVPATH
 * ("/devices/...").  0 with *out (malloc'd); -EINVAL: not such a value;
 * -ENOENT: no such device now; -ENOMEM.
 */
int kkmsg_device_path(const char *root, const char *device, char **out);

/* --- the position file, "BOOT_ID SEQ\n" --- */

#define KKMSG_BOOT_ID_LEN 36
struct kkmsg_pos {
	char boot_id[KKMSG_BOOT_ID_LEN + 1]; /* /proc/sys/kernel/random/boot_id */
	uint64_t seq;			     /* the last record handled */
};
/* 0 with *pos, or -EINVAL: not a position. */
int kkmsg_pos_parse(const char *text, size_t len, struct kkmsg_pos *pos);
/* The file's text into buf (at least 64 bytes); its length. */
size_t kkmsg_pos_format(const struct kkmsg_pos *pos, char *buf, size_t size);
/* Whether s (a line of boot_id, its newline aside) is a boot id. */
bool kkmsg_boot_id_valid(const char *s, size_t len);

/* --- keventd.yaml's "kmsg:" --- */

struct kkmsg_config {
	unsigned priority; /* records at this level or more urgent; default err */
	bool backlog;	   /* a first start reads the ring from its start */
};
extern const struct kkmsg_config kkmsg_config_defaults;
void kkmsg_config_init(struct kkmsg_config *c);
/* Replaces *c with the section n of path; on a mistake, a diagnostic for
 * each in diags and *c unchanged.  0 or -EINVAL. */
int kkmsg_config_parse(struct kkmsg_config *c, const struct ynode *n, const char *path,
		       struct kdiags *diags);

#endif
