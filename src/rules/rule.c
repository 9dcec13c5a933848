// SPDX-License-Identifier: GPL-2.0-or-later
/* The rule model's lifecycle: a rule file's references, and what a rule
 * holds. */
#include "rules.h"
#include "rules-parse.h"
#include "util.h"

bool krule_runs_something(const struct krule *r)
{
	return r->run || r->shell;
}

const struct krule_extra krule_extra_default = {.timeout_ms = KRULE_DEFAULT_TIMEOUT_MS};

const char *krule_limit_key(const struct krule *r, const struct kevent *ev)
{
	const struct krule_extra *x = krule_extra(r);
	if (x->key == KRULE_KEY_RULE)
		return "";
	if (x->key == KRULE_KEY_PAYLOAD) {
		const char *v = kevent_prop(ev, x->key_prop);
		return v ? v : "";
	}
	return ev->object;
}

void krule_extra_release(struct krule_extra *x)
{
	free(x->key_prop);
	free(x->user);
	free(x->ids);
	free(x->limits);
	free(x->cg_limits);
	for (size_t i = 0; i < x->n_unit_props; i++)
		kunitprop_release(&x->unit_props[i]);
	free(x->unit_props);
	strv_free(x->notify);
	free(x->notify_title);
	free(x->notify_message);
	strv_free(x->share);
}

static void krule_extra_free(struct krule_extra *x)
{
	if (!x)
		return;
	krule_extra_release(x);
	free(x);
}

static void krule_release(struct krule *r)
{
	free(r->name);
	if (!(r->shared & KRULE_SHARED_TYPE))
		kpattern_list_free(&r->type);
	if (!(r->shared & KRULE_SHARED_OBJECT))
		kpattern_list_free(&r->object);
	if (!(r->shared & KRULE_SHARED_SIGNAL))
		kpattern_list_free(&r->signal);
	if (!(r->shared & KRULE_SHARED_SOURCE))
		kpattern_list_free(&r->source);
	for (size_t i = 0; i < r->n_payload; i++) {
		free(r->payload[i].key);
		free(r->payload[i].text);
		kpattern_list_free(&r->payload[i].globs);
	}
	free(r->payload);
	if (!(r->shared & KRULE_SHARED_RUN))
		strv_free(r->run);
	free(r->shell);
	krule_extra_free(r->extra);
}

void kcond_def_release(struct kcond_def *c)
{
	free(c->name);
	free(c->key_prop);
	krule_release(&c->set);
	if (c->has_clear)
		krule_release(&c->clear);
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
	for (size_t i = 0; i < f->n_conds; i++)
		kcond_def_release(&f->conds[i]);
	free(f->conds);
	for (size_t i = 0; i < f->n_dropins; i++)
		free(f->dropins[i].path);
	free(f->dropins);
	free(f->path);
	free(f->name);
	free(f);
}
