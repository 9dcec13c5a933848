// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-uinput: a test input device made with uinput, for the input
 * source's guest test (guest-input.sh).  It has KEY_POWER, KEY_A and
 * SW_LID; the lid starts in the state given, so that a reader that opens
 * the device later finds it there.  Then it reads commands, one a line,
 * from stdin, and answers each with "done COMMAND" on stdout once the
 * events are written:
 *
 *   power      KEY_POWER pressed, held (one autorepeat, value 2), released
 *   a          KEY_A pressed, held, released
 *   lid 0|1    SW_LID off or on
 *   flap N     SW_LID flipped N times, as fast as it can be written
 *   quit       the device destroyed (unplugged); exit
 *
 * usage: kevent-uinput NAME LID(0|1)
 * First line on stdout: "created /dev/input/eventN".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/uinput.h>

static int fd = -1;

static void die(const char *what)
{
	fprintf(stderr, "kevent-uinput: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void emit(unsigned type, unsigned code, int value)
{
	struct input_event ie = {.type = type, .code = code, .value = value};
	if (write(fd, &ie, sizeof(ie)) != (ssize_t)sizeof(ie))
		die("write");
}

static void key(unsigned code)
{
	emit(EV_KEY, code, 1);
	emit(EV_SYN, SYN_REPORT, 0);
	emit(EV_KEY, code, 2);
	emit(EV_SYN, SYN_REPORT, 0);
	emit(EV_KEY, code, 0);
	emit(EV_SYN, SYN_REPORT, 0);
}

static void lid(int on)
{
	emit(EV_SW, SW_LID, on);
	emit(EV_SYN, SYN_REPORT, 0);
}

/* The event node of the input device sysname ("input3"): "event2". */
static void print_node(const char *sysname)
{
	char dir[256];
	snprintf(dir, sizeof(dir), "/sys/devices/virtual/input/%s", sysname);
	DIR *d = opendir(dir);
	if (!d)
		die(dir);
	struct dirent *e;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, "event", 5) == 0) {
			printf("created /dev/input/%s\n", e->d_name);
			closedir(d);
			return;
		}
	errno = ENOENT;
	die("no event node (is evdev loaded?)");
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: kevent-uinput NAME LID\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die("/dev/uinput");
	if (ioctl(fd, UI_SET_EVBIT, EV_KEY) < 0 || ioctl(fd, UI_SET_EVBIT, EV_SW) < 0 ||
	    ioctl(fd, UI_SET_EVBIT, EV_SYN) < 0 || ioctl(fd, UI_SET_KEYBIT, KEY_POWER) < 0 ||
	    ioctl(fd, UI_SET_KEYBIT, KEY_A) < 0 || ioctl(fd, UI_SET_SWBIT, SW_LID) < 0)
		die("UI_SET_*BIT");
	struct uinput_setup setup = {
		.id = {.bustype = BUS_VIRTUAL, .vendor = 0x4b45, .product = 1}};
	snprintf(setup.name, sizeof(setup.name), "%s", argv[1]);
	if (ioctl(fd, UI_DEV_SETUP, &setup) < 0 || ioctl(fd, UI_DEV_CREATE) < 0)
		die("UI_DEV_CREATE");
	if (atoi(argv[2]))
		lid(1);
	char sysname[64] = "";
	if (ioctl(fd, UI_GET_SYSNAME(sizeof(sysname)), sysname) < 0)
		die("UI_GET_SYSNAME");
	print_node(sysname);

	char line[64];
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, "power") == 0)
			key(KEY_POWER);
		else if (strcmp(line, "a") == 0)
			key(KEY_A);
		else if (strcmp(line, "lid 0") == 0 || strcmp(line, "lid 1") == 0)
			lid(line[4] == '1');
		else if (strncmp(line, "flap ", 5) == 0)
			for (int n = atoi(line + 5), on = 0; n > 0; n--, on = !on)
				lid(on);
		else if (strcmp(line, "quit") == 0)
			break;
		else if (line[0])
			fprintf(stderr, "kevent-uinput: unknown command '%s'\n", line);
		printf("done %s\n", line);
	}
	if (ioctl(fd, UI_DEV_DESTROY) < 0)
		die("UI_DEV_DESTROY");
	close(fd);
	printf("destroyed\n");
	return 0;
}
