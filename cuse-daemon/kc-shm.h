/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-queue rings in POSIX shared memory (design.md section 4 and
 * B5): a root-owned 0711 directory on tmpfs, one object per queue, owned by
 * the daemon with mode 0400, read granted by ACL to each uid that asked.
 */
#ifndef KC_SHM_H
#define KC_SHM_H

#include <pthread.h>
#include <sys/types.h>
#include <linux/kevent.h>

#define KC_RING_MAX_UIDS	16	/* distinct uids granted read per ring */

struct kc_shmdir {
	int dirfd;
	char path[sizeof(((struct kevent_ring_shm *)0)->path)];
	unsigned long long seq;		/* next object number */
	pthread_mutex_t lock;		/* seq */
};

struct kc_ring {
	int live;			/* created and not yet destroyed */
	void *mem;			/* KEVENT_RING_SIZE, written by the core only */
	char name[32];			/* within the directory */
	char path[sizeof(((struct kevent_ring_shm *)0)->path)];
	pthread_mutex_t lock;		/* uids[], the ACL */
	unsigned int nuids;
	uid_t uids[KC_RING_MAX_UIDS];
};

/*
 * Create (0711) or adopt the directory, refuse anything not a real
 * directory owned by us on tmpfs, lock it for this daemon (-EBUSY while
 * another live daemon holds it), and remove stale objects of a previous
 * daemon.  Returns 0 or -errno; *removed counts the stale objects.
 */
int kc_shmdir_open(struct kc_shmdir *d, const char *path, unsigned int *removed);
/*
 * Create (0711) or adopt the directory that holds the per-instance ones,
 * checked as kc_shmdir_open() checks its own; never swept or removed (two
 * daemons share it).  0 or -errno.
 */
int kc_shmdir_parent(const char *path);
/* Remove every object left and the directory itself. */
void kc_shmdir_close(struct kc_shmdir *d, int remove_dir);

/*
 * A new fully allocated, zeroed ring object mapped read-write in the daemon.
 * Returns 0, -ENOMEM when tmpfs cannot hold it, or -errno.
 */
int kc_ring_create(struct kc_shmdir *d, struct kc_ring *r);
/* Grant read to uid (idempotent).  0, -ENOSPC (too many uids) or -errno. */
int kc_ring_grant(struct kc_shmdir *d, struct kc_ring *r, uid_t uid);
/* Unmap, unlink and close. */
void kc_ring_destroy(struct kc_shmdir *d, struct kc_ring *r);

#endif /* KC_SHM_H */
