// SPDX-License-Identifier: GPL-2.0-or-later
/* keventd.yaml's section "kmsg:" (keventd.yaml(5)) and the source's
 * position file, kmsg.pos in the state directory (keventd(8), FILES). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kmsg.h"

const struct kkmsg_config kkmsg_config_defaults = {.priority = 3 /* err */};

void kkmsg_config_init(struct kkmsg_config *c)
{
	*c = kkmsg_config_defaults;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "on"};
	static const char *const no[] = {"false", "False", "FALSE", "no", "No", "off"};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int kkmsg_config_parse(struct kkmsg_config *c, const struct ynode *n, const char *path,
		       struct kdiags *diags)
{
	if (n->kind != YNODE_MAP) {
		kdiags_add(diags, path, n->line, n->col,
			   "kmsg: is a mapping (priority, backlog), not %s", ynode_kind_name(n));
		return -EINVAL;
	}
	struct kkmsg_config nc;
	kkmsg_config_init(&nc);
	size_t errors = 0;
	for (size_t i = 0; i + 1 < n->n_kids; i += 2) {
		const struct ynode *k = n->kids[i], *v = n->kids[i + 1];
		if (k->kind != YNODE_SCALAR) {
			kdiags_add(diags, path, k->line, k->col, "kmsg: a key is a name, not %s",
				   ynode_kind_name(k));
			errors++;
			continue;
		}
		const char *val = v->kind == YNODE_SCALAR && !ynode_is_null(v) ? v->value : NULL;
		if (strcmp(k->value, "priority") == 0) {
			int level = val ? kkmsg_level_from_name(val) : -1;
			if (level < 0) {
				kdiags_add(diags, path, v->line, v->col,
					   "kmsg: priority is one of emerg, alert, crit, err, "
					   "warning, notice, info, debug (or 0-7), not %s%s%s",
					   val ? "'" : "", val ? val : ynode_kind_name(v),
					   val ? "'" : "");
				errors++;
			} else {
				nc.priority = (unsigned)level;
			}
		} else if (strcmp(k->value, "backlog") == 0) {
			if (!val || parse_bool(val, &nc.backlog) < 0) {
				kdiags_add(diags, path, v->line, v->col,
					   "kmsg: backlog wants yes or no, not %s%s%s",
					   val ? "'" : "", val ? val : ynode_kind_name(v),
					   val ? "'" : "");
				errors++;
			}
		} else {
			kdiags_add(diags, path, k->line, k->col,
				   "kmsg: unknown key '%s' (priority, backlog)", k->value);
			errors++;
		}
	}
	if (errors)
		return -EINVAL;
	*c = nc;
	return 0;
}

/* ---- the position ---- */

bool kkmsg_boot_id_valid(const char *s, size_t len)
{
	if (len != KKMSG_BOOT_ID_LEN)
		return false;
	for (size_t i = 0; i < len; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? s[i] != '-'
			 : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

int kkmsg_pos_parse(const char *text, size_t len, struct kkmsg_pos *pos)
{
	if (len < KKMSG_BOOT_ID_LEN + 2 || !kkmsg_boot_id_valid(text, KKMSG_BOOT_ID_LEN) ||
	    text[KKMSG_BOOT_ID_LEN] != ' ')
		return -EINVAL;
	const char *p = text + KKMSG_BOOT_ID_LEN + 1, *end = text + len;
	if (end[-1] == '\n')
		end--;
	uint64_t v = 0;
	if (p == end || end - p > 20)
		return -EINVAL;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	memcpy(pos->boot_id, text, KKMSG_BOOT_ID_LEN);
	pos->boot_id[KKMSG_BOOT_ID_LEN] = '\0';
	pos->seq = v;
	return 0;
}

size_t kkmsg_pos_format(const struct kkmsg_pos *pos, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s %" PRIu64 "\n", pos->boot_id, pos->seq);
	return n > 0 && (size_t)n < size ? (size_t)n : 0;
}
