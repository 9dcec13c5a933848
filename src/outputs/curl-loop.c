// SPDX-License-Identifier: GPL-2.0-or-later
/* libcurl's multi interface in keventd's loop (curl-loop.h). */
#include "curl-loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "curl-dl.h"
#include "util.h"

struct kcurl_loop {
	struct kloop *loop;
	CURLM *multi;
	struct ktimer *timer;
	kcurl_done_fn done;
	void *userdata;
	int running;
};

static void check_done(struct kcurl_loop *c)
{
	CURLMsg *msg;
	int left;
	while ((msg = kcurl.multi_info_read(c->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		CURL *e = msg->easy_handle;
		int code = (int)msg->data.result;
		void *priv = NULL;
		kcurl.easy_getinfo(e, CURLINFO_PRIVATE, &priv);
		kcurl.multi_remove_handle(c->multi, e);
		c->done(priv, code, c->userdata);
	}
}

static void on_io(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kcurl_loop *c = userdata;
	(void)io;
	int flags = (events & EPOLLIN ? CURL_CSELECT_IN : 0) |
		    (events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
		    (events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
	kcurl.multi_socket_action(c->multi, fd, flags, &c->running);
	check_done(c);
}

static int on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct kcurl_loop *c = userp;
	struct kio *io = socketp;
	(void)e;
	if (what == CURL_POLL_REMOVE) {
		kio_free(io);
		kcurl.multi_assign(c->multi, s, NULL);
		return 0;
	}
	uint32_t events =
		(what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	if (io)
		return kio_set_events(io, events) < 0 ? -1 : 0;
	if (kloop_add_io(c->loop, s, events, on_io, c, &io) < 0)
		return -1;
	kcurl.multi_assign(c->multi, s, io);
	return 0;
}

static void on_timer(struct ktimer *t, void *userdata)
{
	struct kcurl_loop *c = userdata;
	(void)t;
	c->timer = NULL;
	kcurl.multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &c->running);
	check_done(c);
}

static int on_timeout(CURLM *m, long ms, void *userp)
{
	struct kcurl_loop *c = userp;
	(void)m;
	ktimer_cancel(TAKE_PTR(c->timer));
	if (ms < 0)
		return 0;
	return kloop_add_timer(c->loop, now_monotonic_ns() + (uint64_t)ms * 1000000ull, on_timer, c,
			       &c->timer) < 0
		       ? -1
		       : 0;
}

int kcurl_loop_new(struct kloop *loop, kcurl_done_fn done, void *userdata, struct kcurl_loop **out)
{
	struct kcurl_loop *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct kcurl_loop){.loop = loop, .done = done, .userdata = userdata};
	c->multi = kcurl.multi_init();
	if (!c->multi) {
		free(c);
		return -ENOMEM;
	}
	kcurl.multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	kcurl.multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	kcurl.multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_timeout);
	kcurl.multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	*out = c;
	return 0;
}

int kcurl_loop_add(struct kcurl_loop *c, void *easy)
{
	CURLMcode rc = kcurl.multi_add_handle(c->multi, easy);
	return rc == CURLM_OK ? 0 : rc == CURLM_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
}

void kcurl_loop_remove(struct kcurl_loop *c, void *easy)
{
	kcurl.multi_remove_handle(c->multi, easy);
}

int kcurl_loop_running(const struct kcurl_loop *c)
{
	return c->running;
}

void kcurl_loop_free(struct kcurl_loop *c)
{
	if (!c)
		return;
	kcurl.multi_cleanup(c->multi); /* calls on_socket(REMOVE) for what is left */
	ktimer_cancel(c->timer);
	free(c);
}

size_t kcurl_keep_answer(struct strbuf *answer, size_t max, const char *buf, size_t len)
{
	if (answer->len < max)
		strbuf_add(answer, buf, len < max - answer->len ? len : max - answer->len);
	return len;
}
