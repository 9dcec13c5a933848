// SPDX-License-Identifier: GPL-2.0-or-later
/* The udev source's table of known devices: set, removed, written and
 * read back, and the differences between two tables in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "udev-table.h"

static void collect(void *userdata, const char *action, const char *devpath, const char *subsystem)
{
	struct strbuf *sb = userdata;
	strbuf_printf(sb, "%s %s %s\n", action, devpath, subsystem);
}

static void test_set_render_parse(void **state)
{
	(void)state;
	struct kudevtab t = {0}, back = {0};
	assert_int_equal(kudevtab_set(&t, "/devices/b", "block"), 1);
	assert_int_equal(kudevtab_set(&t, "/devices/a/x", "net"), 1);
	assert_int_equal(kudevtab_set(&t, "/devices/a", "pci"), 1);
	assert_int_equal(kudevtab_set(&t, "/devices/a", "pci"), 0); /* the same */
	assert_int_equal(kudevtab_set(&t, "/devices/a!b", "misc"), 1);
	assert_int_equal(kudevtab_set(&t, "/devices/gone", NULL), 0);
	/* no devices: a module's, a driver's and a subsystem's uevents */
	assert_int_equal(kudevtab_set(&t, "/module/loop", "module"), 0);
	assert_int_equal(kudevtab_set(&t, "/bus/pci/drivers/virtio-pci", "drivers"), 0);
	assert_int_equal(kudevtab_set(&t, "/class/net", "subsystem"), 0);
	struct strbuf sb = STRBUF_INIT;
	kudevtab_render(&t, &sb);
	/* sorted by path: a path before the paths below it */
	assert_string_equal(sb.buf, "/devices/a pci\n/devices/a!b misc\n/devices/a/x net\n"
				    "/devices/b block\n");
	/* read back, past lines of another shape */
	strbuf_puts(&sb, "garbage\n/devices/c\n/devices/d two words\n/module/loop module\n");
	assert_int_equal(kudevtab_parse(&back, sb.buf, sb.len), 0);
	assert_int_equal(back.n, 4);
	assert_int_equal(kudevtab_set(&back, "/devices/a!b", NULL), 1);
	assert_int_equal(back.n, 3);
	strbuf_reset(&sb);
	kudevtab_render(&back, &sb);
	assert_string_equal(sb.buf, "/devices/a pci\n/devices/a/x net\n/devices/b block\n");
	strbuf_release(&sb);
	kudevtab_release(&t);
	kudevtab_release(&back);
}

static void test_diff(void **state)
{
	(void)state;
	struct kudevtab was = {0}, now = {0};
	const char *w[] = {"/devices/a", "/devices/a/x", "/devices/c", "/devices/e"};
	const char *n[] = {"/devices/a", "/devices/a/y", "/devices/b", "/devices/e"};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(kudevtab_set(&was, w[i], "s"), 1);
		assert_int_equal(kudevtab_set(&now, n[i], "s"), 1);
	}
	struct strbuf sb = STRBUF_INIT;
	kudevtab_diff(&was, &now, collect, &sb);
	assert_string_equal(sb.buf, "remove /devices/a/x s\nadd /devices/a/y s\n"
				    "add /devices/b s\nremove /devices/c s\n");
	strbuf_reset(&sb);
	kudevtab_diff(&now, &now, collect, &sb);
	assert_int_equal(sb.len, 0);
	struct kudevtab none = {0};
	kudevtab_diff(&none, &now, collect, &sb);
	assert_string_equal(sb.buf, "add /devices/a s\nadd /devices/a/y s\nadd /devices/b s\n"
				    "add /devices/e s\n");
	strbuf_release(&sb);
	kudevtab_release(&was);
	kudevtab_release(&now);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_render_parse),
		cmocka_unit_test(test_diff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
