// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The arithmetic part of the range checks, as the module does them:
 *
 *   EINVAL     len is 0, or addr or len is not a multiple of the page size;
 *   EOVERFLOW  addr + len wraps around or ends beyond the user address space.
 *
 * The end of the user address space is the kernel's TASK_SIZE_MAX: on x86-64
 * (1 << 47) - PAGE_SIZE with 4-level page tables and (1 << 56) - PAGE_SIZE
 * with 5-level ones, which the kernel enables exactly when it reports the
 * "la57" CPU flag in /proc/cpuinfo.
 *
 * tt_page_size() and tt_user_addr_limit() cache values fixed for the life of
 * the process; every file of the library takes them from here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

TT_EXPORT size_t tt_page_size(void)
{
	static size_t page_size;
	size_t ps = __atomic_load_n(&page_size, __ATOMIC_RELAXED);

	if (!ps) {
		long v = sysconf(_SC_PAGESIZE);

		ps = v > 0 ? (size_t)v : 4096;
		__atomic_store_n(&page_size, ps, __ATOMIC_RELAXED);
	}
	return ps;
}

static uint64_t tt_addr_limit;
static pthread_once_t tt_addr_limit_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__)
static bool tt_cpu_has_la57(void)
{
	bool found = false;
	size_t cap = 0;
	char *line = NULL;
	FILE *f;

	f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) >= 0) {
		char *tok, *save;

		if (strncmp(line, "flags", 5))
			continue;
		for (tok = strtok_r(line, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			if (!strcmp(tok, "la57"))
				found = true;
		break;
	}
	free(line);
	fclose(f);
	return found;
}

static void tt_addr_limit_init(void)
{
	unsigned int bits = tt_cpu_has_la57() ? 56 : 47;

	tt_addr_limit = (1ULL << bits) - tt_page_size();
}
#else
/*
 * Elsewhere only the wrap-around is caught here; a range beyond the user
 * address space is then reported by the mapping check, as EFAULT.
 */
static void tt_addr_limit_init(void)
{
	tt_addr_limit = UINT64_MAX;
}
#endif

/* tt_user_addr_limit() - the first address past the user address space. */
uint64_t tt_user_addr_limit(void)
{
	pthread_once(&tt_addr_limit_once, tt_addr_limit_init);
	return tt_addr_limit;
}

/**
 * tt_range_check() - the EINVAL and EOVERFLOW checks of a page range.
 * @addr: start address.
 * @len:  length in bytes.
 *
 * Return: 0, -EINVAL or -EOVERFLOW.
 */
int tt_range_check(uint64_t addr, uint64_t len)
{
	uint64_t mask = tt_page_size() - 1;

	if (!len || (addr & mask) || (len & mask))
		return -EINVAL;
	if (addr + len < addr || addr + len > tt_user_addr_limit())
		return -EOVERFLOW;
	return 0;
}
