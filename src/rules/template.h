/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Templates of a handler's arguments: "${NAME}" with NAME
 * [A-Za-z_][A-Za-z0-9_]* is a variable, "$$" is a literal '$', any other '$'
 * is literal.  Pure: the parser checks them, the plan expands them.
 */
#ifndef KEVENT_TEMPLATE_H
#define KEVENT_TEMPLATE_H

/* Checks a template.  Returns 0, or -EINVAL with *why for "${" without a
 * valid name and closing brace. */
int ktemplate_check(const char *tmpl, const char **why);

/* Expands a template against envp (NULL-terminated "NAME=value").  Unset
 * variables expand to "".  Returns a malloc'd string or NULL on ENOMEM. */
char *ktemplate_expand(const char *tmpl, char *const *envp);

#endif
