// SPDX-License-Identifier: GPL-2.0-or-later
/* The thermal source's pieces: trip message decoding, and the zone state
 * that maps crossings to events, against a fake /sys/class/thermal. */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/thermal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "thermal.h"
#include "../nlbuild.h"

#define FAMILY 0x17

static void trip_msg(struct msg *m, int cmd, uint32_t zone, uint32_t trip, int32_t temp)
{
	nl_begin(m, FAMILY, cmd);
	nl_put_u32(m, THERMAL_GENL_ATTR_TZ_ID, zone);
	nl_put_u32(m, THERMAL_GENL_ATTR_TZ_TRIP_ID, trip);
	nl_put_u32(m, THERMAL_GENL_ATTR_TZ_TEMP, (uint32_t)temp);
}

static void test_decode(void **state)
{
	(void)state;
	struct msg m;
	struct kthermal_msg t;
	const char *why = NULL;

	trip_msg(&m, THERMAL_GENL_EVENT_TZ_TRIP_UP, 3, 1, 95000);
	assert_int_equal(kthermal_decode(m.buf, m.len, FAMILY, &t, &why), 0);
	assert_int_equal(t.kind, KTHERMAL_TRIP_UP);
	assert_int_equal(t.zone, 3);
	assert_int_equal(t.trip, 1);
	assert_true(t.has_temp);
	assert_int_equal(t.temp, 95000);

	trip_msg(&m, THERMAL_GENL_EVENT_TZ_TRIP_DOWN, 0, 0, -5000);
	assert_int_equal(kthermal_decode(m.buf, m.len, FAMILY, &t, &why), 0);
	assert_int_equal(t.kind, KTHERMAL_TRIP_DOWN);
	assert_int_equal(t.temp, -5000);

	nl_begin(&m, FAMILY, THERMAL_GENL_EVENT_CDEV_STATE_UPDATE);
	assert_int_equal(kthermal_decode(m.buf, m.len, FAMILY, &t, &why), 0);
	assert_int_equal(t.kind, KTHERMAL_OTHER);

	/* without a temperature: still a trip, the state reads sysfs */
	nl_begin(&m, FAMILY, THERMAL_GENL_EVENT_TZ_TRIP_UP);
	nl_put_u32(&m, THERMAL_GENL_ATTR_TZ_ID, 0);
	nl_put_u32(&m, THERMAL_GENL_ATTR_TZ_TRIP_ID, 0);
	assert_int_equal(kthermal_decode(m.buf, m.len, FAMILY, &t, &why), 0);
	assert_false(t.has_temp);
}

static void test_decode_rejects(void **state)
{
	(void)state;
	struct msg m;
	struct kthermal_msg t;
	const char *why = NULL;

	trip_msg(&m, THERMAL_GENL_EVENT_TZ_TRIP_UP, 0, 0, 1);
	assert_int_equal(kthermal_decode(m.buf, 8, FAMILY, &t, &why), -EBADMSG);
	assert_int_equal(kthermal_decode(m.buf, m.len, FAMILY + 1, &t, &why), -EINVAL);

	nl_begin(&m, FAMILY, THERMAL_GENL_EVENT_TZ_TRIP_UP);
	nl_put_u32(&m, THERMAL_GENL_ATTR_TZ_ID, 0);
	assert_int_equal(kthermal_decode(m.buf, m.len, FAMILY, &t, &why), -EINVAL);
	assert_non_null(strstr(why, "trip id"));

	trip_msg(&m, THERMAL_GENL_EVENT_TZ_TRIP_UP, 0, 0, 1);
	nl_put_u32(&m, THERMAL_GENL_ATTR_TZ_ID, 1);
	assert_int_equal(kthermal_decode(m.buf, m.len, FAMILY, &t, &why), -EINVAL);
	assert_non_null(strstr(why, "duplicated"));

	nl_begin(&m, FAMILY, THERMAL_GENL_EVENT_TZ_TRIP_UP);
	nl_put(&m, THERMAL_GENL_ATTR_TZ_ID, "\1\0", 2);
	nl_put_u32(&m, THERMAL_GENL_ATTR_TZ_TRIP_ID, 0);
	assert_int_equal(kthermal_decode(m.buf, m.len, FAMILY, &t, &why), -EINVAL);

	trip_msg(&m, THERMAL_GENL_EVENT_TZ_TRIP_UP, KTHERMAL_MAX_ZONES, 0, 1);
	assert_int_equal(kthermal_decode(m.buf, m.len, FAMILY, &t, &why), -EINVAL);

	trip_msg(&m, THERMAL_GENL_EVENT_TZ_TRIP_UP, 0, 0, 1);
	((struct nlattr *)(m.buf + NLMSG_HDRLEN + GENL_HDRLEN))->nla_len = 300;
	assert_int_equal(kthermal_decode(m.buf, m.len, FAMILY, &t, &why), -EBADMSG);
}

static char *fake_sysfs(void)
{
	char *root = tu_mkdtemp();
	char *z0 = tu_subdir(root, "thermal_zone0");
	tu_write(z0, "type", "acpitz\n", 0644);
	tu_write(z0, "temp", "95000\n", 0644);
	tu_write(z0, "trip_point_0_temp", "90000\n", 0644);
	tu_write(z0, "trip_point_0_type", "hot\n", 0644);
	tu_write(z0, "trip_point_1_temp", "100000\n", 0644);
	tu_write(z0, "trip_point_1_type", "critical\n", 0644);
	char *z1 = tu_subdir(root, "thermal_zone1");
	tu_write(z1, "type", "iwlwifi_1\n", 0644);
	tu_write(z1, "temp", "30000\n", 0644);
	tu_write(z1, "trip_point_0_temp", "60000\n", 0644);
	tu_write(z1, "trip_point_0_type", "passive\n", 0644);
	free(z0);
	free(z1);
	return root;
}

static void expect(struct kevent *ev, const char *object, const char *signal, const char *zone,
		   const char *trip_type, const char *temp)
{
	assert_non_null(ev);
	assert_int_equal(ev->type, KEVENT_POWER);
	assert_int_equal(ev->source, KEVENT_SOURCE_THERMAL);
	assert_string_equal(ev->object, object);
	assert_string_equal(ev->signal, signal);
	assert_string_equal(kevent_prop(ev, "Zone"), zone);
	assert_string_equal(kevent_prop(ev, "TripType"), trip_type);
	assert_string_equal(kevent_prop(ev, "Temperature"), temp);
	kevent_free(ev);
}

static void test_state(void **state)
{
	(void)state;
	char *root = fake_sysfs();
	struct kthermal *t = NULL;
	assert_int_equal(kthermal_new(root, &t), 0);

	/* start-up: zone 0 is already above its hot trip */
	struct kevent *evs[8];
	assert_int_equal(kthermal_scan(t, 1, evs, 8), 1);
	assert_string_equal(kevent_prop(evs[0], "ZoneType"), "acpitz");
	expect(evs[0], KTHERMAL_CPU_OBJECT, "high", "0", "hot", "95000");
	/* a second scan finds nothing new */
	assert_int_equal(kthermal_scan(t, 1, evs, 8), 0);

	struct kthermal_msg m = {KTHERMAL_TRIP_UP, 0, 0, 95500, true};
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kthermal_apply(t, &m, 2, &ev, &why), 0);
	assert_null(ev); /* known crossed since start-up */

	m = (struct kthermal_msg){KTHERMAL_TRIP_UP, 0, 1, 100500, true};
	assert_int_equal(kthermal_apply(t, &m, 3, &ev, &why), 0);
	expect(ev, KTHERMAL_CPU_OBJECT, "critical", "0", "critical", "100500");

	m = (struct kthermal_msg){KTHERMAL_TRIP_DOWN, 0, 1, 95000, true};
	assert_int_equal(kthermal_apply(t, &m, 4, &ev, &why), 0);
	assert_null(ev); /* still above trip 0 */

	m = (struct kthermal_msg){KTHERMAL_TRIP_DOWN, 0, 0, 80000, true};
	assert_int_equal(kthermal_apply(t, &m, 5, &ev, &why), 0);
	expect(ev, KTHERMAL_CPU_OBJECT, "normal", "0", "hot", "80000");

	assert_int_equal(kthermal_apply(t, &m, 6, &ev, &why), 0);
	assert_null(ev); /* normal only once */

	/* a zone that is not a CPU's, temperature from sysfs */
	m = (struct kthermal_msg){KTHERMAL_TRIP_UP, 1, 0, 0, false};
	assert_int_equal(kthermal_apply(t, &m, 7, &ev, &why), 0);
	expect(ev, KTHERMAL_ZONE_OBJECT "1", "high", "1", "passive", "30000");

	kthermal_free(t);
	tu_rm_rf(root);
	free(root);
}

/* What status says of the zones: counted, named in order, and how many
 * are above a trip now (known from the start-up scan). */
static void test_describe(void **state)
{
	(void)state;
	struct {
		bool scan;
		const char *want;
	} cases[] = {
		{false, "2 zones (acpitz, iwlwifi_1), 3 trip points"},
		{true, "2 zones (acpitz, iwlwifi_1), 3 trip points; 1 above a trip now"},
	};
	char *root = fake_sysfs();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kthermal *t = NULL;
		assert_int_equal(kthermal_new(root, &t), 0);
		struct kevent *evs[8];
		if (cases[i].scan)
			for (size_t n = kthermal_scan(t, 1, evs, 8); n > 0; n--)
				kevent_free(evs[n - 1]);
		struct strbuf sb = STRBUF_INIT;
		kthermal_describe(t, &sb);
		assert_string_equal(strbuf_str(&sb), cases[i].want);
		strbuf_release(&sb);
		kthermal_free(t);
	}
	struct kthermal *t = NULL;
	assert_int_equal(kthermal_new("/nonexistent", &t), 0);
	struct strbuf sb = STRBUF_INIT;
	kthermal_describe(t, &sb);
	assert_string_equal(strbuf_str(&sb), "no thermal zone under /nonexistent");
	strbuf_release(&sb);
	kthermal_free(t);
	tu_rm_rf(root);
	free(root);
}

/* A zone above a trip when keventd stopped, cool at the next start: its
 * normal, flagged synthetic; a zone still hot: no second high; a start
 * after that: nothing. */
static void test_memory(void **state)
{
	(void)state;
	char *root = fake_sysfs();
	_cleanup_free_ char *dir = tu_mkdtemp();
	_cleanup_close_ int dfd = tu_dirfd(dir);
	struct kthermal *t = NULL;
	struct kevent *evs[8];
	assert_int_equal(kthermal_new(root, &t), 0);
	assert_int_equal(kthermal_remember(t, dfd, "thermal.zones"), 0); /* none yet */
	assert_int_equal(kthermal_scan(t, 1, evs, 8), 1);
	expect(evs[0], KTHERMAL_CPU_OBJECT, "high", "0", "hot", "95000");
	struct kthermal_msg m = {KTHERMAL_TRIP_UP, 1, 0, 61000, true};
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kthermal_apply(t, &m, 2, &ev, &why), 0);
	expect(ev, KTHERMAL_ZONE_OBJECT "1", "high", "1", "passive", "61000");
	kthermal_free(t); /* keventd stops with zones 0 and 1 hot */

	/* zone 0 cooled meanwhile; zone 1 (30000 in sysfs, under its trip) too */
	_cleanup_free_ char *z0 = tu_printf("%s/thermal_zone0", root);
	tu_write(z0, "temp", "50000\n", 0644);
	assert_int_equal(kthermal_new(root, &t), 0);
	assert_int_equal(kthermal_remember(t, dfd, "thermal.zones"), 0);
	assert_int_equal(kthermal_scan(t, 3, evs, 8), 2);
	bool synthetic = evs[0]->synthetic && evs[1]->synthetic;
	if (strcmp(evs[0]->object, KTHERMAL_CPU_OBJECT) != 0) {
		struct kevent *x = evs[0];
		evs[0] = evs[1];
		evs[1] = x;
	}
	expect(evs[0], KTHERMAL_CPU_OBJECT, "normal", "0", "hot", "50000");
	expect(evs[1], KTHERMAL_ZONE_OBJECT "1", "normal", "1", "passive", "30000");
	assert_true(synthetic);
	kthermal_free(t);

	/* hot again, and still hot at the next start: one high only */
	tu_write(z0, "temp", "95000\n", 0644);
	assert_int_equal(kthermal_new(root, &t), 0);
	assert_int_equal(kthermal_remember(t, dfd, "thermal.zones"), 0);
	assert_int_equal(kthermal_scan(t, 4, evs, 8), 1);
	assert_false(evs[0]->synthetic);
	expect(evs[0], KTHERMAL_CPU_OBJECT, "high", "0", "hot", "95000");
	kthermal_free(t);
	assert_int_equal(kthermal_new(root, &t), 0);
	assert_int_equal(kthermal_remember(t, dfd, "thermal.zones"), 0);
	assert_int_equal(kthermal_scan(t, 5, evs, 8), 0);
	kthermal_free(t);
	tu_rm_rf(dir);
	tu_rm_rf(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode), cmocka_unit_test(test_decode_rejects),
		cmocka_unit_test(test_state),  cmocka_unit_test(test_describe),
		cmocka_unit_test(test_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
