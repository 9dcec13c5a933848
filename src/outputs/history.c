// SPDX-License-Identifier: GPL-2.0-or-later
/* The event history (history.h). */
#include "history.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "event-json.h"
#include "transient.h"

enum hstate {
	H_MATCHED, /* the rule runs nothing */
	H_QUEUED,
	H_RUNNING,
	H_EXITED,
	H_KILLED,
	H_START_FAILED,
	H_DRY_RUN,
	H_RATELIMITED,
	H_NOT_RUN,   /* keventd was stopping */
	H_DROPPED,   /* the event came in while keventd was stopping */
	H_DEBOUNCED, /* waiting for the rule's quiet time, or replaced by a later event */
	H_SKIPPED,   /* session: active, with no active session */
};

/* clang-format off */
static const char *const state_names[] = {
	[H_MATCHED] = "matched",
	[H_QUEUED] = "queued",
	[H_RUNNING] = "running",
	[H_EXITED] = "exited",
	[H_KILLED] = "killed",
	[H_START_FAILED] = "start-failed",
	[H_DRY_RUN] = "dry-run",
	[H_RATELIMITED] = "rate-limited",
	[H_NOT_RUN] = "not-run",
	[H_DROPPED] = "dropped",
	[H_DEBOUNCED] = "debounced",
	[H_SKIPPED] = "skipped",
};
/* clang-format on */

struct hrule {
	const void *rule; /* which rule, for the reports of its run; never read */
	uint32_t name;	  /* offset of its name in the entry's text */
	uint8_t state;
	bool timed_out;
	uint64_t unit_run; /* a transient rule's run: its number in its unit's name */
	int32_t status;	   /* exit status, the signal, or -errno */
	int32_t pid;
	uint32_t duration_ms;
};

/* The rule files in force when an entry's event was handled. */
struct hgen {
	uint64_t id; /* the daemon's number for its rule set */
	struct kfile **files;
	size_t n_files;
	struct kbroken *broken; /* the files that were broken then */
	size_t n_broken;
	size_t refs; /* entries that point here */
};

struct entry {
	uint64_t serial; /* 0: never used */
	uint64_t seqnum, timestamp;
	uint8_t source, type;
	uint16_t n_rules;    /* named in rules[] */
	uint32_t n_matched;  /* every rule matched */
	uint32_t signal;     /* offset in text; the object is at 0 */
	uint32_t payload;    /* offset in text, after the rule names */
	uint32_t n_broken;   /* rule files broken when it was handled */
	struct hgen *gen;    /* NULL: its rules are no longer kept */
	struct hrule *rules; /* the buffer: rules[n_rules], then the text */
	char *text;
	/* the last lines of each rule's stderr (runner.h), NULL when none
	 * wrote any: n_rules of them, each NULL or its own */
	char **tails;
	size_t cap; /* bytes of the buffer */
	bool own;   /* the buffer is malloc()ed, not a piece of a chunk */
};

/*
 * A large history (KHISTORY_BIG entries or more) keeps its entries and
 * the first buffer of each in memory mapped on 2 MiB boundaries and
 * marked for transparent huge pages, so that filling it takes a page
 * fault every 2 MiB rather than every 4 KiB: on a virtual machine a fault
 * can cost 10 us, and 65,536 entries touch 5,000 pages (docs/PERFORMANCE.md).
 * A slot's buffer is a piece of a chunk until an event needs more; then
 * it is malloc()ed, and the piece is not used again.  A smaller history
 * stays in malloc()'s small pages: it would not fill a huge page.
 */
#define KHISTORY_BIG 16384
#define HUGE_PAGE    ((size_t)2 << 20)
#define PIECE_ALIGN  16
#define PIECE_MIN    128

struct khistory {
	struct entry *ring;
	size_t ring_mapped; /* bytes mapped for the ring; 0: it is calloc()ed */
	void **chunks;	    /* of HUGE_PAGE bytes each, the last one in use */
	size_t n_chunks, chunk_used;
	size_t cap, len;
	size_t bytes;				 /* of the buffers */
	size_t max_bytes;			 /* khistory_bytes() at most */
	uint64_t first;				 /* no entry older is held */
	uint64_t last;				 /* the newest serial */
	struct hgen *gens[KHISTORY_GENERATIONS]; /* oldest first */
	size_t n_gens;
	uint64_t lost; /* events not kept for lack of memory */
};

static void gen_free(struct hgen *g)
{
	for (size_t i = 0; g && i < g->n_files; i++)
		kfile_unref(g->files[i]);
	for (size_t i = 0; g && i < g->n_broken; i++) {
		free(g->broken[i].name);
		free(g->broken[i].why);
	}
	if (g) {
		free(g->files);
		free(g->broken);
	}
	free(g);
}

/* Drops generation i of the table; entries that pointed to it lose it. */
static void gen_drop(struct khistory *h, size_t i)
{
	struct hgen *g = h->gens[i];
	for (size_t k = 0; g->refs && k < h->cap; k++)
		if (h->ring[k].gen == g) {
			h->ring[k].gen = NULL;
			g->refs--;
		}
	memmove(h->gens + i, h->gens + i + 1, (h->n_gens - i - 1) * sizeof(*h->gens));
	h->n_gens--;
	gen_free(g);
}

/* The generation of rs (number id), made when it is new: NULL on ENOMEM. */
static struct hgen *gen_of(struct khistory *h, const struct kruleset *rs, uint64_t id)
{
	if (h->n_gens && h->gens[h->n_gens - 1]->id == id)
		return h->gens[h->n_gens - 1];
	/* those no entry uses any more go first, then the oldest */
	for (size_t i = h->n_gens; i-- > 0;)
		if (!h->gens[i]->refs)
			gen_drop(h, i);
	if (h->n_gens == KHISTORY_GENERATIONS)
		gen_drop(h, 0);
	struct hgen *g = calloc(1, sizeof(*g));
	if (!g || (rs->n_files && !(g->files = calloc(rs->n_files, sizeof(*g->files))))) {
		free(g);
		return NULL;
	}
	g->id = id;
	for (size_t i = 0; i < rs->n_files; i++)
		g->files[g->n_files++] = kfile_ref(rs->files[i]);
	if (rs->n_broken && !(g->broken = calloc(rs->n_broken, sizeof(*g->broken)))) {
		gen_free(g);
		return NULL;
	}
	for (size_t i = 0; i < rs->n_broken; i++) {
		struct kbroken *b = &g->broken[g->n_broken++];
		b->kept = rs->broken[i].kept;
		b->name = strdup(rs->broken[i].name);
		b->why = strdup(rs->broken[i].why);
		if (!b->name || !b->why) {
			gen_free(g);
			return NULL;
		}
	}
	h->gens[h->n_gens++] = g;
	return g;
}

/* Lets go of the stderr tails of e's rules (their bytes counted in
 * h->bytes); before its n_rules changes. */
static void entry_drop_tails(struct khistory *h, struct entry *e)
{
	if (!e->tails)
		return;
	for (size_t i = 0; i < e->n_rules; i++)
		if (e->tails[i]) {
			h->bytes -= strlen(e->tails[i]) + 1;
			free(e->tails[i]);
		}
	h->bytes -= e->n_rules * sizeof(*e->tails);
	free(e->tails);
	e->tails = NULL;
}

static void entry_set_gen(struct entry *e, struct hgen *g)
{
	if (e->gen)
		e->gen->refs--;
	e->gen = g;
	if (g)
		g->refs++;
}

/* size bytes (a multiple of HUGE_PAGE) of zeroed memory on a HUGE_PAGE
 * boundary, huge pages asked for (a hint: without them, small pages);
 * NULL on ENOMEM.  Unmapped with munmap(). */
static void *huge_alloc(size_t size)
{
	size_t len = size + HUGE_PAGE;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	size_t head = (HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE;
	if (head)
		(void)munmap(p, head);
	if (len - head - size)
		(void)munmap(p + head + size, len - head - size);
	(void)madvise(p + head, size, MADV_HUGEPAGE);
	return p + head;
}

/* A piece of size bytes of the current chunk (a new one if it is full);
 * NULL on ENOMEM. */
static void *piece(struct khistory *h, size_t size)
{
	size = (size + PIECE_ALIGN - 1) / PIECE_ALIGN * PIECE_ALIGN;
	if (!h->n_chunks || h->chunk_used + size > HUGE_PAGE) {
		void **v = realloc(h->chunks, (h->n_chunks + 1) * sizeof(*v));
		if (!v)
			return NULL;
		h->chunks = v;
		if (!(v[h->n_chunks] = huge_alloc(HUGE_PAGE)))
			return NULL;
		h->n_chunks++;
		h->chunk_used = 0;
		h->bytes += HUGE_PAGE;
	}
	void *p = (char *)h->chunks[h->n_chunks - 1] + h->chunk_used;
	h->chunk_used += size;
	return p;
}

int khistory_new(size_t cap, struct khistory **out)
{
	struct khistory *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->cap = cap;
	h->max_bytes = SIZE_MAX;
	h->first = 1;
	if (cap >= KHISTORY_BIG) {
		size_t size = cap * sizeof(*h->ring);
		h->ring_mapped = (size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
		h->ring = huge_alloc(h->ring_mapped);
	} else if (cap) {
		h->ring = calloc(cap, sizeof(*h->ring));
	}
	if (cap && !h->ring) {
		free(h);
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

void khistory_free(struct khistory *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->cap; i++) {
		entry_drop_tails(h, &h->ring[i]);
		if (h->ring[i].own)
			free(h->ring[i].rules);
	}
	for (size_t i = 0; i < h->n_gens; i++)
		gen_free(h->gens[i]);
	for (size_t i = 0; i < h->n_chunks; i++)
		(void)munmap(h->chunks[i], HUGE_PAGE);
	free(h->chunks);
	if (h->ring_mapped)
		(void)munmap(h->ring, h->ring_mapped);
	else
		free(h->ring);
	free(h);
}

static struct entry *find(const struct khistory *h, uint64_t serial)
{
	if (!h || !h->cap || !serial)
		return NULL;
	struct entry *e = &h->ring[serial % h->cap];
	return e->serial == serial ? e : NULL;
}

void khistory_set_max_bytes(struct khistory *h, size_t max)
{
	h->max_bytes = max ? max : SIZE_MAX;
}

size_t khistory_max_bytes(const struct khistory *h)
{
	return h && h->max_bytes != SIZE_MAX ? h->max_bytes : 0;
}

/* Whether add more bytes of buffers keep the history within its bound. */
static bool fits(const struct khistory *h, size_t add)
{
	return h->bytes <= h->max_bytes && add <= h->max_bytes - h->bytes;
}

/* Lets go of the oldest entry held before serial, its buffer with it
 * unless the buffer is a piece of a chunk (which stays with its slot, for
 * the slot's next event).  Returns false when there is none. */
static bool evict_oldest(struct khistory *h, uint64_t serial)
{
	for (; h->first < serial; h->first++) {
		struct entry *e = &h->ring[h->first % h->cap];
		if (e->serial != h->first)
			continue; /* never kept, or already gone */
		e->serial = 0;
		h->len--;
		entry_set_gen(e, NULL);
		entry_drop_tails(h, e);
		e->n_rules = 0;
		if (e->own) {
			free(e->rules);
			h->bytes -= e->cap;
			e->rules = NULL;
			e->text = NULL;
			e->cap = 0;
			e->own = false;
		}
		h->first++;
		return true;
	}
	return false;
}

/* A buffer of at least need bytes for e, the slot of serial, within the
 * byte bound: the oldest entries go first until it fits.  NULL when even
 * an empty history has no room for it, or on ENOMEM. */
static void *entry_buffer(struct khistory *h, struct entry *e, uint64_t serial, size_t need,
			  size_t *capp)
{
	/* grown, never shrunk: a slot's buffer is as big as its biggest event */
	size_t cap = need < PIECE_MIN ? PIECE_MIN : need;
	*capp = cap;
	if (!e->cap && h->ring_mapped && cap <= HUGE_PAGE) {
		/* a piece of the current chunk costs nothing more; a new chunk
		 * is taken only while the chunks stay within half the bound
		 * (else a buffer of its own): chunks are never given back, and
		 * the other half is for the buffers of the events that outgrow
		 * their pieces, which the oldest entries give back */
		size_t size = (cap + PIECE_ALIGN - 1) / PIECE_ALIGN * PIECE_ALIGN;
		if ((h->n_chunks && h->chunk_used + size <= HUGE_PAGE) ||
		    ((h->n_chunks + 1) * HUGE_PAGE <= h->max_bytes / 2 && fits(h, HUGE_PAGE)))
			return piece(h, cap);
	}
	/* nothing in the old buffer is kept: the entry is written anew */
	size_t old = e->own ? e->cap : 0;
	if (h->n_chunks * HUGE_PAGE + cap > h->max_bytes)
		return NULL; /* no room even alone: the others stay */
	while (cap > old && !fits(h, cap - old))
		if (!evict_oldest(h, serial))
			return NULL;
	void *buf = malloc(cap);
	if (!buf)
		return NULL;
	if (e->own)
		free(e->rules);
	h->bytes += cap - old;
	e->own = true;
	return buf;
}

int khistory_add(struct khistory *h, uint64_t serial, const struct kevent *ev,
		 const struct krule *const *rules, size_t n, bool dropped,
		 const struct kruleset *rs, uint64_t generation)
{
	if (!h->cap)
		return 0;
	struct entry *e = &h->ring[serial % h->cap];
	size_t named = n < KHISTORY_RULES_MAX ? n : KHISTORY_RULES_MAX;
	size_t olen = strlen(ev->object) + 1, slen = strlen(ev->signal) + 1;
	size_t plen = strlen(ev->payload) + 1;
	size_t need = named * sizeof(struct hrule) + olen + slen + plen;
	for (size_t i = 0; i < named; i++)
		need += strlen(rules[i]->name) + 1;
	if (e->serial)
		h->len--;
	entry_drop_tails(h, e);
	e->serial = 0;
	e->n_rules = 0;
	entry_set_gen(e, NULL);
	/* what the ring no longer holds: the slot's entry of cap events ago */
	if (serial >= h->cap && h->first < serial - h->cap + 1)
		h->first = serial - h->cap + 1;
	if (need > e->cap) {
		size_t cap;
		void *buf = entry_buffer(h, e, serial, need, &cap);
		if (!buf) {
			h->lost++;
			return -ENOMEM;
		}
		e->rules = buf;
		e->cap = cap;
	}
	e->text = (char *)(e->rules + named);
	memcpy(e->text, ev->object, olen);
	memcpy(e->text + olen, ev->signal, slen);
	size_t off = olen + slen;
	for (size_t i = 0; i < named; i++) {
		size_t len = strlen(rules[i]->name) + 1;
		memcpy(e->text + off, rules[i]->name, len);
		e->rules[i] = (struct hrule){
			.rule = rules[i],
			.name = (uint32_t)off,
			.state = !krule_runs_something(rules[i]) ? H_MATCHED
				 : dropped			 ? H_DROPPED
				 : rules[i]->debounce_ms	 ? H_DEBOUNCED
								 : H_QUEUED,
		};
		off += len;
	}
	memcpy(e->text + off, ev->payload, plen);
	e->payload = (uint32_t)off;
	entry_set_gen(e, rs ? gen_of(h, rs, generation) : NULL);
	e->n_broken = rs ? (uint32_t)rs->n_broken : 0;
	e->serial = serial;
	e->seqnum = ev->seqnum;
	e->timestamp = ev->timestamp;
	e->source = (uint8_t)ev->source;
	e->type = (uint8_t)ev->type;
	e->n_rules = (uint16_t)named;
	e->n_matched = (uint32_t)n;
	e->signal = (uint32_t)olen;
	h->len++;
	h->last = serial;
	return 0;
}

static void apply(struct hrule *r, const struct krun_report *rep)
{
	if (rep->unit)
		r->unit_run = rep->unit_run;
	switch (rep->outcome) {
	case KRUN_STARTED:
		r->state = H_RUNNING;
		r->pid = (int32_t)rep->pid;
		return;
	case KRUN_EXITED:
	case KRUN_KILLED:
		r->state = rep->outcome == KRUN_EXITED ? H_EXITED : H_KILLED;
		r->status = rep->status;
		r->timed_out = rep->timed_out;
		r->duration_ms =
			rep->duration_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)rep->duration_ms;
		return;
	case KRUN_START_FAILED:
		r->state = H_START_FAILED;
		r->status = rep->error;
		return;
	case KRUN_DRY_RUN:
		r->state = H_DRY_RUN;
		return;
	case KRUN_RATELIMITED:
		r->state = H_RATELIMITED;
		return;
	case KRUN_SKIPPED:
		r->state = H_SKIPPED;
		return;
	}
}

/* Keeps a run's stderr tail with its rule, within the history's bound
 * in bytes (without room, not kept). */
static void set_tail(struct khistory *h, struct entry *e, size_t i, const char *tail)
{
	if (!tail || !tail[0] || (e->tails && e->tails[i]))
		return;
	size_t len = strlen(tail) + 1;
	size_t table = e->tails ? 0 : e->n_rules * sizeof(*e->tails);
	if (!fits(h, len + table))
		return;
	if (!e->tails && !(e->tails = calloc(e->n_rules, sizeof(*e->tails))))
		return;
	h->bytes += table;
	if ((e->tails[i] = strdup(tail)))
		h->bytes += len;
}

void khistory_report(struct khistory *h, uint64_t serial, const struct krun_report *rep)
{
	struct entry *e = find(h, serial);
	if (!e)
		return;
	for (size_t i = 0; i < e->n_rules; i++)
		if (e->rules[i].rule == rep->rule) {
			apply(&e->rules[i], rep);
			set_tail(h, e, i, rep->stderr_tail);
			return;
		}
}

void khistory_done(struct khistory *h, uint64_t serial)
{
	struct entry *e = find(h, serial);
	if (!e)
		return;
	for (size_t i = 0; i < e->n_rules; i++) {
		if (e->rules[i].state == H_QUEUED)
			e->rules[i].state = H_NOT_RUN;
		/* its file may go now, unless its run waits for quiet: that
		 * one holds the file, and its own job reports as this event;
		 * or it runs on as a unit, which holds the file and reports
		 * its end */
		if (e->rules[i].state != H_DEBOUNCED &&
		    !(e->rules[i].unit_run && e->rules[i].state == H_RUNNING))
			e->rules[i].rule = NULL;
	}
}

/* The oldest serial the history may hold. */
static uint64_t oldest_serial(const struct khistory *h)
{
	return h ? h->first : 1;
}

const struct khistory_entry *khistory_find(const struct khistory *h, int source, uint64_t seqnum,
					   bool last)
{
	uint64_t oldest = oldest_serial(h);
	for (uint64_t s = h ? h->last : 0; s >= oldest && s; s--) {
		const struct entry *e = find(h, s);
		if (!e || (source >= 0 && e->source != source) || (!last && e->seqnum != seqnum))
			continue;
		return (const struct khistory_entry *)e;
	}
	return NULL;
}

const struct khistory_entry *khistory_oldest(const struct khistory *h)
{
	uint64_t oldest = oldest_serial(h);
	for (uint64_t s = oldest; h && s <= h->last; s++)
		if (find(h, s))
			return (const struct khistory_entry *)find(h, s);
	return NULL;
}

int khistory_entry_event(const struct khistory_entry *he, struct kevent **out)
{
	const struct entry *e = (const struct entry *)he;
	const char *why;
	return kevent_new(e->type, e->text, e->text + e->signal, e->text + e->payload,
			  (enum kevent_source)e->source, e->seqnum, e->timestamp, NULL, 0, out,
			  &why);
}

void khistory_entry_where(const struct khistory_entry *he, enum kevent_source *source,
			  uint64_t *seqnum, uint64_t *timestamp)
{
	const struct entry *e = (const struct entry *)he;
	*source = (enum kevent_source)e->source;
	*seqnum = e->seqnum;
	*timestamp = e->timestamp;
}

const struct kbroken *khistory_entry_broken(const struct khistory_entry *he, size_t *n)
{
	const struct entry *e = (const struct entry *)he;
	*n = e->gen ? e->gen->n_broken : 0;
	return e->gen ? e->gen->broken : NULL;
}

struct kfile *const *khistory_entry_files(const struct khistory_entry *he, size_t *n)
{
	const struct entry *e = (const struct entry *)he;
	*n = e->gen ? e->gen->n_files : 0;
	return e->gen ? e->gen->files : NULL;
}

size_t khistory_generations(const struct khistory *h)
{
	return h ? h->n_gens : 0;
}

size_t khistory_capacity(const struct khistory *h)
{
	return h ? h->cap : 0;
}

size_t khistory_len(const struct khistory *h)
{
	return h ? h->len : 0;
}

size_t khistory_bytes(const struct khistory *h)
{
	return h ? sizeof(*h) + h->cap * sizeof(*h->ring) + h->bytes : 0;
}

uint64_t khistory_lost(const struct khistory *h)
{
	return h ? h->lost : 0;
}

/* unit: the run's unit, for a transient rule's; else NULL. */
static void put_outcome_text(struct strbuf *out, const struct hrule *r, const char *unit)
{
	if (unit && r->state == H_RUNNING) {
		strbuf_puts(out, "running as ");
		strbuf_put_escaped(out, unit);
		return;
	}
	switch ((enum hstate)r->state) {
	case H_MATCHED:
		strbuf_puts(out, "matched (runs nothing)");
		break;
	case H_QUEUED:
		strbuf_puts(out, "queued");
		break;
	case H_RUNNING:
		strbuf_printf(out, "running (pid %d)", (int)r->pid);
		break;
	case H_EXITED:
		strbuf_printf(out, "exited %d after %" PRIu32 " ms", (int)r->status,
			      r->duration_ms);
		break;
	case H_KILLED: {
		const char *sig = sigabbrev_np(r->status);
		if (sig)
			strbuf_printf(out, "killed by SIG%s", sig);
		else
			strbuf_printf(out, "killed by signal %d", (int)r->status);
		strbuf_printf(out, " after %" PRIu32 " ms", r->duration_ms);
		break;
	}
	case H_START_FAILED:
		strbuf_printf(out, "failed to start: %s", strerror(-r->status));
		break;
	case H_DRY_RUN:
		strbuf_puts(out, "dry-run (not run)");
		break;
	case H_RATELIMITED:
		strbuf_puts(out, "rate-limited (not run)");
		break;
	case H_NOT_RUN:
		strbuf_puts(out, "not run (keventd was stopping)");
		break;
	case H_DROPPED:
		strbuf_puts(out, "dropped (keventd was stopping)");
		break;
	case H_DEBOUNCED:
		strbuf_puts(out, "debounced (waiting for quiet, or replaced by a later event)");
		break;
	case H_SKIPPED:
		strbuf_puts(out, "skipped (no active session)");
		break;
	}
	if (r->timed_out)
		strbuf_puts(out, ", timed out");
	if (unit) {
		strbuf_puts(out, " (");
		strbuf_put_escaped(out, unit);
		strbuf_putc(out, ')');
	}
}

/* The unit of a transient rule's run in e, or NULL: free()d by the caller. */
static char *unit_of(const struct entry *e, const struct hrule *r)
{
	char *unit = NULL;
	if (r->unit_run &&
	    ktransient_unit_name(e->text + r->name, kinstance_id(), r->unit_run, &unit) < 0)
		unit = NULL;
	return unit;
}

void khistory_put_report(struct strbuf *out, const struct krun_report *rep)
{
	struct hrule r = {0};
	apply(&r, rep);
	put_outcome_text(out, &r, rep->unit);
}

void khistory_put_tail(struct strbuf *out, const char *tail, const char *indent)
{
	while (tail && *tail) {
		const char *nl = strchr(tail, '\n');
		size_t len = nl ? (size_t)(nl - tail) : strlen(tail);
		_cleanup_free_ char *line = strndup(tail, len);
		strbuf_puts(out, indent);
		strbuf_puts(out, "stderr: ");
		if (line)
			strbuf_put_escaped(out, line);
		strbuf_putc(out, '\n');
		tail += len + (nl ? 1 : 0);
	}
}

/* The last lines of the stderr of rule i of e, or NULL. */
static const char *tail_of(const struct entry *e, size_t i)
{
	return e->tails ? e->tails[i] : NULL;
}

/* A rule's outcome as JSON keys, after its name. */
static void put_outcome_json(struct strbuf *out, const struct entry *e, const struct hrule *r)
{
	const char *tail = tail_of(e, (size_t)(r - e->rules));
	strbuf_printf(out, ",\"outcome\":\"%s\"", state_names[r->state]);
	if (r->state == H_RUNNING && !r->unit_run)
		strbuf_printf(out, ",\"pid\":%d", (int)r->pid);
	if (r->state == H_EXITED)
		strbuf_printf(out, ",\"status\":%d", (int)r->status);
	if (r->state == H_KILLED)
		strbuf_printf(out, ",\"signal\":%d", (int)r->status);
	if (r->state == H_EXITED || r->state == H_KILLED)
		strbuf_printf(out, ",\"duration_ms\":%" PRIu32 ",\"timed_out\":%s", r->duration_ms,
			      r->timed_out ? "true" : "false");
	if (r->state == H_START_FAILED) {
		strbuf_puts(out, ",\"error\":");
		strbuf_json(out, strerror(-r->status));
	}
	_cleanup_free_ char *unit = unit_of(e, r);
	if (unit) {
		strbuf_puts(out, ",\"unit\":");
		strbuf_json(out, unit);
	}
	if (tail) {
		strbuf_puts(out, ",\"stderr\":");
		strbuf_json(out, tail);
	}
}

void khistory_entry_put_runs(const struct khistory_entry *he, bool json, struct strbuf *out)
{
	const struct entry *e = (const struct entry *)he;
	size_t shown = 0;
	for (size_t i = 0; i < e->n_rules; i++) {
		const struct hrule *r = &e->rules[i];
		if (r->state == H_MATCHED)
			continue;
		if (json) {
			strbuf_puts(out, shown ? ",{\"name\":" : "{\"runs\":[{\"name\":");
			strbuf_json(out, e->text + r->name);
			put_outcome_json(out, e, r);
			strbuf_putc(out, '}');
		} else {
			strbuf_puts(out, shown ? "  " : "what became of its runs:\n  ");
			strbuf_put_escaped(out, e->text + r->name);
			strbuf_puts(out, ": ");
			_cleanup_free_ char *unit = unit_of(e, r);
			put_outcome_text(out, r, unit);
			strbuf_putc(out, '\n');
			khistory_put_tail(out, tail_of(e, i), "    ");
		}
		shown++;
	}
	if (json && shown)
		strbuf_puts(out, "]}\n");
}

static void render_text(const struct entry *e, struct strbuf *out)
{
	strbuf_put_time(out, e->timestamp);
	strbuf_printf(out, " %s seq=%" PRIu64 " %s ", kevent_source_name(e->source), e->seqnum,
		      kevent_type_name(e->type));
	strbuf_put_escaped(out, e->text);
	strbuf_putc(out, ' ');
	strbuf_put_escaped(out, e->text + e->signal);
	strbuf_puts(out, e->n_matched ? "\n" : "\n  (no rule matched)\n");
	for (size_t i = 0; i < e->n_rules; i++) {
		strbuf_puts(out, "  ");
		strbuf_put_escaped(out, e->text + e->rules[i].name);
		strbuf_puts(out, ": ");
		_cleanup_free_ char *unit = unit_of(e, &e->rules[i]);
		put_outcome_text(out, &e->rules[i], unit);
		strbuf_putc(out, '\n');
		khistory_put_tail(out, tail_of(e, i), "    ");
	}
	if (e->n_matched > e->n_rules)
		strbuf_printf(out, "  (and %" PRIu32 " more rules)\n", e->n_matched - e->n_rules);
	if (e->n_broken)
		strbuf_printf(out,
			      "  note: %" PRIu32 " rule file%s broken at the time (keventctl "
			      "explain %" PRIu64 " says which)\n",
			      e->n_broken, e->n_broken == 1 ? " was" : "s were", e->seqnum);
}

static void render_json(const struct entry *e, struct strbuf *out)
{
	kevent_json_head(out, e->seqnum, e->timestamp, (enum kevent_source)e->source,
			 (enum kevent_type)e->type, e->text, e->text + e->signal);
	strbuf_puts(out, ",\"rules\":[");
	for (size_t i = 0; i < e->n_rules; i++) {
		const struct hrule *r = &e->rules[i];
		strbuf_puts(out, i ? ",{\"name\":" : "{\"name\":");
		strbuf_json(out, e->text + r->name);
		put_outcome_json(out, e, r);
		strbuf_putc(out, '}');
	}
	strbuf_printf(out, "],\"matched\":%" PRIu32, e->n_matched);
	if (e->n_broken)
		strbuf_printf(out, ",\"broken_files\":%" PRIu32, e->n_broken);
	strbuf_puts(out, "}\n");
}

/* Whether e passes f: its source and type, a rule named, a run failed. */
static bool entry_passes(const struct entry *e, const struct kfilter *f)
{
	if (!kfilter_event(f, (enum kevent_source)e->source, (enum kevent_type)e->type))
		return false;
	bool named = !f->rule[0], failed = !f->failed;
	for (size_t i = 0; i < e->n_rules && !(named && failed); i++) {
		const struct hrule *r = &e->rules[i];
		const char *name = e->text + r->name;
		named = named || kfilter_rules(f, &name, 1);
		failed = failed || (r->state == H_EXITED && r->status != 0) ||
			 r->state == H_KILLED || r->state == H_START_FAILED;
	}
	return named && failed;
}

void khistory_cursor_init(const struct khistory *h, size_t n, bool json,
			  struct khistory_cursor *cur)
{
	khistory_cursor_init_filtered(h, n, json, NULL, cur);
}

void khistory_cursor_init_filtered(const struct khistory *h, size_t n, bool json,
				   const struct kfilter *f, struct khistory_cursor *cur)
{
	*cur = (struct khistory_cursor){.next = 1, .end = 0, .json = json};
	if (f)
		cur->filter = *f;
	else
		kfilter_init(&cur->filter);
	if (!h || !h->len)
		return;
	if (!n || n > h->len)
		n = h->len;
	/* the ring holds serials from first to last, each at serial % cap,
	 * with a hole where an entry could not be kept: the first of the last
	 * n (that pass the filter) */
	uint64_t first = h->last, oldest = oldest_serial(h);
	for (size_t found = 0; first >= oldest; first--) {
		const struct entry *e = find(h, first);
		if (e && entry_passes(e, &cur->filter) && ++found == n)
			break;
	}
	cur->next = first < oldest ? oldest : first;
	cur->end = h->last;
}

bool khistory_cursor_next(const struct khistory *h, struct khistory_cursor *cur, struct strbuf *out)
{
	/* what left the history since the cursor was made is skipped, and
	 * counted (with any entry among it that could not be kept) */
	uint64_t oldest = oldest_serial(h);
	if (cur->next < oldest && cur->next <= cur->end) {
		uint64_t to = oldest <= cur->end ? oldest : cur->end + 1;
		cur->skipped += to - cur->next;
		cur->next = to;
	}
	for (; cur->next <= cur->end; cur->next++) {
		const struct entry *e = find(h, cur->next);
		if (!e || !entry_passes(e, &cur->filter))
			continue;
		if (cur->json)
			render_json(e, out);
		else
			render_text(e, out);
		cur->next++;
		return true;
	}
	return false;
}

void khistory_render(const struct khistory *h, size_t n, bool json, struct strbuf *out)
{
	struct khistory_cursor cur;
	khistory_cursor_init(h, n, json, &cur);
	while (khistory_cursor_next(h, &cur, out))
		;
}
