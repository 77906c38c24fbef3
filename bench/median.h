/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdlib.h>

static inline int bench_compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

/* The median of the benchmarks' runs; sorts v in place */
static inline double median(double *v, size_t n) {
        qsort(v, n, sizeof(v[0]), bench_compare_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
