/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The section "notify:" of keventd's configuration file (keventd.yaml(5),
 * NOTIFICATIONS): named targets a rule's notify: sends to, each a mail
 * server (smtp), a web hook (webhook), an ntfy topic (ntfy) or a Gotify
 * server (gotify).  Pure: mistakes become diagnostics, never logs; the
 * secret files are looked at by knotify_config_check_files() alone.
 */
#ifndef KEVENT_NOTIFY_CONFIG_H
#define KEVENT_NOTIFY_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "yamltree.h"

#define KNOTIFY_MAX_TARGETS	   32
#define KNOTIFY_NAME_MAX	   64
#define KNOTIFY_MAX_TO		   64
#define KNOTIFY_URL_MAX		   2048
#define KNOTIFY_DEFAULT_MAX_AGE_MS (24ull * 3600 * 1000)
#define KNOTIFY_MAX_AGE_MIN_MS	   1000ull

enum knotify_kind { KNOTIFY_SMTP, KNOTIFY_WEBHOOK, KNOTIFY_NTFY, KNOTIFY_GOTIFY };

/* The secret files a target may name, for knotify_config_check_files(). */
enum knotify_secret { KNOTIFY_PASSWORD, KNOTIFY_SECRET, KNOTIFY_TOKEN, KNOTIFY_NSECRETS };

struct knotify_target {
	char *name;
	enum knotify_kind kind;
	char *url; /* as given: smtp[s]://HOST[:PORT], http[s]://HOST[:PORT]/PATH */
	/* smtp: TLS from the start (smtps://); else STARTTLS, required unless
	 * the host is the machine itself.  http: https:// */
	bool tls;
	bool local; /* the host is localhost or a loopback address */
	char *from, **to;
	size_t n_to;
	char *username;
	char *files[KNOTIFY_NSECRETS]; /* password_file, secret_file, token_file */
	unsigned file_line[KNOTIFY_NSECRETS], file_col[KNOTIFY_NSECRETS];
	char *ca_file; /* NULL: the system's store */
	uint64_t max_age_ms;
	unsigned line, col; /* where the file names it */
};

struct knotify_config {
	struct knotify_target *v;
	size_t n;
};

const char *knotify_kind_name(enum knotify_kind k);
const char *knotify_secret_key(enum knotify_secret s);

void knotify_config_init(struct knotify_config *c);
void knotify_config_release(struct knotify_config *c);
/* Replaces *c with the section n of the file path.  On a mistake, a
 * diagnostic for each in diags and *c unchanged.  0, -EINVAL or -ENOMEM. */
int knotify_config_parse(struct knotify_config *c, const struct ynode *n, const char *path,
			 struct kdiags *diags);
/* The target named name; NULL when there is none. */
const struct knotify_target *knotify_config_find(const struct knotify_config *c, const char *name);
/* Whether s is a valid target name: [A-Za-z0-9_.-], 1 to KNOTIFY_NAME_MAX. */
bool knotify_name_valid(const char *s);

/* The secret files of c as keventd would find them: each must be a
 * regular file that group and others cannot read (chmod 600), as the MQTT
 * broker's password; a diagnostic in diags at the key for each that is
 * not, or is missing.  Looks at the files (stat), reads none. */
void knotify_config_check_files(const struct knotify_config *c, const char *path,
				struct kdiags *diags);
/* The same check of one secret file f (the Alertmanager's password_file
 * has it too): NULL when keventd would take it, else the words saying why
 * not ("may be read by group or others ...", or strerror()'s in buf). */
const char *knotify_secret_file_problem(const char *f, char *buf, size_t size);

#endif
