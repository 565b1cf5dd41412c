/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family "tiertrain" (administration).
 */
#ifndef TT_NETLINK_H
#define TT_NETLINK_H

#include <linux/tiertrain.h>

struct tt_ksession;

int tt_netlink_init(void);
void tt_netlink_exit(void);

#endif /* TT_NETLINK_H */
