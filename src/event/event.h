/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The event model: what every source produces and every rule matches.
 * Limits are those of the UAPI header; kevent_check() says why an event
 * is outside them.
 */
#ifndef KEVENT_EVENT_H
#define KEVENT_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/kevent.h>

/*
 * Every source, once: its enum name and its name, which is also its word
 * in --sources, its column in status and KEVENT_SOURCE.  A new source is
 * its files in sources/, one line here and its row (sources/source-type.h);
 * docs/HACKING.md has the whole recipe.
 */
#define KEVENT_SOURCE_LIST(X)                                                    \
	X(KERNEL, "kernel")                                                      \
	X(UDEV, "udev")                                                          \
	X(THERMAL, "thermal")                                                    \
	X(SOCKET, "socket")                                                      \
	X(ACPI, "acpi")                                                          \
	X(INPUT, "input")                                                        \
	X(FS, "fs")                                                              \
	X(MQTT, "mqtt")	  /* another machine's keventd, through a broker */      \
	X(TRACE, "trace") /* the kernel's tracepoints (keventd.yaml's trace:) */ \
	X(MD, "md")                                                              \
	X(KMSG, "kmsg")		  /* the kernel's log, /dev/kmsg */              \
	X(CONDITION, "condition") /* keventd's own: a condition's change */

enum kevent_source {
#define KEVENT_SOURCE_ENUM(id, name) KEVENT_SOURCE_##id,
	KEVENT_SOURCE_LIST(KEVENT_SOURCE_ENUM)
#undef KEVENT_SOURCE_ENUM
		KEVENT_SOURCE_MAX,
};

#define KEVENT_NTYPES (KEVENT_TYPE_MAX + 1)

/* A "Key: value" line of the payload, pointing into the event's storage. */
struct kevent_prop {
	const char *key;
	const char *value;
};

struct kevent {
	enum kevent_type type;
	enum kevent_source source;
	uint64_t seqnum;
	uint64_t timestamp; /* ns since the epoch */
	const char *object;
	const char *signal;
	const char *payload; /* never NULL, may be "" */
	const struct kevent_prop *props;
	size_t n_props;
	/* udev events only: "NAME=value" strings of the uevent, already
	 * filtered of names a handler must never receive. */
	char *const *uevent_env;
	size_t n_uevent_env;
	/* kernel events only: fetched from kevent.ko's ring after it was
	 * missed, not received as it happened (KEVENT_RECOVERED=1). */
	bool recovered;
	/* what numbered it: kernel events, the instance of kevent.ko (0: a
	 * module without one); mqtt events, the sending keventd's (0: not
	 * said); the others, the keventd that accepted it (kinstance_id(),
	 * set by the daemon, kept in the journal). */
	uint64_t instance;
	/* mqtt events only: the host name of the machine it happened on
	 * (KEVENT_HOST); its own allocation, freed with the event */
	char *host;
	/* udev events only: made by keventd from the devices present
	 * (keventctl trigger), not sent by the kernel (KEVENT_SYNTHETIC=1). */
	bool synthetic;
	/* any source: read back from keventd's journal at start-up, an event
	 * accepted before keventd stopped or died and not finished then
	 * (KEVENT_REDELIVERED=1). */
	bool redelivered;
	/* sent through the control socket with a source other than its own
	 * (keventctl test --run, replay): keventd's, never told to the source
	 * it names, which did not number it. */
	bool injected;
	/* keventctl test --run: a trial of its rules' handlers
	 * (KEVENT_TEST=1). */
	bool test;
	/* where the daemon's journal holds it (0: nowhere); a copy has none */
	uint64_t journal_ref;
	/* the identities of the rules its journal record names (journal-rec.h:
	 * a rule's kjrec_rule_id(), n_journal_ids of them), its own allocation;
	 * NULL for an event whose record names none (an older keventd's), whose
	 * done bits are places in its run list.  A copy has none. */
	uint32_t *journal_ids;
	uint8_t n_journal_ids;
	/* the journal's done bits (journal-rec.h): the runs of its run list
	 * had before a restart, skipped when it is handled again */
	uint32_t journal_done;
};

const char *kevent_type_name(enum kevent_type t);
/* Returns the type for a name ("power") or a number ("2"), or -1. */
int kevent_type_from_name(const char *s);
const char *kevent_source_name(enum kevent_source s);
/* Every source's name, in KEVENT_SOURCE_LIST's order, separated by ", ":
 * for help texts and errors, which then never miss a source. */
const char *kevent_source_names(void);
int kevent_source_from_name(const char *s);

bool kevent_signal_char(char c);
bool kevent_signal_valid(const char *s);

/* A payload property's name is [A-Za-z0-9_.-]+: what kevent_parse_props()
 * reads as the key of a "Key: value" line, and what a rule may test. */
bool kevent_prop_key_char(char c);
bool kevent_prop_key_valid(const char *s);

/*
 * Checks the fields against the limits of keventd(8).  Returns 0, or -EINVAL with *why
 * set to a static description of the first problem.
 */
int kevent_check(int type, const char *object, const char *signal, const char *payload,
		 const char **why);

/*
 * Makes an event, checked and with its payload parsed into properties.
 * uevent_env may be NULL; its entries are filtered (see kevent_env_name_allowed).
 * Returns 0, -EINVAL (with *why) or -ENOMEM.  Free with kevent_free().
 */
int kevent_new(int type, const char *object, const char *signal, const char *payload,
	       enum kevent_source source, uint64_t seqnum, uint64_t timestamp,
	       char *const *uevent_env, size_t n_uevent_env, struct kevent **out, const char **why);
void kevent_free(struct kevent *ev);
/* A host name as an event may carry: 1 to KEVENT_HOST_MAX bytes of
 * [A-Za-z0-9._-], not starting with '-' or '.'. */
#define KEVENT_HOST_MAX 253
bool kevent_host_valid(const char *s);
/* Gives ev the host name host (copied).  0, -EINVAL (with *why), -ENOMEM. */
int kevent_set_host(struct kevent *ev, const char *host, const char **why);
/* A copy of ev with every field, its flags and host included: what a
 * stage that keeps an event past its handling (debounce) holds.  0,
 * -EINVAL or -ENOMEM.  When a field is added to struct kevent, it is
 * copied here. */
int kevent_dup(const struct kevent *ev, struct kevent **out);
static inline void kevent_freep(struct kevent **ev)
{
	kevent_free(*ev);
}

/* Finds a property by name, ignoring case; NULL when absent. */
const char *kevent_prop(const struct kevent *ev, const char *key);

/*
 * Parses "Key: value" lines.  A key (kevent_prop_key_valid) is directly
 * followed by ':'; the value has surrounding blanks removed.  Other lines
 * are ignored; for a key given twice the first wins.  buf is modified in place (NULs are
 * written) and props must have room for count_lines(buf) entries.
 */
size_t kevent_parse_props(char *buf, struct kevent_prop *props, size_t max);

/* Whether a uevent variable may be handed to a handler: a valid name, and
 * none of PATH, HOME, IFS, SHELL, ENV, BASH_ENV, GLIBC_TUNABLES, GCONV_PATH,
 * LOCPATH, NLSPATH, HOSTALIASES, RESOLV_HOST_CONF, SHELLOPTS, BASHOPTS, PS4,
 * LD_*, KEVENT_*, PYTHON*, PERL5*, RUBY*. */
bool kevent_env_name_allowed(const char *name, size_t len);

#endif
