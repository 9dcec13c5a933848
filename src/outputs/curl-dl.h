/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libcurl, loaded when keventd.yaml configures a notification target and
 * not before, as libmosquitto is (mosq-dl.h): a keventd without a notify:
 * section maps neither it nor the TLS, HTTP/2 and SSH libraries it pulls
 * in.  Each function is a pointer in kcurl, called as kcurl.NAME(...) for
 * curl_NAME(...).
 */
#ifndef KEVENT_CURL_DL_H
#define KEVENT_CURL_DL_H

#include <curl/curl.h>

/* the library's file, as its package installs it (libcurl4) */
#define KCURL_SONAME "libcurl.so.4"

#define KCURL_SYMS(X)          \
	X(easy_cleanup)        \
	X(easy_getinfo)        \
	X(easy_init)           \
	X(easy_perform)        \
	X(easy_setopt)         \
	X(easy_strerror)       \
	X(global_init)         \
	X(multi_add_handle)    \
	X(multi_assign)        \
	X(multi_cleanup)       \
	X(multi_info_read)     \
	X(multi_init)          \
	X(multi_remove_handle) \
	X(multi_setopt)        \
	X(multi_socket_action) \
	X(slist_append)        \
	X(slist_free_all)      \
	X(version_info)

struct kcurl_api {
#define KCURL_FIELD(name) __typeof__(curl_##name) *name;
	KCURL_SYMS(KCURL_FIELD)
#undef KCURL_FIELD
};

extern struct kcurl_api kcurl;

/* Loads the library and every function of KCURL_SYMS, and initialises it,
 * once: 0, or -ENOENT / -ENOSYS with *why (dlerror()'s words) when it
 * cannot be had; notifications are then off. */
int kcurl_load(const char **why);

#endif
