// SPDX-License-Identifier: GPL-2.0-or-later
/* A handler as a transient systemd service (transient.h). */
#include "transient.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

int ktransient_unit_name(const char *rule, uint64_t seq, char **out)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_puts(&sb, "keventd-");
	for (const unsigned char *p = (const unsigned char *)rule; *p; p++) {
		bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  (*p >= '0' && *p <= '9') || *p == ':' || *p == '_' ||
			  (*p == '.' && p != (const unsigned char *)rule);
		if (ok)
			strbuf_putc(&sb, (char)*p);
		else
			strbuf_printf(&sb, "\\x%02x", *p);
	}
	strbuf_printf(&sb, "-%" PRIu64 ".service", seq);
	*out = strdup(strbuf_str(&sb));
	strbuf_release(&sb);
	return *out ? 0 : -ENOMEM;
}

int ktransient_build(const char *rule, const char *user, uint64_t timeout_ms,
		     const struct kunitprop *props, size_t n_props, const struct kplan *plan,
		     const char *path, uint64_t seq, struct ktransient *out)
{
	*out = (struct ktransient){0};
	struct ktransient_prop *v = calloc(KTRANSIENT_FIXED + n_props, sizeof(*v));
	if (!v)
		return -ENOMEM;
	out->props = v;
	if (ktransient_unit_name(rule, seq, &out->unit) < 0 ||
	    asprintf(&out->description, "keventd rule %s, seq %" PRIu64, rule, seq) < 0) {
		out->description = NULL;
		ktransient_release(out);
		return -ENOMEM;
	}
	size_t n = 0;
	v[n++] =
		(struct ktransient_prop){.name = "Description", .type = 's', .s = out->description};
	v[n++] = (struct ktransient_prop){
		.name = "ExecStart", .type = 'X', .s = path, .strv = plan->argv};
	v[n++] = (struct ktransient_prop){.name = "Environment", .type = 'E', .strv = plan->envp};
	if (user)
		v[n++] = (struct ktransient_prop){.name = "User", .type = 's', .s = user};
	v[n++] = (struct ktransient_prop){
		.name = "RuntimeMaxUSec", .type = 't', .u = timeout_ms * 1000};
	for (size_t i = 0; i < n_props; i++) {
		const struct kunitprop *p = &props[i];
		struct ktransient_prop t = {.name = p->name,
					    .type = p->type,
					    .s = p->s,
					    .b = p->b,
					    .u = p->u,
					    .i = p->i};
		size_t k = 0;
		while (k < n && strcmp(v[k].name, p->name) != 0)
			k++;
		v[k] = t; /* a fixed one of the same name is replaced */
		if (k == n)
			n++;
	}
	out->n_props = n;
	return 0;
}

void ktransient_release(struct ktransient *t)
{
	free(t->unit);
	free(t->description);
	free(t->props);
	*t = (struct ktransient){0};
}
