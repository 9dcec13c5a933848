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

#endif
