// SPDX-License-Identifier: GPL-2.0-or-later
#include "template.h"

#include <errno.h>
#include <string.h>

#include "util.h"

static bool name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

/* If s points at "${NAME}", returns the length of NAME, else 0. */
static size_t var_ref(const char *s)
{
	if (s[0] != '$' || s[1] != '{' || !name_start(s[2]))
		return 0;
	size_t n = 2;
	while (name_char(s[n]))
		n++;
	return s[n] == '}' ? n - 2 : 0;
}

int ktemplate_check(const char *t, const char **why)
{
	for (const char *p = t; *p; p++) {
		if (p[0] != '$')
			continue;
		if (p[1] == '$') {
			p++;
			continue;
		}
		if (p[1] == '{') {
			size_t n = var_ref(p);
			if (!n) {
				*why = "\"${\" must be followed by a variable name and \"}\" "
				       "(write \"$${\" for a literal \"${\")";
				return -EINVAL;
			}
			p += n + 2;
		}
	}
	return 0;
}

static const char *env_lookup(char *const *envp, const char *name, size_t len)
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=')
			return envp[i] + len + 1;
	return NULL;
}

char *ktemplate_expand(const char *t, char *const *envp)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_puts(&sb, ""); /* never NULL for an empty result */
	for (const char *p = t; *p; p++) {
		if (p[0] == '$' && p[1] == '$') {
			strbuf_putc(&sb, '$');
			p++;
			continue;
		}
		size_t n = var_ref(p);
		if (n) {
			const char *v = env_lookup(envp, p + 2, n);
			if (v)
				strbuf_puts(&sb, v);
			p += n + 2;
			continue;
		}
		strbuf_putc(&sb, *p);
	}
	return strbuf_steal(&sb);
}
