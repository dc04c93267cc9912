/**
 * @file export.h
 * @brief Symbol visibility and attribute macros shared by every public header.
 *
 * libfeaccel is built with hidden visibility: only declarations marked
 * FEA_EXPORT are part of the ABI, and lib/libfeaccel.map lists exactly them.
 */
#ifndef FEACCEL_EXPORT_H
#define FEACCEL_EXPORT_H

#if defined(_WIN32)
#if defined(FEA_BUILDING_LIBRARY)
#define FEA_EXPORT __declspec(dllexport)
#else
#define FEA_EXPORT __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define FEA_EXPORT __attribute__((visibility("default")))
#else
#define FEA_EXPORT
#endif

/** Marks functions whose status must not be ignored. */
#if defined(__GNUC__) || defined(__clang__)
#define FEA_NODISCARD __attribute__((warn_unused_result))
#else
#define FEA_NODISCARD
#endif

/** Public functions that return a status: exported and warn-unused-result.
 * The destroy functions and fea_version(), which cannot fail, are plain
 * FEA_EXPORT: GCC's warn_unused_result cannot be silenced by a (void) cast,
 * so the attribute on them would break -Werror builds that call them on
 * cleanup paths. tests/abi/check-headers.py holds both sides of this. */
#define FEA_API FEA_EXPORT FEA_NODISCARD

#ifdef __cplusplus
#define FEA_BEGIN_DECLS extern "C" {
#define FEA_END_DECLS }
#else
#define FEA_BEGIN_DECLS
#define FEA_END_DECLS
#endif

#endif /* FEACCEL_EXPORT_H */
