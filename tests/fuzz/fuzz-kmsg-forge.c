// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's own records with names a user chose spliced in: a task's
 * name (comm, at most 15 bytes, any byte but NUL) and a file name (any
 * byte but NUL) put where the kernel prints them, in the kernel's real
 * formats: the segfault line (arch/x86/mm/fault.c, with " in FILE[...]"
 * and " likely on CPU ..."), the hung task's (kernel/hung_task.c), the
 * OOM kill's and its summary (mm/oom_kill.c, a memory cgroup's path being
 * a name too), the block layer's I/O error (block/blk-core.c), and lines
 * that start with a task's name or carry it and make no event of their
 * own.  kkmsg_recognise() must give the genuine kind and nothing else: a
 * segfault line is a segfault of that comm and pid, never io-error,
 * hung-task or oom-kill, whatever its names spell; and so for each.
 *
 * Input: byte 0 picks the format, byte 1 the comm's length (mod 16),
 * byte 2 a prefix or status, bytes 3..10 the numbers; then the comm, then
 * the file name (at most 512 bytes).  NUL bytes in names are dropped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "kmsg.h"
#include "util.h"

#define COMM_MAX 15
#define FILE_MAX 512

enum form {
	F_SEGFAULT,
	F_HUNG,
	F_OOM_KILL,
	F_OOM_SUMMARY,
	F_IO_ERROR,
	F_DROP_CACHES, /* fs/drop_caches.c: "%s (%d): drop_caches: %d" */
	F_TRAP,	       /* arch/x86/kernel/traps.c: "traps: %s[%d] trap ..." in FILE */
	F_EXEC_STACK,  /* "process '%s' started with executable stack" */
	F_MAX,
};

static const char *const oom_prefixes[] = {
	"Out of memory: ",
	"Memory cgroup out of memory: ",
	"Out of memory (oom_kill_allocating_task): ",
	"",
};
static const char *const blk_prefixes[] = {
	"blk_update_request: ", "print_req_error: ", "end_request: ", ""};
static const char *const statuses[] = {"I/O", "critical medium", "timeout", "critical target",
				       "recoverable transport"};

/* name with its NUL bytes dropped */
static size_t clean(char *out, const uint8_t *in, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (in[i])
			out[k++] = (char)in[i];
	out[k] = '\0';
	return k;
}

static bool disk_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 11, 11 + COMM_MAX + FILE_MAX))
		return 0;
	enum form form = (enum form)(data[0] % F_MAX);
	size_t comm_len = data[1] % (COMM_MAX + 1);
	unsigned pick = data[2];
	uint32_t pid = ((uint32_t)data[3] << 16 | (uint32_t)data[4] << 8 | data[5]) % 4194304;
	uint32_t num = (uint32_t)data[6] << 24 | (uint32_t)data[7] << 16 | (uint32_t)data[8] << 8 |
		       data[9];
	unsigned small = data[10];
	const uint8_t *rest = data + 11;
	size_t left = size - 11;
	if (comm_len > left)
		comm_len = left;
	char comm[COMM_MAX + 1], file[FILE_MAX + 1];
	size_t file_len = left - comm_len;
	if (form == F_OOM_SUMMARY && file_len > 64)
		file_len = 64; /* three paths in the summary, each within its bound */
	file_len = clean(file, rest + comm_len, file_len < FILE_MAX ? file_len : FILE_MAX);
	comm_len = clean(comm, rest, comm_len);

	_cleanup_strbuf_ struct strbuf t = STRBUF_INIT;
	enum kkmsg_kind want = KKMSG_PLAIN;
	char disk[32] = "";
	switch (form) {
	case F_SEGFAULT:
		strbuf_add(&t, comm, comm_len);
		strbuf_printf(&t,
			      "[%" PRIu32 "]: segfault at %" PRIx32 " ip %016" PRIx32
			      " sp %016x error %x",
			      pid, num, num ^ 0x401000u, small * 4096u, small & 7u);
		if (pick & 1) {
			strbuf_puts(&t, " in ");
			strbuf_add(&t, file, file_len);
			strbuf_printf(&t, "[%x+%x]", 0x401000u, small * 16u);
		}
		if (pick & 2)
			strbuf_printf(&t, " likely on CPU %u (core %u, socket 0)", small % 8,
				      small % 4);
		want = KKMSG_SEGFAULT;
		break;
	case F_HUNG:
		strbuf_puts(&t, "INFO: task ");
		strbuf_add(&t, comm, comm_len);
		strbuf_printf(&t, ":%" PRIu32 " blocked for more than %" PRIu32 " seconds.", pid,
			      num);
		want = KKMSG_HUNG_TASK;
		break;
	case F_OOM_KILL:
		strbuf_puts(&t, oom_prefixes[pick % ARRAY_SIZE(oom_prefixes)]);
		strbuf_printf(&t, "Killed process %" PRIu32 " (", pid);
		strbuf_add(&t, comm, comm_len);
		strbuf_printf(&t,
			      ") total-vm:%" PRIu32 "kB, anon-rss:%ukB, file-rss:0kB, "
			      "shmem-rss:0kB, UID:%u pgtables:%ukB oom_score_adj:%d",
			      num, small * 3u, small, small, (int)small - 128);
		want = KKMSG_OOM_KILL;
		break;
	case F_OOM_SUMMARY:
		/* the cgroup paths are names too: the file name stands for them */
		strbuf_puts(&t, "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=");
		strbuf_add(&t, file, file_len);
		strbuf_puts(&t, ",mems_allowed=0,oom_memcg=/");
		strbuf_add(&t, file, file_len);
		strbuf_puts(&t, ",task_memcg=/");
		strbuf_add(&t, file, file_len);
		strbuf_puts(&t, ",task=");
		strbuf_add(&t, comm, comm_len);
		strbuf_printf(&t, ",pid=%" PRIu32 ",uid=%u", pid, small);
		want = KKMSG_OOM_CONTEXT;
		break;
	case F_IO_ERROR: {
		/* a disk's name is the kernel's (its driver's), not a user's */
		size_t n = 0;
		for (size_t i = 0; i < file_len && n < 31; i++)
			if (disk_char(file[i]))
				disk[n++] = file[i];
		if (!n)
			disk[n++] = '?';
		disk[n] = '\0';
		strbuf_puts(&t, blk_prefixes[pick % ARRAY_SIZE(blk_prefixes)]);
		strbuf_printf(&t, "%s error, dev %s, sector %" PRIu32,
			      statuses[small % ARRAY_SIZE(statuses)], disk, num);
		if (pick & 4)
			strbuf_printf(&t, " op 0x%x:(%s) flags 0x%x phys_seg 1 prio class 2",
				      small & 1, small & 1 ? "WRITE" : "READ", num & 0xffff);
		want = KKMSG_IO_ERROR;
		break;
	}
	case F_DROP_CACHES:
		strbuf_add(&t, comm, comm_len);
		strbuf_printf(&t, " (%" PRIu32 "): drop_caches: %u", pid, small % 4);
		break;
	case F_TRAP:
		strbuf_puts(&t, "traps: ");
		strbuf_add(&t, comm, comm_len);
		strbuf_printf(&t, "[%" PRIu32 "] trap invalid opcode ip:%x sp:%x error:0 in ", pid,
			      num, small);
		strbuf_add(&t, file, file_len);
		strbuf_printf(&t, "[%x+%x]", 0x401000u, small);
		break;
	case F_EXEC_STACK:
		strbuf_puts(&t, "process '");
		strbuf_add(&t, file, file_len);
		strbuf_puts(&t, "' started with executable stack");
		break;
	case F_MAX:
		return 0;
	}
	if (t.oom)
		return 0;

	struct kkmsg_rec rec = {.level = 6,
				.facility = 0,
				.seq = 1,
				.flag = '-',
				.text = t.buf,
				.text_len = t.len,
				.last_seq = 1,
				.numbered = true};
	struct kkmsg_state st = {0};
	struct kkmsg_info info;
	if (kkmsg_recognise(&st, &rec, &info) < 0) {
		kkmsg_state_release(&st);
		return 0;
	}
	/* a summary too long for its bounds is no summary: no event either way */
	if (want == KKMSG_OOM_CONTEXT && info.kind == KKMSG_PLAIN)
		want = KKMSG_PLAIN;
	if (info.kind != want)
		fprintf(stderr, "form %d: kind %d, wanted %d: %s\n", (int)form, (int)info.kind,
			(int)want, t.buf);
	FUZZ_CHECK(info.kind == want);
	switch (want) {
	case KKMSG_SEGFAULT:
	case KKMSG_HUNG_TASK:
	case KKMSG_OOM_KILL:
		FUZZ_CHECK(strlen(info.comm) == comm_len && memcmp(info.comm, comm, comm_len) == 0);
		FUZZ_CHECK(info.pid == pid);
		if (want == KKMSG_HUNG_TASK)
			FUZZ_CHECK(info.seconds == num);
		if (want == KKMSG_OOM_KILL)
			FUZZ_CHECK(info.has_uid && info.uid == small);
		break;
	case KKMSG_OOM_CONTEXT:
		FUZZ_CHECK(st.oom && st.oom_pid == pid && st.uid == small);
		break;
	case KKMSG_IO_ERROR:
		FUZZ_CHECK(strcmp(info.disk, disk) == 0 && info.sector == num);
		break;
	default:
		break;
	}
	/* no device from a name: a plain record here has no DEVICE=, and
	 * only an io-error names its disk */
	char buf[64];
	const char *key = kkmsg_device_key(&rec, &info, buf, sizeof(buf));
	FUZZ_CHECK(!key || want == KKMSG_IO_ERROR);
	kkmsg_info_release(&info);
	kkmsg_state_release(&st);
	return 0;
}
