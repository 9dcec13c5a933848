// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a user instance may see (keventd.rules(5), WHAT USERS SEE): a row
 * per line of the policy, each side of it, for two users against fake
 * facts; share: by everyone, by name, by group and by names that are not
 * the user's; and the events as the sources and the condition table
 * really make them, so that the policy reads what they carry.
 */
#include <linux/input-event-codes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cond.h"
#include "fs.h"
#include "input-map.h"
#include "loop.h"
#include "policy.h"
#include "statedir.h"
#include "testutil.h"
#include "util.h"

/* --- two users, and what the system says of them --- */

enum { ALICE, BOB, N_PEERS };
static const char *const alice_groups[] = {"alice", "wheel"};
static const gid_t alice_gids[] = {1000, 10};
static const char *const bob_groups[] = {"bob", "users"};
static const gid_t bob_gids[] = {1001, 100};
static const struct kusers_peer peers[N_PEERS] = {
	[ALICE] = {1000, 100, "alice", alice_groups, 2, alice_gids},
	[BOB] = {1001, 200, "bob", bob_groups, 2, bob_gids},
};

/* alice has the active session; each user's instance sees these mounts */
struct fake {
	unsigned session_calls, mount_calls;
	uid_t last_uid;
	pid_t last_pid;
	char last_mountpoint[256];
};
static const struct {
	pid_t pid;
	const char *path;
} mounts[] = {
	{100, "/"}, {100, "/home"}, {100, "/media/alice/\xc3\xa9t\xc3\xa9 x"},
	{200, "/"}, {200, "/home"},
};

static bool fake_session(void *ud, uid_t uid)
{
	struct fake *f = ud;
	f->session_calls++;
	f->last_uid = uid;
	return uid == 1000;
}

static bool fake_mount(void *ud, pid_t pid, const char *mountpoint)
{
	struct fake *f = ud;
	f->mount_calls++;
	f->last_pid = pid;
	snprintf(f->last_mountpoint, sizeof(f->last_mountpoint), "%s", mountpoint);
	for (size_t i = 0; i < ARRAY_SIZE(mounts); i++)
		if (mounts[i].pid == pid && strcmp(mounts[i].path, mountpoint) == 0)
			return true;
	return false;
}

/* --- system rules, with and without share: --- */

enum { R_PLAIN, R_USERS, R_ALICE, R_WHEEL, R_OTHERS, N_RULES, NONE = -1 };
static const char rules_yaml[] = "rules:\n"
				 "  - name: plain\n"
				 "  - name: to-users\n"
				 "    share: users\n"
				 "  - name: to-alice\n"
				 "    share: [alice]\n"
				 "  - name: to-wheel\n"
				 "    share: [\"@wheel\"]\n"
				 "  - name: to-others\n"
				 "    share: [carol, \"@audio\", \"@alice-not\", users]\n";

/* --- the table: a row per policy line, each side --- */

#define Y true
#define N false
struct row {
	const char *label;
	enum kevent_source source;
	int type;
	const char *object, *signal, *payload;
	const char *host; /* NULL: this machine's */
	bool test;
	int share; /* a rule of rules_yaml that matched too, or NONE */
	bool see[N_PEERS];
	enum kusers_why why[N_PEERS];
};

#define S(x)   KEVENT_SOURCE_##x
#define W(x)   KUSERS_##x
#define FS(mp) "Mountpoint: " mp "\nDevice: /dev/sda2\nFstype: ext4\n"
#define COND(c, reason, src)                                                           \
	"Condition: " c "\nSeverity: warning\nSince: 2026-12-06T18:18:53Z\nCount: 1\n" \
	"Reason: " reason "\nSource: " src "\n"
#define QUOTA(type, id)                                                                          \
	"Mountpoint: /home\nDevice: 7:3 /dev/loop3\nFstype: ext4\nQuota-Type: " type "\nId: " id \
	"\nCaller-Uid: 0\n"
#define KEY(k)	  "/org/kernel/input/key/" k
#define SWITCH(k) "/org/kernel/input/switch/" k
#define INPUT(c)  "Device: /dev/input/event3\nName: Power Button\nCode: " c "\n"
#define MEDIA	  "/media/alice/\\xc3\\xa9t\\xc3\\xa9 x"

/* clang-format off */
static const struct row rows[] = {
	/* udev, thermal, ACPI, AC/battery, lid and other switches: yes */
	{"udev: a disk", S(UDEV), KEVENT_STORAGE, "/org/kernel/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda", "add", "DEVNAME: /dev/sda\n", NULL, N, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	{"udev: the battery (power_supply)", S(UDEV), KEVENT_POWER, "/org/kernel/devices/LNXSYSTM:00/PNP0C0A:00/power_supply/BAT0", "change", "POWER_SUPPLY_CAPACITY: 4\n", NULL, N, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	{"udev: AC (power_supply)", S(UDEV), KEVENT_POWER, "/org/kernel/devices/LNXSYSTM:00/ACPI0003:00/power_supply/AC", "change", "POWER_SUPPLY_ONLINE: 0\n", NULL, N, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	{"thermal: a trip point", S(THERMAL), KEVENT_POWER, "/org/kernel/devices/system/cpu/temperature", "high", "Zone: 0\nTemperature: 91000\n", NULL, N, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	{"acpi: the power button", S(ACPI), KEVENT_POWER, "/org/kernel/acpi/button/power", "pressed", "Class: button/power\n", NULL, N, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	{"acpi: the lid", S(ACPI), KEVENT_POWER, "/org/kernel/acpi/button/lid", "pressed", "Class: button/lid\n", NULL, N, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	{"acpi: AC off", S(ACPI), KEVENT_POWER, "/org/kernel/acpi/ac_adapter", "offline", "Class: ac_adapter\n", NULL, N, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	{"acpi: the battery", S(ACPI), KEVENT_POWER, "/org/kernel/acpi/battery", "change", "Class: battery\n", NULL, N, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	{"input: the lid switch", S(INPUT), KEVENT_POWER, SWITCH("lid"), "on", INPUT("SW_LID"), NULL, N, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	{"input: the tablet-mode switch", S(INPUT), KEVENT_POWER, SWITCH("tablet_mode"), "off", INPUT("SW_TABLET_MODE") "Initial: yes\n", NULL, N, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	{"input: the headphone switch", S(INPUT), KEVENT_POWER, SWITCH("headphone_insert"), "on", INPUT("SW_HEADPHONE_INSERT"), NULL, N, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	{"md: an array degraded (/proc/mdstat is everyone's)", S(MD), KEVENT_STORAGE, "/org/kernel/devices/virtual/block/md0", "degraded", "Device: md0\nDegraded: 1\n", NULL, N, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	/* keys of input: only with the active session of a seat */
	{"input: the power key", S(INPUT), KEVENT_POWER, KEY("power"), "press", INPUT("KEY_POWER"), NULL, N, NONE, {Y, N}, {W(SESSION), W(NOT_SESSION)}},
	{"input: a volume key", S(INPUT), KEVENT_POWER, KEY("volumeup"), "release", INPUT("KEY_VOLUMEUP"), NULL, N, NONE, {Y, N}, {W(SESSION), W(NOT_SESSION)}},
	{"input: an object of neither kind is a key's", S(INPUT), KEVENT_POWER, "/org/kernel/input/other", "on", "", NULL, N, NONE, {Y, N}, {W(SESSION), W(NOT_SESSION)}},
	{"input: a switch prefix without its slash is not a switch", S(INPUT), KEVENT_POWER, "/org/kernel/input/switchx", "on", "", NULL, N, NONE, {Y, N}, {W(SESSION), W(NOT_SESSION)}},
	/* conditions of md, fs space and read-only, thermal: yes */
	{"condition: md-degraded", S(CONDITION), KEVENT_STORAGE, "/org/kernel/devices/virtual/block/md0", "set", COND("md-degraded", "degraded", "md"), NULL, N, NONE, {Y, Y}, {W(CONDITION), W(CONDITION)}},
	{"condition: md-degraded reminded", S(CONDITION), KEVENT_STORAGE, "/org/kernel/devices/virtual/block/md0", "remind", COND("md-degraded", "reminder", "md"), NULL, N, NONE, {Y, Y}, {W(CONDITION), W(CONDITION)}},
	{"condition: thermal-hot", S(CONDITION), KEVENT_POWER, "/org/kernel/devices/system/cpu/temperature", "set", COND("thermal-hot", "high", "thermal"), NULL, N, NONE, {Y, Y}, {W(CONDITION), W(CONDITION)}},
	{"condition: fs-space-low set", S(CONDITION), KEVENT_FS, "/org/kernel/fs/home", "set", COND("fs-space-low", "space-low", "fs"), NULL, N, NONE, {Y, Y}, {W(CONDITION), W(CONDITION)}},
	{"condition: fs-space-critical set", S(CONDITION), KEVENT_FS, "/org/kernel/fs/home", "set", COND("fs-space-critical", "space-critical", "fs"), NULL, N, NONE, {Y, Y}, {W(CONDITION), W(CONDITION)}},
	{"condition: fs-inodes-low set", S(CONDITION), KEVENT_FS, "/org/kernel/fs/home", "set", COND("fs-inodes-low", "inodes-low", "fs"), NULL, N, NONE, {Y, Y}, {W(CONDITION), W(CONDITION)}},
	{"condition: fs-space-low cleared by space-ok", S(CONDITION), KEVENT_FS, "/org/kernel/fs/home", "clear", COND("fs-space-low", "space-ok", "fs"), NULL, N, NONE, {Y, Y}, {W(CONDITION), W(CONDITION)}},
	{"condition: fs-read-only set", S(CONDITION), KEVENT_FS, "/org/kernel/fs/", "set", COND("fs-read-only", "remount-ro", "fs"), NULL, N, NONE, {Y, Y}, {W(CONDITION), W(CONDITION)}},
	{"condition: fs-read-only cleared by remount-rw", S(CONDITION), KEVENT_FS, "/org/kernel/fs/", "clear", COND("fs-read-only", "remount-rw", "fs"), NULL, N, NONE, {Y, Y}, {W(CONDITION), W(CONDITION)}},
	/* ... and other conditions: never */
	{"condition: fs-errors (set by error)", S(CONDITION), KEVENT_FS, "/org/kernel/fs/", "set", COND("fs-errors", "error", "fs"), NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"condition: of fs, cleared by umount (which row?)", S(CONDITION), KEVENT_FS, "/org/kernel/fs/home", "clear", COND("fs-space-low", "umount", "fs"), NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"condition: of fs, expired (which row?)", S(CONDITION), KEVENT_FS, "/org/kernel/fs/", "clear", COND("fs-errors", "expired", "fs"), NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"condition: of fs, reminded (which row?)", S(CONDITION), KEVENT_FS, "/org/kernel/fs/", "remind", COND("fs-errors", "reminder", "fs"), NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"condition: fs-space-low cleared by umount, Set-By: says the row's", S(CONDITION), KEVENT_FS, "/org/kernel/fs/home", "clear", COND("fs-space-low", "umount", "fs") "Set-By: space-low\n", NULL, N, NONE, {Y, Y}, {W(CONDITION), W(CONDITION)}},
	{"condition: fs-read-only reminded, Set-By: says the row's", S(CONDITION), KEVENT_FS, "/org/kernel/fs/", "remind", COND("fs-read-only", "reminder", "fs") "Set-By: remount-ro\n", NULL, N, NONE, {Y, Y}, {W(CONDITION), W(CONDITION)}},
	{"condition: fs-errors expired, Set-By: error", S(CONDITION), KEVENT_FS, "/org/kernel/fs/", "clear", COND("fs-errors", "expired", "fs") "Set-By: error\n", NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"condition: Set-By: error wins over a Reason: of space", S(CONDITION), KEVENT_FS, "/org/kernel/fs/", "clear", COND("fs-errors", "space-ok", "fs") "Set-By: error\n", NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"condition: of fs, acked (which row?)", S(CONDITION), KEVENT_FS, "/org/kernel/fs/", "ack", COND("fs-errors", "acked", "fs"), NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"condition: disk-io-errors (kmsg)", S(CONDITION), KEVENT_STORAGE, "/org/kernel/devices/pci0000:00/block/sda", "set", COND("disk-io-errors", "io-error", "kmsg"), NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"condition: oom-kills (kmsg)", S(CONDITION), KEVENT_GENERAL, "/org/kernel/mm/oom", "set", COND("oom-kills", "oom-kill", "kmsg"), NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"condition: of udev", S(CONDITION), KEVENT_HOTPLUG, "/org/kernel/devices/x", "set", COND("my-usb", "add", "udev"), NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"condition: of a socket", S(CONDITION), KEVENT_GENERAL, "/backup", "set", COND("backup-failed", "failed", "socket"), NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"condition: without Source:", S(CONDITION), KEVENT_GENERAL, "/x", "set", "Condition: x\nReason: high\n", NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	/* fs events of a mount: only if the mount is visible in U's namespace */
	{"fs: a mount only alice sees (escaped)", S(FS), KEVENT_FS, "/org/kernel/fs" MEDIA, "mount", FS(MEDIA), NULL, N, NONE, {Y, N}, {W(MOUNT), W(NOT_MOUNT)}},
	{"fs: space-low of a mount both see", S(FS), KEVENT_FS, "/org/kernel/fs/home", "space-low", FS("/home") "Avail-Percent: 3\n", NULL, N, NONE, {Y, Y}, {W(MOUNT), W(MOUNT)}},
	{"fs: remount-ro of /", S(FS), KEVENT_FS, "/org/kernel/fs/", "remount-ro", FS("/"), NULL, N, NONE, {Y, Y}, {W(MOUNT), W(MOUNT)}},
	{"fs: inodes-ok of a mount only alice sees", S(FS), KEVENT_FS, "/org/kernel/fs" MEDIA, "inodes-ok", FS(MEDIA), NULL, N, NONE, {Y, N}, {W(MOUNT), W(NOT_MOUNT)}},
	{"fs: space-critical of a mount neither sees", S(FS), KEVENT_FS, "/org/kernel/fs/srv/data", "space-critical", FS("/srv/data"), NULL, N, NONE, {N, N}, {W(NOT_MOUNT), W(NOT_MOUNT)}},
	{"fs: umount of a mount gone from both", S(FS), KEVENT_FS, "/org/kernel/fs/mnt/usb", "umount", FS("/mnt/usb"), NULL, N, NONE, {N, N}, {W(NOT_MOUNT), W(NOT_MOUNT)}},
	{"fs: the object is not the mount point", S(FS), KEVENT_FS, "/org/kernel/fs/home", "space-low", FS("/srv/data"), NULL, N, NONE, {N, N}, {W(NOT_MOUNT), W(NOT_MOUNT)}},
	{"fs: no Mountpoint:", S(FS), KEVENT_FS, "/org/kernel/fs/home", "space-low", "Device: /dev/sda2\n", NULL, N, NONE, {N, N}, {W(NOT_MOUNT), W(NOT_MOUNT)}},
	{"fs: a Mountpoint: no escape made", S(FS), KEVENT_FS, "/org/kernel/fs/home", "space-low", FS("/ho\\qme"), NULL, N, NONE, {N, N}, {W(NOT_MOUNT), W(NOT_MOUNT)}},
	{"fs: a relative Mountpoint:", S(FS), KEVENT_FS, "/org/kernel/fs/home", "space-low", FS("home"), NULL, N, NONE, {N, N}, {W(NOT_MOUNT), W(NOT_MOUNT)}},
	/* quota warnings: only to the user (or group) they concern */
	{"fs: quota of alice", S(FS), KEVENT_FS, "/org/kernel/fs/home", "block-soft", QUOTA("user", "1000"), NULL, N, NONE, {Y, N}, {W(QUOTA), W(NOT_QUOTA)}},
	{"fs: quota of bob", S(FS), KEVENT_FS, "/org/kernel/fs/home", "inode-below-hard", QUOTA("user", "1001"), NULL, N, NONE, {N, Y}, {W(NOT_QUOTA), W(QUOTA)}},
	{"fs: quota of the group users", S(FS), KEVENT_FS, "/org/kernel/fs/home", "block-grace-expired", QUOTA("group", "100"), NULL, N, NONE, {N, Y}, {W(NOT_QUOTA), W(QUOTA)}},
	{"fs: quota of the group wheel", S(FS), KEVENT_FS, "/org/kernel/fs/home", "inode-hard", QUOTA("group", "10"), NULL, N, NONE, {Y, N}, {W(QUOTA), W(NOT_QUOTA)}},
	{"fs: quota of a user id that is a group's", S(FS), KEVENT_FS, "/org/kernel/fs/home", "block-hard", QUOTA("user", "10"), NULL, N, NONE, {N, N}, {W(NOT_QUOTA), W(NOT_QUOTA)}},
	{"fs: quota of a project", S(FS), KEVENT_FS, "/org/kernel/fs/home", "block-soft", QUOTA("project", "1000"), NULL, N, NONE, {N, N}, {W(NOT_QUOTA), W(NOT_QUOTA)}},
	{"fs: quota without Id:", S(FS), KEVENT_FS, "/org/kernel/fs/home", "block-soft", FS("/home") "Quota-Type: user\n", NULL, N, NONE, {N, N}, {W(NOT_QUOTA), W(NOT_QUOTA)}},
	{"fs: quota with an Id: out of range", S(FS), KEVENT_FS, "/org/kernel/fs/home", "block-soft", QUOTA("user", "4294968296"), NULL, N, NONE, {N, N}, {W(NOT_QUOTA), W(NOT_QUOTA)}},
	/* kmsg, trace, fs errors, mqtt, socket, kernel, other conditions: never */
	{"fs: an error", S(FS), KEVENT_FS, "/org/kernel/fs/home", "error", FS("/home") "Error: EIO\n", NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"fs: a signal the policy does not name", S(FS), KEVENT_FS, "/org/kernel/fs/home", "frobnicate", FS("/home"), NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"kmsg: an OOM kill", S(KMSG), KEVENT_GENERAL, "/org/kernel/mm/oom", "oom-kill", "Message: Out of memory\nComm: hog\n", NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"kmsg: an I/O error", S(KMSG), KEVENT_STORAGE, "/org/kernel/devices/pci0000:00/block/sda", "io-error", "Disk: sda\n", NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"trace: a tracepoint", S(TRACE), KEVENT_GENERAL, "/org/kernel/trace/sched", "sched_process_exec", "filename: /usr/bin/x\n", NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"mqtt: another machine's", S(MQTT), KEVENT_STORAGE, "/org/kernel/devices/block/sda", "add", "", "web01", N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"socket: keventctl send", S(SOCKET), KEVENT_GENERAL, "/backup", "done", "", NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"kernel: kevent.ko's pm bridge", S(KERNEL), KEVENT_POWER, "/org/kernel/power/sleep", "suspend", "", NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"kernel: kevent.ko's net bridge", S(KERNEL), KEVENT_HOTPLUG, "/org/kernel/net/eth0", "up", "Ifindex: 2\n", NULL, N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"another host's udev event", S(UDEV), KEVENT_STORAGE, "/org/kernel/devices/block/sda", "add", "", "web01", N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"another host's switch", S(INPUT), KEVENT_POWER, SWITCH("lid"), "on", "", "web01", N, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	/* ... unless a matched system rule says share: */
	{"kmsg shared with users", S(KMSG), KEVENT_GENERAL, "/org/kernel/mm/oom", "oom-kill", "", NULL, N, R_USERS, {Y, Y}, {W(SHARED), W(SHARED)}},
	{"kmsg shared with alice", S(KMSG), KEVENT_GENERAL, "/org/kernel/mm/oom", "oom-kill", "", NULL, N, R_ALICE, {Y, N}, {W(SHARED), W(PRIVATE)}},
	{"kmsg shared with @wheel", S(KMSG), KEVENT_GENERAL, "/org/kernel/mm/oom", "oom-kill", "", NULL, N, R_WHEEL, {Y, N}, {W(SHARED), W(PRIVATE)}},
	{"kmsg shared with others", S(KMSG), KEVENT_GENERAL, "/org/kernel/mm/oom", "oom-kill", "", NULL, N, R_OTHERS, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"kmsg matched by a rule without share", S(KMSG), KEVENT_GENERAL, "/org/kernel/mm/oom", "oom-kill", "", NULL, N, R_PLAIN, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"trace shared with @wheel", S(TRACE), KEVENT_GENERAL, "/org/kernel/trace/oom", "mark_victim", "", NULL, N, R_WHEEL, {Y, N}, {W(SHARED), W(PRIVATE)}},
	{"fs error shared with users", S(FS), KEVENT_FS, "/org/kernel/fs/home", "error", FS("/home"), NULL, N, R_USERS, {Y, Y}, {W(SHARED), W(SHARED)}},
	{"mqtt shared with alice", S(MQTT), KEVENT_STORAGE, "/org/kernel/devices/block/sda", "add", "", "web01", N, R_ALICE, {Y, N}, {W(SHARED), W(PRIVATE)}},
	{"socket shared with users", S(SOCKET), KEVENT_GENERAL, "/backup", "done", "", NULL, N, R_USERS, {Y, Y}, {W(SHARED), W(SHARED)}},
	{"kernel shared with users", S(KERNEL), KEVENT_POWER, "/org/kernel/power/sleep", "suspend", "", NULL, N, R_USERS, {Y, Y}, {W(SHARED), W(SHARED)}},
	{"fs-errors condition shared with @wheel", S(CONDITION), KEVENT_FS, "/org/kernel/fs/", "set", COND("fs-errors", "error", "fs"), NULL, N, R_WHEEL, {Y, N}, {W(SHARED), W(PRIVATE)}},
	/* share: also lets through what another line keeps: the admin's call */
	{"a key shared with users, bob without a session", S(INPUT), KEVENT_POWER, KEY("power"), "press", INPUT("KEY_POWER"), NULL, N, R_USERS, {Y, Y}, {W(SESSION), W(SHARED)}},
	{"a mount shared with alice", S(FS), KEVENT_FS, "/org/kernel/fs/srv/data", "space-low", FS("/srv/data"), NULL, N, R_ALICE, {Y, N}, {W(SHARED), W(NOT_MOUNT)}},
	{"a quota shared with @wheel", S(FS), KEVENT_FS, "/org/kernel/fs/home", "block-soft", QUOTA("user", "1001"), NULL, N, R_WHEEL, {Y, Y}, {W(SHARED), W(QUOTA)}},
	/* keventctl test --run: judged as its source's */
	{"a test of udev", S(UDEV), KEVENT_STORAGE, "/org/kernel/devices/block/sda", "add", "", NULL, Y, NONE, {Y, Y}, {W(PUBLIC), W(PUBLIC)}},
	{"a test of a key", S(INPUT), KEVENT_POWER, KEY("power"), "press", "", NULL, Y, NONE, {Y, N}, {W(SESSION), W(NOT_SESSION)}},
	{"a test of kmsg", S(KMSG), KEVENT_GENERAL, "/org/kernel/mm/oom", "oom-kill", "", NULL, Y, NONE, {N, N}, {W(PRIVATE), W(PRIVATE)}},
	{"a test of a quota", S(FS), KEVENT_FS, "/org/kernel/fs/home", "block-soft", QUOTA("user", "1000"), NULL, Y, NONE, {Y, N}, {W(QUOTA), W(NOT_QUOTA)}},
};
/* clang-format on */

static struct kevent *make(const struct row *r)
{
	struct kevent *ev = NULL;
	const char *why = NULL;
	int rc = kevent_new(r->type, r->object, r->signal, r->payload, r->source, 1, 2, NULL, 0,
			    &ev, &why);
	if (rc < 0)
		print_error("%s: %s\n", r->label, why ? why : strerror(-rc));
	assert_int_equal(rc, 0);
	if (r->host)
		assert_int_equal(kevent_set_host(ev, r->host, &why), 0);
	ev->test = r->test;
	return ev;
}

/* A plain event of this machine. */
static struct kevent *ev_of(enum kevent_source source, int type, const char *object,
			    const char *signal, const char *payload)
{
	const struct row r = {"",
			      source,
			      type,
			      object,
			      signal,
			      payload,
			      NULL,
			      false,
			      NONE,
			      {false, false},
			      {KUSERS_PRIVATE, KUSERS_PRIVATE}};
	return make(&r);
}

static void test_table(void **state)
{
	(void)state;
	struct kfile *f = tu_parse(rules_yaml, "/etc/keventd/rules.d/50-share.yaml");
	assert_int_equal(f->n_rules, N_RULES);
	struct fake fake = {0};
	const struct kusers_facts facts = {fake_session, fake_mount, &fake};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];
		struct kevent *ev = make(r);
		/* the plain rule matched too: it changes nothing */
		const struct krule *matched[2] = {&f->rules[R_PLAIN]};
		size_t n = 1;
		if (r->share != NONE)
			matched[n++] = &f->rules[r->share];
		for (int p = 0; p < N_PEERS; p++) {
			enum kusers_why why = (enum kusers_why) - 1;
			bool see = kusers_may_see(&peers[p], &facts, ev, matched, n, &why);
			if (see != r->see[p] || why != r->why[p])
				print_error("%s, %s: got %s (%s), wanted %s (%s)\n", r->label,
					    peers[p].name, see ? "yes" : "no", kusers_why_name(why),
					    r->see[p] ? "yes" : "no", kusers_why_name(r->why[p]));
			assert_int_equal(see, r->see[p]);
			assert_int_equal(why, r->why[p]);
		}
		kevent_free(ev);
	}
	kfile_unref(f);
}

/* The callbacks are asked about the peer at hand: its uid, its pid, the
 * mount point unescaped. */
static void test_facts_asked(void **state)
{
	(void)state;
	struct fake fake = {0};
	const struct kusers_facts facts = {fake_session, fake_mount, &fake};
	struct kevent *ev = ev_of(S(FS), KEVENT_FS, "/org/kernel/fs" MEDIA, "space-low", FS(MEDIA));
	assert_true(kusers_may_see(&peers[ALICE], &facts, ev, NULL, 0, NULL));
	assert_int_equal(fake.mount_calls, 1);
	assert_int_equal(fake.last_pid, 100);
	assert_string_equal(fake.last_mountpoint, "/media/alice/\xc3\xa9t\xc3\xa9 x");
	assert_false(kusers_may_see(&peers[BOB], &facts, ev, NULL, 0, NULL));
	assert_int_equal(fake.last_pid, 200);
	assert_int_equal(fake.session_calls, 0);
	kevent_free(ev);

	ev = ev_of(S(INPUT), KEVENT_POWER, KEY("sleep"), "press", "");
	assert_false(kusers_may_see(&peers[BOB], &facts, ev, NULL, 0, NULL));
	assert_int_equal(fake.session_calls, 1);
	assert_int_equal(fake.last_uid, 1001);
	/* a public event asks nothing */
	kevent_free(ev);
	ev = ev_of(S(INPUT), KEVENT_POWER, SWITCH("lid"), "on", "");
	assert_true(kusers_may_see(&peers[BOB], &facts, ev, NULL, 0, NULL));
	assert_int_equal(fake.session_calls, 1);
	assert_int_equal(fake.mount_calls, 2);
	kevent_free(ev);
}

/* No callback, no peer, no event: no. */
static void test_fails_closed(void **state)
{
	(void)state;
	const struct kusers_facts none = {0};
	enum kusers_why why;
	struct kevent *key = ev_of(S(INPUT), KEVENT_POWER, KEY("power"), "press", "");
	struct kevent *mnt = ev_of(S(FS), KEVENT_FS, "/org/kernel/fs/home", "mount", FS("/home"));
	assert_false(kusers_may_see(&peers[ALICE], &none, key, NULL, 0, &why));
	assert_int_equal(why, KUSERS_NOT_SESSION);
	assert_false(kusers_may_see(&peers[ALICE], &none, mnt, NULL, 0, &why));
	assert_int_equal(why, KUSERS_NOT_MOUNT);
	assert_false(kusers_may_see(NULL, &none, key, NULL, 0, &why));
	assert_int_equal(why, KUSERS_PRIVATE);
	assert_false(kusers_may_see(&peers[ALICE], NULL, key, NULL, 0, &why));
	assert_false(kusers_may_see(&peers[ALICE], &none, NULL, NULL, 0, &why));
	assert_int_equal(why, KUSERS_PRIVATE);
	/* a user without a name or groups: names never match */
	struct kfile *f = tu_parse(rules_yaml, NULL);
	const struct krule *matched[] = {&f->rules[R_ALICE], &f->rules[R_WHEEL],
					 &f->rules[R_OTHERS]};
	const struct kusers_peer anon = {1002, 300, "", NULL, 0, NULL};
	struct kevent *k = ev_of(S(KMSG), KEVENT_GENERAL, "/org/kernel/log", "err", "");
	assert_false(kusers_may_see(&anon, &none, k, matched, ARRAY_SIZE(matched), &why));
	assert_int_equal(why, KUSERS_PRIVATE);
	const struct krule *all[] = {&f->rules[R_USERS]};
	assert_true(kusers_may_see(&anon, &none, k, all, 1, &why));
	assert_int_equal(why, KUSERS_SHARED);
	/* "users" in a list is a user of that name */
	const struct kusers_peer users = {1003, 301, "users", NULL, 0, NULL};
	assert_true(kusers_may_see(&users, &none, k, matched, ARRAY_SIZE(matched), &why));
	kevent_free(k);
	kfile_unref(f);
	kevent_free(key);
	kevent_free(mnt);
}

static void test_why_names(void **state)
{
	(void)state;
	static const char *const want[KUSERS_WHY_MAX] = {
		"public", "session",	 "condition", "mount",	   "quota",
		"shared", "not-session", "not-mount", "not-quota", "private",
	};
	for (int w = 0; w < KUSERS_WHY_MAX; w++)
		assert_string_equal(kusers_why_name((enum kusers_why)w), want[w]);
	assert_string_equal(kusers_why_name((enum kusers_why)KUSERS_WHY_MAX), "?");
	assert_string_equal(kusers_why_name((enum kusers_why) - 1), "?");
}

/* --- the events as their sources make them --- */

static void test_sources_events(void **state)
{
	(void)state;
	struct fake fake = {0};
	const struct kusers_facts facts = {fake_session, fake_mount, &fake};
	struct kevent *ev = NULL;
	const char *why = NULL;
	enum kusers_why w;

	/* input: every reported key is the session's, every switch public */
	for (size_t i = 0; i < kinput_n_codes; i++) {
		const struct kinput_code *c = &kinput_codes[i];
		print_message("input: %s\n", c->code_name);
		assert_int_equal(kinput_event(c->type, c->code, 1, false, "/dev/input/event3",
					      "Button", 1, 2, &ev, &why),
				 0);
		if (c->type == EV_SW) {
			assert_true(kusers_may_see(&peers[BOB], &facts, ev, NULL, 0, &w));
			assert_int_equal(w, KUSERS_PUBLIC);
		} else {
			assert_false(kusers_may_see(&peers[BOB], &facts, ev, NULL, 0, &w));
			assert_int_equal(w, KUSERS_NOT_SESSION);
			assert_true(kusers_may_see(&peers[ALICE], &facts, ev, NULL, 0, &w));
			assert_int_equal(w, KUSERS_SESSION);
		}
		kevent_free(ev);
	}

	/* fs: the mount table's and space's events by their mount point */
	struct kfs_mount media = {9,
				  8,
				  17,
				  (char *)"/media/alice/\xc3\xa9t\xc3\xa9 x",
				  (char *)"vfat",
				  (char *)"/dev/sdb1",
				  (char *)"rw",
				  (char *)"rw"};
	assert_int_equal(kfs_mount_event(KFS_MOUNT, &media, NULL, 1, &ev, &why), 0);
	assert_true(kusers_may_see(&peers[ALICE], &facts, ev, NULL, 0, &w));
	assert_int_equal(w, KUSERS_MOUNT);
	assert_false(kusers_may_see(&peers[BOB], &facts, ev, NULL, 0, &w));
	assert_int_equal(w, KUSERS_NOT_MOUNT);
	kevent_free(ev);
	struct kfs_mount home = {1,
				 7,
				 3,
				 (char *)"/home",
				 (char *)"ext4",
				 (char *)"/dev/loop3",
				 (char *)"rw",
				 (char *)"rw,quota"};
	const struct kfs_stat st = {100, 3, 100, 50};
	assert_int_equal(kfs_space_event("space-low", false, &home, &st, 1, &ev, &why), 0);
	assert_true(kusers_may_see(&peers[BOB], &facts, ev, NULL, 0, &w));
	assert_int_equal(w, KUSERS_MOUNT);
	kevent_free(ev);

	/* fs: an error is the admin's, even of a mount the user sees */
	const struct kfs_fan_rec rec = {.has_error = true, .error = 5, .error_count = 1};
	assert_int_equal(kfs_error_event(&rec, &home, 1, &ev, &why), 0);
	assert_false(kusers_may_see(&peers[BOB], &facts, ev, NULL, 0, &w));
	assert_int_equal(w, KUSERS_PRIVATE);
	kevent_free(ev);

	/* fs: a quota warning is its user's or its group's */
	struct kfs_quota_msg q = {.warning = true,
				  .qtype = 0,
				  .signal = "block-soft",
				  .id = 1001,
				  .caller = 1001,
				  .major = 7,
				  .minor = 3};
	assert_int_equal(kfs_quota_event(&q, &home, "bob", 1, &ev, &why), 0);
	assert_true(kusers_may_see(&peers[BOB], &facts, ev, NULL, 0, &w));
	assert_int_equal(w, KUSERS_QUOTA);
	assert_false(kusers_may_see(&peers[ALICE], &facts, ev, NULL, 0, &w));
	assert_int_equal(w, KUSERS_NOT_QUOTA);
	kevent_free(ev);
	q = (struct kfs_quota_msg){.warning = true,
				   .qtype = 1,
				   .signal = "inode-hard",
				   .id = 10,
				   .caller = 1000,
				   .major = 7,
				   .minor = 3};
	assert_int_equal(kfs_quota_event(&q, &home, "wheel", 1, &ev, &why), 0);
	assert_true(kusers_may_see(&peers[ALICE], &facts, ev, NULL, 0, &w));
	assert_false(kusers_may_see(&peers[BOB], &facts, ev, NULL, 0, &w));
	kevent_free(ev);
}

/* The shipped conditions (rules.d/30-conditions.yaml), set and cleared by
 * the condition table itself: what their events carry is what the policy
 * reads. */
struct cond_case {
	enum kevent_source source;
	int type;
	const char *object, *signal, *payload;
	const char *condition, *cond_signal; /* the condition event made */
	bool see;
};

/* clang-format off */
static const struct cond_case cond_cases[] = {
	{S(FS), KEVENT_FS, "/org/kernel/fs/home", "space-low", FS("/home"), "fs-space-low", "set", Y},
	{S(FS), KEVENT_FS, "/org/kernel/fs/home", "space-ok", FS("/home"), "fs-space-low", "clear", Y},
	{S(FS), KEVENT_FS, "/org/kernel/fs/home", "inodes-low", FS("/home"), "fs-inodes-low", "set", Y},
	{S(FS), KEVENT_FS, "/org/kernel/fs/home", "inodes-ok", FS("/home"), "fs-inodes-low", "clear", Y},
	{S(FS), KEVENT_FS, "/org/kernel/fs/", "remount-ro", FS("/"), "fs-read-only", "set", Y},
	{S(FS), KEVENT_FS, "/org/kernel/fs/", "remount-rw", FS("/"), "fs-read-only", "clear", Y},
	{S(FS), KEVENT_FS, "/org/kernel/fs/", "error", FS("/") "Error: EIO\n", "fs-errors", "set", N},
	/* ended by the umount: Set-By: says which row */
	{S(FS), KEVENT_FS, "/org/kernel/fs/home", "space-low", FS("/home"), "fs-space-low", "set", Y},
	{S(FS), KEVENT_FS, "/org/kernel/fs/home", "umount", FS("/home"), "fs-space-low", "clear", Y},
	{S(FS), KEVENT_FS, "/org/kernel/fs/", "remount-ro", FS("/"), "fs-read-only", "set", Y},
	{S(FS), KEVENT_FS, "/org/kernel/fs/", "umount", FS("/"), "fs-read-only", "clear", Y},
	{S(MD), KEVENT_STORAGE, "/org/kernel/devices/virtual/block/md0", "degraded", "Device: md0\nUuid: 3f1c9a2e-5b7d-4e21-9c0a-6d8e2f4b1a07\n", "md-degraded", "set", Y},
	{S(MD), KEVENT_STORAGE, "/org/kernel/devices/virtual/block/md0", "optimal", "Device: md0\nUuid: 3f1c9a2e-5b7d-4e21-9c0a-6d8e2f4b1a07\n", "md-degraded", "clear", Y},
	{S(THERMAL), KEVENT_POWER, "/org/kernel/devices/system/cpu/temperature", "critical", "Zone: 0\n", "thermal-hot", "set", Y},
	{S(THERMAL), KEVENT_POWER, "/org/kernel/devices/system/cpu/temperature", "normal", "Zone: 0\n", "thermal-hot", "clear", Y},
	{S(KMSG), KEVENT_STORAGE, "/org/kernel/devices/block/sda", "io-error", "Disk: sda\n", "disk-io-errors", "set", N},
	{S(KMSG), KEVENT_GENERAL, "/org/kernel/mm/oom", "oom-kill", "Comm: hog\n", "oom-kills", "set", N},
};
/* clang-format on */

static void test_shipped_conditions(void **state)
{
	(void)state;
	_cleanup_free_ char *yaml = NULL;
	size_t len = 0;
	assert_int_equal(
		read_file(KEVENT_SOURCE_DIR "/rules.d/30-conditions.yaml", 1 << 20, &yaml, &len),
		0);
	struct kfile *f = tu_parse(yaml, "/usr/lib/keventd/rules.d/30-conditions.yaml");
	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_from_files(&f, 1, &rs), 0);
	char *dir = tu_mkdtemp();
	struct kstatedir *sd = tu_statedir(dir);
	struct kloop *loop = NULL;
	assert_int_equal(kloop_new(&loop), 0);
	static const struct kcond_ops ops = {0};
	struct kcond *c = NULL;
	assert_int_equal(kcond_new(loop, &ops, NULL, &c), 0);
	assert_int_equal(kcond_open(c, sd), 0);
	kcond_set_rules(c, rs);

	struct fake fake = {0};
	const struct kusers_facts facts = {fake_session, fake_mount, &fake};
	for (size_t i = 0; i < ARRAY_SIZE(cond_cases); i++) {
		const struct cond_case *cc = &cond_cases[i];
		print_message("condition: %s %s\n", cc->signal, cc->object);
		struct kevent *ev = NULL;
		const char *why = NULL;
		assert_int_equal(kevent_new(cc->type, cc->object, cc->signal, cc->payload,
					    cc->source, i + 1, now_realtime_ns(), NULL, 0, &ev,
					    &why),
				 0);
		kcond_weigh(c, ev);
		kevent_free(ev);
		bool found = false;
		while ((ev = kcond_take(c))) {
			assert_int_equal(ev->source, KEVENT_SOURCE_CONDITION);
			if (strcmp(kevent_prop(ev, "Condition"), cc->condition) == 0 &&
			    strcmp(ev->signal, cc->cond_signal) == 0) {
				found = true;
				enum kusers_why w;
				assert_int_equal(
					kusers_may_see(&peers[BOB], &facts, ev, NULL, 0, &w),
					cc->see);
				assert_int_equal(w, cc->see ? KUSERS_CONDITION : KUSERS_PRIVATE);
			}
			kevent_free(ev);
		}
		assert_true(found);
	}
	kcond_free(c);
	kloop_free(loop);
	kstatedir_free(sd);
	kruleset_free(rs);
	kfile_unref(f);
	tu_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),	       cmocka_unit_test(test_facts_asked),
		cmocka_unit_test(test_fails_closed),   cmocka_unit_test(test_why_names),
		cmocka_unit_test(test_sources_events), cmocka_unit_test(test_shipped_conditions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
