// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel backend: every call is one ioctl on /dev/tiertrain. Argument
 * checking is the module's; this file only carries the structures across.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"

/* ioctl() result as 0 / -errno. */
static int tt_kernel_ioctl(struct tt_session *s, unsigned long cmd, void *arg)
{
	int saved = errno;
	int ret;

	ret = ioctl(s->fd, cmd, arg);
	if (ret < 0) {
		ret = -errno;
		errno = saved;
		return ret;
	}
	return 0;
}

int tt_kernel_open(struct tt_session *s)
{
	int saved = errno;
	int fd;

	fd = open("/dev/" TT_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int ret = -errno;

		errno = saved;
		return ret;
	}
	s->fd = fd;
	s->ops = &tt_kernel_ops;
	return 0;
}

static int tt_kernel_migrate(struct tt_session *s, struct tt_ioc_migrate *m)
{
	/*
	 * The module fills the result on success, on ENOSPC and EBUSY (pages
	 * that stayed) and when a fatal signal cut a migration short;
	 * otherwise it stays zero.
	 */
	memset(&m->result, 0, sizeof(m->result));
	return tt_kernel_ioctl(s, TT_IOC_MIGRATE, m);
}

static int tt_kernel_flush(struct tt_session *s)
{
	return tt_kernel_ioctl(s, TT_IOC_FLUSH, NULL);
}

static int tt_kernel_residency(struct tt_session *s,
			       struct tt_ioc_residency *r)
{
	return tt_kernel_ioctl(s, TT_IOC_RESIDENCY, r);
}

static int tt_kernel_reg(struct tt_session *s, const struct tt_ioc_range *r)
{
	struct tt_ioc_range arg = *r;

	return tt_kernel_ioctl(s, TT_IOC_REGISTER, &arg);
}

static int tt_kernel_unreg(struct tt_session *s, const struct tt_ioc_range *r)
{
	struct tt_ioc_range arg = *r;

	return tt_kernel_ioctl(s, TT_IOC_UNREGISTER, &arg);
}

static int tt_kernel_stats(struct tt_session *s, struct tt_ioc_stats *st)
{
	/*
	 * An older module fills fewer bytes: the rest reads as zero. A NULL
	 * @st reaches the module, which answers EFAULT.
	 */
	if (st)
		memset(st, 0, sizeof(*st));
	return tt_kernel_ioctl(s, TT_IOC_STATS, st);
}

/*
 * The event path: one ioctl, no copy (TT_IOC_EVENT and TT_IOC_SET_SCHED only
 * read their argument, whatever the const-less prototype of ioctl() says).
 */
static int tt_kernel_event(struct tt_session *s, const struct tt_event *ev)
{
	return tt_kernel_ioctl(s, TT_IOC_EVENT, (void *)ev);
}

static int tt_kernel_events(struct tt_session *s, struct tt_ioc_events *a)
{
	/* A module that fails before processing anything leaves done alone. */
	a->done = 0;
	return tt_kernel_ioctl(s, TT_IOC_EVENTS, a);
}

static int tt_kernel_sched_get(struct tt_session *s, struct tt_ioc_sched *cfg)
{
	return tt_kernel_ioctl(s, TT_IOC_GET_SCHED, cfg);
}

static int tt_kernel_sched_set(struct tt_session *s,
			       const struct tt_ioc_sched *cfg)
{
	return tt_kernel_ioctl(s, TT_IOC_SET_SCHED, (void *)cfg);
}

static int tt_kernel_layers(struct tt_session *s, struct tt_ioc_layers *a)
{
	return tt_kernel_ioctl(s, TT_IOC_LAYERS, a);
}

static int tt_kernel_hint(struct tt_session *s, const struct tt_ioc_hint *req)
{
	return tt_kernel_ioctl(s, TT_IOC_HINT, (void *)req);
}

static void tt_kernel_close(struct tt_session *s)
{
	close(s->fd);
	s->fd = -1;
}

const struct tt_ops tt_kernel_ops = {
	.name = "kernel",
	.migrate = tt_kernel_migrate,
	.flush = tt_kernel_flush,
	.residency = tt_kernel_residency,
	.reg = tt_kernel_reg,
	.unreg = tt_kernel_unreg,
	.stats = tt_kernel_stats,
	.event = tt_kernel_event,
	.events = tt_kernel_events,
	.sched_get = tt_kernel_sched_get,
	.sched_set = tt_kernel_sched_set,
	.layers = tt_kernel_layers,
	.hint = tt_kernel_hint,
	.close = tt_kernel_close,
};
