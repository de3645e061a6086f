/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: sort_r() with the kernel's signature, as a heapsort like the
 * kernel's, so it is O(n log n) whatever the input. Only the default swap
 * (a NULL @swap_func) is supported, which is all the codec uses.
 */
#ifndef HOST_LINUX_SORT_H
#define HOST_LINUX_SORT_H

#include <linux/types.h>
#include <string.h>

static inline void host_sort_swap(char *a, char *b, size_t size)
{
	char t;

	while (size--) {
		t = *a;
		*a++ = *b;
		*b++ = t;
	}
}

/* Moves element @root down the heap of @n elements until it is in place. */
static inline void host_sort_sift(char *base, size_t root, size_t n,
				  size_t size, cmp_r_func_t cmp,
				  const void *priv)
{
	size_t child;

	while ((child = 2 * root + 1) < n) {
		if (child + 1 < n &&
		    cmp(base + child * size, base + (child + 1) * size,
			priv) < 0)
			child++;
		if (cmp(base + root * size, base + child * size, priv) >= 0)
			return;
		host_sort_swap(base + root * size, base + child * size, size);
		root = child;
	}
}

static inline void sort_r(void *base, size_t num, size_t size,
			  cmp_r_func_t cmp_func, swap_r_func_t swap_func,
			  const void *priv)
{
	char *b = base;
	size_t i;

	(void)swap_func;
	for (i = num / 2; i-- > 0;)
		host_sort_sift(b, i, num, size, cmp_func, priv);
	for (i = num; i-- > 1;) {
		host_sort_swap(b, b + i * size, size);
		host_sort_sift(b, 0, i, size, cmp_func, priv);
	}
}

#endif /* HOST_LINUX_SORT_H */
