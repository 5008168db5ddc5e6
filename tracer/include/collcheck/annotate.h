/* collcheck annotations: tell the tracer where an optimizer update begins, how many valid items
 * this rank contributed and how its loss was normalized, so the analyzer can check the gradient
 * algebra (g = (1/N) sum_r n_r * mean_r, N = sum_r n_r) for every reduction of the window.
 *
 * Header-only and free when collcheck is absent: the entry points are weak symbols defined by the
 * preload library (libcollcheck_preload.so). Without it they resolve to null and each call is one
 * predictable branch. C and C++. */
#ifndef COLLCHECK_ANNOTATE_H
#define COLLCHECK_ANNOTATE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How the local loss was normalized before backward (values match the trace format). */
enum collcheck_normalization {
  COLLCHECK_NORM_UNKNOWN = 0,
  COLLCHECK_NORM_LOCAL_MEAN = 1,  /* divided by this rank's valid count */
  COLLCHECK_NORM_GLOBAL_MEAN = 2, /* divided by the all-reduced global count */
  COLLCHECK_NORM_SUM = 3,         /* not divided */
  COLLCHECK_NORM_MULTIPLIER = 4   /* multiplied by an explicit factor */
};

/* The preload library's entry points (weak: null when it is not loaded). */
void collcheck_window_begin(uint64_t window) __attribute__((weak));
void collcheck_valid_count(double count) __attribute__((weak));
void collcheck_normalization(int how, double multiplier) __attribute__((weak));
void collcheck_reducer_scale(double factor) __attribute__((weak));

/* Source sites, for the bindings of other languages (collcheck's Python module): the calls this
 * thread makes between collcheck_site_enter(site) and collcheck_site_leave() are recorded as made
 * at `site`, a line of the program's source, instead of at their native caller. */
/* The index of the site `file`:`line` in `function` (0 where none can be recorded); the first call
 * for a site writes it to the trace (microseconds), so keep the index. */
uint32_t collcheck_source_site(const char *file, const char *function, uint32_t line)
    __attribute__((weak));
/* Returns 1 when the site is now this thread's, 0 when the thread already had one (the outermost
 * site is kept); call collcheck_site_leave() only after a 1. */
int collcheck_site_enter(uint32_t site) __attribute__((weak));
void collcheck_site_leave(void) __attribute__((weak));

/* Start of optimizer update `window` (0, 1, 2, ...): later collectives belong to it. */
static inline void collcheck_annotate_window(uint64_t window) {
  if (collcheck_window_begin)
    collcheck_window_begin(window);
}
/* Adds `count` valid items (examples, unmasked tokens or a sum of sample weights) of this rank to
 * the current window; call once per micro-batch, the tracer accumulates. */
static inline void collcheck_annotate_valid_count(double count) {
  if (collcheck_valid_count)
    collcheck_valid_count(count);
}
/* How the local loss of the current window was normalized; `multiplier` is used with
 * COLLCHECK_NORM_MULTIPLIER (the effective per-item factor), ignored otherwise. */
static inline void collcheck_annotate_normalization(enum collcheck_normalization how,
                                                    double multiplier) {
  if (collcheck_normalization)
    collcheck_normalization((int)how, multiplier);
}
/* What the reducer does beyond the operation on the wire: PyTorch DDP divides each bucket by the
 * world size before a SUM all-reduce (factor 1/P); FSDP by its gradient divide factor. */
static inline void collcheck_annotate_reducer_scale(double factor) {
  if (collcheck_reducer_scale)
    collcheck_reducer_scale(factor);
}

#ifdef __cplusplus
}
#endif

#endif /* COLLCHECK_ANNOTATE_H */
