// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: debugfs files to emit events from user space, for tests and
 * for admins.  All files are for root only.
 *
 * /sys/kernel/debug/kevent/emit         (write) TYPE OBJECT SIGNAL [PAYLOAD]
 * /sys/kernel/debug/kevent/emit_atomic  (write) the same, sent with
 *     send_kevent_atomic() from an irq_work, that is from hard interrupt
 *     context on architectures with an irq_work interrupt (x86 has one).
 * /sys/kernel/debug/kevent/bench        (write) COUNT [TYPE [stamp]]
 * /sys/kernel/debug/kevent/printk       (write) COUNT WORD: COUNT kernel log
 *     records at KERN_WARNING, "kevent: printk I/COUNT WORD", to test readers
 *     of /dev/kmsg with more records than the log's ring holds
 * /sys/kernel/debug/kevent/stats        (read)  counters
 *
 * One write() is one line.  TYPE is a type name or its number (0-4);
 * OBJECT and SIGNAL are words separated by spaces; PAYLOAD is the rest of
 * the line after the one space that follows SIGNAL, with the escapes
 * "\n" (newline) and "\\" (backslash) decoded.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/kevent.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/ratelimit.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kevent_internal.h"

/* Longest line: type, object, signal, a payload with every byte escaped. */
#define KEVENT_EMIT_LINE_MAX \
	(16 + KEVENT_OBJECT_MAX + KEVENT_SIGNAL_MAX + 2 * KEVENT_PAYLOAD_MAX)

#define KEVENT_BENCH_MAX	100000000U

static struct dentry *kevent_debugfs_dir;

struct kevent_emit_line {
	unsigned int type;
	char *object;
	char *signal;
	char *payload;
};

static int kevent_parse_type(const char *word, unsigned int *type)
{
	unsigned int i;

	for (i = 0; i <= KEVENT_TYPE_MAX; i++) {
		if (!strcmp(word, kevent_type_name(i))) {
			*type = i;
			return 0;
		}
	}
	if (kstrtouint(word, 10, &i) || i > KEVENT_TYPE_MAX)
		return -EINVAL;
	*type = i;
	return 0;
}

/* Next word of *s, separated by one or more spaces; NULL if none. */
static char *kevent_next_word(char **s)
{
	char *word;

	while (**s == ' ')
		(*s)++;
	if (!**s)
		return NULL;
	word = *s;
	while (**s && **s != ' ')
		(*s)++;
	if (**s)
		*(*s)++ = '\0';
	return word;
}

/* Decode "\n" and "\\" in place. */
static int kevent_unescape(char *s)
{
	char *out = s;

	while (*s) {
		if (*s != '\\') {
			*out++ = *s++;
			continue;
		}
		switch (s[1]) {
		case 'n':
			*out++ = '\n';
			break;
		case '\\':
			*out++ = '\\';
			break;
		default:
			return -EINVAL;
		}
		s += 2;
	}
	*out = '\0';
	return 0;
}

/* Parses buf in place; on error, *why says what is wrong. */
static int kevent_parse_line(char *buf, struct kevent_emit_line *line,
			     const char **why)
{
	size_t len = strlen(buf);
	char *type;

	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	if (strchr(buf, '\n')) {
		*why = "more than one line";
		return -EINVAL;
	}

	type = kevent_next_word(&buf);
	line->object = kevent_next_word(&buf);
	line->signal = kevent_next_word(&buf);
	if (!line->signal) {
		*why = "expected TYPE OBJECT SIGNAL [PAYLOAD]";
		return -EINVAL;
	}
	if (kevent_parse_type(type, &line->type)) {
		*why = "unknown type";
		return -EINVAL;
	}
	line->payload = buf;
	if (kevent_unescape(line->payload)) {
		*why = "bad escape in payload (only \\n and \\\\)";
		return -EINVAL;
	}
	if (strlen(line->payload) > KEVENT_PAYLOAD_MAX) {
		*why = "payload longer than 4000 bytes";
		return -EINVAL;
	}
	*why = kevent_check_args(line->type, line->object, line->signal);
	return *why ? -EINVAL : 0;
}

struct kevent_irq_emit {
	struct irq_work work;
	const struct kevent_emit_line *line;
	int ret;
};

static void kevent_emit_irq_work(struct irq_work *work)
{
	struct kevent_irq_emit *e = container_of(work, struct kevent_irq_emit,
						 work);

	e->ret = send_kevent_atomic(e->line->type, e->line->object,
				    e->line->signal, "%s", e->line->payload);
}

static int kevent_emit_atomic(const struct kevent_emit_line *line)
{
	struct kevent_irq_emit e = { .line = line, .ret = -EINPROGRESS };

	init_irq_work(&e.work, kevent_emit_irq_work);
	if (!irq_work_queue(&e.work))
		return -EBUSY;
	/* Returns once the work has run and released e.work. */
	irq_work_sync(&e.work);
	return e.ret;
}

static ssize_t kevent_emit_write_common(struct file *file,
					const char __user *ubuf, size_t count,
					bool atomic)
{
	struct kevent_emit_line line;
	const char *why;
	char *buf;
	int ret;

	if (count > KEVENT_EMIT_LINE_MAX) {
		pr_warn_ratelimited("emit: line longer than %u bytes\n",
				    KEVENT_EMIT_LINE_MAX);
		return -EINVAL;
	}

	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	ret = kevent_parse_line(buf, &line, &why);
	if (ret) {
		pr_warn_ratelimited("emit: %s\n", why);
		goto out_free_buf;
	}

	if (atomic)
		ret = kevent_emit_atomic(&line);
	else
		ret = send_kevent(line.type, line.object, line.signal, "%s",
				  line.payload);
	if (ret)
		pr_warn_ratelimited("emit: sending failed: %d\n", ret);

out_free_buf:
	kfree(buf);
	return ret ? ret : count;
}

static ssize_t kevent_emit_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	return kevent_emit_write_common(file, ubuf, count, false);
}

static ssize_t kevent_emit_atomic_write(struct file *file,
					const char __user *ubuf, size_t count,
					loff_t *ppos)
{
	return kevent_emit_write_common(file, ubuf, count, true);
}

static ssize_t kevent_bench_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	unsigned int type = KEVENT_GENERAL;
	unsigned int n, i, errors = 0;
	char *buf, *p, *word;
	u64 start, elapsed;
	bool stamp = false;
	int ret = 0;

	if (count > 64)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	p = strim(buf);
	word = kevent_next_word(&p);
	if (!word || kstrtouint(word, 10, &n) || n > KEVENT_BENCH_MAX) {
		pr_warn_ratelimited("bench: expected COUNT [TYPE], COUNT at most %u\n",
				    KEVENT_BENCH_MAX);
		ret = -EINVAL;
		goto out_free_buf;
	}
	word = kevent_next_word(&p);
	if (word && kevent_parse_type(word, &type)) {
		pr_warn_ratelimited("bench: unknown type\n");
		ret = -EINVAL;
		goto out_free_buf;
	}
	word = kevent_next_word(&p);
	if (word && strcmp(word, "stamp")) {
		pr_warn_ratelimited("bench: expected COUNT [TYPE [stamp]]\n");
		ret = -EINVAL;
		goto out_free_buf;
	}
	stamp = word;

	start = ktime_get_ns();
	for (i = 0; i < n; i++) {
		/* stamp: one event every 20 ms, sent at T (CLOCK_MONOTONIC) */
		if (stamp) {
			if (send_kevent(type, "/org/kernel/kevent/bench", "stamp",
					"T: %llu\nN: %u\n", ktime_get_ns(), i))
				errors++;
			msleep(20);
		} else if (send_kevent(type, "/org/kernel/kevent/bench",
				       "bench", "N: %u\n", i)) {
			errors++;
		}
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
	elapsed = ktime_get_ns() - start;

	pr_info("bench: %u of %u events, type %s, in %llu ns (%llu events/s), %u errors\n",
		i, n, kevent_type_name(type), elapsed,
		elapsed ? div64_u64((u64)i * NSEC_PER_SEC, elapsed) : 0,
		errors);

out_free_buf:
	kfree(buf);
	return ret ? ret : count;
}

static ssize_t kevent_printk_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	char *buf, *p, *word, *tag;
	unsigned int n, i;
	int ret = 0;

	if (count > 64)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	p = strim(buf);
	word = kevent_next_word(&p);
	tag = kevent_next_word(&p);
	if (!word || kstrtouint(word, 10, &n) || n > KEVENT_BENCH_MAX || !tag ||
	    kevent_next_word(&p)) {
		pr_warn_ratelimited("printk: expected COUNT WORD, COUNT at most %u\n",
				    KEVENT_BENCH_MAX);
		ret = -EINVAL;
		goto out_free_buf;
	}
	/* KERN_WARNING: below a quiet console's level, so the records go to
	 * the log's ring only, at the pace of the ring, not of a console
	 */
	for (i = 0; i < n; i++) {
		pr_warn("printk %u/%u %s\n", i + 1, n, tag);
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}

out_free_buf:
	kfree(buf);
	return ret ? ret : count;
}

static int kevent_stats_show(struct seq_file *m, void *unused)
{
	struct kevent_counters c;

	kevent_read_counters(&c);
	seq_printf(m, "sent: %llu\n", c.sent);
	seq_printf(m, "dropped_no_listener: %llu\n", c.no_listener);
	seq_printf(m, "dropped_overrun: %llu\n", c.overrun);
	seq_printf(m, "errors: %llu\n", c.errors);
	seq_printf(m, "atomic_in_irq: %llu\n", c.atomic_in_irq);
	seq_printf(m, "seqnum: %llu\n", c.seqnum);
	seq_printf(m, "deferred: %llu\n", c.deferred);
	seq_printf(m, "dropped_pending_full: %llu\n", c.pending_full);
	seq_printf(m, "ring_events: %llu\n", c.ring_events);
	seq_printf(m, "ring_bytes: %llu\n", c.ring_bytes);
	seq_printf(m, "ring_limit: %llu\n", c.ring_limit);
	seq_printf(m, "ring_evicted: %llu\n", c.evicted);
	seq_printf(m, "instance: %llu\n", c.instance);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kevent_stats);

static const struct file_operations kevent_emit_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= kevent_emit_write,
	.llseek	= noop_llseek,
};

static const struct file_operations kevent_emit_atomic_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= kevent_emit_atomic_write,
	.llseek	= noop_llseek,
};

static const struct file_operations kevent_bench_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= kevent_bench_write,
	.llseek	= noop_llseek,
};

static const struct file_operations kevent_printk_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= kevent_printk_write,
	.llseek	= noop_llseek,
};

void kevent_debugfs_init(void)
{
	kevent_debugfs_dir = debugfs_create_dir(KEVENT_GENL_NAME, NULL);
	debugfs_create_file("emit", 0200, kevent_debugfs_dir, NULL,
			    &kevent_emit_fops);
	debugfs_create_file("emit_atomic", 0200, kevent_debugfs_dir, NULL,
			    &kevent_emit_atomic_fops);
	debugfs_create_file("bench", 0200, kevent_debugfs_dir, NULL,
			    &kevent_bench_fops);
	debugfs_create_file("printk", 0200, kevent_debugfs_dir, NULL,
			    &kevent_printk_fops);
	debugfs_create_file("stats", 0400, kevent_debugfs_dir, NULL,
			    &kevent_stats_fops);
}

void kevent_debugfs_exit(void)
{
	debugfs_remove_recursive(kevent_debugfs_dir);
}
