/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libtiertrain: the C API of tiertrain.
 *
 * Every call that returns int returns 0 (or a non-negative count where
 * documented) on success and -errno on failure, and also sets errno, so both
 * `if (tt_x(...) < 0) perror(...)` and `ret = tt_x(...); strerror(-ret)` work.
 *
 * Backends. tt_open() uses the kernel module through /dev/tiertrain when the
 * device exists ("kernel" backend). When it does not (module not loaded, or
 * not installed) the same calls work in-process through move_pages(2)
 * ("move_pages" backend): migrations are synchronous and use the calling
 * thread, residency is read with move_pages(2) status queries, registrations
 * are kept in the library (and, unlike the module's, are not forgotten when
 * their memory is unmapped). Setting the environment variable
 * TIERTRAIN_BACKEND=move_pages forces the fallback; TIERTRAIN_BACKEND=kernel
 * makes tt_open() fail instead of falling back; any other non-empty value is
 * an error (EINVAL).
 *
 * Errors are those documented in <linux/tiertrain.h> for the matching ioctl,
 * in both backends: EINVAL, EOVERFLOW, EFAULT, EOPNOTSUPP, ENODEV, ENOSPC...
 * A NULL session fails with EBADF.
 *
 * Thread safety: a session may be used from several threads at once.
 */
#ifndef TIERTRAIN_H
#define TIERTRAIN_H

#include <stddef.h>
#include <stdint.h>
#include <linux/tiertrain.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tt_session;

/* Library version string, e.g. "0.1.0". */
const char *tt_version(void);

/*
 * tt_open() - open a session bound to the calling process's memory.
 * Returns NULL and sets errno on failure (EACCES: no permission on
 * /dev/tiertrain; ENOENT: TIERTRAIN_BACKEND=kernel and no device; EINVAL:
 * TIERTRAIN_BACKEND has an unknown value; ENOMEM).
 */
struct tt_session *tt_open(void);

/* tt_close() - wait for queued work, forget registrations, free @s. NULL ok. */
void tt_close(struct tt_session *s);

/*
 * tt_backend() - "kernel" or "move_pages": the backend @s uses, or, with
 * @s == NULL, the backend tt_open() would pick now (NULL with errno EINVAL
 * when TIERTRAIN_BACKEND has an unknown value).
 */
const char *tt_backend(const struct tt_session *s);

/*
 * tt_migrate() - move the pages of [addr, addr + len) to @node, synchronously.
 * addr and len must be page aligned. Returns 0, or -ENOSPC when @node was
 * full for some pages (they stay where they were).
 */
int tt_migrate(struct tt_session *s, void *addr, size_t len, int node);

/*
 * tt_migrate_ex() - tt_migrate() with TT_MIGRATE_* @flags and, when @res is
 * not NULL, the per-reason page counts of the migration. With
 * TT_MIGRATE_ASYNC (kernel backend only; the move_pages backend runs it
 * synchronously) @res is zeroed and tt_flush() waits for completion.
 */
int tt_migrate_ex(struct tt_session *s, void *addr, size_t len, int node,
		  unsigned int flags, struct tt_migrate_result *res);

/* tt_flush() - wait for every asynchronous migration queued so far. */
int tt_flush(struct tt_session *s);

/*
 * tt_residency() - bytes of [addr, addr + len) resident on each node.
 * @bytes_per_node has @nr_nodes elements (1 .. TT_MAX_NODES); element i gets
 * the bytes on node i. Pages that are not resident or on nodes >= nr_nodes
 * are not counted (use tt_residency_ex() to see them).
 */
int tt_residency(struct tt_session *s, const void *addr, size_t len,
		 uint64_t *bytes_per_node, int nr_nodes);

/*
 * tt_residency_ex() - tt_residency() that also reports bytes not resident
 * (@not_present) and bytes on nodes >= nr_nodes (@other); either may be NULL.
 */
int tt_residency_ex(struct tt_session *s, const void *addr, size_t len,
		    uint64_t *bytes_per_node, int nr_nodes,
		    uint64_t *not_present, uint64_t *other);

/*
 * tt_register() / tt_unregister() - tell the session about a range (see
 * TT_IOC_REGISTER). @flags: TT_RANGE_*. Unregister needs the same addr, len.
 */
int tt_register(struct tt_session *s, void *addr, size_t len, uint32_t layer,
		uint32_t flags);
int tt_unregister(struct tt_session *s, void *addr, size_t len);

/*
 * tt_stats() - copy the session counters into @st (see struct tt_ioc_stats).
 */
int tt_stats(struct tt_session *s, struct tt_ioc_stats *st);

/* tt_page_size() - the page size ranges must be aligned to. */
size_t tt_page_size(void);

#ifdef __cplusplus
}
#endif

#endif /* TIERTRAIN_H */
