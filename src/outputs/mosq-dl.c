// SPDX-License-Identifier: GPL-2.0-or-later
/* libmosquitto, loaded when a broker is configured (mosq-dl.h). */
#include "mosq-dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

struct kmosq_api kmosq;

int kmosq_load(const char **why)
{
	static void *dl;
	static int loaded; /* 0: not tried; 1: loaded; < 0: -errno */
	static const char *failed;
	if (loaded) {
		*why = failed;
		return loaded < 0 ? loaded : 0;
	}
	dl = dlopen(KMOSQ_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		failed = dlerror();
		loaded = -ENOENT;
		*why = failed;
		return loaded;
	}
	struct kmosq_api api;
#define KMOSQ_LOAD(name)                                                         \
	if (!(api.name = (__typeof__(api.name))dlsym(dl, "mosquitto_" #name))) { \
		failed = dlerror();                                              \
		loaded = -ENOSYS;                                                \
		*why = failed;                                                   \
		dlclose(dl);                                                     \
		dl = NULL;                                                       \
		return loaded;                                                   \
	}
	KMOSQ_SYMS(KMOSQ_LOAD)
#undef KMOSQ_LOAD
	kmosq = api;
	loaded = 1;
	return 0;
}
