/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The "fs" source: mounts, remounts and umounts, file system errors, and
 * free space and inodes past keventd.yaml's thresholds (fs.h, keventd(8)).
 */
#ifndef KEVENT_SOURCE_FS_H
#define KEVENT_SOURCE_FS_H

#include "fs.h"
#include "source.h"

/* cfg: keventd.yaml's "fs:", kept by the caller while the source lives;
 * NULL: the defaults. */
int ksource_fs_new(const struct ksink *sink, const struct kfs_config *cfg, struct ksource **out);
/* Applies another "fs:" (a reload), kept by the caller from now on: the
 * mounts watched follow its mounts: (those it adds are looked at as at
 * start-up), and a file system whose thresholds changed is looked at
 * now, a crossing of the new lines reported as one (not Initial). */
void ksource_fs_configure(struct ksource *s, const struct kfs_config *cfg);

#endif
