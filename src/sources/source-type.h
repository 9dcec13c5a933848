/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A source's type: one row per source of KEVENT_SOURCE_LIST, defined
 * beside the source's own code (ksource_type_fs in source-fs.c...), that
 * carries its whole life in keventd: how it is made, its section of
 * keventd.yaml (keventd.yaml(5): its name is the source's), the kernel's
 * check of that section (keventd's start, keventctl verify --config), and
 * what a reload that changed the section does to the running source.
 * ksource_types[] holds the rows, indexed by the source's kind; the
 * daemon, the options and keventctl walk it and know no source by name.
 * Adding a source is its files in sources/, a line in KEVENT_SOURCE_LIST
 * and its row here (docs/HACKING.md).
 */
#ifndef KEVENT_SOURCE_TYPE_H
#define KEVENT_SOURCE_TYPE_H

#include <stdbool.h>
#include <stddef.h>

#include "event.h"
#include "source-udev.h"
#include "source.h"

struct kdiags;
struct kstatedir;
struct strbuf;
struct ynode;

/* What a source is made from. */
struct ksource_args {
	const struct ksink *sink;
	/* its section of keventd.yaml, parsed (the row's defaults when the
	 * file has none); NULL: the row has no section */
	const void *section;
	enum kudev_monitor udev_monitor; /* --udev-monitor: udev, input */
	const char *thermal_sysfs;	 /* NULL: /sys/class/thermal (tests set it) */
	/* a source that another part of keventd makes and owns (the control
	 * socket's, the broker's subscriptions): its row takes it as it is */
	struct ksource *made;
};

struct ksource_type {
	enum kevent_source kind;
	/* Makes the source: 0 with *out (NULL: nothing to read, said why), or
	 * -errno. */
	int (*make)(const struct ksource_args *a, struct ksource **out);

	/* Its section of keventd.yaml, named as the source; section_size 0:
	 * none, and the hooks below are NULL.  defaults: the section of a
	 * file that has none, which init copies. */
	size_t section_size;
	const void *defaults;
	/* Replaces *section with the value v of the file path; each mistake
	 * is a diagnostic in diags, and leaves *section as it was.  0,
	 * -EINVAL (a mistake) or -ENOMEM. */
	int (*parse)(void *section, const struct ynode *v, const char *path, struct kdiags *diags);
	bool (*equal)(const void *a, const void *b);
	void (*release)(void *section); /* NULL: nothing to free */
	/* May be NULL.  Whether section leaves the source nothing to read:
	 * it is then not made (nor given a share of the queue), until a
	 * reload gives it something (the trace source without entries). */
	bool (*idle)(const void *section);
	/* May be NULL.  Whether this kernel takes section (keventd's start,
	 * a reload, keventctl verify --config): each refusal a diagnostic at
	 * its place.  0 or -ENOMEM. */
	int (*check)(const void *section, struct kdiags *diags);
	/* May be NULL: a reload that changed the section makes the source
	 * again (when --sources has it), and says so with remade().
	 * Otherwise a reload applies the changed section to the running
	 * source s (NULL: none runs), which keeps it from then on, and says
	 * in said what it did (nothing: nothing worth a line). */
	void (*configure)(struct ksource *s, const void *section, struct strbuf *said);
	/* What a reload that made the source again with section says. */
	void (*remade)(const void *section, struct strbuf *said);
	/* May be NULL: the source cannot say again at a start what is
	 * abnormal (kmsg, trace, the socket...).  Otherwise whether it will
	 * report every abnormal state it finds at this start, state its
	 * state directory (NULL: none), asked before it is made: the
	 * condition table's start-up check clears the rows it set that it
	 * does not report again (keventd.rules(5), CONDITIONS). */
	bool (*reports_at_start)(const struct kstatedir *state);
};

/* Every row, by kind: none is NULL. */
extern const struct ksource_type *const ksource_types[KEVENT_SOURCE_MAX];

/* The rows, each beside its source's code. */
extern const struct ksource_type ksource_type_kernel, ksource_type_udev, ksource_type_thermal,
	ksource_type_socket, ksource_type_acpi, ksource_type_input, ksource_type_fs,
	ksource_type_mqtt, ksource_type_trace, ksource_type_md, ksource_type_kmsg,
	ksource_type_condition;

/* reports_at_start of a source that reports its state at every start
 * (inline: a row's file and the table's would otherwise use each other). */
static inline bool ksource_reports_always(const struct kstatedir *state)
{
	(void)state;
	return true;
}

/* The row of the source whose section is called name, or NULL. */
const struct ksource_type *ksource_type_of_section(const char *name);

/* keventd.yaml's sections of the sources, as read: NULL until the file
 * gives one (its defaults hold until then). */
struct ksource_sections {
	void *v[KEVENT_SOURCE_MAX];
};

/* Parses v, t's section in the file path, into s.  0, -EINVAL (a
 * mistake, in diags) or -ENOMEM. */
int ksource_sections_parse(struct ksource_sections *s, const struct ksource_type *t,
			   const struct ynode *v, const char *path, struct kdiags *diags);
/* The section of kind: the one read, else its row's defaults (NULL: the
 * row has no section).  s may be NULL: the defaults. */
const void *ksource_section(const struct ksource_sections *s, enum kevent_source kind);
/* The kernel's checks of the sections of the sources in mask (a bit per
 * kind).  0 or -ENOMEM. */
int ksource_sections_check(const struct ksource_sections *s, unsigned mask, struct kdiags *diags);
/* Frees one section of kind (NULL is fine), or all of s. */
void ksource_section_free(enum kevent_source kind, void *section);
void ksource_sections_release(struct ksource_sections *s);

#endif
