// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The payload property parser and ${VAR} expansion.  The input is
 * PAYLOAD [\0 TEMPLATE]...: kevent_new() parses the payload into
 * properties, kplan_build_env() makes the handler environment, and each
 * template is expanded against it.  The expansion is checked against a
 * reference written from template.h's description: the result is exactly the
 * template's literal parts and the values of the variables it names, so
 * nothing that came from the event is ever expanded again; and
 * ktemplate_check() accepts exactly the templates in which every
 * "${" starts a variable.
 */
#include <errno.h>
#include <string.h>

#include "event.h"
#include "fuzz.h"
#include "plan.h"
#include "rules.h"
#include "template.h"

#define MAX_INPUT     (16 * 1024)
#define MAX_TEMPLATES 4

static bool is_name_start(char c)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static const char *lookup(char *const *envp, const char *name, size_t len)
{
	for (size_t i = 0; envp[i]; i++)
		if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=')
			return envp[i] + len + 1;
	return "";
}

/* The reference expansion; *valid says whether every "${" was a variable. */
static void ref_expand(const char *t, char *const *envp, struct strbuf *out, bool *valid)
{
	*valid = true;
	size_t i = 0;
	while (t[i]) {
		if (t[i] == '$' && t[i + 1] == '$') {
			strbuf_putc(out, '$');
			i += 2;
			continue;
		}
		if (t[i] == '$' && t[i + 1] == '{') {
			size_t j = i + 2, k = j;
			if (is_name_start(t[j])) {
				while (is_name_char(t[k]))
					k++;
				if (k > j && t[k] == '}') {
					strbuf_puts(out, lookup(envp, t + j, k - j));
					i = k + 1;
					continue;
				}
			}
			*valid = false;
		}
		strbuf_putc(out, t[i]);
		i++;
	}
}

static void check_env(char *const *envp, size_t n, const struct kevent *ev)
{
	FUZZ_CHECK(envp[n] == NULL);
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(envp[i], '=');
		FUZZ_CHECK(eq && eq > envp[i]);
		size_t len = (size_t)(eq - envp[i]);
		for (size_t c = 0; c < len; c++)
			FUZZ_CHECK(is_name_char(envp[i][c]));
		/* one value per name: a property never overrides a fixed variable */
		for (size_t j = 0; j < i; j++)
			FUZZ_CHECK(strncmp(envp[j], envp[i], len + 1) != 0);
	}
	FUZZ_CHECK(strcmp(lookup(envp, "KEVENT_OBJECT", 13), ev->object) == 0);
	FUZZ_CHECK(strcmp(lookup(envp, "KEVENT_SIGNAL", 13), ev->signal) == 0);
	FUZZ_CHECK(strcmp(lookup(envp, "KEVENT_PAYLOAD", 14), ev->payload) == 0);
	FUZZ_CHECK(strcmp(lookup(envp, "PATH", 4), KEVENT_HANDLER_PATH) == 0);
	/* every property is reachable by its variable, first of a name wins */
	for (size_t i = 0; i < ev->n_props; i++) {
		char *name = malloc(8 + strlen(ev->props[i].key));
		FUZZ_CHECK(name);
		kplan_prop_var(ev->props[i].key, name);
		const char *v = lookup(envp, name, strlen(name));
		bool fixed =
			strcmp(name, "KEVENT_TYPE") == 0 || strcmp(name, "KEVENT_OBJECT") == 0 ||
			strcmp(name, "KEVENT_SIGNAL") == 0 || strcmp(name, "KEVENT_PAYLOAD") == 0 ||
			strcmp(name, "KEVENT_SEQNUM") == 0 ||
			strcmp(name, "KEVENT_TIMESTAMP") == 0 ||
			strcmp(name, "KEVENT_SOURCE") == 0 || strcmp(name, "KEVENT_RULE") == 0 ||
			strcmp(name, "KEVENT_RULE_FILE") == 0;
		bool earlier = false;
		for (size_t j = 0; j < i && !earlier; j++) {
			char *other = malloc(8 + strlen(ev->props[j].key));
			FUZZ_CHECK(other);
			kplan_prop_var(ev->props[j].key, other);
			earlier = strcmp(other, name) == 0;
			free(other);
		}
		FUZZ_CHECK(fixed || earlier || strcmp(v, ev->props[i].value) == 0);
		free(name);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	char *buf = fuzz_cstring(data, size);
	if (!buf)
		return 0;
	const char *payload = buf;
	const char *tmpl[MAX_TEMPLATES];
	size_t n_tmpl = 0;
	for (size_t off = strlen(buf) + 1; off <= size && n_tmpl < MAX_TEMPLATES;) {
		tmpl[n_tmpl++] = buf + off;
		off += strlen(buf + off) + 1;
	}

	char *uenv[] = {"ACTION=add", "DEVPATH=/devices/x", "SUBSYSTEM=power_supply",
			"POWER_SUPPLY_NAME=BAT0"};
	struct kevent *ev = NULL;
	const char *why = NULL;
	int rc = kevent_new(KEVENT_POWER, "/org/kernel/devices/x", "high", payload,
			    KEVENT_SOURCE_UDEV, 3, 1700000000000000000ull, uenv, ARRAY_SIZE(uenv),
			    &ev, &why);
	if (rc < 0) {
		FUZZ_CHECK(rc == -ENOMEM ||
			   (rc == -EINVAL && strlen(payload) > KEVENT_PAYLOAD_MAX));
		free(buf);
		return 0;
	}
	/* properties: valid keys, values without line ends or outer blanks */
	for (size_t i = 0; i < ev->n_props; i++) {
		const struct kevent_prop *p = &ev->props[i];
		FUZZ_CHECK(p->key[0]);
		FUZZ_CHECK(strspn(p->key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					  "0123456789_.-") == strlen(p->key));
		FUZZ_CHECK(!strchr(p->value, '\n'));
		size_t vl = strlen(p->value);
		FUZZ_CHECK(vl == 0 ||
			   (p->value[0] != ' ' && p->value[0] != '\t' && p->value[vl - 1] != ' ' &&
			    p->value[vl - 1] != '\t' && p->value[vl - 1] != '\r'));
		FUZZ_CHECK(kevent_prop(ev, p->key) == p->value);
	}

	struct kfile file = {.path = "/etc/keventd/rules.d/50-fuzz.yaml", .name = "50-fuzz.yaml"};
	struct krule rule = {.name = "fuzz", .file = &file};
	char **envp = NULL;
	size_t n_env = 0;
	rc = kplan_build_env(&rule, ev, &envp, &n_env);
	FUZZ_CHECK(rc == 0 || rc == -ENOMEM);
	if (rc == 0) {
		check_env(envp, n_env, ev);
		for (size_t i = 0; i < n_tmpl; i++) {
			struct strbuf want = STRBUF_INIT;
			bool valid;
			ref_expand(tmpl[i], envp, &want, &valid);
			const char *why_bad = NULL;
			int ck = ktemplate_check(tmpl[i], &why_bad);
			FUZZ_CHECK(ck == 0 || ck == -EINVAL);
			FUZZ_CHECK((ck == 0) == valid);
			FUZZ_CHECK(ck == 0 || why_bad);
			char *got = ktemplate_expand(tmpl[i], envp);
			if (got && !want.oom)
				FUZZ_CHECK(strcmp(got, strbuf_str(&want)) == 0);
			free(got);
			strbuf_release(&want);
		}
		strv_free(envp);
	}
	kevent_free(ev);
	free(buf);
	return 0;
}
