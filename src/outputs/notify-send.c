// SPDX-License-Identifier: GPL-2.0-or-later
/* One try of one notification (notify-send.h). */
#include "notify-send.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "curl-dl.h"
#include "curl-loop.h"
#include "hmac-sha256.h"
#include "notify-msg.h"

int knotify_secret_read(const char *path, char **out, size_t *len, bool first_line,
			const char **why)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		*why = "cannot open";
		return -errno;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		*why = "cannot look at";
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		return -EINVAL;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		*why = "may be read by group or others (chmod 600 it)";
		return -EACCES;
	}
	char *buf = NULL;
	size_t n = 0;
	int rc = read_fd(fd, KNOTIFY_SECRET_MAX, &buf, &n);
	if (rc < 0) {
		*why = "cannot read";
		return rc;
	}
	if (first_line)
		n = strcspn(buf, "\r\n");
	else if (n && buf[n - 1] == '\n')
		n -= 1 + (n > 1 && buf[n - 2] == '\r');
	buf[n] = '\0';
	if (!n || memchr(buf, '\0', n)) {
		explicit_bzero(buf, n);
		free(buf);
		*why = "empty, or with a NUL byte";
		return -EINVAL;
	}
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int knotify_secrets_load(const struct knotify_target *t, struct knotify_secrets *out,
			 const char **why, const char **file)
{
	*out = (struct knotify_secrets){0};
	int rc = 0;
	if (rc == 0 && (*file = t->files[KNOTIFY_PASSWORD]))
		rc = knotify_secret_read(*file, &out->password, NULL, true, why);
	if (rc == 0 && (*file = t->files[KNOTIFY_TOKEN]))
		rc = knotify_secret_read(*file, &out->token, NULL, true, why);
	if (rc == 0 && (*file = t->files[KNOTIFY_SECRET]))
		rc = knotify_secret_read(*file, &out->secret, &out->secret_len, false, why);
	if (rc < 0)
		knotify_secrets_release(out);
	return rc;
}

static void wipe(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

void knotify_secrets_release(struct knotify_secrets *s)
{
	wipe(s->password);
	wipe(s->token);
	if (s->secret)
		explicit_bzero(s->secret, s->secret_len);
	free(s->secret);
	*s = (struct knotify_secrets){0};
}

struct knotify_xfer {
	CURL *easy;
	enum knotify_kind kind;
	struct curl_slist *headers, *rcpt;
	struct strbuf body;		/* what is sent */
	size_t sent;			/* of it, read by libcurl (SMTP) */
	struct strbuf got;		/* the start of the answer's body (HTTP) */
	char reply[KNOTIFY_ANSWER_MAX]; /* the last reply line (SMTP) */
	char err[CURL_ERROR_SIZE];
	char *url;
};

static size_t on_read(char *buf, size_t size, size_t n, void *userdata)
{
	struct knotify_xfer *x = userdata;
	size_t left = x->body.len - x->sent, want = size * n;
	if (want > left)
		want = left;
	memcpy(buf, x->body.buf + x->sent, want);
	x->sent += want;
	return want;
}

static size_t on_write(char *buf, size_t size, size_t n, void *userdata)
{
	struct knotify_xfer *x = userdata;
	return kcurl_keep_answer(&x->got, KNOTIFY_ANSWER_MAX, buf, size * n);
}

/* SMTP's replies come as "headers": the last one is the answer. */
static size_t on_header(char *buf, size_t size, size_t n, void *userdata)
{
	struct knotify_xfer *x = userdata;
	size_t len = size * n;
	if (x->kind == KNOTIFY_SMTP && len > 3) {
		size_t k = len < sizeof(x->reply) - 1 ? len : sizeof(x->reply) - 1;
		memcpy(x->reply, buf, k);
		x->reply[k] = '\0';
		x->reply[strcspn(x->reply, "\r\n")] = '\0';
	}
	return len;
}

static bool header(struct knotify_xfer *x, const char *fmt, ...) _printf_(2, 3);
static bool header(struct knotify_xfer *x, const char *fmt, ...)
{
	va_list ap;
	_cleanup_free_ char *line = NULL;
	va_start(ap, fmt);
	int rc = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return false;
	struct curl_slist *l = kcurl.slist_append(x->headers, line);
	if (!l)
		return false;
	x->headers = l;
	return true;
}

/* The URL a try goes to: Gotify's /message under its base. */
static char *target_url(const struct knotify_target *t)
{
	char *u = NULL;
	if (t->kind != KNOTIFY_GOTIFY)
		return strdup(t->url);
	size_t n = strlen(t->url);
	bool slash = n && t->url[n - 1] == '/';
	return asprintf(&u, "%s%smessage", t->url, slash ? "" : "/") < 0 ? NULL : u;
}

static bool setup_smtp(struct knotify_xfer *x, const struct knotify_target *t,
		       const struct knotify_secrets *s, const struct knotify_rec *rec, bool retry,
		       const char *host)
{
	CURL *e = x->easy;
	knotify_mail(rec, retry, t->from, t->to, t->n_to, host, &x->body);
	if (x->body.oom)
		return false;
	_cleanup_free_ char *from = NULL;
	if (asprintf(&from, "<%s>", t->from) < 0)
		return false;
	for (size_t i = 0; i < t->n_to; i++) {
		_cleanup_free_ char *to = NULL;
		struct curl_slist *l;
		if (asprintf(&to, "<%s>", t->to[i]) < 0 || !(l = kcurl.slist_append(x->rcpt, to)))
			return false;
		x->rcpt = l;
	}
	kcurl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	kcurl.easy_setopt(e, CURLOPT_MAIL_FROM, from);
	kcurl.easy_setopt(e, CURLOPT_MAIL_RCPT, x->rcpt);
	kcurl.easy_setopt(e, CURLOPT_UPLOAD, 1L);
	kcurl.easy_setopt(e, CURLOPT_READFUNCTION, on_read);
	kcurl.easy_setopt(e, CURLOPT_READDATA, x);
	kcurl.easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->body.len);
	/* smtp://: STARTTLS, required but to the machine itself; smtps://: TLS */
	if (!t->tls)
		kcurl.easy_setopt(e, CURLOPT_USE_SSL,
				  (long)(t->local ? CURLUSESSL_TRY : CURLUSESSL_ALL));
	if (s->password) {
		kcurl.easy_setopt(e, CURLOPT_USERNAME, t->username);
		kcurl.easy_setopt(e, CURLOPT_PASSWORD, s->password);
	}
	return true;
}

static bool setup_http(struct knotify_xfer *x, const struct knotify_target *t,
		       const struct knotify_secrets *s, const struct knotify_rec *rec, bool retry)
{
	CURL *e = x->easy;
	bool ok = true;
	switch (t->kind) {
	case KNOTIFY_WEBHOOK:
		knotify_webhook_body(rec, retry, &x->body);
		ok = header(x, "Content-Type: application/json");
		if (ok && s->secret && !x->body.oom) {
			char mac[2 * KSHA256_LEN + 1];
			khmac_sha256_hex(s->secret, s->secret_len, x->body.buf, x->body.len, mac);
			ok = header(x, "X-Keventd-Signature: sha256=%s", mac);
		}
		ok = ok && header(x, "X-Keventd-Id: %016" PRIx64, rec->id);
		if (ok && retry)
			ok = header(x, "X-Keventd-Retry: yes");
		break;
	case KNOTIFY_NTFY: {
		strbuf_puts(&x->body, rec->message);
		_cleanup_strbuf_ struct strbuf h = STRBUF_INIT;
		knotify_ntfy_headers(rec, retry, &h);
		ok = !h.oom && header(x, "Content-Type: text/plain; charset=utf-8");
		for (char *line = h.buf, *nl; ok && line && *line; line = nl + 1) {
			nl = strchr(line, '\n');
			if (!nl)
				break;
			*nl = '\0';
			ok = header(x, "%s", line);
		}
		break;
	}
	case KNOTIFY_GOTIFY:
		knotify_gotify_body(rec, retry, &x->body);
		ok = header(x, "Content-Type: application/json") &&
		     header(x, "X-Gotify-Key: %s", s->token ? s->token : "");
		break;
	case KNOTIFY_SMTP:
		return false;
	}
	if (ok && s->token && t->kind != KNOTIFY_GOTIFY)
		ok = header(x, "Authorization: Bearer %s", s->token);
	ok = ok && header(x, "Expect:"); /* no 100-continue round trip */
	if (!ok || x->body.oom)
		return false;
	kcurl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	kcurl.easy_setopt(e, CURLOPT_POST, 1L);
	kcurl.easy_setopt(e, CURLOPT_POSTFIELDS, x->body.buf);
	kcurl.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body.len);
	kcurl.easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
	kcurl.easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	kcurl.easy_setopt(e, CURLOPT_WRITEDATA, x);
	if (s->password) {
		kcurl.easy_setopt(e, CURLOPT_USERNAME, t->username);
		kcurl.easy_setopt(e, CURLOPT_PASSWORD, s->password);
	}
	return true;
}

int knotify_xfer_new(const struct knotify_target *t, const struct knotify_secrets *s,
		     const struct knotify_rec *rec, bool retry, const char *host,
		     struct knotify_xfer **out)
{
	struct knotify_xfer *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->kind = t->kind;
	x->easy = kcurl.easy_init();
	x->url = target_url(t);
	if (!x->easy || !x->url) {
		knotify_xfer_free(x);
		return -ENOMEM;
	}
	CURL *e = x->easy;
	kcurl.easy_setopt(e, CURLOPT_URL, x->url);
	kcurl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	kcurl.easy_setopt(e, CURLOPT_ERRORBUFFER, x->err);
	kcurl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)KNOTIFY_CONNECT_TIMEOUT_MS);
	kcurl.easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)KNOTIFY_TIMEOUT_MS);
	kcurl.easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	kcurl.easy_setopt(e, CURLOPT_HEADERDATA, x);
	kcurl.easy_setopt(e, CURLOPT_PRIVATE, x);
	kcurl.easy_setopt(e, CURLOPT_USERAGENT, "keventd");
	if (t->ca_file)
		kcurl.easy_setopt(e, CURLOPT_CAINFO, t->ca_file);
	bool ok = t->kind == KNOTIFY_SMTP ? setup_smtp(x, t, s, rec, retry, host)
					  : setup_http(x, t, s, rec, retry);
	if (!ok) {
		knotify_xfer_free(x);
		return -ENOMEM;
	}
	*out = x;
	return 0;
}

void *knotify_xfer_easy(struct knotify_xfer *x)
{
	return x->easy;
}

/* Whether code says the request never left: no connection was made. */
static bool never_sent(CURLcode code)
{
	switch (code) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_USE_SSL_FAILED:
	case CURLE_LOGIN_DENIED:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
		return true;
	default:
		return false;
	}
}

enum knotify_outcome knotify_xfer_done(struct knotify_xfer *x, int code, struct strbuf *answer)
{
	long status = 0;
	CURLcode c = (CURLcode)code;
	kcurl.easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
	if (x->kind == KNOTIFY_SMTP) {
		if (x->reply[0])
			strbuf_add_escaped(answer, x->reply, strlen(x->reply));
		if (c != CURLE_OK) {
			strbuf_puts(answer, x->reply[0] ? " (" : "");
			strbuf_puts(answer, x->err[0] ? x->err : kcurl.easy_strerror(c));
			strbuf_puts(answer, x->reply[0] ? ")" : "");
		}
		if (c == CURLE_OK)
			return KNOTIFY_SENT;
		if (never_sent(c) || status == 0 || (status >= 400 && status < 500 && !x->sent))
			return KNOTIFY_NOT_SENT;
		/* refused for good: the mailbox, the message or its size */
		if (status >= 550 && status <= 554)
			return KNOTIFY_REFUSED;
		return x->sent ? KNOTIFY_MAYBE_SENT : KNOTIFY_NOT_SENT;
	}
	if (c != CURLE_OK) {
		strbuf_puts(answer, x->err[0] ? x->err : kcurl.easy_strerror(c));
		return never_sent(c) ? KNOTIFY_NOT_SENT : KNOTIFY_MAYBE_SENT;
	}
	strbuf_printf(answer, "HTTP %ld", status);
	if (x->got.len) {
		strbuf_puts(answer, ": ");
		size_t n = strcspn(x->got.buf, "\r\n");
		strbuf_add_escaped(answer, x->got.buf, n);
	}
	if (status >= 200 && status < 300)
		return KNOTIFY_SENT;
	/* this request is refused, and would be again */
	if (status == 400 || status == 413 || status == 415 || status == 422)
		return KNOTIFY_REFUSED;
	return KNOTIFY_MAYBE_SENT;
}

void knotify_xfer_free(struct knotify_xfer *x)
{
	if (!x)
		return;
	if (x->easy)
		kcurl.easy_cleanup(x->easy);
	if (x->headers)
		kcurl.slist_free_all(x->headers);
	if (x->rcpt)
		kcurl.slist_free_all(x->rcpt);
	strbuf_release(&x->body);
	strbuf_release(&x->got);
	free(x->url);
	free(x);
}

enum knotify_outcome knotify_send_now(const struct knotify_target *t,
				      const struct knotify_secrets *s,
				      const struct knotify_rec *rec, const char *host,
				      struct strbuf *answer)
{
	struct knotify_xfer *x = NULL;
	if (knotify_xfer_new(t, s, rec, rec->retry, host, &x) < 0) {
		strbuf_puts(answer, strerror(ENOMEM));
		return KNOTIFY_NOT_SENT;
	}
	CURLcode c = kcurl.easy_perform(x->easy);
	enum knotify_outcome o = knotify_xfer_done(x, (int)c, answer);
	knotify_xfer_free(x);
	return o;
}
