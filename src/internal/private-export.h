/* Marks the few internal functions that libfeaccel.so exports for its own
 * /gpu/cuda module (libfeaccel-cuda.so), under the version node
 * FEACCEL_PRIVATE_0 of lib/libfeaccel.map: never part of the public ABI. */
#ifndef FEA_INTERNAL_PRIVATE_EXPORT_H
#define FEA_INTERNAL_PRIVATE_EXPORT_H

/* Everything else is compiled with hidden visibility, which no version
 * script can undo; these must stay visible for the module to link. */
#if defined(__GNUC__)
#define FEA_PRIVATE_EXPORT __attribute__((visibility("default")))
#else
#define FEA_PRIVATE_EXPORT
#endif

#endif
