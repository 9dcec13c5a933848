// SPDX-License-Identifier: GPL-2.0-or-later
/* The kmsg source's pure parts: a /dev/kmsg record parsed, the records
 * known by their text and the events they make, DEVICE= found in a
 * sysfs of the test's own, the position file and keventd.yaml's
 * "kmsg:". */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kmsg.h"
#include "testutil.h"
#include "util.h"
#include "yamltree.h"

#define SEGV                                                                                \
	"python3[10618]: segfault at 0 ip 00007efc97985ad8 sp 00007ffcbe546bf8 error 4 in " \
	"libc.so.6[167ad8,7efc97844000+156000]"

static void test_parse(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *in;
		int rc;
		unsigned level, facility;
		uint64_t seq, usec;
		char flag;
		const char *text, *subsystem, *device;
		bool numbered; /* on a refusal */
	} cases[] = {
		{"6,1106,18117574729,-;" SEGV "\n", 0, 6, 0, 1106, 18117574729, '-', SEGV, NULL, NULL, true},
		{"3,5,10,-;sd 0:0:0:0: [sda] tag#0 FAILED\n SUBSYSTEM=scsi\n DEVICE=+scsi:0:0:0:0\n", 0, 3, 0, 5, 10, '-',
		 "sd 0:0:0:0: [sda] tag#0 FAILED", "scsi", "+scsi:0:0:0:0", true},
		{"12,7,1,-;hello\n", 0, 4, 1, 7, 1, '-', "hello", NULL, NULL, true},
		{"6,8,1,-,caller=T42;x\n", 0, 6, 0, 8, 1, '-', "x", NULL, NULL, true},
		{"6,9,1,-;a\\x0ab\\x5cc\\x1b\n", 0, 6, 0, 9, 1, '-', "a\nb\\c\x1b", NULL, NULL, true},
		{"6,10,1,c;part\n", 0, 6, 0, 10, 1, 'c', "part", NULL, NULL, true},
		{"6,11,1,+;more", 0, 6, 0, 11, 1, '+', "more", NULL, NULL, true},
		{"6,12,1,-;\n", 0, 6, 0, 12, 1, '-', "", NULL, NULL, true},
		{"6,13,1,-;a\\xzz\\x4\n", 0, 6, 0, 13, 1, '-', "a\\xzz\\x4", NULL, NULL, true},
		{"3,14,1,-;x\n SUBSYSTEM=block\n DEVICE=b8:0\n OTHER=1\n", 0, 3, 0, 14, 1, '-', "x", "block", "b8:0", true},
		{"", -EINVAL, 0, 0, 0, 0, 0, NULL, NULL, NULL, false},
		{"x", -EINVAL, 0, 0, 0, 0, 0, NULL, NULL, NULL, false},
		{"6,", -EINVAL, 0, 0, 0, 0, 0, NULL, NULL, NULL, false},
		{"99999999999,1,2,-;x\n", -EINVAL, 0, 0, 0, 0, 0, NULL, NULL, NULL, false},
		{"6,18446744073709551616,2,-;x\n", -EINVAL, 0, 0, 0, 0, 0, NULL, NULL, NULL, false},
		{"6,77,2;x\n", -EINVAL, 0, 0, 77, 0, 0, NULL, NULL, NULL, true},
		{"6,78,2,z;x\n", -EINVAL, 0, 0, 78, 0, 0, NULL, NULL, NULL, true},
		{"6,79,2,-x\n", -EINVAL, 0, 0, 79, 0, 0, NULL, NULL, NULL, true},
		{"6,80,2,-;a\nbad\n", -EINVAL, 0, 0, 80, 0, 0, NULL, NULL, NULL, true},
		{"6,81,2,-;a\\x00b\n", -EINVAL, 0, 0, 81, 0, 0, NULL, NULL, NULL, true},
		{"6,82,2,-;a\n KEY\n", -EINVAL, 0, 0, 82, 0, 0, NULL, NULL, NULL, true},
		{"6,83,2,-;a\n DEVICE=b1:1\n DEVICE=b1:2\n", -EINVAL, 0, 0, 83, 0, 0, NULL, NULL, NULL, true},
		{"6,84,2,-;a\n DEVICE=b\\x001\n", -EINVAL, 0, 0, 84, 0, 0, NULL, NULL, NULL, true},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kkmsg_rec r;
		const char *why = NULL;
		int rc = kkmsg_parse(cases[i].in, strlen(cases[i].in), &r, &why);
		if (rc != cases[i].rc)
			fail_msg("case %zu (%s): %d, wanted %d (%s)", i, cases[i].in, rc,
				 cases[i].rc, why ? why : "");
		assert_int_equal(r.numbered, cases[i].numbered);
		if (cases[i].numbered)
			assert_int_equal(r.seq, cases[i].seq);
		if (rc < 0) {
			assert_non_null(why);
			assert_null(r.text);
			continue;
		}
		assert_int_equal(r.level, cases[i].level);
		assert_int_equal(r.facility, cases[i].facility);
		assert_int_equal(r.usec, cases[i].usec);
		assert_int_equal(r.flag, cases[i].flag);
		assert_int_equal(r.last_seq, r.seq);
		assert_string_equal(r.text, cases[i].text);
		assert_int_equal(r.text_len, strlen(cases[i].text));
		if (cases[i].subsystem)
			assert_string_equal(r.subsystem, cases[i].subsystem);
		else
			assert_null(r.subsystem);
		if (cases[i].device)
			assert_string_equal(r.device, cases[i].device);
		else
			assert_null(r.device);
		kkmsg_rec_release(&r);
	}
}

static void test_too_long(void **state)
{
	(void)state;
	size_t n = KKMSG_RECORD_MAX + 1;
	char *buf = malloc(n);
	assert_non_null(buf);
	memcpy(buf, "6,1,1,-;", 8);
	memset(buf + 8, 'a', n - 8);
	struct kkmsg_rec r;
	const char *why = NULL;
	assert_int_equal(kkmsg_parse(buf, n, &r, &why), -EINVAL);
	assert_string_equal(why, "record too long");
	assert_int_equal(kkmsg_parse(buf, n - 1, &r, &why), 0);
	kkmsg_rec_release(&r);
	free(buf);
}

static void test_join(void **state)
{
	(void)state;
	struct kkmsg_rec a, b;
	const char *why;
	const char *first = "4,20,1,c;INFO: task a:1 blocked\n";
	const char *second = "4,21,1,+; for more than 5 seconds.\n SUBSYSTEM=md\n";
	assert_int_equal(kkmsg_parse(first, strlen(first), &a, &why), 0);
	assert_int_equal(kkmsg_parse(second, strlen(second), &b, &why), 0);
	assert_int_equal(kkmsg_rec_join(&a, &b), 0);
	assert_string_equal(a.text, "INFO: task a:1 blocked for more than 5 seconds.");
	assert_int_equal(a.seq, 20);
	assert_int_equal(a.last_seq, 21);
	assert_string_equal(a.subsystem, "md");
	/* the joined record is known by its whole text */
	struct kkmsg_state st = {0};
	struct kkmsg_info info;
	assert_int_equal(kkmsg_recognise(&st, &a, &info), 0);
	assert_int_equal(info.kind, KKMSG_HUNG_TASK);
	assert_int_equal(info.seconds, 5);
	kkmsg_info_release(&info);
	kkmsg_rec_release(&a);
	kkmsg_rec_release(&b);
}

/* The event of each record given in order (an OOM summary before its
 * kill), at priority err. */
struct ev_case {
	const char *rec;
	bool wanted;
	int type;
	const char *object, *signal;
	const char *props; /* "Key=value|Key=value"; "Key=" for a key that must be absent */
};

static void check_props(size_t i, const struct kevent *ev, const char *props)
{
	_cleanup_free_ char *list = strdup(props);
	char *save = NULL;
	for (char *kv = strtok_r(list, "|", &save); kv; kv = strtok_r(NULL, "|", &save)) {
		char *eq = strchr(kv, '=');
		*eq = '\0';
		const char *got = kevent_prop(ev, kv);
		if (!eq[1]) {
			if (got)
				fail_msg("case %zu: %s is '%s', wanted none", i, kv, got);
			continue;
		}
		if (!got || strcmp(got, eq + 1) != 0)
			fail_msg("case %zu: %s is '%s', wanted '%s'\npayload:\n%s", i, kv,
				 got ? got : "(none)", eq + 1, ev->payload);
	}
}

static void run_cases(const struct ev_case *cases, size_t n, unsigned threshold)
{
	struct kkmsg_state st = {0};
	for (size_t i = 0; i < n; i++) {
		struct kkmsg_rec r;
		const char *why = NULL;
		if (kkmsg_parse(cases[i].rec, strlen(cases[i].rec), &r, &why) < 0)
			fail_msg("case %zu: %s", i, why);
		struct kkmsg_info info;
		assert_int_equal(kkmsg_recognise(&st, &r, &info), 0);
		bool wanted = kkmsg_wanted(&r, &info, threshold);
		if (wanted != cases[i].wanted)
			fail_msg("case %zu (%s): wanted() %d", i, cases[i].rec, wanted);
		if (wanted) {
			struct kevent *ev = NULL;
			bool cut = true;
			assert_int_equal(kkmsg_event(&r, &info, NULL, 1000, &ev, &cut, &why), 0);
			assert_false(cut);
			if ((int)ev->type != cases[i].type ||
			    strcmp(ev->object, cases[i].object) != 0 ||
			    strcmp(ev->signal, cases[i].signal) != 0)
				fail_msg("case %zu: %s %s %s", i, kevent_type_name(ev->type),
					 ev->object, ev->signal);
			assert_int_equal(ev->source, KEVENT_SOURCE_KMSG);
			assert_int_equal(ev->seqnum, r.seq);
			assert_int_equal(ev->timestamp, 1000 + r.usec * 1000);
			char seq[32];
			snprintf(seq, sizeof(seq), "%llu", (unsigned long long)r.seq);
			assert_string_equal(kevent_prop(ev, "Kmsg-Seqnum"), seq);
			assert_string_equal(kevent_prop(ev, "Facility"), "kern");
			assert_string_equal(kevent_prop(ev, "Priority"), kkmsg_level_name(r.level));
			check_props(i, ev, cases[i].props);
			kevent_free(ev);
		}
		kkmsg_info_release(&info);
		kkmsg_rec_release(&r);
	}
	kkmsg_state_release(&st);
}

#define G  KEVENT_GENERAL
#define ST KEVENT_STORAGE

static void test_records(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct ev_case cases[] = {
		/* segfault, at info, whatever the threshold */
		{"6,1,5,-;" SEGV "\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault",
		 "Comm=python3|Pid=10618|Ip=00007efc97985ad8|Sp=00007ffcbe546bf8|Address=0|Error=4|Message=" SEGV},
		/* a name that holds the separators */
		{"6,2,5,-;a]: segfault at[12]: segfault at 10 ip 1f sp 2e error 6\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault",
		 "Comm=a]: segfault at|Pid=12|Address=10|Ip=1f|Sp=2e|Error=6"},
		{"6,3,5,-;x[1]: segfault at zz ip 1 sp 2 error 4\n", false, 0, NULL, NULL, NULL},
		/* a name with a newline: escaped, no line of its own */
		{"6,4,5,-;x\\x0aUid: 0[7]: segfault at 0 ip 1 sp 2 error 4\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault",
		 "Comm=x\\nUid: 0|Pid=7|Uid="},
		/* hung task */
		{"3,5,5,-;INFO: task kworker/0:1:123 blocked for more than 120 seconds.\n", true, G, KKMSG_OBJECT_HUNG, "hung-task",
		 "Comm=kworker/0:1|Pid=123|Seconds=120"},
		{"3,6,5,-;INFO: task a b:9 blocked for more than x seconds.\n", true, G, KKMSG_OBJECT_LOG, "err", "Comm=|Message=INFO: task a b:9 blocked for more than x seconds."},
		/* the block layer's I/O error, of three kernel generations */
		{"3,7,5,-;I/O error, dev sda, sector 2048 op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 2\n", true, ST, KKMSG_OBJECT_LOG, "io-error",
		 "Disk=sda|Sector=2048|Op=READ|Error=I/O"},
		{"3,8,5,-;blk_update_request: I/O error, dev vdb, sector 8 op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 0\n", true, ST, KKMSG_OBJECT_LOG, "io-error",
		 "Disk=vdb|Sector=8|Op=WRITE|Error=I/O"},
		{"3,9,5,-;print_req_error: critical medium error, dev sdb, sector 1234\n", true, ST, KKMSG_OBJECT_LOG, "io-error",
		 "Disk=sdb|Sector=1234|Op=|Error=critical medium"},
		/* the buffer layer's line is not the block layer's */
		{"3,10,5,-;Buffer I/O error on dev sda1, logical block 0, async page read\n", true, G, KKMSG_OBJECT_LOG, "err", "Disk="},
		/* an OOM kill in a memory cgroup: the summary first (info: no event) */
		{"6,11,5,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,oom_memcg=/system.slice/hog.service,task_memcg=/system.slice/hog.service,task=hog,pid=4242,uid=1000\n",
		 false, 0, NULL, NULL, NULL},
		{"3,12,5,-;Memory cgroup out of memory: Killed process 4242 (hog) total-vm:1050000kB, anon-rss:524000kB, file-rss:1000kB, shmem-rss:0kB, UID:1000 pgtables:1100kB oom_score_adj:0\n",
		 true, G, KKMSG_OBJECT_OOM, "oom-kill",
		 "Pid=4242|Comm=hog|Uid=1000|Memcg=/system.slice/hog.service|Task-Memcg=/system.slice/hog.service|Constraint=CONSTRAINT_MEMCG"},
		/* the summary is used once: a second kill has no cgroup */
		{"3,13,5,-;Out of memory: Killed process 4242 (hog) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:1kB oom_score_adj:0\n",
		 true, G, KKMSG_OBJECT_OOM, "oom-kill", "Pid=4242|Memcg=|Task-Memcg="},
		/* a global OOM: the task's cgroup only; lists with commas */
		{"6,14,5,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,2,task_memcg=/user.slice,task=a,b,pid=77,uid=0\n",
		 false, 0, NULL, NULL, NULL},
		{"3,15,5,-;Out of memory: Killed process 77 (a,b) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1kB oom_score_adj:0\n",
		 true, G, KKMSG_OBJECT_OOM, "oom-kill", "Pid=77|Comm=a,b|Uid=0|Memcg=/user.slice|Constraint=CONSTRAINT_NONE"},
		/* a summary of another pid names nothing */
		{"6,16,5,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),oom_memcg=/x,task=z,pid=1,uid=0\n", false, 0, NULL, NULL, NULL},
		{"3,17,5,-;Out of memory: Killed process 2 (y) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:5 pgtables:1kB oom_score_adj:0\n",
		 true, G, KKMSG_OBJECT_OOM, "oom-kill", "Pid=2|Uid=5|Memcg="},
		/* a name that holds ") total-vm:"; an older kernel without UID: */
		{"3,18,5,-;Killed process 3 (x) total-vm:1) total-vm:5kB, anon-rss:1kB\n", true, G, KKMSG_OBJECT_OOM, "oom-kill",
		 "Pid=3|Comm=x) total-vm:1|Uid="},
		{"3,19,5,-;oom_reaper: reaped process 3 (x), now anon-rss:0kB\n", true, G, KKMSG_OBJECT_LOG, "err", "Pid="},
		/* plain records: the level, and the threshold */
		{"3,20,5,-;e1000e: eth0 NIC Link is Down\n", true, G, KKMSG_OBJECT_LOG, "err",
		 "Message=e1000e: eth0 NIC Link is Down|Subsystem=|Device="},
		{"2,21,5,-;md/raid1:md0: Disk failure on sdb1, disabling device.\n SUBSYSTEM=md\n", true, ST, KKMSG_OBJECT_LOG, "crit",
		 "Subsystem=md"},
		{"4,22,5,-;a warning\n", false, 0, NULL, NULL, NULL},
		{"6,23,5,-;some info\n", false, 0, NULL, NULL, NULL},
		{"0,24,5,-;Kernel panic\n", true, G, KKMSG_OBJECT_LOG, "emerg", ""},
		{"3,25,5,-;sd 0:0:0:0: [sda] tag#0 FAILED Result: hostbyte=DID_OK\n SUBSYSTEM=scsi\n DEVICE=+scsi:0:0:0:0\n", true, ST, KKMSG_OBJECT_LOG, "err",
		 "Subsystem=scsi|Device=+scsi:0:0:0:0"},
		{"3,26,5,-;ata1: link down\n SUBSYSTEM=ata\n", true, ST, KKMSG_OBJECT_LOG, "err", ""},
		{"3,27,5,-;nvme0: timeout\n SUBSYSTEM=nvme\n", true, ST, KKMSG_OBJECT_LOG, "err", ""},
		{"3,28,5,-;usb 1-1: device not accepting address\n SUBSYSTEM=usb\n DEVICE=c189:1\n", true, G, KKMSG_OBJECT_LOG, "err", "Device=c189:1"},
		/* control characters in a message are escaped */
		{"3,29,5,-;a\\x1b[31mb\\x09c\n", true, G, KKMSG_OBJECT_LOG, "err", "Message=a\\x1b[31mb\\tc"},
		/* a user-space writer: never an event, whatever its text or level */
		{"8,30,5,-;" SEGV "\n", false, 0, NULL, NULL, NULL},
		{"11,31,5,-;I/O error, dev sda, sector 2048 op 0x0:(READ)\n", false, 0, NULL, NULL, NULL},
		{"12,32,5,-;hello\n", false, 0, NULL, NULL, NULL},
		{"14,33,5,-;Out of memory: Killed process 1 (init) total-vm:1kB\n", false, 0, NULL, NULL, NULL},
		/* a backslash is escaped too: a newline and "\n" written out are two messages */
		{"3,34,5,-;a\\x5cnb\n", true, G, KKMSG_OBJECT_LOG, "err", "Message=a\\\\nb"},
		{"3,35,5,-;a\\x0ab\n", true, G, KKMSG_OBJECT_LOG, "err", "Message=a\\nb"},
	};
	/* clang-format on */
	run_cases(cases, ARRAY_SIZE(cases), 3);
}

/* The lines of a segfault (arch/x86/mm/fault.c) whose task and file a
 * user chose: the task's name (at most 15 bytes) and the file of its code
 * spell the other records keventd knows.  Each is a segfault, or nothing
 * of a kind: never io-error, hung-task or oom-kill. */
#define SEGV_AT(comm, pid) \
	comm "[" pid "]: segfault at 0 ip 0000000000401126 sp 00007ffd1c2b3a40 error 4"
#define IN_FILE(file) " in " file "[401000+1000] likely on CPU 1 (core 1, socket 0)"

static void test_forged(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct ev_case cases[] = {
		/* the io-error of a file name: "x: critical medium error, dev vda, sector 7 " */
		{"6,1,5,-;" SEGV_AT("crash", "4242") IN_FILE("x: critical medium error, dev vda, sector 7 ") "\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault",
		 "Comm=crash|Pid=4242|Disk=|Sector=|Error=4"},
		/* the hung task of a task "INFO: task a" and a file "a:1 blocked for more than 999 seconds " */
		{"6,2,5,-;" SEGV_AT("INFO: task a", "4243") IN_FILE("a:1 blocked for more than 999 seconds ") "\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault",
		 "Comm=INFO: task a|Pid=4243|Seconds="},
		/* the same, the record ending where the hung task's line would */
		{"6,3,5,-;" SEGV_AT("INFO: task a", "4244") " in a:1 blocked for more than 999 seconds.\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault",
		 "Comm=INFO: task a|Pid=4244|Seconds="},
		/* names of 15 bytes that spell the start of a kernel format */
		{"6,4,5,-;" SEGV_AT("I/O error, dev ", "7") "\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault", "Pid=7|Disk="},
		{"6,5,5,-;" SEGV_AT("Out of memory: ", "8") IN_FILE("Killed process 1 (init) total-vm:1kB") "\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault", "Pid=8|Uid="},
		{"6,6,5,-;" SEGV_AT("INFO: task x:1 ", "9") IN_FILE(" blocked for more than 5 seconds.") "\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault", "Pid=9|Seconds="},
		{"6,7,5,-;" SEGV_AT("Killed process ", "10") IN_FILE("1 (init) total-vm:1kB") "\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault", "Pid=10"},
		{"6,8,5,-;" SEGV_AT("a[1]: segfault ", "11") "\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault", "Pid=11|Message=a[1]: segfault [11]: segfault at 0 ip 0000000000401126 sp 00007ffd1c2b3a40 error 4"},
		/* a file name that holds a second segfault line names no one else */
		{"6,9,5,-;" SEGV_AT("ok", "12") IN_FILE("root[1]: segfault at 0 ip 1 sp 2 error 4") "\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault", "Comm=ok|Pid=12"},
		/* a name of 16 bytes is no task's: no segfault (the record is at info) */
		{"6,10,5,-;" SEGV_AT("abcdefghijklmnop", "13") "\n", false, 0, NULL, NULL, NULL},
		/* the block layer's line only from the first byte, with its own
		 * prefixes and statuses */
		{"3,11,5,-;sd 0:0:0:0: I/O error, dev sda, sector 1 op 0x0:(READ)\n", true, G, KKMSG_OBJECT_LOG, "err", "Disk="},
		{"3,12,5,-;x: I/O error, dev sda, sector 1\n", true, G, KKMSG_OBJECT_LOG, "err", "Disk="},
		{"3,13,5,-; I/O error, dev sda, sector 1\n", true, G, KKMSG_OBJECT_LOG, "err", "Disk="},
		{"3,14,5,-;disk on fire error, dev sda, sector 1\n", true, G, KKMSG_OBJECT_LOG, "err", "Disk="},
		{"3,15,5,-;I/O error, dev sda, sector 1x\n", true, G, KKMSG_OBJECT_LOG, "err", "Disk="},
		{"3,16,5,-;end_request: I/O error, dev sdc, sector 99\n", true, ST, KKMSG_OBJECT_LOG, "io-error", "Disk=sdc|Sector=99|Error=I/O"},
		{"3,17,5,-;timeout error, dev nvme0n1, sector 5 op 0x1:(WRITE) flags 0x8800 phys_seg 1 prio class 2\n", true, ST, KKMSG_OBJECT_LOG, "io-error",
		 "Disk=nvme0n1|Sector=5|Op=WRITE|Error=timeout"},
		{"3,18,5,-;critical medium error, dev ?, sector 5\n", true, ST, KKMSG_OBJECT_LOG, "io-error", "Disk=?|Error=critical medium"},
		{"3,19,5,-;I/O error, dev abcdefghijklmnopqrstuvwxyz0123456, sector 1\n", true, G, KKMSG_OBJECT_LOG, "err", "Disk="},
		/* the hung task's line whole, and its name at most 15 bytes */
		{"3,20,5,-;INFO: task abcdefghijklmno:1 blocked for more than 5 seconds.\n", true, G, KKMSG_OBJECT_HUNG, "hung-task",
		 "Comm=abcdefghijklmno|Pid=1|Seconds=5"},
		{"3,21,5,-;INFO: task abcdefghijklmnop:1 blocked for more than 5 seconds.\n", true, G, KKMSG_OBJECT_LOG, "err", "Seconds="},
		{"3,22,5,-;INFO: task a:1 blocked for more than 5 seconds. x\n", true, G, KKMSG_OBJECT_LOG, "err", "Seconds="},
		{"3,23,5,-;x INFO: task a:1 blocked for more than 5 seconds.\n", true, G, KKMSG_OBJECT_LOG, "err", "Seconds="},
		{"3,24,5,-;INFO: task a:1:2 blocked for more than 5 seconds.\n", true, G, KKMSG_OBJECT_HUNG, "hung-task", "Comm=a:1|Pid=2"},
		/* an OOM kill only with the kernel's own words before it */
		{"3,25,5,-;x: Killed process 1 (init) total-vm:1kB, anon-rss:1kB\n", true, G, KKMSG_OBJECT_LOG, "err", "Pid="},
		{"3,26,5,-;Out of memory (oom_kill_allocating_task): Killed process 6 (a) total-vm:1kB, anon-rss:1kB\n", true, G, KKMSG_OBJECT_OOM, "oom-kill", "Pid=6|Comm=a"},
		{"3,27,5,-;Out of memory: Killed process 6 (abcdefghijklmnop) total-vm:1kB, anon-rss:1kB\n", true, G, KKMSG_OBJECT_LOG, "err", "Pid="},
		/* an empty name is a task's too (PR_SET_NAME "") */
		{"3,28,5,-;Out of memory: Killed process 7 () total-vm:1kB, anon-rss:1kB\n", true, G, KKMSG_OBJECT_OOM, "oom-kill", "Pid=7"},
	};
	/* clang-format on */
	run_cases(cases, ARRAY_SIZE(cases), 3);
}

static void test_threshold(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct ev_case debug[] = {
		{"7,1,5,-;debugging\n", true, G, KKMSG_OBJECT_LOG, "debug", ""},
		{"6,2,5,-;some info\n", true, G, KKMSG_OBJECT_LOG, "info", ""},
		{"15,3,5,-;user debug\n", false, 0, NULL, NULL, NULL},
	};
	static const struct ev_case emerg[] = {
		{"1,1,5,-;alert\n", false, 0, NULL, NULL, NULL},
		{"0,2,5,-;emergency\n", true, G, KKMSG_OBJECT_LOG, "emerg", ""},
		{"6,3,5,-;" SEGV "\n", true, G, KKMSG_OBJECT_SEGFAULT, "segfault", ""},
	};
	/* clang-format on */
	run_cases(debug, ARRAY_SIZE(debug), 7);
	run_cases(emerg, ARRAY_SIZE(emerg), 0);
}

static void test_message_cut(void **state)
{
	(void)state;
	/* 990 bytes, each shown as four: the message is cut, never inside
	 * an escape, and says so */
	struct strbuf in = STRBUF_INIT;
	strbuf_puts(&in, "3,1,5,-;");
	for (int i = 0; i < 990; i++)
		strbuf_puts(&in, "\\x01");
	strbuf_puts(&in, "\n");
	struct kkmsg_rec r;
	const char *why;
	assert_int_equal(kkmsg_parse(in.buf, in.len, &r, &why), 0);
	struct kkmsg_state st = {0};
	struct kkmsg_info info;
	assert_int_equal(kkmsg_recognise(&st, &r, &info), 0);
	struct kevent *ev = NULL;
	bool cut = false;
	assert_int_equal(kkmsg_event(&r, &info, NULL, 0, &ev, &cut, &why), 0);
	assert_true(cut);
	const char *m = kevent_prop(ev, "Message");
	size_t n = strlen(m);
	assert_true(n <= KKMSG_MESSAGE_MAX);
	assert_true(n > KKMSG_MESSAGE_MAX - 4);
	assert_int_equal(n % 4, 0);
	assert_memory_equal(m + n - 4, "\\x01", 4);
	assert_string_equal(kevent_prop(ev, "Truncated"), "Message");
	kevent_free(ev);
	kkmsg_info_release(&info);
	kkmsg_rec_release(&r);
	/* UTF-8 is shown as it is, and cut between characters */
	strbuf_reset(&in);
	strbuf_puts(&in, "3,2,5,-;");
	for (int i = 0; i < 2990; i++)
		strbuf_putc(&in, 'a');
	for (int i = 0; i < 100; i++)
		strbuf_puts(&in, "\\xe2\\x82\\xac"); /* the euro sign, three bytes */
	assert_int_equal(kkmsg_parse(in.buf, in.len, &r, &why), 0);
	assert_int_equal(kkmsg_recognise(&st, &r, &info), 0);
	assert_int_equal(kkmsg_event(&r, &info, NULL, 0, &ev, &cut, &why), 0);
	assert_true(cut);
	m = kevent_prop(ev, "Message");
	assert_int_equal(strlen(m), 2999);
	assert_true(utf8_valid(m));
	kevent_free(ev);
	kkmsg_info_release(&info);
	kkmsg_rec_release(&r);
	strbuf_release(&in);
}

/* ---- DEVICE= in a sysfs of the test's own ---- */

static void link_at(const char *root, const char *target, const char *path)
{
	_cleanup_free_ char *full = tu_printf("%s/%s", root, path);
	_cleanup_free_ char *dir = strdup(full);
	*strrchr(dir, '/') = '\0';
	_cleanup_free_ char *cmd = tu_printf("mkdir -p '%s'", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(symlink(target, full), 0);
}

static void mkdirs(const char *root, const char *path)
{
	_cleanup_free_ char *cmd = tu_printf("mkdir -p '%s/%s'", root, path);
	assert_int_equal(system(cmd), 0);
}

static void test_device(void **state)
{
	(void)state;
	_cleanup_free_ char *root = tu_mkdtemp();
	mkdirs(root, "devices/pci0000:00/0000:00:04.0/virtio2/block/vdb");
	mkdirs(root, "devices/pci0000:00/host0/target0:0:0/0:0:0:0");
	mkdirs(root, "devices/virtual/tty/tty1");
	mkdirs(root, "devices/virtual/net/lo");
	mkdirs(root, "devices/platform/a!b");
	mkdirs(root, "etc");
	link_at(root, "../../devices/pci0000:00/0000:00:04.0/virtio2/block/vdb",
		"dev/block/254:16");
	link_at(root, "../../devices/pci0000:00/0000:00:04.0/virtio2/block/vdb", "class/block/vdb");
	link_at(root, "../../devices/virtual/tty/tty1", "dev/char/4:1");
	link_at(root, "../../../devices/pci0000:00/host0/target0:0:0/0:0:0:0",
		"bus/scsi/devices/0:0:0:0");
	link_at(root, "../../devices/virtual/net/lo", "class/net/lo");
	link_at(root, "../../../devices/platform/a!b", "bus/platform/devices/a!b");
	link_at(root, "../../etc", "dev/block/9:9"); /* outside devices/ */
	char lo[IF_NAMESIZE];
	bool have_lo = if_indextoname(1, lo) && strcmp(lo, "lo") == 0;
	/* clang-format off */
	static const struct {
		const char *dev;
		int rc;
		const char *path;
	} cases[] = {
		{"b254:16", 0, "/devices/pci0000:00/0000:00:04.0/virtio2/block/vdb"},
		{"c4:1", 0, "/devices/virtual/tty/tty1"},
		{"+block:vdb", 0, "/devices/pci0000:00/0000:00:04.0/virtio2/block/vdb"},
		{"+scsi:0:0:0:0", 0, "/devices/pci0000:00/host0/target0:0:0/0:0:0:0"},
		{"+platform:a/b", 0, "/devices/platform/a!b"},
		{"b254:17", -ENOENT, NULL},
		{"b9:9", -ENOENT, NULL},
		{"+block:nosuch", -ENOENT, NULL},
		{"+scsi:../../../etc", -ENOENT, NULL},
		{"+..:x", -EINVAL, NULL},
		{"+a/b:x", -EINVAL, NULL},
		{"+block:..", -EINVAL, NULL},
		{"+block:", -EINVAL, NULL},
		{"+block", -EINVAL, NULL},
		{"b8", -EINVAL, NULL},
		{"bx:1", -EINVAL, NULL},
		{"b8:", -EINVAL, NULL},
		{"b99999999999:0", -EINVAL, NULL},
		{"n", -EINVAL, NULL},
		{"n0", -EINVAL, NULL},
		{"nx", -EINVAL, NULL},
		{"x1", -EINVAL, NULL},
		{"", -EINVAL, NULL},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *p = NULL;
		int rc = kkmsg_device_path(root, cases[i].dev, &p);
		if (rc != cases[i].rc)
			fail_msg("case %zu (%s): %d, wanted %d", i, cases[i].dev, rc, cases[i].rc);
		if (cases[i].path)
			assert_string_equal(p, cases[i].path);
		else
			assert_null(p);
		free(p);
	}
	if (have_lo) {
		char *p = NULL;
		assert_int_equal(kkmsg_device_path(root, "n1", &p), 0);
		assert_string_equal(p, "/devices/virtual/net/lo");
		free(p);
	}
	/* the event of a record with DEVICE=: the device's object */
	const char *text = "3,5,1,-;I/O error, dev vdb, sector 8 op 0x1:(WRITE) flags 0x0\n";
	struct kkmsg_rec r;
	const char *why;
	assert_int_equal(kkmsg_parse(text, strlen(text), &r, &why), 0);
	struct kkmsg_state st = {0};
	struct kkmsg_info info;
	assert_int_equal(kkmsg_recognise(&st, &r, &info), 0);
	char buf[64];
	const char *key = kkmsg_device_key(&r, &info, buf, sizeof(buf));
	assert_string_equal(key, "+block:vdb");
	char *path = NULL;
	assert_int_equal(kkmsg_device_path(root, key, &path), 0);
	struct kevent *ev = NULL;
	bool cut;
	assert_int_equal(kkmsg_event(&r, &info, path, 0, &ev, &cut, &why), 0);
	assert_string_equal(ev->object,
			    "/org/kernel/devices/pci0000:00/0000:00:04.0/virtio2/block/vdb");
	assert_string_equal(ev->signal, "io-error");
	kevent_free(ev);
	free(path);
	kkmsg_info_release(&info);
	kkmsg_rec_release(&r);
	/* an io-error's own DEVICE= comes first; a segfault whose file name
	 * spells an io-error names no device */
	text = "3,8,1,-;I/O error, dev vdb, sector 8\n DEVICE=b254:16\n";
	assert_int_equal(kkmsg_parse(text, strlen(text), &r, &why), 0);
	assert_int_equal(kkmsg_recognise(&st, &r, &info), 0);
	assert_int_equal(info.kind, KKMSG_IO_ERROR);
	assert_string_equal(kkmsg_device_key(&r, &info, buf, sizeof(buf)), "b254:16");
	kkmsg_info_release(&info);
	kkmsg_rec_release(&r);
	text = "6,9,1,-;a[1]: segfault at 0 ip 1 sp 2 error 4 in I/O error, dev vdb, sector 8 "
	       "[1+1]\n";
	assert_int_equal(kkmsg_parse(text, strlen(text), &r, &why), 0);
	assert_int_equal(kkmsg_recognise(&st, &r, &info), 0);
	assert_int_equal(info.kind, KKMSG_SEGFAULT);
	assert_null(kkmsg_device_key(&r, &info, buf, sizeof(buf)));
	kkmsg_info_release(&info);
	kkmsg_rec_release(&r);
	/* a segfault names no device; a plain record its DEVICE= */
	text = "3,6,1,-;x\n DEVICE=b254:16\n";
	assert_int_equal(kkmsg_parse(text, strlen(text), &r, &why), 0);
	assert_int_equal(kkmsg_recognise(&st, &r, &info), 0);
	assert_string_equal(kkmsg_device_key(&r, &info, buf, sizeof(buf)), "b254:16");
	kkmsg_info_release(&info);
	kkmsg_rec_release(&r);
	text = "6,7,1,-;" SEGV "\n DEVICE=b254:16\n";
	assert_int_equal(kkmsg_parse(text, strlen(text), &r, &why), 0);
	assert_int_equal(kkmsg_recognise(&st, &r, &info), 0);
	assert_null(kkmsg_device_key(&r, &info, buf, sizeof(buf)));
	kkmsg_info_release(&info);
	kkmsg_rec_release(&r);
	tu_rm_rf(root);
}

/* A device path no object can be leaves the record's own object. */
static void test_bad_devpath(void **state)
{
	(void)state;
	const char *text = "3,6,1,-;x\n DEVICE=b254:16\n";
	struct kkmsg_rec r;
	const char *why;
	assert_int_equal(kkmsg_parse(text, strlen(text), &r, &why), 0);
	struct kkmsg_state st = {0};
	struct kkmsg_info info;
	assert_int_equal(kkmsg_recognise(&st, &r, &info), 0);
	struct kevent *ev = NULL;
	bool cut;
	assert_int_equal(kkmsg_event(&r, &info, "/devices/a\x01b", 0, &ev, &cut, &why), 0);
	assert_string_equal(ev->object, KKMSG_OBJECT_LOG);
	kevent_free(ev);
	kkmsg_info_release(&info);
	kkmsg_rec_release(&r);
}

static void test_pos(void **state)
{
	(void)state;
	const char *id = "2d00b6ce-19ec-4555-a968-da557fcc951d";
	struct kkmsg_pos p = {.seq = 1284};
	memcpy(p.boot_id, id, KKMSG_BOOT_ID_LEN + 1);
	char buf[96];
	size_t n = kkmsg_pos_format(&p, buf, sizeof(buf));
	assert_string_equal(buf, "2d00b6ce-19ec-4555-a968-da557fcc951d 1284\n");
	struct kkmsg_pos q;
	assert_int_equal(kkmsg_pos_parse(buf, n, &q), 0);
	assert_string_equal(q.boot_id, id);
	assert_int_equal(q.seq, 1284);
	/* clang-format off */
	static const struct { const char *text; int rc; uint64_t seq; } cases[] = {
		{"2d00b6ce-19ec-4555-a968-da557fcc951d 00000000000000001284\n", 0, 1284},
		{"2d00b6ce-19ec-4555-a968-da557fcc951d 0", 0, 0},
		{"2d00b6ce-19ec-4555-a968-da557fcc951d 18446744073709551615\n", 0, UINT64_MAX},
		{"2d00b6ce-19ec-4555-a968-da557fcc951d 18446744073709551616\n", -EINVAL, 0},
		{"2d00b6ce-19ec-4555-a968-da557fcc951d \n", -EINVAL, 0},
		{"2d00b6ce-19ec-4555-a968-da557fcc951d 12x\n", -EINVAL, 0},
		{"2d00b6ce-19ec-4555-a968-da557fcc951d  12\n", -EINVAL, 0},
		{"2D00b6ce-19ec-4555-a968-da557fcc951d 12\n", -EINVAL, 0},
		{"2d00b6ce-19ec-4555-a968-da557fcc951 12\n", -EINVAL, 0},
		{"2d00b6ce+19ec-4555-a968-da557fcc951d 12\n", -EINVAL, 0},
		{"", -EINVAL, 0},
		{"12\n", -EINVAL, 0},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int rc = kkmsg_pos_parse(cases[i].text, strlen(cases[i].text), &q);
		if (rc != cases[i].rc)
			fail_msg("case %zu (%s): %d", i, cases[i].text, rc);
		if (rc == 0)
			assert_int_equal(q.seq, cases[i].seq);
	}
}

static void test_levels(void **state)
{
	(void)state;
	static const char *const names[] = {"emerg",   "alert",	 "crit", "err",
					    "warning", "notice", "info", "debug"};
	for (unsigned i = 0; i < 8; i++) {
		assert_string_equal(kkmsg_level_name(i), names[i]);
		assert_int_equal(kkmsg_level_from_name(names[i]), i);
		char d[2] = {(char)('0' + i), 0};
		assert_int_equal(kkmsg_level_from_name(d), i);
	}
	assert_null(kkmsg_level_name(8));
	assert_int_equal(kkmsg_level_from_name("error"), 3);
	assert_int_equal(kkmsg_level_from_name("warn"), 4);
	assert_int_equal(kkmsg_level_from_name("panic"), 0);
	assert_int_equal(kkmsg_level_from_name("8"), -1);
	assert_int_equal(kkmsg_level_from_name("loud"), -1);
	assert_int_equal(kkmsg_level_from_name(""), -1);
}

/* The kmsg: section read (its mistakes: test-source-type.c). */
static void test_config(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *yaml;
		unsigned priority;
		bool backlog;
	} cases[] = {
		{"{}", 3, false},
		{"{priority: warning}", 4, false},
		{"{priority: 7, backlog: yes}", 7, true},
		{"{priority: emerg, backlog: false}", 0, false},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ynode *root = tu_yaml(cases[i].yaml);
		struct kkmsg_config c;
		kkmsg_config_init(&c);
		struct kdiags d = {0};
		if (kkmsg_config_parse(&c, root, "k.yaml", &d) != 0)
			fail_msg("case %zu: %s", i, d.n ? d.v[0].msg : "?");
		assert_int_equal(d.n, 0);
		assert_int_equal(c.priority, cases[i].priority);
		assert_int_equal(c.backlog, cases[i].backlog);
		kdiags_free(&d);
		ynode_free(root);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),	    cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_join),	    cmocka_unit_test(test_records),
		cmocka_unit_test(test_forged),	    cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_message_cut), cmocka_unit_test(test_device),
		cmocka_unit_test(test_bad_devpath), cmocka_unit_test(test_pos),
		cmocka_unit_test(test_levels),	    cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
