// SPDX-License-Identifier: GPL-2.0
/*
 * tiertrain: move DNN training tensors between memory tiers.
 *
 * Only orchestration: each subsystem is set up in order and torn down in
 * reverse. The worker pools (the migration pool, the scheduler's evict and
 * prefetch pools) go away before the session cache because destroying
 * them waits for the last work item to return; the
 * device goes last on load and first on unload, so no session exists
 * outside that window.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/genetlink.h>
#include <linux/module.h>
#include <net/genetlink.h>
#include <linux/tiertrain.h>

#include "budget.h"
#include "chardev.h"
#include "config.h"
#include "memtiers.h"
#include "migrate.h"
#include "netlink.h"
#include "sched.h"
#include "session.h"
#include "tiers.h"
#include "version.h"

static int __init tt_init(void)
{
	int ret;

	ret = tt_config_init();
	if (ret)
		return ret;

	ret = tt_memtiers_init();
	if (ret)
		return ret;

	ret = tt_tiers_init();
	if (ret)
		goto err_tiers;

	ret = tt_session_init();
	if (ret)
		goto err_session;

	ret = tt_migrate_init();
	if (ret)
		goto err_migrate;

	ret = tt_sched_module_init();
	if (ret)
		goto err_sched;

	ret = tt_budget_init();
	if (ret)
		goto err_budget;

	ret = tt_netlink_init();
	if (ret)
		goto err_netlink;

	ret = tt_chardev_init();
	if (ret)
		goto err_chardev;

	pr_info("version %s loaded: /dev/%s, %u workers, %u pages per batch\n",
		TT_VERSION, TT_DEVICE_NAME, tt_migrate_workers(),
		tt_migrate_batch_pages());
	return 0;

err_chardev:
	tt_netlink_exit();
err_netlink:
	tt_budget_exit();
err_budget:
	tt_sched_module_exit();
err_sched:
	tt_migrate_exit();
err_migrate:
	tt_session_exit();
err_session:
err_tiers:
	tt_memtiers_exit();
	return ret;
}

static void __exit tt_exit(void)
{
	tt_chardev_exit();
	tt_netlink_exit();
	tt_budget_exit();
	tt_sched_module_exit();
	tt_migrate_exit();
	tt_session_exit();
	tt_memtiers_exit();
	pr_info("unloaded\n");
}

module_init(tt_init);
module_exit(tt_exit);

MODULE_LICENSE("GPL");
MODULE_VERSION(TT_VERSION);
MODULE_DESCRIPTION("Move DNN training tensors between memory tiers (NUMA nodes)");
MODULE_AUTHOR("The tiertrain developers");
MODULE_ALIAS_GENL_FAMILY(TT_GENL_NAME);
