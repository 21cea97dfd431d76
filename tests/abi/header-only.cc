// SPDX-License-Identifier: GPL-2.0
/* The uapi header must stand alone: no implicit padding, no extension needed. */
#include <linux/kevent.h>

int main(void)
{
	return sizeof(struct ukevent) == 40 ? 0 : 1;
}
