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
 *   On a queue with the notes (revision 4, docs/abi.md D68) also WRITE,
 *   EXTEND, ATTRIB, LINK, RENAME and DELETE, decided in the handler from
 *   i_size and i_nlink at the event; DELETE asked makes the removal an
 *   ordinary report; what comes while the kevent is ready is ORed
 *   (kevent_fire_merged).
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
	bool notes;		/* the queue has the notes (D68) */
	bool stopped;
	loff_t size;		/* at the last FS_MODIFY (D68 EXTEND) */
	unsigned int nlink;	/* at the last FS_ATTRIB (D68 LINK) */
};

static struct fsnotify_group *kevent_fsn_group;
static struct kmem_cache *kevent_imark_cache;

#define KEVENT_FSN_DIR	(FS_CREATE | FS_MOVED_TO | FS_DELETE | FS_MOVED_FROM | \
			 FS_DELETE_SELF | FS_ATTRIB)
#define KEVENT_FSN_FILE	(FS_DELETE_SELF | FS_ATTRIB)
/* D68: what the notes add to a mark (a directory's FS_MODIFY never comes) */
#define KEVENT_FSN_NOTES	(FS_MODIFY | FS_MOVE_SELF)
#define KEVENT_INODE_OLD	(KEVENT_INODE_CREATE | KEVENT_INODE_REMOVE)

/* imark->lock held; the bits of bits im reports (the notes on their queues only) */
static u32 kevent_imark_bits(const struct kevent_imark *im, u32 bits)
{
	return im->event & bits &
	       (im->notes ? KEVENT_INODE_OLD | KEVENT_INODE_NOTES : KEVENT_INODE_OLD);
}

/* imark->lock held: a report; on a queue with the notes it adds up (D68) */
static void kevent_imark_report(struct kevent_imark *im, u32 flags, u32 data0, u32 data1)
{
	bool stop = im->notes ? kevent_fire_merged(im->k, flags, data0, data1)
			      : kevent_fire(im->k, flags, data0, data1);

	if (stop)
		im->stopped = true;
}

/*
 * imark->lock held: the object itself is gone.  DELETE asked on a queue
 * with the notes: reported as any note, then nothing more (D68); else
 * BROKEN, REMOVE & event, -ENOENT.
 */
static void kevent_imark_removed(struct kevent_imark *im)
{
	if (!im->k || im->stopped)
		return;
	if (kevent_imark_bits(im, KEVENT_INODE_DELETE))
		kevent_imark_report(im, 0, KEVENT_INODE_DELETE, 0);
	else
		kevent_imark_report(im, KEVENT_RET_BROKEN, im->event & KEVENT_INODE_REMOVE,
				    (u32)-ENOENT);
	im->stopped = true;
}

/* imark->lock held: D68's notes of one event on im's own inode (not removed) */
static u32 kevent_imark_self(struct kevent_imark *im, u32 mask, unsigned int nlink)
{
	u32 bits = 0;

	if (mask & FS_MODIFY) {
		loff_t size = i_size_read(im->inode);

		bits |= KEVENT_INODE_WRITE | (size > im->size ? KEVENT_INODE_EXTEND : 0);
		im->size = size;
	}
	/* a directory's count moves with its subdirectories: their entry events say LINK */
	if (mask & FS_ATTRIB) {
		bits |= nlink != im->nlink && !S_ISDIR(im->inode->i_mode) ? KEVENT_INODE_LINK
									   : KEVENT_INODE_ATTRIB;
		im->nlink = nlink;
	}
	if (mask & FS_MOVE_SELF)
		bits |= KEVENT_INODE_RENAME;
	return bits;
}

static int kevent_inode_handle(struct fsnotify_mark *mark, u32 mask,
			       struct inode *inode, struct inode *dir,
			       const struct qstr *name, u32 cookie)
{
	struct kevent_imark *im = container_of(mark, struct kevent_imark, mark);
	u32 entry = (mask & FS_ISDIR) ? KEVENT_INODE_WRITE | KEVENT_INODE_LINK
				      : KEVENT_INODE_WRITE;
	unsigned int nlink;
	u32 bits = 0;

	spin_lock(&im->lock);
	/* Detached (k NULL): the inode may no longer be pinned; touch nothing. */
	if (!im->k || im->stopped) {
		spin_unlock(&im->lock);
		return 0;
	}
	nlink = READ_ONCE(im->inode->i_nlink);
	if (mask & (FS_CREATE | FS_MOVED_TO))
		bits |= KEVENT_INODE_CREATE | entry;
	if (mask & (FS_DELETE | FS_MOVED_FROM))
		bits |= KEVENT_INODE_REMOVE | entry;
	if ((mask & FS_DELETE_SELF) || ((mask & FS_ATTRIB) && !nlink) ||
	    IS_DEADDIR(im->inode)) {
		kevent_imark_removed(im);
		spin_unlock(&im->lock);
		return 0;
	}
	bits = kevent_imark_bits(im, bits | kevent_imark_self(im, mask, nlink));
	if (bits)
		kevent_imark_report(im, 0, bits, 0);
	spin_unlock(&im->lock);
	return 0;
}

/* fsnotify dropped the mark on its own (unmount): the watch is over. */
static void kevent_inode_freeing(struct fsnotify_mark *mark,
				 struct fsnotify_group *group)
{
	struct kevent_imark *im = container_of(mark, struct kevent_imark, mark);

	spin_lock(&im->lock);
	kevent_imark_removed(im);
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
	im->notes = k->rules & KR_INODE_NOTES;
	im->size = i_size_read(inode);
	im->nlink = READ_ONCE(inode->i_nlink);
	fsnotify_init_mark(&im->mark, kevent_fsn_group);
	im->mark.mask = (S_ISDIR(inode->i_mode) ? KEVENT_FSN_DIR : KEVENT_FSN_FILE) |
			(im->notes ? KEVENT_FSN_NOTES : 0);
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

/*
 * D41 with D68 (ready_lock held): a faulted WAIT delivered nothing, so what
 * it took adds to what came since (ready again, or held by D65).
 */
static void kevent_inode_undeliver(struct kevent *k, const struct ukevent *out)
{
	if (!(k->rules & KR_INODE_NOTES) || !(k->flags & (KEV_READY | KEV_HELD)))
		return;
	k->uk.ret_data[0] |= out->ret_data[0];
	if (!k->uk.ret_data[1])
		k->uk.ret_data[1] = out->ret_data[1];
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
	.undeliver = kevent_inode_undeliver,
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
