// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libtiertrain front end: backend choice, session life time, and the public
 * calls, which turn C arguments into the ioctl argument structures of
 * <linux/tiertrain.h> and hand them to the session's backend.
 *
 * Global state: none. tt_page_size() and tt_user_addr_limit() (range.c)
 * cache values that are fixed for the life of the process.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#ifndef TT_LIB_VERSION
#error "TT_LIB_VERSION must be defined by the build (lib/Makefile)"
#endif

#define TT_DEVICE_PATH	"/dev/" TT_DEVICE_NAME
#define TT_ENV_BACKEND	"TIERTRAIN_BACKEND"

enum tt_choice {
	TT_CHOICE_AUTO,
	TT_CHOICE_KERNEL,
	TT_CHOICE_MOVE_PAGES,
	TT_CHOICE_INVALID,
};

/* Store -ret in errno for failed calls; every public int call ends here. */
static int tt_ret(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

static enum tt_choice tt_choice(void)
{
	const char *env = getenv(TT_ENV_BACKEND);

	if (!env || !*env)
		return TT_CHOICE_AUTO;
	if (!strcmp(env, "kernel"))
		return TT_CHOICE_KERNEL;
	if (!strcmp(env, "move_pages"))
		return TT_CHOICE_MOVE_PAGES;
	return TT_CHOICE_INVALID;
}

TT_EXPORT const char *tt_version(void)
{
	return TT_LIB_VERSION;
}

TT_EXPORT const char *tt_backend(const struct tt_session *s)
{
	int saved = errno;
	struct stat st;

	if (s)
		return s->ops->name;
	switch (tt_choice()) {
	case TT_CHOICE_KERNEL:
		return tt_kernel_ops.name;
	case TT_CHOICE_MOVE_PAGES:
		return tt_mp_ops.name;
	case TT_CHOICE_AUTO:
		/* What tt_open() does: anything but ENOENT means "kernel". */
		if (stat(TT_DEVICE_PATH, &st) == 0 || errno != ENOENT) {
			errno = saved;
			return tt_kernel_ops.name;
		}
		errno = saved;
		return tt_mp_ops.name;
	case TT_CHOICE_INVALID:
		break;
	}
	errno = EINVAL;
	return NULL;
}

TT_EXPORT struct tt_session *tt_open(void)
{
	enum tt_choice choice = tt_choice();
	struct tt_session *s;
	int ret;

	if (choice == TT_CHOICE_INVALID) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->fd = -1;
	ret = tt_cpus_open(s);
	if (ret < 0) {
		free(s);
		errno = -ret;
		return NULL;
	}
	if (choice == TT_CHOICE_MOVE_PAGES) {
		ret = tt_mp_open(s);
	} else {
		ret = tt_kernel_open(s);
		/* No device: fall back unless the kernel was asked for. */
		if (ret == -ENOENT && choice == TT_CHOICE_AUTO)
			ret = tt_mp_open(s);
	}
	if (ret < 0) {
		free(s);
		errno = -ret;
		return NULL;
	}
	if (s->ops == &tt_kernel_ops) {
		ret = tt_mover_open(s);
		if (ret < 0) {
			tt_close(s);
			errno = -ret;
			return NULL;
		}
	}
	return s;
}

TT_EXPORT void tt_close(struct tt_session *s)
{
	int saved = errno;

	if (!s)
		return;
	tt_mover_stop(s);
	s->ops->close(s);
	free(s);
	errno = saved;
}

TT_EXPORT int tt_migrate_ex(struct tt_session *s, void *addr, size_t len,
			    int node, unsigned int flags,
			    struct tt_migrate_result *res)
{
	struct tt_ioc_migrate m = {
		.addr = (uintptr_t)addr,
		.len = len,
		.node = node,
		.flags = flags,
	};
	int ret;

	if (!s)
		return tt_ret(-EBADF);
	ret = s->ops->migrate(s, &m);
	if (res)
		*res = m.result;
	return tt_ret(ret);
}

TT_EXPORT int tt_migrate(struct tt_session *s, void *addr, size_t len,
			 int node)
{
	return tt_migrate_ex(s, addr, len, node, 0, NULL);
}

TT_EXPORT int tt_flush(struct tt_session *s)
{
	if (!s)
		return tt_ret(-EBADF);
	return tt_ret(s->ops->flush(s));
}

TT_EXPORT int tt_residency_ex(struct tt_session *s, const void *addr,
			      size_t len, uint64_t *bytes_per_node,
			      int nr_nodes, uint64_t *not_present,
			      uint64_t *other)
{
	struct tt_ioc_residency r = {
		.addr = (uintptr_t)addr,
		.len = len,
		.bytes_ptr = (uintptr_t)bytes_per_node,
		/* A negative count becomes a huge one: EINVAL either way. */
		.nr_nodes = (uint32_t)nr_nodes,
	};
	int ret;

	if (!s)
		return tt_ret(-EBADF);
	ret = s->ops->residency(s, &r);
	if (ret < 0)
		return tt_ret(ret);
	if (not_present)
		*not_present = r.not_present_bytes;
	if (other)
		*other = r.other_bytes;
	return 0;
}

TT_EXPORT int tt_residency(struct tt_session *s, const void *addr, size_t len,
			   uint64_t *bytes_per_node, int nr_nodes)
{
	return tt_residency_ex(s, addr, len, bytes_per_node, nr_nodes, NULL,
			       NULL);
}

TT_EXPORT int tt_register(struct tt_session *s, void *addr, size_t len,
			  uint32_t layer, uint32_t flags)
{
	struct tt_ioc_range r = {
		.addr = (uintptr_t)addr,
		.len = len,
		.layer = layer,
		.flags = flags,
	};

	if (!s)
		return tt_ret(-EBADF);
	return tt_ret(s->ops->reg(s, &r));
}

TT_EXPORT int tt_unregister(struct tt_session *s, void *addr, size_t len)
{
	struct tt_ioc_range r = {
		.addr = (uintptr_t)addr,
		.len = len,
	};

	if (!s)
		return tt_ret(-EBADF);
	return tt_ret(s->ops->unreg(s, &r));
}

TT_EXPORT int tt_stats(struct tt_session *s, struct tt_ioc_stats *st)
{
	if (!s)
		return tt_ret(-EBADF);
	return tt_ret(s->ops->stats(s, st));
}

/* One scheduler event, built on the stack and handed to the backend. */
static int tt_event_submit(struct tt_session *s, uint16_t type,
			   uint16_t flags, uint32_t layer, uint64_t addr,
			   uint64_t len)
{
	struct tt_event ev = {
		.type = type,
		.flags = flags,
		.layer = layer,
		.addr = addr,
		.len = len,
	};

	if (!s)
		return tt_ret(-EBADF);
	return tt_ret(s->ops->event(s, &ev));
}

TT_EXPORT int tt_iter_begin(struct tt_session *s)
{
	return tt_event_submit(s, TT_EV_ITER_BEGIN, 0, 0, 0, 0);
}

/* A layer event: @phase must be exactly TT_FWD or TT_BWD. */
static int tt_layer_event(struct tt_session *s, uint16_t type, uint32_t layer,
			  unsigned int phase)
{
	if (!s)
		return tt_ret(-EBADF);
	if (phase != TT_FWD && phase != TT_BWD)
		return tt_ret(-EINVAL);
	return tt_event_submit(s, type, phase, layer, 0, 0);
}

TT_EXPORT int tt_layer_begin(struct tt_session *s, uint32_t layer,
			     unsigned int phase)
{
	return tt_layer_event(s, TT_EV_LAYER_BEGIN, layer, phase);
}

TT_EXPORT int tt_layer_end(struct tt_session *s, uint32_t layer,
			   unsigned int phase)
{
	return tt_layer_event(s, TT_EV_LAYER_END, layer, phase);
}

TT_EXPORT int tt_tensor_saved_ex(struct tt_session *s, uint32_t layer,
				 const void *addr, size_t len,
				 unsigned int flags)
{
	if (!s)
		return tt_ret(-EBADF);
	if (flags & ~TT_EV_FLAGS_ALL)
		return tt_ret(-EOPNOTSUPP);
	if (flags & ~TT_EV_PERSISTENT)
		return tt_ret(-EINVAL);
	return tt_event_submit(s, TT_EV_TENSOR_SAVED, flags, layer,
			       (uintptr_t)addr, len);
}

TT_EXPORT int tt_tensor_saved(struct tt_session *s, uint32_t layer,
			      const void *addr, size_t len)
{
	return tt_tensor_saved_ex(s, layer, addr, len, 0);
}

TT_EXPORT int tt_events(struct tt_session *s, const struct tt_event *ev,
			unsigned int n)
{
	unsigned int done = 0;
	int ret;

	if (!s)
		return tt_ret(-EBADF);
	if (n > INT_MAX)
		return tt_ret(-EINVAL);
	while (done < n) {
		struct tt_ioc_events a = {
			.events_ptr = (uintptr_t)ev + done * sizeof(*ev),
			.count = n - done < TT_EVENTS_MAX ? n - done :
							    TT_EVENTS_MAX,
		};

		ret = s->ops->events(s, &a);
		if (ret < 0)
			return tt_ret(ret);
		done += a.count;
	}
	return (int)n;
}

TT_EXPORT int tt_sched_get(struct tt_session *s, struct tt_ioc_sched *cfg)
{
	if (!s)
		return tt_ret(-EBADF);
	return tt_ret(s->ops->sched_get(s, cfg));
}

TT_EXPORT int tt_sched_set(struct tt_session *s,
			   const struct tt_ioc_sched *cfg)
{
	if (!s)
		return tt_ret(-EBADF);
	return tt_ret(s->ops->sched_set(s, cfg));
}

TT_EXPORT int tt_hint(struct tt_session *s, const void *addr, size_t len,
		      unsigned int hint)
{
	struct tt_ioc_hint req = {
		.addr = (uintptr_t)addr,
		.len = len,
		.hint = hint,
	};

	if (!s)
		return tt_ret(-EBADF);
	return tt_ret(s->ops->hint(s, &req));
}

TT_EXPORT int tt_layers(struct tt_session *s, struct tt_layer_info *info,
			unsigned int n)
{
	struct tt_ioc_layers a = {
		.info_ptr = (uintptr_t)info,
		.count = n,
	};
	int ret;

	if (!s)
		return tt_ret(-EBADF);
	ret = s->ops->layers(s, &a);
	if (ret < 0)
		return tt_ret(ret);
	if (a.count > INT_MAX)
		return tt_ret(-EOVERFLOW);
	return (int)a.count;
}
