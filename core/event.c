// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * event.c - stateless event checks and inward page rounding, one
 * implementation for the module and libtiertrain (see event.h).
 */
#include <linux/errno.h>

#include "event.h"

int tt_event_check(const struct tt_event *ev)
{
	unsigned int phase = ev->flags & (TT_FWD | TT_BWD);

	if (ev->flags & ~TT_EV_FLAGS_ALL)
		return -EOPNOTSUPP;
	switch (ev->type) {
	case TT_EV_ITER_BEGIN:
		if (phase || (ev->flags & TT_EV_PERSISTENT) || ev->layer ||
		    ev->addr || ev->len)
			return -EINVAL;
		break;
	case TT_EV_LAYER_BEGIN:
	case TT_EV_LAYER_END:
		if ((phase != TT_FWD && phase != TT_BWD) ||
		    (ev->flags & TT_EV_PERSISTENT) || ev->addr || ev->len)
			return -EINVAL;
		break;
	case TT_EV_TENSOR_SAVED:
		if (phase)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (!(ev->flags & TT_EV_TIMESTAMP) && ev->ts_ns)
		return -EINVAL;
	return 0;
}

int tt_hint_check(const struct tt_ioc_hint *req, __u64 page_size,
		  __u64 limit, __u64 *start, __u64 *end)
{
	__u32 h = req->hint;

	if ((h & ~TT_HINT_ALL) || req->reserved)
		return -EOPNOTSUPP;
	if (!h || !req->len || req->addr + req->len < req->addr)
		return -EINVAL;
	if (((h & TT_HINT_RETIRE) && h != TT_HINT_RETIRE) ||
	    ((h & TT_HINT_ARCHIVE) && h != TT_HINT_ARCHIVE))
		return -EINVAL;
	if (req->addr + req->len > limit)
		return -EOVERFLOW;
	/* no wrap: @limit + @page_size - 1 fits */
	*start = req->addr & ~(page_size - 1);
	*end = (req->addr + req->len + page_size - 1) & ~(page_size - 1);
	return 0;
}

int tt_event_range(__u64 addr, __u64 len, __u64 page_size, __u64 limit,
		   __u64 *start, __u64 *end)
{
	__u64 mask = page_size - 1;

	*start = 0;
	*end = 0;
	if (!len)
		return 0;
	if (addr + len < addr || addr + len > limit)
		return -EOVERFLOW;
	/* addr + len <= limit <= 2^64 - page_size: the rounding cannot wrap */
	*start = (addr + mask) & ~mask;
	*end = (addr + len) & ~mask;
	if (*end < *start)
		*end = *start;
	return 0;
}

__u64 tt_event_pages(__u64 addr, __u64 len, __u64 page_size, __u64 *start)
{
	__u64 mask = page_size - 1, first, end;

	end = addr + len < addr ? ~0ULL : addr + len;
	end &= ~mask;
	if (addr > ~0ULL - mask)
		return 0;
	first = (addr + mask) & ~mask;
	if (start)
		*start = first;
	return end > first ? (end - first) / page_size : 0;
}
