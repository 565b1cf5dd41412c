/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel API differences between the kernels tiertrain builds against
 * (Debian's 6.1 and 6.12), in one place: the rest of the module calls these
 * and never tests LINUX_VERSION_CODE itself.
 */
#ifndef TT_COMPAT_H
#define TT_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>
#include <net/genetlink.h>

/**
 * tt_gup_remote() - get_user_pages_remote() without the vmas array
 * @mm:       the address space, its mmap lock held for reading.
 * @start:    first address.
 * @nr_pages: how many pages at most.
 * @flags:    FOLL_* flags.
 * @pages:    where the pages go (each with a reference to put).
 *
 * Linux 6.5 dropped the vmas argument.
 * Return: as get_user_pages_remote().
 */
static inline long tt_gup_remote(struct mm_struct *mm, unsigned long start,
				 unsigned long nr_pages, unsigned int flags,
				 struct page **pages)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	return get_user_pages_remote(mm, start, nr_pages, flags, pages, NULL);
#else
	return get_user_pages_remote(mm, start, nr_pages, flags, pages, NULL,
				     NULL);
#endif
}

/**
 * tt_dumpit_attrs() - the parsed attributes of a generic netlink dump
 * @cb: the dump's callback state.
 *
 * Linux 6.2 moved them into struct genl_dumpit_info's embedded genl_info.
 * Return: the attribute table, indexed by attribute type.
 */
static inline struct nlattr **tt_dumpit_attrs(struct netlink_callback *cb)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	return genl_dumpit_info(cb)->info.attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/**
 * tt_page_mapped_shared() - is the page mapped by more than one process?
 * @page: a mapped page (its mm's mmap_lock held).
 *
 * What move_pages(2) refuses to move without MPOL_MF_MOVE_ALL: 6.1 tests
 * page_mapcount() > 1, Linux 6.11 folio_likely_mapped_shared() (and has no
 * page_mapcount() any more).
 * Return: true when other mappings of the page may exist.
 */
static inline bool tt_page_mapped_shared(struct page *page)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
	return folio_likely_mapped_shared(page_folio(page));
#else
	return page_mapcount(page) > 1;
#endif
}

/*
 * TT_MOVER_BASE_DEFAULT - the default of the setting mover_base: 1 (the
 * session's movers move base pages with move_pages(2)) where move_pages(2)
 * unmaps up to 512 pages per TLB flush (Linux 6.3 and later,
 * migrate_pages_batch()), 0 (the in-kernel engine) before, where it flushes
 * per page as the engine does (Documentation/mover.md).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define TT_MOVER_BASE_DEFAULT	1
#else
#define TT_MOVER_BASE_DEFAULT	0
#endif

/*
 * TT_MOVE_PAGES_BATCHED - move_pages(2) unmaps up to 512 pages per TLB
 * flush (Linux 6.3 and later): a base-page order of a few pages sends
 * fewer TLB shootdowns than the engine, which flushes per page.
 */
#define TT_MOVE_PAGES_BATCHED	TT_MOVER_BASE_DEFAULT

#endif /* TT_COMPAT_H */
