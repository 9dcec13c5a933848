// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kmsg source's records: the input is records as read() returns them
 * from /dev/kmsg, separated by NUL bytes (a record never holds one), each
 * parsed with kkmsg_parse(), pieces flagged '+' joined to the record
 * before them, and the whole record recognised and made into its event,
 * one state across them (an OOM summary, then its kill).  Checked: a
 * record is taken or refused with a reason; a record taken has no NUL in
 * its text; only the kernel's own records are wanted; every wanted record
 * makes an event (the message is cut to fit, never the record refused);
 * the event's own lines are the source's, whatever the text held: its
 * number, facility and priority cannot be forged by a task's name.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "kmsg.h"

#define MAX_INPUT (64 * 1024)

static void event_of(struct kkmsg_state *st, const struct kkmsg_rec *r)
{
	struct kkmsg_info info;
	if (kkmsg_recognise(st, r, &info) < 0)
		return;
	FUZZ_CHECK(r->facility == 0 || info.kind == KKMSG_PLAIN);
	bool wanted = kkmsg_wanted(r, &info, 7);
	FUZZ_CHECK(wanted == (r->facility == 0));
	FUZZ_CHECK(kkmsg_wanted(r, &info, 0) ==
		   (r->facility == 0 && (info.signal || r->level == 0)));
	if (wanted) {
		char buf[64];
		const char *key = kkmsg_device_key(r, &info, buf, sizeof(buf));
		FUZZ_CHECK(!key || info.kind == KKMSG_IO_ERROR || key == r->device);
		struct kevent *ev = NULL;
		const char *why = NULL;
		bool cut = false;
		int rc = kkmsg_event(r, &info, NULL, 0, &ev, &cut, &why);
		FUZZ_CHECK(rc == 0);
		FUZZ_CHECK(ev->seqnum == r->seq);
		FUZZ_CHECK(strcmp(ev->signal,
				  info.signal ? info.signal : kkmsg_level_name(r->level)) == 0);
		char seq[32];
		snprintf(seq, sizeof(seq), "%llu", (unsigned long long)r->seq);
		FUZZ_CHECK(strcmp(kevent_prop(ev, "Kmsg-Seqnum"), seq) == 0);
		FUZZ_CHECK(strcmp(kevent_prop(ev, "Facility"), "kern") == 0);
		FUZZ_CHECK(strcmp(kevent_prop(ev, "Priority"), kkmsg_level_name(r->level)) == 0);
		FUZZ_CHECK(cut == (kevent_prop(ev, "Truncated") != NULL));
		kevent_free(ev);
	}
	kkmsg_info_release(&info);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	struct kkmsg_state st = {0};
	struct kkmsg_rec held = {0};
	bool holding = false;
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *z = memchr(p, '\0', (size_t)(end - p));
		size_t len = (size_t)((z ? z : end) - p);
		struct kkmsg_rec r;
		const char *why = NULL;
		int rc = kkmsg_parse(p, len, &r, &why);
		p += len + (z ? 1 : 0);
		FUZZ_CHECK(rc == 0 || (rc == -EINVAL && why));
		if (rc < 0) {
			FUZZ_CHECK(!r.text && !r.subsystem && !r.device);
			continue;
		}
		FUZZ_CHECK(strlen(r.text) == r.text_len);
		FUZZ_CHECK(r.level < 8 && r.last_seq == r.seq && r.numbered);
		FUZZ_CHECK(!r.subsystem || strlen(r.subsystem) <= KKMSG_KEY_MAX);
		FUZZ_CHECK(!r.device || strlen(r.device) <= KKMSG_KEY_MAX);
		if (r.flag == '+' && holding) {
			size_t before = held.text_len;
			rc = kkmsg_rec_join(&held, &r);
			FUZZ_CHECK(rc == 0 || rc == -E2BIG);
			FUZZ_CHECK(rc < 0 || (held.text_len == before + r.text_len &&
					      held.last_seq == r.seq));
			if (rc == 0) {
				kkmsg_rec_release(&r);
				continue;
			}
		}
		if (holding) {
			event_of(&st, &held);
			kkmsg_rec_release(&held);
			holding = false;
		}
		if (r.flag == 'c') {
			held = r;
			holding = true;
			continue;
		}
		event_of(&st, &r);
		kkmsg_rec_release(&r);
	}
	if (holding)
		event_of(&st, &held);
	kkmsg_rec_release(&held);
	kkmsg_state_release(&st);
	return 0;
}
