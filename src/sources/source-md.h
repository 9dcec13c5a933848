/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The "md" source: Linux software RAID arrays' failures, degraded and
 * whole states, and their syncs with their progress (md.h, keventd(8)).
 */
#ifndef KEVENT_SOURCE_MD_H
#define KEVENT_SOURCE_MD_H

#include "source.h"

int ksource_md_new(const struct ksink *sink, struct ksource **out);

#endif
