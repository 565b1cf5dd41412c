// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fuzz_event.c - libFuzzer harness of core/event.c, the stateless checks
 * every TT_IOC_EVENT(S) and TT_IOC_HINT argument goes through, and the
 * page rounding of a saved tensor.
 *
 * Each input is a sequence of calls (one byte picks it): tt_event_check()
 * on a struct tt_event, tt_hint_check() on a struct tt_ioc_hint,
 * tt_event_pages() on a range. Every result is compared with a model
 * written from the uapi header's and event.h's prose (not from event.c),
 * in 128-bit arithmetic: the errno, and for an accepted range that the
 * pages returned lie inside the tensor (rounded inward) or cover the hint
 * (rounded outward) without wrapping.
 */
#include <errno.h>
#include <linux/tiertrain.h>

#include "../../event.h"
#include "fuzz.h"

/* The uapi header's rules for one event. */
static int model_event(const struct tt_event *ev)
{
	unsigned int ph = ev->flags & (TT_FWD | TT_BWD);

	if (ev->flags & ~TT_EV_FLAGS_ALL)
		return -EOPNOTSUPP;
	switch (ev->type) {
	case TT_EV_ITER_BEGIN:
		if (ph || ev->layer)
			return -EINVAL;
		break;
	case TT_EV_LAYER_BEGIN:
	case TT_EV_LAYER_END:
		if (ph != TT_FWD && ph != TT_BWD)
			return -EINVAL;
		break;
	case TT_EV_TENSOR_SAVED:
		if (ph)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	/* TT_EV_PERSISTENT is a flag of the tensor event only */
	if (ev->type != TT_EV_TENSOR_SAVED && (ev->flags & TT_EV_PERSISTENT))
		return -EINVAL;
	if (ev->type != TT_EV_TENSOR_SAVED && (ev->addr || ev->len))
		return -EINVAL;
	if (!(ev->flags & TT_EV_TIMESTAMP) && ev->ts_ns)
		return -EINVAL;
	return 0;
}

static void op_event(struct fz *f)
{
	struct tt_event ev = { 0 };
	int ret, want;

	ev.type = fz_u8(f) % 8;
	ev.flags = fz_u8(f) & 1 ? fz_u16(f) : fz_u8(f) & 0x1f;
	ev.layer = fz_u8(f) & 1 ? fz_u32(f) : 0;
	ev.ts_ns = fz_u8(f) & 1 ? fz_u64(f) : 0;
	ev.addr = fz_u8(f) & 1 ? fz_u64(f) : 0;
	ev.len = fz_u8(f) & 1 ? fz_u64(f) : 0;
	ret = tt_event_check(&ev);
	want = model_event(&ev);
	FZ_CHECK(ret == want, "event type %u flags %#x layer %u ts %llu addr %#llx len %#llx: %d, the uapi says %d",
		 ev.type, ev.flags, ev.layer, (u64)ev.ts_ns, (u64)ev.addr,
		 (u64)ev.len, ret, want);
}

/*
 * An address-space end as the callers give it: a multiple of @ps, at most
 * 2^64 - @ps (TASK_SIZE, or the library's limit); mostly x86-64's.
 */
static u64 fz_limit(struct fz *f, u64 ps)
{
	u64 l = fz_u8(f) & 1 ? fz_u64(f) : 0x7ffffffff000ULL;

	l &= ~(ps - 1);
	return l > ~0ULL - ps + 1 ? ~0ULL - ps + 1 : l;
}

static void op_hint(struct fz *f)
{
	struct tt_ioc_hint req = { 0 };
	u64 ps = fz_pow2(f, 0, 62), start = 0x5a5a, end = 0xa5a5, limit;
	unsigned int h;
	fz_u128 e;
	int ret, want = 0;

	limit = fz_limit(f, ps);
	req.addr = fz_u64(f);
	req.len = fz_u64(f);
	req.hint = fz_u8(f) & 1 ? fz_u32(f) : fz_u8(f) & 0x1f;
	req.reserved = fz_u8(f) % 4 == 0 ? fz_u32(f) : 0;
	h = req.hint;
	e = ((fz_u128)req.addr + req.len + ps - 1) / ps * ps;
	if ((h & ~TT_HINT_ALL) || req.reserved)
		want = -EOPNOTSUPP;
	else if (!h || !req.len || (fz_u128)req.addr + req.len > ~0ULL)
		want = -EINVAL;
	else if ((h & TT_HINT_RETIRE && h != TT_HINT_RETIRE) ||
		 (h & TT_HINT_ARCHIVE && h != TT_HINT_ARCHIVE))
		want = -EINVAL;
	else if ((fz_u128)req.addr + req.len > limit)
		want = -EOVERFLOW;
	ret = tt_hint_check(&req, ps, limit, &start, &end);
	FZ_CHECK(ret == want, "hint %#x reserved %u addr %#llx len %#llx page %#llx limit %#llx: %d, the uapi says %d",
		 h, req.reserved, (u64)req.addr, (u64)req.len, ps, limit, ret, want);
	if (ret)
		return;
	FZ_CHECK(start == req.addr / ps * ps && end == (u64)e && start < end &&
		 end <= limit,
		 "hint [%#llx, +%#llx) page %#llx rounded to [%#llx, %#llx)",
		 (u64)req.addr, (u64)req.len, ps, start, end);
}

/* tt_event_range(): refused past @limit or wrapping, else rounded inward. */
static void op_range(struct fz *f)
{
	u64 ps = fz_pow2(f, 0, 62), limit = fz_limit(f, ps);
	u64 addr = fz_u64(f), len = fz_u64(f), start = 0x5a5a, end = 0xa5a5;
	fz_u128 top = (fz_u128)addr + len, first, last;
	int ret, want;

	want = len && top > limit ? -EOVERFLOW : 0;
	ret = tt_event_range(addr, len, ps, limit, &start, &end);
	FZ_CHECK(ret == want, "range [%#llx, +%#llx) page %#llx limit %#llx: %d, should %d",
		 addr, len, ps, limit, ret, want);
	if (ret || !len)
		return;
	first = ((fz_u128)addr + ps - 1) / ps * ps;
	last = top / ps * ps;
	if (last < first)
		last = first;
	FZ_CHECK(start == (u64)first && end == (u64)last && end <= limit,
		 "range [%#llx, +%#llx) page %#llx: [%#llx, %#llx), should [%#llx, %#llx)",
		 addr, len, ps, start, end, (u64)first, (u64)last);
}

static void op_pages(struct fz *f)
{
	u64 ps = fz_pow2(f, 0, 63), addr = fz_u64(f), len = fz_u64(f);
	u64 start = 0x5a5a, n, n2;
	fz_u128 top = (fz_u128)addr + len, first, want;

	if (top > ~0ULL)
		top = ~0ULL;		/* cut at the end of the address space */
	first = ((fz_u128)addr + ps - 1) / ps * ps;
	want = top / ps * ps > first ? (top / ps * ps - first) / ps : 0;
	n = tt_event_pages(addr, len, ps, &start);
	n2 = tt_event_pages(addr, len, ps, NULL);
	FZ_CHECK(n == n2, "the result depends on @start");
	FZ_CHECK(n == want, "[%#llx, +%#llx) page %#llx: %llu pages, should %llu",
		 addr, len, ps, n, (u64)want);
	if (!n)
		return;
	FZ_CHECK(start == (u64)first && start % ps == 0 && start >= addr &&
		 (fz_u128)start + (fz_u128)n * ps <= (fz_u128)addr + len,
		 "[%#llx, +%#llx) page %#llx: pages [%#llx, +%llu) outside it",
		 addr, len, ps, start, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };

	while (fz_more(&f)) {
		switch (fz_u8(&f) % 4) {
		case 0:
			op_event(&f);
			break;
		case 1:
			op_hint(&f);
			break;
		case 2:
			op_range(&f);
			break;
		default:
			op_pages(&f);
			break;
		}
	}
	return 0;
}
