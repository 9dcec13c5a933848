// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

struct kobjq {
	struct kjob *head, *tail;
	bool busy;
	size_t heap_pos; /* in the ready heap, or SIZE_MAX */
};

struct ksched {
	struct hashmap *objects; /* object -> kobjq, only while it has jobs */
	/* objects with a job that may start, oldest head job first */
	struct kobjq **heap;
	size_t n_heap, cap_heap;
	uint64_t arrivals;
	size_t max_running, max_pending;
	size_t running, pending;
	bool hold;
	bool pumping; /* a start callback may finish its job at once */
	ksched_start_fn start;
	void *userdata;
};

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
	free(s->heap);
	free(s);
}

static bool older(const struct kobjq *a, const struct kobjq *b)
{
	return a->head->order < b->head->order;
}

static void heap_swap(struct ksched *s, size_t i, size_t j)
{
	struct kobjq *t = s->heap[i];
	s->heap[i] = s->heap[j];
	s->heap[j] = t;
	s->heap[i]->heap_pos = i;
	s->heap[j]->heap_pos = j;
}

/* Room in the heap for every object with jobs, so make_ready() never fails. */
static int heap_reserve(struct ksched *s, size_t n)
{
	if (n <= s->cap_heap)
		return 0;
	size_t cap = s->cap_heap ? s->cap_heap : 64;
	while (cap < n)
		cap *= 2;
	struct kobjq **h = realloc(s->heap, cap * sizeof(*h));
	if (!h)
		return -ENOMEM;
	s->heap = h;
	s->cap_heap = cap;
	return 0;
}

static void make_ready(struct ksched *s, struct kobjq *q)
{
	if (q->heap_pos != SIZE_MAX || q->busy || !q->head)
		return;
	size_t i = s->n_heap++;
	s->heap[i] = q;
	q->heap_pos = i;
	while (i > 0 && older(s->heap[i], s->heap[(i - 1) / 2])) {
		heap_swap(s, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static struct kobjq *pop_oldest(struct ksched *s)
{
	struct kobjq *top = s->heap[0];
	heap_swap(s, 0, --s->n_heap);
	top->heap_pos = SIZE_MAX;
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < s->n_heap && older(s->heap[l], s->heap[m]))
			m = l;
		if (r < s->n_heap && older(s->heap[r], s->heap[m]))
			m = r;
		if (m == i)
			break;
		heap_swap(s, i, m);
		i = m;
	}
	return top;
}

void ksched_pump(struct ksched *s)
{
	if (s->pumping)
		return; /* the outer loop goes on with what changed */
	s->pumping = true;
	while (!s->hold && s->running < s->max_running && s->n_heap) {
		struct kobjq *q = pop_oldest(s);
		q->busy = true;
		s->running++;
		s->start(s, q->head, s->userdata);
	}
	s->pumping = false;
}

int ksched_submit(struct ksched *s, struct kjob *job)
{
	struct kobjq *q = hashmap_get(s->objects, job->ev->object);
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q || heap_reserve(s, hashmap_size(s->objects) + 1) < 0 ||
		    hashmap_put(s->objects, job->ev->object, q, NULL) < 0) {
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
	if (!q->head)
		free(hashmap_remove(s->objects, job->ev->object));
	else
		make_ready(s, q);
	kjob_free(job);
	ksched_pump(s);
}

bool ksched_full(const struct ksched *s)
{
	return s->pending >= s->max_pending;
}

bool ksched_has_room(const struct ksched *s)
{
	return s->pending <= s->max_pending * 3 / 4;
}

size_t ksched_room(const struct ksched *s)
{
	return s->pending < s->max_pending ? s->max_pending - s->pending : 0;
}

size_t ksched_pending(const struct ksched *s)
{
	return s->pending;
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
