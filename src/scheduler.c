// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

struct kobjq {
	struct kjob *head, *tail;
	bool busy;
	bool ready; /* on the ready list */
	struct kobjq *next_ready;
};

struct ksched {
	struct hashmap *objects; /* object -> kobjq, only while it has jobs */
	struct kobjq *ready_head, *ready_tail;
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
	free(s);
}

static void make_ready(struct ksched *s, struct kobjq *q)
{
	if (q->ready || q->busy || !q->head)
		return;
	q->ready = true;
	q->next_ready = NULL;
	if (s->ready_tail)
		s->ready_tail->next_ready = q;
	else
		s->ready_head = q;
	s->ready_tail = q;
}

void ksched_pump(struct ksched *s)
{
	if (s->pumping)
		return; /* the outer loop goes on with what changed */
	s->pumping = true;
	while (!s->hold && s->running < s->max_running && s->ready_head) {
		struct kobjq *q = s->ready_head;
		s->ready_head = q->next_ready;
		if (!s->ready_head)
			s->ready_tail = NULL;
		q->ready = false;
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
		if (!q || hashmap_put(s->objects, job->ev->object, q, NULL) < 0) {
			free(q);
			kjob_free(job);
			return -ENOMEM;
		}
	}
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
