// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's view of the memory tiers, as a module can read it.
 *
 * Linux puts every node with memory in a memory tier by its abstract
 * distance (mm/memory-tiers.c): RAM gets the default DRAM distance (tier
 * 4), memory onlined by the dax/kmem driver (NVDIMM, CXL) the driver's
 * (tier 22). From 6.8 on (so on 6.12, not on 6.1) a RAM node that the
 * firmware's HMAT describes gets a distance computed from its latency and
 * bandwidth relative to the CPUs' own memory instead: a memory-only node at
 * half the bandwidth lands in tier 16. None of that is exported to
 * modules: node_is_toptier(),
 * next_demotion_node() and the memory_tier structures are internal, and the
 * tier devices hang off a bus_type that is static. The same holds for the
 * HMAT performance of a node (struct node's access lists). So the module
 * reads what the kernel publishes for everyone, in sysfs:
 *
 *   /sys/devices/virtual/memory_tiering/memory_tierN/nodelist
 *   /sys/devices/system/node/nodeN/access1/initiators/read_latency (and
 *   read_bandwidth; access0 when access1 is absent)
 *
 * through the exported VFS calls file_open_root(), iterate_dir() and
 * kernel_read(), relative to the root of init's mount namespace (the root
 * kernel threads use: the same lookup the firmware loader and usermode
 * helpers do). That is safe: the reads take the same locks and kernfs
 * active references as a read(2) by root, they never write, and they run
 * only in a work item of this module, never under a lock of ours or in the
 * hotplug path itself. If sysfs is not mounted at /sys in that namespace,
 * the view says "no tier" for every node and tiers.c falls back to CPU
 * masks and NUMA distances.
 *
 * Which nodes hold dax/kmem memory is read the same way: the target_node
 * of each dax device bound to the kmem driver,
 *
 *   /sys/bus/dax/drivers/kmem/daxX.Y/target_node
 *
 * (dax/kmem and, from 6.8 on, the HMAT code are the only sources of an
 * abstract distance other than the DRAM default; so a node that is not
 * dax/kmem memory and sits outside the DRAM tier got its tier from HMAT).
 *
 * The view is rebuilt after every memory online or offline (a memory
 * hotplug notifier queues the rebuild; readers see the old or the new view
 * under RCU, never a torn one). A node whose last memory is going offline
 * is "leaving" from MEM_GOING_OFFLINE on, before its memory is gone, so
 * that no eviction picks it meanwhile.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/memory.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/nodemask.h>
#include <linux/notifier.h>
#include <linux/path.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "memtiers.h"

#define TT_MEMTIER_DIR		"sys/devices/virtual/memory_tiering"
#define TT_NODE_DIR		"sys/devices/system/node"
#define TT_KMEM_DIR		"sys/bus/dax/drivers/kmem"
/* The default DRAM tier: MEMTIER_ADISTANCE_DRAM >> MEMTIER_CHUNK_BITS. */
#define TT_MEMTIER_DRAM		4
/* Memory tiers and kmem devices read at most (6.1 makes 2 tiers). */
#define TT_MEMTIERS_MAX		64

/**
 * struct tt_memtier_view - one reading of the kernel's tiers
 * @rcu:  frees it after the readers of the previous one are gone.
 * @node: per node id, nr_node_ids entries.
 */
struct tt_memtier_view {
	struct rcu_head rcu;
	struct tt_memtier_node node[];
};

static struct tt_memtier_view __rcu *tt_view;
/* Serialises the writers of tt_view (the work and tt_memtiers_exit()). */
static DEFINE_MUTEX(tt_view_lock);
static atomic64_t tt_generation = ATOMIC64_INIT(0);
/* Nodes whose last memory is going offline (MEM_GOING_OFFLINE). */
static DECLARE_BITMAP(tt_leaving, MAX_NUMNODES);

/* Read a small sysfs file below @root into @buf (NUL terminated, trimmed). */
static int tt_memtiers_read(const struct path *root, const char *path,
			    char *buf, size_t size)
{
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	f = file_open_root(root, path, O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, size - 1, &pos);
	filp_close(f, NULL);
	if (n < 0)
		return n;
	buf[n] = '\0';
	strim(buf);
	return 0;
}

/**
 * struct tt_memtier_dir - the entries PREFIXn of a sysfs directory
 * @ctx:    for iterate_dir().
 * @prefix: the name before the number ("memory_tier", "dax").
 * @ids:    the numbers found; for "daxX.Y", X * 65536 + Y.
 * @n:      how many.
 */
struct tt_memtier_dir {
	struct dir_context ctx;
	const char *prefix;
	unsigned int ids[TT_MEMTIERS_MAX];
	unsigned int n;
};

static bool tt_memtiers_filldir(struct dir_context *ctx, const char *name,
				int len, loff_t off, u64 ino, unsigned int type)
{
	struct tt_memtier_dir *d = container_of(ctx, struct tt_memtier_dir,
						ctx);
	size_t plen = strlen(d->prefix);
	unsigned int v, minor = 0;
	char id[24], *dot;

	if (len <= plen || len - plen >= sizeof(id) ||
	    strncmp(name, d->prefix, plen))
		return true;
	memcpy(id, name + plen, len - plen);
	id[len - plen] = '\0';
	dot = strchr(id, '.');
	if (dot) {
		*dot = '\0';
		if (kstrtouint(dot + 1, 10, &minor) || minor > 0xffff)
			return true;
	}
	if (kstrtouint(id, 10, &v) || (dot && v > 0xffff))
		return true;
	if (d->n == ARRAY_SIZE(d->ids))
		return false;
	d->ids[d->n++] = dot ? v << 16 | minor : v;
	return true;
}

/* List the PREFIXn entries of @dir into *@d. Return: 0 or -errno. */
static int tt_memtiers_list(const struct path *root, const char *dir,
			    const char *prefix, struct tt_memtier_dir *d)
{
	struct file *f;
	int ret;

	memset(d, 0, sizeof(*d));
	d->ctx.actor = tt_memtiers_filldir;
	d->prefix = prefix;
	f = file_open_root(root, dir, O_RDONLY | O_DIRECTORY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	ret = iterate_dir(f, &d->ctx);
	filp_close(f, NULL);
	return ret;
}

/* The memory tier of each node. Return: tiers found, or -errno. */
static int tt_memtiers_read_tiers(const struct path *root,
				  struct tt_memtier_view *v, char *buf,
				  size_t size)
{
	struct tt_memtier_dir *d;
	nodemask_t mask;
	unsigned int i;
	int nid, ret;

	d = kmalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	ret = tt_memtiers_list(root, TT_MEMTIER_DIR, "memory_tier", d);
	if (ret)
		goto out;
	for (i = 0; i < d->n; i++) {
		snprintf(buf, size, TT_MEMTIER_DIR "/memory_tier%u/nodelist",
			 d->ids[i]);
		/* a tier can go away between the listing and the read */
		if (tt_memtiers_read(root, buf, buf, size))
			continue;
		if (nodelist_parse(buf, mask))
			continue;
		for_each_node_mask(nid, mask)
			if (nid < nr_node_ids)
				v->node[nid].tier = d->ids[i];
	}
	ret = d->n;
out:
	kfree(d);
	return ret;
}

static u32 tt_memtiers_read_u32(const struct path *root, int nid,
				const char *access, const char *attr,
				char *buf, size_t size)
{
	u32 val;

	snprintf(buf, size, TT_NODE_DIR "/node%d/%s/initiators/%s", nid,
		 access, attr);
	if (tt_memtiers_read(root, buf, buf, size) || kstrtou32(buf, 10, &val))
		return 0;
	return val;
}

/*
 * HMAT: access1 has the best CPU initiators (access0 may be a CPU-less
 * initiator such as a GPU); latencies are in ns, bandwidths in MB/s.
 */
static void tt_memtiers_read_hmat(const struct path *root,
				  struct tt_memtier_view *v, char *buf,
				  size_t size)
{
	static const char *const access[] = { "access1", "access0" };
	unsigned int a;
	int nid;

	for_each_node_state(nid, N_MEMORY) {
		struct tt_memtier_node *n = &v->node[nid];
		const char *acc;

		if (nid >= nr_node_ids)
			break;
		for (a = 0; a < ARRAY_SIZE(access) && !n->read_latency_ns; a++) {
			acc = access[a];
			n->read_latency_ns = tt_memtiers_read_u32(root, nid, acc,
								  "read_latency",
								  buf, size);
			n->read_bw_mbps = tt_memtiers_read_u32(root, nid, acc,
							       "read_bandwidth",
							       buf, size);
		}
	}
}

/* The target nodes of the dax devices bound to dax/kmem, into @kmem. */
static void tt_memtiers_read_kmem(const struct path *root, nodemask_t *kmem,
				  char *buf, size_t size)
{
	struct tt_memtier_dir *d;
	unsigned int i;
	int nid;

	d = kmalloc(sizeof(*d), GFP_KERNEL);
	/* no kmem driver loaded: no such directory */
	if (!d || tt_memtiers_list(root, TT_KMEM_DIR, "dax", d))
		goto out;
	for (i = 0; i < d->n; i++) {
		snprintf(buf, size, TT_KMEM_DIR "/dax%u.%u/target_node",
			 d->ids[i] >> 16, d->ids[i] & 0xffff);
		if (tt_memtiers_read(root, buf, buf, size) ||
		    kstrtoint(buf, 10, &nid))
			continue;
		if (nid >= 0 && nid < nr_node_ids)
			node_set(nid, *kmem);
	}
out:
	kfree(d);
}

static const char *tt_adist_source_name(enum tt_adist_source src)
{
	switch (src) {
	case TT_ADIST_SRC_DRAM:
		return "dram";
	case TT_ADIST_SRC_KMEM:
		return "kmem";
	case TT_ADIST_SRC_HMAT:
		return "hmat";
	default:
		return "none";
	}
}

/* Log what changed, node by node, when a new view replaces @old. */
static void tt_memtiers_log(const struct tt_memtier_view *old,
			    const struct tt_memtier_view *v)
{
	int nid;

	for (nid = 0; nid < nr_node_ids; nid++) {
		const struct tt_memtier_node *n = &v->node[nid];

		if (old && !memcmp(&old->node[nid], n, sizeof(*n)))
			continue;
		if (!old && n->tier < 0)
			continue;
		if (n->tier < 0)
			pr_info("node %d: in no memory tier\n", nid);
		else
			pr_info("node %d: memory tier %d (%s), HMAT read latency %u ns, bandwidth %u MB/s\n",
				nid, n->tier, tt_adist_source_name(n->adist_src),
				n->read_latency_ns, n->read_bw_mbps);
	}
}

static void tt_memtiers_refresh(struct work_struct *work)
{
	struct tt_memtier_view *v, *old;
	nodemask_t kmem = NODE_MASK_NONE;
	struct path root;
	int nid, tiers;
	char *buf;

	v = kzalloc(struct_size(v, node, nr_node_ids), GFP_KERNEL);
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!v || !buf) {
		pr_warn("no memory to read the memory tiers: keeping the previous view\n");
		goto out;
	}
	for (nid = 0; nid < nr_node_ids; nid++)
		v->node[nid].tier = -1;

	task_lock(&init_task);
	get_fs_root(init_task.fs, &root);
	task_unlock(&init_task);
	tiers = tt_memtiers_read_tiers(&root, v, buf, PATH_MAX);
	tt_memtiers_read_hmat(&root, v, buf, PATH_MAX);
	tt_memtiers_read_kmem(&root, &kmem, buf, PATH_MAX);
	path_put(&root);
	if (tiers < 0)
		pr_warn_once("cannot read the memory tiers in /%s (error %d): node order from NUMA distances only\n",
			     TT_MEMTIER_DIR, tiers);

	for (nid = 0; nid < nr_node_ids; nid++) {
		struct tt_memtier_node *n = &v->node[nid];

		if (n->tier < 0)
			n->adist_src = TT_ADIST_SRC_NONE;
		else if (node_isset(nid, kmem))
			n->adist_src = TT_ADIST_SRC_KMEM;
		else if (n->tier == TT_MEMTIER_DRAM)
			n->adist_src = TT_ADIST_SRC_DRAM;
		else
			n->adist_src = TT_ADIST_SRC_HMAT;
	}

	mutex_lock(&tt_view_lock);
	old = rcu_dereference_protected(tt_view, lockdep_is_held(&tt_view_lock));
	tt_memtiers_log(old, v);
	rcu_assign_pointer(tt_view, v);
	atomic64_inc(&tt_generation);
	mutex_unlock(&tt_view_lock);
	if (old)
		kfree_rcu(old, rcu);
	v = NULL;
out:
	kfree(buf);
	kfree(v);
}

static DECLARE_WORK(tt_memtiers_work, tt_memtiers_refresh);

static int tt_memtiers_notify(struct notifier_block *nb, unsigned long action,
			      void *data)
{
	const struct memory_notify *mn = data;
	int nid = mn->status_change_nid;

	switch (action) {
	case MEM_GOING_OFFLINE:
		if (nid >= 0)
			set_bit(nid, tt_leaving);
		break;
	case MEM_OFFLINE:
	case MEM_CANCEL_OFFLINE:
		if (nid >= 0)
			clear_bit(nid, tt_leaving);
		fallthrough;
	case MEM_ONLINE:
	case MEM_CANCEL_ONLINE:
		queue_work(system_unbound_wq, &tt_memtiers_work);
		break;
	}
	return NOTIFY_OK;
}

static struct notifier_block tt_memtiers_nb = {
	.notifier_call = tt_memtiers_notify,
	/* after the kernel's own memory tier callback (MEMTIER_HOTPLUG_PRIO) */
	.priority = 0,
};

/**
 * tt_memtiers_node() - the kernel's tier information of a node
 * @nid: a node id (any value).
 * @out: out: tier -1 and zeros for an invalid node or one not read yet.
 */
void tt_memtiers_node(int nid, struct tt_memtier_node *out)
{
	const struct tt_memtier_view *v;

	memset(out, 0, sizeof(*out));
	out->tier = -1;
	if (nid < 0 || nid >= nr_node_ids)
		return;
	rcu_read_lock();
	v = rcu_dereference(tt_view);
	if (v)
		*out = v->node[nid];
	rcu_read_unlock();
}

/**
 * tt_memtiers_leaving() - is the last memory of a node going offline?
 * @nid: a valid node id.
 *
 * Return: true from MEM_GOING_OFFLINE until MEM_OFFLINE or
 * MEM_CANCEL_OFFLINE of an offline that empties the node.
 */
bool tt_memtiers_leaving(int nid)
{
	return test_bit(nid, tt_leaving);
}

/**
 * tt_memtiers_sync() - wait for a rebuild of the view that is pending
 *
 * After it, the view reflects every memory online and offline that had
 * completed when it was called. Sleeps.
 */
void tt_memtiers_sync(void)
{
	flush_work(&tt_memtiers_work);
}

/**
 * tt_memtiers_generation() - how many times the view was rebuilt
 *
 * Return: a counter, 1 after tt_memtiers_init().
 */
u64 tt_memtiers_generation(void)
{
	return atomic64_read(&tt_generation);
}

/**
 * tt_memtiers_init() - read the view once and follow memory hotplug
 *
 * Return: 0, or the error of register_memory_notifier().
 */
int tt_memtiers_init(void)
{
	int ret;

	ret = register_memory_notifier(&tt_memtiers_nb);
	if (ret)
		return ret;
	queue_work(system_unbound_wq, &tt_memtiers_work);
	flush_work(&tt_memtiers_work);
	return 0;
}

/**
 * tt_memtiers_exit() - stop following hotplug, free the view
 */
void tt_memtiers_exit(void)
{
	struct tt_memtier_view *v;

	unregister_memory_notifier(&tt_memtiers_nb);
	cancel_work_sync(&tt_memtiers_work);
	mutex_lock(&tt_view_lock);
	v = rcu_dereference_protected(tt_view, lockdep_is_held(&tt_view_lock));
	RCU_INIT_POINTER(tt_view, NULL);
	mutex_unlock(&tt_view_lock);
	synchronize_rcu();
	kfree(v);
}
