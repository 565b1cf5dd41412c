// SPDX-License-Identifier: GPL-2.0-only
/* Helpers shared by tierctl verbs: byte counts for humans, memory tiers. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/internal.h"
#include "tierctl.h"

/**
 * tt_fmt_bytes() - format a byte count for humans, in binary units.
 * @bytes: the count.
 * @buf:   out: "512 B", "1.0 KiB", "2.0 GiB", "1.5 TiB"... one decimal,
 *         rounded to nearest; a value that rounds up to 1024.0 of a unit
 *         is shown in the next one.
 * @len:   size of @buf (16 is always enough).
 */
void tt_fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {
		"KiB", "MiB", "GiB", "TiB", "PiB", "EiB",
	};
	unsigned int u;
	uint64_t tenths;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return;
	}
	for (u = 0; u < TT_ARRAY_SIZE(units); u++) {
		unsigned int shift = 10 * (u + 1);
		/* bytes * 10 / 2^shift, rounded, without overflowing. */
		uint64_t whole = bytes >> shift;
		uint64_t rest = bytes & ((1ULL << shift) - 1);

		tenths = whole * 10 + ((rest >> (shift - 10)) * 10 + 512) / 1024;
		if (tenths < 10240 || u == TT_ARRAY_SIZE(units) - 1)
			break;
	}
	snprintf(buf, len, "%" PRIu64 ".%" PRIu64 " %s", tenths / 10,
		 tenths % 10, units[u]);
}

/**
 * tt_enum_name() - the name of an enum value from a table.
 * @names: names indexed by value (a NULL entry has none).
 * @nr:    entries in @names.
 * @value: the value.
 * @buf:   room for "unknown(N)".
 * @len:   its size.
 *
 * Return: @names[@value], or "unknown(@value)" written to @buf for a
 * value the table does not name (from a newer module).
 */
const char *tt_enum_name(const char *const *names, size_t nr, int64_t value,
			 char *buf, size_t len)
{
	if (value >= 0 && (uint64_t)value < nr && names[value])
		return names[value];
	snprintf(buf, len, "unknown(%lld)", (long long)value);
	return buf;
}

/**
 * tt_memory_tiers() - the memory tier of each node, from sysfs.
 * @dir:     the memory tiering directory
 *           (/sys/devices/virtual/memory_tiering).
 * @tier_of: out: @nr entries; entry n is the tier id of node n, or -1.
 * @nr:      number of entries.
 *
 * Each @dir/memory_tierN/nodelist lists the nodes of tier N.
 *
 * Return: the number of tiers found; 0 when @dir does not exist (a kernel
 * without memory tiers); -errno when it cannot be read or a nodelist is
 * malformed.
 */
int tt_memory_tiers(const char *dir, int *tier_of, int nr)
{
	struct dirent *de;
	int i, found = 0, ret = 0;
	DIR *d;

	for (i = 0; i < nr; i++)
		tier_of[i] = -1;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		struct tt_nodemask mask;
		char path[PATH_MAX], *end;
		unsigned long id;

		if (strncmp(de->d_name, "memory_tier", 11))
			continue;
		errno = 0;
		id = strtoul(de->d_name + 11, &end, 10);
		if (end == de->d_name + 11 || *end || errno || id > INT_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/%s/nodelist", dir,
			 de->d_name);
		ret = tt_nodemask_read(path, &mask);
		if (ret < 0)
			break;
		for (i = 0; i < nr; i++)
			if (tt_nodemask_test(&mask, i))
				tier_of[i] = id;
		found++;
	}
	closedir(d);
	return ret < 0 ? ret : found;
}
