// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl send TYPE OBJECT SIGNAL [PAYLOAD|-]: inject an event
 * (--batch FILE: many, see ctl-batch.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "duration.h"
#include "event.h"
#include "proto.h"
#include "util.h"

/* test --run --json: keventd's lines (as send --wait prints them) as one
 * object: {"seqnum", "runs": [{"rule", "outcome", "stderr": [...]}],
 * "notes": [...], "failed", "result"}. */
struct wait_json {
	struct strbuf runs, notes;
	char seqnum[24];
	size_t n_runs, n_notes;
	bool in_run; /* the last run's "stderr":[ is open */
};

/* Whether text starts with one of the outcomes keventd tells. */
static bool is_outcome(const char *text)
{
	static const char *const words[] = {"matched", "queued",       "running",
					    "exited",  "killed",       "failed to start",
					    "dry-run", "rate-limited", "not run"};
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strncmp(text, words[i], strlen(words[i])) == 0)
			return true;
	return false;
}

static void json_line(struct wait_json *j, const char *text)
{
	const char *sep = text;
	if (strncmp(text, "event seqnum ", 13) == 0) {
		snprintf(j->seqnum, sizeof(j->seqnum), "%s", text + 13);
		return;
	}
	if (j->in_run && strncmp(text, "  stderr: ", 10) == 0) {
		strbuf_puts(&j->runs, j->runs.buf[j->runs.len - 1] == '[' ? "" : ",");
		strbuf_json(&j->runs, text + 10);
		return;
	}
	/* "RULE: OUTCOME": a rule's name may hold ": " too */
	while ((sep = strstr(sep, ": ")) && !is_outcome(sep + 2))
		sep += 2;
	if (!sep) {
		strbuf_puts(&j->notes, j->n_notes++ ? "," : "");
		strbuf_json(&j->notes, text);
		return;
	}
	_cleanup_free_ char *rule = strndup(text, (size_t)(sep - text));
	strbuf_puts(&j->runs, j->in_run	  ? "]},{\"rule\":"
			      : j->n_runs ? ",{\"rule\":"
					  : "{\"rule\":");
	strbuf_json(&j->runs, rule ? rule : "");
	strbuf_puts(&j->runs, ",\"outcome\":");
	strbuf_json(&j->runs, sep + 2);
	strbuf_puts(&j->runs, ",\"stderr\":[");
	j->n_runs++;
	j->in_run = true;
}

/* The object, whatever the end (result: done, timed out, redelivered,
 * error; failed: how many runs failed, or NULL when keventd did not say). */
static void json_end(struct wait_json *j, const char *result, const char *failed)
{
	if (!j)
		return;
	struct strbuf sb = STRBUF_INIT;
	strbuf_printf(&sb, "{\"seqnum\":%s,\"runs\":[%s%s],\"notes\":[%s],\"failed\":%s,",
		      j->seqnum[0] ? j->seqnum : "null", strbuf_str(&j->runs),
		      j->in_run ? "]}" : "", strbuf_str(&j->notes), failed ? failed : "null");
	strbuf_printf(&sb, "\"result\":\"%s\"}", result);
	puts(sb.oom || j->runs.oom || j->notes.oom ? "{}" : strbuf_str(&sb));
	strbuf_release(&sb);
	strbuf_release(&j->runs);
	strbuf_release(&j->notes);
}

/* send --wait, test --run: each rule's outcome as keventd tells it, until
 * the last. timeout_ms 0: no bound. */
int ctl_wait_replies(int fd, uint64_t timeout_ms, const char *timeout_text, bool json)
{
	char buf[KCTL_MSG_MAX + 1];
	uint64_t deadline = timeout_ms ? now_monotonic_ns() + timeout_ms * 1000000ull : 0;
	struct wait_json wj = {.runs = STRBUF_INIT, .notes = STRBUF_INIT};
	struct wait_json *j = json ? &wj : NULL;
	for (;;) {
		struct kctl_msg m;
		int n = ctl_recv(fd, buf, deadline, &m);
		if (n == -ETIMEDOUT) {
			fprintf(stderr,
				"keventctl: timed out after %s waiting for the handlers of the "
				"event\n",
				timeout_text);
			json_end(j, "timed out", NULL);
			return 1;
		}
		if (n == -EBADMSG) {
			json_end(j, "error", NULL);
			return 1;
		}
		if (n <= 0) {
			/* after "event seqnum": the event is in keventd's journal,
			 * unless it runs without one */
			fprintf(stderr, "keventctl: keventd went away before the event's handlers "
					"were done; the event will be redelivered when keventd "
					"starts again (if it keeps a journal)\n");
			json_end(j, "redelivered", NULL);
			return CTL_EXIT_REDELIVERED;
		}
		const char *text = m.n > 1 ? m.f[1] : "";
		if (strcmp(m.f[0], "data") == 0 && j) {
			json_line(j, text);
		} else if (strcmp(m.f[0], "data") == 0) {
			ctl_print(stdout, "%s", text);
			fflush(stdout);
		} else if (strcmp(m.f[0], "ok") == 0 && strcmp(text, KCTL_WAIT_REDELIVERED) == 0) {
			fprintf(stderr, "keventctl: keventd restarted (or stopped) before the "
					"event's handlers were done; the event will be redelivered "
					"when it starts\n");
			json_end(j, "redelivered", NULL);
			return CTL_EXIT_REDELIVERED;
		} else if (strcmp(m.f[0], "ok") == 0) {
			int64_t v;
			json_end(j, "done", parse_int64(text, &v) == 0 ? text : NULL);
			return strcmp(text, "0") == 0 ? 0 : 1;
		} else if (strcmp(m.f[0], "err") == 0) {
			ctl_print(stderr, "keventctl: keventd: %s", text);
			json_end(j, "error", NULL);
			return 1;
		}
	}
}

int ctl_send(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},	   {"verbose", no_argument, NULL, 'v'},
		{"batch", required_argument, NULL, 'b'},   {"wait", no_argument, NULL, 'w'},
		{"timeout", required_argument, NULL, 't'}, {0},
	};
	bool verbose = false, wait = false;
	const char *batch = NULL, *timeout = NULL;
	uint64_t timeout_ms = 0;
	int o;
	while ((o = getopt_long(argc, argv, "hvb:", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl send [-v] [--wait [--timeout DURATION]] TYPE "
			       "OBJECT "
			       "SIGNAL [PAYLOAD|-]\n"
			       "       keventctl send [-v] --batch FILE|-\n"
			       "Queues an event in keventd; '-' reads the payload from stdin.\n"
			       "--wait waits until every handler of the event has finished and\n"
			       "prints each rule's outcome: exit 0 if all exited 0, else 1.\n"
			       "--batch queues one event per line of FILE:\n"
			       "TYPE<TAB>OBJECT<TAB>SIGNAL[<TAB>PAYLOAD], with \\n, \\t, \\\\ "
			       "escapes.\n");
			return 0;
		}
		if (o == 'b') {
			batch = optarg;
		} else if (o == 'v') {
			verbose = true;
		} else if (o == 'w') {
			wait = true;
		} else if (o == 't') {
			timeout = optarg;
			if (ctl_timeout_arg("--timeout", optarg, &timeout_ms))
				return EXIT_USAGE;
		} else {
			return ctl_option_error("send");
		}
	}
	if (timeout && !wait)
		return ctl_usage_error("--timeout goes with --wait");
	if (batch) {
		if (optind != argc || wait)
			return ctl_usage_error("send --batch takes no other arguments");
		return ctl_send_batch(c, batch, verbose);
	}
	if (argc - optind < 3 || argc - optind > 4)
		return ctl_usage_error("send needs TYPE OBJECT SIGNAL [PAYLOAD]");
	_cleanup_free_ char *stdin_payload = NULL;
	const char *payload;
	int rc = ctl_payload_arg(argc - optind == 4 ? argv[optind + 3] : "", &stdin_payload,
				 &payload);
	if (rc)
		return rc;
	const char *f[] = {wait ? "send-wait" : "send", argv[optind], argv[optind + 1],
			   argv[optind + 2], payload};
	int fd = ctl_open(c, f, 5);
	if (fd < 0)
		return 1;
	int status;
	if (wait) {
		char t[32];
		duration_format(timeout_ms, t, sizeof(t));
		status = ctl_wait_replies(fd, timeout_ms, timeout ? t : "", false);
		close(fd);
		return status;
	}
	char *seq = NULL;
	status = ctl_replies(fd, NULL, NULL, &seq);
	if (status == 0 && verbose)
		printf("queued as seqnum %s\n", seq ? seq : "?");
	free(seq);
	close(fd);
	return status;
}
