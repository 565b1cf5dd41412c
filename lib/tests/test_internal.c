// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tests of the helpers behind the move_pages backend, linked from the
 * library's objects: node lists and node checks (on synthetic sysfs trees,
 * which is how ENODEV and multi-node layouts are tested on a one-node host),
 * /proc/PID/maps parsing, the range arithmetic, and how move_pages(2)
 * statuses become result counts.
 */
#include <errno.h>
#include <linux/capability.h>
#include <linux/mempolicy.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static void test_nodelist_parse(void **state)
{
	struct tt_nodemask m;

	(void)state;
	assert_int_equal(tt_nodelist_parse("", &m), 0);
	assert_int_equal(tt_nodemask_last(&m), -1);
	assert_int_equal(tt_nodelist_parse("\n", &m), 0);
	assert_int_equal(tt_nodemask_last(&m), -1);

	assert_int_equal(tt_nodelist_parse("0\n", &m), 0);
	assert_true(tt_nodemask_test(&m, 0));
	assert_false(tt_nodemask_test(&m, 1));
	assert_int_equal(tt_nodemask_last(&m), 0);

	assert_int_equal(tt_nodelist_parse("1,3-5,64,1023", &m), 0);
	assert_false(tt_nodemask_test(&m, 0));
	assert_true(tt_nodemask_test(&m, 1));
	assert_false(tt_nodemask_test(&m, 2));
	assert_true(tt_nodemask_test(&m, 3));
	assert_true(tt_nodemask_test(&m, 4));
	assert_true(tt_nodemask_test(&m, 5));
	assert_false(tt_nodemask_test(&m, 6));
	assert_true(tt_nodemask_test(&m, 64));
	assert_true(tt_nodemask_test(&m, 1023));
	assert_false(tt_nodemask_test(&m, -1));
	assert_false(tt_nodemask_test(&m, 1024));
	assert_int_equal(tt_nodemask_last(&m), 1023);

	assert_int_equal(tt_nodelist_parse("60-70", &m), 0);
	assert_true(tt_nodemask_test(&m, 63));
	assert_true(tt_nodemask_test(&m, 64));
	assert_int_equal(tt_nodemask_last(&m), 70);

	assert_int_equal(tt_nodelist_parse("a", &m), -EINVAL);
	assert_int_equal(tt_nodelist_parse("-1", &m), -EINVAL);
	assert_int_equal(tt_nodelist_parse("3-1", &m), -EINVAL);
	assert_int_equal(tt_nodelist_parse("0,", &m), -EINVAL);
	assert_int_equal(tt_nodelist_parse("0-", &m), -EINVAL);
	assert_int_equal(tt_nodelist_parse("0 1", &m), -EINVAL);
	assert_int_equal(tt_nodelist_parse("0\n1", &m), -EINVAL);
	assert_int_equal(tt_nodelist_parse("1024", &m), -ERANGE);
	assert_int_equal(tt_nodelist_parse("0-1024", &m), -ERANGE);
	assert_int_equal(tt_nodelist_parse("99999999999999999999", &m),
			 -ERANGE);
}

/**
 * struct fake_sysfs - a temporary directory shaped like
 *                     /sys/devices/system/node
 * @dir: its path.
 */
struct fake_sysfs {
	char dir[64];
};

static void fake_write(struct fake_sysfs *f, const char *file,
		       const char *text)
{
	char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->dir, file);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void fake_make(struct fake_sysfs *f, const char *possible,
		      const char *has_memory, const char *has_cpu)
{
	strcpy(f->dir, "/tmp/tt-sysfs-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	fake_write(f, "possible", possible);
	fake_write(f, "online", has_memory);
	fake_write(f, "has_memory", has_memory);
	fake_write(f, "has_cpu", has_cpu);
}

static void fake_remove(struct fake_sysfs *f)
{
	static const char *const files[] = {
		"possible", "online", "has_memory", "has_cpu",
	};
	char path[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", f->dir, files[i]);
		unlink(path);
	}
	rmdir(f->dir);
}

/* TIERTRAIN_MOVER_CPUS's lists. */
static void test_cpus_parse(void **state)
{
	static const char *const bad[] = {
		"", "a", "3-1", "0,", ",0", "0-", "-1", " 1", "1 ", "4",
		"0-4", "1,,2", "0x1", "99999999999999999999999",
	};
	cpu_set_t set;
	unsigned int i;

	(void)state;
	assert_int_equal(tt_cpus_parse("0", 4, &set), 0);
	assert_int_equal(CPU_COUNT(&set), 1);
	assert_true(CPU_ISSET(0, &set));
	assert_int_equal(tt_cpus_parse("3,0-1", 4, &set), 0);
	assert_int_equal(CPU_COUNT(&set), 3);
	assert_true(CPU_ISSET(0, &set) && CPU_ISSET(1, &set) &&
		    CPU_ISSET(3, &set) && !CPU_ISSET(2, &set));
	assert_int_equal(tt_cpus_parse("2-2,2", 4, &set), 0);
	assert_int_equal(CPU_COUNT(&set), 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tt_cpus_parse(bad[i], 4, &set) != -EINVAL)
			fail_msg("\"%s\" accepted", bad[i]);
	}
}

static void *cpus_probe(void *arg)
{
	cpu_set_t *got = arg;

	if (sched_getaffinity(0, sizeof(*got), got))
		CPU_ZERO(got);
	return NULL;
}

/* A session's thread runs on TIERTRAIN_MOVER_CPUS, and anywhere without. */
static void test_cpus_thread(void **state)
{
	struct tt_session s = { .fd = -1 };
	cpu_set_t mine, got;
	pthread_t th;
	int cpu;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mine); cpu++)
		;
	assert_true(cpu < CPU_SETSIZE);
	unsetenv("TIERTRAIN_MOVER_CPUS");
	assert_int_equal(tt_cpus_open(&s), 0);
	assert_int_equal(s.cpus_set, 0);
	assert_int_equal(tt_cpus_thread(&s, &th, cpus_probe, &got), 0);
	pthread_join(th, NULL);
	assert_true(CPU_EQUAL(&got, &mine));

	/* the last CPU this process may run on, alone */
	for (cpu = CPU_SETSIZE - 1; !CPU_ISSET(cpu, &mine); cpu--)
		;
	{
		char list[16];

		snprintf(list, sizeof(list), "%d", cpu);
		setenv("TIERTRAIN_MOVER_CPUS", list, 1);
	}
	assert_int_equal(tt_cpus_open(&s), 0);
	assert_int_equal(s.cpus_set, 1);
	assert_int_equal(tt_cpus_thread(&s, &th, cpus_probe, &got), 0);
	pthread_join(th, NULL);
	assert_int_equal(CPU_COUNT(&got), 1);
	assert_true(CPU_ISSET(cpu, &got));

	setenv("TIERTRAIN_MOVER_CPUS", "0-", 1);
	assert_int_equal(tt_cpus_open(&s), -EINVAL);
	unsetenv("TIERTRAIN_MOVER_CPUS");
}

static void test_node_check(void **state)
{
	struct fake_sysfs f;

	(void)state;
	/* The VM's layout: node 0 with CPUs, node 1 memory only. */
	fake_make(&f, "0-1\n", "0-1\n", "0\n");
	assert_int_equal(tt_node_check(f.dir, 0), 0);
	assert_int_equal(tt_node_check(f.dir, 1), 0);
	assert_int_equal(tt_node_check(f.dir, 2), -EINVAL);
	assert_int_equal(tt_node_check(f.dir, -1), -EINVAL);
	assert_int_equal(tt_node_check(f.dir, 99999), -EINVAL);
	assert_int_equal(tt_node_has_cpus(f.dir, 0), 1);
	assert_int_equal(tt_node_has_cpus(f.dir, 1), 0);
	fake_remove(&f);

	/* Possible but without memory (or offline): ENODEV. */
	fake_make(&f, "0-3\n", "0,2\n", "0\n");
	assert_int_equal(tt_node_check(f.dir, 0), 0);
	assert_int_equal(tt_node_check(f.dir, 1), -ENODEV);
	assert_int_equal(tt_node_check(f.dir, 2), 0);
	assert_int_equal(tt_node_check(f.dir, 3), -ENODEV);
	assert_int_equal(tt_node_check(f.dir, 4), -EINVAL);
	fake_remove(&f);

	/* The host's layout. */
	fake_make(&f, "0\n", "0\n", "0\n");
	assert_int_equal(tt_node_check(f.dir, 0), 0);
	assert_int_equal(tt_node_check(f.dir, 1), -EINVAL);
	fake_remove(&f);

	/* A malformed sysfs file is reported, not guessed around. */
	fake_make(&f, "zero\n", "0\n", "0\n");
	assert_int_equal(tt_node_check(f.dir, 0), -EINVAL);
	fake_remove(&f);

	/* No node directory at all: a kernel without NUMA, node 0 only. */
	assert_int_equal(tt_node_check("/nonexistent/tt-node", 0), 0);
	assert_int_equal(tt_node_check("/nonexistent/tt-node", 1), -EINVAL);
	assert_int_equal(tt_node_has_cpus("/nonexistent/tt-node", 0), 1);

	/* And the real one: node 0 always has memory. */
	assert_int_equal(tt_node_check(TT_SYSFS_NODE_DIR, 0), 0);
	assert_int_equal(tt_node_check(TT_SYSFS_NODE_DIR, TT_MAX_NODES),
			 -EINVAL);
}

/* Write <dir>/node<N>/distance of a fake sysfs tree. */
static void fake_distance(struct fake_sysfs *f, int node, const char *text)
{
	char file[32];

	snprintf(file, sizeof(file), "node%d", node);
	{
		char path[128];

		snprintf(path, sizeof(path), "%s/%s", f->dir, file);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	snprintf(file, sizeof(file), "node%d/distance", node);
	fake_write(f, file, text);
}

static void fake_remove_nodes(struct fake_sysfs *f, int nodes)
{
	char path[128];
	int n;

	for (n = 0; n < nodes; n++) {
		snprintf(path, sizeof(path), "%s/node%d/distance", f->dir, n);
		unlink(path);
		snprintf(path, sizeof(path), "%s/node%d", f->dir, n);
		rmdir(path);
	}
	fake_remove(f);
}

/* The slow node nearest to a fast node, by sysfs distance. */
static void test_node_topo(void **state)
{
	struct tt_node_topo t;
	struct fake_sysfs f;

	(void)state;
	/* The VM's layout. */
	fake_make(&f, "0-1\n", "0-1\n", "0\n");
	fake_distance(&f, 0, "10 20\n");
	fake_distance(&f, 1, "20 10\n");
	assert_int_equal(tt_node_topo_read(f.dir, 0, &t), 0);
	assert_int_equal(t.nearest_slow, 1);
	assert_true(tt_node_is_slow(&t, 1));
	assert_false(tt_node_is_slow(&t, 0));
	assert_false(tt_node_is_slow(&t, 2));
	assert_false(tt_node_is_slow(&t, -1));
	assert_true(tt_nodemask_test(&t.cpu, 0));
	/* No fast node given: the masks only. */
	assert_int_equal(tt_node_topo_read(f.dir, -1, &t), 0);
	assert_int_equal(t.nearest_slow, -1);
	assert_true(tt_nodemask_test(&t.mem, 1));
	fake_remove_nodes(&f, 2);

	/* Two fast and two slow nodes: nearest, ties to the lowest id. */
	fake_make(&f, "0-3\n", "0-3\n", "0-1\n");
	fake_distance(&f, 0, "10 20 17 17\n");
	fake_distance(&f, 1, "20 10 30 25\n");
	fake_distance(&f, 2, "17 30 10 20\n");
	fake_distance(&f, 3, "17 25 20 10\n");
	assert_int_equal(tt_node_topo_read(f.dir, 0, &t), 0);
	assert_int_equal(t.nearest_slow, 2);
	assert_int_equal(tt_node_topo_read(f.dir, 1, &t), 0);
	assert_int_equal(t.nearest_slow, 3);
	/* A node without a distance file: the lowest slow id. */
	assert_int_equal(tt_node_topo_read(f.dir, 5, &t), 0);
	assert_int_equal(t.nearest_slow, 2);
	fake_remove_nodes(&f, 4);

	/*
	 * Node 1 offline: the distance files list the online nodes only, in
	 * node order.
	 */
	fake_make(&f, "0-3\n", "0,2-3\n", "0\n");
	fake_distance(&f, 0, "10 30 20\n");
	assert_int_equal(tt_node_topo_read(f.dir, 0, &t), 0);
	assert_int_equal(t.nearest_slow, 3);
	fake_remove_nodes(&f, 1);

	/* A malformed distance file: as if there was none. */
	fake_make(&f, "0-2\n", "0-2\n", "0\n");
	fake_distance(&f, 0, "10 x\n");
	assert_int_equal(tt_node_topo_read(f.dir, 0, &t), 0);
	assert_int_equal(t.nearest_slow, 1);
	fake_remove_nodes(&f, 1);

	/* The host's layout: no slow node. */
	fake_make(&f, "0\n", "0\n", "0\n");
	fake_distance(&f, 0, "10\n");
	assert_int_equal(tt_node_topo_read(f.dir, 0, &t), 0);
	assert_int_equal(t.nearest_slow, -1);
	fake_remove_nodes(&f, 1);

	/* No NUMA at all: node 0, fast. */
	assert_int_equal(tt_node_topo_read("/nonexistent/tt-node", 0, &t), 0);
	assert_int_equal(t.nearest_slow, -1);
	assert_true(tt_nodemask_test(&t.cpu, 0));
	assert_int_equal(tt_node_topo_read(TT_SYSFS_NODE_DIR, 0, &t), 0);
}

static void test_maps_parse_line(void **state)
{
	struct tt_maps_entry e;

	(void)state;
	assert_int_equal(tt_maps_parse_line("7f0000000000-7f0000004000 rw-p 00000000 00:00 0    ",
					    &e), 0);
	assert_int_equal(e.start, 0x7f0000000000ULL);
	assert_int_equal(e.end, 0x7f0000004000ULL);
	assert_string_equal(e.perms, "rw-p");
	assert_int_equal(e.inode, 0);
	assert_string_equal(e.name, "");
	assert_true(tt_maps_entry_supported(&e));

	assert_int_equal(tt_maps_parse_line("55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0                          [heap]",
					    &e), 0);
	assert_string_equal(e.name, "[heap]");
	assert_true(tt_maps_entry_supported(&e));

	assert_int_equal(tt_maps_parse_line("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [stack]\n",
					    &e), 0);
	assert_true(tt_maps_entry_supported(&e));
	assert_int_equal(tt_maps_parse_line("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [stack:1234]\n",
					    &e), 0);
	assert_true(tt_maps_entry_supported(&e));
	assert_int_equal(tt_maps_parse_line("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [anon:tensors]\n",
					    &e), 0);
	assert_true(tt_maps_entry_supported(&e));
	/* PROT_NONE anonymous memory is still anonymous memory. */
	assert_int_equal(tt_maps_parse_line("1000-2000 ---p 00000000 00:00 0\n",
					    &e), 0);
	assert_true(tt_maps_entry_supported(&e));

	/* A file, with spaces in its name. */
	assert_int_equal(tt_maps_parse_line("1000-3000 r--p 00001000 fe:01 1311234 /usr/lib/a b.so\n",
					    &e), 0);
	assert_int_equal(e.dev_major, 0xfe);
	assert_int_equal(e.dev_minor, 1);
	assert_int_equal(e.inode, 1311234);
	assert_string_equal(e.name, "/usr/lib/a b.so");
	assert_false(tt_maps_entry_supported(&e));

	/* Shared anonymous, hugetlb, special mappings. */
	assert_int_equal(tt_maps_parse_line("1000-3000 rw-s 00000000 00:01 7 /dev/zero (deleted)\n",
					    &e), 0);
	assert_false(tt_maps_entry_supported(&e));
	assert_int_equal(tt_maps_parse_line("1000-3000 rw-s 00000000 00:00 0 [anon_shmem:x]\n",
					    &e), 0);
	assert_false(tt_maps_entry_supported(&e));
	assert_int_equal(tt_maps_parse_line("200000-400000 rw-p 00000000 00:10 4 /anon_hugepage (deleted)\n",
					    &e), 0);
	assert_false(tt_maps_entry_supported(&e));
	assert_int_equal(tt_maps_parse_line("7ffd3000-7ffd5000 r-xp 00000000 00:00 0 [vdso]\n",
					    &e), 0);
	assert_false(tt_maps_entry_supported(&e));
	assert_int_equal(tt_maps_parse_line("7ffd1000-7ffd3000 r--p 00000000 00:00 0 [vvar]\n",
					    &e), 0);
	assert_false(tt_maps_entry_supported(&e));
	assert_int_equal(tt_maps_parse_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n",
					    &e), 0);
	assert_int_equal(e.end, 0xffffffffff601000ULL);
	assert_false(tt_maps_entry_supported(&e));

	/* Not the maps format. */
	assert_int_equal(tt_maps_parse_line("", &e), -EINVAL);
	assert_int_equal(tt_maps_parse_line("hello\n", &e), -EINVAL);
	assert_int_equal(tt_maps_parse_line("2000-1000 rw-p 0 00:00 0\n", &e),
			 -EINVAL);
	assert_int_equal(tt_maps_parse_line("1000-2000 rw 0 00:00 0\n", &e),
			 -EINVAL);
	assert_int_equal(tt_maps_parse_line("1000-2000 rw-p 0 00:00 0x\n", &e),
			 -EINVAL);
}

static const char maps_text[] =
	"10000-14000 rw-p 00000000 00:00 0\n"
	"14000-16000 rw-p 00000000 00:00 0 [heap]\n"
	"16000-18000 r--p 00000000 08:01 42 /lib/x.so\n"
	"18000-1a000 rw-p 00000000 00:00 0\n"
	"20000-22000 rw-p 00000000 00:00 0\n"
	"22000-24000 rw-s 00000000 00:01 9 /dev/zero (deleted)\n";

/*
 * tt_maps_check() on maps_text; tt_maps_snap_check() on a snapshot of it
 * must say the same.
 */
static int maps_check(uint64_t start, uint64_t end, bool need_supported)
{
	FILE *f = fmemopen((void *)maps_text, strlen(maps_text), "r");
	struct tt_maps_snap *snap;
	int ret;

	assert_non_null(f);
	ret = tt_maps_check(f, start, end, need_supported);
	rewind(f);
	assert_int_equal(tt_maps_snap_read(f, &snap), 0);
	fclose(f);
	assert_int_equal(snap->n, 6);
	assert_int_equal(tt_maps_snap_check(snap, start, end, need_supported),
			 ret);
	free(snap);
	return ret;
}

static void test_maps_check(void **state)
{
	(void)state;
	/* Inside one mapping, across adjacent ones. */
	assert_int_equal(maps_check(0x11000, 0x12000, true), 0);
	assert_int_equal(maps_check(0x10000, 0x16000, true), 0);
	/* Across a file mapping. */
	assert_int_equal(maps_check(0x15000, 0x17000, true), -EOPNOTSUPP);
	assert_int_equal(maps_check(0x15000, 0x17000, false), 0);
	assert_int_equal(maps_check(0x10000, 0x1a000, false), 0);
	/* Holes: before everything, between mappings, after everything. */
	assert_int_equal(maps_check(0x1000, 0x2000, false), -EFAULT);
	assert_int_equal(maps_check(0xf000, 0x11000, true), -EFAULT);
	assert_int_equal(maps_check(0x19000, 0x21000, false), -EFAULT);
	assert_int_equal(maps_check(0x1a000, 0x1b000, true), -EFAULT);
	assert_int_equal(maps_check(0x30000, 0x31000, true), -EFAULT);
	assert_int_equal(maps_check(0x23000, 0x25000, false), -EFAULT);
	/* The first problem in address order decides. */
	assert_int_equal(maps_check(0x16000, 0x1c000, true), -EOPNOTSUPP);
	assert_int_equal(maps_check(0x18000, 0x23000, true), -EFAULT);
	/* Shared anonymous memory. */
	assert_int_equal(maps_check(0x21000, 0x23000, true), -EOPNOTSUPP);
	assert_int_equal(maps_check(0x21000, 0x23000, false), 0);

	/* And the live process: its own stack is supported. */
	{
		char here[1];
		uint64_t a = (uintptr_t)here & ~(uint64_t)(tt_page_size() - 1);

		assert_int_equal(tt_maps_check_self(a, a + tt_page_size(),
						    true), 0);
	}
}

/*
 * tt_maps_mapped_self() agrees with tt_maps_check_self(..., false): holes,
 * PROT_NONE, a range longer than one mincore() window.
 */
static void test_maps_mapped_self(void **state)
{
	uint64_t ps = tt_page_size(), n = 1200, a, e;
	char *p;

	(void)state;
	p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	a = (uintptr_t)p;
	e = a + n * ps;
	assert_int_equal(tt_maps_mapped_self(a, e), 0);
	assert_int_equal(mprotect(p + 7 * ps, ps, PROT_NONE), 0);
	assert_int_equal(tt_maps_mapped_self(a, e), 0);
	assert_int_equal(tt_maps_check_self(a, e, false), 0);
	/* a hole past the first 512-page window */
	assert_int_equal(munmap(p + 1000 * ps, ps), 0);
	assert_int_equal(tt_maps_mapped_self(a, e), -EFAULT);
	assert_int_equal(tt_maps_check_self(a, e, false), -EFAULT);
	assert_int_equal(tt_maps_mapped_self(a, a + 1000 * ps), 0);
	assert_int_equal(tt_maps_mapped_self(a + 1000 * ps, a + 1001 * ps),
			 -EFAULT);
	assert_int_equal(tt_maps_mapped_self(a + 1001 * ps, e), 0);
	munmap(p, n * ps);
	assert_int_equal(tt_maps_mapped_self(a, a + ps), -EFAULT);
}

/* Snapshots: what they hold, errors, the live process. */
static void test_maps_snap(void **state)
{
	static const char bad[] = "10000-14000 rw-p 00000000 00:00 0\nnope\n";
	struct tt_maps_snap *snap = NULL;
	char here[1];
	uint64_t a = (uintptr_t)here & ~(uint64_t)(tt_page_size() - 1);
	FILE *f;

	(void)state;
	f = fmemopen((void *)maps_text, strlen(maps_text), "r");
	assert_non_null(f);
	assert_int_equal(tt_maps_snap_read(f, &snap), 0);
	fclose(f);
	assert_int_equal(snap->span[1].start, 0x14000);
	assert_int_equal(snap->span[1].end, 0x16000);
	assert_true(snap->span[1].supported);
	assert_false(snap->span[2].supported);
	assert_false(snap->span[5].supported);
	free(snap);

	f = fmemopen((void *)bad, strlen(bad), "r");
	assert_non_null(f);
	assert_int_equal(tt_maps_snap_read(f, &snap), -EINVAL);
	fclose(f);

	/* No mapping at all: every range is a hole. */
	f = fopen("/dev/null", "re");
	assert_non_null(f);
	assert_int_equal(tt_maps_snap_read(f, &snap), 0);
	fclose(f);
	assert_int_equal(snap->n, 0);
	assert_int_equal(tt_maps_snap_check(snap, 0x1000, 0x2000, false),
			 -EFAULT);
	free(snap);

	assert_int_equal(tt_maps_snap_self(&snap), 0);
	assert_true(snap->n > 3);
	assert_int_equal(tt_maps_snap_check(snap, a, a + tt_page_size(), true),
			 0);
	free(snap);
}

static void test_range_check(void **state)
{
	uint64_t ps = tt_page_size(), limit = tt_user_addr_limit();

	(void)state;
	assert_true(limit == (1ULL << 47) - ps || limit == (1ULL << 56) - ps);
	assert_int_equal(tt_range_check(ps, ps), 0);
	assert_int_equal(tt_range_check(0, ps), 0);
	assert_int_equal(tt_range_check(ps, 0), -EINVAL);
	assert_int_equal(tt_range_check(ps + 1, ps), -EINVAL);
	assert_int_equal(tt_range_check(ps, ps - 1), -EINVAL);
	assert_int_equal(tt_range_check(limit - ps, ps), 0);
	assert_int_equal(tt_range_check(limit - ps, 2 * ps), -EOVERFLOW);
	assert_int_equal(tt_range_check(limit, ps), -EOVERFLOW);
	assert_int_equal(tt_range_check(UINT64_MAX - ps + 1, ps), -EOVERFLOW);
	assert_int_equal(tt_range_check(UINT64_MAX - ps + 1, 2 * ps),
			 -EOVERFLOW);
}

/* Whether CAP_SYS_NICE is in the effective set; with @drop, clear it. */
static bool cap_sys_nice(bool drop)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	uint32_t bit = 1U << (CAP_SYS_NICE % 32);
	bool had;

	assert_int_equal(syscall(SYS_capget, &h, d), 0);
	had = d[CAP_SYS_NICE / 32].effective & bit;
	if (drop) {
		d[CAP_SYS_NICE / 32].effective &= ~bit;
		assert_int_equal(syscall(SYS_capset, &h, d), 0);
	}
	return had;
}

/*
 * The move call asks for MPOL_MF_MOVE_ALL and falls back to MPOL_MF_MOVE
 * when the caller lacks CAP_SYS_NICE (checked in a child that drops it).
 */
static void test_move_flags(void **state)
{
	int node = 0, status, mflags, wstatus;
	char *p;
	pid_t pid;

	(void)state;
	p = mmap(NULL, tt_page_size(), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	p[0] = 1;

	status = TT_MP_STATUS_UNSET;
	mflags = MPOL_MF_MOVE_ALL;
	assert_int_equal(tt_mp_move(1, (void **)&p, &node, &status, &mflags),
			 0);
	assert_int_equal(status, 0);
	assert_int_equal(mflags, cap_sys_nice(false) ? MPOL_MF_MOVE_ALL :
						       MPOL_MF_MOVE);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cap_sys_nice(true);
		status = TT_MP_STATUS_UNSET;
		mflags = MPOL_MF_MOVE_ALL;
		if (tt_mp_move(1, (void **)&p, &node, &status, &mflags))
			_exit(1);
		_exit(status != 0 ? 2 : mflags != MPOL_MF_MOVE ? 3 : 0);
	}
	assert_int_equal(waitpid(pid, &wstatus, 0), pid);
	assert_true(WIFEXITED(wstatus));
	assert_int_equal(WEXITSTATUS(wstatus), 0);
	munmap(p, tt_page_size());
}

static void test_account_before(void **state)
{
	struct tt_migrate_result r = { 0 };

	(void)state;
	assert_false(tt_mp_account_before(1, 1, &r));
	assert_int_equal(r.already_on_node, 1);
	assert_true(tt_mp_account_before(0, 1, &r));
	assert_true(tt_mp_account_before(3, 1, &r));
	assert_false(tt_mp_account_before(-ENOENT, 1, &r));
	assert_false(tt_mp_account_before(-EFAULT, 1, &r));
	assert_int_equal(r.skipped_not_present, 2);
	assert_false(tt_mp_account_before(-EIO, 1, &r));
	assert_int_equal(r.skipped_unsupported, 1);
	assert_int_equal(r.moved + r.skipped_busy + r.skipped_no_memory, 0);
}

static void test_fate(void **state)
{
	const int U = TT_MP_STATUS_UNSET;

	(void)state;
	/* Moved: the move says so, or the page is there now. */
	assert_int_equal(tt_mp_fate(1, U, 1), TT_MP_MOVED);
	assert_int_equal(tt_mp_fate(-EBUSY, 1, 1), TT_MP_MOVED);
	assert_int_equal(tt_mp_fate(U, 1, 1), TT_MP_MOVED);
	/* Not reached by the kernel. */
	assert_int_equal(tt_mp_fate(U, 0, 1), TT_MP_RETRY);
	/* Gone. */
	assert_int_equal(tt_mp_fate(-ENOENT, -ENOENT, 1), TT_MP_NOT_PRESENT);
	assert_int_equal(tt_mp_fate(-EFAULT, -EFAULT, 1), TT_MP_NOT_PRESENT);
	assert_int_equal(tt_mp_fate(-EBUSY, -ENOENT, 1), TT_MP_NOT_PRESENT);
	/* Could not be isolated. */
	assert_int_equal(tt_mp_fate(-EBUSY, 0, 1), TT_MP_BUSY);
	assert_int_equal(tt_mp_fate(-EACCES, 0, 1), TT_MP_BUSY);
	assert_int_equal(tt_mp_fate(-EAGAIN, 0, 1), TT_MP_BUSY);
	assert_int_equal(tt_mp_fate(0, 0, 1), TT_MP_BUSY);
	/* Anything else. */
	/* No room on the target node. */
	assert_int_equal(tt_mp_fate(-ENOMEM, 0, 1), TT_MP_NO_MEMORY);
	assert_int_equal(tt_mp_fate(-ENOMEM, 1, 1), TT_MP_MOVED);
	assert_int_equal(tt_mp_fate(-EIO, 0, 1), TT_MP_UNSUPPORTED);
}

static void test_account_fate(void **state)
{
	struct tt_migrate_result r = { 0 };

	(void)state;
	tt_mp_account_fate(TT_MP_MOVED, &r);
	tt_mp_account_fate(TT_MP_MOVED, &r);
	tt_mp_account_fate(TT_MP_BUSY, &r);
	tt_mp_account_fate(TT_MP_RETRY, &r);
	tt_mp_account_fate(TT_MP_NOT_PRESENT, &r);
	tt_mp_account_fate(TT_MP_UNSUPPORTED, &r);
	tt_mp_account_fate(TT_MP_NO_MEMORY, &r);
	assert_int_equal(r.moved, 2);
	assert_int_equal(r.skipped_busy, 2);
	assert_int_equal(r.skipped_not_present, 1);
	assert_int_equal(r.skipped_unsupported, 1);
	assert_int_equal(r.skipped_no_memory, 1);
	assert_int_equal(r.already_on_node, 0);
}

static void test_account_residency(void **state)
{
	const int status[] = { 0, 1, 1, -ENOENT, 2, 5, -EFAULT, 0, -EIO };
	uint64_t bytes[2] = { 0, 0 }, np = 0, other = 0;

	(void)state;
	tt_mp_account_residency(status, 9, 4096, bytes, 2, &np, &other);
	assert_int_equal(bytes[0], 2 * 4096);
	assert_int_equal(bytes[1], 2 * 4096);
	assert_int_equal(np, 3 * 4096);
	assert_int_equal(other, 2 * 4096);
	/* Sums accumulate over chunks. */
	tt_mp_account_residency(status, 1, 4096, bytes, 2, &np, &other);
	assert_int_equal(bytes[0], 3 * 4096);
}

static void test_ranges(void **state)
{
	struct tt_session s;
	struct tt_ioc_range r = { .len = 0x2000 };
	uint64_t a;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(tt_mp_open(&s), 0);
	/* Inserted out of order, kept sorted. */
	for (a = 0x20000; a >= 0x10000; a -= 0x4000) {
		r.addr = a;
		assert_int_equal(tt_mp_ranges_insert(&s, &r), 0);
	}
	assert_int_equal(s.nr_ranges, 5);
	for (a = 1; a < s.nr_ranges; a++)
		assert_true(s.ranges[a - 1].addr + s.ranges[a - 1].len <=
			    s.ranges[a].addr);
	r.addr = 0x12000;
	assert_int_equal(tt_mp_ranges_insert(&s, &r), 0);
	r.addr = 0x11000;
	assert_int_equal(tt_mp_ranges_insert(&s, &r), -EEXIST);
	r.addr = 0x13000;
	assert_int_equal(tt_mp_ranges_insert(&s, &r), -EEXIST);
	r.addr = 0xf000;
	assert_int_equal(tt_mp_ranges_insert(&s, &r), -EEXIST);
	r.addr = 0x21000;
	assert_int_equal(tt_mp_ranges_insert(&s, &r), -EEXIST);
	assert_int_equal(s.stats.registered_ranges, 6);
	assert_int_equal(s.stats.registered_bytes, 6 * 0x2000);

	r.addr = 0x12000;
	r.len = 0x1000;
	assert_int_equal(tt_mp_ranges_remove(&s, &r), -ENOENT);
	r.len = 0x2000;
	assert_int_equal(tt_mp_ranges_remove(&s, &r), 0);
	assert_int_equal(tt_mp_ranges_remove(&s, &r), -ENOENT);
	assert_int_equal(s.stats.registered_ranges, 5);
	tt_mp_ops.close(&s);

	/* ENOSPC at TT_MP_MAX_RANGES. */
	assert_int_equal(tt_mp_open(&s), 0);
	r.len = 0x1000;
	for (a = 0; a < TT_MP_MAX_RANGES; a++) {
		r.addr = 0x100000 + a * 0x1000;
		assert_int_equal(tt_mp_ranges_insert(&s, &r), 0);
	}
	r.addr = 0x1000;
	assert_int_equal(tt_mp_ranges_insert(&s, &r), -ENOSPC);
	tt_mp_ops.close(&s);
}

/* Every stateless event check of the ABI, one row per case. */
static void test_event_check(void **state)
{
	static const struct {
		struct tt_event ev;
		int ret;
	} cases[] = {
		/* Well-formed events. */
		{ { .type = TT_EV_ITER_BEGIN }, 0 },
		{ { .type = TT_EV_ITER_BEGIN, .flags = TT_EV_TIMESTAMP,
		    .ts_ns = 5 }, 0 },
		{ { .type = TT_EV_ITER_BEGIN, .flags = TT_EV_TIMESTAMP }, 0 },
		{ { .type = TT_EV_LAYER_BEGIN, .flags = TT_FWD, .layer = 7 }, 0 },
		{ { .type = TT_EV_LAYER_BEGIN, .flags = TT_BWD,
		    .layer = UINT32_MAX }, 0 },
		{ { .type = TT_EV_LAYER_END, .flags = TT_FWD }, 0 },
		{ { .type = TT_EV_LAYER_END, .flags = TT_BWD | TT_EV_TIMESTAMP,
		    .ts_ns = 1 }, 0 },
		{ { .type = TT_EV_TENSOR_SAVED, .layer = 3, .addr = 1,
		    .len = 1 }, 0 },
		{ { .type = TT_EV_TENSOR_SAVED, .flags = TT_EV_PERSISTENT,
		    .addr = 0x1000, .len = 0x1000 }, 0 },
		{ { .type = TT_EV_TENSOR_SAVED,
		    .flags = TT_EV_PERSISTENT | TT_EV_TIMESTAMP, .ts_ns = 9 }, 0 },
		{ { .type = TT_EV_TENSOR_SAVED }, 0 },
		/* Unknown flag bits: EOPNOTSUPP, whatever else is wrong. */
		{ { .type = TT_EV_ITER_BEGIN, .flags = 1U << 4 }, -EOPNOTSUPP },
		{ { .type = TT_EV_LAYER_END, .flags = TT_FWD | 1U << 15 },
		  -EOPNOTSUPP },
		{ { .type = 99, .flags = 1U << 4 }, -EOPNOTSUPP },
		/* Unknown types. */
		{ { .type = 0 }, -EINVAL },
		{ { .type = 5 }, -EINVAL },
		{ { .type = UINT16_MAX }, -EINVAL },
		/* Iteration begin: no phase, layer, range or persistence. */
		{ { .type = TT_EV_ITER_BEGIN, .flags = TT_FWD }, -EINVAL },
		{ { .type = TT_EV_ITER_BEGIN, .flags = TT_EV_PERSISTENT },
		  -EINVAL },
		{ { .type = TT_EV_ITER_BEGIN, .layer = 1 }, -EINVAL },
		{ { .type = TT_EV_ITER_BEGIN, .addr = 1 }, -EINVAL },
		{ { .type = TT_EV_ITER_BEGIN, .len = 1 }, -EINVAL },
		/* Layer events: exactly one phase, no range, no persistence. */
		{ { .type = TT_EV_LAYER_BEGIN }, -EINVAL },
		{ { .type = TT_EV_LAYER_BEGIN, .flags = TT_FWD | TT_BWD },
		  -EINVAL },
		{ { .type = TT_EV_LAYER_END, .flags = TT_EV_TIMESTAMP }, -EINVAL },
		{ { .type = TT_EV_LAYER_END, .flags = TT_BWD | TT_EV_PERSISTENT },
		  -EINVAL },
		{ { .type = TT_EV_LAYER_BEGIN, .flags = TT_FWD, .addr = 4096 },
		  -EINVAL },
		{ { .type = TT_EV_LAYER_END, .flags = TT_BWD, .len = 4096 },
		  -EINVAL },
		/* Tensors: no phase. */
		{ { .type = TT_EV_TENSOR_SAVED, .flags = TT_FWD }, -EINVAL },
		{ { .type = TT_EV_TENSOR_SAVED, .flags = TT_BWD }, -EINVAL },
		/* A time without TT_EV_TIMESTAMP. */
		{ { .type = TT_EV_ITER_BEGIN, .ts_ns = 1 }, -EINVAL },
		{ { .type = TT_EV_LAYER_BEGIN, .flags = TT_FWD, .ts_ns = 1 },
		  -EINVAL },
		{ { .type = TT_EV_TENSOR_SAVED, .ts_ns = UINT64_MAX }, -EINVAL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int ret = tt_event_check(&cases[i].ev);

		if (ret != cases[i].ret)
			fail_msg("case %zu: type %u flags %#x: got %d, expected %d",
				 i, cases[i].ev.type, cases[i].ev.flags, ret,
				 cases[i].ret);
	}
}

/* Saved tensors are rounded inward to whole pages. */
static void test_event_pages(void **state)
{
	__u64 start = 0;

	(void)state;
	assert_int_equal(tt_event_pages(0x1000, 0x1000, 0x1000, &start), 1);
	assert_int_equal(start, 0x1000);
	assert_int_equal(tt_event_pages(0x1000, 0x3000, 0x1000, &start), 3);
	assert_int_equal(start, 0x1000);
	/* Unaligned at both ends: only the pages fully inside count. */
	assert_int_equal(tt_event_pages(0x1001, 0x2ffe, 0x1000, &start), 1);
	assert_int_equal(start, 0x2000);
	assert_int_equal(tt_event_pages(0x1800, 0x2000, 0x1000, &start), 1);
	assert_int_equal(start, 0x2000);
	assert_int_equal(tt_event_pages(0x1fff, 0x2002, 0x1000, &start), 2);
	assert_int_equal(start, 0x2000);
	/* Less than a page after rounding: nothing. */
	assert_int_equal(tt_event_pages(0x1001, 0xfff, 0x1000, NULL), 0);
	assert_int_equal(tt_event_pages(0x1001, 0x1ffe, 0x1000, NULL), 0);
	assert_int_equal(tt_event_pages(0x1000, 0xfff, 0x1000, NULL), 0);
	assert_int_equal(tt_event_pages(0x1000, 0, 0x1000, NULL), 0);
	assert_int_equal(tt_event_pages(0, 0, 0x1000, NULL), 0);
	assert_int_equal(tt_event_pages(0, 0x1000, 0x1000, NULL), 1);
	/* Another page size. */
	assert_int_equal(tt_event_pages(0x10000, 0x30000, 0x10000, &start), 3);
	assert_int_equal(tt_event_pages(0x10001, 0x30000, 0x10000, &start), 2);
	assert_int_equal(start, 0x20000);
	/* Wrapping around the address space: cut at its end. */
	assert_int_equal(tt_event_pages(UINT64_MAX - 0x2fff, UINT64_MAX,
					0x1000, &start), 2);
	assert_int_equal(start, UINT64_MAX - 0x2fff);
	assert_int_equal(tt_event_pages(UINT64_MAX - 0xffe, 0x1000, 0x1000,
					NULL), 0);
	assert_int_equal(tt_event_pages(UINT64_MAX, UINT64_MAX, 0x1000, NULL),
			 0);
}

static void assert_sched_equal(const struct tt_ioc_sched *a,
			       const struct tt_ioc_sched *b)
{
	assert_memory_equal(a, b, sizeof(*a));
}

/* TT_IOC_SET_SCHED on a settings structure, with a fake node layout. */
static void test_sched_apply(void **state)
{
	struct tt_ioc_sched cur, def, req, want;
	struct fake_sysfs f;

	(void)state;
	/* Node 0: CPUs, 1: memory only, 2: possible without memory. */
	fake_make(&f, "0-2\n", "0-1\n", "0\n");
	tt_sched_defaults(&def);
	assert_int_equal(def.valid, TT_SCHED_SET_ALL);
	assert_int_equal(def.flags, TT_SCHED_DEFAULT_FLAGS);
	assert_int_equal(def.profile_iters, 1);
	assert_int_equal(def.reserved, 0);
	assert_int_equal(def.stay_ns, 1000000);
	assert_int_equal(def.er_bps, 1ULL << 30);
	assert_int_equal(def.pr_bps, 1ULL << 30);
	assert_int_equal(def.slow_node, -1);
	assert_int_equal(def.fast_node, -1);

	/* Nothing selected: nothing changes. */
	cur = def;
	memset(&req, 0, sizeof(req));
	req.profile_iters = 0;
	req.er_bps = 0;
	req.slow_node = -5;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), 0);
	assert_sched_equal(&cur, &def);

	/* Each group alone. */
	req = (struct tt_ioc_sched){ .valid = TT_SCHED_SET_FLAGS,
				     .flags = TT_SCHED_SYNC_LATE | TT_SCHED_OFF };
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), 0);
	want = def;
	want.flags = TT_SCHED_SYNC_LATE | TT_SCHED_OFF;
	assert_sched_equal(&cur, &want);

	/* the reference semantics: with any extension EINVAL, nothing changes */
	req.flags = TT_SCHED_REFERENCE | TT_SCHED_ALAP;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -EINVAL);
	assert_sched_equal(&cur, &want);
	req.flags = TT_SCHED_REFERENCE | TT_SCHED_SYNC_LATE | TT_SCHED_OFF;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), 0);
	want.flags = req.flags;
	assert_sched_equal(&cur, &want);

	req = (struct tt_ioc_sched){ .valid = TT_SCHED_SET_PROFILE,
				     .profile_iters = 1000 };
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), 0);
	want.profile_iters = 1000;
	assert_sched_equal(&cur, &want);

	req = (struct tt_ioc_sched){ .valid = TT_SCHED_SET_STAY, .stay_ns = 0 };
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), 0);
	want.stay_ns = 0;
	assert_sched_equal(&cur, &want);
	req.stay_ns = UINT64_MAX;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), 0);
	want.stay_ns = UINT64_MAX;
	assert_sched_equal(&cur, &want);

	req = (struct tt_ioc_sched){ .valid = TT_SCHED_SET_RATES,
				     .er_bps = 1, .pr_bps = UINT64_MAX };
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), 0);
	want.er_bps = 1;
	want.pr_bps = UINT64_MAX;
	assert_sched_equal(&cur, &want);

	req = (struct tt_ioc_sched){ .valid = TT_SCHED_SET_NODES,
				     .slow_node = 1, .fast_node = 0 };
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), 0);
	want.slow_node = 1;
	want.fast_node = 0;
	assert_sched_equal(&cur, &want);
	req.slow_node = -1;
	req.fast_node = -1;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), 0);
	want.slow_node = -1;
	want.fast_node = -1;
	assert_sched_equal(&cur, &want);

	/* Everything at once; the valid bits of the request are ignored. */
	cur = want;
	req = def;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), 0);
	assert_sched_equal(&cur, &def);

	/* Rejections change nothing, even in the groups that were valid. */
	want = def;
	req = def;
	req.profile_iters = 7;
	req.valid = TT_SCHED_SET_ALL + 1;	/* the first unknown bit */
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -EOPNOTSUPP);
	req.valid = TT_SCHED_SET_ALL;
	req.flags = TT_SCHED_FLAGS_ALL + 1;	/* the first unknown bit */
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -EOPNOTSUPP);
	/* Unknown flags bits are refused even when flags is not selected. */
	req.valid = TT_SCHED_SET_PROFILE;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -EOPNOTSUPP);
	req.flags = 0;
	/* a budget without TT_SCHED_SET_BUDGET (the old reserved field) */
	req.reserved = 1;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -EOPNOTSUPP);
	req.reserved = 0;
	/* the session's own fast-tier budget, as the module's */
	req.valid = TT_SCHED_SET_BUDGET;
	req.budget_mib = 64;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), 0);
	assert_int_equal(cur.budget_mib, 64);
	req.budget_mib = 0;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), 0);
	assert_int_equal(cur.budget_mib, 0);
	req.valid = TT_SCHED_SET_ALL;
	req.profile_iters = 0;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -EINVAL);
	req.profile_iters = 1001;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -EINVAL);
	req.profile_iters = 7;
	req.er_bps = 0;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -EINVAL);
	req.er_bps = 1;
	req.pr_bps = 0;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -EINVAL);
	req.pr_bps = 1;
	req.slow_node = -2;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -EINVAL);
	req.slow_node = 3;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -EINVAL);
	req.slow_node = 2;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -ENODEV);
	req.slow_node = 1;
	req.fast_node = 2;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -ENODEV);
	req.fast_node = INT32_MIN;
	assert_int_equal(tt_sched_apply(&cur, &req, f.dir), -EINVAL);
	assert_sched_equal(&cur, &want);
	fake_remove(&f);
}

/* tt_mp_event() counts what it accepts and keeps times monotonic. */
static void test_mp_event(void **state)
{
	struct tt_ioc_stats st;
	struct tt_session s;
	struct tt_event ev;
	uint64_t now, ps;
	void *page;

	(void)state;
	assert_int_equal(tt_mp_open(&s), 0);
	ev = (struct tt_event){ .type = TT_EV_ITER_BEGIN };
	assert_int_equal(tt_mp_event(&s, &ev), 0);
	now = tt_now_ns();
	assert_true(tt_us_last_ts(&s) > 0 && tt_us_last_ts(&s) <= now);
	ps = tt_page_size();
	page = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(page != MAP_FAILED);
	ev = (struct tt_event){ .type = TT_EV_TENSOR_SAVED,
				.addr = (uintptr_t)page, .len = ps };
	assert_int_equal(tt_mp_event(&s, &ev), 0);
	ev.addr++;
	assert_int_equal(tt_mp_event(&s, &ev), 0);
	/* checked on arrival as the module does: mapped, inside user space */
	ev.addr = 0x1000;
	assert_int_equal(tt_mp_event(&s, &ev), -EFAULT);
	ev.addr = (uintptr_t)page;
	ev.len = UINT64_MAX - 4096;
	assert_int_equal(tt_mp_event(&s, &ev), -EOVERFLOW);
	ev.len = ps;
	ev.flags = 1U << 9;
	assert_int_equal(tt_mp_event(&s, &ev), -EOPNOTSUPP);
	munmap(page, 2 * ps);
	assert_int_equal(tt_mp_ops.stats(&s, &st), 0);
	assert_int_equal(st.events, 3);
	assert_int_equal(st.iterations, 1);
	assert_int_equal(st.tensors_saved, 1);
	assert_int_equal(st.tensors_ignored, 1);

	/* A caller's time in the future: later clock reads are held at it. */
	ev = (struct tt_event){ .type = TT_EV_LAYER_BEGIN,
				.flags = TT_FWD | TT_EV_TIMESTAMP,
				.ts_ns = now + 3600ULL * 1000000000 };
	assert_int_equal(tt_mp_event(&s, &ev), 0);
	assert_int_equal(tt_us_last_ts(&s), ev.ts_ns);
	ev.flags = TT_FWD;
	ev.ts_ns = 0;
	assert_int_equal(tt_mp_event(&s, &ev), 0);
	assert_int_equal(tt_us_last_ts(&s), now + 3600ULL * 1000000000);
	/* The same time again is fine, one nanosecond less is not. */
	ev.flags = TT_FWD | TT_EV_TIMESTAMP;
	ev.ts_ns = now + 3600ULL * 1000000000;
	assert_int_equal(tt_mp_event(&s, &ev), 0);
	ev.ts_ns--;
	assert_int_equal(tt_mp_event(&s, &ev), -EINVAL);
	assert_int_equal(tt_mp_ops.stats(&s, &st), 0);
	assert_int_equal(st.events, 6);
	tt_mp_ops.close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodelist_parse),
		cmocka_unit_test(test_cpus_parse),
		cmocka_unit_test(test_cpus_thread),
		cmocka_unit_test(test_node_check),
		cmocka_unit_test(test_node_topo),
		cmocka_unit_test(test_maps_parse_line),
		cmocka_unit_test(test_maps_check),
		cmocka_unit_test(test_maps_mapped_self),
		cmocka_unit_test(test_maps_snap),
		cmocka_unit_test(test_range_check),
		cmocka_unit_test(test_move_flags),
		cmocka_unit_test(test_account_before),
		cmocka_unit_test(test_fate),
		cmocka_unit_test(test_account_fate),
		cmocka_unit_test(test_account_residency),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_event_check),
		cmocka_unit_test(test_event_pages),
		cmocka_unit_test(test_sched_apply),
		cmocka_unit_test(test_mp_event),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
