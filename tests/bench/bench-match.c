// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench-match: what loading and matching cost at 10, 1,000 and 10,000 rules.
 *
 * Rules are generated in files of 2,000 (a rule file is at most 1 MiB), in a
 * realistic mix: most name an exact
 * type and signal (some with an object glob), and a few percent are
 * "generic" (only an object glob, or a negated signal) which the index
 * cannot narrow down and every event of their types must try.  The table
 * gives the time to parse the files (krules_parse, summed) and to build the indexed
 * ruleset, then the median cost per event of kruleset_match for events that
 * match some rule and for events whose signal no rule names.  A second
 * table repeats the match figures with no generic rules, which shows the
 * index alone.
 *
 * Usage: bench-match [RUNS]   (default 7; the median run is reported)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ruleset.h"
#include "util.h"
#include "bench-values.h"

#define N_EVENTS 2000

static const char *const types[] = {"general", "storage", "power", "fs", "hotplug"};
static const char *const signals[] = {
	"add",	     "remove",	 "change",  "move",	"online",  "offline", "bind",
	"unbind",    "high",	 "normal",  "critical", "low",	   "full",    "mounted",
	"unmounted", "error",	 "warning", "resume",	"suspend", "plugged", "unplugged",
	"attached",  "detached", "up",	    "down",	"timeout", "reset",   "ready",
};
#define N_SIGNALS  (sizeof(signals) / sizeof(signals[0]))
#define N_OBJECTS  400
#define NO_SIGNAL  "never-named"
#define FILE_RULES 2000

static uint64_t rng = 0x243f6a8885a308d3ull;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

struct spec {
	unsigned type, signal, object;
};

/* One rule file of n rules; generic_pct percent of them are generic.
 * Remembers each specific rule's (type, signal, object) in specs. */
static char *gen_file(size_t n, unsigned generic_pct, struct spec *specs, size_t *n_specs)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_puts(&sb, "rules:\n");
	*n_specs = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned t = rnd(5), s = rnd(N_SIGNALS), o = rnd(N_OBJECTS);
		strbuf_printf(&sb, "  - name: rule-%zu\n    match:\n", i);
		if (rnd(100) < generic_pct) {
			if (rnd(2))
				strbuf_printf(&sb, "      object: \"/org/kernel/devices/dev%u*\"\n",
					      o);
			else
				strbuf_printf(&sb,
					      "      type: %s\n      signal: \"!%s\"\n"
					      "      object: \"/org/kernel/devices/dev%u\"\n",
					      types[t], signals[s], o);
		} else {
			strbuf_printf(&sb, "      type: %s\n", types[t]);
			if (rnd(4) == 0)
				strbuf_printf(&sb, "      signal: [%s, %s]\n", signals[s],
					      signals[rnd(N_SIGNALS)]);
			else
				strbuf_printf(&sb, "      signal: %s\n", signals[s]);
			if (rnd(5) == 0)
				strbuf_printf(&sb,
					      "      object: \"/org/kernel/devices/dev%u/*\"\n", o);
			else
				strbuf_printf(&sb, "      object: /org/kernel/devices/dev%u\n", o);
			if (rnd(10) == 0)
				strbuf_puts(&sb,
					    "      payload:\n        Temperature: \">= 90000\"\n");
			specs[(*n_specs)++] = (struct spec){t, s, o};
		}
		strbuf_printf(&sb,
			      "    run: [/usr/libexec/keventd/handler-%zu, \"${KEVENT_OBJECT}\"]\n",
			      i);
	}
	if (sb.oom) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_steal(&sb);
}

static bool count_match(const struct krule *r, void *userdata)
{
	(void)r;
	(*(size_t *)userdata)++;
	return true;
}

/* Median over runs of the time per event to match all of evs. */
static double match_ns(const struct kruleset *rs, struct kevent **evs, size_t n, unsigned runs,
		       double *matches_per_event)
{
	uint64_t t[64];
	size_t matches = 0;
	for (unsigned r = 0; r < runs; r++) {
		matches = 0;
		uint64_t t0 = now_monotonic_ns();
		/* several passes per run so that one run lasts long enough to time */
		for (int pass = 0; pass < 10; pass++)
			for (size_t i = 0; i < n; i++)
				kruleset_match(rs, evs[i], count_match, &matches);
		t[r] = now_monotonic_ns() - t0;
	}
	qsort(t, runs, sizeof(t[0]), bench_cmp_u64);
	*matches_per_event = (double)matches / (10.0 * (double)n);
	return (double)t[runs / 2] / (10.0 * (double)n);
}

static void free_events(struct kevent **evs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		kevent_free(evs[i]);
}

struct row {
	size_t rules, files;
	double parse_ms, build_ms;
	double hit_ns, hit_matches, miss_ns, miss_matches;
};

static int bench(size_t n_rules, unsigned generic_pct, unsigned runs, struct row *row)
{
	struct spec *specs = calloc(n_rules + 1, sizeof(*specs));
	size_t n_specs = 0;
	if (!specs)
		return -ENOMEM;
	/* A rule file is at most 1 MiB, about 4,000 rules of this shape: the
	 * rules are split into files of FILE_RULES, parsed one after another. */
	size_t n_files = (n_rules + FILE_RULES - 1) / FILE_RULES;
	struct kfile *files[64] = {NULL};
	uint64_t parse_ns = 0;
	int rc = 0;
	for (size_t k = 0; k < n_files && rc == 0; k++) {
		size_t n = n_rules - k * FILE_RULES < FILE_RULES ? n_rules - k * FILE_RULES
								 : FILE_RULES;
		size_t got = 0;
		char *yaml = gen_file(n, generic_pct, specs + n_specs, &got);
		if (!yaml) {
			rc = -ENOMEM;
			break;
		}
		n_specs += got;
		char path[64];
		snprintf(path, sizeof(path), "/usr/lib/keventd/rules.d/%02zu-bench.yaml", k);
		struct kdiags d = {0};
		uint64_t t0 = now_monotonic_ns();
		rc = krules_parse(yaml, strlen(yaml), path, &files[k], &d);
		parse_ns += now_monotonic_ns() - t0;
		free(yaml);
		for (size_t i = 0; i < d.n; i++) {
			struct strbuf sb = STRBUF_INIT;
			kdiag_format(&d.v[i], &sb);
			fprintf(stderr, "%s\n", strbuf_str(&sb));
			strbuf_release(&sb);
		}
		kdiags_free(&d);
	}
	struct kruleset *rs = NULL;
	uint64_t t2 = now_monotonic_ns();
	if (rc == 0)
		rc = kruleset_from_files(files, n_files, &rs);
	uint64_t t3 = now_monotonic_ns();
	for (size_t k = 0; k < n_files; k++)
		kfile_unref(files[k]);
	if (rc < 0) {
		free(specs);
		return rc;
	}

	/* Events that some specific rule names, and events no rule names. */
	static struct kevent *hit[N_EVENTS], *miss[N_EVENTS];
	for (size_t i = 0; i < N_EVENTS; i++) {
		const char *why = NULL;
		char obj[64];
		const struct spec *s = &specs[rnd((unsigned)(n_specs ? n_specs : 1))];
		unsigned t = n_specs ? s->type : rnd(5);
		snprintf(obj, sizeof(obj), "/org/kernel/devices/dev%u", n_specs ? s->object : 0);
		if (kevent_new((int)t, obj, signals[n_specs ? s->signal : 0],
			       "Cpu: 0\nTemperature: 95000", KEVENT_SOURCE_KERNEL, i, i, NULL, 0,
			       &hit[i], &why) < 0 ||
		    kevent_new((int)rnd(5), obj, NO_SIGNAL, "", KEVENT_SOURCE_KERNEL, i, i, NULL, 0,
			       &miss[i], &why) < 0) {
			fprintf(stderr, "bad event: %s\n", why);
			abort();
		}
	}
	*row = (struct row){
		.rules = n_rules,
		.files = n_files,
		.parse_ms = (double)parse_ns / 1e6,
		.build_ms = (double)(t3 - t2) / 1e6,
	};
	row->hit_ns = match_ns(rs, hit, N_EVENTS, runs, &row->hit_matches);
	row->miss_ns = match_ns(rs, miss, N_EVENTS, runs, &row->miss_matches);
	free_events(hit, N_EVENTS);
	free_events(miss, N_EVENTS);
	kruleset_free(rs);
	free(specs);
	return 0;
}

static void table(const char *title, unsigned generic_pct, unsigned runs)
{
	static const size_t sizes[] = {10, 1000, 10000};
	printf("%s\n", title);
	printf("%8s  %5s  %10s  %10s  %14s  %9s  %14s  %9s\n", "rules", "files", "parse ms",
	       "index ms", "match ns/event", "matches", "miss ns/event", "matches");
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct row r;
		int rc = bench(sizes[i], generic_pct, runs, &r);
		if (rc < 0) {
			fprintf(stderr, "bench-match: %s\n", strerror(-rc));
			exit(1);
		}
		printf("%8zu  %5zu  %10.2f  %10.2f  %14.0f  %9.2f  %14.0f  %9.2f\n", r.rules,
		       r.files, r.parse_ms, r.build_ms, r.hit_ns, r.hit_matches, r.miss_ns,
		       r.miss_matches);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	unsigned runs = 7;
	if (argc > 1) {
		int64_t v;
		if (argc > 2 || parse_int64(argv[1], &v) < 0 || v < 1 || v > 64) {
			fprintf(stderr, "Usage: bench-match [RUNS]   (1-64, default 7)\n");
			return 2;
		}
		runs = (unsigned)v;
	}
	printf("bench-match: %d events per set, median of %u runs; \"matches\" is the mean "
	       "number of rules matched per event\n\n",
	       N_EVENTS, runs);
	table("Realistic mix: ~95% of rules name an exact type and signal, ~5% generic "
	      "(object glob only, or a negated signal)",
	      5, runs);
	table("Index only: every rule names an exact type and signal", 0, runs);
	return 0;
}
