// SPDX-License-Identifier: GPL-2.0-or-later
/* The rule model's lifecycle: a rule file's references, and what a rule
 * holds. */
#include "rules.h"
#include "util.h"

bool krule_runs_something(const struct krule *r)
{
	return r->run || r->shell;
}

const char *krule_limit_key(const struct krule *r, const struct kevent *ev)
{
	if (r->key == KRULE_KEY_RULE)
		return "";
	if (r->key == KRULE_KEY_PAYLOAD) {
		const char *v = kevent_prop(ev, r->key_prop);
		return v ? v : "";
	}
	return ev->object;
}

static void krule_release(struct krule *r)
{
	free(r->name);
	free(r->key_prop);
	kpattern_list_free(&r->type);
	kpattern_list_free(&r->object);
	kpattern_list_free(&r->signal);
	kpattern_list_free(&r->source);
	for (size_t i = 0; i < r->n_payload; i++) {
		free(r->payload[i].key);
		free(r->payload[i].text);
		kpattern_list_free(&r->payload[i].globs);
	}
	free(r->payload);
	strv_free(r->run);
	free(r->shell);
	free(r->user);
	free(r->ids);
	free(r->limits);
	free(r->cg_limits);
	for (size_t i = 0; i < r->n_unit_props; i++)
		kunitprop_release(&r->unit_props[i]);
	free(r->unit_props);
}

struct kfile *kfile_ref(struct kfile *f)
{
	if (f)
		f->refs++;
	return f;
}

void kfile_unref(struct kfile *f)
{
	if (!f || --f->refs > 0)
		return;
	for (size_t i = 0; i < f->n_rules; i++)
		krule_release(&f->rules[i]);
	free(f->rules);
	for (size_t i = 0; i < f->n_dropins; i++)
		free(f->dropins[i].path);
	free(f->dropins);
	free(f->path);
	free(f->name);
	free(f);
}
