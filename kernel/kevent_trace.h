/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent.ko's tracepoint: kevent/kevent_send, hit once for every event
 * send_kevent() or send_kevent_atomic() numbers, with its type, object,
 * signal and sequence number, so that the kernel's own tools (and
 * keventd's trace source) can watch the module.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kevent

#if !defined(_KEVENT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KEVENT_TRACE_H

#include <linux/string.h>
#include <linux/tracepoint.h>

/*
 * The strings as dynamic arrays, copied with their NUL: the same record
 * (__data_loc char[]) as __string(), on kernels before and after
 * __assign_str() lost its source argument (6.10).
 */
TRACE_EVENT(kevent_send,
	    TP_PROTO(u32 type, const char *object, const char *signal, u64 seqnum),
	    TP_ARGS(type, object, signal, seqnum),
	    TP_STRUCT__entry(__field(u32, type)
			     __dynamic_array(char, object, strlen(object) + 1)
			     __dynamic_array(char, signal, strlen(signal) + 1)
			     __field(u64, seqnum)),
	    TP_fast_assign(__entry->type = type;
			   memcpy(__get_dynamic_array(object), object,
				  __get_dynamic_array_len(object));
			   memcpy(__get_dynamic_array(signal), signal,
				  __get_dynamic_array_len(signal));
			   __entry->seqnum = seqnum;),
	    TP_printk("type=%u object=%s signal=%s seqnum=%llu", __entry->type,
		      __get_str(object), __get_str(signal), __entry->seqnum));

#endif /* _KEVENT_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kevent_trace
#include <trace/define_trace.h>
