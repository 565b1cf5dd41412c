/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's version string, shared by MODULE_VERSION() and
 * the netlink TT_A_VERSION attribute so they can never disagree.
 */
#ifndef TT_VERSION_H
#define TT_VERSION_H

#define TT_VERSION	"0.1.0"

#endif /* TT_VERSION_H */
