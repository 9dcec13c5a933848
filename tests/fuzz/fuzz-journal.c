// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reader of keventd's journal: kjrec_next() over the bytes of a
 * segment, as keventd reads one at start-up, and kjrec_decode() over each
 * live record's body.  The pieces must cover the bytes exactly, one after
 * another; a torn record only at the end; damaged bytes must hold no whole
 * record.  Every event read, written again as a record, must read back
 * the same, the identities of the rules it names (a record of version 2)
 * or their absence (version 1) included.
 */
#include <string.h>

#include "fuzz.h"
#include "journal-rec.h"

#define MAX_INPUT (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	size_t off = 0;
	struct kjrec r;
	for (;;) {
		kjrec_next(data, size, off, &r);
		FUZZ_CHECK(r.off == off);
		if (r.kind == KJREC_END) {
			FUZZ_CHECK(off == size);
			break;
		}
		FUZZ_CHECK(r.len > 0 && r.len <= size - off);
		if (r.kind == KJREC_TORN)
			FUZZ_CHECK(off + r.len == size);
		if (r.kind == KJREC_DAMAGED) {
			/* nothing whole starts inside it but where it ends */
			struct kjrec in;
			kjrec_next(data, size, off + r.len, &in);
			FUZZ_CHECK(in.kind != KJREC_DAMAGED);
		}
		if (r.kind == KJREC_RECORD) {
			FUZZ_CHECK(r.body == data + off + sizeof(struct kjrec_hdr));
			struct kevent *ev = NULL, *back = NULL;
			const char *why = NULL;
			if (kjrec_decode(r.body, r.body_len, &ev, &why) == 0) {
				struct strbuf sb = STRBUF_INIT;
				kjrec_encode(&sb, ev);
				if (!sb.oom) {
					struct kjrec again;
					kjrec_next(sb.buf, sb.len, 0, &again);
					FUZZ_CHECK(again.kind == KJREC_RECORD &&
						   again.len == sb.len);
					FUZZ_CHECK(kjrec_decode(again.body, again.body_len, &back,
								&why) == 0);
					FUZZ_CHECK_SAME_EVENT(ev, back);
					FUZZ_CHECK(ev->redelivered == back->redelivered);
					FUZZ_CHECK(ev->n_uevent_env == back->n_uevent_env);
					FUZZ_CHECK(!ev->journal_ids == !back->journal_ids);
					FUZZ_CHECK(ev->n_journal_ids == back->n_journal_ids &&
						   ev->n_journal_ids <= KJREC_DONE_BITS);
					FUZZ_CHECK(!ev->journal_ids ||
						   memcmp(ev->journal_ids, back->journal_ids,
							  ev->n_journal_ids * sizeof(uint32_t)) ==
							   0);
					kevent_free(back);
				}
				strbuf_release(&sb);
				kevent_free(ev);
			} else {
				FUZZ_CHECK(why != NULL);
			}
		}
		off += r.len;
	}
	return 0;
}
