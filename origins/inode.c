// SPDX-License-Identifier: GPL-2.0
/*
 * KEVENT_INODE (project extension, A3): id.raw[0] = fd of a directory or a
 * regular file, open for reading (not O_PATH, design.md B8).
 *   CREATE: an entry was created in (or moved into) the directory;
 *   REMOVE: an entry was removed from (or moved out of) it.
 *   ret_data[0] = the bit that fired (& event).
 * The watched object itself removed: BROKEN, ret_data[0] = REMOVE & event,
 * ret_data[1] = -ENOENT, and the kevent leaves the origin.
 * On a queue with the notes (revision 4, abi.md D68) also WRITE, EXTEND,
 * ATTRIB, LINK, RENAME and DELETE (kqueue's EVFILT_VNODE): the size and
 * the link count are looked up by handle when the event is read, and
 * compared with the object's last ones; DELETE asked turns the removal
 * into an ordinary report (the kevent stays registered, hears no more).
 * The core ORs what comes while the kevent is ready (types.c).
 *
 * Backends (B7: one instance of each for the whole process):
 *  - fanotify, FAN_REPORT_DFID_NAME | FAN_REPORT_FID: events name objects by
 *    file handle, matched against the handle taken at ADD;
 *  - inotify: watches placed through /proc/self/fd/<dup>, matched by wd;
 *    used when fanotify is unavailable or refuses the filesystem.
 * No duplicate of the client's file is kept once the mark is placed (A7).
 * Linux reports DELETE_SELF only when the last reference goes (and the
 * client usually still holds its fd), so removal is detected on the
 * attribute event that unlink/rmdir sends: the object is looked up again
 * with open_by_handle_at() (O_PATH, through an fd of its mount root):
 * ESTALE or a link count of 0 means removed.  See README.md.
 *
 * LOCKING: all state under korigins_lock (internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "internal.h"

#define KI_BUCKETS	1024
#define KI_HANDLE_MAX	128	/* MAX_HANDLE_SZ */

#define KI_FAN_DIR	(FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO | \
			 FAN_DELETE_SELF | FAN_ATTRIB | FAN_ONDIR)
#define KI_FAN_FILE	(FAN_DELETE_SELF | FAN_ATTRIB)
#define KI_IN_MASK	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
			 IN_DELETE_SELF | IN_ATTRIB)
/* D68: what the notes add to an object's mark (the first such kevent widens it). */
#define KI_FAN_NOTES	(FAN_MODIFY | FAN_MOVE_SELF)
#define KI_IN_NOTES	(IN_MODIFY | IN_MOVE_SELF)
/* What a kevent below revision 4 can report (D68: the notes are unknown bits there). */
#define KI_OLD_BITS	(KEVENT_INODE_CREATE | KEVENT_INODE_REMOVE)

struct kinode_fh {
	__u64 fsid;
	unsigned int bytes;
	int type;
	unsigned char h[KI_HANDLE_MAX];
};

struct kinode_obj {
	struct kinode_obj *hnext;	/* hash chain; only while live */
	struct kinode_watch *watches;
	int backend;			/* KORIGINS_INODE_FANOTIFY or _INOTIFY */
	int wd;				/* inotify */
	int mnt_id;
	int dead;			/* removed: no longer in the hash */
	int wd_gone;			/* inotify sent IN_IGNORED */
	int has_fh;			/* fh is valid (the filesystem has handles) */
	int notes;			/* the mark has the notes' bits (D68) */
	off_t size;			/* the size seen last (D68 EXTEND) */
	nlink_t nlink;			/* the link count seen last (D68 LINK) */
	unsigned int refs;		/* watches */
	struct kinode_fh fh;
};

struct kinode_watch {
	struct kitem *k;
	struct kinode_obj *obj;
	struct kinode_watch *next;
	__u32 event;
	int notes;			/* its queue has the notes (D68) */
	int stopped;
};

struct kinode_mnt {
	struct kinode_mnt *next;
	int mnt_id;
	int fd;				/* the mount root, O_RDONLY (open_by_handle_at refuses O_PATH) */
};

static struct {
	int fan_fd, in_fd;
	enum korigins_inode_backend mode;
	struct kinode_obj *hash[KI_BUCKETS];
	struct kinode_mnt *mnts;
	__u64 watches, objects;
	__u64 overflows;		/* queue overflows seen, both backends */
	__u64 logged;			/* overflows logged so far */
	__u64 last_fired;		/* kevents fired by the last overflow */
	int last_backend;		/* backend of the last overflow */
	void (*log)(const char *line);
} ki = { .fan_fd = -1, .in_fd = -1 };

static unsigned int kinode_hash_fh(const struct kinode_fh *fh)
{
	unsigned int h = 2166136261u, i;

	for (i = 0; i < fh->bytes; i++)
		h = (h ^ fh->h[i]) * 16777619u;
	return (h ^ (unsigned int)fh->fsid) % KI_BUCKETS;
}

static unsigned int kinode_bucket(const struct kinode_obj *o)
{
	return o->backend == KORIGINS_INODE_INOTIFY ? (unsigned int)o->wd % KI_BUCKETS
						     : kinode_hash_fh(&o->fh);
}

static int kinode_fh_eq(const struct kinode_fh *a, const struct kinode_fh *b)
{
	return a->fsid == b->fsid && a->type == b->type && a->bytes == b->bytes &&
	       !memcmp(a->h, b->h, a->bytes);
}

static struct kinode_obj *kinode_find_fh(const struct kinode_fh *fh)
{
	struct kinode_obj *o;

	for (o = ki.hash[kinode_hash_fh(fh)]; o; o = o->hnext)
		if (o->backend == KORIGINS_INODE_FANOTIFY && kinode_fh_eq(&o->fh, fh))
			return o;
	return NULL;
}

static struct kinode_obj *kinode_find_wd(int wd)
{
	struct kinode_obj *o;

	for (o = ki.hash[(unsigned int)wd % KI_BUCKETS]; o; o = o->hnext)
		if (o->backend == KORIGINS_INODE_INOTIFY && o->wd == wd)
			return o;
	return NULL;
}

static void kinode_hash_add(struct kinode_obj *o)
{
	unsigned int b = kinode_bucket(o);

	o->hnext = ki.hash[b];
	ki.hash[b] = o;
	ki.objects++;
}

static void kinode_hash_del(struct kinode_obj *o)
{
	struct kinode_obj **pp = &ki.hash[kinode_bucket(o)];

	while (*pp && *pp != o)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = o->hnext;
	o->dead = 1;
	ki.objects--;
}

/* ---- mount roots for open_by_handle_at ---- */

static void kinode_unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
			*d++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

static int kinode_open_mount(int mnt_id)
{
	char *line = NULL, path[PATH_MAX];
	size_t len = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int id, fd = -ENOENT;

	if (!f)
		return -errno;
	while (getline(&line, &len, f) > 0) {
		if (sscanf(line, "%d %*d %*s %*s %4095s", &id, path) != 2 || id != mnt_id)
			continue;
		kinode_unescape(path);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
		break;
	}
	free(line);
	fclose(f);
	return fd;
}

static int kinode_mount_fd(int mnt_id)
{
	struct kinode_mnt *m;
	int fd;

	for (m = ki.mnts; m; m = m->next)
		if (m->mnt_id == mnt_id)
			return m->fd;
	fd = kinode_open_mount(mnt_id);
	if (fd < 0)
		return fd;
	m = malloc(sizeof(*m));
	if (!m) {
		close(fd);
		return -ENOMEM;
	}
	*m = (struct kinode_mnt){ .next = ki.mnts, .mnt_id = mnt_id, .fd = fd };
	ki.mnts = m;
	return fd;
}

/* O_PATH fd of the object named by o's handle, or -errno (-ESTALE: gone). */
static int kinode_reopen(const struct kinode_obj *o)
{
	union {
		struct file_handle fh;
		unsigned char buf[sizeof(struct file_handle) + KI_HANDLE_MAX];
	} u;
	int mfd = kinode_mount_fd(o->mnt_id), fd;

	if (mfd < 0)
		return mfd;
	u.fh.handle_bytes = o->fh.bytes;
	u.fh.handle_type = o->fh.type;
	memcpy(u.fh.f_handle, o->fh.h, o->fh.bytes);
	fd = open_by_handle_at(mfd, &u.fh, O_PATH | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The object's stat, looked up by its handle: 0, or -errno (-ESTALE: gone). */
static int kinode_stat(const struct kinode_obj *o, struct stat *st)
{
	int fd, err;

	if (!o->has_fh)
		return -EOPNOTSUPP;	/* no handle: wait for DELETE_SELF */
	fd = kinode_reopen(o);
	if (fd < 0)
		return fd;
	err = fstat(fd, st) < 0 ? -errno : 0;
	close(fd);	/* an O_PATH fd: its close never waits */
	return err;
}

/* What a lookup says: removed (ESTALE, ENOENT, no link left); else cannot tell or alive. */
static int kinode_gone(int err, const struct stat *st)
{
	return err == -ESTALE || err == -ENOENT || (!err && st->st_nlink == 0);
}

/* ---- firing ---- */

/* The bits of bits w reports: event's, and the notes only on a queue with them (D68). */
static __u32 kinode_bits(const struct kinode_watch *w, __u32 bits)
{
	return w->event & bits & (w->notes ? KI_OLD_BITS | KEVENT_INODE_NOTES : KI_OLD_BITS);
}

static void kinode_fire(struct kinode_watch *w, const struct korigin_result *res)
{
	if (korigin_fire(w->k, res) == 1)
		w->stopped = 1;
}

static void kinode_fire_all(struct kinode_obj *o, __u32 bits)
{
	struct kinode_watch *w;

	for (w = o->watches; w; w = w->next) {
		struct korigin_result res = { .ret_data = { kinode_bits(w, bits), 0 } };

		if (!w->stopped && res.ret_data[0])
			kinode_fire(w, &res);
	}
}

/*
 * The object itself is gone (with notes, the event's others: D68).  A
 * kevent that asked DELETE on a queue with the notes reports it as any
 * note and then hears no more; any other turns BROKEN with REMOVE & event
 * and -ENOENT (take13's hook had no such report; revisions 1 to 3).
 */
static void kinode_gone_with(struct kinode_obj *o, __u32 notes)
{
	struct kinode_watch *w;

	if (o->dead)
		return;
	for (w = o->watches; w; w = w->next) {
		struct korigin_result res = {
			.ret_flags = KEVENT_RET_BROKEN,
			.ret_data = { w->event & KEVENT_INODE_REMOVE, (__u32)-ENOENT },
		};

		if (w->stopped)
			continue;
		if (kinode_bits(w, KEVENT_INODE_DELETE))
			res = (struct korigin_result){
				.ret_data = { kinode_bits(w, KEVENT_INODE_DELETE | notes), 0 },
			};
		kinode_fire(w, &res);
		w->stopped = 1;
	}
	kinode_hash_del(o);
}

static void kinode_removed(struct kinode_obj *o)
{
	kinode_gone_with(o, 0);
}

/* An entry of the directory o came (CREATE) or went (REMOVE); D68: WRITE, LINK for a dir. */
static void kinode_entry(struct kinode_obj *o, __u32 bit, int is_dir)
{
	kinode_fire_all(o, bit | KEVENT_INODE_WRITE | (is_dir ? KEVENT_INODE_LINK : 0));
}

/* D68: o's contents were written; EXTEND when its size is above the last one seen. */
static __u32 kinode_written(struct kinode_obj *o)
{
	__u32 bits = KEVENT_INODE_WRITE;
	struct stat st;

	if (kinode_stat(o, &st) == 0) {
		if (st.st_size > o->size)
			bits |= KEVENT_INODE_EXTEND;
		o->size = st.st_size;
	}
	return bits;
}

/*
 * o's attributes changed (unlink sends this too): D68's LINK when a file's
 * link count moved, else ATTRIB; 0 when o is removed (*gone).  A
 * directory's count moves with its subdirectories, reported by their entry
 * events (kinode_entry), so there it is never LINK.  Without a lookup (no
 * handle) the link count is unknown: ATTRIB.
 */
static __u32 kinode_attrib(struct kinode_obj *o, int *gone)
{
	struct stat st;
	int err = kinode_stat(o, &st);

	*gone = kinode_gone(err, &st);
	if (*gone || err)
		return *gone ? 0 : KEVENT_INODE_ATTRIB;
	if (st.st_nlink != o->nlink && !S_ISDIR(st.st_mode)) {
		o->nlink = st.st_nlink;
		return KEVENT_INODE_LINK;
	}
	return KEVENT_INODE_ATTRIB;
}

/*
 * One kernel event on o itself (the kernel merges a write and a chmod
 * still queued into one): one report of all its notes, so no dequeue
 * between two fires can take half of it; removed: the removal, with them.
 */
static void kinode_self(struct kinode_obj *o, int modify, int attrib, int moved, int deleted)
{
	__u32 bits = (modify ? kinode_written(o) : 0) | (moved ? KEVENT_INODE_RENAME : 0);
	int gone = deleted;

	if (attrib)
		bits |= kinode_attrib(o, &gone);
	if (gone || deleted)
		kinode_gone_with(o, bits);
	else if (bits)
		kinode_fire_all(o, bits);
}

/*
 * The group's queue overflowed (IN_Q_OVERFLOW, FAN_Q_OVERFLOW): events were
 * dropped, and any watched object of that backend may have missed one.  So
 * nothing is lost silently, every kevent on such an object fires: with
 * ret_data[0] = event & (CREATE | REMOVE), and on a queue with the notes
 * every note but DELETE (D68), and ret_data[1] = -EOVERFLOW
 * ("may have happened: look"), or BROKEN/-ENOENT as usual when the object
 * turns out to be removed (its attribute event may be the one dropped).
 * Cost: one pass over the objects (and a handle lookup each) per overflow.
 * The line for the log is written by kinode_log_overflow(), outside
 * korigins_lock.
 */
static __u64 kinode_overflow_obj(struct kinode_obj *o)
{
	struct kinode_watch *w;
	struct stat st;
	__u64 fired = 0;
	int err = kinode_stat(o, &st);

	if (kinode_gone(err, &st)) {
		for (w = o->watches; w; w = w->next)
			fired += !w->stopped;
		kinode_removed(o);
		return fired;
	}
	if (!err) {		/* D68: the next EXTEND and LINK compare with now */
		o->size = st.st_size;
		o->nlink = st.st_nlink;
	}
	for (w = o->watches; w; w = w->next) {
		/* D68: every note may have happened, but DELETE: the lookup decided that */
		struct korigin_result res = {
			.ret_data = { kinode_bits(w, ~(__u32)KEVENT_INODE_DELETE), (__u32)-EOVERFLOW },
		};

		if (w->stopped)
			continue;
		fired++;
		if (korigin_fire(w->k, &res) == 1)
			w->stopped = 1;
	}
	return fired;
}

static void kinode_overflow(int backend)
{
	__u64 fired = 0;
	unsigned int b;

	for (b = 0; b < KI_BUCKETS; b++) {
		struct kinode_obj *o, *next;

		for (o = ki.hash[b]; o; o = next) {
			next = o->hnext;	/* kinode_removed() unlinks o */
			if (o->backend == backend)
				fired += kinode_overflow_obj(o);
		}
	}
	ki.overflows++;
	ki.last_fired = fired;
	ki.last_backend = backend;
}

/* One log line per overflow (called by the reactor without korigins_lock). */
void kinode_log_overflow(void)
{
	void (*log)(const char *line);
	__u64 n, fired;
	char line[200];
	int backend;

	pthread_mutex_lock(&korigins_lock);
	n = ki.overflows;
	fired = ki.last_fired;
	backend = ki.last_backend;
	log = ki.log;
	if (n != ki.logged)
		ki.logged = n;
	else
		n = 0;
	pthread_mutex_unlock(&korigins_lock);
	if (!n)
		return;
	snprintf(line, sizeof(line),
		 "inode: %s queue overflow (%llu so far): events lost, %llu inode kevents fired",
		 backend == KORIGINS_INODE_INOTIFY ? "inotify" : "fanotify",
		 (unsigned long long)n, (unsigned long long)fired);
	if (log)
		log(line);
	else
		fprintf(stderr, "kevent-origins: %s\n", line);
}

/* ---- inotify ---- */

static void kinode_inotify_event(const struct inotify_event *ev)
{
	struct kinode_obj *o;

	if (ev->mask & IN_Q_OVERFLOW) {
		kinode_overflow(KORIGINS_INODE_INOTIFY);
		return;
	}
	o = kinode_find_wd(ev->wd);
	if (!o)
		return;
	if (ev->mask & (IN_CREATE | IN_MOVED_TO))
		kinode_entry(o, KEVENT_INODE_CREATE, !!(ev->mask & IN_ISDIR));
	if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
		kinode_entry(o, KEVENT_INODE_REMOVE, !!(ev->mask & IN_ISDIR));
	if (ev->mask & IN_IGNORED)
		o->wd_gone = 1;
	/* A named event of a directory watch is about an entry, not the directory. */
	if (!ev->len)
		kinode_self(o, !!(ev->mask & IN_MODIFY), !!(ev->mask & IN_ATTRIB),
			    !!(ev->mask & IN_MOVE_SELF),
			    !!(ev->mask & (IN_DELETE_SELF | IN_IGNORED | IN_UNMOUNT)));
}

void kinode_handle_inotify(void)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(ki.in_fd, buf, sizeof(buf))) > 0) {
		char *p = buf;

		while (p < buf + n) {
			const struct inotify_event *ev = (const void *)p;

			kinode_inotify_event(ev);
			p += sizeof(*ev) + ev->len;
		}
	}
}

/* ---- fanotify ---- */

/*
 * One information record of a fanotify event, read field by field.  The
 * kernel packs events and records back to back, and a FID record is as long
 * as its handle, so after the first record nothing is aligned: every
 * multi-byte field is copied out, never read in place.
 */
struct kinode_rec {
	__u8 type;			/* FAN_EVENT_INFO_TYPE_* */
	struct kinode_fh fh;
	const char *name;		/* DFID_NAME: the entry, NUL-terminated */
};

/* Parses the record at p; returns its length, or -EINVAL if malformed. */
static int kinode_rec_parse(const char *p, const char *end, struct kinode_rec *r)
{
	struct fanotify_event_info_fid fid;
	struct file_handle fh;
	const char *handle = p + sizeof(fid) + sizeof(fh);

	if (end - p < (ptrdiff_t)(sizeof(fid) + sizeof(fh)))
		return -EINVAL;
	memcpy(&fid, p, sizeof(fid));
	memcpy(&fh, p + sizeof(fid), sizeof(fh));
	if (fid.hdr.len < sizeof(fid) + sizeof(fh) || fid.hdr.len > end - p ||
	    fh.handle_bytes > KI_HANDLE_MAX || fh.handle_bytes > fid.hdr.len - sizeof(fid) - sizeof(fh))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->type = fid.hdr.info_type;
	memcpy(&r->fh.fsid, &fid.fsid, sizeof(r->fh.fsid));
	r->fh.bytes = fh.handle_bytes;
	r->fh.type = fh.handle_type;
	memcpy(r->fh.h, handle, fh.handle_bytes);
	if (r->type == FAN_EVENT_INFO_TYPE_DFID_NAME &&
	    memchr(handle + fh.handle_bytes, 0, p + fid.hdr.len - handle - fh.handle_bytes))
		r->name = handle + fh.handle_bytes;
	return fid.hdr.len;
}

/*
 * Which object a record names: FID is the object itself; DFID_NAME is the
 * parent directory with the entry's name, except that an event on a
 * directory itself comes as DFID_NAME with the name ".".
 */
static int kinode_record_is_self(const struct kinode_rec *r)
{
	if (r->type == FAN_EVENT_INFO_TYPE_FID)
		return 1;
	return r->type == FAN_EVENT_INFO_TYPE_DFID_NAME && r->name && !strcmp(r->name, ".");
}

static void kinode_fanotify_record(const struct kinode_rec *r, __u64 mask)
{
	int self = kinode_record_is_self(r);
	struct kinode_obj *o;

	if (r->type != FAN_EVENT_INFO_TYPE_FID && r->type != FAN_EVENT_INFO_TYPE_DFID &&
	    r->type != FAN_EVENT_INFO_TYPE_DFID_NAME)
		return;
	if (!(o = kinode_find_fh(&r->fh)))
		return;
	if (!self && (mask & (FAN_CREATE | FAN_MOVED_TO)))
		kinode_entry(o, KEVENT_INODE_CREATE, !!(mask & FAN_ONDIR));
	if (!self && (mask & (FAN_DELETE | FAN_MOVED_FROM)))
		kinode_entry(o, KEVENT_INODE_REMOVE, !!(mask & FAN_ONDIR));
	if (self)
		kinode_self(o, !!(mask & FAN_MODIFY), !!(mask & FAN_ATTRIB),
			    !!(mask & FAN_MOVE_SELF), !!(mask & FAN_DELETE_SELF));
}

/* ev: the event's first byte in the read buffer; md: its metadata, copied. */
static void kinode_fanotify_event(const char *ev, const struct fanotify_event_metadata *md)
{
	const char *p = ev + md->metadata_len;
	const char *end = ev + md->event_len;
	struct kinode_rec r;
	int len;

	while (p < end && (len = kinode_rec_parse(p, end, &r)) > 0) {
		p += len;
		kinode_fanotify_record(&r, md->mask);
	}
}

void kinode_handle_fanotify(void)
{
	char buf[16384] __attribute__((aligned(8)));
	ssize_t n;

	while ((n = read(ki.fan_fd, buf, sizeof(buf))) > 0) {
		struct fanotify_event_metadata md;
		size_t off = 0;

		while (off + sizeof(md) <= (size_t)n) {
			memcpy(&md, buf + off, sizeof(md));
			if (md.event_len < sizeof(md) || md.metadata_len > md.event_len ||
			    md.event_len > (size_t)n - off)
				break;
			/* FID mode: fd is always FAN_NOFD; the mask says overflow. */
			if (md.vers == FANOTIFY_METADATA_VERSION && (md.mask & FAN_Q_OVERFLOW))
				kinode_overflow(KORIGINS_INODE_FANOTIFY);
			else if (md.vers == FANOTIFY_METADATA_VERSION)
				kinode_fanotify_event(buf + off, &md);
			off += md.event_len;
		}
	}
}

/* ---- marks ---- */

static int kinode_inotify_open(void)
{
	if (ki.in_fd >= 0)
		return 0;
	ki.in_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ki.in_fd < 0)
		return -errno;
	return kreactor_add(ki.in_fd, EPOLLIN, KR_DATA(KR_TAG_INOTIFY, 0));
}

/*
 * IN_MASK_ADD: an inode already watched keeps its mask and gains this
 * one, so a kevent below revision 4 never narrows the notes' (D68).
 */
static int kinode_mark_inotify(int dup, int is_dir, int notes, struct kinode_obj *o)
{
	/* a directory's IN_MODIFY is about its entries' contents: not asked */
	__u32 mask = KI_IN_MASK | (notes ? KI_IN_NOTES & ~(is_dir ? IN_MODIFY : 0u) : 0);
	char path[64];
	int err = kinode_inotify_open();

	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", dup);
	o->wd = inotify_add_watch(ki.in_fd, path, mask | IN_MASK_ADD);
	if (o->wd < 0)
		return -errno;
	o->backend = KORIGINS_INODE_INOTIFY;
	return 0;
}

static int kinode_mark_fanotify(int dup, int is_dir, int notes, struct kinode_obj *o)
{
	__u64 mask = (is_dir ? KI_FAN_DIR : KI_FAN_FILE) | (notes ? KI_FAN_NOTES : 0);

	if (fanotify_mark(ki.fan_fd, FAN_MARK_ADD, mask, dup, NULL) < 0)
		return -errno;
	o->backend = KORIGINS_INODE_FANOTIFY;
	return 0;
}

/*
 * D68: the first kevent with the notes on an object widens its mark and
 * starts the size it compares with from now (the link count is kept by
 * every ATTRIB already).  Marks only grow: the kernel merges them.
 */
static int kinode_widen(struct kinode_obj *o, int dup, int is_dir, const struct stat *st)
{
	int err;

	if (o->notes)
		return 0;
	if (o->backend == KORIGINS_INODE_INOTIFY)
		err = kinode_mark_inotify(dup, is_dir, 1, o);
	else
		err = kinode_mark_fanotify(dup, is_dir, 1, o);
	if (err)
		return err;
	o->notes = 1;
	o->size = st->st_size;
	return 0;
}

static int kinode_take_fh(int dup, struct kinode_obj *o)
{
	union {
		struct file_handle fh;
		unsigned char buf[sizeof(struct file_handle) + KI_HANDLE_MAX];
	} u;
	struct statfs sfs;

	u.fh.handle_bytes = KI_HANDLE_MAX;
	if (name_to_handle_at(dup, "", &u.fh, &o->mnt_id, AT_EMPTY_PATH) < 0)
		return -errno;
	/* dup was classified (not FUSE): statfs cannot reach a client server. */
	if (fstatfs(dup, &sfs) < 0)
		return -errno;
	memcpy(&o->fh.fsid, &sfs.f_fsid, sizeof(o->fh.fsid));
	o->fh.bytes = u.fh.handle_bytes;
	o->fh.type = u.fh.handle_type;
	memcpy(o->fh.h, u.fh.f_handle, u.fh.handle_bytes);
	return 0;
}

/*
 * The object for dup, shared by every kevent on the same inode; notes: the
 * new kevent's queue has them (D68), so the mark must carry their bits.
 */
static int kinode_get_obj(int dup, int is_dir, int notes, struct kinode_obj **ret)
{
	struct kinode_obj *o = calloc(1, sizeof(*o)), *old = NULL;
	struct stat st;
	int err;

	if (!o)
		return -ENOMEM;
	if (fstat(dup, &st) < 0) {	/* dup was classified: a local file or directory */
		free(o);
		return -errno;
	}
	o->wd = -1;
	o->has_fh = kinode_take_fh(dup, o) == 0;
	err = -EOPNOTSUPP;	/* fanotify needs a handle, so does FANOTIFY mode */
	if (o->has_fh && ki.fan_fd >= 0) {
		old = kinode_find_fh(&o->fh);
		if (old)
			goto reuse;
		err = kinode_mark_fanotify(dup, is_dir, notes, o);
	}
	if (err && ki.mode != KORIGINS_INODE_FANOTIFY) {
		err = kinode_mark_inotify(dup, is_dir, notes, o);
		old = err ? NULL : kinode_find_wd(o->wd);
		if (old)
			goto reuse;
	}
	if (err) {
		free(o);
		return err;
	}
	o->notes = notes;
	o->size = st.st_size;
	o->nlink = st.st_nlink;
	kinode_hash_add(o);
	*ret = o;
	return 0;
reuse:
	free(o);
	err = notes ? kinode_widen(old, dup, is_dir, &st) : 0;
	*ret = old;
	return err;
}

/* Never silent: a mark left behind costs the daemon every later event on that inode. */
static void kinode_log_unmark_failure(int err)
{
	char line[160];

	snprintf(line, sizeof(line),
		 "inode: a fanotify mark could not be removed (%s): it stays until the inode is evicted",
		 strerror(err));
	if (ki.log)
		ki.log(line);
	else
		fprintf(stderr, "kevent-origins: %s\n", line);
}

static void kinode_unmark(struct kinode_obj *o)
{
	char path[40];
	int fd;

	if (o->backend == KORIGINS_INODE_INOTIFY) {
		if (!o->wd_gone)
			inotify_rm_watch(ki.in_fd, o->wd);
		return;
	}
	fd = kinode_reopen(o);
	if (fd < 0)
		return;	/* gone: the kernel dropped the mark with the inode */
	/*
	 * fanotify_mark() takes no O_PATH fd as the object (EBADF), and a
	 * read open could wait on a client's lease; the fd's /proc link is
	 * resolved as a path, opening nothing.
	 */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (fanotify_mark(ki.fan_fd, FAN_MARK_REMOVE, KI_FAN_DIR | KI_FAN_NOTES, AT_FDCWD, path) < 0)
		kinode_log_unmark_failure(errno);
	close(fd);
}

static void kinode_put_obj(struct kinode_obj *o)
{
	if (--o->refs)
		return;
	kinode_unmark(o);
	if (!o->dead)
		kinode_hash_del(o);
	free(o);
}

/* B8: a directory or regular file, open for reading, not O_PATH. */
static int kinode_check_fd(const struct kfd_info *info)
{
	if (info->kind != KFD_DIRECTORY && info->kind != KFD_REGULAR)
		return -EINVAL;
	if ((info->flags & O_PATH) || (info->flags & O_ACCMODE) == O_WRONLY)
		return -EINVAL;
	return 0;
}

static int kinode_attach(struct kitem *k, const struct kcaller *caller,
			 struct korigin_result *res)
{
	const struct ukevent *uk = korigin_ukevent(k);
	struct kinode_watch *w;
	struct kfd_info info;
	int dup, err;

	dup = kfd_take(caller, (int)uk->id.raw[0], &info);
	if (dup < 0)
		return dup;
	err = kinode_check_fd(&info);
	w = err ? NULL : calloc(1, sizeof(*w));
	if (!err && !w)
		err = -ENOMEM;
	if (!err) {
		*w = (struct kinode_watch){ .k = k, .event = uk->event,
					    .notes = korigin_inode_notes(k) };
		pthread_mutex_lock(&korigins_lock);
		err = kreactor_running() ? kinode_get_obj(dup, info.kind == KFD_DIRECTORY,
							  w->notes, &w->obj)
					 : -ENODEV;
		if (!err) {
			w->next = w->obj->watches;
			w->obj->watches = w;
			w->obj->refs++;
			ki.watches++;
			korigin_set_data(k, w);
		}
		pthread_mutex_unlock(&korigins_lock);
	}
	kcloser_close(caller->uid, dup);	/* A7: nothing of the client's file is kept */
	if (err)
		free(w);
	return err;
}

static int kinode_modify(struct kitem *k, struct korigin_result *res)
{
	struct kinode_watch *w = korigin_data(k);

	pthread_mutex_lock(&korigins_lock);
	w->event = korigin_ukevent(k)->event;
	pthread_mutex_unlock(&korigins_lock);
	return 0;
}

static void kinode_detach(struct kitem *k)
{
	struct kinode_watch *w = korigin_data(k), **pp;

	pthread_mutex_lock(&korigins_lock);
	for (pp = &w->obj->watches; *pp != w; pp = &(*pp)->next)
		;
	*pp = w->next;
	ki.watches--;
	kinode_put_obj(w->obj);
	pthread_mutex_unlock(&korigins_lock);
	free(w);
}

int kinode_init(enum korigins_inode_backend backend, void (*log)(const char *line))
{
	unsigned int flags = FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK |
			     FAN_REPORT_DFID_NAME | FAN_REPORT_FID;

	ki.mode = backend;
	ki.log = log;
	ki.overflows = ki.logged = ki.last_fired = 0;
	if (backend != KORIGINS_INODE_INOTIFY) {
		ki.fan_fd = fanotify_init(flags, O_RDONLY | O_CLOEXEC);
		if (ki.fan_fd < 0 && backend == KORIGINS_INODE_FANOTIFY)
			return -errno;
		if (ki.fan_fd >= 0)
			return kreactor_add(ki.fan_fd, EPOLLIN, KR_DATA(KR_TAG_FANOTIFY, 0));
	}
	return kinode_inotify_open();
}

void kinode_fini(void)
{
	struct kinode_mnt *m;

	while ((m = ki.mnts)) {
		ki.mnts = m->next;
		close(m->fd);
		free(m);
	}
	if (ki.fan_fd >= 0)
		close(ki.fan_fd);
	if (ki.in_fd >= 0)
		close(ki.in_fd);
	ki.fan_fd = ki.in_fd = -1;
	memset(ki.hash, 0, sizeof(ki.hash));
	ki.watches = ki.objects = 0;
}

void kinode_counts(__u64 *watches, __u64 *objects, __u32 *backend, __u64 *overflows)
{
	*overflows = ki.overflows;
	*watches = ki.watches;
	*objects = ki.objects;
	*backend = ki.fan_fd >= 0 ? KORIGINS_INODE_FANOTIFY : KORIGINS_INODE_INOTIFY;
}

const struct korigin_ops kinode_ops = {
	.name = "inode",
	.attach = kinode_attach,
	.modify = kinode_modify,
	.detach = kinode_detach,
};
