// SPDX-License-Identifier: GPL-2.0-or-later
/* fanotify's records of a FAN_REPORT_FID group: the error, its count, the
 * file system's id and the inode the record names. */
#include <errno.h>
#include <linux/fanotify.h>
#include <stdio.h>
#include <string.h>

#include "fs.h"
#include "util.h"

/* The file handle types whose first 4 bytes are the inode number
 * (FILEID_INO32_GEN, FILEID_INO32_GEN_PARENT: ext2/3/4 and others). */
#define FILEID_INO32_GEN	1
#define FILEID_INO32_GEN_PARENT 2

static void read_fid(const uint8_t *p, size_t len, struct kfs_fan_rec *rec)
{
	struct fanotify_event_info_fid fid;
	if (len < sizeof(fid))
		return;
	memcpy(&fid, p, sizeof(fid));
	memcpy(rec->fsid, &fid.fsid, sizeof(rec->fsid));
	rec->has_fsid = true;
	uint32_t bytes;
	int32_t type;
	size_t off = sizeof(fid);
	if (len < off + 8)
		return;
	memcpy(&bytes, p + off, 4);
	memcpy(&type, p + off + 4, 4);
	if ((type == FILEID_INO32_GEN || type == FILEID_INO32_GEN_PARENT) && bytes >= 4 &&
	    len >= off + 8 + 4) {
		uint32_t ino;
		memcpy(&ino, p + off + 8, 4);
		rec->has_ino = true;
		rec->ino = ino;
	}
}

int kfs_fan_decode(const uint8_t *buf, size_t len, struct kfs_fan_rec *rec, size_t *used,
		   const char **why)
{
	struct fanotify_event_metadata md;
	*rec = (struct kfs_fan_rec){0};
	*used = 0;
	if (len < sizeof(md)) {
		*why = "fanotify record shorter than its header";
		return -EINVAL;
	}
	memcpy(&md, buf, sizeof(md));
	if (md.event_len < sizeof(md) || md.event_len > len) {
		*why = "fanotify record's length out of bounds";
		return -EINVAL;
	}
	*used = md.event_len;
	if (md.vers != FANOTIFY_METADATA_VERSION) {
		*why = "fanotify record of another version";
		return -EINVAL;
	}
	if (md.metadata_len < sizeof(md) || md.metadata_len > md.event_len) {
		*why = "fanotify record's header length out of bounds";
		return -EINVAL;
	}
	rec->mask = md.mask;
	for (size_t off = md.metadata_len; off < md.event_len;) {
		struct fanotify_event_info_header h;
		if (md.event_len - off < sizeof(h)) {
			*why = "fanotify information cut short";
			return -EINVAL;
		}
		memcpy(&h, buf + off, sizeof(h));
		if (h.len < sizeof(h) || h.len > md.event_len - off) {
			*why = "fanotify information's length out of bounds";
			return -EINVAL;
		}
		if (h.info_type == FAN_EVENT_INFO_TYPE_ERROR) {
			struct fanotify_event_info_error e;
			if (h.len < sizeof(e)) {
				*why = "fanotify error information too short";
				return -EINVAL;
			}
			memcpy(&e, buf + off, sizeof(e));
			rec->has_error = true;
			rec->error = e.error;
			rec->error_count = e.error_count;
		} else if (h.info_type == FAN_EVENT_INFO_TYPE_FID ||
			   h.info_type == FAN_EVENT_INFO_TYPE_DFID) {
			read_fid(buf + off, h.len, rec);
		}
		off += h.len;
	}
	return 0;
}

int kfs_error_event(const struct kfs_fan_rec *r, const struct kfs_mount *m, uint64_t now,
		    struct kevent **out, const char **why)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	kfs_mount_payload(m, &sb);
	const char *name = r->error > 0 ? strerrorname_np(r->error) : NULL;
	if (name)
		strbuf_printf(&sb, "Error: %s\n", name);
	else
		strbuf_printf(&sb, "Error: %d\n", r->error);
	strbuf_printf(&sb, "Error-Count: %u\n", r->error_count);
	if (r->has_ino)
		strbuf_printf(&sb, "Inode: %llu\n", (unsigned long long)r->ino);
	if (sb.oom)
		return -ENOMEM;
	return kfs_make_event(m, "error", sb.buf, now, out, why);
}
