// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The mapping part of the range checks, for the move_pages backend, from
 * /proc/self/maps (the kernel module looks at the VMAs instead):
 *
 *   EFAULT      part of [start, end) is not mapped;
 *   EOPNOTSUPP  part of it is not a supported mapping: tiertrain moves
 *               private anonymous memory only. A maps line is that when its
 *               permissions end in 'p', its device is 00:00, its inode 0, and
 *               its name is empty, "[heap]", "[stack]", "[stack:TID]" or
 *               "[anon:NAME]" (prctl(PR_SET_VMA_ANON_NAME)). Everything else
 *               is refused: files (including private file mappings, DAX,
 *               /dev/mem, hugetlbfs and MAP_HUGETLB, which shows as
 *               "/anon_hugepage"), MAP_SHARED anonymous memory ("/dev/zero
 *               (deleted)" or "[anon_shmem:NAME]", shared), and the special
 *               mappings [vdso], [vvar], [vsyscall], [uprobes].
 *
 * The first problem in address order decides the error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/**
 * tt_maps_parse_line() - parse one line of /proc/PID/maps.
 * @line: the line, with or without its newline.
 * @e:    out: its fields.
 *
 * Return: 0, or -EINVAL when the line does not have the maps format.
 */
int tt_maps_parse_line(const char *line, struct tt_maps_entry *e)
{
	unsigned long long start, end, offset, inode;
	unsigned int major, minor;
	const char *name;
	size_t len;
	int n = -1;

	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu%n", &start, &end,
		   e->perms, &offset, &major, &minor, &inode, &n) != 7 ||
	    n < 0 || strlen(e->perms) != 4 || start >= end)
		return -EINVAL;
	name = line + n;
	if (*name && *name != ' ' && *name != '\n')
		return -EINVAL;
	name += strspn(name, " ");
	len = strcspn(name, "\n");
	if (len >= sizeof(e->name))
		len = sizeof(e->name) - 1;
	memcpy(e->name, name, len);
	e->name[len] = '\0';
	e->start = start;
	e->end = end;
	e->dev_major = major;
	e->dev_minor = minor;
	e->inode = inode;
	return 0;
}

/* tt_maps_entry_supported() - whether tiertrain can move this mapping. */
bool tt_maps_entry_supported(const struct tt_maps_entry *e)
{
	if (e->perms[3] != 'p' || e->dev_major || e->dev_minor || e->inode)
		return false;
	return !e->name[0] || !strcmp(e->name, "[heap]") ||
	       !strcmp(e->name, "[stack]") ||
	       !strncmp(e->name, "[stack:", 7) ||
	       !strncmp(e->name, "[anon:", 6);
}

/**
 * tt_maps_check() - check that [start, end) is mapped (and supported).
 * @maps:  a /proc/PID/maps stream, read from its current position.
 * @start: first address of the range.
 * @end:   first address after it; > @start.
 * @need_supported: also require supported mappings (see the file comment).
 *
 * Return: 0, -EFAULT, -EOPNOTSUPP, -EINVAL for a malformed line, or the
 * -errno of a failed read.
 */
int tt_maps_check(FILE *maps, uint64_t start, uint64_t end,
		  bool need_supported)
{
	struct tt_maps_entry e;
	uint64_t cur = start;
	size_t cap = 0;
	char *line = NULL;
	int ret = -EFAULT;

	while (getline(&line, &cap, maps) >= 0) {
		ret = tt_maps_parse_line(line, &e);
		if (ret < 0)
			break;
		ret = -EFAULT;
		if (e.end <= cur)
			continue;
		if (e.start > cur)
			break;
		if (need_supported && !tt_maps_entry_supported(&e)) {
			ret = -EOPNOTSUPP;
			break;
		}
		cur = e.end;
		if (cur >= end) {
			ret = 0;
			break;
		}
	}
	if (ret == -EFAULT && ferror(maps))
		ret = errno ? -errno : -EIO;
	free(line);
	return ret;
}

/* tt_maps_check_self() - tt_maps_check() on the calling process. */
int tt_maps_check_self(uint64_t start, uint64_t end, bool need_supported)
{
	FILE *maps;
	int ret;

	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		return -errno;
	ret = tt_maps_check(maps, start, end, need_supported);
	fclose(maps);
	return ret;
}

/**
 * tt_maps_mapped_self() - whether [start, end) of the calling process is
 * mapped, every byte: tt_maps_check_self(start, end, false) without reading
 * /proc/self/maps.
 * @start: first address, page aligned.
 * @end:   first address after the range; > @start.
 *
 * mincore(2) fails with ENOMEM exactly where part of its range has no
 * mapping, whatever the mapping's kind or protection, as a maps line
 * covers it; it is asked a bounded window at a time. Any other failure
 * falls back to /proc/self/maps.
 *
 * Return: 0, -EFAULT, or what tt_maps_check_self() returns.
 */
int tt_maps_mapped_self(uint64_t start, uint64_t end)
{
	unsigned char vec[512];
	uint64_t ps = tt_page_size();
	uint64_t win = sizeof(vec) * ps, cur, n;

	if (start & (ps - 1) || end <= start)
		return tt_maps_check_self(start, end, false);
	for (cur = start; cur < end; cur += n) {
		n = end - cur < win ? end - cur : win;
		if (!mincore((void *)(uintptr_t)cur, n, vec))
			continue;
		if (errno == ENOMEM)
			return -EFAULT;
		return tt_maps_check_self(start, end, false);
	}
	return 0;
}

/**
 * tt_maps_snap_read() - read every mapping of a maps stream.
 * @maps: a /proc/PID/maps stream, read from its current position.
 * @snap: out: the mappings, free()d by the caller.
 *
 * Return: 0, -EINVAL for a malformed line, -ENOMEM, or the -errno of a
 * failed read.
 */
int tt_maps_snap_read(FILE *maps, struct tt_maps_snap **snap)
{
	struct tt_maps_snap *sn = NULL, *bigger;
	struct tt_maps_entry e;
	size_t n = 0, cap = 0, lcap = 0;
	char *line = NULL;
	int ret = 0;

	while (getline(&line, &lcap, maps) >= 0) {
		ret = tt_maps_parse_line(line, &e);
		if (ret < 0)
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			bigger = realloc(sn, sizeof(*sn) +
					     cap * sizeof(sn->span[0]));
			if (!bigger) {
				ret = -ENOMEM;
				break;
			}
			sn = bigger;
		}
		sn->span[n].start = e.start;
		sn->span[n].end = e.end;
		sn->span[n].supported = tt_maps_entry_supported(&e);
		n++;
	}
	if (!ret && ferror(maps))
		ret = errno ? -errno : -EIO;
	if (!ret && !sn) {
		sn = malloc(sizeof(*sn));
		if (!sn)
			ret = -ENOMEM;
	}
	free(line);
	if (ret < 0) {
		free(sn);
		return ret;
	}
	sn->n = n;
	*snap = sn;
	return 0;
}

/* tt_maps_snap_self() - tt_maps_snap_read() of the calling process. */
int tt_maps_snap_self(struct tt_maps_snap **snap)
{
	FILE *maps;
	int ret;

	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		return -errno;
	ret = tt_maps_snap_read(maps, snap);
	fclose(maps);
	return ret;
}

/**
 * tt_maps_snap_find() - the first mapping of @snap that ends after @addr
 * @snap: a snapshot (sorted, non-overlapping spans).
 * @addr: an address.
 *
 * Return: its index, or snap->n when none does.
 */
size_t tt_maps_snap_find(const struct tt_maps_snap *snap, uint64_t addr)
{
	size_t lo = 0, hi = snap->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (snap->span[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/**
 * tt_maps_snap_check() - tt_maps_check() against a snapshot.
 * @snap:  the mappings.
 * @start: first address of the range.
 * @end:   first address after it; > @start.
 * @need_supported: also require supported mappings.
 *
 * Return: 0, -EFAULT or -EOPNOTSUPP.
 */
int tt_maps_snap_check(const struct tt_maps_snap *snap, uint64_t start,
		       uint64_t end, bool need_supported)
{
	size_t lo = tt_maps_snap_find(snap, start);
	uint64_t cur = start;

	for (; lo < snap->n; lo++) {
		const struct tt_maps_span *sp = &snap->span[lo];

		if (sp->start > cur)
			return -EFAULT;
		if (need_supported && !sp->supported)
			return -EOPNOTSUPP;
		cur = sp->end;
		if (cur >= end)
			return 0;
	}
	return -EFAULT;
}
