/* SPDX-License-Identifier: GPL-2.0 */
/* A minimal intrusive doubly linked list (kernel style), private to core/. */
#ifndef KEVENT_CORE_LIST_H
#define KEVENT_CORE_LIST_H

#include <stddef.h>

struct klist {
	struct klist *next, *prev;
};

#define KLIST_INIT(name) { &(name), &(name) }

static inline void klist_init(struct klist *h)
{
	h->next = h;
	h->prev = h;
}

static inline int klist_empty(const struct klist *h)
{
	return h->next == h;
}

static inline void klist_add_tail(struct klist *n, struct klist *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void klist_del(struct klist *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	klist_init(n);
}

#define klist_entry(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define klist_for_each_safe(pos, tmp, head) \
	for (pos = (head)->next, tmp = pos->next; pos != (head); \
	     pos = tmp, tmp = pos->next)

#endif /* KEVENT_CORE_LIST_H */
