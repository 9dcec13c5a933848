// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

struct kobjq {
	struct kjob *head, *tail;
	bool busy;
	size_t heap_pos; /* in the ready heap of its head job's source, or SIZE_MAX */
};

/* Objects with a job that may start, oldest head job first. */
struct kheap {
	struct kobjq **v;
	size_t n, cap;
};

struct ksched {
	struct hashmap *objects; /* object -> kobjq, only while it has jobs */
	/* one ready heap per source, served in turn starting at turn */
	struct kheap ready[KEVENT_SOURCE_MAX];
	size_t turn;
	uint64_t arrivals;
	size_t max_running, max_pending;
	size_t running, pending;
	size_t pending_of[KEVENT_SOURCE_MAX];
	bool hold;
	bool pumping; /* a start callback may finish its job at once */
	ksched_start_fn start;
	void *userdata;
};

/* The job's source, as an index that is always in range. */
static enum kevent_source source_of(const struct kjob *job)
{
	enum kevent_source src = job->ev->source;
	return (unsigned)src < KEVENT_SOURCE_MAX ? src : KEVENT_SOURCE_SOCKET;
}

int kjob_new(struct kevent *ev, const struct krule *const *rules, size_t n, struct kjob **out)
{
	struct kjob *job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->rules = calloc(n + 1, sizeof(*job->rules));
	job->files = calloc(n + 1, sizeof(*job->files));
	if (!job->rules || !job->files) {
		free(job->rules);
		free(job->files);
		free(job);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		job->rules[i] = rules[i];
		struct kfile *f = (struct kfile *)rules[i]->file;
		if (!job->n_files || job->files[job->n_files - 1] != f)
			job->files[job->n_files++] = kfile_ref(f);
	}
	job->n_rules = n;
	job->ev = ev;
	*out = job;
	return 0;
}

void kjob_free(struct kjob *job)
{
	if (!job)
		return;
	for (size_t i = 0; i < job->n_files; i++)
		kfile_unref(job->files[i]);
	free(job->files);
	free(job->rules);
	kevent_free(job->ev);
	free(job);
}

int ksched_new(size_t max_running, size_t max_pending, ksched_start_fn start, void *userdata,
	       struct ksched **out)
{
	struct ksched *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (hashmap_new(&s->objects) < 0) {
		free(s);
		return -ENOMEM;
	}
	s->max_running = max_running ? max_running : 1;
	s->max_pending = max_pending ? max_pending : 1;
	s->start = start;
	s->userdata = userdata;
	*out = s;
	return 0;
}

static void free_objq(void *p)
{
	struct kobjq *q = p;
	while (q->head) {
		struct kjob *j = q->head;
		q->head = j->next_in_object;
		kjob_free(j);
	}
	free(q);
}

void ksched_free(struct ksched *s)
{
	if (!s)
		return;
	hashmap_free(s->objects, free_objq);
	for (size_t i = 0; i < KEVENT_SOURCE_MAX; i++)
		free(s->ready[i].v);
	free(s);
}

static bool older(const struct kobjq *a, const struct kobjq *b)
{
	return a->head->order < b->head->order;
}

static void heap_swap(struct kheap *h, size_t i, size_t j)
{
	struct kobjq *t = h->v[i];
	h->v[i] = h->v[j];
	h->v[j] = t;
	h->v[i]->heap_pos = i;
	h->v[j]->heap_pos = j;
}

/* Room in the heap for n objects, so make_ready() never fails. */
static int heap_reserve(struct kheap *h, size_t n)
{
	if (n <= h->cap)
		return 0;
	size_t cap = h->cap ? h->cap : 64;
	while (cap < n)
		cap *= 2;
	struct kobjq **v = realloc(h->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	h->v = v;
	h->cap = cap;
	return 0;
}

/* Puts q in the ready heap of its head job's source, if it may start. */
static void make_ready(struct ksched *s, struct kobjq *q)
{
	if (q->heap_pos != SIZE_MAX || q->busy || !q->head)
		return;
	struct kheap *h = &s->ready[source_of(q->head)];
	size_t i = h->n++;
	h->v[i] = q;
	q->heap_pos = i;
	while (i > 0 && older(h->v[i], h->v[(i - 1) / 2])) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static struct kobjq *pop_oldest(struct kheap *h)
{
	struct kobjq *top = h->v[0];
	heap_swap(h, 0, --h->n);
	top->heap_pos = SIZE_MAX;
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && older(h->v[l], h->v[m]))
			m = l;
		if (r < h->n && older(h->v[r], h->v[m]))
			m = r;
		if (m == i)
			break;
		heap_swap(h, i, m);
		i = m;
	}
	return top;
}

/* The next object to start: the oldest of the next source in turn that
 * has one; that source then goes to the back of the line. */
static struct kobjq *next_ready(struct ksched *s)
{
	for (size_t k = 0; k < KEVENT_SOURCE_MAX; k++) {
		size_t src = (s->turn + k) % KEVENT_SOURCE_MAX;
		if (s->ready[src].n) {
			s->turn = (src + 1) % KEVENT_SOURCE_MAX;
			return pop_oldest(&s->ready[src]);
		}
	}
	return NULL;
}

void ksched_pump(struct ksched *s)
{
	if (s->pumping)
		return; /* the outer loop goes on with what changed */
	s->pumping = true;
	while (!s->hold && s->running < s->max_running) {
		struct kobjq *q = next_ready(s);
		if (!q)
			break;
		q->busy = true;
		s->running++;
		s->start(s, q->head, s->userdata);
	}
	s->pumping = false;
}

int ksched_submit(struct ksched *s, struct kjob *job)
{
	enum kevent_source src = source_of(job);
	struct kobjq *q = hashmap_get(s->objects, job->ev->object);
	size_t objects = hashmap_size(s->objects) + !q;
	/* the objects in a source's heap have a head job of that source each,
	 * so there are never more of them than of its jobs, nor of objects */
	size_t need = s->pending_of[src] + 1 < objects ? s->pending_of[src] + 1 : objects;
	if (heap_reserve(&s->ready[src], need) < 0) {
		kjob_free(job);
		return -ENOMEM;
	}
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q || hashmap_put(s->objects, job->ev->object, q, NULL) < 0) {
			free(q);
			kjob_free(job);
			return -ENOMEM;
		}
		q->heap_pos = SIZE_MAX;
	}
	job->order = ++s->arrivals;
	job->q = q;
	job->next_in_object = NULL;
	if (q->tail)
		q->tail->next_in_object = job;
	else
		q->head = job;
	q->tail = job;
	s->pending++;
	s->pending_of[src]++;
	make_ready(s, q);
	ksched_pump(s);
	return 0;
}

void ksched_done(struct ksched *s, struct kjob *job)
{
	struct kobjq *q = job->q;
	/* the running job is always the head of its object's queue */
	q->head = job->next_in_object;
	if (!q->head)
		q->tail = NULL;
	q->busy = false;
	s->running--;
	s->pending--;
	s->pending_of[source_of(job)]--;
	if (!q->head)
		free(hashmap_remove(s->objects, job->ev->object));
	else
		make_ready(s, q);
	kjob_free(job);
	ksched_pump(s);
}

bool ksched_full(const struct ksched *s, enum kevent_source src)
{
	return ksched_pending_of(s, src) >= s->max_pending;
}

bool ksched_has_room(const struct ksched *s, enum kevent_source src)
{
	return ksched_pending_of(s, src) <= s->max_pending * 3 / 4;
}

size_t ksched_room(const struct ksched *s, enum kevent_source src)
{
	size_t n = ksched_pending_of(s, src);
	return n < s->max_pending ? s->max_pending - n : 0;
}

size_t ksched_share(const struct ksched *s)
{
	return s->max_pending;
}

size_t ksched_pending(const struct ksched *s)
{
	return s->pending;
}

size_t ksched_pending_of(const struct ksched *s, enum kevent_source src)
{
	return (unsigned)src < KEVENT_SOURCE_MAX ? s->pending_of[src] : 0;
}

size_t ksched_running(const struct ksched *s)
{
	return s->running;
}

void ksched_hold(struct ksched *s, bool hold)
{
	s->hold = hold;
	if (!hold)
		ksched_pump(s);
}

struct drop {
	struct ksched *s;
	void (*fn)(const struct kjob *job, void *userdata);
	void *userdata;
	size_t n;
};

/* Drops the jobs of one object that have not started; removes the object
 * (returns 1) unless its head job is running. */
static int drop_object(const char *key, void *value, void *userdata)
{
	struct drop *d = userdata;
	struct kobjq *q = value;
	struct kjob *keep = q->busy ? q->head : NULL;
	(void)key;
	for (struct kjob *j = keep ? keep->next_in_object : q->head, *next; j; j = next) {
		next = j->next_in_object;
		d->fn(j, d->userdata);
		d->s->pending--;
		d->s->pending_of[source_of(j)]--;
		d->n++;
		kjob_free(j);
	}
	if (keep) {
		keep->next_in_object = NULL;
		q->tail = keep;
		return 0;
	}
	free(q);
	return 1;
}

size_t ksched_drop_queued(struct ksched *s, void (*fn)(const struct kjob *job, void *userdata),
			  void *userdata)
{
	struct drop d = {.s = s, .fn = fn, .userdata = userdata};
	hashmap_sweep(s->objects, drop_object, &d);
	/* what was ready had not started: every heap is empty now */
	for (size_t i = 0; i < KEVENT_SOURCE_MAX; i++)
		s->ready[i].n = 0;
	return d.n;
}
