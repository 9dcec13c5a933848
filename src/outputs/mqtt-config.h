/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The section "mqtt:" of keventd's configuration file (keventd.yaml(5)):
 * where the broker is, how to log in, what to publish, where to spool and
 * what to subscribe to.  Pure: mistakes become diagnostics, never logs.
 */
#ifndef KEVENT_MQTT_CONFIG_H
#define KEVENT_MQTT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "yamltree.h"

#define KMQTT_DEFAULT_SPOOL_DIR	   "/var/lib/keventd/spool"
#define KMQTT_DEFAULT_SPOOL_MAX_MB 64
#define KMQTT_SPOOL_MAX_MB_MAX	   (1024 * 1024)
#define KMQTT_MAX_SUBSCRIBE	   64
#define KMQTT_HOST_LEVEL_MAX	   64 /* host_level: 1 to this */
/* MQTT's own bound on a topic (a UTF-8 string of at most 65535 bytes). */
#define KMQTT_TOPIC_MAX 65535

enum kmqtt_publish { KMQTT_PUBLISH_ALL, KMQTT_PUBLISH_MATCHED, KMQTT_PUBLISH_NONE };

struct kmqtt_config {
	bool enabled; /* the section is there (it then has a url) */
	bool tls;     /* mqtts:// */
	char *host;
	unsigned port;
	/* NULL where the file says nothing: client_id is then
	 * "keventd-<hostname>", topic_prefix "keventd/<hostname>", and the
	 * server's certificate is checked against the system's store */
	char *client_id, *topic_prefix;
	char *username, *password_file;
	char *ca_file, *cert_file, *key_file;
	enum kmqtt_publish publish;
	int qos; /* 0 or 1 */
	char *spool_dir;
	unsigned spool_max_mb;
	char **subscribe; /* topic filters */
	/* for each, the level of a topic that names the host (counted from
	 * 1, "$share/NAME/" not counted): its host_level, or its first '+' */
	unsigned *host_level;
	size_t n_subscribe;
	unsigned url_line, url_col; /* where the file says url */
};

/* The defaults, for a configuration with no section. */
void kmqtt_config_init(struct kmqtt_config *c);
void kmqtt_config_release(struct kmqtt_config *c);
/* Replaces *c with the section n of the file path.  On a mistake, a
 * diagnostic for each in diags and *c unchanged.  0, -EINVAL or -ENOMEM. */
int kmqtt_config_parse(struct kmqtt_config *c, const struct ynode *n, const char *path,
		       struct kdiags *diags);
/* What is allowed but unwise in c, for keventd's log and keventctl verify:
 * a password sent over mqtt://, in clear text.  NULL, or a static text. */
const char *kmqtt_config_warning(const struct kmqtt_config *c);
/* Whether s is a valid MQTT topic filter: not empty, "+" and "#" only as
 * whole levels and "#" only last.  NULL, or a static reason. */
const char *kmqtt_filter_problem(const char *s);
/* The filter of a subscription without MQTT 5's "$share/NAME/": what the
 * topics it brings match. */
const char *kmqtt_filter_topics(const char *s);
/* The level of the first '+' of the filter s (kmqtt_filter_topics()),
 * counted from 1; 0 when it has none. */
unsigned kmqtt_filter_first_plus(const char *s);

#endif
