/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sessions' counters in Prometheus' text exposition format (version
 * 0.0.4), for `tierctl stats --prometheus` and node-exporter's textfile
 * collector.
 */
#ifndef TT_CTL_PROMETHEUS_H
#define TT_CTL_PROMETHEUS_H

#include <stdio.h>

#include "sessions.h"

/**
 * tt_prometheus_write() - write every metric of @ss to @out
 * @out: the stream.
 * @ss:  the sessions (all visible ones, or one process's).
 *
 * Module-wide: tiertrain_sessions (gauge), and for every counter of
 * struct tt_ioc_stats its sum over @ss (no labels, as `tierctl stats -j`'s
 * totals); per session, with the labels session, pid and command: every
 * counter and gauge, and the session's fast and slow bytes. Names follow
 * Prometheus' conventions: tiertrain_ prefix, base units (bytes,
 * seconds), _total on counters (tierctl(8) lists them).
 *
 * Return: 0, or -EIO when writing failed.
 */
int tt_prometheus_write(FILE *out, const struct tt_ctl_sessions *ss);

#endif /* TT_CTL_PROMETHEUS_H */
