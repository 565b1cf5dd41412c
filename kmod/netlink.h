/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family "tiertrain" (administration).
 */
#ifndef TT_NETLINK_H
#define TT_NETLINK_H

int tt_netlink_init(void);
void tt_netlink_exit(void);

#endif /* TT_NETLINK_H */
