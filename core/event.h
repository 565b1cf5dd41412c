/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * event.h - the stateless checks of a scheduler event (struct tt_event) and
 * the inward page rounding of a saved tensor.
 *
 * Shared, like policy.c and timeline.c, by the module and by libtiertrain's
 * move_pages backend, so both refuse exactly the same events. Only uapi
 * headers are included: <linux/tiertrain.h> and <linux/errno.h> exist in
 * the kernel and in userspace alike.
 */
#ifndef TT_EVENT_H
#define TT_EVENT_H

#include <linux/tiertrain.h>

/*
 * tt_event_check() - the checks of one event that need no session state,
 * in this order:
 *   -EOPNOTSUPP  a flag bit outside TT_EV_FLAGS_ALL;
 *   -EINVAL      an unknown type; a layer event without exactly one of
 *                TT_FWD and TT_BWD; a flag of another event type; a field
 *                that must be 0 and is not (layer of TT_EV_ITER_BEGIN, addr
 *                and len of non-tensor events, ts_ns without
 *                TT_EV_TIMESTAMP).
 * Return: 0 or one of those.
 */
int tt_event_check(const struct tt_event *ev);

/*
 * tt_event_pages() - a saved tensor's range rounded inward to whole pages.
 * @addr:      its start, any alignment.
 * @len:       its length in bytes.
 * @page_size: the page size (a power of two).
 * @start:     out: the first whole page; may be NULL.
 *
 * A range that wraps around the end of the address space is cut there.
 * Return: the number of whole pages in [addr, addr + len); 0 when the
 * tensor covers no whole page (it is then ignored).
 */
__u64 tt_event_pages(__u64 addr, __u64 len, __u64 page_size, __u64 *start);

/*
 * tt_event_range() - the arithmetic checks of a saved tensor's range and
 * its inward rounding to whole pages.
 * @addr:      its start, any alignment.
 * @len:       its length in bytes.
 * @page_size: the page size (a power of two).
 * @limit:     the end of the user address space (TASK_SIZE), at most
 *             2^64 - @page_size.
 * @start:     out: the first whole page.
 * @end:       out: the end of the last whole page; == *@start when the
 *             tensor covers no whole page (it is then ignored).
 *
 * Return: 0, or -EOVERFLOW when @addr + @len wraps around or ends beyond
 * @limit (a tensor of length 0 is never refused).
 */
int tt_event_range(__u64 addr, __u64 len, __u64 page_size, __u64 limit,
		   __u64 *start, __u64 *end);

/*
 * tt_hint_check() - the checks of TT_IOC_HINT on @req (see the uapi
 * header), and its range rounded outward to whole pages of @page_size (a
 * power of two): [*@start, *@end), which ends at most at @limit (the end of
 * the user address space, a multiple of @page_size). Return: 0,
 * -EOPNOTSUPP, -EINVAL (as the uapi header lists) or -EOVERFLOW (the range
 * ends beyond @limit).
 */
int tt_hint_check(const struct tt_ioc_hint *req, __u64 page_size,
		  __u64 limit, __u64 *start, __u64 *end);

#endif /* TT_EVENT_H */
