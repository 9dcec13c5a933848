/* SPDX-License-Identifier: GPL-2.0-or-later */
/* keventctl's commands, one file each. */
#ifndef KEVENTCTL_H
#define KEVENTCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Exit statuses shared by every command. */
#define EXIT_USAGE 2
/* send --wait: keventd stopped or went away; its journal keeps the event */
#define CTL_EXIT_REDELIVERED 3

struct kuserdirs;
struct ctl {
	const char *control; /* control socket path */
	/* --user: the user instance's places (userdirs.h); NULL: the
	 * system instance's */
	const struct kuserdirs *user;
	bool no_pager; /* --no-pager */
};
/* On a terminal, the rest of the output through a pager (ctl-pager.c),
 * unless --no-pager; the reading commands call it once they have
 * something to show. */
void ctl_pager(const struct ctl *c);
/* The rule directories an offline command reads when it is given none:
 * the user instance's with --user, else the system's; into dirs (room for
 * KUSERDIRS_MAX_RULE_DIRS), their number returned. */
size_t ctl_default_dirs(const struct ctl *c, const char **dirs);
/* keventd's configuration file when none is named: the user's one with
 * --user. */
const char *ctl_default_config(const struct ctl *c);

int ctl_verify(struct ctl *c, int argc, char **argv);
int ctl_notify(struct ctl *c, int argc, char **argv);
int ctl_cat(struct ctl *c, int argc, char **argv);
int ctl_test(struct ctl *c, int argc, char **argv);
/* test's two halves, for replay --dry-run: loads the rules of dirs
 * (absolute paths; errors in files on stderr), 0 or -errno (said); prints
 * the event and every rule's answer for it, as text or (json) one JSON
 * object on a line; line: the record's line number (replay), 0 for none. */
struct kruleset;
struct kevent;
int ctl_test_load(const char **dirs, size_t n_dirs, struct kruleset **out);
void ctl_test_print(const struct kruleset *rs, const struct kevent *ev, bool json,
		    unsigned long line);
int ctl_send(struct ctl *c, int argc, char **argv);
int ctl_send_batch(struct ctl *c, const char *path, bool verbose);
/* send --wait and test --run, after the request: prints each rule's
 * outcome as keventd tells it, until the last; 0 if every handler exited
 * 0, 1 if any did not (or timeout_ms passed: 0 is no bound),
 * CTL_EXIT_REDELIVERED when keventd stopped first; json: all of it as one
 * JSON object at the end (test --run --json). */
int ctl_wait_replies(int fd, uint64_t timeout_ms, const char *timeout_text, bool json);
/* What send --batch does (ctl-batch.c), for lines of another kind: parse
 * fills f[1..4] (TYPE, OBJECT, SIGNAL, PAYLOAD; valid until the next call)
 * and returns 5, or sets f[0] to "post-as" and fills f[1..5] (SOURCE
 * first) and returns 6; or 0 with *why; strict stops at the first bad
 * line. */
struct ctl_post_source {
	size_t (*parse)(void *userdata, char *line, size_t len, const char *f[6], const char **why);
	void *userdata;
	size_t line_max;
	bool strict;
};
int ctl_post_events(struct ctl *c, const char *path, const struct ctl_post_source *src,
		    bool verbose);
int ctl_record(struct ctl *c, int argc, char **argv);
int ctl_replay(struct ctl *c, int argc, char **argv);
int ctl_monitor(struct ctl *c, int argc, char **argv);
int ctl_reload(struct ctl *c, int argc, char **argv);
int ctl_status(struct ctl *c, int argc, char **argv);
int ctl_events(struct ctl *c, int argc, char **argv);
int ctl_explain(struct ctl *c, int argc, char **argv);
int ctl_trigger(struct ctl *c, int argc, char **argv);
int ctl_conditions(struct ctl *c, int argc, char **argv);
int ctl_ack(struct ctl *c, int argc, char **argv);

/* The control socket (ctl-client.c).  ctl_connect returns an fd or -errno
 * (and says why on stderr). */
int ctl_connect(struct ctl *c);
int ctl_request(int fd, const char *const *fields, size_t n);
/* Connects and sends the request fields: the fd, or -1 (said why on
 * stderr, nothing left open). */
int ctl_open(struct ctl *c, const char *const *fields, size_t n);
/* A whole exchange: ctl_open(), ctl_replies() (the ok's text in
 * *ok_text when given, else dropped), close.  0, or 1 (said). */
int ctl_call(struct ctl *c, const char *const *fields, size_t n,
	     void (*on_data)(const char *text, void *ud), void *ud, char **ok_text);
/* An on_data of ctl_replies(): keventd's text as it is, to stdout. */
void ctl_put_text(const char *text, void *ud);
/* stdout written 64 KiB at a time, for a listing that can be tens of
 * megabytes (a large condition table): called before anything else uses
 * stdout, the pager included. */
void ctl_large_output(void);
/* The PAYLOAD argument of send and test: arg itself, or for "-" standard
 * input, read into *buf (the caller frees it).  0, or EXIT_USAGE (said). */
int ctl_payload_arg(const char *arg, char **buf, const char **payload);
/* Reads replies until "ok" (0) or "err" (1, printed).  Each "data" text
 * goes to on_data.  ok_text, when given, gets the ok's text (malloc'd or
 * NULL); without it, end of stream is a normal end (monitor). */
/* Receives keventd's next message into m, its fields in buf (of
 * KCTL_MSG_MAX + 1 bytes), through signals, until deadline (a
 * now_monotonic_ns() time; 0: none).  1: a message; 0: keventd closed
 * the connection; -ETIMEDOUT; -EBADMSG (said on stderr); or recv()'s
 * -errno. */
struct kctl_msg;
int ctl_recv(int fd, char *buf, uint64_t deadline, struct kctl_msg *m);
int ctl_replies(int fd, void (*on_data)(const char *text, void *ud), void *ud, char **ok_text);

/* ns since the epoch as "2026-12-03 16:20:01.123 CET": local time, or
 * UTC with utc (ctl-time.c). */
void ctl_format_time(uint64_t ns, bool utc, char *buf, size_t size);
/* The value of a time limit, opt (--timeout, -t): whole seconds, or a
 * duration such as 500ms (duration.h), more than 0.  0, or EXIT_USAGE
 * (said). */
int ctl_timeout_arg(const char *opt, const char *arg, uint64_t *ms);
/* Writes keventd's text to f, the times it gives in UTC at the start of
 * a line (events) or after "time: " (explain) in local time, unless
 * utc. */
void ctl_put_times(FILE *f, const char *text, bool utc);

/* Prints "keventctl: " and a message to stderr, returns EXIT_USAGE. */
int ctl_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints one line to f: the text with every control character escaped
 * (strbuf_put_escaped() of util.h), for lines that show text from outside
 * (rule files, events, keventd's answers), then a newline. */
void ctl_print(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* After getopt has printed what is wrong with an option of COMMAND: adds
 * the "Try" line, returns EXIT_USAGE. */
int ctl_option_error(const char *command);
/* Rule files are trust-checked exactly when keventd would: running as root,
 * or with --user (then a file may be root's or the user's own). */
bool ctl_trust(void);

#endif
