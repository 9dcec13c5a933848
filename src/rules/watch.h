/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live reload: inotify on every rule directory and on the drop-in
 * directories (NAME.yaml.d/) in them.  A burst of changes (an
 * editor's save, a package upgrade) becomes one call of changed(), 100 ms
 * after the last change and at most 500 ms after the first.  A rule
 * directory that does not exist is watched for through its nearest
 * existing parent.
 */
#ifndef KEVENT_WATCH_H
#define KEVENT_WATCH_H

#include <stddef.h>

#include "loop.h"

struct kwatch;

/* Watches dirs (which must outlive the watch).  0 or -errno. */
int kwatch_new(struct kloop *loop, const char *const *dirs, size_t n_dirs,
	       void (*changed)(void *userdata), void *userdata, struct kwatch **out);
/* NULL is fine. */
void kwatch_free(struct kwatch *w);

#endif
