// SPDX-License-Identifier: GPL-2.0-or-later
/* libcurl, loaded when a notification target is configured (curl-dl.h). */
#include "curl-dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

struct kcurl_api kcurl;

int kcurl_load(const char **why)
{
	static void *dl;
	static int loaded; /* 0: not tried; 1: loaded; < 0: -errno */
	static const char *failed;
	if (loaded) {
		*why = failed;
		return loaded < 0 ? loaded : 0;
	}
	dl = dlopen(KCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		failed = dlerror();
		loaded = -ENOENT;
		*why = failed;
		return loaded;
	}
	struct kcurl_api api;
#define KCURL_LOAD(name)                                                    \
	if (!(api.name = (__typeof__(api.name))dlsym(dl, "curl_" #name))) { \
		failed = dlerror();                                         \
		loaded = -ENOSYS;                                           \
		*why = failed;                                              \
		dlclose(dl);                                                \
		dl = NULL;                                                  \
		return loaded;                                              \
	}
	KCURL_SYMS(KCURL_LOAD)
#undef KCURL_LOAD
	if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		failed = "curl_global_init() failed";
		loaded = -EIO;
		*why = failed;
		return loaded;
	}
	kcurl = api;
	loaded = 1;
	return 0;
}
