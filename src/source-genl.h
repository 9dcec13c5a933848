/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef KEVENT_SOURCE_GENL_H
#define KEVENT_SOURCE_GENL_H

#include "source.h"

int ksource_kernel_new(const struct ksink *sink, struct ksource **out);
int ksource_thermal_new(const struct ksink *sink, const char *sysfs_root, struct ksource **out);

#endif
