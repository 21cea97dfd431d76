// SPDX-License-Identifier: GPL-2.0
/*
 * Layout pins for include/uapi/linux/kevent.h.
 *
 * Every size, offset and constant of the take13 ABI is pinned twice: by a
 * _Static_assert (a changed layout does not build) and by a runtime check
 * printed as TAP (so each pin is visible and counted).  The same file is
 * built -m64 and -m32.  struct take13_* below is an independent restatement
 * of the Aug 23 2006 structures, frozen here: the header is compared with it
 * field by field.
 */
#include <stddef.h>
#include <stdio.h>
#include <linux/kevent.h>

struct take13_kevent_id {
	union {
		__u32 raw[2];
		__u64 raw_u64 __attribute__((aligned(8)));
	};
};

struct take13_ukevent {
	struct take13_kevent_id id;
	__u32 type, event, req_flags, ret_flags, ret_data[2];
	union {
		__u32 user[2];
		void *ptr;
	};
};

struct take13_mukevent {
	struct take13_kevent_id id;
	__u32 ret_flags;
};

#define take13_KEVENTS_ON_PAGE ((4096 - sizeof(unsigned int)) / sizeof(struct take13_mukevent))

struct take13_kevent_mring {
	unsigned int index;
	struct take13_mukevent event[take13_KEVENTS_ON_PAGE];
};

#define SAME_FIELD(a, b, f) \
	(offsetof(struct a, f) == offsetof(struct b, f) && \
	 sizeof(((struct a *)0)->f) == sizeof(((struct b *)0)->f))

/* X(name, expression): each pin once, used for both kinds of check. */
#define PINS(X) \
	X(kevent_id_size, sizeof(struct kevent_id) == 8) \
	X(kevent_id_align, _Alignof(struct kevent_id) == 8) \
	X(kevent_id_raw_low_half, offsetof(struct kevent_id, raw) == offsetof(struct kevent_id, raw_u64)) \
	X(ukevent_size, sizeof(struct ukevent) == 40) \
	X(ukevent_align, _Alignof(struct ukevent) == 8) \
	X(ukevent_id_off, offsetof(struct ukevent, id) == 0) \
	X(ukevent_type_off, offsetof(struct ukevent, type) == 8) \
	X(ukevent_event_off, offsetof(struct ukevent, event) == 12) \
	X(ukevent_req_flags_off, offsetof(struct ukevent, req_flags) == 16) \
	X(ukevent_ret_flags_off, offsetof(struct ukevent, ret_flags) == 20) \
	X(ukevent_ret_data_off, offsetof(struct ukevent, ret_data) == 24) \
	X(ukevent_user_off, offsetof(struct ukevent, user) == 32) \
	X(ukevent_ptr_off, offsetof(struct ukevent, ptr) == 32) \
	X(ukevent_ptr_fits, sizeof(((struct ukevent *)0)->ptr) <= 8) \
	X(ukevent_frozen_size, sizeof(struct ukevent) == sizeof(struct take13_ukevent)) \
	X(ukevent_frozen_id, SAME_FIELD(ukevent, take13_ukevent, id)) \
	X(ukevent_frozen_type, SAME_FIELD(ukevent, take13_ukevent, type)) \
	X(ukevent_frozen_event, SAME_FIELD(ukevent, take13_ukevent, event)) \
	X(ukevent_frozen_req_flags, SAME_FIELD(ukevent, take13_ukevent, req_flags)) \
	X(ukevent_frozen_ret_flags, SAME_FIELD(ukevent, take13_ukevent, ret_flags)) \
	X(ukevent_frozen_ret_data, SAME_FIELD(ukevent, take13_ukevent, ret_data)) \
	X(ukevent_frozen_user, SAME_FIELD(ukevent, take13_ukevent, user)) \
	X(mukevent_size, sizeof(struct mukevent) == 16) \
	X(mukevent_frozen_size, sizeof(struct mukevent) == sizeof(struct take13_mukevent)) \
	X(mukevent_id_off, offsetof(struct mukevent, id) == 0) \
	X(mukevent_ret_flags_off, offsetof(struct mukevent, ret_flags) == 8) \
	X(mukevent_frozen_ret_flags, SAME_FIELD(mukevent, take13_mukevent, ret_flags)) \
	X(mring_event_off, offsetof(struct kevent_mring, event) == 8) \
	X(mring_frozen_event_off, offsetof(struct kevent_mring, event) == offsetof(struct take13_kevent_mring, event)) \
	X(mring_size, sizeof(struct kevent_mring) == 4088) \
	X(mring_frozen_size, sizeof(struct kevent_mring) == sizeof(struct take13_kevent_mring)) \
	X(ring_hdr_size, KEVENT_RING_HDR_SIZE == offsetof(struct kevent_mring, event)) \
	X(events_on_page, KEVENTS_ON_PAGE == 255) \
	X(events_on_page_formula, KEVENTS_ON_PAGE == take13_KEVENTS_ON_PAGE) \
	X(ring_page_size, KEVENT_RING_PAGE_SIZE == 4096) \
	X(ring_pages, KEVENT_RING_PAGES == 17) \
	X(ring_pages_formula, KEVENT_RING_PAGES == (KEVENT_MAX_EVENTS + KEVENTS_ON_PAGE - 1) / KEVENTS_ON_PAGE) \
	X(ring_last_page_slots, KEVENT_MAX_EVENTS - (KEVENT_RING_PAGES - 1) * KEVENTS_ON_PAGE == 16) \
	X(ring_size, KEVENT_RING_SIZE == 17 * 4096) \
	X(ring_slot0, KEVENT_RING_SLOT_OFFSET(0) == 8) \
	X(ring_slot254, KEVENT_RING_SLOT_OFFSET(254) == 8 + 254 * 16) \
	X(ring_slot255, KEVENT_RING_SLOT_OFFSET(255) == 4096 + 8) \
	X(ring_slot4095, KEVENT_RING_SLOT_OFFSET(4095) == 16 * 4096 + 8 + 15 * 16) \
	X(ring_slot4095_in_map, KEVENT_RING_SLOT_OFFSET(4095) + 16 <= KEVENT_RING_SIZE) \
	X(ring_slot_stride, KEVENT_RING_SLOT_OFFSET(1) - KEVENT_RING_SLOT_OFFSET(0) == sizeof(struct mukevent)) \
	X(type_socket, KEVENT_SOCKET == 0) \
	X(type_inode, KEVENT_INODE == 1) \
	X(type_timer, KEVENT_TIMER == 2) \
	X(type_poll, KEVENT_POLL == 3) \
	X(type_naio, KEVENT_NAIO == 4) \
	X(type_aio, KEVENT_AIO == 5) \
	X(type_max, KEVENT_MAX == 10) \
	X(type_posix_timer, KEVENT_POSIX_TIMER == 8) \
	X(type_user, KEVENT_USER == 9) \
	X(timer_fired, KEVENT_TIMER_FIRED == 0x1) \
	X(socket_recv, KEVENT_SOCKET_RECV == 0x1) \
	X(socket_accept, KEVENT_SOCKET_ACCEPT == 0x2) \
	X(socket_send, KEVENT_SOCKET_SEND == 0x4) \
	X(inode_create, KEVENT_INODE_CREATE == 0x1) \
	X(inode_remove, KEVENT_INODE_REMOVE == 0x2) \
	X(inode_write, KEVENT_INODE_WRITE == 0x4) \
	X(inode_extend, KEVENT_INODE_EXTEND == 0x8) \
	X(inode_attrib, KEVENT_INODE_ATTRIB == 0x10) \
	X(inode_link, KEVENT_INODE_LINK == 0x20) \
	X(inode_rename, KEVENT_INODE_RENAME == 0x40) \
	X(inode_delete, KEVENT_INODE_DELETE == 0x80) \
	X(inode_notes, KEVENT_INODE_NOTES == 0xfc) \
	X(poll_in, KEVENT_POLL_POLLIN == 0x1) \
	X(poll_pri, KEVENT_POLL_POLLPRI == 0x2) \
	X(poll_out, KEVENT_POLL_POLLOUT == 0x4) \
	X(poll_err, KEVENT_POLL_POLLERR == 0x8) \
	X(poll_hup, KEVENT_POLL_POLLHUP == 0x10) \
	X(poll_nval, KEVENT_POLL_POLLNVAL == 0x20) \
	X(poll_rdnorm, KEVENT_POLL_POLLRDNORM == 0x40) \
	X(poll_rdband, KEVENT_POLL_POLLRDBAND == 0x80) \
	X(poll_wrnorm, KEVENT_POLL_POLLWRNORM == 0x100) \
	X(poll_wrband, KEVENT_POLL_POLLWRBAND == 0x200) \
	X(poll_msg, KEVENT_POLL_POLLMSG == 0x400) \
	X(poll_remove, KEVENT_POLL_POLLREMOVE == 0x1000) \
	X(aio_bio, KEVENT_AIO_BIO == 0x1) \
	X(mask_all, KEVENT_MASK_ALL == 0xffffffffu) \
	X(mask_empty, KEVENT_MASK_EMPTY == 0) \
	X(req_oneshot, KEVENT_REQ_ONESHOT == 0x1) \
	X(ret_broken, KEVENT_RET_BROKEN == 0x1) \
	X(ret_done, KEVENT_RET_DONE == 0x2) \
	X(ctl_add, KEVENT_CTL_ADD == 0) \
	X(ctl_remove, KEVENT_CTL_REMOVE == 1) \
	X(ctl_modify, KEVENT_CTL_MODIFY == 2) \
	X(max_events, KEVENT_MAX_EVENTS == 4096) \
	X(ctl_arg_size, sizeof(struct kevent_ctl_arg) == KEVENT_CTL_ARG_SIZE_VER0) \
	X(ctl_arg_cmd, offsetof(struct kevent_ctl_arg, cmd) == 0) \
	X(ctl_arg_num, offsetof(struct kevent_ctl_arg, num) == 4) \
	X(ctl_arg_events, offsetof(struct kevent_ctl_arg, events) == 8) \
	X(get_arg_size_ver0, KEVENT_GET_EVENTS_ARG_SIZE_VER0 == 32) \
	X(get_arg_ver0_end, offsetof(struct kevent_get_events_arg, ioc_flags) + 4 == KEVENT_GET_EVENTS_ARG_SIZE_VER0) \
	X(get_arg_size, sizeof(struct kevent_get_events_arg) == KEVENT_GET_EVENTS_ARG_SIZE_VER1) \
	X(get_arg_size_ver1, KEVENT_GET_EVENTS_ARG_SIZE_VER1 == 48) \
	X(get_arg_timeout_ts, offsetof(struct kevent_get_events_arg, timeout_ts) == 32) \
	X(get_arg_min_nr, offsetof(struct kevent_get_events_arg, min_nr) == 0) \
	X(get_arg_max_nr, offsetof(struct kevent_get_events_arg, max_nr) == 4) \
	X(get_arg_timeout, offsetof(struct kevent_get_events_arg, timeout_ns) == 8) \
	X(get_arg_events, offsetof(struct kevent_get_events_arg, events) == 16) \
	X(get_arg_flags, offsetof(struct kevent_get_events_arg, flags) == 24) \
	X(get_arg_ioc_flags, offsetof(struct kevent_get_events_arg, ioc_flags) == 28) \
	X(info_size_ver0, KEVENT_INFO_SIZE_VER0 == 152) \
	X(info_ver0_end, offsetof(struct kevent_info, live_waiters) + 8 == KEVENT_INFO_SIZE_VER0) \
	X(info_size_ver1, KEVENT_INFO_SIZE_VER1 == 160) \
	X(info_ver1_end, offsetof(struct kevent_info, __pad1) + 4 == KEVENT_INFO_SIZE_VER1) \
	X(info_size_ver2, KEVENT_INFO_SIZE_VER2 == 192) \
	X(info_size, sizeof(struct kevent_info) == KEVENT_INFO_SIZE_VER2) \
	X(info_queue_parked, offsetof(struct kevent_info, queue_parked) == 152) \
	X(info_pad1, offsetof(struct kevent_info, __pad1) == 156) \
	X(info_abi_lowest, offsetof(struct kevent_info, abi_lowest) == 160) \
	X(info_queue_revision, offsetof(struct kevent_info, queue_revision) == 164) \
	X(info_queue_abi_flags, offsetof(struct kevent_info, queue_abi_flags) == 168) \
	X(info_ring_num, offsetof(struct kevent_info, ring_num) == 172) \
	X(info_ring_kidx, offsetof(struct kevent_info, ring_kidx) == 176) \
	X(info_ring_uidx, offsetof(struct kevent_info, ring_uidx) == 180) \
	X(info_ring_over, offsetof(struct kevent_info, ring_over) == 184) \
	X(info_ring_faults, offsetof(struct kevent_info, ring_faults) == 188) \
	X(info_size_first, offsetof(struct kevent_info, size) == 0) \
	X(info_limits, offsetof(struct kevent_info, limits) == 64) \
	X(info_live_queues, offsetof(struct kevent_info, live_queues) == 128) \
	X(info_live_waiters, offsetof(struct kevent_info, live_waiters) == 144) \
	X(ring_shm_size, sizeof(struct kevent_ring_shm) == KEVENT_RING_SHM_SIZE_VER0) \
	X(ring_shm_length, offsetof(struct kevent_ring_shm, length) == 8) \
	X(ring_shm_path, offsetof(struct kevent_ring_shm, path) == 16) \
	X(set_abi_size, sizeof(struct kevent_set_abi) == KEVENT_SET_ABI_SIZE_VER0) \
	X(fault_size, sizeof(struct kevent_fault) == KEVENT_FAULT_SIZE_VER0) \
	X(fault_skip, offsetof(struct kevent_fault, skip) == 4) \
	X(fault_reserved, offsetof(struct kevent_fault, __reserved) == 8) \
	X(wrappers_mult8, sizeof(struct kevent_ctl_arg) % 8 == 0 && sizeof(struct kevent_get_events_arg) % 8 == 0 && \
	  sizeof(struct kevent_info) % 8 == 0 && sizeof(struct kevent_ring_shm) % 8 == 0 && sizeof(struct kevent_set_abi) % 8 == 0 && \
	  sizeof(struct kevent_fault) % 8 == 0 && sizeof(struct kevent_ring_init) % 8 == 0 && \
	  sizeof(struct kevent_wait_arg) % 8 == 0 && sizeof(struct kevent_commit_arg) % 8 == 0 && \
	  sizeof(struct kevent_ctl_ext_arg) % 8 == 0) \
	X(abi_revision, KEVENT_ABI_REVISION == 4) \
	X(ctl_query, KEVENT_CTL_QUERY == 4) \
	X(ctl_ext_size, sizeof(struct kevent_ctl_ext_arg) == KEVENT_CTL_ARG_SIZE_VER1 && KEVENT_CTL_ARG_SIZE_VER1 == 24) \
	X(ctl_ext_cmd, offsetof(struct kevent_ctl_ext_arg, cmd) == 0) \
	X(ctl_ext_num, offsetof(struct kevent_ctl_ext_arg, num) == 4) \
	X(ctl_ext_events, offsetof(struct kevent_ctl_ext_arg, events) == 8) \
	X(ctl_ext_ioc_flags, offsetof(struct kevent_ctl_ext_arg, ioc_flags) == 16) \
	X(ctl_ext_pad, offsetof(struct kevent_ctl_ext_arg, __pad) == 20) \
	X(ctl_ext_flag, KEVENT_CTL_EXT == 0x1 && KEVENT_CTL_IOC_FLAGS == 0x1) \
	X(ioc_ctl_ext, KEVENT_IOC_CTL_EXT == _IOW(0xBE, 1, struct kevent_ctl_ext_arg) && _IOC_SIZE(KEVENT_IOC_CTL_EXT) == 24) \
	X(clock_ids, KEVENT_CLOCK_REALTIME == 0 && KEVENT_CLOCK_MONOTONIC == 1 && KEVENT_CLOCK_BOOTTIME == 7) \
	X(timer_abstime, KEVENT_TIMER_ABSTIME == 0x1) \
	X(timer_min_interval, KEVENT_TIMER_MIN_INTERVAL_NS == 100000) \
	X(timer_spec_size, sizeof(struct kevent_timer_spec) == 40 && _Alignof(struct kevent_timer_spec) == 8) \
	X(timer_spec_clock, offsetof(struct kevent_timer_spec, clock) == 0) \
	X(timer_spec_flags, offsetof(struct kevent_timer_spec, flags) == 4) \
	X(timer_spec_value, offsetof(struct kevent_timer_spec, value) == 8) \
	X(timer_spec_interval, offsetof(struct kevent_timer_spec, interval) == 24) \
	X(ukevent_ext_size, sizeof(struct ukevent_ext) == 80 && _Alignof(struct ukevent_ext) == 8) \
	X(ukevent_ext_ev, offsetof(struct ukevent_ext, ev) == 0) \
	X(ukevent_ext_ext, offsetof(struct ukevent_ext, ext) == 40 && sizeof(((struct ukevent_ext *)0)->ext) == 40) \
	X(feat_rev3, KEVENT_FEAT_POSIX_TIMER == 0x100 && KEVENT_FEAT_USER == 0x200) \
	X(abi_revision_lowest, KEVENT_ABI_REVISION_LOWEST == 1) \
	X(poll_rdhup, KEVENT_POLL_POLLRDHUP == 0x2000) \
	X(req_always_queue, KEVENT_REQ_ALWAYS_QUEUE == 0x10) \
	X(req_level, KEVENT_REQ_LEVEL == 0x20) \
	X(req_dispatch, KEVENT_REQ_DISPATCH == 0x80) \
	X(ctl_ready, KEVENT_CTL_READY == 3) \
	X(uring_hdr, sizeof(struct kevent_uring) == 8 && KEVENT_URING_HDR_SIZE == 8) \
	X(uring_kidx, offsetof(struct kevent_uring, ring_kidx) == 0) \
	X(uring_over, offsetof(struct kevent_uring, ring_over) == 4) \
	X(uring_event, offsetof(struct kevent_uring, event) == 8) \
	X(uring_align, _Alignof(struct kevent_uring) == 8) \
	X(uring_stride, sizeof(((struct kevent_uring *)0)->event[0]) == 40) \
	X(uring_size, KEVENT_URING_SIZE(4096) == 8 + 4096 * 40) \
	X(uring_min_max, KEVENT_URING_MIN == 2 && KEVENT_URING_MAX == 4096) \
	X(timespec_size, sizeof(struct kevent_timespec) == 16) \
	X(timespec_align, _Alignof(struct kevent_timespec) == 8) \
	X(timespec_sec, offsetof(struct kevent_timespec, tv_sec) == 0 && sizeof(((struct kevent_timespec *)0)->tv_sec) == 8) \
	X(timespec_nsec, offsetof(struct kevent_timespec, tv_nsec) == 8 && sizeof(((struct kevent_timespec *)0)->tv_nsec) == 4) \
	X(timespec_pad, offsetof(struct kevent_timespec, __pad) == 12) \
	X(flags_abstime, KEVENT_FLAGS_ABSTIME == 0x1) \
	X(flags_monotonic, KEVENT_FLAGS_MONOTONIC == 0x2) \
	X(flags_no_timeout, KEVENT_FLAGS_NO_TIMEOUT == 0x4) \
	X(flags_all, KEVENT_FLAGS_ALL == 0x7) \
	X(get_timespec, KEVENT_GET_TIMESPEC == 0x4 && KEVENT_GET_IOC_FLAGS == 0x5) \
	X(abi_eintr, KEVENT_ABI_EINTR == 0x2 && KEVENT_ABI_FLAGS == 0x3) \
	X(feat_uring, KEVENT_FEAT_URING == 0x80) \
	X(ring_init_size, sizeof(struct kevent_ring_init) == KEVENT_RING_INIT_SIZE_VER0 && KEVENT_RING_INIT_SIZE_VER0 == 16) \
	X(ring_init_ring, offsetof(struct kevent_ring_init, ring) == 0) \
	X(ring_init_num, offsetof(struct kevent_ring_init, num) == 8) \
	X(ring_init_flags, offsetof(struct kevent_ring_init, flags) == 12) \
	X(wait_size, sizeof(struct kevent_wait_arg) == KEVENT_WAIT_ARG_SIZE_VER0 && KEVENT_WAIT_ARG_SIZE_VER0 == 32) \
	X(wait_num, offsetof(struct kevent_wait_arg, num) == 0) \
	X(wait_old_uidx, offsetof(struct kevent_wait_arg, old_uidx) == 4) \
	X(wait_timeout, offsetof(struct kevent_wait_arg, timeout) == 8) \
	X(wait_flags, offsetof(struct kevent_wait_arg, flags) == 24) \
	X(wait_ioc_flags, offsetof(struct kevent_wait_arg, ioc_flags) == 28) \
	X(commit_size, sizeof(struct kevent_commit_arg) == KEVENT_COMMIT_ARG_SIZE_VER0 && KEVENT_COMMIT_ARG_SIZE_VER0 == 8) \
	X(commit_new_uidx, offsetof(struct kevent_commit_arg, new_uidx) == 0) \
	X(commit_over, offsetof(struct kevent_commit_arg, over) == 4) \
	X(ioc_ring_init, KEVENT_IOC_RING_INIT == _IOW(0xBE, 6, struct kevent_ring_init) && _IOC_SIZE(KEVENT_IOC_RING_INIT) == 16) \
	X(ioc_wait, KEVENT_IOC_WAIT == _IOW(0xBE, 7, struct kevent_wait_arg) && _IOC_SIZE(KEVENT_IOC_WAIT) == 32) \
	X(ioc_commit, KEVENT_IOC_COMMIT == _IOW(0xBE, 8, struct kevent_commit_arg) && _IOC_SIZE(KEVENT_IOC_COMMIT) == 8) \
	X(ioc_magic, _IOC_TYPE(KEVENT_IOC_CTL) == 0xBE) \
	X(ioc_ctl, KEVENT_IOC_CTL == _IOW(0xBE, 1, struct kevent_ctl_arg)) \
	X(ioc_ctl_size, _IOC_SIZE(KEVENT_IOC_CTL) == 16) \
	X(ioc_get_events_size, _IOC_SIZE(KEVENT_IOC_GET_EVENTS) == 48) \
	X(ioc_get_events_nr, _IOC_NR(KEVENT_IOC_GET_EVENTS) == 2) \
	X(ioc_info_dir, _IOC_DIR(KEVENT_IOC_INFO) == _IOC_READ) \
	X(ioc_info_size, _IOC_SIZE(KEVENT_IOC_INFO) == KEVENT_INFO_SIZE_VER2) \
	X(ioc_ring_shm_size, _IOC_SIZE(KEVENT_IOC_RING_SHM) == 128) \
	X(ioc_set_abi_nr, _IOC_NR(KEVENT_IOC_SET_ABI) == 4) \
	X(ioc_fault, KEVENT_IOC_FAULT == _IOW(0xBE, 5, struct kevent_fault)) \
	X(feat_fault_inject, KEVENT_FEAT_FAULT_INJECT == 0x40) \
	X(drain_size, sizeof(struct kevent_drain) == KEVENT_DRAIN_SIZE_VER0 && \
	  KEVENT_DRAIN_SIZE_VER0 == 8) \
	X(ioc_drain, KEVENT_IOC_DRAIN == _IOW(0xBE, 0x20, struct kevent_drain)) \
	X(backend_values, KEVENT_BACKEND_CORE == 1 && KEVENT_BACKEND_CUSE == 2 && \
	  KEVENT_BACKEND_MODULE == 3 && KEVENT_BACKEND_FUSE == 4) \
	X(ioc_arg_max, KEVENT_IOC_ARG_MAX >= KEVENT_INFO_SIZE_VER2) \
	X(timeout_infinite, KEVENT_TIMEOUT_INFINITE == 0xffffffffffffffffull) \
	X(get_nonblock, KEVENT_GET_NONBLOCK == 0x1)

#define STATIC_PIN(name, expr) _Static_assert(expr, #name);
PINS(STATIC_PIN)

struct pin {
	const char *name;
	int ok;
};

#define RUNTIME_PIN(name, expr) { #name, !!(expr) },
static const struct pin pins[] = { PINS(RUNTIME_PIN) };

int main(void)
{
	const char *abi = sizeof(void *) == 8 ? "m64" : "m32";
	unsigned int n = sizeof(pins) / sizeof(pins[0]), failed = 0;

	printf("TAP version 13\n1..%u\n", n);
	for (unsigned int i = 0; i < n; i++) {
		printf("%sok %u - %s::%s\n", pins[i].ok ? "" : "not ", i + 1, abi, pins[i].name);
		failed += !pins[i].ok;
	}
	return failed ? 1 : 0;
}
