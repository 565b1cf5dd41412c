// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Scheduler events and settings: the checks the module documents in
 * <linux/tiertrain.h>, done in the library for the move_pages backend, and
 * that backend's TT_IOC_EVENT, TT_IOC_EVENTS, TT_IOC_GET_SCHED,
 * TT_IOC_SET_SCHED and TT_IOC_LAYERS.
 *
 * Event checks, in this order:
 *   EOPNOTSUPP  a flag bit outside TT_EV_FLAGS_ALL;
 *   EINVAL      an unknown type; a layer event without exactly one of
 *               TT_FWD and TT_BWD; a flag of another event type (TT_FWD or
 *               TT_BWD on a tensor or iteration event, TT_EV_PERSISTENT on
 *               anything but a tensor); a field that must be 0 and is not
 *               (layer of TT_EV_ITER_BEGIN, addr and len of non-tensor
 *               events, ts_ns without TT_EV_TIMESTAMP);
 *   EINVAL      a TT_EV_TIMESTAMP time before the session's latest event.
 *
 * Every event of the move_pages backend goes to the executor
 * (core/exec.c, through usched.c's tt_us_events(); a TT_IOC_EVENTS batch
 * whole), which checks and timestamps it with the module's checks (the
 * range of a saved tensor too: inside the user address space and mapped);
 * it can still refuse it with ENOSPC (more than TT_MP_MAX_RANGES saved
 * tensors not yet forgotten, or more than TT_US_MAX_LAYERS layer ids, the
 * module parameters' defaults), EOVERFLOW or ENOMEM. Only an accepted
 * event counts in events and moves the session's time on. With
 * TT_SCHED_SYNC_LATE, a backward begin then fetches the layer's late bytes
 * in the calling thread, with the lock dropped.
 *
 * The settings live in the session (s->sched), except the rates, which
 * the scheduler's timeline measures and updates: tt_sched_get() reports
 * its current ER and PR, and a TT_SCHED_SET_RATES request restarts the
 * averages from the given values.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "core/exec.h"

/**
 * tt_sched_defaults() - the settings of a new session.
 * @cfg: out: the module parameters' defaults (flags TT_SCHED_DEFAULT_FLAGS,
 *       as the kernel module's sessions), with every valid bit set.
 */
void tt_sched_defaults(struct tt_ioc_sched *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->valid = TT_SCHED_SET_ALL;
	cfg->flags = TT_SCHED_DEFAULT_FLAGS;
	cfg->profile_iters = TT_SCHED_DEF_PROFILE_ITERS;
	cfg->stay_ns = TT_SCHED_DEF_STAY_NS;
	cfg->er_bps = TT_SCHED_DEF_RATE_BPS;
	cfg->pr_bps = TT_SCHED_DEF_RATE_BPS;
	cfg->slow_node = -1;
	cfg->fast_node = -1;
}

/* A node setting: -1 (automatic) or a node that can hold pages. */
static int tt_sched_node_check(const char *node_dir, int node)
{
	return node == -1 ? 0 : tt_node_check(node_dir, node);
}

/*
 * The checks of TT_IOC_SET_SCHED, as the module's, in this order: unknown
 * valid or flags bits and a non-zero budget_mib without
 * TT_SCHED_SET_BUDGET (EOPNOTSUPP), then the values of the selected fields
 * (EINVAL, ENODEV; TT_SCHED_REFERENCE with a bit of TT_SCHED_EXTENSIONS is
 * EINVAL). The budget is the session's own: the executor keeps it
 * (core/exec.c), there is no module-wide one in this backend.
 */
static int tt_sched_check(const struct tt_ioc_sched *req,
			  const char *node_dir)
{
	int ret;

	ret = tt_exec_cfg_check(req);
	if (ret)
		return ret;
	if (req->valid & TT_SCHED_SET_NODES) {
		ret = tt_sched_node_check(node_dir, req->slow_node);
		if (ret < 0)
			return ret;
		ret = tt_sched_node_check(node_dir, req->fast_node);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Copy the fields @req->valid selects; @req has passed tt_sched_check(). */
static void tt_sched_merge(struct tt_ioc_sched *cur,
			   const struct tt_ioc_sched *req)
{
	if (req->valid & TT_SCHED_SET_FLAGS)
		cur->flags = req->flags;
	if (req->valid & TT_SCHED_SET_PROFILE)
		cur->profile_iters = req->profile_iters;
	if (req->valid & TT_SCHED_SET_STAY)
		cur->stay_ns = req->stay_ns;
	if (req->valid & TT_SCHED_SET_RATES) {
		cur->er_bps = req->er_bps;
		cur->pr_bps = req->pr_bps;
	}
	if (req->valid & TT_SCHED_SET_NODES) {
		cur->slow_node = req->slow_node;
		cur->fast_node = req->fast_node;
	}
	if (req->valid & TT_SCHED_SET_BUDGET)
		cur->budget_mib = req->budget_mib;
}

/**
 * tt_sched_apply() - TT_IOC_SET_SCHED on a settings structure.
 * @cur:      the settings; changed only when every check passes.
 * @req:      the request.
 * @node_dir: the sysfs node directory for the node checks
 *            (TT_SYSFS_NODE_DIR; tests use a copy).
 *
 * Return: 0, -EOPNOTSUPP, -EINVAL, -ENODEV, or -errno when sysfs cannot be
 * read.
 */
int tt_sched_apply(struct tt_ioc_sched *cur, const struct tt_ioc_sched *req,
		   const char *node_dir)
{
	int ret = tt_sched_check(req, node_dir);

	if (ret < 0)
		return ret;
	tt_sched_merge(cur, req);
	return 0;
}

/**
 * tt_mp_event() - the move_pages backend's handling of one event.
 * @s:    the session (the caller has checked the process).
 * @ev:   the event.
 *
 * Every event of the backend, single or batched (tt_us_events() takes a
 * batch whole), goes to the executor as it is (tt_exec_events(), s->lock not held: the executor
 * takes it): it checks each event, gives it its time (@ev->ts_ns with
 * TT_EV_TIMESTAMP, else the scheduler's clock, never before the previous
 * event's) and counts it. Whatever happens to the memory it moves, the
 * scheduler never fails an event.
 *
 * Return: 0, -EOPNOTSUPP, -EINVAL, -EFAULT, -EOVERFLOW, -ENOSPC or -ENOMEM
 * (that event is not counted then).
 */
int tt_mp_event(struct tt_session *s, const struct tt_event *ev)
{
	unsigned int done;

	return tt_us_events(s, ev, 1, &done);
}

/* TT_IOC_EVENT. */
int tt_mp_event_op(struct tt_session *s, const struct tt_event *ev)
{
	int ret = tt_mp_owner(s);

	if (ret < 0)
		return ret;
	if (!ev)
		return -EFAULT;
	return tt_mp_event(s, ev);
}

/*
 * TT_IOC_EVENTS: flags and reserved (EOPNOTSUPP), count (EINVAL), then the
 * events in order up to the first one rejected.
 */
int tt_mp_events_op(struct tt_session *s, struct tt_ioc_events *a)
{
	const struct tt_event *ev = (const void *)(uintptr_t)a->events_ptr;
	unsigned int done = 0;
	int ret;

	a->done = 0;
	ret = tt_mp_owner(s);
	if (ret < 0)
		return ret;
	if (a->flags || a->reserved)
		return -EOPNOTSUPP;
	if (a->count > TT_EVENTS_MAX)
		return -EINVAL;
	if (a->count && !ev)
		return -EFAULT;
	if (!a->count)
		return 0;
	ret = tt_us_events(s, ev, a->count, &done);
	a->done = done;
	return ret;
}

/* TT_IOC_GET_SCHED. */
int tt_mp_sched_get(struct tt_session *s, struct tt_ioc_sched *cfg)
{
	int ret = tt_mp_owner(s);

	if (ret < 0)
		return ret;
	if (!cfg)
		return -EFAULT;
	tt_us_sched_get(s, cfg);
	return 0;
}

/* TT_IOC_SET_SCHED: checked outside the lock (sysfs reads), then merged. */
int tt_mp_sched_set(struct tt_session *s, const struct tt_ioc_sched *cfg)
{
	int ret = tt_mp_owner(s);

	if (ret < 0)
		return ret;
	if (!cfg)
		return -EFAULT;
	ret = tt_sched_check(cfg, TT_SYSFS_NODE_DIR);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&s->lock);
	tt_sched_merge(&s->sched, cfg);
	pthread_mutex_unlock(&s->lock);
	tt_us_sched_apply(s, cfg);
	return 0;
}

/* TT_IOC_HINT: the checks of the module, then the userspace scheduler. */
int tt_mp_hint(struct tt_session *s, const struct tt_ioc_hint *req)
{
	int ret = tt_mp_owner(s);
	__u64 start, end;

	if (ret < 0)
		return ret;
	ret = tt_hint_check(req, tt_page_size(), tt_user_addr_limit(), &start,
			    &end);
	if (ret < 0)
		return ret;
	return tt_us_hint(s, req, start, end);
}

/* TT_IOC_LAYERS: flags (EOPNOTSUPP), then the scheduler's layers. */
int tt_mp_layers(struct tt_session *s, struct tt_ioc_layers *a)
{
	int ret = tt_mp_owner(s);

	if (ret < 0)
		return ret;
	if (a->flags)
		return -EOPNOTSUPP;
	return tt_us_layers(s, a);
}
