/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The misc device /dev/tiertrain.
 */
#ifndef TT_CHARDEV_H
#define TT_CHARDEV_H

int tt_chardev_init(void);
void tt_chardev_exit(void);

#endif /* TT_CHARDEV_H */
