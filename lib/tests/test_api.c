// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libtiertrain public API tests, on the host: one NUMA node (0) and normally
 * no /dev/tiertrain, so they exercise backend selection, the move_pages
 * backend (forced with TIERTRAIN_BACKEND=move_pages, so that a loaded module
 * does not change what is tested) and its argument checks. The kernel
 * backend is covered by the selftests in the VM.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "tiertrain.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static size_t ps;

/* Call @call, expect it to return -@err and set errno to @err. */
#define assert_fails(err, call) do {				\
	int __r;						\
	errno = 0;						\
	__r = (call);						\
	assert_int_equal(__r, -(err));				\
	assert_int_equal(errno, (err));				\
} while (0)

static void *map_anon(size_t pages)
{
	void *p = mmap(NULL, pages * ps, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

/* Write to each of @pages pages at @p: they get a page of their own. */
static void touch(void *p, size_t pages)
{
	size_t i;

	for (i = 0; i < pages; i++)
		__atomic_store_n((char *)p + i * ps, 1, __ATOMIC_RELAXED);
}

/* Read the page at @p: untouched, it maps the shared zero page. */
static void read_page(const void *p)
{
	static char sink;

	sink += __atomic_load_n((const char *)p, __ATOMIC_RELAXED);
}

/*
 * Read @n pages from @p; return how many of them map the shared zero page
 * (present in /proc/self/pagemap and not mapped exclusively: the zero page
 * has no struct page of its own to map). Some kernels give a read of an
 * untouched anonymous page a page of its own instead.
 */
static int read_zero_pages(const char *p, int n)
{
	uint64_t e;
	int fd, i, zero = 0;

	for (i = 0; i < n; i++)
		read_page(p + i * ps);
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (i = 0; i < n; i++) {
		off_t off = (off_t)((uintptr_t)(p + i * ps) / ps) * 8;

		assert_int_equal(pread(fd, &e, sizeof(e), off), sizeof(e));
		assert_true(e >> 63);			/* present */
		zero += !((e >> 56) & 1);		/* not exclusive */
	}
	close(fd);
	return zero;
}

/* A private mapping of a temporary file, @pages long. */
static void *map_file(size_t pages, int prot_flags)
{
	char path[] = "/tmp/tt-test-XXXXXX";
	void *p;
	int fd;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, pages * ps), 0);
	p = mmap(NULL, pages * ps, PROT_READ | PROT_WRITE, prot_flags, fd, 0);
	assert_true(p != MAP_FAILED);
	close(fd);
	return p;
}

static int setup_session(void **state)
{
	struct tt_session *s;

	setenv("TIERTRAIN_BACKEND", "move_pages", 1);
	s = tt_open();
	if (!s)
		return -1;
	*state = s;
	return 0;
}

static int teardown_session(void **state)
{
	tt_close(*state);
	unsetenv("TIERTRAIN_BACKEND");
	return 0;
}

static void test_version(void **state)
{
	unsigned int a, b, c;
	char end;
	int n;

	(void)state;
	n = sscanf(tt_version(), "%u.%u.%u%c", &a, &b, &c, &end);
	assert_int_equal(n, 3);
	assert_int_equal(tt_page_size(), (size_t)sysconf(_SC_PAGESIZE));
}

/* The automatic choice: the kernel when /dev/tiertrain exists. */
static const char *auto_backend(void)
{
	struct stat st;

	return stat("/dev/tiertrain", &st) == 0 ? "kernel" : "move_pages";
}

static void test_backend_default(void **state)
{
	struct tt_session *s;

	(void)state;
	unsetenv("TIERTRAIN_BACKEND");
	assert_string_equal(tt_backend(NULL), auto_backend());
	s = tt_open();
	assert_non_null(s);
	assert_string_equal(tt_backend(s), auto_backend());
	tt_close(s);

	/* An empty value means unset. */
	setenv("TIERTRAIN_BACKEND", "", 1);
	assert_string_equal(tt_backend(NULL), auto_backend());
	s = tt_open();
	assert_non_null(s);
	assert_string_equal(tt_backend(s), auto_backend());
	tt_close(s);
	unsetenv("TIERTRAIN_BACKEND");
}

static void test_backend_env(void **state)
{
	struct tt_session *s;

	(void)state;
	setenv("TIERTRAIN_BACKEND", "kernel", 1);
	assert_string_equal(tt_backend(NULL), "kernel");
	errno = 0;
	s = tt_open();
	if (!strcmp(auto_backend(), "kernel")) {
		assert_non_null(s);
		assert_string_equal(tt_backend(s), "kernel");
		tt_close(s);
	} else {
		/* No device: no fallback. */
		assert_null(s);
		assert_int_equal(errno, ENOENT);
	}

	setenv("TIERTRAIN_BACKEND", "move_pages", 1);
	assert_string_equal(tt_backend(NULL), "move_pages");
	s = tt_open();
	assert_non_null(s);
	assert_string_equal(tt_backend(s), "move_pages");
	tt_close(s);

	/* a CPU list that is not one: no session, whatever the backend */
	setenv("TIERTRAIN_MOVER_CPUS", "0-x", 1);
	errno = 0;
	assert_null(tt_open());
	assert_int_equal(errno, EINVAL);
	unsetenv("TIERTRAIN_MOVER_CPUS");

	setenv("TIERTRAIN_BACKEND", "kernal", 1);
	errno = 0;
	assert_null(tt_backend(NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(tt_open());
	assert_int_equal(errno, EINVAL);
	unsetenv("TIERTRAIN_BACKEND");
}

static void test_null_session(void **state)
{
	struct tt_migrate_result res;
	struct tt_ioc_sched cfg = { 0 };
	struct tt_ioc_stats st;
	uint64_t bytes[1];
	char buf[1];

	(void)state;
	assert_fails(EBADF, tt_migrate(NULL, buf, ps, 0));
	assert_fails(EBADF, tt_migrate_ex(NULL, buf, ps, 0, 0, &res));
	assert_fails(EBADF, tt_flush(NULL));
	assert_fails(EBADF, tt_residency(NULL, buf, 1, bytes, 1));
	assert_fails(EBADF, tt_residency_ex(NULL, buf, 1, bytes, 1, NULL,
					    NULL));
	assert_fails(EBADF, tt_register(NULL, buf, ps, 0, 0));
	assert_fails(EBADF, tt_unregister(NULL, buf, ps));
	assert_fails(EBADF, tt_stats(NULL, &st));
	assert_fails(EBADF, tt_iter_begin(NULL));
	assert_fails(EBADF, tt_layer_begin(NULL, 0, TT_FWD));
	assert_fails(EBADF, tt_layer_end(NULL, 0, TT_BWD));
	/* EBADF comes before the other argument checks. */
	assert_fails(EBADF, tt_layer_begin(NULL, 0, 0));
	assert_fails(EBADF, tt_tensor_saved(NULL, 0, buf, 1));
	assert_fails(EBADF, tt_tensor_saved_ex(NULL, 0, buf, 1, ~0U));
	assert_fails(EBADF, tt_events(NULL, NULL, 0));
	assert_fails(EBADF, tt_sched_get(NULL, &cfg));
	assert_fails(EBADF, tt_sched_set(NULL, &cfg));
	assert_fails(EBADF, tt_layers(NULL, NULL, 0));
	tt_close(NULL);
}

/* The range arithmetic of TT_IOC_MIGRATE and TT_IOC_REGISTER. */
static void test_range_einval_eoverflow(void **state)
{
	struct tt_session *s = *state;
	char *p = map_anon(4);
	char *top = (char *)(uintptr_t)(UINTPTR_MAX - ps + 1);
	char *kernel = (char *)(uintptr_t)0xffff800000000000ULL;

	touch(p, 4);
	assert_fails(EINVAL, tt_migrate(s, p, 0, 0));
	assert_fails(EINVAL, tt_migrate(s, p + 1, ps, 0));
	assert_fails(EINVAL, tt_migrate(s, p, ps + 1, 0));
	assert_fails(EOVERFLOW, tt_migrate(s, top, 2 * ps, 0));
	assert_fails(EOVERFLOW, tt_migrate(s, kernel, ps, 0));

	assert_fails(EINVAL, tt_register(s, p, 0, 0, 0));
	assert_fails(EINVAL, tt_register(s, p + 1, ps, 0, 0));
	assert_fails(EINVAL, tt_register(s, p, 3, 0, 0));
	assert_fails(EOVERFLOW, tt_register(s, top, 2 * ps, 0, 0));
	assert_fails(EOVERFLOW, tt_register(s, kernel, ps, 0, 0));
	munmap(p, 4 * ps);
}

/* Holes: EFAULT. */
static void test_range_efault(void **state)
{
	struct tt_session *s = *state;
	char *p = map_anon(3);

	touch(p, 3);
	assert_int_equal(munmap(p + ps, ps), 0);
	assert_fails(EFAULT, tt_migrate(s, p, 3 * ps, 0));
	assert_fails(EFAULT, tt_register(s, p, 3 * ps, 0, 0));
	assert_fails(EFAULT, tt_migrate(s, p + ps, ps, 0));
	assert_fails(EFAULT, tt_register(s, p + ps, ps, 0, 0));
	/* Mapped up to the hole is fine. */
	assert_int_equal(tt_migrate(s, p, ps, 0), 0);
	munmap(p, 3 * ps);
	assert_fails(EFAULT, tt_migrate(s, p, ps, 0));
}

/* Mappings tiertrain does not move: EOPNOTSUPP, and nothing registered. */
static void test_range_eopnotsupp(void **state)
{
	struct tt_session *s = *state;
	char *file = map_file(2, MAP_PRIVATE);
	char *shfile = map_file(2, MAP_SHARED);
	char *shanon, *mixed, *vdso;
	struct tt_ioc_stats st;
	int fd;

	touch(file, 2);
	assert_fails(EOPNOTSUPP, tt_migrate(s, file, 2 * ps, 0));
	assert_fails(EOPNOTSUPP, tt_register(s, file, 2 * ps, 0, 0));
	assert_fails(EOPNOTSUPP, tt_migrate(s, shfile, 2 * ps, 0));
	assert_fails(EOPNOTSUPP, tt_register(s, shfile, ps, 0, 0));

	shanon = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(shanon != MAP_FAILED);
	touch(shanon, 2);
	assert_fails(EOPNOTSUPP, tt_migrate(s, shanon, 2 * ps, 0));
	assert_fails(EOPNOTSUPP, tt_register(s, shanon, 2 * ps, 0, 0));

	/* Anonymous pages followed by a file page: the range is refused. */
	mixed = map_anon(3);
	touch(mixed, 3);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(mmap(mixed + 2 * ps, ps, PROT_READ, MAP_PRIVATE | MAP_FIXED,
			 fd, 0) != MAP_FAILED);
	close(fd);
	assert_fails(EOPNOTSUPP, tt_migrate(s, mixed, 3 * ps, 0));
	assert_fails(EOPNOTSUPP, tt_register(s, mixed, 3 * ps, 0, 0));
	assert_int_equal(tt_migrate(s, mixed, 2 * ps, 0), 0);

	vdso = (char *)getauxval(AT_SYSINFO_EHDR);
	assert_non_null(vdso);
	assert_fails(EOPNOTSUPP, tt_migrate(s, vdso, ps, 0));
	assert_fails(EOPNOTSUPP, tt_register(s, vdso, ps, 0, 0));

	assert_int_equal(tt_stats(s, &st), 0);
	assert_int_equal(st.registered_ranges, 0);
	assert_int_equal(st.migrate_calls, 1);
	munmap(file, 2 * ps);
	munmap(shfile, 2 * ps);
	munmap(shanon, 2 * ps);
	munmap(mixed, 3 * ps);
}

static void test_unknown_flags(void **state)
{
	struct tt_session *s = *state;
	struct tt_migrate_result res;
	char *p = map_anon(1);

	touch(p, 1);
	assert_fails(EOPNOTSUPP, tt_migrate_ex(s, p, ps, 0, 1U << 1, &res));
	assert_fails(EOPNOTSUPP, tt_migrate_ex(s, p, ps, 0, 1U << 31, &res));
	assert_fails(EOPNOTSUPP, tt_register(s, p, ps, 0, 1U << 1));
	assert_fails(EOPNOTSUPP, tt_register(s, p, ps, 0, ~0U));
	munmap(p, ps);
}

/* nr_node_ids: the last number in the possible node list, plus one. */
static int nr_node_ids(void)
{
	char buf[256], *p;
	ssize_t n;
	int fd;

	fd = open("/sys/devices/system/node/possible", O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	p = buf + strcspn(buf, "\n");
	while (p > buf && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return atoi(p) + 1;
}

/*
 * Node errors. Every id from nr_node_ids on is EINVAL (on the host, with
 * its one node 0, that is already 1); ENODEV needs a possible node without
 * memory and is tested on a synthetic sysfs tree in test_internal.
 */
static void test_node_errors(void **state)
{
	struct tt_session *s = *state;
	char *p = map_anon(1);

	touch(p, 1);
	assert_fails(EINVAL, tt_migrate(s, p, ps, -1));
	assert_fails(EINVAL, tt_migrate(s, p, ps, INT32_MIN));
	assert_fails(EINVAL, tt_migrate(s, p, ps, nr_node_ids()));
	assert_fails(EINVAL, tt_migrate(s, p, ps, TT_MAX_NODES));
	assert_fails(EINVAL, tt_migrate(s, p, ps, 99999));
	assert_int_equal(tt_migrate(s, p, ps, 0), 0);
	munmap(p, ps);
}

static void assert_result_sums(const struct tt_migrate_result *r)
{
	assert_int_equal(r->moved + r->already_on_node +
			 r->skipped_not_present + r->skipped_busy +
			 r->skipped_unsupported + r->skipped_no_memory,
			 r->pages);
}

static void test_migrate_result(void **state)
{
	struct tt_session *s = *state;
	struct tt_migrate_result res;
	char *p = map_anon(16);
	int zero;

	/*
	 * 10 pages written, 2 read (the zero page: not present, unless the
	 * kernel gave them pages of their own), 4 never touched.
	 */
	touch(p, 10);
	zero = read_zero_pages(p + 10 * ps, 2);
	memset(&res, 0xff, sizeof(res));
	assert_int_equal(tt_migrate_ex(s, p, 16 * ps, 0, 0, &res), 0);
	assert_int_equal(res.pages, 16);
	assert_int_equal(res.already_on_node, 12 - zero);
	assert_int_equal(res.moved, 0);
	assert_int_equal(res.skipped_not_present, 4 + zero);
	assert_int_equal(res.skipped_busy, 0);
	assert_int_equal(res.skipped_unsupported, 0);
	assert_int_equal(res.skipped_no_memory, 0);
	assert_true(res.elapsed_ns > 0);
	assert_result_sums(&res);

	/* Without a result pointer. */
	assert_int_equal(tt_migrate(s, p, 16 * ps, 0), 0);
	assert_int_equal(tt_migrate_ex(s, p, 16 * ps, 0, 0, NULL), 0);
	munmap(p, 16 * ps);
}

/* More pages than one move_pages(2) chunk, and the heap and stack. */
static void test_migrate_large(void **state)
{
	struct tt_session *s = *state;
	struct tt_migrate_result res;
	size_t n = 3000;
	char *p = map_anon(n);
	char stackbuf[4 * 4096];
	uintptr_t a;

	touch(p, n - 1);
	assert_int_equal(tt_migrate_ex(s, p, n * ps, 0, 0, &res), 0);
	assert_int_equal(res.pages, n);
	assert_int_equal(res.already_on_node, n - 1);
	assert_int_equal(res.skipped_not_present, 1);
	assert_result_sums(&res);
	munmap(p, n * ps);

	memset(stackbuf, 1, sizeof(stackbuf));
	a = ((uintptr_t)stackbuf + ps - 1) & ~(uintptr_t)(ps - 1);
	assert_int_equal(tt_migrate_ex(s, (void *)a, ps, 0, 0, &res), 0);
	assert_int_equal(res.already_on_node, 1);
}

static void test_migrate_async(void **state)
{
	struct tt_session *s = *state;
	struct tt_migrate_result res;
	struct tt_ioc_stats st;
	char *p = map_anon(8);

	touch(p, 8);
	memset(&res, 0xff, sizeof(res));
	assert_int_equal(tt_migrate_ex(s, p, 8 * ps, 0, TT_MIGRATE_ASYNC,
				       &res), 0);
	assert_int_equal(res.pages, 0);
	assert_int_equal(res.already_on_node, 0);
	assert_int_equal(res.elapsed_ns, 0);
	assert_int_equal(tt_flush(s), 0);
	assert_int_equal(tt_stats(s, &st), 0);
	assert_int_equal(st.migrate_calls, 1);
	assert_int_equal(st.async_queued, 1);
	assert_int_equal(st.async_done, 1);
	assert_int_equal(st.async_cancelled, 0);
	assert_int_equal(st.total.pages, 8);
	assert_int_equal(st.total.already_on_node, 8);
	munmap(p, 8 * ps);
}

static void test_residency(void **state)
{
	struct tt_session *s = *state;
	uint64_t bytes[4], np, other;
	char *p = map_anon(16);
	int zero;

	touch(p, 10);
	zero = read_zero_pages(p + 12 * ps, 1);
	memset(bytes, 0xff, sizeof(bytes));
	np = other = 12345;
	assert_int_equal(tt_residency_ex(s, p, 16 * ps, bytes, 4, &np,
					 &other), 0);
	assert_int_equal(bytes[0], (11 - zero) * ps);
	assert_int_equal(bytes[1], 0);
	assert_int_equal(bytes[2], 0);
	assert_int_equal(bytes[3], 0);
	assert_int_equal(np, (5 + zero) * ps);
	assert_int_equal(other, 0);
	assert_int_equal(bytes[0] + np + other, 16 * ps);

	/* Unaligned: the range is widened to whole pages. */
	assert_int_equal(tt_residency_ex(s, p + 5, 1, bytes, 1, &np, &other),
			 0);
	assert_int_equal(bytes[0], ps);
	assert_int_equal(np, 0);
	assert_int_equal(tt_residency_ex(s, p + ps - 1, 2, bytes, 1, &np,
					 NULL), 0);
	assert_int_equal(bytes[0], 2 * ps);
	assert_int_equal(tt_residency(s, p + 9 * ps + 1, ps, bytes, 1), 0);
	assert_int_equal(bytes[0], ps);

	/* The most nodes a call accepts. */
	{
		uint64_t *many = calloc(TT_MAX_NODES, sizeof(*many));

		assert_non_null(many);
		assert_int_equal(tt_residency(s, p, 16 * ps, many,
					      TT_MAX_NODES), 0);
		assert_int_equal(many[0], (11 - zero) * ps);
		free(many);
	}
	munmap(p, 16 * ps);
}

static void test_residency_errors(void **state)
{
	struct tt_session *s = *state;
	char *top = (char *)(uintptr_t)(UINTPTR_MAX - ps + 1);
	uint64_t bytes[2];
	char *p = map_anon(3);

	touch(p, 3);
	assert_fails(EINVAL, tt_residency(s, p, 0, bytes, 1));
	assert_fails(EINVAL, tt_residency(s, p, ps, bytes, 0));
	assert_fails(EINVAL, tt_residency(s, p, ps, bytes, -1));
	assert_fails(EINVAL, tt_residency(s, p, ps, bytes, TT_MAX_NODES + 1));
	assert_fails(EOVERFLOW, tt_residency(s, top, 2 * ps, bytes, 1));
	assert_fails(EOVERFLOW, tt_residency(s, top + 10, ps - 10, bytes, 1));
	assert_fails(EOVERFLOW, tt_residency(s,
					     (char *)0xffff800000000000ULL, 1,
					     bytes, 1));
	assert_fails(EFAULT, tt_residency(s, p, ps, NULL, 1));
	assert_int_equal(munmap(p + ps, ps), 0);
	assert_fails(EFAULT, tt_residency(s, p, 3 * ps, bytes, 2));
	assert_fails(EFAULT, tt_residency(s, p + ps + 7, 1, bytes, 2));
	munmap(p, 3 * ps);
}

/* Residency accepts any mapping: file pages in the page cache count. */
static void test_residency_any_mapping(void **state)
{
	struct tt_session *s = *state;
	char *file = map_file(4, MAP_SHARED);
	uint64_t bytes[1], np;

	touch(file, 3);
	assert_int_equal(tt_residency_ex(s, file, 4 * ps, bytes, 1, &np, NULL),
			 0);
	assert_int_equal(bytes[0], 3 * ps);
	assert_int_equal(np, ps);
	munmap(file, 4 * ps);
}

static void test_register(void **state)
{
	struct tt_session *s = *state;
	struct tt_ioc_stats st;
	char *p = map_anon(16);

	/* Untouched memory can be registered. */
	assert_int_equal(tt_register(s, p + 4 * ps, 4 * ps, 1, 0), 0);
	assert_int_equal(tt_register(s, p + 10 * ps, 2 * ps, 2,
				     TT_RANGE_PERSISTENT), 0);
	/* Adjacent on both sides is fine. */
	assert_int_equal(tt_register(s, p + 8 * ps, 2 * ps, 3, 0), 0);
	assert_int_equal(tt_register(s, p + 2 * ps, 2 * ps, 4, 0), 0);

	/* Every kind of overlap is EEXIST. */
	assert_fails(EEXIST, tt_register(s, p + 4 * ps, 4 * ps, 1, 0));
	assert_fails(EEXIST, tt_register(s, p + 5 * ps, ps, 1, 0));
	assert_fails(EEXIST, tt_register(s, p, 3 * ps, 1, 0));
	assert_fails(EEXIST, tt_register(s, p + 11 * ps, 2 * ps, 1, 0));
	assert_fails(EEXIST, tt_register(s, p, 16 * ps, 1, 0));

	assert_int_equal(tt_stats(s, &st), 0);
	assert_int_equal(st.registered_ranges, 4);
	assert_int_equal(st.registered_bytes, 10 * ps);

	/* Unregister needs the exact addr and len. */
	assert_fails(ENOENT, tt_unregister(s, p + 4 * ps, 3 * ps));
	assert_fails(ENOENT, tt_unregister(s, p + 5 * ps, 3 * ps));
	assert_fails(ENOENT, tt_unregister(s, p + 4 * ps, 8 * ps));
	assert_fails(ENOENT, tt_unregister(s, p, ps));
	assert_fails(ENOENT, tt_unregister(s, p + 4 * ps + 1, 4 * ps));
	assert_int_equal(tt_unregister(s, p + 4 * ps, 4 * ps), 0);
	assert_fails(ENOENT, tt_unregister(s, p + 4 * ps, 4 * ps));

	assert_int_equal(tt_stats(s, &st), 0);
	assert_int_equal(st.registered_ranges, 3);
	assert_int_equal(st.registered_bytes, 6 * ps);

	/* The freed space can be registered again, differently. */
	assert_int_equal(tt_register(s, p + 4 * ps, ps, 5, 0), 0);
	assert_int_equal(tt_register(s, p + 5 * ps, 3 * ps, 5, 0), 0);
	assert_int_equal(tt_unregister(s, p + 2 * ps, 2 * ps), 0);
	assert_int_equal(tt_unregister(s, p + 4 * ps, ps), 0);
	assert_int_equal(tt_unregister(s, p + 5 * ps, 3 * ps), 0);
	assert_int_equal(tt_unregister(s, p + 8 * ps, 2 * ps), 0);
	assert_int_equal(tt_unregister(s, p + 10 * ps, 2 * ps), 0);
	assert_int_equal(tt_stats(s, &st), 0);
	assert_int_equal(st.registered_ranges, 0);
	assert_int_equal(st.registered_bytes, 0);
	munmap(p, 16 * ps);
}

/* The session holds at most 65536 registrations (the module's default). */
static void test_register_enospc(void **state)
{
	struct tt_session *s = *state;
	const size_t max = 65536;
	struct tt_ioc_stats st;
	char *p = map_anon(max + 1);
	size_t i;

	for (i = 0; i < max; i++)
		assert_int_equal(tt_register(s, p + i * ps, ps, 0, 0), 0);
	assert_fails(ENOSPC, tt_register(s, p + max * ps, ps, 0, 0));
	assert_int_equal(tt_stats(s, &st), 0);
	assert_int_equal(st.registered_ranges, max);
	assert_int_equal(tt_unregister(s, p, ps), 0);
	assert_int_equal(tt_register(s, p + max * ps, ps, 0, 0), 0);
	munmap(p, (max + 1) * ps);
}

static void test_stats(void **state)
{
	struct tt_session *s = *state;
	struct tt_migrate_result res;
	struct tt_ioc_stats st;
	char *p = map_anon(8);

	assert_fails(EFAULT, tt_stats(s, NULL));
	memset(&st, 0xff, sizeof(st));
	assert_int_equal(tt_stats(s, &st), 0);
	assert_int_equal(st.abi_version, TT_ABI_VERSION);
	assert_int_equal(st.size, sizeof(st));
	assert_int_equal(st.registered_ranges, 0);
	assert_int_equal(st.migrate_calls, 0);
	assert_int_equal(st.total.pages, 0);

	/* Rejected calls do not count. */
	touch(p, 5);
	assert_fails(EINVAL, tt_migrate(s, p, 0, 0));
	assert_fails(EINVAL, tt_migrate(s, p, ps, -1));
	assert_int_equal(tt_stats(s, &st), 0);
	assert_int_equal(st.migrate_calls, 0);

	assert_int_equal(tt_migrate_ex(s, p, 8 * ps, 0, 0, &res), 0);
	assert_int_equal(tt_migrate_ex(s, p, 2 * ps, 0, 0, &res), 0);
	assert_int_equal(tt_stats(s, &st), 0);
	assert_int_equal(st.migrate_calls, 2);
	assert_int_equal(st.async_queued, 0);
	assert_int_equal(st.total.pages, 10);
	assert_int_equal(st.total.already_on_node, 7);
	assert_int_equal(st.total.skipped_not_present, 3);
	assert_int_equal(st.total.moved, 0);
	assert_int_equal(st.bytes_to_fast, 0);
	assert_int_equal(st.bytes_to_slow, 0);
	assert_int_equal(st.ranges_unmapped, 0);
	assert_true(st.total.elapsed_ns > 0);
	munmap(p, 8 * ps);
}

/* Read the session counters, which must be readable. */
static struct tt_ioc_stats stats_of(struct tt_session *s)
{
	struct tt_ioc_stats st;

	assert_int_equal(tt_stats(s, &st), 0);
	return st;
}

/* The phase argument of the layer calls and the flags of saved tensors. */
static void test_event_args(void **state)
{
	static const unsigned int bad_phases[] = {
		0, TT_FWD | TT_BWD, TT_EV_PERSISTENT, TT_EV_TIMESTAMP,
		TT_FWD | TT_EV_TIMESTAMP, TT_BWD | TT_EV_PERSISTENT, 1U << 4,
		1U << 16, ~0U,
	};
	struct tt_session *s = *state;
	char buf[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad_phases); i++) {
		assert_fails(EINVAL, tt_layer_begin(s, 1, bad_phases[i]));
		assert_fails(EINVAL, tt_layer_end(s, 1, bad_phases[i]));
	}
	assert_int_equal(tt_layer_begin(s, 0, TT_FWD), 0);
	assert_int_equal(tt_layer_end(s, 0, TT_FWD), 0);
	assert_int_equal(tt_layer_begin(s, UINT32_MAX, TT_BWD), 0);
	assert_int_equal(tt_layer_end(s, UINT32_MAX, TT_BWD), 0);

	/* Unknown bits first, then known flags of other events. */
	assert_fails(EOPNOTSUPP, tt_tensor_saved_ex(s, 0, buf, 64, 1U << 4));
	assert_fails(EOPNOTSUPP, tt_tensor_saved_ex(s, 0, buf, 64,
						    TT_FWD | 1U << 31));
	assert_fails(EINVAL, tt_tensor_saved_ex(s, 0, buf, 64, TT_FWD));
	assert_fails(EINVAL, tt_tensor_saved_ex(s, 0, buf, 64, TT_BWD));
	assert_fails(EINVAL, tt_tensor_saved_ex(s, 0, buf, 64,
						TT_EV_TIMESTAMP));
	assert_fails(EINVAL, tt_tensor_saved_ex(s, 0, buf, 64,
						TT_EV_PERSISTENT |
						TT_EV_TIMESTAMP));
	assert_int_equal(tt_tensor_saved_ex(s, 0, buf, 64, TT_EV_PERSISTENT),
			 0);
	assert_int_equal(tt_tensor_saved_ex(s, 0, buf, 64, 0), 0);
	assert_int_equal(tt_tensor_saved(s, 0, buf, 64), 0);
	/*
	 * The range is checked at submission: inside the user address space
	 * (EOVERFLOW), mapped (EFAULT); an empty tensor is only ignored.
	 */
	assert_int_equal(tt_tensor_saved(s, 0, NULL, 0), 0);
	assert_fails(EOVERFLOW, tt_tensor_saved(s, 0, (void *)(uintptr_t)-4096,
						SIZE_MAX));
	assert_fails(EOVERFLOW, tt_tensor_saved(s, 0,
						(void *)(uintptr_t)(1ULL << 63),
						4096));
	assert_fails(EFAULT, tt_tensor_saved(s, 0, NULL, 1 << 20));

	/* Only the accepted calls count. */
	assert_int_equal(stats_of(s).events, 8);
}

/* What the move_pages backend counts, with the module's rounding. */
static void test_event_counting(void **state)
{
	struct tt_session *s = *state;
	char *p = map_anon(4);
	struct tt_ioc_stats st;

	st = stats_of(s);
	assert_int_equal(st.iterations, 0);
	assert_int_equal(st.events, 0);

	assert_int_equal(tt_iter_begin(s), 0);
	assert_int_equal(tt_layer_begin(s, 1, TT_FWD), 0);
	/* Whole pages, aligned or not. */
	assert_int_equal(tt_tensor_saved(s, 1, p, ps), 0);
	assert_int_equal(tt_tensor_saved(s, 1, p + 1, 2 * ps), 0);
	assert_int_equal(tt_tensor_saved(s, 1, p + ps / 2, 3 * ps), 0);
	assert_int_equal(tt_tensor_saved_ex(s, 1, p, 4 * ps,
					    TT_EV_PERSISTENT), 0);
	/* No whole page after rounding inward. */
	assert_int_equal(tt_tensor_saved(s, 1, p, ps - 1), 0);
	assert_int_equal(tt_tensor_saved(s, 1, p + 1, 2 * ps - 2), 0);
	assert_int_equal(tt_tensor_saved(s, 1, p + 1, ps), 0);
	assert_int_equal(tt_tensor_saved(s, 1, p, 0), 0);
	assert_int_equal(tt_layer_end(s, 1, TT_FWD), 0);
	assert_int_equal(tt_layer_begin(s, 1, TT_BWD), 0);
	assert_int_equal(tt_layer_end(s, 1, TT_BWD), 0);
	assert_int_equal(tt_iter_begin(s), 0);

	st = stats_of(s);
	assert_int_equal(st.iterations, 2);
	assert_int_equal(st.events, 14);
	assert_int_equal(st.tensors_saved, 4);
	assert_int_equal(st.tensors_ignored, 4);
	/*
	 * Iteration 1 was profiled and iteration 2 is planned, but no layer
	 * event came since: nothing counted in the plan or moved.
	 */
	assert_int_equal(st.layers_accepted + st.layers_modified +
			 st.layers_dropped + st.layers_unknown, 0);
	assert_int_equal(st.bytes_evicted + st.bytes_prefetched, 0);
	assert_int_equal(st.late_bytes + st.late_count + st.reprofiles, 0);
	assert_int_equal(st.migrate_calls, 0);
	assert_int_equal(st.registered_ranges, 0);

	/* Rejected events count nowhere. */
	assert_fails(EINVAL, tt_layer_begin(s, 1, 0));
	assert_fails(EOPNOTSUPP, tt_tensor_saved_ex(s, 1, p, ps, 1U << 8));
	st = stats_of(s);
	assert_int_equal(st.events, 14);
	assert_int_equal(st.tensors_saved + st.tensors_ignored, 8);
	munmap(p, 4 * ps);
}

/* A whole iteration of @layers layers as events, into @ev. */
static unsigned int iteration_events(struct tt_event *ev, unsigned int layers,
				     const char *mem)
{
	unsigned int n = 0, l;

	ev[n++] = (struct tt_event){ .type = TT_EV_ITER_BEGIN };
	for (l = 0; l < layers; l++) {
		ev[n++] = (struct tt_event){ .type = TT_EV_LAYER_BEGIN,
					     .flags = TT_FWD, .layer = l };
		ev[n++] = (struct tt_event){ .type = TT_EV_TENSOR_SAVED,
					     .layer = l,
					     .addr = (uintptr_t)mem,
					     .len = ps };
		ev[n++] = (struct tt_event){ .type = TT_EV_LAYER_END,
					     .flags = TT_FWD, .layer = l };
	}
	for (l = layers; l-- > 0;) {
		ev[n++] = (struct tt_event){ .type = TT_EV_LAYER_BEGIN,
					     .flags = TT_BWD, .layer = l };
		ev[n++] = (struct tt_event){ .type = TT_EV_LAYER_END,
					     .flags = TT_BWD, .layer = l };
	}
	return n;
}

/* tt_events(): batches above the ioctl's 4096, errors part-way. */
static void test_events_batch(void **state)
{
	struct tt_session *s = *state;
	unsigned int n = 0, i;
	struct tt_ioc_stats st;
	struct tt_event *ev;
	char *p = map_anon(1);

	/* 10 iterations of 2000 layers: 100010 events, 25 ioctls. */
	ev = calloc(100010, sizeof(*ev));
	assert_non_null(ev);
	for (i = 0; i < 10; i++)
		n += iteration_events(ev + n, 2000, p);
	assert_int_equal(n, 100010);
	assert_int_equal(tt_events(s, ev, n), (int)n);
	st = stats_of(s);
	assert_int_equal(st.events, 100010);
	assert_int_equal(st.iterations, 10);
	assert_int_equal(st.tensors_saved, 20000);
	assert_int_equal(st.tensors_ignored, 0);

	/* Nothing to do. */
	assert_int_equal(tt_events(s, NULL, 0), 0);
	assert_int_equal(tt_events(s, ev, 0), 0);
	assert_fails(EFAULT, tt_events(s, NULL, 1));
	assert_fails(EINVAL, tt_events(s, ev, (unsigned int)INT_MAX + 1));
	assert_fails(EINVAL, tt_events(s, ev, UINT_MAX));
	assert_int_equal(stats_of(s).events, 100010);

	/* The events before a bad one are processed, the rest are not. */
	ev[5000].flags = TT_FWD | TT_BWD;
	assert_fails(EINVAL, tt_events(s, ev, 10000));
	st = stats_of(s);
	assert_int_equal(st.events, 100010 + 5000);
	ev[5000].flags = 1U << 12;
	assert_fails(EOPNOTSUPP, tt_events(s, ev + 4096, 2000));
	st = stats_of(s);
	assert_int_equal(st.events, 100010 + 5000 + 904);
	/* A bad first event: nothing is processed. */
	assert_fails(EOPNOTSUPP, tt_events(s, ev + 5000, 3));
	assert_int_equal(stats_of(s).events, 100010 + 5000 + 904);
	free(ev);
	munmap(p, ps);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* TT_EV_TIMESTAMP: the caller's times must not go backwards. */
static void test_event_timestamps(void **state)
{
	struct tt_session *s = *state;
	struct tt_event ev[4];
	uint64_t t0 = now_ns();

	memset(ev, 0, sizeof(ev));
	ev[0] = (struct tt_event){ .type = TT_EV_ITER_BEGIN,
				   .flags = TT_EV_TIMESTAMP, .ts_ns = t0 };
	ev[1] = (struct tt_event){ .type = TT_EV_LAYER_BEGIN,
				   .flags = TT_FWD | TT_EV_TIMESTAMP,
				   .ts_ns = t0 };
	ev[2] = (struct tt_event){ .type = TT_EV_LAYER_END,
				   .flags = TT_FWD | TT_EV_TIMESTAMP,
				   .ts_ns = t0 + 10 };
	ev[3] = (struct tt_event){ .type = TT_EV_LAYER_BEGIN,
				   .flags = TT_BWD | TT_EV_TIMESTAMP,
				   .ts_ns = t0 + 9 };
	assert_fails(EINVAL, tt_events(s, ev, 4));
	assert_int_equal(stats_of(s).events, 3);

	/* Events the library stamps come after t0 + 10 on this clock... */
	assert_int_equal(tt_layer_begin(s, 0, TT_BWD), 0);
	/* ...so t0 + 10 is in the past now. */
	ev[3].ts_ns = t0 + 10;
	assert_fails(EINVAL, tt_events(s, &ev[3], 1));
	ev[3].ts_ns = now_ns();
	assert_int_equal(tt_events(s, &ev[3], 1), 1);

	/* A time without TT_EV_TIMESTAMP is refused. */
	ev[0] = (struct tt_event){ .type = TT_EV_ITER_BEGIN, .ts_ns = 1 };
	assert_fails(EINVAL, tt_events(s, ev, 1));
	assert_int_equal(stats_of(s).events, 5);
}

/* tt_sched_get() / tt_sched_set() in the move_pages backend. */
static void test_sched(void **state)
{
	struct tt_session *s = *state;
	struct tt_ioc_sched cfg, got, def;

	assert_fails(EFAULT, tt_sched_get(s, NULL));
	assert_fails(EFAULT, tt_sched_set(s, NULL));
	memset(&def, 0xff, sizeof(def));
	assert_int_equal(tt_sched_get(s, &def), 0);
	assert_int_equal(def.valid, TT_SCHED_SET_ALL);
	assert_int_equal(def.flags, TT_SCHED_DEFAULT_FLAGS);
	assert_int_equal(def.profile_iters, 1);
	assert_int_equal(def.reserved, 0);
	assert_int_equal(def.stay_ns, 1000 * 1000);
	assert_int_equal(def.er_bps, 1024ULL * 1024 * 1024);
	assert_int_equal(def.pr_bps, 1024ULL * 1024 * 1024);
	assert_int_equal(def.slow_node, -1);
	assert_int_equal(def.fast_node, -1);

	/* A partial update keeps the other fields. */
	cfg = (struct tt_ioc_sched){
		.valid = TT_SCHED_SET_RATES | TT_SCHED_SET_STAY,
		.profile_iters = 0,
		.stay_ns = 0,
		.er_bps = 3,
		.pr_bps = 5,
		.slow_node = -7,
	};
	assert_int_equal(tt_sched_set(s, &cfg), 0);
	assert_int_equal(tt_sched_get(s, &got), 0);
	assert_int_equal(got.stay_ns, 0);
	assert_int_equal(got.er_bps, 3);
	assert_int_equal(got.pr_bps, 5);
	assert_int_equal(got.profile_iters, 1);
	assert_int_equal(got.slow_node, -1);
	assert_int_equal(got.valid, TT_SCHED_SET_ALL);

	cfg = got;
	cfg.flags = TT_SCHED_SYNC_LATE;
	cfg.profile_iters = 3;
	cfg.slow_node = 0;
	cfg.fast_node = 0;
	assert_int_equal(tt_sched_set(s, &cfg), 0);
	assert_int_equal(tt_sched_get(s, &got), 0);
	assert_memory_equal(&got, &cfg, sizeof(cfg));

	/*
	 * Rejected settings change nothing (every check is tested on
	 * tt_sched_apply() in test_internal; one per error here).
	 */
	cfg.profile_iters = 4;
	cfg.valid |= 1U << 7;
	assert_fails(EOPNOTSUPP, tt_sched_set(s, &cfg));
	cfg.valid = TT_SCHED_SET_ALL;
	cfg.er_bps = 0;
	assert_fails(EINVAL, tt_sched_set(s, &cfg));
	cfg.er_bps = 1;
	/* The host's real nodes: only node 0 is sure to exist. */
	cfg.slow_node = TT_MAX_NODES;
	assert_fails(EINVAL, tt_sched_set(s, &cfg));
	cfg.slow_node = 0;
	/* the reference semantics exclude every extension */
	cfg.flags = TT_SCHED_REFERENCE | TT_SCHED_COUNT;
	assert_fails(EINVAL, tt_sched_set(s, &cfg));
	assert_int_equal(tt_sched_get(s, &cfg), 0);
	assert_memory_equal(&got, &cfg, sizeof(cfg));

	/* Back to the defaults. */
	assert_int_equal(tt_sched_set(s, &def), 0);
	assert_int_equal(tt_sched_get(s, &got), 0);
	assert_memory_equal(&got, &def, sizeof(def));
}

/* One event with a caller's time. */
static struct tt_event stamped(uint16_t type, uint16_t flags, uint32_t layer,
			       uint64_t ts, const void *addr, uint64_t len)
{
	return (struct tt_event){
		.type = type,
		.flags = flags | TT_EV_TIMESTAMP,
		.layer = layer,
		.ts_ns = ts,
		.addr = (uintptr_t)addr,
		.len = len,
	};
}

/* The move_pages backend's scheduler reports the layers it saw. */
static void test_layers(void **state)
{
	struct tt_session *s = *state;
	struct tt_layer_info info[4];
	struct tt_event ev[11];
	uint64_t t, ms = 1000000;
	char *p = map_anon(4);
	unsigned int n = 0;
	int i;

	touch(p, 4);
	assert_int_equal(tt_layers(s, NULL, 0), 0);
	assert_int_equal(tt_layers(s, info, 4), 0);
	/*
	 * Two iterations, 20 ms apart, of layer 3 (forward 0-1 ms, backward
	 * 7-8 ms) and layer 1 (1-2 ms, 5-6 ms), 2 pages saved each.
	 */
	for (i = 0; i < 2; i++) {
		t = now_ns() + i * 20 * ms;
		ev[n++] = stamped(TT_EV_ITER_BEGIN, 0, 0, t, NULL, 0);
		ev[n++] = stamped(TT_EV_LAYER_BEGIN, TT_FWD, 3, t, NULL, 0);
		ev[n++] = stamped(TT_EV_TENSOR_SAVED, 0, 3, t, p, 2 * ps);
		ev[n++] = stamped(TT_EV_LAYER_END, TT_FWD, 3, t + ms, NULL, 0);
		ev[n++] = stamped(TT_EV_LAYER_BEGIN, TT_FWD, 1, t + ms, NULL, 0);
		ev[n++] = stamped(TT_EV_TENSOR_SAVED, 0, 1, t + ms, p + 2 * ps,
				  2 * ps);
		ev[n++] = stamped(TT_EV_LAYER_END, TT_FWD, 1, t + 2 * ms, NULL,
				  0);
		ev[n++] = stamped(TT_EV_LAYER_BEGIN, TT_BWD, 1, t + 5 * ms, NULL,
				  0);
		ev[n++] = stamped(TT_EV_LAYER_END, TT_BWD, 1, t + 6 * ms, NULL,
				  0);
		ev[n++] = stamped(TT_EV_LAYER_BEGIN, TT_BWD, 3, t + 7 * ms, NULL,
				  0);
		ev[n++] = stamped(TT_EV_LAYER_END, TT_BWD, 3, t + 8 * ms, NULL,
				  0);
		if (i == 0) {
			assert_int_equal(tt_events(s, ev, n), (int)n);
			n = 0;
		}
	}
	assert_int_equal(tt_events(s, ev, n), (int)n);

	assert_int_equal(tt_layers(s, NULL, 0), 2);
	assert_fails(EFAULT, tt_layers(s, NULL, 1));
	memset(info, 0xff, sizeof(info));
	assert_int_equal(tt_layers(s, info, 1), 2);
	assert_int_equal(info[0].layer, 1);
	assert_int_equal(info[1].layer, UINT32_MAX);
	assert_int_equal(tt_layers(s, info, 4), 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(info[i].layer, i ? 3 : 1);
		/* The second iteration was planned from the first. */
		assert_int_equal(info[i].status, TT_LAYER_ACCEPTED);
		assert_int_equal(info[i].saved_bytes, 2 * ps);
		assert_int_equal(info[i].final_bytes, 2 * ps);
		assert_int_equal(info[i].fwd_end_ns, (i ? 1 : 2) * ms);
		assert_int_equal(info[i].bwd_start_ns, (i ? 7 : 5) * ms);
		assert_int_equal(info[i].last_fwd_end_ns, (i ? 1 : 2) * ms);
		assert_int_equal(info[i].last_bwd_start_ns, (i ? 7 : 5) * ms);
	}
	assert_int_equal(stats_of(s).layers_accepted, 2);
	munmap(p, 4 * ps);
}

/* tt_hint(): the checks, and hints remembered or acted on. */
static void test_hint(void **state)
{
	struct tt_session *s = *state;
	char *p = map_anon(4);

	touch(p, 4);
	assert_fails(EBADF, tt_hint(NULL, p, ps, TT_HINT_WILL_USE));
	assert_fails(EOPNOTSUPP, tt_hint(s, p, ps, 1U << 4));
	assert_fails(EOPNOTSUPP, tt_hint(s, p, ps, TT_HINT_ALL + 1));
	assert_fails(EINVAL, tt_hint(s, p, ps, 0));
	assert_fails(EINVAL, tt_hint(s, p, 0, TT_HINT_PIN_FAST));
	assert_fails(EINVAL, tt_hint(s, (void *)(uintptr_t)-ps, 2 * ps,
				     TT_HINT_PIN_FAST));
	/* rounding outward past the top of the address space */
	assert_fails(EINVAL, tt_hint(s, (void *)(uintptr_t)(-ps + 1), ps - 1,
				     TT_HINT_PIN_FAST));
	assert_fails(EINVAL, tt_hint(s, p, ps, TT_HINT_RETIRE | TT_HINT_WILL_USE));
	assert_fails(EINVAL, tt_hint(s, p, ps, TT_HINT_ARCHIVE | TT_HINT_PIN_FAST));
	assert_fails(EINVAL, tt_hint(s, p, ps, TT_HINT_ARCHIVE | TT_HINT_WILL_USE));
	/* any alignment, memory the scheduler does not manage */
	assert_int_equal(tt_hint(s, p + 1, 10, TT_HINT_WILL_USE), 0);
	assert_int_equal(stats_of(s).pinned_bytes, 0);
	assert_int_equal(tt_hint(s, p, 2 * ps, TT_HINT_PIN_FAST | TT_HINT_WILL_USE), 0);
	assert_int_equal(tt_hint(s, p + ps, 2 * ps, TT_HINT_ARCHIVE), 0);
	/* the archive replaced the pin on page 1 */
	assert_int_equal(stats_of(s).pinned_bytes, ps);
	assert_int_equal(stats_of(s).archived_bytes, 2 * ps);
	assert_int_equal(tt_hint(s, p, 4 * ps, TT_HINT_RETIRE), 0);
	assert_int_equal(stats_of(s).pinned_bytes, 0);
	assert_int_equal(stats_of(s).archived_bytes, 0);
	/* many hinted ranges: every other page, no error */
	for (unsigned int i = 0; i < 4; i += 2)
		assert_int_equal(tt_hint(s, p + i * ps, ps, TT_HINT_PIN_FAST), 0);
	munmap(p, 4 * ps);
}

/* A session belongs to the process that opened it. */
static void test_fork_eperm(void **state)
{
	struct tt_session *s = *state;
	char *p = map_anon(2);
	int status;
	pid_t pid;

	touch(p, 2);
	assert_int_equal(tt_register(s, p, ps, 0, 0), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct tt_event ev = { .type = TT_EV_ITER_BEGIN };
		struct tt_ioc_sched cfg = { 0 };
		struct tt_ioc_stats st;
		uint64_t bytes[1];
		int bad = 0;

		bad |= (tt_migrate(s, p, ps, 0) != -EPERM) << 0;
		bad |= (errno != EPERM) << 1;
		bad |= (tt_register(s, p + ps, ps, 0, 0) != -EPERM) << 2;
		bad |= (tt_unregister(s, p, ps) != -EPERM) << 3;
		bad |= (tt_residency(s, p, ps, bytes, 1) != -EPERM) << 4;
		bad |= (tt_stats(s, &st) != -EPERM) << 5;
		bad |= (tt_flush(s) != -EPERM) << 6;
		bad |= (tt_iter_begin(s) != -EPERM) << 7;
		bad |= (tt_layer_begin(s, 0, TT_FWD) != -EPERM) << 8;
		bad |= (tt_layer_end(s, 0, TT_FWD) != -EPERM) << 9;
		bad |= (tt_tensor_saved(s, 0, p, ps) != -EPERM) << 10;
		bad |= (tt_events(s, &ev, 1) != -EPERM) << 11;
		bad |= (tt_sched_get(s, &cfg) != -EPERM) << 12;
		bad |= (tt_sched_set(s, &cfg) != -EPERM) << 13;
		bad |= (tt_layers(s, NULL, 0) != -EPERM) << 14;
		bad |= (errno != EPERM) << 15;
		_exit(bad);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The parent's session is untouched. */
	assert_int_equal(tt_unregister(s, p, ps), 0);
	assert_int_equal(stats_of(s).events, 0);
	munmap(p, 2 * ps);
}

/**
 * struct thread_arg - one worker of test_threads
 * @s:   the shared session.
 * @mem: the worker's own 64 pages.
 * @bad: out: number of calls that did not return what they should.
 */
struct thread_arg {
	struct tt_session *s;
	char *mem;
	int bad;
};

static void *thread_main(void *data)
{
	struct thread_arg *a = data;
	struct tt_migrate_result res;
	uint64_t bytes[1];
	size_t i;

	touch(a->mem, 64);
	for (i = 0; i < 64; i++)
		a->bad += tt_register(a->s, a->mem + i * ps, ps, i, 0) != 0;
	for (i = 0; i < 20; i++) {
		a->bad += tt_migrate_ex(a->s, a->mem, 64 * ps, 0, 0, &res) != 0;
		a->bad += res.already_on_node != 64;
		a->bad += tt_residency(a->s, a->mem, 64 * ps, bytes, 1) != 0;
		a->bad += bytes[0] != 64 * ps;
	}
	for (i = 0; i < 64; i += 2)
		a->bad += tt_unregister(a->s, a->mem + i * ps, ps) != 0;
	for (i = 0; i < 1000; i++) {
		a->bad += tt_iter_begin(a->s) != 0;
		a->bad += tt_tensor_saved(a->s, i, a->mem + i % 64, ps) != 0;
	}
	return NULL;
}

/* A session may be used from several threads at once. */
static void test_threads(void **state)
{
	struct tt_session *s = *state;
	struct thread_arg args[8];
	pthread_t th[8];
	struct tt_ioc_stats st;
	int i;

	for (i = 0; i < 8; i++) {
		args[i] = (struct thread_arg){ .s = s, .mem = map_anon(64) };
		assert_int_equal(pthread_create(&th[i], NULL, thread_main,
						&args[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(args[i].bad, 0);
	}
	assert_int_equal(tt_stats(s, &st), 0);
	assert_int_equal(st.registered_ranges, 8 * 32);
	assert_int_equal(st.registered_bytes, 8 * 32 * ps);
	assert_int_equal(st.migrate_calls, 8 * 20);
	assert_int_equal(st.total.pages, 8 * 20 * 64);
	assert_int_equal(st.total.already_on_node, 8 * 20 * 64);
	assert_int_equal(st.events, 8 * 2000);
	assert_int_equal(st.iterations, 8 * 1000);
	/* Offsets 1..63 leave no whole page; offset 0 covers one. */
	assert_int_equal(st.tensors_saved, 8 * 16);
	assert_int_equal(st.tensors_ignored, 8 * (1000 - 16));
	for (i = 0; i < 8; i++)
		munmap(args[i].mem, 64 * ps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_backend_default),
		cmocka_unit_test(test_backend_env),
		cmocka_unit_test(test_null_session),
#define T(f) cmocka_unit_test_setup_teardown(f, setup_session, teardown_session)
		T(test_range_einval_eoverflow),
		T(test_range_efault),
		T(test_range_eopnotsupp),
		T(test_unknown_flags),
		T(test_node_errors),
		T(test_migrate_result),
		T(test_migrate_large),
		T(test_migrate_async),
		T(test_residency),
		T(test_residency_errors),
		T(test_residency_any_mapping),
		T(test_register),
		T(test_register_enospc),
		T(test_stats),
		T(test_event_args),
		T(test_event_counting),
		T(test_events_batch),
		T(test_event_timestamps),
		T(test_sched),
		T(test_layers),
		T(test_hint),
		T(test_fork_eperm),
		T(test_threads),
#undef T
	};

	ps = (size_t)sysconf(_SC_PAGESIZE);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
