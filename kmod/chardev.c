// SPDX-License-Identifier: GPL-2.0
/*
 * The misc device /dev/tiertrain: open/release and the ioctl
 * dispatch. User memory is copied here; sessions see kernel copies only.
 *
 * The minor is dynamic: a fixed one would have to be allocated in
 * include/linux/miscdevice.h, so the device cannot be autoloaded through a
 * devname alias. The netlink family autoloads the module (tierctl);
 * for the device, `modprobe tiertrain` loads it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/tiertrain.h>

#include "chardev.h"
#include "session.h"

static int tt_chardev_open(struct inode *inode, struct file *file)
{
	struct tt_ksession *s = tt_session_open();

	if (IS_ERR(s))
		return PTR_ERR(s);
	file->private_data = s;
	return 0;
}

static int tt_chardev_release(struct inode *inode, struct file *file)
{
	tt_session_close(file->private_data);
	return 0;
}

static long tt_ioctl_range(struct tt_ksession *s, unsigned int cmd,
			   void __user *argp)
{
	struct tt_ioc_range arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (cmd == TT_IOC_REGISTER)
		return tt_session_register(s, &arg);
	return tt_session_unregister(s, &arg);
}

static long tt_ioctl_migrate(struct tt_ksession *s, void __user *argp)
{
	struct tt_ioc_migrate arg;
	int ret;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	ret = tt_session_migrate(s, &arg);
	/* The result is reported with ENOSPC and EINTR too. */
	if (copy_to_user(argp, &arg, sizeof(arg)))
		return -EFAULT;
	return ret;
}

static long tt_ioctl_residency(struct tt_ksession *s, void __user *argp)
{
	struct tt_ioc_residency arg;
	int ret;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	ret = tt_session_residency(s, &arg);
	if (ret)
		return ret;
	if (copy_to_user(argp, &arg, sizeof(arg)))
		return -EFAULT;
	return 0;
}

static long tt_ioctl_stats(struct tt_ksession *s, unsigned int cmd,
			   void __user *argp)
{
	struct tt_ioc_stats out;
	size_t n;

	n = tt_session_stats(s, &out, _IOC_SIZE(cmd));
	if (copy_to_user(argp, &out, n))
		return -EFAULT;
	return 0;
}

/*
 * Copy @n events from user space, 64 bits at a time (the events' size is a
 * multiple). Return: 0 or -EFAULT. copy_from_user() of a few dozen bytes
 * is one "rep movsb", which QEMU's TCG runs one byte per step: a third of
 * an event's cost in the guest (Documentation/scheduler.md, "Events").
 */
static int tt_events_from_user(struct tt_event *ev,
			       const struct tt_event __user *uev,
			       unsigned int n)
{
	const u64 __user *src = (const u64 __user *)uev;
	unsigned int i, words = n * (sizeof(*ev) / sizeof(u64));
	u64 *dst = (u64 *)ev;

	BUILD_BUG_ON(sizeof(*ev) % sizeof(u64));
	if (!user_access_begin(src, words * sizeof(u64)))
		return -EFAULT;
	for (i = 0; i < words; i++)
		unsafe_get_user(dst[i], &src[i], efault);
	user_access_end();
	return 0;
efault:
	user_access_end();
	return -EFAULT;
}

static long tt_ioctl_event(struct tt_ksession *s, void __user *argp)
{
	struct tt_event ev;
	unsigned int done;

	if (tt_events_from_user(&ev, argp, 1))
		return -EFAULT;
	return tt_sched_events(s, &ev, 1, &done);
}

static long tt_ioctl_hint(struct tt_ksession *s, void __user *argp)
{
	struct tt_ioc_hint arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	return tt_sched_hint(s, &arg);
}

/* Events copied from user space at a time by TT_IOC_EVENTS. */
#define TT_EVENTS_CHUNK	32

static long tt_ioctl_events(struct tt_ksession *s, void __user *argp)
{
	struct tt_ioc_events __user *uarg = argp;
	struct tt_event ev[TT_EVENTS_CHUNK];
	struct tt_event __user *uev;
	struct tt_ioc_events arg;
	unsigned int n, done;
	long ret = 0;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	uev = u64_to_user_ptr(arg.events_ptr);
	arg.done = 0;
	if (arg.flags || arg.reserved)
		ret = -EOPNOTSUPP;
	else if (arg.count > TT_SCHED_EVENTS_MAX)
		ret = -EINVAL;
	while (!ret && arg.done < arg.count) {
		n = min_t(unsigned int, arg.count - arg.done, TT_EVENTS_CHUNK);
		if (tt_events_from_user(ev, uev + arg.done, n)) {
			ret = -EFAULT;
			break;
		}
		ret = tt_sched_events(s, ev, n, &done);
		arg.done += done;
	}
	/* done is reported with the error too */
	if (put_user(arg.done, &uarg->done))
		return -EFAULT;
	return ret;
}

static long tt_ioctl_sched(struct tt_ksession *s, unsigned int cmd,
			   void __user *argp)
{
	struct tt_ioc_sched arg;

	if (cmd == TT_IOC_GET_SCHED) {
		tt_sched_cfg_get(s, &arg);
		return copy_to_user(argp, &arg, sizeof(arg)) ? -EFAULT : 0;
	}
	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	return tt_sched_cfg_set(s, &arg);
}

static long tt_ioctl_layers(struct tt_ksession *s, void __user *argp)
{
	struct tt_layer_info *info = NULL;
	struct tt_ioc_layers arg;
	unsigned int n, known;
	long ret = 0;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.flags)
		return -EOPNOTSUPP;
	n = min(arg.count, tt_sched_nr_layers(s));
	if (n) {
		info = kvcalloc(n, sizeof(*info),
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!info)
			return -ENOMEM;
	}
	n = tt_sched_layers(s, info, n, &known);
	if (n && copy_to_user(u64_to_user_ptr(arg.info_ptr), info,
			      n * sizeof(*info)))
		ret = -EFAULT;
	kvfree(info);
	if (ret)
		return ret;
	arg.count = known;
	if (copy_to_user(argp, &arg, sizeof(arg)))
		return -EFAULT;
	return 0;
}

/*
 * TT_IOC_STATS is matched on direction, type and number only, so that a
 * binary built with a shorter or longer struct tt_ioc_stats keeps working;
 * the structure must at least hold abi_version and size.
 */
static bool tt_is_stats_cmd(unsigned int cmd)
{
	return _IOC_DIR(cmd) == _IOC_READ &&
	       _IOC_NR(cmd) == _IOC_NR(TT_IOC_STATS) &&
	       _IOC_SIZE(cmd) >= offsetofend(struct tt_ioc_stats, size);
}

static long tt_chardev_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct tt_ksession *s = file->private_data;
	void __user *argp = (void __user *)arg;
	int ret;

	/* the event path first: one compare, then the same check as below */
	if (likely(cmd == TT_IOC_EVENT)) {
		ret = tt_session_check_caller(s);
		return ret ? ret : tt_ioctl_event(s, argp);
	}
	if (_IOC_TYPE(cmd) != TT_IOC_MAGIC)
		return -ENOTTY;
	if (cmd != TT_IOC_REGISTER && cmd != TT_IOC_UNREGISTER &&
	    cmd != TT_IOC_MIGRATE && cmd != TT_IOC_RESIDENCY &&
	    cmd != TT_IOC_FLUSH && cmd != TT_IOC_EVENT &&
	    cmd != TT_IOC_EVENTS && cmd != TT_IOC_SET_SCHED &&
	    cmd != TT_IOC_GET_SCHED && cmd != TT_IOC_LAYERS &&
	    cmd != TT_IOC_HINT && cmd != TT_IOC_MOVER &&
	    !tt_is_stats_cmd(cmd))
		return -ENOTTY;
	ret = tt_session_check_caller(s);
	if (ret)
		return ret;

	switch (cmd) {
	case TT_IOC_REGISTER:
	case TT_IOC_UNREGISTER:
		return tt_ioctl_range(s, cmd, argp);
	case TT_IOC_MIGRATE:
		return tt_ioctl_migrate(s, argp);
	case TT_IOC_RESIDENCY:
		return tt_ioctl_residency(s, argp);
	case TT_IOC_FLUSH:
		return tt_session_flush(s);
	case TT_IOC_EVENT:
		return tt_ioctl_event(s, argp);
	case TT_IOC_EVENTS:
		return tt_ioctl_events(s, argp);
	case TT_IOC_SET_SCHED:
	case TT_IOC_GET_SCHED:
		return tt_ioctl_sched(s, cmd, argp);
	case TT_IOC_LAYERS:
		return tt_ioctl_layers(s, argp);
	case TT_IOC_HINT:
		return tt_ioctl_hint(s, argp);
	case TT_IOC_MOVER:
		return tt_mover_ioctl(s, argp);
	default:
		return tt_ioctl_stats(s, cmd, argp);
	}
}

/* POLLIN: a migration order is waiting for a mover (TT_IOC_MOVER). */
static __poll_t tt_chardev_poll(struct file *file, poll_table *wait)
{
	return tt_mover_poll(file->private_data, file, wait);
}

static const struct file_operations tt_chardev_fops = {
	.owner = THIS_MODULE,
	.open = tt_chardev_open,
	.release = tt_chardev_release,
	.unlocked_ioctl = tt_chardev_ioctl,
	.poll = tt_chardev_poll,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice tt_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = TT_DEVICE_NAME,
	.fops = &tt_chardev_fops,
	.mode = 0660,
};

/**
 * tt_chardev_init() - create /dev/tiertrain
 *
 * Return: 0 or the error of misc_register().
 */
int tt_chardev_init(void)
{
	return misc_register(&tt_miscdev);
}

/**
 * tt_chardev_exit() - remove /dev/tiertrain
 */
void tt_chardev_exit(void)
{
	misc_deregister(&tt_miscdev);
}
