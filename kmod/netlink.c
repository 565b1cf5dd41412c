// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "tiertrain": the administration interface
 * used by tierctl (uapi/linux/tiertrain.h documents every command).
 *
 * Reads (status, tiers, sessions, layers, config, events) are open to any
 * user; a caller sees only the sessions of its network namespace that it
 * owns or administers (tt_nl_visible()). Writes (tiers set, config set)
 * carry GENL_ADMIN_PERM and need CAP_SYS_ADMIN in the initial namespaces
 * (tt_nl_need_admin()). Requests are validated strictly by the per-command
 * policies; every error this file returns carries an extended ACK naming
 * the attribute and the value, in a buffer of its own (tt_nl_err()).
 *
 * Dumps keep their position in the callback's context (struct tt_nl_dump):
 * the id of the session being dumped and how far into it, so a dump that
 * needs several messages resumes where it stopped. Sessions are visited in
 * id order by tt_session_for_each(), which holds no global lock while a
 * session is being read; what the parts of a dump must agree on is in
 * tt_nl_dump_seq().
 *
 * TT_CMD_EVENT messages go to the "events" or the "trace" multicast group
 * of the session's network namespace, only when someone listens
 * (tt_netlink_event(), the sink this file installs into the event log,
 * evlog.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/jhash.h>
#include <linux/cred.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/pid.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/uidgid.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>
#include <linux/tiertrain.h>

#include "compat.h"
#include "config.h"
#include "evlog.h"
#include "memtiers.h"
#include "migrate.h"
#include "netlink.h"
#include "sched.h"
#include "session.h"
#include "tiers.h"
#include "version.h"

/* Node lists in TT_A_FAST_NODES and TT_A_SLOW_NODES, at most. */
#define TT_NL_NODELIST_MAX	256
/* Layers or events gathered per step of a dump. */
#define TT_NL_BATCH		32
/* TT_A_CONFIG nests one TT_CMD_SET_CONFIG may carry. */
#define TT_NL_CONFIG_MAX	64

static struct genl_family tt_genl_family;

/* ---- errors ------------------------------------------------------------ */

/*
 * Extended ACK messages name the attribute and the value, which takes more
 * than the 80 bytes NL_SET_ERR_MSG_FMT formats into (6.2 and later; 6.1
 * has nothing). The core reads the message after the handler returned, in
 * the same system call, possibly after sleeping; so each message gets its
 * own buffer, freed by a task work when the requesting thread returns to
 * user space (after the ACK went out). No two requests share a buffer.
 * When there is no buffer (no memory, a kernel thread, an exiting task)
 * the message says so, without the values. The buffers of one system call
 * are bounded by the requests its one datagram holds (the socket's send
 * buffer) and charged to the caller.
 */
#define TT_NL_MSG_LEN	192

struct tt_nl_msg {
	struct callback_head work;
	char text[TT_NL_MSG_LEN];
};

static void tt_nl_msg_free(struct callback_head *work)
{
	kfree(container_of(work, struct tt_nl_msg, work));
}

static __printf(3, 4)
void tt_nl_err(struct netlink_ext_ack *extack, const struct nlattr *attr,
	       const char *fmt, ...)
{
	struct tt_nl_msg *m = NULL;
	va_list ap;
	int n;

	if (!extack)
		return;
	extack->bad_attr = attr;
	if (!(current->flags & PF_KTHREAD))
		m = kmalloc(sizeof(*m), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (m) {
		init_task_work(&m->work, tt_nl_msg_free);
		if (task_work_add(current, &m->work, TWA_RESUME)) {
			kfree(m);
			m = NULL;
		}
	}
	if (!m) {
		extack->_msg = KBUILD_MODNAME ": error (no memory for its message)";
		return;
	}
	n = scnprintf(m->text, sizeof(m->text), "%s: ", KBUILD_MODNAME);
	va_start(ap, fmt);
	vscnprintf(m->text + n, sizeof(m->text) - n, fmt, ap);
	va_end(ap);
	extack->_msg = m->text;
}

/* ---- who is asking ------------------------------------------------------ */

/*
 * Visibility (Documentation/security.md): a session is visible to a
 * netlink caller only when it was opened in the caller's network
 * namespace, and the caller (the credentials of its socket's opener) is
 * its owner (same effective uid) or has CAP_SYS_ADMIN in the user
 * namespace the session was opened in. Host-wide writes (node roles,
 * settings) need CAP_SYS_ADMIN in the initial user namespace from the
 * initial network namespace: the root of a container, with or without a
 * user namespace of its own, changes nothing of the host.
 */

/* The file of the socket that sent @skb, NULL for a kernel socket. */
static const struct file *tt_nl_file(const struct sk_buff *skb)
{
	const struct sock *sk = NETLINK_CB(skb).sk;

	return sk && sk->sk_socket ? sk->sk_socket->file : NULL;
}

static struct net *tt_nl_net(const struct sk_buff *skb)
{
	return sock_net(NETLINK_CB(skb).sk);
}

/* May the sender of @skb (of uid @uid) see @s? */
static bool tt_nl_visible(const struct sk_buff *skb, kuid_t uid,
			  const struct tt_ksession *s)
{
	const struct file *file = tt_nl_file(skb);

	if (!file || !net_eq(tt_nl_net(skb), s->net))
		return false;
	return uid_eq(uid, s->uid) ||
	       file_ns_capable(file, s->user_ns, CAP_SYS_ADMIN);
}

static int tt_nl_need_admin(struct sk_buff *skb, struct genl_info *info,
			    const char *what)
{
	if (net_eq(genl_info_net(info), &init_net) &&
	    netlink_capable(skb, CAP_SYS_ADMIN))
		return 0;
	tt_nl_err(info->extack, NULL,
		  "%s needs CAP_SYS_ADMIN in the initial user and network namespaces",
		  what);
	return -EPERM;
}

/* ---- status and tiers ----------------------------------------------------- */

/* Upper bound of the TT_A_NODES nest. */
static size_t tt_nl_nodes_size(void)
{
	size_t node = nla_total_size(0) +			/* TT_A_NODE */
		      5 * nla_total_size(sizeof(u32)) +		/* id..target */
		      2 * nla_total_size_64bit(sizeof(u64)) +	/* bytes */
		      5 * nla_total_size(sizeof(u32)) +		/* tier..bw */
		      nla_total_size(TT_TIER_ORDER_MAX * sizeof(u32));

	return nla_total_size(0) + nr_node_ids * node;
}

/*
 * The memory tier, distance and eviction order attributes of a node, and
 * for a fast node its slow target (the first of its eviction order).
 */
static int tt_nl_put_node_tier(struct sk_buff *msg, int nid,
			       enum tt_node_role role)
{
	u32 order[TT_TIER_ORDER_MAX];
	int nids[TT_TIER_ORDER_MAX];
	struct tt_node_perf perf;
	int i, n = 0;

	tt_tier_node_perf(nid, &perf);
	if (role == TT_ROLE_FAST)
		n = tt_tier_evict_order(nid, nids, ARRAY_SIZE(nids));
	for (i = 0; i < n; i++)
		order[i] = nids[i];
	if ((n && nla_put_u32(msg, TT_NODE_A_SLOW_TARGET, order[0])) ||
	    (perf.memory_tier >= 0 &&
	     nla_put_u32(msg, TT_NODE_A_MEMORY_TIER, perf.memory_tier)) ||
	    nla_put_u32(msg, TT_NODE_A_ADIST_SOURCE, perf.adist_src) ||
	    nla_put_u32(msg, TT_NODE_A_DISTANCE, perf.distance) ||
	    nla_put_u32(msg, TT_NODE_A_DISTANCE_SOURCE, perf.dist_src) ||
	    (perf.read_bw_mbps &&
	     nla_put_u32(msg, TT_NODE_A_READ_BANDWIDTH, perf.read_bw_mbps)) ||
	    (n && nla_put(msg, TT_NODE_A_EVICT_ORDER, n * sizeof(order[0]),
			  order)))
		return -EMSGSIZE;
	return 0;
}

static int tt_nl_put_node(struct sk_buff *msg, int nid)
{
	enum tt_role_source source;
	enum tt_node_role role = tt_tier_role(nid, &source);
	struct tt_node_info info;
	struct nlattr *nest;

	tt_tier_node_info(nid, &info);
	nest = nla_nest_start(msg, TT_A_NODE);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(msg, TT_NODE_A_ID, nid) ||
	    nla_put_u32(msg, TT_NODE_A_ROLE, role) ||
	    nla_put_u32(msg, TT_NODE_A_ROLE_SOURCE, source) ||
	    nla_put_u32(msg, TT_NODE_A_NR_CPUS, info.nr_cpus) ||
	    nla_put_u64_64bit(msg, TT_NODE_A_TOTAL_BYTES, info.total_bytes,
			      TT_NODE_A_PAD) ||
	    nla_put_u64_64bit(msg, TT_NODE_A_FREE_BYTES, info.free_bytes,
			      TT_NODE_A_PAD) ||
	    tt_nl_put_node_tier(msg, nid, role))
		goto cancel;
	nla_nest_end(msg, nest);
	return 0;
cancel:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}

static int tt_nl_put_nodes(struct sk_buff *msg)
{
	struct nlattr *nodes;
	int nid;

	/* a memory online or offline that completed is in the reply */
	tt_memtiers_sync();
	nodes = nla_nest_start(msg, TT_A_NODES);
	if (!nodes)
		return -EMSGSIZE;
	for_each_node_state(nid, N_MEMORY) {
		if (tt_nl_put_node(msg, nid))
			return -EMSGSIZE;
	}
	nla_nest_end(msg, nodes);
	return 0;
}

/*
 * A reply of @size bytes of payload to the request in @info, filled by
 * @fill; errors carry an extended ACK saying what did not work.
 */
static int tt_nl_reply(struct genl_info *info, u8 cmd, size_t size,
		       int (*fill)(struct sk_buff *msg, void *arg), void *arg)
{
	struct sk_buff *msg;
	void *hdr;
	int ret;

	msg = genlmsg_new(size, GFP_KERNEL);
	if (!msg) {
		tt_nl_err(info->extack, NULL, "no memory for a %zu-byte reply",
			  size);
		return -ENOMEM;
	}
	hdr = genlmsg_put_reply(msg, info, &tt_genl_family, 0, cmd);
	ret = hdr ? fill(msg, arg) : -EMSGSIZE;
	if (ret) {
		nlmsg_free(msg);
		if (ret == -EMSGSIZE)
			tt_nl_err(info->extack, NULL,
				  "the reply does not fit in %zu bytes", size);
		return ret;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int tt_nl_fill_status(struct sk_buff *msg, void *arg)
{
	if (nla_put_string(msg, TT_A_VERSION, TT_VERSION) ||
	    nla_put_u32(msg, TT_A_ABI_VERSION, TT_ABI_VERSION) ||
	    nla_put_u32(msg, TT_A_WORKERS, tt_migrate_workers()) ||
	    nla_put_u32(msg, TT_A_BATCH_PAGES, tt_migrate_batch_pages()) ||
	    nla_put_u32(msg, TT_A_NR_SESSIONS, tt_session_count()))
		return -EMSGSIZE;
	return tt_nl_put_nodes(msg);
}

static int tt_nl_get_status(struct sk_buff *skb, struct genl_info *info)
{
	size_t size = nla_total_size(sizeof(TT_VERSION)) +
		      4 * nla_total_size(sizeof(u32)) + tt_nl_nodes_size();

	return tt_nl_reply(info, TT_CMD_GET_STATUS, size, tt_nl_fill_status,
			   NULL);
}

static int tt_nl_fill_tiers(struct sk_buff *msg, void *arg)
{
	char *fast = arg, *slow = fast + TT_NL_NODELIST_MAX;

	tt_tiers_get(fast, slow, TT_NL_NODELIST_MAX);
	if (nla_put_string(msg, TT_A_FAST_NODES, fast) ||
	    nla_put_string(msg, TT_A_SLOW_NODES, slow))
		return -EMSGSIZE;
	return tt_nl_put_nodes(msg);
}

static int tt_nl_get_tiers(struct sk_buff *skb, struct genl_info *info)
{
	size_t size = 2 * nla_total_size(TT_NL_NODELIST_MAX) +
		      tt_nl_nodes_size();
	char *lists;
	int ret;

	lists = kmalloc(2 * TT_NL_NODELIST_MAX, GFP_KERNEL);
	if (!lists)
		return -ENOMEM;
	ret = tt_nl_reply(info, TT_CMD_GET_TIERS, size, tt_nl_fill_tiers,
			  lists);
	kfree(lists);
	return ret;
}

static const char *tt_nl_attr_name(int type)
{
	return type == TT_A_FAST_NODES ? "TT_A_FAST_NODES" : "TT_A_SLOW_NODES";
}

/* Parse the node list of attribute @type, if given. */
static int tt_nl_tiers_list(struct genl_info *info, int type, bool *set,
			    nodemask_t *mask)
{
	const struct nlattr *a = info->attrs[type];

	*set = a;
	nodes_clear(*mask);
	if (!a || !*(const char *)nla_data(a))
		return 0;
	if (nodelist_parse((const char *)nla_data(a), *mask)) {
		tt_nl_err(info->extack, a,
			  "%s \"%s\" is not a node list (expected e.g. \"0\", \"1,2\" or \"2-3\", or \"\" for automatic)",
			  tt_nl_attr_name(type), (const char *)nla_data(a));
		return -EINVAL;
	}
	return 0;
}

static int tt_nl_set_tiers(struct sk_buff *skb, struct genl_info *info)
{
	struct tt_tiers_req *req;
	const struct nlattr *a;
	int ret, bad = -1, type;

	ret = tt_nl_need_admin(skb, info, "changing the node roles");
	if (ret)
		return ret;
	if (!info->attrs[TT_A_FAST_NODES] && !info->attrs[TT_A_SLOW_NODES]) {
		tt_nl_err(info->extack, NULL,
			  "TT_CMD_SET_TIERS needs TT_A_FAST_NODES or TT_A_SLOW_NODES");
		return -EINVAL;
	}
	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	ret = tt_nl_tiers_list(info, TT_A_FAST_NODES, &req->set_fast,
			       &req->fast);
	if (!ret)
		ret = tt_nl_tiers_list(info, TT_A_SLOW_NODES, &req->set_slow,
				       &req->slow);
	if (ret)
		goto out;
	ret = tt_tiers_set(req, &bad);
	if (!ret)
		goto out;
	/* The list the bad node came from, the fast one if both have it. */
	type = req->set_fast && bad >= 0 && bad < MAX_NUMNODES &&
	       node_isset(bad, req->fast) ? TT_A_FAST_NODES : TT_A_SLOW_NODES;
	if (!info->attrs[type])
		type = type == TT_A_FAST_NODES ? TT_A_SLOW_NODES :
						 TT_A_FAST_NODES;
	a = info->attrs[type];
	if (ret == -EINVAL)
		tt_nl_err(info->extack, a,
			  "node %d of %s \"%s\" does not exist (this system has nodes 0-%u)",
			  bad, tt_nl_attr_name(type), (const char *)nla_data(a),
			  nr_node_ids - 1);
	else if (ret == -ENODEV)
		tt_nl_err(info->extack, a,
			  "node %d of %s \"%s\" is offline or has no memory",
			  bad, tt_nl_attr_name(type), (const char *)nla_data(a));
	else if (ret == -EEXIST)
		tt_nl_err(info->extack, a,
			  "node %d would be both fast and slow (%s \"%s\" and the other list)",
			  bad, tt_nl_attr_name(type), (const char *)nla_data(a));
out:
	kfree(req);
	return ret;
}

/* ---- config --------------------------------------------------------------- */

static int tt_nl_put_config(struct sk_buff *msg, enum tt_cfg_key key)
{
	const struct tt_cfg_desc *d = tt_config_desc(key);
	struct nlattr *nest;

	nest = nla_nest_start(msg, TT_A_CONFIG);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_string(msg, TT_CFG_A_KEY, d->name) ||
	    nla_put_u64_64bit(msg, TT_CFG_A_VALUE, tt_config_get(key),
			      TT_CFG_A_PAD) ||
	    nla_put_u64_64bit(msg, TT_CFG_A_DEFAULT, d->def, TT_CFG_A_PAD) ||
	    nla_put_u64_64bit(msg, TT_CFG_A_RANGE_MIN, d->min, TT_CFG_A_PAD) ||
	    nla_put_u64_64bit(msg, TT_CFG_A_RANGE_MAX, d->max, TT_CFG_A_PAD) ||
	    nla_put_string(msg, TT_CFG_A_UNIT, d->unit) ||
	    nla_put_string(msg, TT_CFG_A_DESC, d->desc) ||
	    nla_put_u32(msg, TT_CFG_A_APPLIES, d->applies)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static size_t tt_nl_config_size(enum tt_cfg_key key)
{
	const struct tt_cfg_desc *d = tt_config_desc(key);

	return nla_total_size(0) + nla_total_size(strlen(d->name) + 1) +
	       4 * nla_total_size_64bit(sizeof(u64)) +
	       nla_total_size(strlen(d->unit) + 1) +
	       nla_total_size(strlen(d->desc) + 1) +
	       nla_total_size(sizeof(u32));
}

static int tt_nl_fill_config(struct sk_buff *msg, void *arg)
{
	int key = *(int *)arg, k;

	for (k = 0; k < TT_CFG_NR; k++)
		if ((key < 0 || key == k) && tt_nl_put_config(msg, k))
			return -EMSGSIZE;
	return 0;
}

static const struct nla_policy tt_cfg_policy[TT_CFG_A_MAX + 1] = {
	[TT_CFG_A_KEY] = { .type = NLA_NUL_STRING, .len = 64 },
	[TT_CFG_A_VALUE] = { .type = NLA_U64 },
};

/* The key of one TT_A_CONFIG nest: enum tt_cfg_key, or -errno. */
static int tt_nl_config_key(struct genl_info *info, struct nlattr *nest,
			    struct nlattr **tb)
{
	int ret, key;

	ret = nla_parse_nested(tb, TT_CFG_A_MAX, nest, tt_cfg_policy,
			       info->extack);
	if (ret)
		return ret;
	if (!tb[TT_CFG_A_KEY]) {
		tt_nl_err(info->extack, nest, "TT_A_CONFIG without TT_CFG_A_KEY");
		return -EINVAL;
	}
	key = tt_config_find(nla_data(tb[TT_CFG_A_KEY]));
	if (key < 0)
		tt_nl_err(info->extack, tb[TT_CFG_A_KEY],
			  "unknown key \"%s\" (tierctl config lists the keys)",
			  (char *)nla_data(tb[TT_CFG_A_KEY]));
	return key;
}

static int tt_nl_get_config(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[TT_CFG_A_MAX + 1];
	size_t size = 0;
	int key = -1, k;

	if (info->attrs[TT_A_CONFIG]) {
		key = tt_nl_config_key(info, info->attrs[TT_A_CONFIG], tb);
		if (key < 0)
			return key;
		if (tb[TT_CFG_A_VALUE]) {
			tt_nl_err(info->extack, tb[TT_CFG_A_VALUE],
				  "TT_CMD_GET_CONFIG takes no TT_CFG_A_VALUE (did you mean TT_CMD_SET_CONFIG?)");
			return -EINVAL;
		}
	}
	for (k = 0; k < TT_CFG_NR; k++)
		if (key < 0 || key == k)
			size += tt_nl_config_size(k);
	return tt_nl_reply(info, TT_CMD_GET_CONFIG, size, tt_nl_fill_config,
			   &key);
}

static int tt_nl_set_config(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[TT_CFG_A_MAX + 1];
	struct tt_cfg_change *c;
	unsigned int n = 0, i;
	struct nlattr *a;
	int ret, rem, key;
	u64 v;

	ret = tt_nl_need_admin(skb, info, "changing the settings");
	if (ret)
		return ret;
	c = kcalloc(TT_NL_CONFIG_MAX, sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	nla_for_each_attr(a, genlmsg_data(info->genlhdr),
			  genlmsg_len(info->genlhdr), rem) {
		if (nla_type(a) != TT_A_CONFIG)
			continue;
		if (n == TT_NL_CONFIG_MAX) {
			tt_nl_err(info->extack, a,
				  "more than %d TT_A_CONFIG in one request",
				  TT_NL_CONFIG_MAX);
			ret = -EINVAL;
			goto out;
		}
		key = tt_nl_config_key(info, a, tb);
		if (key < 0) {
			ret = key;
			goto out;
		}
		if (!tb[TT_CFG_A_VALUE]) {
			tt_nl_err(info->extack, a,
				  "key \"%s\" without TT_CFG_A_VALUE",
				  tt_config_desc(key)->name);
			ret = -EINVAL;
			goto out;
		}
		v = nla_get_u64(tb[TT_CFG_A_VALUE]);
		if (tt_config_check(key, v)) {
			const struct tt_cfg_desc *d = tt_config_desc(key);

			tt_nl_err(info->extack, tb[TT_CFG_A_VALUE],
				  "%s=%llu is out of range %u..%u", d->name, v,
				  d->min, d->max);
			ret = -ERANGE;
			goto out;
		}
		/* A key given twice takes the last value. */
		for (i = 0; i < n && c[i].key != key; i++)
			;
		c[i].key = key;
		c[i].value = v;
		if (i == n)
			n++;
	}
	if (!n) {
		tt_nl_err(info->extack, NULL,
			  "TT_CMD_SET_CONFIG needs at least one TT_A_CONFIG");
		ret = -EINVAL;
		goto out;
	}
	tt_config_apply(c, n);
	ret = 0;
out:
	kfree(c);
	return ret;
}

/* ---- dumps ---------------------------------------------------------------- */

/**
 * struct tt_nl_dump - a dump's state, in the netlink callback's context
 * @session: filter: only this session id (0: any).
 * @cur:     the session being dumped (0: none yet); sessions with a smaller
 *           id are done.
 * @pos:     layers: the next layer index of @cur; events: the seq of the
 *           last event of @cur put in a message.
 * @since:   events: the request's TT_A_SINCE.
 * @pid:     filter: only sessions of this process (0: any), as seen from
 *           the caller's pid namespace.
 * @uid:     the effective uid of the caller's socket (INVALID_UID for a
 *           kernel socket).
 * @checked: the request was checked (first call of the dump function).
 */
struct tt_nl_dump {
	u64 session;
	u64 cur;
	u64 pos;
	u64 since;
	u32 pid;
	kuid_t uid;
	bool checked;
};

static struct tt_nl_dump *tt_nl_dump_of(struct netlink_callback *cb)
{
	BUILD_BUG_ON(sizeof(struct tt_nl_dump) > sizeof(cb->ctx));
	return (struct tt_nl_dump *)cb->ctx;
}

static int tt_nl_dump_start(struct netlink_callback *cb)
{
	struct tt_nl_dump *d = tt_nl_dump_of(cb);
	struct nlattr **attrs = tt_dumpit_attrs(cb);
	const struct file *file = tt_nl_file(cb->skb);

	memset(d, 0, sizeof(*d));
	d->uid = file ? file->f_cred->euid : INVALID_UID;
	if (attrs[TT_A_SESSION])
		d->session = nla_get_u64(attrs[TT_A_SESSION]);
	if (attrs[TT_A_PID])
		d->pid = nla_get_u32(attrs[TT_A_PID]);
	if (attrs[TT_A_SINCE])
		d->since = nla_get_u64(attrs[TT_A_SINCE]);
	return 0;
}

static bool tt_nl_dump_match(struct netlink_callback *cb,
			     const struct tt_ksession *s)
{
	const struct tt_nl_dump *d = tt_nl_dump_of(cb);

	if (d->session && s->id != d->session)
		return false;
	if (d->pid && pid_vnr(s->pid) != d->pid)
		return false;
	return tt_nl_visible(cb->skb, d->uid, s);
}

static int tt_nl_dump_found(struct tt_ksession *s, void *arg)
{
	return tt_nl_dump_match(arg, s);
}

/*
 * First call of a dump that names its sessions: is there one? With
 * @need_target, exactly one of TT_A_SESSION and TT_A_PID must be given.
 */
static int tt_nl_dump_check(struct netlink_callback *cb, bool need_target)
{
	struct nlattr **attrs = tt_dumpit_attrs(cb);
	struct tt_nl_dump *d = tt_nl_dump_of(cb);

	if (d->checked)
		return 0;
	d->checked = true;
	if (need_target && !attrs[TT_A_SESSION] == !attrs[TT_A_PID]) {
		tt_nl_err(cb->extack, NULL,
			  "exactly one of TT_A_SESSION and TT_A_PID is needed (got %s)",
			  attrs[TT_A_SESSION] ? "both" : "neither");
		return -EINVAL;
	}
	if (!attrs[TT_A_SESSION] && !attrs[TT_A_PID])
		return 0;
	if (tt_session_for_each(0, NULL, tt_nl_dump_found, cb) > 0)
		return 0;
	if (attrs[TT_A_SESSION])
		tt_nl_err(cb->extack, attrs[TT_A_SESSION],
			  "no session %llu owned by you (nor one you administer) in this network namespace",
			  d->session);
	else
		tt_nl_err(cb->extack, attrs[TT_A_PID],
			  "process %u has no tiertrain session owned by you (nor one you administer) in this network namespace",
			  d->pid);
	return -ENOENT;
}

/**
 * struct tt_nl_walk - one call of a dump function over the sessions
 * @skb:  the message being filled.
 * @cb:   the netlink callback.
 * @buf:  scratch for layers or events (TT_NL_BATCH entries).
 * @n:    sessions dump: the sessions the dump selects now.
 * @last: sessions dump: the largest id among them.
 */
struct tt_nl_walk {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	void *buf;
	u64 n;
	u64 last;
};

/*
 * What nl_dump_check_consistent() compares between the parts of a dump
 * (never 0, which would turn the check off). Sessions dump: the number of
 * sessions it selects and their largest id, which change together
 * whenever one of them opens or closes (ids only grow), and only then:
 * other users' sessions coming and going do not interrupt it. Layers
 * dump: the number of layers of the session (a new layer shifts the
 * positions).
 */
static unsigned int tt_nl_dump_seq(u64 a, u64 b)
{
	return jhash_3words(a, b, b >> 32, 0) | 1;
}

/* A dump message's header, with the session's id and pid. */
static void *tt_nl_dump_msg(struct tt_nl_walk *w, u8 cmd,
			    const struct tt_ksession *s)
{
	struct netlink_callback *cb = w->cb;
	void *hdr;

	hdr = genlmsg_put(w->skb, NETLINK_CB(cb->skb).portid,
			  cb->nlh->nlmsg_seq, &tt_genl_family, NLM_F_MULTI,
			  cmd);
	if (!hdr)
		return NULL;
	if (cmd != TT_CMD_GET_EVENTS)
		genl_dump_check_consistent(cb, hdr);
	if (nla_put_u64_64bit(w->skb, TT_A_SESSION, s->id, TT_A_PAD) ||
	    nla_put_u32(w->skb, TT_A_PID, pid_vnr(s->pid))) {
		genlmsg_cancel(w->skb, hdr);
		return NULL;
	}
	return hdr;
}

static int tt_nl_session_fill(struct tt_ksession *s, void *arg)
{
	struct tt_nl_walk *w = arg;
	struct tt_nl_dump *d = tt_nl_dump_of(w->cb);
	struct tt_ioc_stats *st = w->buf;
	u64 held, slow, last, lost;
	size_t len;
	void *hdr;

	if (!tt_nl_dump_match(w->cb, s))
		return 0;
	len = tt_session_stats(s, st, sizeof(*st));
	tt_sched_resident(s, &held, &slow);
	tt_evlog_state(&s->evlog, &last, &lost);
	w->cb->seq = tt_nl_dump_seq(w->n, w->last);
	hdr = tt_nl_dump_msg(w, TT_CMD_GET_SESSIONS, s);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(w->skb, TT_A_COMM, s->comm) ||
	    nla_put_u32(w->skb, TT_A_UID,
			from_kuid_munged(sk_user_ns(NETLINK_CB(w->cb->skb).sk),
					 s->uid)) ||
	    nla_put_u64_64bit(w->skb, TT_A_OPENED_NS, s->opened_ns, TT_A_PAD) ||
	    nla_put_64bit(w->skb, TT_A_STATS, len, st, TT_A_PAD) ||
	    nla_put_u64_64bit(w->skb, TT_A_FAST_BYTES, held - slow, TT_A_PAD) ||
	    nla_put_u64_64bit(w->skb, TT_A_SLOW_BYTES, slow, TT_A_PAD) ||
	    nla_put_u64_64bit(w->skb, TT_A_LAST_SEQ, last, TT_A_PAD) ||
	    nla_put_u64_64bit(w->skb, TT_A_EVENTS_LOST, lost, TT_A_PAD)) {
		genlmsg_cancel(w->skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(w->skb, hdr);
	d->cur = s->id;
	return 0;
}

/* Count the sessions the dump selects (before a sessions dump's part). */
static void tt_nl_session_count(struct tt_ksession *s, void *arg)
{
	struct tt_nl_walk *w = arg;

	if (!tt_nl_dump_match(w->cb, s))
		return;
	w->n++;
	w->last = s->id;
}

/* Run @fill over the sessions after the dump's position. */
static int tt_nl_dump_walk(struct sk_buff *skb, struct netlink_callback *cb,
			   int (*fill)(struct tt_ksession *s, void *arg),
			   size_t bufsize, bool resume_cur)
{
	struct tt_nl_dump *d = tt_nl_dump_of(cb);
	struct tt_nl_walk w = { .skb = skb, .cb = cb };
	int ret;

	w.buf = kvmalloc(bufsize, GFP_KERNEL);
	if (!w.buf)
		return -ENOMEM;
	ret = tt_session_for_each(resume_cur && d->cur ? d->cur - 1 : d->cur,
				  resume_cur ? NULL : tt_nl_session_count,
				  fill, &w);
	kvfree(w.buf);
	/* A full message: the dump continues with the next call. */
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	if (ret)
		return ret;
	return skb->len;
}

static int tt_nl_get_sessions(struct sk_buff *skb, struct netlink_callback *cb)
{
	int ret = tt_nl_dump_check(cb, false);

	if (ret)
		return ret;
	return tt_nl_dump_walk(skb, cb, tt_nl_session_fill,
			       sizeof(struct tt_ioc_stats), false);
}

static int tt_nl_layers_fill(struct tt_ksession *s, void *arg)
{
	struct tt_nl_walk *w = arg;
	struct tt_nl_dump *d = tt_nl_dump_of(w->cb);
	struct tt_layer_info *info = w->buf;
	unsigned int n, i, known;
	void *hdr;

	if (!tt_nl_dump_match(w->cb, s))
		return 0;
	if (d->cur != s->id) {
		d->cur = s->id;
		d->pos = 0;
	}
	for (;;) {
		n = tt_sched_layers_from(s, d->pos, info, TT_NL_BATCH, &known);
		if (!n)
			return 0;
		w->cb->seq = tt_nl_dump_seq(known, 0);
		hdr = tt_nl_dump_msg(w, TT_CMD_GET_LAYERS, s);
		if (!hdr)
			return -EMSGSIZE;
		for (i = 0; i < n; i++) {
			if (nla_put_64bit(w->skb, TT_A_LAYER, sizeof(info[i]),
					  &info[i], TT_A_PAD))
				break;
		}
		if (!i) {
			genlmsg_cancel(w->skb, hdr);
			return -EMSGSIZE;
		}
		genlmsg_end(w->skb, hdr);
		d->pos += i;
		if (i < n)
			return -EMSGSIZE;
	}
}

static int tt_nl_get_layers(struct sk_buff *skb, struct netlink_callback *cb)
{
	int ret = tt_nl_dump_check(cb, true);

	if (ret)
		return ret;
	return tt_nl_dump_walk(skb, cb, tt_nl_layers_fill,
			       TT_NL_BATCH * sizeof(struct tt_layer_info),
			       true);
}

static int tt_nl_events_fill(struct tt_ksession *s, void *arg)
{
	struct tt_nl_walk *w = arg;
	struct tt_nl_dump *d = tt_nl_dump_of(w->cb);
	struct tt_trace_event *ev = w->buf;
	unsigned int n, i;
	u64 missed;
	void *hdr;

	if (!tt_nl_dump_match(w->cb, s))
		return 0;
	if (d->cur != s->id) {
		d->cur = s->id;
		d->pos = d->since;
	}
	for (;;) {
		n = tt_evlog_read(&s->evlog, d->pos, ev, TT_NL_BATCH, &missed);
		if (!n && !missed)
			return 0;
		hdr = tt_nl_dump_msg(w, TT_CMD_GET_EVENTS, s);
		if (!hdr)
			return -EMSGSIZE;
		if (missed && nla_put_u64_64bit(w->skb, TT_A_EVENTS_LOST, missed,
						TT_A_PAD)) {
			genlmsg_cancel(w->skb, hdr);
			return -EMSGSIZE;
		}
		for (i = 0; i < n; i++) {
			if (nla_put_64bit(w->skb, TT_A_EVENT, sizeof(ev[i]),
					  &ev[i], TT_A_PAD))
				break;
		}
		if (!i && n) {
			genlmsg_cancel(w->skb, hdr);
			return -EMSGSIZE;
		}
		genlmsg_end(w->skb, hdr);
		d->pos += missed + i;
		if (i < n)
			return -EMSGSIZE;
	}
}

static int tt_nl_get_events(struct sk_buff *skb, struct netlink_callback *cb)
{
	int ret = tt_nl_dump_check(cb, true);

	if (ret)
		return ret;
	return tt_nl_dump_walk(skb, cb, tt_nl_events_fill,
			       TT_NL_BATCH * sizeof(struct tt_trace_event),
			       true);
}

/* ---- multicast ------------------------------------------------------------ */

enum tt_nl_mcgrp {
	TT_NL_MCGRP_EVENTS,
	TT_NL_MCGRP_TRACE,
};

static const struct genl_multicast_group tt_genl_mcgrps[] = {
	[TT_NL_MCGRP_EVENTS] = {
		.name = TT_GENL_MCGRP_EVENTS,
		.flags = GENL_MCAST_CAP_SYS_ADMIN,
	},
	[TT_NL_MCGRP_TRACE] = {
		.name = TT_GENL_MCGRP_TRACE,
		.flags = GENL_MCAST_CAP_SYS_ADMIN,
	},
};

/*
 * The event log's sink (struct tt_evlog_sink, installed by
 * tt_netlink_init()): send a trace event to its multicast group.
 * Migrations, late and dropped layers go to "events", the training's own
 * events (as frequent as its layers) to "trace", so that watching the
 * first costs the event path nothing. Nothing is allocated when nobody
 * listens. May sleep.
 *
 * Return: false when nobody listened to @ev's group, else true (also when
 * the message could not be sent).
 */
static bool tt_netlink_event(struct tt_ksession *s,
			     const struct tt_trace_event *ev)
{
	unsigned int grp = tt_evlog_is_sched(ev->type) ? TT_NL_MCGRP_TRACE :
							 TT_NL_MCGRP_EVENTS;
	struct sk_buff *msg;
	void *hdr;

	if (!genl_has_listeners(&tt_genl_family, s->net, grp))
		return false;
	msg = genlmsg_new(nla_total_size_64bit(sizeof(u64)) +
			  nla_total_size(sizeof(u32)) +
			  nla_total_size_64bit(sizeof(*ev)), GFP_KERNEL);
	if (!msg)
		return true;
	hdr = genlmsg_put(msg, 0, 0, &tt_genl_family, 0, TT_CMD_EVENT);
	if (!hdr ||
	    nla_put_u64_64bit(msg, TT_A_SESSION, s->id, TT_A_PAD) ||
	    nla_put_u32(msg, TT_A_PID, pid_nr(s->pid)) ||
	    nla_put_64bit(msg, TT_A_EVENT, sizeof(*ev), ev, TT_A_PAD)) {
		nlmsg_free(msg);
		return true;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast_netns(&tt_genl_family, s->net, msg, 0, grp,
				GFP_KERNEL);
	return true;
}

/* ---- the family ---------------------------------------------------------- */

static const struct nla_policy tt_status_policy[TT_A_MAX + 1] = {
	[TT_A_PAD ... TT_A_MAX] = {
		.type = NLA_REJECT,
		.reject_message = "TT_CMD_GET_STATUS takes no attributes (this one is reply-only)",
	},
};

static const struct nla_policy tt_tiers_policy[TT_A_MAX + 1] = {
	[TT_A_FAST_NODES] = { .type = NLA_NUL_STRING,
			      .len = TT_NL_NODELIST_MAX - 1 },
	[TT_A_SLOW_NODES] = { .type = NLA_NUL_STRING,
			      .len = TT_NL_NODELIST_MAX - 1 },
};

static const struct nla_policy tt_no_policy[TT_A_MAX + 1] = {
};

static const struct nla_policy tt_sessions_policy[TT_A_MAX + 1] = {
	[TT_A_PID] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy tt_layers_policy[TT_A_MAX + 1] = {
	[TT_A_SESSION] = NLA_POLICY_MIN(NLA_U64, 1),
	[TT_A_PID] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy tt_events_policy[TT_A_MAX + 1] = {
	[TT_A_SESSION] = NLA_POLICY_MIN(NLA_U64, 1),
	[TT_A_PID] = NLA_POLICY_MIN(NLA_U32, 1),
	[TT_A_SINCE] = { .type = NLA_U64 },
};

static const struct nla_policy tt_config_policy[TT_A_MAX + 1] = {
	[TT_A_CONFIG] = NLA_POLICY_NESTED(tt_cfg_policy),
};

static const struct genl_ops tt_genl_ops[] = {
	{
		.cmd = TT_CMD_GET_STATUS,
		.doit = tt_nl_get_status,
		.policy = tt_status_policy,
		.maxattr = TT_A_MAX,
	},
	{
		.cmd = TT_CMD_GET_TIERS,
		.doit = tt_nl_get_tiers,
		.policy = tt_no_policy,
		.maxattr = TT_A_MAX,
	},
	{
		.cmd = TT_CMD_SET_TIERS,
		.doit = tt_nl_set_tiers,
		.policy = tt_tiers_policy,
		.maxattr = TT_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TT_CMD_GET_SESSIONS,
		.start = tt_nl_dump_start,
		.dumpit = tt_nl_get_sessions,
		.policy = tt_sessions_policy,
		.maxattr = TT_A_MAX,
	},
	{
		.cmd = TT_CMD_GET_LAYERS,
		.start = tt_nl_dump_start,
		.dumpit = tt_nl_get_layers,
		.policy = tt_layers_policy,
		.maxattr = TT_A_MAX,
	},
	{
		.cmd = TT_CMD_GET_CONFIG,
		.doit = tt_nl_get_config,
		.policy = tt_config_policy,
		.maxattr = TT_A_MAX,
	},
	{
		.cmd = TT_CMD_SET_CONFIG,
		.doit = tt_nl_set_config,
		.policy = tt_config_policy,
		.maxattr = TT_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TT_CMD_GET_EVENTS,
		.start = tt_nl_dump_start,
		.dumpit = tt_nl_get_events,
		.policy = tt_events_policy,
		.maxattr = TT_A_MAX,
	},
};

static struct genl_family tt_genl_family __ro_after_init = {
	.name = TT_GENL_NAME,
	.version = TT_GENL_VERSION,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = tt_genl_ops,
	.n_ops = ARRAY_SIZE(tt_genl_ops),
	.mcgrps = tt_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(tt_genl_mcgrps),
};

static const struct tt_evlog_sink tt_netlink_sink = {
	.event = tt_netlink_event,
};

/**
 * tt_netlink_init() - register the generic netlink family and install its
 * sink into the event log
 *
 * Return: 0 or the error of genl_register_family().
 */
int __init tt_netlink_init(void)
{
	int ret = genl_register_family(&tt_genl_family);

	if (!ret)
		tt_evlog_sink(&tt_netlink_sink);
	return ret;
}

/**
 * tt_netlink_exit() - remove the sink (waits for its calls in progress),
 * unregister the family
 */
void tt_netlink_exit(void)
{
	tt_evlog_sink(NULL);
	genl_unregister_family(&tt_genl_family);
}
