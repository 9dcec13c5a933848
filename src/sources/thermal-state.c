// SPDX-License-Identifier: GPL-2.0-or-later
/* Thermal zones: which trips are crossed, and the events that follow. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "statedir.h"
#include "thermal.h"
#include "util.h"

#define TEMP_INVALID (-274000)

struct kthermal {
	char *root;
	int memory_dir; /* where the zones above a trip are kept across restarts */
	char *memory;	/* the file's name there; NULL: kept nowhere */
	uint64_t crossed[KTHERMAL_MAX_ZONES]; /* bit per trip */
	uint64_t was[KTHERMAL_MAX_ZONES];     /* crossed when the last keventd ended */
	uint64_t seqnum;
};

int kthermal_new(const char *root, struct kthermal **out)
{
	struct kthermal *t = calloc(1, sizeof(*t));
	if (!t || !(t->root = strdup(root))) {
		free(t);
		return -ENOMEM;
	}
	t->memory_dir = -1;
	*out = t;
	return 0;
}

void kthermal_free(struct kthermal *t)
{
	if (!t)
		return;
	free(t->root);
	free(t->memory);
	if (t->memory_dir >= 0)
		close(t->memory_dir);
	free(t);
}

int kthermal_remember(struct kthermal *t, int dirfd, const char *name)
{
	free(TAKE_PTR(t->memory));
	if (t->memory_dir >= 0)
		close(t->memory_dir);
	if ((t->memory_dir = fcntl(dirfd, F_DUPFD_CLOEXEC, 3)) < 0)
		return -errno;
	if (!(t->memory = strdup(name)))
		return -ENOMEM;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int rc = kstatedir_read(dirfd, name, 64 * 1024, &text, &len);
	if (rc < 0)
		return rc == -ENOENT ? 0 : rc;
	unsigned zone;
	uint64_t mask;
	int n = 0;
	for (const char *p = text; sscanf(p, "%u %" SCNx64 "\n%n", &zone, &mask, &n) == 2; p += n)
		if (zone < KTHERMAL_MAX_ZONES)
			t->was[zone] = mask;
	return 0;
}

/* Writes the zones above a trip down (a new file, renamed over the old). */
static void save(const struct kthermal *t)
{
	if (!t->memory)
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	for (uint32_t zone = 0; zone < KTHERMAL_MAX_ZONES; zone++)
		if (t->crossed[zone] | t->was[zone])
			strbuf_printf(&sb, "%" PRIu32 " %" PRIx64 "\n", zone,
				      t->crossed[zone] | t->was[zone]);
	if (!sb.oom)
		(void)kstatedir_replace(t->memory_dir, t->memory, strbuf_str(&sb), sb.len, 0644);
}

/* Reads a one-line sysfs attribute of zone into buf (newline removed). */
static int read_attr(const struct kthermal *t, uint32_t zone, const char *attr, char *buf,
		     size_t size)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/thermal_zone%" PRIu32 "/%s", t->root, zone, attr);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	bool ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int read_int(const struct kthermal *t, uint32_t zone, const char *attr, int64_t *v)
{
	char buf[64];
	int rc = read_attr(t, zone, attr, buf, sizeof(buf));
	return rc < 0 ? rc : parse_int64(buf, v);
}

static void trip_type(const struct kthermal *t, uint32_t zone, uint32_t trip, char *buf,
		      size_t size)
{
	char attr[64];
	snprintf(attr, sizeof(attr), "trip_point_%" PRIu32 "_type", trip);
	if (read_attr(t, zone, attr, buf, size) < 0 || !buf[0])
		snprintf(buf, size, "unknown");
}

static bool cpu_zone(const char *type)
{
	return strcmp(type, "x86_pkg_temp") == 0 || strncmp(type, "cpu", 3) == 0 ||
	       strcmp(type, "acpitz") == 0;
}

static int make_event(struct kthermal *t, uint32_t zone, uint32_t trip, const char *signal,
		      const char *ttype, int64_t temp, uint64_t now, struct kevent **out,
		      const char **why)
{
	char ztype[64], object[128];
	struct strbuf payload = STRBUF_INIT;
	if (read_attr(t, zone, "type", ztype, sizeof(ztype)) < 0 || !ztype[0])
		snprintf(ztype, sizeof(ztype), "unknown");
	for (char *c = ztype; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			*c = '?';
	if (cpu_zone(ztype))
		snprintf(object, sizeof(object), "%s", KTHERMAL_CPU_OBJECT);
	else
		snprintf(object, sizeof(object), "%s%" PRIu32, KTHERMAL_ZONE_OBJECT, zone);
	strbuf_printf(&payload,
		      "Zone: %" PRIu32 "\nZoneType: %s\nTrip: %" PRIu32
		      "\nTripType: %s\nTemperature: %" PRId64 "\n",
		      zone, ztype, trip, ttype, temp);
	int rc = payload.oom
			 ? -ENOMEM
			 : kevent_new(KEVENT_POWER, object, signal, payload.buf,
				      KEVENT_SOURCE_THERMAL, ++t->seqnum, now, NULL, 0, out, why);
	strbuf_release(&payload);
	return rc;
}

int kthermal_apply(struct kthermal *t, const struct kthermal_msg *m, uint64_t now,
		   struct kevent **out, const char **why)
{
	*out = NULL;
	if (m->kind == KTHERMAL_OTHER || m->zone >= KTHERMAL_MAX_ZONES ||
	    m->trip >= KTHERMAL_MAX_TRIPS)
		return 0;
	uint64_t bit = 1ull << m->trip;
	int64_t temp = m->temp;
	if (!m->has_temp && read_int(t, m->zone, "temp", &temp) < 0)
		temp = 0;
	char ttype[32];
	trip_type(t, m->zone, m->trip, ttype, sizeof(ttype));
	if (m->kind == KTHERMAL_TRIP_UP) {
		if (t->crossed[m->zone] & bit)
			return 0; /* known already (seen at start-up, say) */
		t->crossed[m->zone] |= bit;
		save(t);
		return make_event(t, m->zone, m->trip,
				  strcmp(ttype, "critical") == 0 ? "critical" : "high", ttype, temp,
				  now, out, why);
	}
	if (!(t->crossed[m->zone] & bit))
		return 0; /* never seen going up: no high to end */
	t->crossed[m->zone] &= ~bit;
	save(t);
	if (t->crossed[m->zone])
		return 0; /* still above another trip */
	return make_event(t, m->zone, m->trip, "normal", ttype, temp, now, out, why);
}

size_t kthermal_scan(struct kthermal *t, uint64_t now, struct kevent **out, size_t max)
{
	size_t n = 0;
	DIR *d = opendir(t->root);
	if (!d)
		return 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < max) {
		unsigned zone;
		char tail;
		if (sscanf(de->d_name, "thermal_zone%u%c", &zone, &tail) != 1 ||
		    zone >= KTHERMAL_MAX_ZONES)
			continue;
		int64_t temp;
		if (read_int(t, zone, "temp", &temp) < 0)
			continue;
		uint64_t crossed = 0;
		int best = -1;
		int64_t best_temp = TEMP_INVALID;
		bool critical = false;
		for (uint32_t trip = 0; trip < KTHERMAL_MAX_TRIPS; trip++) {
			char attr[64], ttype[32];
			int64_t tt;
			snprintf(attr, sizeof(attr), "trip_point_%" PRIu32 "_temp", trip);
			if (read_int(t, zone, attr, &tt) < 0)
				break;
			if (tt <= TEMP_INVALID || temp < tt)
				continue;
			crossed |= 1ull << trip;
			trip_type(t, zone, trip, ttype, sizeof(ttype));
			critical |= strcmp(ttype, "critical") == 0;
			if (tt > best_temp) {
				best_temp = tt;
				best = (int)trip;
			}
		}
		uint64_t was = t->was[zone];
		t->was[zone] = 0;
		if (!crossed && was && !t->crossed[zone]) {
			/* above a trip when the last keventd ended, cool now: the
			 * normal it missed, said synthetic */
			char ttype[32];
			uint32_t trip = (uint32_t)(63 - __builtin_clzll(was));
			trip_type(t, zone, trip, ttype, sizeof(ttype));
			const char *why;
			if (make_event(t, zone, trip, "normal", ttype, temp, now, &out[n], &why) ==
			    0)
				out[n++]->synthetic = true;
			continue;
		}
		if (!crossed || ((t->crossed[zone] | was) & crossed) == crossed) {
			/* known already, by this keventd or the last one */
			t->crossed[zone] |= crossed;
			continue;
		}
		t->crossed[zone] |= crossed;
		char ttype[32];
		trip_type(t, zone, (uint32_t)best, ttype, sizeof(ttype));
		const char *why;
		if (make_event(t, zone, (uint32_t)best, critical ? "critical" : "high", ttype, temp,
			       now, &out[n], &why) == 0)
			n++;
	}
	closedir(d);
	save(t);
	return n;
}

void kthermal_describe(const struct kthermal *t, struct strbuf *out)
{
	uint64_t present[KTHERMAL_MAX_ZONES / 64] = {0}; /* in order, whatever readdir's */
	DIR *d = opendir(t->root);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		unsigned zone;
		char tail;
		if (sscanf(de->d_name, "thermal_zone%u%c", &zone, &tail) == 1 &&
		    zone < KTHERMAL_MAX_ZONES)
			present[zone / 64] |= 1ull << (zone % 64);
	}
	if (d)
		closedir(d);
	size_t zones = 0, trips = 0, hot = 0, shown = 0;
	_cleanup_strbuf_ struct strbuf types = STRBUF_INIT;
	for (uint32_t zone = 0; zone < KTHERMAL_MAX_ZONES; zone++) {
		if (!(present[zone / 64] & (1ull << (zone % 64))))
			continue;
		zones++;
		hot += t->crossed[zone] != 0;
		for (uint32_t trip = 0; trip < KTHERMAL_MAX_TRIPS; trip++) {
			char attr[64];
			int64_t tt;
			snprintf(attr, sizeof(attr), "trip_point_%" PRIu32 "_temp", trip);
			if (read_int(t, zone, attr, &tt) < 0)
				break;
			trips++;
		}
		char type[32];
		if (shown < 4 && read_attr(t, zone, "type", type, sizeof(type)) == 0) {
			strbuf_printf(&types, "%s%s", shown ? ", " : "", type);
			shown++;
		}
	}
	if (!zones) {
		strbuf_printf(out, "no thermal zone under %s", t->root);
		return;
	}
	strbuf_printf(out, "%zu zone%s (%s%s), %zu trip point%s", zones, zones == 1 ? "" : "s",
		      strbuf_str(&types), zones > shown ? ", ..." : "", trips,
		      trips == 1 ? "" : "s");
	if (hot)
		strbuf_printf(out, "; %zu above a trip now", hot);
}
