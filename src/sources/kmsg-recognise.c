// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The records keventd knows by their text (kmsg.h), as the kernel prints
 * them, and the event of any record.
 *
 *   oom-kill   mm/oom_kill.c: "Out of memory: Killed process PID (COMM)
 *              total-vm:... UID:UID ...", "Memory cgroup out of memory: "
 *              in front for a memory cgroup's, nothing in front before
 *              5.x; after the summary "oom-kill:constraint=...,
 *              oom_memcg=...,task_memcg=...,task=COMM,pid=PID,uid=UID"
 *              that names the memory cgroup
 *   io-error   block/blk-core.c: "I/O error, dev sda, sector 2048 op
 *              0x0:(READ) flags ...", the status one of the block
 *              layer's names (blk_errors[]: "I/O", "critical medium",
 *              "timeout", ...); before 5.x "blk_update_request: " or
 *              "print_req_error: " in front
 *   hung-task  kernel/hung_task.c: "INFO: task COMM:PID blocked for more
 *              than N seconds."
 *   segfault   arch/x86/mm/fault.c: "COMM[PID]: segfault at ADDR ip IP sp
 *              SP error CODE in FILE[...] likely on CPU ..."
 *
 * Each is matched from the record's first byte, never looked for inside
 * a record: a task's name (COMM) and the file of its code are the task's
 * to choose, and a segfault line that names a task "INFO: task a" and a
 * file "a:1 blocked for more than 9 seconds " is a segfault, not a hung
 * task.  COMM is at most KKMSG_COMM_MAX bytes and may hold any of the
 * separators around it, so a separator is looked for where the kernel
 * put it and never inside the name; every value goes into the payload
 * escaped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmsg.h"
#include "util.h"

/* a task's name as the kernel prints it: TASK_COMM_LEN - 1 */
#define KKMSG_COMM_MAX 15
#define KKMSG_DISK_MAX 31 /* DISK_NAME_LEN - 1 */
/* a memory cgroup's path in the payload, at most */
#define KKMSG_CGROUP_MAX 256

void kkmsg_state_release(struct kkmsg_state *st)
{
	free(st->oom_memcg);
	free(st->task_memcg);
	free(st->constraint);
	*st = (struct kkmsg_state){0};
}

void kkmsg_info_release(struct kkmsg_info *info)
{
	free(info->comm);
	free(info->memcg);
	free(info->task_memcg);
	free(info->constraint);
	free(info->disk);
	free(info->op);
	free(info->error);
	free(info->ip);
	free(info->sp);
	free(info->address);
	free(info->code);
	*info = (struct kkmsg_info){0};
}

/* The decimal number that is all of [s, e). */
static bool decimal(const char *s, const char *e, uint64_t *out)
{
	uint64_t v = 0;
	if (s >= e || e - s > 20)
		return false;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* The decimal digits at *p, which moves past them. */
static bool decimal_at(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	while (*p < end && **p >= '0' && **p <= '9')
		(*p)++;
	return decimal(s, *p, out);
}

/* The hex number at *p (as the kernel prints %lx and %px: no 0x), moved
 * past; its text into *out. */
static bool hex_at(const char **p, const char *end, char **out)
{
	const char *s = *p;
	while (*p < end && *p - s < 16 &&
	       ((**p >= '0' && **p <= '9') || (**p >= 'a' && **p <= 'f')))
		(*p)++;
	if (*p == s || (*p < end && ((**p >= '0' && **p <= '9') || (**p >= 'a' && **p <= 'f'))))
		return false;
	*out = strndup(s, (size_t)(*p - s));
	return *out != NULL;
}

/* Whether [*p, end) starts with word, moving past it. */
static bool skip(const char **p, const char *end, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(end - *p) < n || memcmp(*p, word, n) != 0)
		return false;
	*p += n;
	return true;
}

/* Whether [*p, end) starts with one of words (the first that does),
 * moving past it. */
static bool skip_one_of(const char **p, const char *end, const char *const *words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (skip(p, end, words[i]))
			return true;
	return false;
}

static const char *find(const char *s, const char *end, const char *needle)
{
	return s < end ? memmem(s, (size_t)(end - s), needle, strlen(needle)) : NULL;
}

static bool dup_into(char **dst, const char *s, const char *e)
{
	free(*dst);
	*dst = strndup(s, (size_t)(e - s));
	return *dst != NULL;
}

/* ---- oom-kill ---- */

/* "oom-kill:constraint=C,nodemask=N[,cpuset=S,mems_allowed=M]
 * [,oom_memcg=P][,task_memcg=P],task=COMM,pid=PID,uid=UID": the memory
 * cgroups of the kill that follows.  The lists (nodemask, mems_allowed)
 * hold commas, so the fields are found from the end. */
static int oom_context(struct kkmsg_state *st, const char *t, const char *end)
{
	static const char head[] = "oom-kill:constraint=";
	const char *uid_s = NULL, *pid_s = NULL, *task_s = NULL;
	for (const char *p = t; (p = find(p, end, ",uid=")); p++)
		uid_s = p;
	if (!uid_s)
		return -EINVAL;
	uint64_t uid, pid;
	if (!decimal(uid_s + 5, end, &uid))
		return -EINVAL;
	for (const char *p = t; (p = find(p, uid_s, ",pid=")); p++)
		pid_s = p;
	if (!pid_s || !decimal(pid_s + 5, uid_s, &pid))
		return -EINVAL;
	/* the first ",task=" that leaves a name short enough: the name
	 * may hold ",task=" itself, never more than KKMSG_COMM_MAX bytes */
	for (const char *p = t; (p = find(p, pid_s, ",task=")); p++)
		if (pid_s - (p + 6) <= KKMSG_COMM_MAX) {
			task_s = p;
			break;
		}
	if (!task_s)
		return -EINVAL;
	const char *c = t + sizeof(head) - 1;
	const char *c_end = find(c, task_s, ",");
	const char *om = find(t, task_s, ",oom_memcg=");
	const char *tm = find(om ? om : t, task_s, ",task_memcg=");
	if ((om && (tm ? tm : task_s) - om > KKMSG_CGROUP_MAX) ||
	    (tm && task_s - tm > KKMSG_CGROUP_MAX) || (c_end && c_end - c > 64))
		return -EINVAL; /* names no event can hold */
	struct kkmsg_state n = {.oom = true, .oom_pid = pid, .has_uid = true, .uid = uid};
	bool ok = c_end && dup_into(&n.constraint, c, c_end);
	if (ok && om)
		ok = dup_into(&n.oom_memcg, om + 11, tm ? tm : task_s);
	if (ok && tm)
		ok = dup_into(&n.task_memcg, tm + 12, task_s);
	if (!ok) {
		kkmsg_state_release(&n);
		return c_end ? -ENOMEM : -EINVAL;
	}
	kkmsg_state_release(st);
	*st = n;
	return 0;
}

/* The kernel's own text before "Killed process": which OOM killed
 * (mm/oom_kill.c: out_of_memory(), oom_kill_process()); none before 5.x. */
static const char *const oom_prefixes[] = {
	"Out of memory: ",
	"Memory cgroup out of memory: ",
	"Out of memory (oom_kill_allocating_task): ",
	"",
};

/* "PREFIX Killed process PID (COMM) total-vm:...[ UID:UID ...]", from
 * the record's first byte. */
static int oom_kill(struct kkmsg_state *st, const char *t, const char *end, struct kkmsg_info *info)
{
	const char *p = t;
	if (!skip_one_of(&p, end, oom_prefixes, ARRAY_SIZE(oom_prefixes)) ||
	    !skip(&p, end, "Killed process "))
		return -EINVAL;
	if (!decimal_at(&p, end, &info->pid) || !skip(&p, end, " ("))
		return -EINVAL;
	/* the last ") total-vm:" within a name's length: the name may hold
	 * it, and what follows the real one is the kernel's */
	const char *name = p, *close = NULL;
	for (const char *q = name; (q = find(q, end, ") total-vm:")) && q - name <= KKMSG_COMM_MAX;
	     q++)
		close = q;
	if (!close) {
		/* a kernel that prints less after the name */
		for (const char *q = name; q < end && q - name <= KKMSG_COMM_MAX; q++)
			if (*q == ')' && (q + 1 == end || q[1] == ' ' || q[1] == ','))
				close = q;
	}
	/* close == name is an empty name, a name too (PR_SET_NAME "") */
	if (!close)
		return -EINVAL;
	if (!dup_into(&info->comm, name, close))
		return -ENOMEM;
	const char *u = find(close, end, " UID:");
	if (u) {
		const char *q = u + 5;
		info->has_uid = decimal_at(&q, end, &info->uid);
	}
	if (st->oom && st->oom_pid == info->pid) {
		if (!info->has_uid && st->has_uid) {
			info->has_uid = true;
			info->uid = st->uid;
		}
		/* the cgroup whose limit was hit, else the task's own */
		info->memcg = st->oom_memcg    ? strdup(st->oom_memcg)
			      : st->task_memcg ? strdup(st->task_memcg)
					       : NULL;
		info->task_memcg = st->task_memcg ? strdup(st->task_memcg) : NULL;
		info->constraint = st->constraint ? strdup(st->constraint) : NULL;
		bool oom = (st->oom_memcg || st->task_memcg) && !info->memcg;
		oom |= (st->task_memcg && !info->task_memcg) ||
		       (st->constraint && !info->constraint);
		kkmsg_state_release(st); /* one kill per summary */
		if (oom)
			return -ENOMEM;
	}
	return 0;
}

/* ---- io-error ---- */

/* What came before the status in older kernels: the function that
 * printed it (blk_update_request() before 5.x, print_req_error() in 4.x,
 * end_request() before 3.x); nothing since. */
static const char *const blk_prefixes[] = {
	"blk_update_request: ",
	"print_req_error: ",
	"end_request: ",
	"",
};

/* The block layer's names of an error status (block/blk-core.c:
 * blk_errors[], and the error_type of kernels before 4.13), each
 * followed by " error". */
static const char *const blk_statuses[] = {
	"I/O",
	"operation not supported",
	"timeout",
	"critical space allocation",
	"recoverable transport",
	"critical target",
	"critical nexus",
	"reservation conflict",
	"critical medium",
	"protection",
	"kernel resource",
	"device resource",
	"nonblocking retry",
	"device offline",
	"dm internal retry",
	"open zones exceeded",
	"active zones exceeded",
	"duration limit exceeded",
	"invalid",
};

static bool disk_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == '!';
}

/* "[PREFIX]STATUS error, dev DISK, sector N[ op 0xX:(OP) flags ...]",
 * from the record's first byte.  DISK is the disk's name (its gendisk's
 * disk_name), or "?" for a request of no disk. */
static int io_error(struct kkmsg_state *st, const char *t, const char *end, struct kkmsg_info *info)
{
	(void)st;
	const char *p = t;
	if (!skip_one_of(&p, end, blk_prefixes, ARRAY_SIZE(blk_prefixes)))
		return -EINVAL;
	const char *s = p;
	if (!skip_one_of(&p, end, blk_statuses, ARRAY_SIZE(blk_statuses)))
		return -EINVAL;
	const char *e = p;
	if (!skip(&p, end, " error, dev "))
		return -EINVAL;
	const char *d = p;
	if (!skip(&p, end, "?")) /* "?": a request of no disk */
		while (p < end && disk_char(*p) && p - d < KKMSG_DISK_MAX)
			p++;
	const char *d_end = p;
	if (p == d || !skip(&p, end, ", sector ") || !decimal_at(&p, end, &info->sector))
		return -EINVAL;
	if (p < end && *p != ' ')
		return -EINVAL;
	if (!dup_into(&info->error, s, e) || !dup_into(&info->disk, d, d_end))
		return -ENOMEM;
	/* " op 0xHEX:(NAME)": the operation's name, blk_op_str()'s */
	if (skip(&p, end, " op 0x")) {
		while (p < end && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			p++;
		if (skip(&p, end, ":(")) {
			const char *n = p;
			while (p < end && p - n < 32 && ((*p >= 'A' && *p <= 'Z') || *p == '_'))
				p++;
			if (p > n && p < end && *p == ')' && !dup_into(&info->op, n, p))
				return -ENOMEM;
		}
	}
	return 0;
}

/* ---- hung-task ---- */

/* "INFO: task COMM:PID blocked for more than N seconds.", the whole
 * record: read from its end, as everything after COMM is the kernel's. */
static int hung_task(struct kkmsg_state *st, const char *t, const char *end,
		     struct kkmsg_info *info)
{
	(void)st;
	static const char head[] = "INFO: task ", mid[] = " blocked for more than ",
			  tail[] = " seconds.";
	const char *p = t;
	if (!skip(&p, end, head))
		return -EINVAL;
	const char *name = p;
	/* N */
	if ((size_t)(end - name) < sizeof(tail) - 1 ||
	    memcmp(end - (sizeof(tail) - 1), tail, sizeof(tail) - 1) != 0)
		return -EINVAL;
	const char *n_end = end - (sizeof(tail) - 1), *n = n_end;
	while (n > name && n[-1] >= '0' && n[-1] <= '9')
		n--;
	if (!decimal(n, n_end, &info->seconds))
		return -EINVAL;
	/* " blocked for more than " */
	if ((size_t)(n - name) < sizeof(mid) - 1 ||
	    memcmp(n - (sizeof(mid) - 1), mid, sizeof(mid) - 1) != 0)
		return -EINVAL;
	const char *pid_end = n - (sizeof(mid) - 1), *pid = pid_end;
	while (pid > name && pid[-1] >= '0' && pid[-1] <= '9')
		pid--;
	if (!decimal(pid, pid_end, &info->pid) || pid == name || pid[-1] != ':')
		return -EINVAL;
	const char *name_end = pid - 1;
	if (name_end - name > KKMSG_COMM_MAX)
		return -EINVAL;
	return dup_into(&info->comm, name, name_end) ? 0 : -ENOMEM;
}

/* ---- segfault ---- */

/* "COMM[PID]: segfault at ADDR ip IP sp SP error CODE[ in ...]": COMM
 * from the record's first byte, at most KKMSG_COMM_MAX bytes; what
 * follows CODE (the file of the code, the CPU) is not read. */
static int segfault(struct kkmsg_state *st, const char *t, const char *end, struct kkmsg_info *info)
{
	(void)st;
	for (const char *open = t; open < end && open - t <= KKMSG_COMM_MAX; open++) {
		if (*open != '[')
			continue;
		const char *p = open + 1;
		if (!decimal_at(&p, end, &info->pid) || !skip(&p, end, "]: segfault at "))
			continue;
		char *addr = NULL, *ip = NULL, *sp = NULL, *code = NULL;
		bool ok = hex_at(&p, end, &addr) && skip(&p, end, " ip ") && hex_at(&p, end, &ip) &&
			  skip(&p, end, " sp ") && hex_at(&p, end, &sp) &&
			  skip(&p, end, " error ") && hex_at(&p, end, &code) &&
			  (p == end || *p == ' ');
		if (!ok) {
			free(addr);
			free(ip);
			free(sp);
			free(code);
			return -EINVAL;
		}
		info->address = addr;
		info->ip = ip;
		info->sp = sp;
		info->code = code;
		return dup_into(&info->comm, t, open) ? 0 : -ENOMEM;
	}
	return -EINVAL;
}

int kkmsg_recognise(struct kkmsg_state *st, const struct kkmsg_rec *rec, struct kkmsg_info *info)
{
	*info = (struct kkmsg_info){.kind = KKMSG_PLAIN};
	if (rec->facility != 0)
		return 0;
	const char *t = rec->text, *end = rec->text + rec->text_len;
	static const struct {
		enum kkmsg_kind kind;
		const char *signal;
		int (*parse)(struct kkmsg_state *st, const char *t, const char *end,
			     struct kkmsg_info *info);
	} kinds[] = {
		{KKMSG_OOM_KILL, "oom-kill", oom_kill},
		{KKMSG_IO_ERROR, "io-error", io_error},
		{KKMSG_HUNG_TASK, "hung-task", hung_task},
		{KKMSG_SEGFAULT, "segfault", segfault},
	};
	if (strncmp(t, "oom-kill:constraint=", 20) == 0) {
		int rc = oom_context(st, t, end);
		if (rc == 0)
			info->kind = KKMSG_OOM_CONTEXT;
		return rc == -ENOMEM ? rc : 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		int rc = kinds[i].parse(st, t, end, info);
		if (rc == 0) {
			info->kind = kinds[i].kind;
			info->signal = kinds[i].signal;
			return 0;
		}
		kkmsg_info_release(info);
		if (rc == -ENOMEM)
			return rc;
	}
	return 0;
}

bool kkmsg_wanted(const struct kkmsg_rec *rec, const struct kkmsg_info *info, unsigned threshold)
{
	if (rec->facility != 0)
		return false;
	return info->signal || rec->level <= threshold;
}

const char *kkmsg_device_key(const struct kkmsg_rec *rec, const struct kkmsg_info *info, char *buf,
			     size_t size)
{
	if (info->kind != KKMSG_IO_ERROR)
		return info->signal ? NULL : rec->device;
	/* the record's own DEVICE= first; the block layer's line has none
	 * (it is no dev_printk()), and names the disk by its gendisk's
	 * name, which the record, the kernel's from its first byte, holds
	 * where the kernel put it */
	if (rec->device)
		return rec->device;
	if (strcmp(info->disk, "?") == 0)
		return NULL;
	int n = snprintf(buf, size, "+block:%s", info->disk);
	return n > 0 && (size_t)n < size ? buf : NULL;
}

/* ---- the event ---- */

static void put_line(struct strbuf *sb, const char *key, const char *value)
{
	strbuf_puts(sb, key);
	strbuf_puts(sb, ": ");
	strbuf_add_name(sb, value, strlen(value), false);
	strbuf_putc(sb, '\n');
}

static void put_u64(struct strbuf *sb, const char *key, uint64_t v)
{
	strbuf_printf(sb, "%s: %" PRIu64 "\n", key, v);
}

/* The message, escaped and cut at max bytes, never inside an escape or
 * a character.  Whether it was cut. */
static bool put_message(struct strbuf *sb, const struct kkmsg_rec *rec, size_t max)
{
	_cleanup_strbuf_ struct strbuf m = STRBUF_INIT;
	strbuf_add_name(&m, rec->text, rec->text_len, false);
	size_t cut = m.oom ? m.len : escaped_cut(m.buf ? m.buf : "", m.len, max);
	strbuf_puts(sb, "Message: ");
	if (m.oom)
		sb->oom = true;
	else
		strbuf_add(sb, m.buf ? m.buf : "", cut);
	strbuf_putc(sb, '\n');
	return cut < m.len;
}

static bool storage_subsystem(const char *s)
{
	static const char *const names[] = {"block", "scsi", "nvme", "ata", "md"};
	for (size_t i = 0; s && i < ARRAY_SIZE(names); i++)
		if (strcmp(s, names[i]) == 0)
			return true;
	return false;
}

static const char *kind_object(enum kkmsg_kind k)
{
	switch (k) {
	case KKMSG_OOM_KILL:
		return KKMSG_OBJECT_OOM;
	case KKMSG_HUNG_TASK:
		return KKMSG_OBJECT_HUNG;
	case KKMSG_SEGFAULT:
		return KKMSG_OBJECT_SEGFAULT;
	default:
		return KKMSG_OBJECT_LOG;
	}
}

static void put_fields(struct strbuf *sb, const struct kkmsg_info *i)
{
	switch (i->kind) {
	case KKMSG_OOM_KILL:
		put_u64(sb, "Pid", i->pid);
		put_line(sb, "Comm", i->comm);
		if (i->has_uid)
			put_u64(sb, "Uid", i->uid);
		if (i->memcg)
			put_line(sb, "Memcg", i->memcg);
		if (i->task_memcg)
			put_line(sb, "Task-Memcg", i->task_memcg);
		if (i->constraint)
			put_line(sb, "Constraint", i->constraint);
		break;
	case KKMSG_IO_ERROR:
		put_line(sb, "Disk", i->disk);
		put_u64(sb, "Sector", i->sector);
		if (i->op)
			put_line(sb, "Op", i->op);
		put_line(sb, "Error", i->error);
		break;
	case KKMSG_HUNG_TASK:
		put_line(sb, "Comm", i->comm);
		put_u64(sb, "Pid", i->pid);
		put_u64(sb, "Seconds", i->seconds);
		break;
	case KKMSG_SEGFAULT:
		put_line(sb, "Comm", i->comm);
		put_u64(sb, "Pid", i->pid);
		put_line(sb, "Ip", i->ip);
		put_line(sb, "Sp", i->sp);
		put_line(sb, "Address", i->address);
		put_line(sb, "Error", i->code);
		break;
	default:
		break;
	}
}

int kkmsg_event(const struct kkmsg_rec *rec, const struct kkmsg_info *info, const char *devpath,
		uint64_t boot_ns, struct kevent **out, bool *truncated, const char **why)
{
	static const char message[] = "Message: \n", cut_line[] = "Truncated: Message\n";
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf tail = STRBUF_INIT;
	put_fields(&sb, info);
	put_line(&tail, "Priority", kkmsg_level_name(rec->level));
	put_line(&tail, "Facility", "kern");
	if (rec->subsystem)
		put_line(&tail, "Subsystem", rec->subsystem);
	if (rec->device)
		put_line(&tail, "Device", rec->device);
	put_u64(&tail, "Kmsg-Seqnum", rec->seq);
	/* the message gets what the other lines leave, KKMSG_MESSAGE_MAX at most */
	size_t used = sb.len + tail.len + sizeof(message) - 1 + sizeof(cut_line) - 1;
	size_t room = used < KEVENT_PAYLOAD_MAX ? KEVENT_PAYLOAD_MAX - used : 0;
	*truncated = put_message(&sb, rec, room < KKMSG_MESSAGE_MAX ? room : KKMSG_MESSAGE_MAX);
	if (*truncated)
		strbuf_puts(&sb, cut_line);
	strbuf_add(&sb, tail.buf ? tail.buf : "", tail.len);
	if (sb.oom || tail.oom)
		return -ENOMEM;
	int type = storage_subsystem(rec->subsystem) || info->kind == KKMSG_IO_ERROR
			   ? KEVENT_STORAGE
			   : KEVENT_GENERAL;
	const char *signal = info->signal ? info->signal : kkmsg_level_name(rec->level);
	uint64_t ts = boot_ns + (rec->usec > UINT64_MAX / 1000 ? 0 : rec->usec * 1000);
	_cleanup_free_ char *object = NULL;
	if (devpath && asprintf(&object, "/org/kernel%s", devpath) < 0)
		return -ENOMEM;
	int rc = kevent_new(type, object ? object : kind_object(info->kind), signal, sb.buf,
			    KEVENT_SOURCE_KMSG, rec->seq, ts, NULL, 0, out, why);
	if (rc == -EINVAL && object) /* a device path no object can be */
		rc = kevent_new(type, kind_object(info->kind), signal, sb.buf, KEVENT_SOURCE_KMSG,
				rec->seq, ts, NULL, 0, out, why);
	return rc;
}
