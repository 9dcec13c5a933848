// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * keventd's configuration file: koptions_parse_file(), with the sections
 * mqtt and alertmanager.  Whatever it accepts must be within keventd's limits (what
 * koptions_set() and the section's parser promise), every diagnostic must
 * have a place (or name the file alone), and everything is freed (ASan)
 * whether it parsed or not.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "options.h"

#define MAX_INPUT (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	struct koptions o;
	struct kdiags d = {0};
	koptions_init(&o);
	int rc = koptions_parse_file(&o, (const char *)data, size, "f.yaml", &d);
	FUZZ_CHECK(rc == 0 || rc == -ENOMEM);
	/* a diagnostic has a whole position, or names the file alone (a NUL
	 * byte), never half of one */
	for (size_t i = 0; i < d.n; i++)
		FUZZ_CHECK(((d.v[i].line >= 1 && d.v[i].col >= 1) ||
			    (d.v[i].line == 0 && d.v[i].col == 0)) &&
			   d.v[i].msg && d.v[i].msg[0]);
	koptions_finish(&o);
	FUZZ_CHECK(o.cfg.max_children >= 1 && o.cfg.max_children <= KOPTIONS_MAX_CHILDREN_MAX);
	FUZZ_CHECK(o.cfg.queue_size >= 1 && o.cfg.queue_size <= KOPTIONS_QUEUE_SIZE_MAX);
	FUZZ_CHECK(o.cfg.n_rule_dirs >= 1 && o.cfg.n_rule_dirs <= KOPTIONS_MAX_DIRS);
	for (size_t i = 0; i < o.cfg.n_rule_dirs; i++)
		FUZZ_CHECK(o.cfg.rule_dirs[i] != NULL);
	const struct kmqtt_config *m = &o.mqtt;
	if (m->enabled) {
		FUZZ_CHECK(m->host && m->host[0]);
		FUZZ_CHECK(m->port >= 1 && m->port <= 65535);
		FUZZ_CHECK(m->qos == 0 || m->qos == 1);
		FUZZ_CHECK(m->spool_max_mb >= 1 && m->spool_max_mb <= KMQTT_SPOOL_MAX_MB_MAX);
		FUZZ_CHECK(!m->spool_dir || m->spool_dir[0] == '/');
		FUZZ_CHECK(!m->topic_prefix || !strpbrk(m->topic_prefix, "+#"));
		FUZZ_CHECK(!m->cert_file == !m->key_file);
		FUZZ_CHECK(m->tls || (!m->ca_file && !m->cert_file));
		FUZZ_CHECK(m->n_subscribe <= KMQTT_MAX_SUBSCRIBE);
		for (size_t i = 0; i < m->n_subscribe; i++)
			FUZZ_CHECK(!kmqtt_filter_problem(m->subscribe[i]));
	} else {
		FUZZ_CHECK(!m->host && !m->n_subscribe);
	}
	const struct kam_config *a = &o.am;
	if (a->enabled) {
		FUZZ_CHECK(a->url && a->post_url && !strpbrk(a->url, "?# "));
		FUZZ_CHECK(strncasecmp(a->url, "http", 4) == 0); /* schemes: any case */
		FUZZ_CHECK(a->resend_ms >= KAM_RESEND_MIN_MS && a->resend_ms <= KAM_RESEND_MAX_MS);
		FUZZ_CHECK(a->n_labels <= KAM_MAX_LABELS);
		for (size_t i = 0; i < a->n_labels; i++)
			FUZZ_CHECK(kam_label_name_valid(a->labels[2 * i]) &&
				   !kam_label_reserved(a->labels[2 * i]) &&
				   a->labels[2 * i + 1][0]);
		FUZZ_CHECK(!a->username == !a->password_file);
		FUZZ_CHECK(!a->password_file || a->password_file[0] == '/');
	} else {
		FUZZ_CHECK(!a->url && !a->n_labels);
	}
	kdiags_free(&d);
	koptions_release(&o);
	return 0;
}
