/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The section "alertmanager:" of keventd's configuration file
 * (keventd.yaml(5), ALERTMANAGER): where every condition that holds is
 * posted as an alert (alertmanager.h), how often again, and the labels
 * added to each.  Pure: mistakes become diagnostics, never logs; the
 * password file is looked at by kam_config_check_files() alone.
 */
#ifndef KEVENT_AM_CONFIG_H
#define KEVENT_AM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "yamltree.h"

#define KAM_URL_MAX	       2048
#define KAM_PATH	       "/api/v2/alerts" /* appended to url */
#define KAM_DEFAULT_RESEND_MS  60000ull
#define KAM_RESEND_MIN_MS      1000ull
#define KAM_RESEND_MAX_MS      (24ull * 3600 * 1000)
#define KAM_DEFAULT_TIMEOUT_MS 10000ull
#define KAM_MAX_LABELS	       32
#define KAM_LABEL_NAME_MAX     128
#define KAM_LABEL_VALUE_MAX    1024
/* an alert that holds ends this many resends after a post, unless posted
 * again (as Prometheus does): a keventd that is gone lets it resolve */
#define KAM_ENDS_AFTER_RESENDS 4

struct kam_config {
	bool enabled;
	char *url;	/* as given, less a last '/' */
	char *post_url; /* url + KAM_PATH */
	bool local;	/* the host is the machine itself */
	uint64_t resend_ms, timeout_ms;
	char **labels; /* name, value, name, value...: n_labels pairs */
	size_t n_labels;
	char *username, *password_file, *ca_file;
	unsigned password_line, password_col;
	unsigned line, col; /* where the section is */
};

void kam_config_init(struct kam_config *c);
void kam_config_release(struct kam_config *c);
/* Replaces *c with the section n of the file path.  On a mistake, a
 * diagnostic for each in diags and *c unchanged.  0, -EINVAL or -ENOMEM. */
int kam_config_parse(struct kam_config *c, const struct ynode *n, const char *path,
		     struct kdiags *diags);
/* Whether s is a label name Alertmanager takes: [a-zA-Z_][a-zA-Z0-9_]*. */
bool kam_label_name_valid(const char *s);
/* Whether name is one keventd sets itself (alertname, instance, object,
 * severity), which labels: may not override. */
bool kam_label_reserved(const char *name);
/* The password file as keventd would find it (the check of the
 * notifications' secrets): a diagnostic in diags when it will not do. */
void kam_config_check_files(const struct kam_config *c, const char *path, struct kdiags *diags);

#endif
