// SPDX-License-Identifier: GPL-2.0
/*
 * kevent.ko KEVENT_INODE origin (project extension, A3) on fsnotify, with
 * the semantics of origins/inode.c:
 *   id.raw[0] = fd of a directory or regular file, open for reading
 *   (not O_PATH, B8);
 *   CREATE: an entry was created in (or moved into) the directory;
 *   REMOVE: an entry was removed from (or moved out of) it;
 *   ret_data[0] = the bit that fired (& event).
 *   The watched object itself removed: BROKEN, ret_data[0] = REMOVE & event,
 *   ret_data[1] = -ENOENT, and the kevent stops reporting.
 * One fsnotify group for the module, one mark per kevent (the group allows
 * duplicates, so D6 duplicates and several queues each get their own).  The
 * mark pins the inode, not the file: nothing of the client's file is kept
 * (A7).  Unlink sends FS_ATTRIB to the victim (its link count changed), so
 * a removal is seen at once even while the client keeps its fd open; the
 * link count decides.
 *
 * LOCKING
 *  - kevent_imark.lock (spinlock) guards imark->k.  fsnotify may call the
 *    handler on a mark that is already being destroyed (it walks marks
 *    under SRCU), so the handler looks k up under the lock and detach
 *    clears it under the lock before it drops the mark.  Order:
 *    imark->lock -> queue ready_lock (inside kevent_fire()).
 *  - The handler runs in the context of the filesystem operation, possibly
 *    under the directory's i_rwsem: it only takes spinlocks.
 *  - The mark's memory is freed by fsnotify (free_mark), maybe after an SRCU
 *    grace period on its own workqueue; module exit waits for that.
 */
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/slab.h>
#include <linux/fsnotify_backend.h>

#include "kevent_priv.h"

struct kevent_imark {
	struct fsnotify_mark mark;
	spinlock_t lock;
	struct kevent *k;	/* NULL once detached */
	struct inode *inode;	/* pinned by the mark's connector */
	u32 event;
	bool stopped;
};

static struct fsnotify_group *kevent_fsn_group;
static struct kmem_cache *kevent_imark_cache;

#define KEVENT_FSN_DIR	(FS_CREATE | FS_MOVED_TO | FS_DELETE | FS_MOVED_FROM | \
			 FS_DELETE_SELF | FS_ATTRIB)
#define KEVENT_FSN_FILE	(FS_DELETE_SELF | FS_ATTRIB)

/* imark->lock held */
static void kevent_imark_fire(struct kevent_imark *im, u32 bit, bool removed)
{
	u32 data0 = im->event & bit;

	if (!im->k || im->stopped)
		return;
	if (removed) {
		im->stopped = true;
		kevent_fire(im->k, KEVENT_RET_BROKEN, data0, (u32)-ENOENT);
		return;
	}
	if (data0 && kevent_fire(im->k, 0, data0, 0))
		im->stopped = true;
}

static int kevent_inode_handle(struct fsnotify_mark *mark, u32 mask,
			       struct inode *inode, struct inode *dir,
			       const struct qstr *name, u32 cookie)
{
	struct kevent_imark *im = container_of(mark, struct kevent_imark, mark);

	spin_lock(&im->lock);
	/* Detached (k NULL): the inode may no longer be pinned; touch nothing. */
	if (!im->k || im->stopped) {
		spin_unlock(&im->lock);
		return 0;
	}
	if (mask & (FS_CREATE | FS_MOVED_TO))
		kevent_imark_fire(im, KEVENT_INODE_CREATE, false);
	if (mask & (FS_DELETE | FS_MOVED_FROM))
		kevent_imark_fire(im, KEVENT_INODE_REMOVE, false);
	if ((mask & FS_DELETE_SELF) ||
	    ((mask & FS_ATTRIB) && !READ_ONCE(im->inode->i_nlink)) ||
	    IS_DEADDIR(im->inode))
		kevent_imark_fire(im, KEVENT_INODE_REMOVE, true);
	spin_unlock(&im->lock);
	return 0;
}

/* fsnotify dropped the mark on its own (unmount): the watch is over. */
static void kevent_inode_freeing(struct fsnotify_mark *mark,
				 struct fsnotify_group *group)
{
	struct kevent_imark *im = container_of(mark, struct kevent_imark, mark);

	spin_lock(&im->lock);
	kevent_imark_fire(im, KEVENT_INODE_REMOVE, true);
	spin_unlock(&im->lock);
}

static void kevent_inode_free_mark(struct fsnotify_mark *mark)
{
	kmem_cache_free(kevent_imark_cache,
			container_of(mark, struct kevent_imark, mark));
	atomic_dec(&kevent_stats.imarks);
}

static const struct fsnotify_ops kevent_fsn_ops = {
	.handle_inode_event = kevent_inode_handle,
	.freeing_mark = kevent_inode_freeing,
	.free_mark = kevent_inode_free_mark,
};

static int kevent_inode_attach(struct kevent *k)
{
	struct kevent_imark *im;
	struct inode *inode;
	struct file *f;
	int ret;

	/* fget_raw: an O_PATH fd is refused as a kind, not as a bad fd. */
	f = fget_raw(k->uk.id.raw[0]);
	if (!f)
		return -EBADF;
	inode = file_inode(f);
	ret = -EINVAL;
	if ((f->f_mode & FMODE_PATH) || !(f->f_mode & FMODE_READ) ||
	    !(S_ISDIR(inode->i_mode) || S_ISREG(inode->i_mode)) ||
	    kevent_file_refused(f))
		goto out_fput;
	ret = -ENOMEM;
	im = kmem_cache_zalloc(kevent_imark_cache, GFP_KERNEL);
	if (!im)
		goto out_fput;
	atomic_inc(&kevent_stats.imarks);
	spin_lock_init(&im->lock);
	im->k = k;
	im->inode = inode;
	im->event = k->uk.event;
	fsnotify_init_mark(&im->mark, kevent_fsn_group);
	im->mark.mask = S_ISDIR(inode->i_mode) ? KEVENT_FSN_DIR : KEVENT_FSN_FILE;
	ret = fsnotify_add_inode_mark(&im->mark, inode, 0);
	if (ret) {
		spin_lock(&im->lock);
		im->k = NULL;
		spin_unlock(&im->lock);
		fsnotify_put_mark(&im->mark);	/* frees it */
		goto out_fput;
	}
	k->priv = im;
out_fput:
	fput(f);	/* A7: the mark holds the inode, not the file */
	return ret;
}

static int kevent_inode_modify(struct kevent *k)
{
	struct kevent_imark *im = k->priv;

	spin_lock(&im->lock);
	im->event = k->uk.event;
	spin_unlock(&im->lock);
	return 0;
}

static void kevent_inode_detach(struct kevent *k)
{
	struct kevent_imark *im = k->priv;

	spin_lock(&im->lock);
	im->k = NULL;
	spin_unlock(&im->lock);
	fsnotify_destroy_mark(&im->mark, kevent_fsn_group);
	fsnotify_put_mark(&im->mark);
	k->priv = NULL;
}

const struct kevent_origin kevent_inode_origin = {
	.name = "inode",
	.attach = kevent_inode_attach,
	.modify = kevent_inode_modify,
	.detach = kevent_inode_detach,
};

int kevent_inode_init(void)
{
	kevent_imark_cache = kmem_cache_create("kevent_imark",
					       sizeof(struct kevent_imark), 0,
					       0, NULL);
	if (!kevent_imark_cache)
		return -ENOMEM;
	kevent_fsn_group = fsnotify_alloc_group(&kevent_fsn_ops, FSNOTIFY_GROUP_DUPS);
	if (IS_ERR(kevent_fsn_group)) {
		kmem_cache_destroy(kevent_imark_cache);
		return PTR_ERR(kevent_fsn_group);
	}
	return 0;
}

void kevent_inode_exit(void)
{
	/* Every queue is gone; let fsnotify finish freeing their marks. */
	fsnotify_wait_marks_destroyed();
	fsnotify_put_group(kevent_fsn_group);
	kmem_cache_destroy(kevent_imark_cache);
}
