// SPDX-License-Identifier: GPL-2.0
/*
 * Memory tiers: the module's view of the nodes against the kernel's own
 * (read here from sysfs, independently), eviction down the tiers with
 * spilling, every slow node full, NUMA balancing on, and memory hotplug of
 * the dax/kmem node while a session runs. Meant for every topology of
 * scripts/vmrun; a test SKIPs (saying why) where the topology lacks what
 * it needs:
 *
 *   view_matches_kernel  per node: role, memory tier, abstract distance
 *                        source (dax/kmem or DRAM), distance (HMAT latency
 *                        or SLIT) as `tierctl -j tiers` shows them, and
 *                        the fast node's eviction order computed here from
 *                        sysfs.
 *   kmem_is_lower_tier   a node onlined by dax/kmem (NVDIMM, CXL) is slow,
 *                        in a lower memory tier than the fast node (22 vs
 *                        4 on 6.1) and in the eviction order, in `tierctl
 *                        tiers` and `tierctl status`.
 *   evict_down           the scheduler's evictions land on the first node
 *                        of the eviction order (move_pages(2) placement),
 *                        data intact, all back on the fast node.
 *   spill_when_full      the first slow node filled by a helper, which
 *                        keeps it full (16 MiB freed there after the fill
 *                        is taken too): evictions spill to the next one
 *                        (placement), data intact.
 *   all_slow_full        every slow node filled: evicted pages stay on the
 *                        fast node, counted in skipped_no_memory; intact.
 *                        (A helper fills a node through TT_IOC_MIGRATE
 *                        until ENOSPC: as full as evictions see it.)
 *   balancing_on         kernel.numa_balancing=1 while the scheduler runs:
 *                        evictions and prefetches happen, data intact, all
 *                        back on the fast node (TT_IOC_RESIDENCY, which
 *                        sees PROT_NONE pages).
 *   hotplug_kmem         the dax/kmem node's memory offlined while a
 *                        training process runs: the view drops it at once
 *                        (no eviction goes there), the process's data is
 *                        intact; onlined again: back in the view at its
 *                        tier, evictions reach it again.
 *
 * Every test sets kernel.numa_balancing to what it assumes (0 but for
 * balancing_on) and restores it. TT_TIERS_ONLY="name ..." runs only the
 * named tests (the others SKIP).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

#define NODE_SYSFS	"/sys/devices/system/node"
#define TIER_SYSFS	"/sys/devices/virtual/memory_tiering"
#define KMEM_SYSFS	"/sys/bus/dax/drivers/kmem"
#define BALANCING	"/proc/sys/kernel/numa_balancing"
#define MAXN		16
/* The kernel's default memory tier of RAM (MEMTIER_ADISTANCE_DRAM >> 7). */
#define DRAM_TIER	4
#define ML		4		/* layers of the mini trainer */
/*
 * Tensor size of most tests. Small: every access to emulated CXL memory
 * is an MMIO exit in QEMU (writes ~5 MB/s under TCG).
 */
#define SMALL		(2 * TT_ST_MIB)
/* The pause of the profiling iteration before its backward pass (ms). */
#define PROFILE_PAUSE_MS	4000

/**
 * struct knode - one node as the kernel shows it in sysfs
 * @mem:   online with memory.
 * @cpus:  has CPUs.
 * @tier:  memory tier id, -1 for none.
 * @kmem:  target node of a dax device bound to dax/kmem.
 * @lat:   HMAT read latency (access1, else access0), 0 for none.
 * @dist:  SLIT distances to every node.
 */
struct knode {
	int mem;
	int cpus;
	int tier;
	int kmem;
	long long lat;
	int dist[MAXN];
};

/**
 * struct mnode - one node as `tierctl -j status` shows it
 * @seen:   listed.
 * @role:   "fast", "slow", "none".
 * @tier:   memory_tier, -1 for null.
 * @adist:  adist_source.
 * @dist:   distance.
 * @dsrc:   distance_source.
 * @order:  evict_order.
 * @norder: its length.
 */
struct mnode {
	int seen;
	char role[16];
	int tier;
	char adist[16];
	long long dist;
	char dsrc[16];
	int order[MAXN];
	int norder;
};

static int knodes_read(struct knode *k)
{
	unsigned char set[TT_ST_MAX_NODES];
	char path[320], buf[4096], *p;
	struct dirent *de;
	DIR *d;
	int n, i;

	memset(k, 0, MAXN * sizeof(*k));
	for (n = 0; n < MAXN; n++)
		k[n].tier = -1;
	if (tt_st_read_nodelist(NODE_SYSFS "/has_memory", set, TT_ST_MAX_NODES) < 0)
		return -1;
	for (n = 0; n < MAXN; n++)
		k[n].mem = set[n];
	if (tt_st_read_nodelist(NODE_SYSFS "/has_cpu", set, TT_ST_MAX_NODES) < 0)
		return -1;
	for (n = 0; n < MAXN; n++)
		k[n].cpus = set[n];
	d = opendir(TIER_SYSFS);
	while (d && (de = readdir(d))) {
		int id;

		if (sscanf(de->d_name, "memory_tier%d", &id) != 1)
			continue;
		snprintf(path, sizeof(path), TIER_SYSFS "/%s/nodelist",
			 de->d_name);
		if (tt_st_read_nodelist(path, set, TT_ST_MAX_NODES) < 0)
			continue;
		for (n = 0; n < MAXN; n++)
			if (set[n])
				k[n].tier = id;
	}
	if (d)
		closedir(d);
	d = opendir(KMEM_SYSFS);
	while (d && (de = readdir(d))) {
		long long nid;

		if (strncmp(de->d_name, "dax", 3))
			continue;
		snprintf(path, sizeof(path), KMEM_SYSFS "/%s/target_node",
			 de->d_name);
		if (!tt_st_read_ll(path, &nid) && nid >= 0 && nid < MAXN)
			k[nid].kmem = 1;
	}
	if (d)
		closedir(d);
	for (n = 0; n < MAXN; n++) {
		if (!k[n].mem)
			continue;
		snprintf(path, sizeof(path),
			 NODE_SYSFS "/node%d/access1/initiators/read_latency", n);
		if (tt_st_read_ll(path, &k[n].lat)) {
			snprintf(path, sizeof(path),
				 NODE_SYSFS "/node%d/access0/initiators/read_latency", n);
			if (tt_st_read_ll(path, &k[n].lat))
				k[n].lat = 0;
		}
		snprintf(path, sizeof(path), NODE_SYSFS "/node%d/distance", n);
		if (tt_st_read_file(path, buf, sizeof(buf)) < 0)
			return -1;
		for (i = 0, p = buf; i < MAXN && *p; i++) {
			char *end;

			k[n].dist[i] = strtol(p, &end, 10);
			if (end == p)
				break;
			p = end;
		}
	}
	return 0;
}

/* The value after "key": in @obj, copied into @out (strings unquoted). */
static int json_field(const char *obj, const char *key, char *out, size_t len)
{
	char pat[64];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(obj, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	if (*p == '"') {
		e = strchr(++p, '"');
	} else if (*p == '[') {
		e = strchr(p, ']');
		if (e)
			e++;
	} else {
		e = p + strcspn(p, ",}");
	}
	if (!e || (size_t)(e - p) >= len)
		return -1;
	memcpy(out, p, e - p);
	out[e - p] = '\0';
	return 0;
}

/* `tierctl -j VERB` into @m; the JSON of one node is {"node":N,...}. */
static int mnodes_read(const char *verb, struct mnode *m)
{
	char cmd[64], *buf, *p, v[256];
	size_t n = 0;
	FILE *f;
	int rc;

	memset(m, 0, MAXN * sizeof(*m));
	buf = malloc(65536);
	if (!buf)
		return -1;
	snprintf(cmd, sizeof(cmd), "tierctl -j %s", verb);
	f = popen(cmd, "r");
	if (!f) {
		free(buf);
		return -1;
	}
	while (n < 65535 && (rc = fread(buf + n, 1, 65535 - n, f)) > 0)
		n += rc;
	buf[n] = '\0';
	rc = pclose(f);
	for (p = strstr(buf, "{\"node\":"); !rc && p;
	     p = strstr(p + 1, "{\"node\":")) {
		char *end = strchr(p, '}'), save;
		struct mnode *x;
		int id;

		if (!end || sscanf(p, "{\"node\":%d", &id) != 1 || id < 0 ||
		    id >= MAXN)
			continue;
		save = end[1];
		end[1] = '\0';
		x = &m[id];
		x->seen = 1;
		json_field(p, "role", x->role, sizeof(x->role));
		x->tier = json_field(p, "memory_tier", v, sizeof(v)) ||
			  !strcmp(v, "null") ? -1 : atoi(v);
		json_field(p, "adist_source", x->adist, sizeof(x->adist));
		if (!json_field(p, "distance", v, sizeof(v)))
			x->dist = atoll(v);
		json_field(p, "distance_source", x->dsrc, sizeof(x->dsrc));
		if (!json_field(p, "evict_order", v, sizeof(v))) {
			char *q = v + 1;

			while (*q && *q != ']' && x->norder < MAXN) {
				x->order[x->norder++] = strtol(q, &q, 10);
				if (*q == ',')
					q++;
			}
		}
		end[1] = save;
	}
	free(buf);
	return rc ? -1 : 0;
}

/* Is @a before @b in @fast's eviction order, by the documented rule? */
static int before(const struct knode *k, int fast, int a, int b)
{
	int ta = k[a].tier < 0 ? 1 << 30 : k[a].tier;
	int tb = k[b].tier < 0 ? 1 << 30 : k[b].tier;

	if (ta != tb)
		return ta < tb;
	if (k[a].lat && k[b].lat && k[a].lat != k[b].lat)
		return k[a].lat < k[b].lat;
	if (k[fast].dist[a] != k[fast].dist[b])
		return k[fast].dist[a] < k[fast].dist[b];
	return a < b;
}

/* The eviction order of @fast computed from sysfs: count of @out. */
static int expected_order(const struct knode *k, int fast, int *out)
{
	int n = 0, i, j, t;

	for (i = 0; i < MAXN; i++)
		if (k[i].mem && !k[i].cpus)
			out[n++] = i;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && before(k, fast, out[j], out[j - 1]); j--) {
			t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

/* The first node onlined by dax/kmem, -1 if none. */
static int kmem_node(const struct knode *k)
{
	int n;

	for (n = 0; n < MAXN; n++)
		if (k[n].mem && k[n].kmem)
			return n;
	return -1;
}

/* ---- a small training loop driving the scheduler ------------------------- */

/**
 * struct mini - a training process with ML layers of @sz bytes each
 * @s:       session.
 * @fast:    the node it runs on.
 * @sz:      bytes per layer.
 * @t:       the tensors.
 * @iter:    iterations done.
 * @on:      after the planned iterations: pages of the evicted tensors seen
 *           on each node (move_pages(2)) right after each eviction ended.
 * @evicted: layer-iterations whose eviction ended.
 * @unplanned: layer-iterations the plan did not evict (profiling, 0 bytes).
 * @unstarted: planned ones whose eviction had not started @start_ms after
 *           the forward end.
 * @unended: started ones not ended after 30 s.
 * @pause_ms: the profiling iteration's pause (mini_iteration()).
 * @start_ms: how long an eviction may take to start (when no slow node
 *           has room, none starts at all).
 * @err:     what failed.
 */
struct mini {
	struct tt_session *s;
	int fast;
	size_t sz;
	char *t[ML];
	unsigned int iter;
	uint64_t on[TT_ST_MAX_NODES];
	unsigned int evicted;
	unsigned int unplanned;
	unsigned int unstarted;
	unsigned int unended;
	unsigned int pause_ms;
	unsigned int start_ms;
	char err[256];
};

static int mini_fail(struct mini *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->err, sizeof(m->err), fmt, ap);
	va_end(ap);
	return -1;
}

static int mini_open(struct mini *m, int fast, size_t sz)
{
	struct tt_ioc_sched c = {
		.valid = TT_SCHED_SET_STAY | TT_SCHED_SET_RATES |
			 TT_SCHED_SET_FLAGS,
		/*
		 * Rates that make the plan evict every layer whole; prefetch
		 * triggers that follow the iteration (see mini_iteration()).
		 */
		.stay_ns = 0, .er_bps = 64ULL << 30, .pr_bps = 64ULL << 30,
		.flags = TT_SCHED_SYNC_LATE | TT_SCHED_ANCHOR,
	};
	int l;

	memset(m, 0, sizeof(*m));
	m->fast = fast;
	m->sz = sz;
	m->pause_ms = PROFILE_PAUSE_MS;
	m->start_ms = 5000;
	unsetenv("TIERTRAIN_BACKEND");
	m->s = tt_open();
	if (!m->s)
		return mini_fail(m, "tt_open: %s", strerror(errno));
	if (tt_sched_set(m->s, &c))
		return mini_fail(m, "tt_sched_set: %s", strerror(errno));
	for (l = 0; l < ML; l++) {
		m->t[l] = tt_st_map(sz, -1);
		if (!m->t[l])
			return mini_fail(m, "mmap: %s", strerror(errno));
	}
	return 0;
}

static void mini_close(struct mini *m)
{
	int l;

	for (l = 0; l < ML; l++)
		if (m->t[l])
			munmap(m->t[l], m->sz);
	if (m->s)
		tt_close(m->s);
	m->s = NULL;
}

/* After layer @id's forward end: wait for its eviction, see where it is. */
static int mini_where(struct mini *m, unsigned int id)
{
	struct tt_layer_info info[ML + 1];
	uint64_t end = tt_st_now_ns() + 30000000000ULL;
	uint64_t start_by = tt_st_now_ns() + m->start_ms * 1000000ULL;
	struct tt_st_place *p;
	int n, i;

	for (;;) {
		n = tt_layers(m->s, info, ML + 1);
		if (n < 0)
			return mini_fail(m, "tt_layers: %s", strerror(-n));
		for (i = 0; i < n && i <= ML && info[i].layer != id; i++)
			;
		if (i == n || i > ML || info[i].status == TT_LAYER_PROFILING ||
		    !info[i].final_bytes) {
			m->unplanned++;
			return 0;
		}
		if (info[i].last_evict_end_ns)
			break;
		if (!info[i].last_evict_start_ns && tt_st_now_ns() > start_by) {
			m->unstarted++;
			return 0;
		}
		if (tt_st_now_ns() > end) {
			m->unended++;
			return 0;
		}
		usleep(1000);
	}
	p = malloc(sizeof(*p));
	if (!p || tt_st_place(m->t[id - 1], m->sz, p)) {
		free(p);
		return mini_fail(m, "move_pages placement failed");
	}
	for (i = 0; i < TT_ST_MAX_NODES; i++)
		m->on[i] += p->on_node[i];
	m->evicted++;
	free(p);
	return 0;
}

/*
 * One iteration: forward 1..ML, a pause, backward ML..1, data checked at
 * each backward begin. The profiling iteration (@profile) pauses
 * PROFILE_PAUSE_MS before its backward pass, the planned ones 20 ms: with
 * TT_SCHED_ANCHOR the prefetch triggers move later with the planned
 * iteration's forward pass, which waits for every eviction to end (on
 * emulated CXL memory 2 MiB take up to a second or two), and the pause
 * keeps them after it, so that each eviction's placement is read before
 * anything moves the tensor back; TT_SCHED_SYNC_LATE fetches it at the
 * backward begin.
 */
static int mini_iteration(struct mini *m, int profile)
{
	unsigned int l;
	long long off;

	if (tt_iter_begin(m->s))
		return mini_fail(m, "iteration begin: %s", strerror(errno));
	for (l = 1; l <= ML; l++) {
		if (tt_layer_begin(m->s, l, TT_FWD))
			return mini_fail(m, "forward begin: %s", strerror(errno));
		tt_st_fill(m->t[l - 1], m->sz, m->iter * 16 + l);
		if (tt_tensor_saved(m->s, l, m->t[l - 1], m->sz))
			return mini_fail(m, "tensor saved: %s", strerror(errno));
		usleep(10000);
		if (tt_layer_end(m->s, l, TT_FWD))
			return mini_fail(m, "forward end: %s", strerror(errno));
		if (mini_where(m, l))
			return -1;
	}
	usleep((profile ? m->pause_ms : 20) * 1000);
	for (l = ML; l >= 1; l--) {
		if (tt_layer_begin(m->s, l, TT_BWD))
			return mini_fail(m, "backward begin: %s", strerror(errno));
		off = tt_st_check(m->t[l - 1], m->sz, m->iter * 16 + l);
		if (off != -1)
			return mini_fail(m, "iteration %u layer %u: data differs at offset %lld",
					 m->iter, l, off);
		usleep(10000);
		if (tt_layer_end(m->s, l, TT_BWD))
			return mini_fail(m, "backward end: %s", strerror(errno));
	}
	m->iter++;
	return 0;
}

/* Every tensor back on the fast node (residency), within 5 s. */
static int mini_all_fast(struct mini *m)
{
	uint64_t end = tt_st_now_ns() + 5000000000ULL, *b, np, other, off;
	int l;

	b = calloc(TT_ST_MAX_NODES, sizeof(*b));
	if (!b)
		return mini_fail(m, "no memory");
	do {
		off = 0;
		for (l = 0; l < ML; l++) {
			if (tt_residency_ex(m->s, m->t[l], m->sz, b,
					    TT_ST_MAX_NODES, &np, &other)) {
				free(b);
				return mini_fail(m, "residency failed");
			}
			off += m->sz - b[m->fast];
		}
		if (!off) {
			free(b);
			return 0;
		}
		usleep(2000);
	} while (tt_st_now_ns() < end);
	free(b);
	return mini_fail(m, "%llu bytes off the fast node after 5 s",
			 (unsigned long long)off);
}

static int node_blocks(int node, const char *state, unsigned int mul);

/* ---- fixture ----------------------------------------------------------- */

FIXTURE(tiers)
{
	struct tt_st_topo topo;
	struct knode k[MAXN];
	struct mnode m[MAXN];
	int order[MAXN];
	int norder;
	long long balancing;
	pid_t hogs[MAXN];
	uint64_t *hog_more;	/* shared: pages each hog took after filling */
	struct mini mini;
	pid_t child;
	int offlined;
};

FIXTURE_SETUP(tiers)
{
	int i;

	const char *only = getenv("TT_TIERS_ONLY");

	memset(self->hogs, 0, sizeof(self->hogs));
	self->hog_more = NULL;
	memset(&self->mini, 0, sizeof(self->mini));
	self->balancing = -1;
	self->child = 0;
	self->offlined = -1;
	if (only && *only && !tt_st_in_list(only, _metadata->name))
		SKIP(return, "not in TT_TIERS_ONLY");
	TT_SETUP_NODES(&self->topo, 1);
	ASSERT_EQ(0, tt_st_read_ll(BALANCING, &self->balancing));
	ASSERT_EQ(0, tt_st_write_file(BALANCING, "0"));
	ASSERT_EQ(0, knodes_read(self->k));
	ASSERT_LT(self->topo.fast, MAXN);
	ASSERT_EQ(0, mnodes_read("tiers", self->m))
		TH_LOG("tierctl -j tiers failed");
	self->norder = expected_order(self->k, self->topo.fast, self->order);
	for (i = 0; i < self->norder; i++)
		TH_LOG("eviction order %d: node %d (tier %d, HMAT %lld ns, SLIT %d)",
		       i, self->order[i], self->k[self->order[i]].tier,
		       self->k[self->order[i]].lat,
		       self->k[self->topo.fast].dist[self->order[i]]);
}

FIXTURE_TEARDOWN(tiers)
{
	char b[24];
	int i;

	mini_close(&self->mini);
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->offlined >= 0)
		node_blocks(self->offlined, "online_movable", 1);
	for (i = 0; i < MAXN; i++) {
		if (self->hogs[i] > 0) {
			kill(self->hogs[i], SIGKILL);
			waitpid(self->hogs[i], NULL, 0);
		}
	}
	if (self->hog_more)
		munmap(self->hog_more, MAXN * sizeof(*self->hog_more));
	if (self->balancing >= 0) {
		snprintf(b, sizeof(b), "%lld", self->balancing);
		tt_st_write_file(BALANCING, b);
	}
}

TEST_F(tiers, view_matches_kernel)
{
	const struct mnode *f;
	int n, i;

	TT_SKIP_IF_SETUP_SKIPPED();
	for (n = 0; n < MAXN; n++) {
		const struct knode *k = &self->k[n];
		const struct mnode *m = &self->m[n];

		ASSERT_EQ(k->mem, m->seen) TH_LOG("node %d", n);
		if (!k->mem)
			continue;
		ASSERT_STREQ(k->cpus ? "fast" : "slow", m->role)
			TH_LOG("node %d", n);
		ASSERT_EQ(k->tier, m->tier) TH_LOG("node %d", n);
		ASSERT_STREQ(k->tier < 0 ? "none" : k->kmem ? "kmem" :
			     k->tier == DRAM_TIER ? "dram" : "hmat",
			     m->adist) TH_LOG("node %d", n);
		if (k->lat) {
			ASSERT_STREQ("hmat", m->dsrc) TH_LOG("node %d", n);
			ASSERT_EQ(k->lat, m->dist) TH_LOG("node %d", n);
		} else {
			ASSERT_STREQ("slit", m->dsrc) TH_LOG("node %d", n);
		}
		if (!k->cpus)
			ASSERT_EQ(0, m->norder) TH_LOG("node %d", n);
	}
	f = &self->m[self->topo.fast];
	ASSERT_EQ(self->norder, f->norder);
	for (i = 0; i < self->norder; i++)
		ASSERT_EQ(self->order[i], f->order[i]) TH_LOG("position %d", i);
}

TEST_F(tiers, kmem_is_lower_tier)
{
	struct mnode *st = calloc(MAXN, sizeof(*st));
	int kn = kmem_node(self->k), i, in_order = 0;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_NE(NULL, st);
	if (kn < 0) {
		free(st);
		SKIP(return, "no node onlined by dax/kmem (use --topology nvdimm, cxl or three-tier)");
	}
	ASSERT_LE(0, self->k[self->topo.fast].tier);
	ASSERT_LT(self->k[self->topo.fast].tier, self->k[kn].tier);
	/* tierctl tiers (the fixture read it) */
	ASSERT_STREQ("slow", self->m[kn].role);
	ASSERT_EQ(self->k[kn].tier, self->m[kn].tier);
	ASSERT_STREQ("kmem", self->m[kn].adist);
	for (i = 0; i < self->m[self->topo.fast].norder; i++)
		in_order |= self->m[self->topo.fast].order[i] == kn;
	ASSERT_TRUE(in_order);
	/* and tierctl status */
	ASSERT_EQ(0, mnodes_read("status", st));
	ASSERT_STREQ("slow", st[kn].role);
	ASSERT_EQ(self->k[kn].tier, st[kn].tier);
	ASSERT_STREQ("kmem", st[kn].adist);
	TH_LOG("node %d: memory tier %d, kmem, slow; the fast node %d is in tier %d",
	       kn, st[kn].tier, self->topo.fast, self->k[self->topo.fast].tier);
	free(st);
}


/*
 * A memory-only RAM node the HMAT describes (three-tier: half the DRAM
 * bandwidth): from 6.8 on the kernel gives it a tier from that (below
 * DRAM's) and tierctl says "hmat"; on older kernels it stays in the DRAM
 * tier as "dram".
 */
TEST_F(tiers, hmat_tier_source)
{
	bool hmat_tiers = tt_st_kernel_at_least(6, 8);
	int n, seen = 0;

	TT_SKIP_IF_SETUP_SKIPPED();
	for (n = 0; n < MAXN; n++) {
		const struct knode *k = &self->k[n];

		if (!k->mem || k->cpus || k->kmem || !k->lat)
			continue;
		seen++;
		if (hmat_tiers) {
			ASSERT_LT(DRAM_TIER, k->tier) TH_LOG("node %d", n);
			ASSERT_STREQ("hmat", self->m[n].adist) TH_LOG("node %d", n);
		} else {
			ASSERT_EQ(DRAM_TIER, k->tier) TH_LOG("node %d", n);
			ASSERT_STREQ("dram", self->m[n].adist) TH_LOG("node %d", n);
		}
		ASSERT_EQ(k->tier, self->m[n].tier) TH_LOG("node %d", n);
		TH_LOG("node %d: HMAT latency %lld ns, memory tier %d (%s)",
		       n, k->lat, k->tier, self->m[n].adist);
	}
	if (!seen)
		SKIP(return, "no memory-only RAM node with HMAT data (use --topology three-tier)");
}

/* One profiling iteration, then @n planned ones (counted in @m->on). */
static int mini_run(struct mini *m, unsigned int n)
{
	unsigned int i;

	if (mini_iteration(m, 1))
		return -1;
	memset(m->on, 0, sizeof(m->on));
	m->evicted = 0;
	m->unplanned = m->unstarted = m->unended = 0;
	for (i = 0; i < n; i++)
		if (mini_iteration(m, 0))
			return -1;
	return 0;
}

TEST_F_TIMEOUT(tiers, evict_down, 120)
{
	struct mini *m = &self->mini;
	uint64_t pages = ML * SMALL / tt_page_size();
	int first;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (!self->norder)
		SKIP(return, "no slow node");
	first = self->order[0];
	ASSERT_EQ(0, mini_open(m, self->topo.fast, SMALL)) TH_LOG("%s", m->err);
	ASSERT_EQ(0, mini_run(m, 2)) TH_LOG("%s", m->err);
	TH_LOG("%u evictions (%u not planned, %u not started, %u not ended); pages seen after them on node %d: %llu, fast node %d: %llu",
	       m->evicted, m->unplanned, m->unstarted, m->unended, first,
	       (unsigned long long)m->on[first], m->fast,
	       (unsigned long long)m->on[m->fast]);
	ASSERT_EQ(2 * ML, m->evicted);
	/* every evicted page on the first node of the order */
	ASSERT_EQ(2 * pages, m->on[first]);
	ASSERT_EQ(0, mini_all_fast(m)) TH_LOG("%s", m->err);
}

/*
 * Pages of @node's zones in the CPUs' page lists (/proc/zoneinfo "count:"
 * of every pageset), or -1: pages freed there that no allocation past the
 * watermark check can reach until the kernel drains them to the buddy
 * lists.
 */
static long long node_pcp_pages(int node)
{
	return tt_st_zoneinfo_sum(node, "count:");
}

/*
 * Fill @node as full as tiertrain's engine can make it, and keep it so: a
 * helper process moves 64 MiB chunks of its memory there with
 * TT_IOC_MIGRATE until a chunk does not fit (ENOSPC), then halves the chunk
 * down to one page and goes on until a single page does not fit; then it
 * tells the caller and, until it is killed, tries again every 20 ms with
 * 1 MiB, taking whatever the kernel frees on the node meanwhile (per-CPU
 * page lists drained, kswapd's reclaim), counted in self->hog_more[@node].
 * The page cache is dropped first: reclaim finds nothing of it on the node
 * later. Filling through the engine, whose allocations never reclaim hard
 * or call the OOM killer, leaves the node "full" exactly as evictions see
 * it; faulting memory in on the node instead would wake the OOM killer
 * long before (the reserves of its zones). Return: 0, or -errno.
 */
static int hog(FIXTURE_DATA(tiers) *self, int node)
{
	size_t chunk = 64 * TT_ST_MIB, topup = TT_ST_MIB;
	struct tt_migrate_result r;
	struct tt_session *s;
	int p[2], ret;
	size_t held = 0;
	pid_t pid;
	char *b;

	if (!self->hog_more) {
		self->hog_more = mmap(NULL, MAXN * sizeof(*self->hog_more),
				      PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (self->hog_more == MAP_FAILED) {
			self->hog_more = NULL;
			return -errno;
		}
	}
	ret = tt_st_write_file("/proc/sys/vm/drop_caches", "3");
	if (ret)
		return ret;
	if (pipe(p))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		close(p[0]);
		unsetenv("TIERTRAIN_BACKEND");
		s = tt_open();
		if (!s)
			_exit(2);
		for (;;) {
			b = tt_st_map(chunk, -1);
			if (!b)
				_exit(3);
			memset(b, 0x5a, chunk);
			ret = tt_migrate_ex(s, b, chunk, node, 0, &r);
			held += r.moved * tt_page_size();
			if (ret == -ENOSPC || r.skipped_no_memory) {
				if (chunk <= tt_page_size() && !r.moved)
					break;
				chunk = chunk / 2 > tt_page_size() ?
					chunk / 2 : tt_page_size();
				continue;
			}
			if (ret)
				_exit(4);
		}
		if (write(p[1], &held, sizeof(held)) != sizeof(held))
			_exit(5);
		b = NULL;
		for (;;) {
			if (!b) {
				b = tt_st_map(topup, -1);
				if (!b)
					_exit(6);
				memset(b, 0x5a, topup);
			}
			ret = tt_migrate_ex(s, b, topup, node, 0, &r);
			__atomic_add_fetch(&self->hog_more[node], r.moved,
					   __ATOMIC_RELAXED);
			if (!ret)
				b = NULL;	/* all there: the next 1 MiB */
			else if (ret != -ENOSPC && ret != -EBUSY)
				_exit(7);
			usleep(20000);
		}
	}
	close(p[1]);
	self->hogs[node] = pid;
	ret = read(p[0], &held, sizeof(held)) == sizeof(held) ? 0 : -EIO;
	close(p[0]);
	return ret;
}

/* An iteration evicts 4 x BIG. */
#define BIG		(4 * TT_ST_MIB)

TEST_F_TIMEOUT(tiers, spill_when_full, 600)
{
	struct mini *m = &self->mini;
	uint64_t pages = ML * SMALL / tt_page_size(), took, t0;
	long long full, now_free;
	int a, b, n, p[2], q[2], st;
	pid_t holder;
	char go;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (self->norder < 2)
		SKIP(return, "needs two slow nodes (use --topology three-tier)");
	a = self->order[0];
	b = self->order[1];
	/*
	 * A child holds 16 MiB on node a and exits once the hog filled the
	 * node: the node regains memory before the run, as when the kernel
	 * drains its page lists or kswapd reclaims; the hog must take it.
	 */
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(q));
	holder = fork();
	ASSERT_LE(0, holder);
	if (!holder) {
		char *h = tt_st_map(16 * TT_ST_MIB, 0);
		int failed = 0;

		close(p[1]);
		close(q[0]);
		if (!h)
			_exit(2);
		memset(h, 0x33, 16 * TT_ST_MIB);
		if (tt_st_move_pages(h, 16 * TT_ST_MIB, a, &failed) || failed)
			_exit(3);	/* not all on node a */
		if (write(q[1], "r", 1) != 1)
			_exit(4);
		/* a byte: the hog filled the node (which holds p[1] too) */
		_exit(read(p[0], &go, 1) == 1 ? 0 : 5);
	}
	close(p[0]);
	close(q[1]);
	ASSERT_EQ(1, read(q[0], &go, 1)) TH_LOG("the holder failed");
	close(q[0]);
	ASSERT_EQ(0, hog(self, a)) TH_LOG("filling node %d failed", a);
	sleep(2);
	took = __atomic_load_n(&self->hog_more[a], __ATOMIC_RELAXED);
	full = tt_st_zoneinfo_sum(a, "nr_free_pages");
	ASSERT_EQ(1, write(p[1], "g", 1));
	close(p[1]);
	ASSERT_EQ(holder, waitpid(holder, &st, 0));
	ASSERT_EQ(0, st);
	/*
	 * The run starts once node a is as full as before the holder freed
	 * its 16 MiB (its free pages at most one top-up above), the hog
	 * having taken them back (1 MiB every 20 ms: 0.3 s on an idle host,
	 * seconds on a busy one; pages in the CPUs' page lists are not free
	 * to an allocation until drained), not after a fixed time: memory
	 * still free there would take evictions meant to spill. At most 10
	 * s; then the run goes on and the placement assertions judge.
	 */
	t0 = tt_st_now_ns();
	while ((now_free = tt_st_zoneinfo_sum(a, "nr_free_pages")) >
	       full + (long long)(TT_ST_MIB / tt_page_size()) &&
	       tt_st_now_ns() - t0 < 10000000000ULL)
		usleep(20000);
	TH_LOG("node %d filled, 16 MiB freed there: after %.2f s %lld pages free (%lld before), the hog took %llu pages back (%lld pages in page lists; %llu taken since the fill)",
	       a, (tt_st_now_ns() - t0) / 1e9, now_free, full,
	       (unsigned long long)(self->hog_more[a] - took),
	       node_pcp_pages(a), (unsigned long long)self->hog_more[a]);
	ASSERT_EQ(0, mini_open(m, self->topo.fast, SMALL)) TH_LOG("%s", m->err);
	/* spilling to CXL memory: each eviction tries the full node first */
	m->pause_ms = 3 * PROFILE_PAUSE_MS;
	ASSERT_EQ(0, mini_run(m, 1)) TH_LOG("%s", m->err);
	TH_LOG("%u evictions (%u not planned, %u not started, %u not ended); pages seen after them: node %d %llu, node %d %llu, fast node %d %llu",
	       m->evicted, m->unplanned, m->unstarted, m->unended, a,
	       (unsigned long long)m->on[a], b, (unsigned long long)m->on[b],
	       m->fast, (unsigned long long)m->on[m->fast]);
	TH_LOG("node %d after the run: %lld pages in page lists; the hog took %llu pages after filling it",
	       a, node_pcp_pages(a), (unsigned long long)self->hog_more[a]);
	ASSERT_EQ(ML, m->evicted);
	/* spilled: most pages on the second node, none left behind */
	ASSERT_GT(m->on[b], m->on[a]);
	ASSERT_EQ(pages, m->on[a] + m->on[b]);
	for (n = 0; n < TT_ST_MAX_NODES; n++)
		if (n != a && n != b)
			ASSERT_EQ(0, m->on[n]) TH_LOG("node %d", n);
	ASSERT_EQ(0, mini_all_fast(m)) TH_LOG("%s", m->err);
}

TEST_F_TIMEOUT(tiers, all_slow_full, 600)
{
	struct mini *m = &self->mini;
	uint64_t pages = ML * BIG / tt_page_size(), off = 0;
	struct tt_ioc_stats st;
	int i;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (!self->norder)
		SKIP(return, "no slow node");
	for (i = 0; i < self->norder; i++)
		ASSERT_EQ(0, hog(self, self->order[i]))
			TH_LOG("filling node %d failed", self->order[i]);
	ASSERT_EQ(0, mini_open(m, self->topo.fast, BIG)) TH_LOG("%s", m->err);
	ASSERT_EQ(0, mini_run(m, 1)) TH_LOG("%s", m->err);
	ASSERT_EQ(0, tt_stats(m->s, &st));
	for (i = 0; i < self->norder; i++) {
		off += m->on[self->order[i]];
		TH_LOG("node %d: the hog took %llu pages after filling it",
		       self->order[i],
		       (unsigned long long)self->hog_more[self->order[i]]);
	}
	TH_LOG("%u evictions; pages seen on slow nodes after them %llu, on the fast node %llu; skipped_no_memory %llu",
	       m->evicted, (unsigned long long)off,
	       (unsigned long long)m->on[m->fast],
	       (unsigned long long)st.total.skipped_no_memory);
	/* nothing lost: what did not fit stayed, and was counted */
	ASSERT_EQ(ML, m->evicted);
	ASSERT_EQ(pages, off + m->on[m->fast]);
	ASSERT_GT(m->on[m->fast], 0);
	ASSERT_GE(st.total.skipped_no_memory, m->on[m->fast]);
	ASSERT_EQ(0, mini_all_fast(m)) TH_LOG("%s", m->err);
}

TEST_F_TIMEOUT(tiers, balancing_on, 120)
{
	struct mini *m = &self->mini;
	struct tt_ioc_stats st;

	TT_SKIP_IF_SETUP_SKIPPED();
	if (!self->norder)
		SKIP(return, "no slow node");
	ASSERT_EQ(0, tt_st_write_file(BALANCING, "1"));
	ASSERT_EQ(0, mini_open(m, self->topo.fast, SMALL)) TH_LOG("%s", m->err);
	ASSERT_EQ(0, mini_run(m, 3)) TH_LOG("%s", m->err);
	ASSERT_EQ(0, tt_stats(m->s, &st));
	TH_LOG("balancing on: %u evictions, evicted %llu, prefetched %llu, on time %llu, late %llu bytes",
	       m->evicted, (unsigned long long)st.bytes_evicted,
	       (unsigned long long)st.bytes_prefetched,
	       (unsigned long long)st.ontime_bytes,
	       (unsigned long long)st.late_bytes);
	ASSERT_EQ(3 * ML, m->evicted);
	ASSERT_GT(st.bytes_evicted, 0);
	ASSERT_GT(st.bytes_prefetched, 0);
	ASSERT_EQ(0, mini_all_fast(m)) TH_LOG("%s", m->err);
}

/* ---- hotplug ------------------------------------------------------------ */

/*
 * Write @state to every memory block of @node: blocks changed, or -errno;
 * -EINTR when a block was not done after 60 s x @mul (x the time
 * multiplier), with the stacks and kernel log logged (the blocks before
 * it changed).
 */
static int node_blocks(int node, const char *state, unsigned int mul)
{
	unsigned int secs = 60 * mul * tt_st_time_mul();
	char path[300], cur[32];
	struct dirent *de;
	int done = 0, tries, ret;
	DIR *d;

	snprintf(path, sizeof(path), NODE_SYSFS "/node%d", node);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "memory", 6) ||
		    de->d_name[6] < '0' || de->d_name[6] > '9')
			continue;
		snprintf(path, sizeof(path), NODE_SYSFS "/node%d/%s/state",
			 node, de->d_name);
		if (tt_st_read_file(path, cur, sizeof(cur)) < 0)
			continue;
		if (!strncmp(cur, state, strlen(cur)))
			continue;
		/* offlining retries while pages are busy (being migrated) */
		for (tries = 0; tries < 50; tries++) {
			ret = tt_st_block_write(path, state, secs);
			if (ret != -EBUSY && ret != -EAGAIN)
				break;
			usleep(100000);
		}
		if (ret) {
			closedir(d);
			return ret;
		}
		done++;
	}
	closedir(d);
	return done;
}

/**
 * struct phase_report - what the training process of hotplug_kmem saw
 * @iters:   iterations begun in each phase (0 before the offline, 1 while
 *           the node is offline, 2 after it is back).
 * @on_kn:   pages on the kmem node right after each eviction, per phase.
 * @err:     what failed ("" if nothing).
 */
struct phase_report {
	unsigned int iters[3];
	uint64_t on_kn[3];
	unsigned int evicted[3];
	unsigned int unplanned[3];
	unsigned int unstarted[3];
	unsigned int unended[3];
	char err[256];
};

/*
 * The training process of hotplug_kmem, in lockstep with the parent: it
 * runs one iteration for each phase number the parent writes to @ctl and
 * then writes it back to @tick, until the parent closes @ctl. So memory
 * goes offline and online only between iterations. At the end, every
 * tensor must be back on the fast node; the report goes to @rep.
 */
static void hotplug_child(int fast, int kn, int ctl, int tick, int rep)
{
	struct phase_report r = { 0 };
	unsigned char phase;
	struct mini m;
	ssize_t n;

	if (mini_open(&m, fast, SMALL))
		goto out;
	/* no eviction starts while the only slow node is offline */
	m.start_ms = 1000;
	if (mini_iteration(&m, 1))
		goto out;
	while (read(ctl, &phase, 1) == 1 && phase < 3) {
		memset(m.on, 0, sizeof(m.on));
		m.evicted = m.unplanned = m.unstarted = m.unended = 0;
		/*
		 * Each phase's iterations pause as long as the profiling one.
		 * While the node is offline, mini_where() waits start_ms for
		 * each eviction, which cannot start: were the planned
		 * iterations short, these would be many times longer, the
		 * scheduler would profile again (a deviation) and plan from
		 * a profile with no idle time to evict into.
		 */
		if (mini_iteration(&m, 1))
			goto out;
		r.iters[phase]++;
		r.on_kn[phase] += m.on[kn];
		r.evicted[phase] += m.evicted;
		r.unplanned[phase] += m.unplanned;
		r.unstarted[phase] += m.unstarted;
		r.unended[phase] += m.unended;
		if (write(tick, &phase, 1) != 1)
			break;
	}
	if (mini_all_fast(&m))
		goto out;
	m.err[0] = '\0';
out:
	snprintf(r.err, sizeof(r.err), "%s", m.err);
	n = write(rep, &r, sizeof(r));
	_exit(n == sizeof(r) && !r.err[0] ? 0 : 1);
}

/*
 * Have the training process run @n iterations of @phase, one after the
 * other (at most 60 s each): 0, or -1 if it stopped or was too slow.
 */
static int iterate(int ctl, int tick, unsigned char phase, unsigned int n)
{
	struct pollfd p = { .fd = tick, .events = POLLIN };
	unsigned char b;

	while (n--) {
		if (write(ctl, &phase, 1) != 1 ||
		    poll(&p, 1, 60000) != 1 || read(tick, &b, 1) != 1 ||
		    b != phase)
			return -1;
	}
	return 0;
}

TEST_F_TIMEOUT(tiers, hotplug_kmem, 400)
{
	struct mnode *v = calloc(MAXN, sizeof(*v));
	int kn = kmem_node(self->k), ctl[2], tick[2], rep[2], status, i;
	static const char *const offline_says[] = {
		"failed to isolate pfn", "migrating pfn", NULL
	};
	int seen, first;
	struct phase_report r;
	char *held, why[600] = "";
	pid_t pid;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_NE(NULL, v);
	if (kn < 0) {
		free(v);
		SKIP(return, "no node onlined by dax/kmem (use --topology nvdimm, cxl or three-tier)");
	}
	ASSERT_EQ(0, pipe(ctl));
	ASSERT_EQ(0, pipe(tick));
	ASSERT_EQ(0, pipe(rep));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(ctl[1]);
		close(tick[0]);
		close(rep[0]);
		hotplug_child(self->topo.fast, kn, ctl[0], tick[1], rep[1]);
	}
	self->child = pid;
	close(ctl[0]);
	close(tick[1]);
	close(rep[1]);
	/* evictions reach the kmem node only when it comes first */
	first = self->norder && self->order[0] == kn;
	ASSERT_EQ(0, iterate(ctl[1], tick[0], 0, 2));

	/* a session of this process keeps data on the node meanwhile */
	TT_OPEN_KERNEL_SESSION(&self->mini.s);
	held = tt_st_map(SMALL, -1);
	ASSERT_NE(NULL, held);
	tt_st_fill(held, SMALL, 77);
	ASSERT_EQ(0, tt_migrate(self->mini.s, held, SMALL, kn));
	TT_ASSERT_PLACED(held, SMALL, kn);

	/*
	 * phase 1: the kmem node's memory goes offline under the sessions.
	 * An offline the kernel could not finish in its bound (a page it
	 * kept failing to migrate, stacks and kernel log above) is undone
	 * and tried once more: what is tested is the module's answer to the
	 * node leaving, and a page the module kept would stall both tries.
	 */
	self->offlined = kn;
	i = node_blocks(kn, "offline", 1);
	if (i == -EINTR) {
		tt_st_kmsg_last(offline_says, why, sizeof(why));
		TH_LOG("offlining node %d stalled in %s; the kernel's last word on a page: %s; onlined again: %d, caches dropped: %d; trying once more, for twice as long",
		       kn, tt_st_block_stall(), why[0] ? why : "none",
		       node_blocks(kn, "online_movable", 1),
		       tt_st_write_file("/proc/sys/vm/drop_caches", "3"));
		i = node_blocks(kn, "offline", 2);
	}
	TH_LOG("offlined %d memory blocks of node %d", i, kn);
	if (i <= 0)
		tt_st_kmsg_last(offline_says, why, sizeof(why));
	ASSERT_LT(0, i) TH_LOG("offlining node %d: %s%s%s; the kernel's last word on a page: %s",
			       kn, strerror(-i), i == -EINTR ? ", in " : "",
			       i == -EINTR ? tt_st_block_stall() : "",
			       why[0] ? why : "none");
	/* the kernel moved that data away, intact */
	TT_ASSERT_PAGES_ON(held, SMALL, kn, 0);
	TT_ASSERT_PATTERN(held, SMALL, 77);
	ASSERT_EQ(0, mnodes_read("tiers", v));
	ASSERT_EQ(0, v[kn].seen) TH_LOG("node %d still listed", kn);
	for (i = 0; i < v[self->topo.fast].norder; i++)
		ASSERT_NE(kn, v[self->topo.fast].order[i]);
	ASSERT_EQ(0, iterate(ctl[1], tick[0], 1, 2));

	/* phase 2: back online, at its tier, in the order again */
	i = node_blocks(kn, "online_movable", 1);
	TH_LOG("onlined %d memory blocks of node %d", i, kn);
	ASSERT_LT(0, i);
	self->offlined = -1;
	ASSERT_EQ(0, mnodes_read("tiers", v));
	ASSERT_EQ(1, v[kn].seen);
	ASSERT_EQ(self->k[kn].tier, v[kn].tier);
	ASSERT_STREQ("slow", v[kn].role);
	ASSERT_STREQ("kmem", v[kn].adist);
	seen = 0;
	for (i = 0; i < v[self->topo.fast].norder; i++)
		seen |= v[self->topo.fast].order[i] == kn;
	ASSERT_TRUE(seen);
	/* and takes data again */
	ASSERT_EQ(0, tt_migrate(self->mini.s, held, SMALL, kn));
	TT_ASSERT_PLACED(held, SMALL, kn);
	TT_ASSERT_PATTERN(held, SMALL, 77);
	munmap(held, SMALL);
	ASSERT_EQ(0, iterate(ctl[1], tick[0], 2, 2));

	close(ctl[1]);
	ASSERT_EQ(sizeof(r), read(rep[0], &r, sizeof(r)));
	close(rep[0]);
	close(tick[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	self->child = 0;
	TH_LOG("iterations per phase %u/%u/%u; pages on node %d after evictions %llu/%llu/%llu",
	       r.iters[0], r.iters[1], r.iters[2], kn,
	       (unsigned long long)r.on_kn[0], (unsigned long long)r.on_kn[1],
	       (unsigned long long)r.on_kn[2]);
	for (i = 0; i < 3; i++)
		TH_LOG("phase %d: layer-iterations evicted %u, unplanned %u, unstarted %u, unended %u",
		       i, r.evicted[i], r.unplanned[i], r.unstarted[i],
		       r.unended[i]);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("training process: %s", r.err);
	ASSERT_EQ(2, r.iters[0]);
	ASSERT_EQ(2, r.iters[1]);
	ASSERT_EQ(2, r.iters[2]);
	/* nothing went to the node while it was offline */
	ASSERT_EQ(0, r.on_kn[1]);
	if (first) {
		ASSERT_LT(0, r.on_kn[0]);
		ASSERT_LT(0, r.on_kn[2]);
		/* back online, it takes every eviction it took before */
		ASSERT_LE(r.evicted[0], r.evicted[2]);
	}
	free(v);
}

TEST_HARNESS_MAIN
