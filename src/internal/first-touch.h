/* Clearing an operator's output where it is first written instead of in a
 * pass of its own (src/matrixfree/first-touch.c).
 *
 * y = A x by element loops starts from y = 0. A separate clearing pass
 * writes all of y once more than the loop does, and on a vector larger than
 * the caches that write goes to memory and comes back. Instead, the free
 * rows are cut into runs, each keyed by the lowest element whose visit
 * writes one of its rows first, and a worker clears a run right before the
 * batch of elements that holds its key: the lines it clears are the ones
 * the next few batches add into, still in cache when they do.
 *
 * This is correct where every row is first written by the lowest-numbered
 * element that touches it, by the thread that visits that element, in
 * increasing element order: SERIAL in element order, and PRIVATE_BUFFERS,
 * whose rows belong to the block of that element and are written by that
 * block's thread alone (runs are then cut where the owner changes, and a
 * thread clears the runs of its own block only). Clearing a run before
 * some of its rows' first writers is as good: nobody has written them yet,
 * and nobody else will.
 *
 * How far ahead: a run spans rows whose first writers are at most a window
 * of elements apart, the window about 8k rows' worth of elements (64 KB of
 * y), else 64k rows' (512 KB, half the L2 of the machine of the
 * measurements) where the shorter window cuts the rows into short runs
 * (3D Q_p, p >= 2: the three edges at a vertex are numbered together but
 * first written a plane of elements apart). Where runs stay short even so
 * (under 64 rows on average: larger 3D meshes), clearing them one by one
 * cost more than the pass (3D Q2, 480k runs: 1.3x slower), and the build
 * declines (fea_first_touch.nrun and .nidle 0, run NULL). */
#ifndef FEA_INTERNAL_FIRST_TOUCH_H
#define FEA_INTERNAL_FIRST_TOUCH_H

#include "problem.h"

typedef struct fea_first_touch_run {
  fea_index key;        /* the element before whose batch the run is cleared */
  fea_index row, len;   /* its free rows */
} fea_first_touch_run;

typedef struct fea_first_touch {
  fea_index nrun;            /* runs by key ascending; then the rows that no element touches
                                (cleared up front), nidle of them */
  fea_index nidle;
  fea_first_touch_run *run;  /* nrun + nidle; NULL: declined */
  fea_index window;          /* elements */
  uint64_t bytes;            /* what it keeps */
} fea_first_touch;

/* The runs of pb's free rows for elements edofs (ne x nb) visited in
 * ascending order; owner (per free row, or NULL) cuts them where it
 * changes. Leaves ft->run NULL where runs would be short (see above). */
fea_status fea_first_touch_build(const fea_problem *pb, const fea_index *edofs, fea_index ne,
                                 int nb, const int *owner, fea_first_touch *ft);
void fea_first_touch_free(fea_first_touch *ft);

/* Clear y's runs whose keys are elements e0 .. e1 - 1 and, with owner,
 * whose rows block blk owns. */
void fea_first_touch_clear(const fea_first_touch *ft, fea_index e0, fea_index e1,
                           const int *owner, int blk, double *y);
/* Clear the rows that no element touches. */
void fea_first_touch_clear_idle(const fea_first_touch *ft, double *y);

#endif
