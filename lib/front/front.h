/* libfeaccel.so.0's front: the table the generated stubs call through and
 * the loader that fills it (lib/front/loader.c; the stubs are written by
 * tools/gen-front.py). */
#ifndef FEA_FRONT_H
#define FEA_FRONT_H

/* Any function pointer; a stub casts its entry back to its own type. */
typedef void (*fea_front_generic_fn)(void);

/* The core's functions, in the order of fea_front_names (generated). */
extern const char *const fea_front_names[];
extern const int fea_front_count;
extern fea_front_generic_fn fea_front_fn[];

/* Load the core once per process and resolve every name: 1 when the table
 * is complete, 0 when the core could not be loaded (then for good). */
int fea_front_load(void);

/* Why the core could not be loaded, or "" when it was. */
const char *fea_front_failure(void);

#endif
