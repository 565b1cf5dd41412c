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
#include <linux/uaccess.h>
#include <linux/tiertrain.h>

#include "chardev.h"
#include "session.h"

static int tt_chardev_open(struct inode *inode, struct file *file)
{
	struct tt_session *s = tt_session_open();

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

static long tt_ioctl_range(struct tt_session *s, unsigned int cmd,
			   void __user *argp)
{
	struct tt_ioc_range arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (cmd == TT_IOC_REGISTER)
		return tt_session_register(s, &arg);
	return tt_session_unregister(s, &arg);
}

static long tt_ioctl_migrate(struct tt_session *s, void __user *argp)
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

static long tt_ioctl_residency(struct tt_session *s, void __user *argp)
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

static long tt_ioctl_stats(struct tt_session *s, unsigned int cmd,
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
	struct tt_session *s = file->private_data;
	void __user *argp = (void __user *)arg;
	int ret;

	if (_IOC_TYPE(cmd) != TT_IOC_MAGIC)
		return -ENOTTY;
	if (cmd != TT_IOC_REGISTER && cmd != TT_IOC_UNREGISTER &&
	    cmd != TT_IOC_MIGRATE && cmd != TT_IOC_RESIDENCY &&
	    cmd != TT_IOC_FLUSH && !tt_is_stats_cmd(cmd))
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
	default:
		return tt_ioctl_stats(s, cmd, argp);
	}
}

static const struct file_operations tt_chardev_fops = {
	.owner = THIS_MODULE,
	.open = tt_chardev_open,
	.release = tt_chardev_release,
	.unlocked_ioctl = tt_chardev_ioctl,
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
