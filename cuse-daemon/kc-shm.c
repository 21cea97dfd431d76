// SPDX-License-Identifier: GPL-2.0
/*
 * Ring objects in shared memory.  The daemon never reads the shared pages
 * back and never trusts the directory's contents: every object is created
 * with O_EXCL|O_NOFOLLOW relative to a directory fd checked at start.
 *
 * LOCKING: kc_shmdir.lock guards seq; kc_ring.lock guards the uid list and
 * serialises ACL rewrites of one object.  No descriptor is kept per
 * object: the daemon's mapping keeps it, and a grant reopens it by name.  Neither is held while calling
 * the other.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "kc-shm.h"

#define KC_RING_PREFIX "ring-"

/* Refuse a directory we did not make ourselves or that is not on tmpfs. */
static int kc_shmdir_check(int dirfd)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(dirfd, &st) || fstatfs(dirfd, &sfs))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return -EPERM;
	if (sfs.f_type != TMPFS_MAGIC)
		return -EXDEV;
	/* 0711: clients may traverse to their object, never list others. */
	return fchmod(dirfd, 0711) ? -errno : 0;
}

/* Unlink every ring object; anything else in the directory is left alone. */
static unsigned int kc_shmdir_sweep(int dirfd)
{
	unsigned int n = 0;
	struct dirent *de;
	int fd = dup(dirfd);
	DIR *dir;

	if (fd < 0)
		return 0;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return 0;
	}
	/* The duplicate shares dirfd's offset, left at the end by the last sweep. */
	rewinddir(dir);
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, KC_RING_PREFIX, strlen(KC_RING_PREFIX)))
			continue;
		if (!unlinkat(dirfd, de->d_name, 0))
			n++;
	}
	closedir(dir);
	return n;
}

int kc_shmdir_parent(const char *path)
{
	int fd, err;

	if (mkdir(path, 0711) && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = kc_shmdir_check(fd);
	close(fd);
	return err;
}

int kc_shmdir_open(struct kc_shmdir *d, const char *path, unsigned int *removed)
{
	int err;

	memset(d, 0, sizeof(*d));
	d->dirfd = -1;
	if (strlen(path) >= sizeof(d->path) - 26)
		return -ENAMETOOLONG;
	strcpy(d->path, path);
	if (mkdir(path, 0711) && errno != EEXIST)
		return -errno;
	d->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->dirfd < 0)
		return -errno;
	err = kc_shmdir_check(d->dirfd);
	/*
	 * One daemon per directory: the sweep below would unlink a live
	 * daemon's rings under its clients.  The lock lives as long as dirfd
	 * (the sweeps' duplicates share it), so a crashed daemon's is gone.
	 */
	if (!err && flock(d->dirfd, LOCK_EX | LOCK_NB))
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
	if (err) {
		close(d->dirfd);
		d->dirfd = -1;
		return err;
	}
	*removed = kc_shmdir_sweep(d->dirfd);
	pthread_mutex_init(&d->lock, NULL);
	return 0;
}

void kc_shmdir_close(struct kc_shmdir *d, int remove_dir)
{
	if (d->dirfd < 0)
		return;
	kc_shmdir_sweep(d->dirfd);
	/* removed while still locked: a daemon starting now makes a new one */
	if (remove_dir)
		rmdir(d->path);
	close(d->dirfd);
	d->dirfd = -1;
	pthread_mutex_destroy(&d->lock);
}

static int kc_acl_add(acl_t acl, acl_tag_t tag, const uid_t *qual)
{
	acl_entry_t e;
	acl_permset_t ps;

	if (acl_create_entry(&acl, &e) || acl_set_tag_type(e, tag))
		return -errno;
	if (qual && acl_set_qualifier(e, qual))
		return -errno;
	if (acl_get_permset(e, &ps) || acl_clear_perms(ps))
		return -errno;
	/* user::, user:<uid>: and mask:: read; group:: and other:: nothing. */
	if ((tag == ACL_USER_OBJ || tag == ACL_USER || tag == ACL_MASK) &&
	    acl_add_perm(ps, ACL_READ))
		return -errno;
	return acl_set_permset(e, ps) ? -errno : 0;
}

/* Build the whole ACL from our own list: never read back from the file. */
static int kc_ring_set_acl(struct kc_ring *r, int fd)
{
	acl_t acl = acl_init(4 + r->nuids);
	int err;

	if (!acl)
		return -errno;
	err = kc_acl_add(acl, ACL_USER_OBJ, NULL);
	for (unsigned int i = 0; !err && i < r->nuids; i++)
		err = kc_acl_add(acl, ACL_USER, &r->uids[i]);
	if (!err)
		err = kc_acl_add(acl, ACL_GROUP_OBJ, NULL);
	if (!err)
		err = kc_acl_add(acl, ACL_MASK, NULL);
	if (!err)
		err = kc_acl_add(acl, ACL_OTHER, NULL);
	if (!err && acl_valid(acl))
		err = -EINVAL;
	if (!err && acl_set_fd(fd, acl))
		err = -errno;
	acl_free(acl);
	return err;
}

static int kc_ring_alloc(struct kc_ring *r, int fd)
{
	int err;

	/* Fully allocated now: no SIGBUS in the daemon when tmpfs fills. */
	err = posix_fallocate(fd, 0, KEVENT_RING_SIZE);
	if (err)
		return err == ENOSPC || err == EFBIG ? -ENOMEM : -err;
	if (fchmod(fd, 0400))
		return -errno;
	r->mem = mmap(NULL, KEVENT_RING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->mem == MAP_FAILED) {
		r->mem = NULL;
		return -ENOMEM;
	}
	return 0;
}

int kc_ring_create(struct kc_shmdir *d, struct kc_ring *r)
{
	unsigned long long seq;
	int fd, err;

	memset(r, 0, sizeof(*r));
	pthread_mutex_lock(&d->lock);
	seq = d->seq++;
	pthread_mutex_unlock(&d->lock);
	snprintf(r->name, sizeof(r->name), KC_RING_PREFIX "%llu", seq);
	if (snprintf(r->path, sizeof(r->path), "%s/%s", d->path, r->name) >= (int)sizeof(r->path))
		return -ENAMETOOLONG;
	fd = openat(d->dirfd, r->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
	if (fd < 0)
		return -errno;
	err = kc_ring_alloc(r, fd);
	if (!err)
		err = kc_ring_set_acl(r, fd);
	/* The mapping keeps the object; a descriptor per queue would not scale. */
	close(fd);
	if (err) {
		if (r->mem)
			munmap(r->mem, KEVENT_RING_SIZE);
		r->mem = NULL;
		unlinkat(d->dirfd, r->name, 0);
		return err;
	}
	pthread_mutex_init(&r->lock, NULL);
	r->live = 1;
	return 0;
}

/* Only the daemon can create entries in its 0711 directory: no race here. */
static int kc_ring_update_acl(struct kc_shmdir *d, struct kc_ring *r)
{
	int fd = openat(d->dirfd, r->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	err = kc_ring_set_acl(r, fd);
	close(fd);
	return err;
}

int kc_ring_grant(struct kc_shmdir *d, struct kc_ring *r, uid_t uid)
{
	int err = 0;

	pthread_mutex_lock(&r->lock);
	for (unsigned int i = 0; i < r->nuids; i++)
		if (r->uids[i] == uid)
			goto out;
	if (r->nuids == KC_RING_MAX_UIDS) {
		err = -ENOSPC;
		goto out;
	}
	r->uids[r->nuids++] = uid;
	err = kc_ring_update_acl(d, r);
	if (err)
		r->nuids--;
out:
	pthread_mutex_unlock(&r->lock);
	return err;
}

void kc_ring_destroy(struct kc_shmdir *d, struct kc_ring *r)
{
	if (!r->live)
		return;
	munmap(r->mem, KEVENT_RING_SIZE);
	unlinkat(d->dirfd, r->name, 0);
	r->live = 0;
	pthread_mutex_destroy(&r->lock);
}
